//! The operator's terminal: raw mode, alternate screen, mouse and bracketed paste on
//! entry; all of it undone on exit, on panic and around Ctrl-z suspend; hang-up noticed.
//!
//! Owns terminal modes only; never draws.

use std::io::{self, Write, stdout};
use std::sync::atomic::{AtomicBool, Ordering};

use crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
};
use crossterm::terminal::{
    Clear, ClearType, EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use crossterm::{cursor, execute};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

pub type Term = Terminal<CrosstermBackend<io::Stdout>>;

/// Whether the mouse was captured, so restore (possibly from the panic hook) undoes it.
static MOUSE: AtomicBool = AtomicBool::new(false);
static ACTIVE: AtomicBool = AtomicBool::new(false);

/// Puts the terminal in control-room mode and installs the panic hook that restores it.
pub(crate) fn enter(mouse: bool) -> io::Result<Term> {
    install_panic_hook();
    MOUSE.store(mouse, Ordering::SeqCst);
    setup()?;
    let mut term = Terminal::new(CrosstermBackend::new(stdout()))?;
    term.clear()?;
    Ok(term)
}

fn setup() -> io::Result<()> {
    enable_raw_mode()?;
    let mut out = stdout();
    execute!(
        out,
        EnterAlternateScreen,
        EnableBracketedPaste,
        cursor::Hide
    )?;
    if MOUSE.load(Ordering::SeqCst) {
        execute!(out, EnableMouseCapture)?;
    }
    ACTIVE.store(true, Ordering::SeqCst);
    Ok(())
}

/// Gives the terminal back exactly as the shell had it. Safe to call more than once.
pub fn restore() {
    if !ACTIVE.swap(false, Ordering::SeqCst) {
        return;
    }
    let mut out = stdout();
    if MOUSE.load(Ordering::SeqCst) {
        let _ = execute!(out, DisableMouseCapture);
    }
    let _ = execute!(
        out,
        DisableBracketedPaste,
        LeaveAlternateScreen,
        cursor::Show
    );
    let _ = disable_raw_mode();
    let _ = out.flush();
}

/// Ctrl-z: restore the shell's terminal, stop the process, and set up again on `fg`.
pub fn suspend(term: &mut Term) -> io::Result<()> {
    restore();
    // SIGTSTP stops us like any shell job; execution continues here after SIGCONT.
    unsafe {
        libc::raise(libc::SIGTSTP);
    }
    setup()?;
    // Not `term.clear()`: it asks the terminal for the cursor position, and the input
    // thread (blocked in `read`) would swallow the reply. Clearing the screen and drawing
    // one blank frame resets ratatui's previous buffer, so the next draw repaints it all.
    execute!(stdout(), Clear(ClearType::All))?;
    term.draw(|_| {})?;
    Ok(())
}

static HUNG_UP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    HUNG_UP.store(true, Ordering::SeqCst);
}

/// SIGHUP (the terminal closed) and SIGTERM end the control room like a detach: the loop
/// notices `hung_up` and leaves without stopping the daemon.
pub(crate) fn on_hangup() {
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
    unsafe {
        libc::signal(libc::SIGHUP, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
    }
}

pub(crate) fn hung_up() -> bool {
    HUNG_UP.load(Ordering::SeqCst)
}

fn install_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore();
            tracing::error!("panic: {info}");
            previous(info);
        }));
    });
}

/// Copies text to the operator's clipboard through the terminal (OSC 52), which works
/// over ssh and inside tmux with `set-clipboard on`.
pub(crate) fn copy_osc52(text: &str) -> io::Result<()> {
    let mut out = stdout();
    write!(out, "\x1b]52;c;{}\x07", base64(text.as_bytes()))?;
    out.flush()
}

fn base64(data: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::base64;

    #[test]
    fn base64_matches_the_rfc_vectors() {
        for (plain, encoded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(plain.as_bytes()), encoded);
        }
    }
}
