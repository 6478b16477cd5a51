//! The demo scene: a fresh home, scripted agents on the `shell` runtime (the gitmoot binary
//! itself, `demo-agent ROLE`), a chat thread with mentions and a promoted message, three
//! trees — the main fan-out (five legs with deps, an ask-gate with choices, a leg failing
//! under `escalate_human`, a verify leg), a quick one that finishes, and a soak that the
//! director kills — and an implement job whose work the tour reviews and lands.
//!
//! Everything goes through the same functions as the CLI (`submit_root`, `chat::promote`,
//! `engine::kill_root` …); the scene only decides what to do and when.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context;

use crate::chat::threads::{self, NewThread};
use crate::chat::{messages, promote};
use crate::clock::SystemClock;
use crate::config::Config;
use crate::domain::{Action, AutonomyPolicy, Capability, JobState, RuntimeKind};
use crate::engine::{self, SubmitRoot};
use crate::home::Home;
use crate::registry;
use crate::store::agents::{self, Agent};
use crate::store::{Store, jobs, runs};

use super::agent::Role;
use super::coder::{CODE_GOAL, CODE_REPO};
use super::{QUICK_QUESTION, SOAK_GOAL};

pub const REPO: &str = "acme/api";
pub const THREAD: &str = "release-planning";
pub const MAIN_GOAL: &str = "Plan the session-refresh rollout: review the token refresh change, draft the sessions \
    migration, run the integration suite, and verify the plan against this goal.";

/// The roots the scene starts.
#[derive(Debug, Clone)]
pub struct Scene {
    pub home: Home,
    pub main_root: String,
    pub quick_root: String,
    pub soak_root: String,
    /// The coder's implement job, whose work the tour reviews and lands.
    pub code_root: String,
}

/// A new demo home under the system temp folder; it is kept for inspection.
pub(crate) fn fresh_home() -> anyhow::Result<Home> {
    let dir: PathBuf =
        std::env::temp_dir().join(format!("gitmoot-demo-{}", crate::ids::random_hex(4)));
    let home = Home::resolve(Some(&dir))?;
    home.ensure()?;
    std::fs::write(
        home.config_path(),
        "[daemon]\nparallel = 3\ntick = \"250ms\"\n",
    )?;
    Ok(home)
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::Lead => "lead",
        Role::Scout => "scout",
        Role::Reviewer => "reviewer",
        Role::Planner => "planner",
        Role::Runner => "runner",
        Role::Verifier => "verifier",
        Role::Sleeper => "sleeper",
        Role::Coder => "coder",
    }
}

/// The file whose appearance lets the runner's first attempt fail: the director writes it
/// once the migration leg has asked its question, so the scene's first gate is the question
/// (and the failure comes second) at any speed and under any load.
pub(crate) fn cue_path(home: &Home) -> PathBuf {
    home.root().join("demo.cue")
}

/// Registers the cast, each a shell agent running `gitmoot demo-agent ROLE`.
fn register(store: &mut Store, exe: &Path, speed: f64, cue: &Path) -> anyhow::Result<()> {
    let roles = [
        Role::Lead,
        Role::Scout,
        Role::Reviewer,
        Role::Planner,
        Role::Runner,
        Role::Verifier,
        Role::Sleeper,
        Role::Coder,
    ];
    for role in roles {
        let name = role_name(role);
        let coder = role == Role::Coder;
        let agent = Agent {
            name: name.into(),
            runtime: RuntimeKind::Shell,
            command: Some(format!(
                "GITMOOT_DEMO_SPEED={speed} GITMOOT_DEMO_CUE={} {} demo-agent {name}",
                shell_quote(&cue.display().to_string()),
                shell_quote(&exe.display().to_string())
            )),
            model: None,
            effort: None,
            capabilities: if coder {
                vec![Capability::Implement]
            } else {
                registry::DEFAULT_CAPABILITIES.to_vec()
            },
            policy: if coder {
                AutonomyPolicy::WorkspaceWrite
            } else {
                registry::DEFAULT_POLICY
            },
            repos: vec![if coder { CODE_REPO } else { REPO }.into()],
            chat_autorespond: false,
            created_ms: crate::clock::now_ms(),
        };
        registry::validate(&agent)?;
        store.write(|tx| agents::insert(tx, &agent))?;
    }
    Ok(())
}

/// Submits a root: the lead's ask on the API, or the coder's implement job on its repo.
fn submit(store: &mut Store, prompt: &str, action: Action) -> anyhow::Result<String> {
    let (agent, repo) = match action {
        Action::Implement => ("coder", CODE_REPO),
        _ => ("lead", REPO),
    };
    Ok(store.write(|tx| {
        engine::submit_root(
            tx,
            &SystemClock,
            SubmitRoot {
                repo: Some(repo.into()),
                ..SubmitRoot::new(agent, action, prompt, "demo")
            },
        )
    })?)
}

/// Waits for the clock's next millisecond. The tree lists roots newest first and breaks a
/// tie by their random ids, so roots seeded in one millisecond would swap places from run
/// to run; one apart, the main tree always leads.
fn next_millisecond() {
    let now = crate::clock::now_ms();
    while crate::clock::now_ms() <= now {
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Seeds the home: agents, the planning thread (mentions, a promoted message) and the
/// three roots. Nothing runs until a daemon claims the jobs.
pub fn seed(home: &Home, speed: f64) -> anyhow::Result<Scene> {
    super::coder::prepare(home)?;
    let mut store = Store::open_home(home)?;
    let exe = std::env::current_exe()
        .context("cannot find the gitmoot binary to cast as the demo agents")?;
    register(&mut store, &exe, speed, &cue_path(home))?;
    let clock = SystemClock;
    store.write(|tx| {
        threads::create(
            tx,
            &clock,
            NewThread {
                name: THREAD,
                repo: REPO,
                title: Some("Release planning: session refresh"),
                created_by: "human",
            },
        )
    })?;
    let say = |store: &mut Store, body: &str, as_agent: Option<&str>| -> anyhow::Result<()> {
        let opts = messages::SendOptions {
            as_agent: as_agent.map(str::to_string),
            ..Default::default()
        };
        messages::send_message(store, &clock, THREAD, Some(REPO), body, &opts)?;
        Ok(())
    };
    say(
        &mut store,
        "@scout before we plan the rollout, who reads or writes the sessions table?",
        None,
    )?;
    say(
        &mut store,
        "auth/ and billing/ are the two I know of. @reviewer you had notes on the refresh change?",
        Some("scout"),
    )?;
    say(
        &mut store,
        "Yes: the refresh path should log why it failed. I'll review once the plan lands.",
        Some("reviewer"),
    )?;
    let quick = promote::task_message(
        &mut store,
        &clock,
        THREAD,
        Some(REPO),
        QUICK_QUESTION,
        Action::Ask,
    )?;
    next_millisecond();
    let code_root = submit(&mut store, CODE_GOAL, Action::Implement)?;
    next_millisecond();
    let soak_root = submit(&mut store, SOAK_GOAL, Action::Ask)?;
    next_millisecond();
    let main_root = submit(&mut store, MAIN_GOAL, Action::Ask)?;
    Ok(Scene {
        home: home.clone(),
        main_root,
        quick_root: quick.job_id,
        soak_root,
        code_root,
    })
}

/// The demo's director: releases the runner once the migration leg has settled (see
/// `cue_path`) and kills the soak tree while two of its legs run. Gives up on either at
/// `timeout`, releasing the runner so no leg waits for ever.
pub fn direct(scene: &Scene, timeout: Duration) -> anyhow::Result<()> {
    let mut store = Store::open_home(&scene.home)?;
    let cfg = Config::load(&scene.home.config_path())?;
    let deadline = Instant::now() + timeout;
    let (mut cued, mut soak_done) = (false, false);
    while !(cued && soak_done) {
        let late = Instant::now() > deadline;
        if !cued {
            let migrated = jobs::children(store.conn(), &scene.main_root)?
                .iter()
                .any(|j| j.delegation_id.as_deref() == Some("migration") && j.state.is_terminal());
            if migrated || late {
                std::fs::write(cue_path(&scene.home), "")?;
                cued = true;
            }
        }
        if !soak_done {
            let legs = jobs::children(store.conn(), &scene.soak_root)?;
            if legs.len() >= 2 && legs.iter().any(|j| j.state == JobState::Running) {
                store.write(|tx| {
                    engine::kill_root(
                        tx,
                        crate::chat::live_env(&cfg.orchestrate),
                        &scene.soak_root,
                        false,
                    )
                })?;
                soak_done = true;
            } else if late
                || runs::require(store.conn(), &scene.soak_root)?
                    .state
                    .is_terminal()
            {
                soak_done = true;
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(())
}
