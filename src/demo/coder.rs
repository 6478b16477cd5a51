//! The demo's write job: a small git checkout (`acme/auth`, beside the demo home, never inside
//! it) registered in the demo home's config, and the scripted coder's edits in its worktree —
//! a first attempt that commits the refresh logging the reviewer asked for and leaves a test
//! uncommitted, and a review round that adds what the comments ask.
//!
//! Owns the checkout's files and the coder's edits; the job itself is submitted by the scene
//! and the worktree opened by the daemon, as for any implement job.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Context;
use serde_json::json;

use crate::home::Home;

/// The repo the coder works on: its own, so the demo's read-only trees on `acme/api` keep
/// running side by side rather than waiting on a shared checkout's lock.
pub const CODE_REPO: &str = "acme/auth";

/// The coder's task.
pub const CODE_GOAL: &str =
    "Log why a session refresh failed (the reviewer's note in #release-planning)";

/// The comments the tour and `--answer` send back.
pub const REVIEW: &str = "src/session.rs:6: also say which session it was";

const SESSION: &str = "use crate::token::{Claims, Error, Session, Token};

/// Refreshes a session from its refresh token.
pub fn refresh(token: &Token) -> Result<Session, Error> {
    let claims = crate::token::verify(token)?;
    if claims.expired() {
        return Err(Error::Expired);
    }
    crate::token::issue(claims)
}
";

/// The line the first attempt adds before the early return.
const LOG_LINE: &str =
    "        tracing::warn!(reason = \"expired\", \"session refresh failed\");\n";

/// The line a review round makes of it.
const REVIEWED_LINE: &str = "        tracing::warn!(session = %claims.session_id, reason = \"expired\", \"session refresh failed\");\n";

/// `SESSION` with `line` logged before its early return.
fn session_with(line: &str) -> String {
    let at = SESSION
        .find("        return Err")
        .expect("the early return");
    format!("{}{line}{}", &SESSION[..at], &SESSION[at..])
}

const TEST: &str = "#[test]
fn an_expired_refresh_is_logged_with_its_reason() {
    let logs = capture(|| refresh(&expired_token()));
    assert!(logs.contains(\"reason=expired\"));
}
";

fn git(dir: &Path, args: &[&str]) -> anyhow::Result<()> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.name=gitmoot demo",
            "-c",
            "user.email=demo@gitmoot.invalid",
        ])
        .args(args)
        .output()
        .context("running git for the demo")?;
    anyhow::ensure!(
        out.status.success(),
        "git {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr).trim()
    );
    Ok(())
}

/// The demo's checkout beside the home (`<home>-auth`), made on first use, and registered
/// in the home's config unless the config already names the repo.
pub fn prepare(home: &Home) -> anyhow::Result<PathBuf> {
    let root = home.root();
    let name = root.file_name().map_or_else(
        || "gitmoot-demo".to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let checkout = root.with_file_name(format!("{name}-auth"));
    if !checkout.join(".git").exists() {
        std::fs::create_dir_all(checkout.join("src"))?;
        std::fs::write(checkout.join("src/session.rs"), SESSION)?;
        git(&checkout, &["init", "-q", "-b", "main"])?;
        git(&checkout, &["add", "."])?;
        git(&checkout, &["commit", "-qm", "session refresh"])?;
    }
    let config_path = home.config_path();
    let config = std::fs::read_to_string(&config_path).unwrap_or_default();
    let section = format!("[repos.\"{CODE_REPO}\"]");
    if !config.contains(&section) {
        let path = toml_string(&checkout.display().to_string());
        std::fs::write(
            &config_path,
            format!("{config}\n{section}\npath = {path}\n"),
        )?;
    }
    Ok(checkout)
}

/// A TOML basic string.
fn toml_string(s: &str) -> String {
    serde_json::to_string(s).expect("a string encodes")
}

/// Whether the coder's job is a review round (its prompt opens with the comments).
pub fn is_review_round(prompt: &str) -> bool {
    prompt.starts_with("Review comments")
}

/// What the coder reports for a first attempt or a review round.
pub fn result(review_round: bool) -> serde_json::Value {
    let (summary, changes) = if review_round {
        (
            "the refresh failure log names the session too",
            json!(["src/session.rs"]),
        )
    } else {
        (
            "refresh failures are logged with their reason; a test covers it",
            json!(["src/session.rs", "tests/refresh_logging.rs"]),
        )
    };
    json!({
        "decision": "implemented",
        "summary": summary,
        "changes_made": changes,
        "tests_run": ["cargo test --test refresh_logging"],
        "delegations": []
    })
}

/// The coder's edits in its working directory (the job's worktree): the first attempt
/// commits the logging and leaves its test uncommitted; a review round edits on top.
pub fn work(review_round: bool) -> anyhow::Result<()> {
    let here = Path::new(".");
    if review_round {
        std::fs::write(here.join("src/session.rs"), session_with(REVIEWED_LINE))?;
        return Ok(());
    }
    std::fs::write(here.join("src/session.rs"), session_with(LOG_LINE))?;
    git(
        here,
        &["commit", "-qam", "session: log why a refresh failed"],
    )?;
    std::fs::create_dir_all(here.join("tests"))?;
    std::fs::write(here.join("tests/refresh_logging.rs"), TEST)?;
    Ok(())
}
