//! A real terminal for end-to-end tests: a private tmux server (its own socket) running one
//! pane of a fixed size, driven with send-keys and read with capture-pane.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

pub struct Tmux {
    socket: String,
}

impl Tmux {
    /// Starts `command` in a detached 120×36 session on a fresh server.
    pub fn start(name: &str, command: &str, env: &[(&str, &Path)]) -> Self {
        Self::start_sized(name, command, env, (120, 36))
    }

    /// `gitmoot --home HOME tui FLAGS` in a 120×36 pane; once it exits the pane prints
    /// `TUI-EXITED` and the terminal's settings (`stty -a`), then stays open a while.
    pub fn control_room(name: &str, home: &Path, flags: &str) -> Self {
        let cmd = format!(
            "sh -c '{} --home {} tui {flags}; echo TUI-EXITED; stty -a; sleep 30'",
            super::bin(),
            home.display()
        );
        Self::start(name, &cmd, &[])
    }

    /// Starts `command` in a detached session of `size` (columns, rows).
    pub fn start_sized(name: &str, command: &str, env: &[(&str, &Path)], size: (u16, u16)) -> Self {
        let socket = format!("gitmoot-test-{name}-{}", std::process::id());
        let t = Self { socket };
        let mut args: Vec<String> = vec![
            "new-session".into(),
            "-d".into(),
            "-x".into(),
            size.0.to_string(),
            "-y".into(),
            size.1.to_string(),
        ];
        for (k, v) in env {
            args.push("-e".into());
            args.push(format!("{k}={}", v.display()));
        }
        args.push(command.into());
        t.tmux(&args.iter().map(String::as_str).collect::<Vec<_>>());
        t.tmux(&["set-option", "-g", "remain-on-exit", "on"]);
        t
    }

    fn tmux(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("tmux runs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The visible screen as text.
    pub fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p"])
    }

    /// Types keys (tmux key names such as `Enter`, `Escape`, `C-c`, or literal text with `-l`).
    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys"];
        args.extend_from_slice(keys);
        self.tmux(&args);
    }

    /// Appends every byte the pane's program writes (escape sequences included) to `path`.
    pub fn pipe_output(&self, path: &Path) {
        self.tmux(&["pipe-pane", "-o", &format!("cat >> {}", path.display())]);
    }

    /// Kills the root of the tree the DAG pane shows from the keyboard: `2` (the DAG), `K`,
    /// then `y` on the confirmation.
    pub fn kill_shown_root(&self, timeout: Duration) {
        self.keys(&["2"]);
        self.keys(&["K"]);
        self.wait_for("Kill", timeout);
        self.keys(&["y"]);
    }

    /// Quits a control room with `q` and waits for its pane's `TUI-EXITED`; returns the screen.
    pub fn quit(&self, timeout: Duration) -> String {
        self.keys(&["q"]);
        self.wait_for("TUI-EXITED", timeout)
    }

    /// Waits until the screen contains `needle`, returning the screen; panics with the last
    /// screen after `timeout`.
    pub fn wait_for(&self, needle: &str, timeout: Duration) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if screen.contains(needle) {
                return screen;
            }
            if start.elapsed() > timeout {
                panic!("timed out waiting for {needle:?}; screen was:\n{screen}");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Waits until the screen no longer contains `needle`. A key sent right after `Escape`
    /// can reach the program in the same read and parse as Alt+key, so a test waits for
    /// what Escape closes to be gone before typing on.
    pub fn wait_gone(&self, needle: &str, timeout: Duration) {
        let start = Instant::now();
        while self.screen().contains(needle) {
            if start.elapsed() > timeout {
                panic!(
                    "timed out waiting for {needle:?} to go; screen was:\n{}",
                    self.screen()
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .arg("kill-server")
            .output();
    }
}
