//! The control room glue: terminal setup and restore, the event loop, loading view models
//! from the store and executing the ui crate's actions through the same functions as the CLI.

pub(crate) mod app;
mod attention;
pub mod colors;
pub mod daemon;
pub mod exec;
pub mod live;
pub mod load;
pub mod notify;
pub mod terminal;
mod usage;
pub mod watch;
pub mod work;

use std::str::FromStr;
use std::sync::{Arc, Mutex};

use gitmoot_ui::{CompletionTree, Keymap, State, Theme};

use crate::config::Config;
use crate::home::Home;
use crate::store::Store;

/// How the control room was asked to start.
#[derive(Debug, Clone, Default)]
pub struct TuiOptions {
    /// Disable every write (the daemon is not embedded either).
    pub readonly: bool,
    /// Never embed the daemon; attach as a viewer.
    pub no_daemon: bool,
    pub theme: Option<String>,
    pub no_mouse: bool,
    /// The CLI's verbs, for Tab on the `:` line (built by the CLI from its clap tree).
    pub completions: CompletionTree,
}

/// The theme by name: a user file `<home>/themes/NAME.toml` wins over the built-ins;
/// `auto` picks light or dark from the terminal's background; `NO_COLOR` always gives the
/// monochrome theme. Colours degrade to what the terminal shows (`colors::depth`).
pub(crate) fn load_theme(home: &Home, name: &str) -> anyhow::Result<Theme> {
    let name = if name == "auto" {
        colors::auto_theme()
    } else {
        name
    };
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let user = std::fs::read_to_string(home.themes_dir().join(format!("{name}.toml"))).ok();
    Ok(Theme::select(name, user.as_deref(), no_color)?.degrade(colors::depth()))
}

/// The built-in keymap with the home's `keymap.toml` overrides, if any.
pub(crate) fn load_keymap(home: &Home) -> anyhow::Result<Keymap> {
    let path = home.keymap_path();
    match std::fs::read_to_string(&path) {
        Ok(text) => Ok(Keymap::with_overrides(&path.display().to_string(), &text)?),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Keymap::builtin()),
        Err(e) => Err(e.into()),
    }
}

/// What the status bar names: the home's folder (`~` for the user's home, its start cut
/// past 32 characters) or, for a PostgreSQL store, its database and host without
/// credentials.
fn watching(home: &Home) -> String {
    use crate::store::Location;
    if let Ok(Location::Postgres(url)) = Location::of_home(home) {
        return postgres::Config::from_str(&url)
            .ok()
            .map(|c| {
                let host = match c.get_hosts().first() {
                    Some(postgres::config::Host::Tcp(h)) => h.clone(),
                    Some(postgres::config::Host::Unix(p)) => p.display().to_string(),
                    None => "localhost".into(),
                };
                format!("postgres {}@{host}", c.get_dbname().unwrap_or("postgres"))
            })
            .unwrap_or_else(|| "postgres".into());
    }
    let path = home.root().display().to_string();
    let path = match std::env::home_dir().map(|h| h.display().to_string()) {
        Some(h) if !h.is_empty() && h != "/" && path.starts_with(&h) => {
            format!("~{}", &path[h.len()..])
        }
        _ => path,
    };
    let chars: Vec<char> = path.chars().collect();
    if chars.len() > 32 {
        format!("…{}", chars[chars.len() - 31..].iter().collect::<String>())
    } else {
        path
    }
}

/// Opens the control room on `home`. Unless `--no-daemon`/`--readonly`, it runs the home's
/// daemon when none runs (and takes over when a watched one goes away); quitting decides
/// that daemon's fate (`app::Exit`), and every other way out leaves it running.
pub fn run(home: &Home, opts: TuiOptions) -> anyhow::Result<()> {
    let store = Store::open_home(home)?;
    crate::logging::init(home);
    let config = Config::load(&home.config_path())?;
    let theme = load_theme(home, opts.theme.as_deref().unwrap_or(&config.tui.theme))?;
    let keymap = load_keymap(home)?;
    let mut watch = daemon::DaemonWatch::new(
        home.clone(),
        !(opts.no_daemon || opts.readonly),
        config.daemon.tick.0,
    );
    let status = watch.probe(crate::clock::now_ms());
    let watch = Arc::new(Mutex::new(watch));
    let mut loader = load::Loader::new(store, status);
    loader.configure(&config);
    loader.watching = watching(home);
    let mut state = State::new(keymap, opts.readonly, crate::clock::now_ms());
    state.completions = opts.completions.clone();
    state.history = exec::load_history(home);
    let app = app::App {
        state,
        theme,
        loader,
        executor: exec::Executor::new(home.clone(), Store::open_home(home)?, config.clone()),
        home: home.clone(),
        daemon: watch.clone(),
    };
    let term = terminal::enter(config.tui.mouse && !opts.no_mouse)?;
    let result = app::run(term, app);
    terminal::restore();
    let mut watch = watch.lock().unwrap_or_else(|e| e.into_inner());
    match result {
        Ok(app::Exit::Quit) => {
            watch.stop();
            let grace = std::time::Duration::from_millis(config.daemon.shutdown_grace.0 as u64);
            if !watch.wait_exit(grace + std::time::Duration::from_secs(5)) {
                eprintln!("the daemon is still stopping in the background");
            }
            Ok(())
        }
        Ok(app::Exit::Detached) => {
            if let Some(pid) = watch.own_pid() {
                eprintln!(
                    "detached: the daemon (pid {pid}) keeps running this home's jobs; \
                     `gitmoot daemon status` shows them, `gitmoot tui` attaches again, \
                     `gitmoot daemon stop` stops it"
                );
            }
            Ok(())
        }
        Err(e) => Err(e),
    }
}
