//! Logging to `<home>/logs/gitmoot.log` with tracing; never to the terminal, which the
//! control room owns. The level comes from `GITMOOT_LOG` (error|warn|info|debug|trace).

use std::fs::OpenOptions;
use std::os::unix::fs::OpenOptionsExt;
use std::sync::Mutex;

use tracing::level_filters::LevelFilter;

use crate::home::Home;

/// Installs the file logger once per process; later calls are no-ops.
pub fn init(home: &Home) {
    let level = std::env::var("GITMOOT_LOG")
        .ok()
        .and_then(|v| v.trim().parse::<LevelFilter>().ok())
        .unwrap_or(LevelFilter::INFO);
    let Ok(file) = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(home.logs_dir().join("gitmoot.log"))
    else {
        return;
    };
    let _ = tracing_subscriber::fmt()
        .with_writer(Mutex::new(file))
        .with_ansi(false)
        .with_max_level(level)
        .try_init();
}
