//! `bench_idle`: the CPU of an idle `gitmoot tui` in a private tmux pane, and the pane
//! itself; reads `/proc` and never drives the control room.

use std::path::Path;
use std::time::{Duration, Instant};

use super::seed::{SeedSize, seed};
use crate::store::Store;

/// How long `bench_idle` lets the control room settle, then watches it.
const IDLE_SETTLE: Duration = Duration::from_secs(2);
const IDLE_WINDOW: Duration = Duration::from_secs(30);

/// A private tmux server (its own socket) running one 120×36 pane; killed on drop.
pub(in crate::bench) struct Pane {
    socket: String,
}

impl Pane {
    pub(in crate::bench) fn start(command: &[String]) -> Result<Self, String> {
        let pane = Self {
            socket: format!("gitmoot-bench-{}", crate::ids::random_hex(6)),
        };
        let mut args: Vec<String> = ["new-session", "-d", "-x", "120", "-y", "36"]
            .map(String::from)
            .to_vec();
        args.extend(command.iter().cloned());
        pane.tmux(&args)?;
        Ok(pane)
    }

    fn tmux<S: AsRef<std::ffi::OsStr>>(&self, args: &[S]) -> Result<String, String> {
        let out = std::process::Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .map_err(|e| format!("tmux: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "tmux: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    }

    /// Sends `keys` to the pane, as `tmux send-keys` names them.
    pub(in crate::bench) fn keys(&self, keys: &[&str]) -> Result<(), String> {
        let mut args = vec!["send-keys"];
        args.extend_from_slice(keys);
        self.tmux(&args).map(drop)
    }

    /// The pane's screen as text.
    pub(in crate::bench) fn capture(&self) -> Result<String, String> {
        self.tmux(&["capture-pane", "-p"])
    }

    pub(in crate::bench) fn pid(&self) -> Result<u32, String> {
        let text = self.tmux(&["display-message", "-p", "#{pane_pid}"])?;
        text.parse()
            .map_err(|_| format!("tmux gave no pane pid: {text:?}"))
    }
}

impl Drop for Pane {
    fn drop(&mut self) {
        let _ = self.tmux(&["kill-server"]);
    }
}

/// utime + stime of a process, in clock ticks (fields 14 and 15 of /proc/PID/stat,
/// counted after the parenthesised command name, which may contain spaces).
pub(in crate::bench) fn cpu_ticks(pid: u32) -> Result<u64, String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map_err(|e| format!("process {pid} is gone: {e}"))?;
    let rest = stat
        .rsplit_once(')')
        .map(|(_, r)| r)
        .ok_or("unreadable /proc stat")?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let tick = |i: usize| -> Result<u64, String> {
        fields
            .get(i)
            .and_then(|f| f.parse().ok())
            .ok_or_else(|| "unreadable /proc stat".to_string())
    };
    // After `)` the state is field 3, so utime (14) and stime (15) are at 11 and 12.
    Ok(tick(11)? + tick(12)?)
}

/// CPU of an idle `gitmoot tui` (embedded daemon, a few finished trees): `binary` runs in
/// a private tmux pane; after it settles, its utime+stime over 30 s as a percentage of
/// one core.
pub fn bench_idle(binary: &Path) -> crate::bench::Measured {
    crate::bench::in_scratch("idle", |dir| idle(binary, dir))
        .map_err(|e| crate::bench::Failure::new("tui.idle.error", e))
}

fn idle(binary: &Path, dir: &Path) -> Result<Vec<(String, String)>, String> {
    let home = crate::home::Home::resolve(Some(dir)).map_err(|e| e.to_string())?;
    {
        let mut store = Store::open_home(&home).map_err(|e| e.to_string())?;
        let size = SeedSize {
            roots: 5,
            jobs_per_root: 8,
            threads: 2,
            messages: 40,
            live: false,
        };
        seed(&mut store, size, crate::clock::now_ms()).map_err(|e| e.to_string())?;
    }
    let pane = Pane::start(&[
        binary.display().to_string(),
        "--home".into(),
        dir.display().to_string(),
        "tui".into(),
    ])?;
    std::thread::sleep(IDLE_SETTLE);
    let pid = pane.pid()?;
    // The embedded daemon is the control room's own `daemon run` child: count it too.
    let daemon: Option<u32> = crate::daemon::lock::holder(&crate::daemon::lock::path_for(&home))
        .and_then(|p| p.parse().ok());
    let ticks = || -> Result<u64, String> {
        Ok(cpu_ticks(pid)? + daemon.map(cpu_ticks).transpose()?.unwrap_or(0))
    };
    let before = ticks()?;
    let t = Instant::now();
    std::thread::sleep(IDLE_WINDOW);
    let after = ticks()?;
    if let Some(d) = daemon {
        // SAFETY: a plain signal to the daemon this bench's control room started.
        unsafe {
            libc::kill(d as i32, libc::SIGTERM);
        }
    }
    let secs = t.elapsed().as_secs_f64();
    // SAFETY: sysconf only reads a system constant.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    let cpu_s = (after - before) as f64 / hz;
    Ok(vec![
        ("tui.idle.window_s".into(), format!("{secs:.0}")),
        ("tui.idle.cpu_ms".into(), format!("{:.0}", cpu_s * 1_000.0)),
        (
            "tui.idle.cpu_percent".into(),
            format!("{:.2}", cpu_s / secs * 100.0),
        ),
    ])
}
