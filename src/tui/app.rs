//! The control room's event loop. The UI thread only maps events, runs `ui::update`, draws
//! and hands effects to two workers: the loader (store → `Snapshot`, woken by its poll of
//! the store's change signature (`watch`), by a PostgreSQL store's change feed, and by
//! requests) and the executor (writes
//! through the CLI's functions). Rendering never waits on SQLite.
//!
//! Owns threads and channels; decides nothing about what is shown or written.

use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crossterm::event::{self as ct, Event as CtEvent};
use gitmoot_ui::view::{DaemonStatus, Snapshot};
use gitmoot_ui::{Action, Load, State, Term as UiTerm, Theme, ToastLevel, Write, update};

use super::daemon::{DaemonWatch, PROBE_EVERY};
use super::exec::{Executor, Outcome};
use super::load::Loader;
use super::terminal::{self, Term};
use super::watch;
use crate::clock::now_ms;

/// How the control room ended, which decides its daemon's fate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Stop this control room's daemon (it is idle, or its kill already ran).
    Quit,
    /// Leave the daemon running the work in the background (also on SIGHUP/SIGTERM).
    Detached,
}

/// What wakes the UI thread.
enum Msg {
    Input(CtEvent),
    Daemon(DaemonStatus),
    Snapshot(Box<Snapshot>),
    Done(Outcome),
    LoadFailed(String),
}

/// What the loader is asked for.
enum LoadReq {
    Reload,
    Show(Load),
    Wake,
}

/// Tick while something moves (spinners, elapsed); slower when idle so the loop sleeps.
const BUSY_TICK: Duration = Duration::from_millis(200);
const IDLE_TICK: Duration = Duration::from_secs(1);

pub(crate) struct App {
    pub state: State,
    pub theme: Theme,
    pub loader: Loader,
    pub executor: Executor,
    pub home: crate::home::Home,
    pub daemon: Arc<Mutex<DaemonWatch>>,
}

pub fn run(mut term: Term, app: App) -> anyhow::Result<Exit> {
    let App {
        mut state,
        theme,
        loader,
        executor,
        home,
        daemon,
    } = app;
    terminal::on_hangup();
    let mut status = loader.daemon;
    let (tx, rx) = mpsc::channel::<Msg>();
    let store_watch = watch::StoreWatch::of(&home);
    let load_tx = spawn_loader(loader, tx.clone(), store_watch.poll);
    let exec_tx = spawn_executor(executor, tx.clone(), load_tx.clone());
    spawn_input(tx.clone());
    spawn_probe(daemon.clone(), status, tx.clone());
    let mut killing = false;
    store_watch.listen(spawn_waker(load_tx.clone()));
    let mut bell = super::notify::Bell::new(&home);
    let mut snap = Snapshot::empty(now_ms());
    if let Ok(size) = term.size() {
        update(
            &mut state,
            &snap,
            gitmoot_ui::Event::Resize(size.width, size.height),
        );
    }
    loop {
        // A closed terminal (or a polite kill) leaves the work to the daemon.
        if terminal::hung_up() {
            return Ok(Exit::Detached);
        }
        if killing && lock(&daemon).exited() {
            return Ok(Exit::Quit);
        }
        if let Err(e) = term.draw(|f| gitmoot_ui::render(f, &state, &snap, &theme)) {
            if terminal::hung_up() {
                return Ok(Exit::Detached);
            }
            return Err(e.into());
        }
        let busy = snap.counts.running > 0 || state.bar_message().is_some();
        let actions = match rx.recv_timeout(if busy { BUSY_TICK } else { IDLE_TICK }) {
            Ok(Msg::Input(ev)) => match map_event(ev) {
                Some(ev) => update(&mut state, &snap, ev),
                None => Vec::new(),
            },
            Ok(Msg::Snapshot(s)) => {
                snap = *s;
                snap.daemon = status;
                let actions = update(&mut state, &snap, gitmoot_ui::Event::SnapshotArrived);
                bell.ring(&snap, &state);
                actions
            }
            Ok(Msg::Daemon(now)) => {
                if let Some(text) = daemon_change(status, now) {
                    state.notify(ToastLevel::Error, text);
                }
                status = now;
                snap.daemon = now;
                Vec::new()
            }
            Ok(Msg::Done(outcome)) => {
                show(&mut state, outcome);
                Vec::new()
            }
            Ok(Msg::LoadFailed(e)) => {
                state.notify(ToastLevel::Error, format!("could not read the store: {e}"));
                Vec::new()
            }
            Err(RecvTimeoutError::Timeout) => update(
                &mut state,
                &snap,
                gitmoot_ui::Event::Tick { now_ms: now_ms() },
            ),
            Err(RecvTimeoutError::Disconnected) => return Ok(Exit::Detached),
        };
        // The one routing of an action: its kind names who performs it.
        for action in actions {
            match action {
                Action::Write(w) => {
                    let _ = exec_tx.send(w);
                }
                Action::Load(l) => {
                    let _ = load_tx.send(LoadReq::Show(l));
                }
                Action::Term(t) => match on_terminal(&mut term, &mut state, &daemon, t)? {
                    TermStep::Exit(exit) => return Ok(exit),
                    TermStep::Killing => killing = true,
                    TermStep::Stay => {}
                },
            }
        }
    }
}

/// What the loop does after a terminal action.
enum TermStep {
    Exit(Exit),
    /// The daemon was asked to stop; quit once it has exited.
    Killing,
    Stay,
}

fn on_terminal(
    term: &mut Term,
    state: &mut State,
    daemon: &Mutex<DaemonWatch>,
    action: UiTerm,
) -> anyhow::Result<TermStep> {
    Ok(match action {
        UiTerm::Quit => TermStep::Exit(Exit::Quit),
        UiTerm::Detach => TermStep::Exit(Exit::Detached),
        UiTerm::QuitKill => {
            lock(daemon).stop();
            TermStep::Killing
        }
        UiTerm::Suspend => {
            terminal::suspend(term)?;
            TermStep::Stay
        }
        UiTerm::Copy(text) => {
            let ok = terminal::copy_osc52(&text).is_ok();
            state.notify(
                ToastLevel::Info,
                if ok {
                    format!("copied {text}")
                } else {
                    "copy failed".into()
                },
            );
            TermStep::Stay
        }
    })
}

/// An executor outcome on the message bar (a `:` line's output in its own view).
fn show(state: &mut State, outcome: Outcome) {
    match outcome.output {
        Some(out) => state.command_output(out),
        // Reading a thread succeeds silently; the badge going out says it.
        None if outcome.level == ToastLevel::Success && outcome.text.is_empty() => {}
        None => state.notify(outcome.level, outcome.text),
    }
}

/// Forwards the store watcher's wake-ups to the loader.
fn spawn_waker(load_tx: Sender<LoadReq>) -> Sender<watch::Wake> {
    let (wtx, wrx) = mpsc::channel();
    std::thread::spawn(move || {
        while wrx.recv().is_ok() {
            let _ = load_tx.send(LoadReq::Wake);
        }
    });
    wtx
}

fn map_event(ev: CtEvent) -> Option<gitmoot_ui::Event> {
    match ev {
        CtEvent::Key(k) => Some(gitmoot_ui::Event::Key(k)),
        CtEvent::Mouse(m) => Some(gitmoot_ui::Event::Mouse(m)),
        CtEvent::Paste(p) => Some(gitmoot_ui::Event::Paste(p)),
        CtEvent::Resize(w, h) => Some(gitmoot_ui::Event::Resize(w, h)),
        _ => None,
    }
}

fn spawn_input(tx: Sender<Msg>) {
    std::thread::spawn(move || {
        while let Ok(ev) = ct::read() {
            if tx.send(Msg::Input(ev)).is_err() {
                return;
            }
        }
    });
}

/// The shortest gap between two loads that only live data asked for (a wake-up from the
/// store): a streaming fleet writes many times a second, and the screen need not follow
/// each write. A key's load (`Show`, `Reload`) never waits for it.
const LIVE_GAP: Duration = Duration::from_millis(100);

fn spawn_loader(mut loader: Loader, tx: Sender<Msg>, poll: Duration) -> Sender<LoadReq> {
    let (req_tx, req_rx): (Sender<LoadReq>, Receiver<LoadReq>) = mpsc::channel();
    let _ = req_tx.send(LoadReq::Reload);
    std::thread::spawn(move || {
        // When the last load ran, and whether a wake-up since waits for the gap to pass.
        let mut last = std::time::Instant::now() - LIVE_GAP;
        let mut woken = false;
        loop {
            // A load that left the worktrees' git out (the first) is followed at once by
            // one that reads them.
            let owed = loader.work.owes_git();
            let wait = if owed {
                Duration::ZERO
            } else if woken {
                LIVE_GAP.saturating_sub(last.elapsed())
            } else {
                poll
            };
            let mut forced = owed;
            match req_rx.recv_timeout(wait) {
                Ok(req) => forced |= take(&mut loader, req, &mut woken),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return,
            }
            // Coalesce a burst of requests and wake-ups into one load.
            while let Ok(more) = req_rx.try_recv() {
                forced |= take(&mut loader, more, &mut woken);
            }
            let due = forced
                || if woken {
                    last.elapsed() >= LIVE_GAP
                } else {
                    loader.changed().unwrap_or(true)
                };
            if !due {
                continue;
            }
            woken = false;
            last = std::time::Instant::now();
            let msg = match loader.load(now_ms()) {
                Ok(s) => Msg::Snapshot(Box::new(s)),
                Err(e) => Msg::LoadFailed(e.to_string()),
            };
            if tx.send(msg).is_err() {
                return;
            }
        }
    });
    req_tx
}

/// Takes one request: whether it forces a load now (a key asked); a wake-up only marks
/// that the store changed.
fn take(loader: &mut Loader, req: LoadReq, woken: &mut bool) -> bool {
    match req {
        LoadReq::Reload => true,
        LoadReq::Show(what) => {
            open(loader, what);
            true
        }
        LoadReq::Wake => {
            *woken = true;
            false
        }
    }
}

/// Points the loader at the job or thread the next snapshot carries in full.
fn open(loader: &mut Loader, what: Load) {
    match what {
        Load::Detail(id) => loader.detail_job = Some(id),
        Load::Thread(id) => loader.thread = Some(id),
        Load::Diff(id) => loader.work.diff_job = Some(id),
        Load::Agents => loader.agents = true,
        Load::Search(q) => loader.search = Some(q),
        Load::Usage => {
            loader.usage.get_or_insert_default();
        }
    }
}

fn spawn_executor(mut exec: Executor, tx: Sender<Msg>, load_tx: Sender<LoadReq>) -> Sender<Write> {
    let (act_tx, act_rx) = mpsc::channel::<Write>();
    std::thread::spawn(move || {
        while let Ok(write) = act_rx.recv() {
            let _ = tx.send(Msg::Done(exec.run(&write)));
            let _ = load_tx.send(LoadReq::Reload);
        }
    });
    act_tx
}

fn lock(d: &Mutex<DaemonWatch>) -> std::sync::MutexGuard<'_, DaemonWatch> {
    d.lock().unwrap_or_else(|e| e.into_inner())
}

/// Re-probes the daemon (lock + heartbeat file, no store) and reports changes.
fn spawn_probe(daemon: Arc<Mutex<DaemonWatch>>, mut last: DaemonStatus, tx: Sender<Msg>) {
    std::thread::spawn(move || {
        loop {
            std::thread::sleep(PROBE_EVERY);
            let now = lock(&daemon).probe(now_ms());
            if now != last {
                last = now;
                if tx.send(Msg::Daemon(now)).is_err() {
                    return;
                }
            }
        }
    });
}

/// The toast for a daemon change the operator must not miss.
fn daemon_change(before: DaemonStatus, now: DaemonStatus) -> Option<String> {
    match now {
        DaemonStatus::TookOver if before != DaemonStatus::TookOver => {
            Some("the daemon this control room watched stopped; it now runs the jobs itself".into())
        }
        DaemonStatus::Lost => {
            Some("the daemon went away; queued jobs will not run (--no-daemon/--readonly)".into())
        }
        DaemonStatus::Unresponsive => Some("the daemon holds the lock but stopped ticking".into()),
        _ => None,
    }
}
