//! The engine verbs through the real binary: kill, cancel, pending, answer, resume, with
//! their error texts and exit codes. Trees are advanced through the library on the same
//! database, standing in for the daemon.

use assert_cmd::Command;
use gitmoot::clock::SystemClock;
use gitmoot::config::OrchestrateConfig;
use gitmoot::contract::{Decision, Delegation, FailurePolicy, GitmootResult, HumanQuestion};
use gitmoot::engine::{self, Env, NoHooks, Outcome, Settlement};
use gitmoot::store::Store;
use gitmoot_test_support::engine::{self as engine_support, DelegationExt};
use predicates::prelude::*;

struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new() -> Self {
        let h = Self {
            dir: tempfile::tempdir().unwrap(),
        };
        h.ok(&["agent", "add", "coord", "--runtime", "claude"]);
        h.ok(&["agent", "add", "rev", "--runtime", "codex"]);
        h
    }
    fn cmd(&self, args: &[&str]) -> assert_cmd::assert::Assert {
        Command::cargo_bin("gitmoot")
            .unwrap()
            .arg("--home")
            .arg(self.dir.path())
            .args(args)
            .assert()
    }
    fn ok(&self, args: &[&str]) -> String {
        String::from_utf8(self.cmd(args).success().get_output().stdout.clone()).unwrap()
    }
    fn root(&self) -> String {
        self.ok(&["job", "run", "--agent", "coord", "Plan the launch"])
            .trim()
            .to_string()
    }
    fn settle(&self, id: &str, r: GitmootResult) {
        let mut store = Store::open(&self.dir.path().join("gitmoot.db")).unwrap();
        let cfg = OrchestrateConfig::default();
        let env = Env {
            clock: &SystemClock,
            cfg: &cfg,
            hooks: &NoHooks,
        };
        store
            .write(|tx| engine::settle(tx, env, id, Settlement::of(Outcome::Parsed(r))))
            .unwrap();
    }
}

fn result(decision: Decision) -> GitmootResult {
    engine_support::summary(engine_support::res(decision), "s")
}

fn leg(id: &str, policy: FailurePolicy) -> Delegation {
    engine_support::d(id, "rev").prompt("look").policy(policy)
}

fn asking() -> GitmootResult {
    let mut r = result(Decision::Approved);
    r.human_questions = vec![HumanQuestion {
        id: "q1".into(),
        prompt: "Which day?".into(),
        choices: vec!["mon".into(), "tue".into()],
    }];
    r
}

#[test]
fn unknown_jobs_exit_2_with_one_line() {
    let h = Home::new();
    for verb in [
        vec!["job", "kill", "nope"],
        vec!["job", "cancel", "nope"],
        vec!["job", "answer", "nope", "q1: x"],
        vec!["job", "resume", "nope", "retry"],
    ] {
        h.cmd(&verb)
            .code(2)
            .stderr(predicate::eq("error: job \"nope\" not found\n"));
    }
}

#[test]
fn kill_prints_what_it_did_and_refuses_a_second_kill() {
    let h = Home::new();
    let root = h.root();
    h.settle(&root, {
        let mut r = result(Decision::Approved);
        r.delegations = vec![
            leg("a", FailurePolicy::BlockParent),
            leg("b", FailurePolicy::BlockParent),
        ];
        r
    });
    let out = h.ok(&["job", "kill", &root, "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["cancelled"].as_array().unwrap().len(), 2);
    assert_eq!(
        v["run_state"], "running",
        "one finalize continuation still runs"
    );
    let tree: serde_json::Value =
        serde_json::from_str(&h.ok(&["job", "tree", &root, "--json"])).unwrap();
    assert_eq!(tree["run"]["killed"], true);
    h.settle(&format!("{root}/continuation"), result(Decision::Approved));
    h.cmd(&["job", "kill", &root])
        .code(2)
        .stderr(predicate::str::contains(
            "is already killed; nothing to kill",
        ));
}

#[test]
fn cancel_then_cancel_again() {
    let h = Home::new();
    let root = h.root();
    h.cmd(&["job", "cancel", &root])
        .success()
        .stdout(format!("cancelled {root}\n"));
    h.cmd(&["job", "cancel", &root]).code(2).stderr(format!(
        "error: job {root} is already cancelled; nothing to cancel\n"
    ));
}

#[test]
fn pending_lists_questions_and_answer_resumes() {
    let h = Home::new();
    h.cmd(&["job", "pending", "--json"])
        .success()
        .stdout("[]\n");
    let root = h.root();
    h.settle(&root, asking());
    let v: serde_json::Value = serde_json::from_str(&h.ok(&["job", "pending", "--json"])).unwrap();
    assert_eq!(v[0]["job_id"], root.as_str());
    assert_eq!(v[0]["root_id"], root.as_str());
    assert_eq!(v[0]["kind"], "ask");
    assert_eq!(
        v[0]["questions"][0],
        serde_json::json!({"id": "q1", "prompt": "Which day?", "choices": ["mon", "tue"]})
    );
    assert!(v[0]["opened_at"].is_i64());
    assert!(v[0]["thread"].is_null());
    assert!(
        h.ok(&["job", "pending"])
            .contains("q1: Which day? (choices: mon, tue)")
    );
    h.cmd(&["job", "resume", &root, "retry"])
        .code(2)
        .stderr(predicate::str::contains(
            "is awaiting a human answer; resume it with answer \"<qid>: ...\", not retry",
        ));
    h.cmd(&["job", "answer", &root, "   "])
        .code(2)
        .stderr(predicate::str::contains("the answer is empty"));
    h.cmd(&["job", "answer", &root, "q1: tue\nq9: also ping ops"])
        .success()
        .stdout(format!(
            "answered {root}; continuation {root}/continuation queued\n"
        ));
    let show: serde_json::Value =
        serde_json::from_str(&h.ok(&["job", "show", &format!("{root}/continuation"), "--json"]))
            .unwrap();
    let prompt = show["prompt"].as_str().unwrap();
    assert!(
        prompt.contains("answer: tue") && prompt.contains("- q9: also ping ops"),
        "{prompt}"
    );
    h.cmd(&["job", "pending", "--json"])
        .success()
        .stdout("[]\n");
    h.cmd(&["job", "answer", &root, "q1: again"])
        .code(2)
        .stderr(predicate::str::contains("has no pending human question"));
}

#[test]
fn resume_verbs_on_a_failure_round() {
    let h = Home::new();
    let root = h.root();
    let mut r = result(Decision::Approved);
    r.delegations = vec![leg("a", FailurePolicy::EscalateHuman)];
    h.settle(&root, r);
    h.cmd(&["job", "resume", &root, "retry"])
        .code(2)
        .stderr(format!(
            "error: job {root} has no pending human escalation\n"
        ));
    h.settle(&format!("{root}/a"), result(Decision::Failed));
    let v: serde_json::Value = serde_json::from_str(&h.ok(&["job", "pending", "--json"])).unwrap();
    assert_eq!(v[0]["kind"], "failure");
    assert!(
        v[0]["reason"]
            .as_str()
            .unwrap()
            .contains("failure_policy escalate_human")
    );
    h.cmd(&["job", "answer", &root, "q1: x"]).code(2).stderr(predicate::str::contains(
        "is paused on a failure escalation, not an ask; resume it with retry|continue|abort, not answer",
    ));
    h.cmd(&["job", "resume", &root, "maybe"])
        .code(2)
        .stderr("error: invalid resume decision \"maybe\"; want retry|continue|abort\n");
    h.cmd(&["job", "resume", &root, "retry", "use", "the", "mirror"])
        .success()
        .stdout(format!("resumed {root} with retry\n"));
    let show: serde_json::Value =
        serde_json::from_str(&h.ok(&["job", "show", &format!("{root}/a.2"), "--json"])).unwrap();
    assert!(
        show["prompt"]
            .as_str()
            .unwrap()
            .ends_with("Human guidance on resume: use the mirror")
    );
    h.settle(&format!("{root}/a.2"), result(Decision::Failed));
    h.cmd(&["job", "resume", &root, "abort"]).success();
    let show: serde_json::Value =
        serde_json::from_str(&h.ok(&["job", "show", &format!("{root}/continuation"), "--json"]))
            .unwrap();
    assert_eq!(show["kind"], "finalize");
}

#[test]
fn env_overrides_apply_without_a_config_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::cargo_bin("gitmoot")
        .unwrap()
        .arg("--home")
        .arg(dir.path())
        .args(["config", "show"])
        .env("GITMOOT_MAX_DELEGATION_TOTAL_JOBS", "3")
        .env("GITMOOT_MAX_DELEGATION_DEPTH", "2")
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(text.contains("max_delegation_total_jobs = 3"), "{text}");
    assert!(text.contains("max_delegation_depth = 2"), "{text}");
}

#[test]
fn retry_by_query_reruns_the_failed_leg_a_human_holds_and_refuses_a_job_nothing_holds() {
    let h = Home::new();
    let root = h.root();
    let idle = h.root();
    let mut r = result(Decision::Approved);
    r.delegations = vec![leg("a", FailurePolicy::EscalateHuman)];
    h.settle(&root, r);
    let leg_id = format!("{root}/a");
    h.settle(&leg_id, result(Decision::Failed));

    let dry = h.ok(&[
        "job",
        "retry",
        "--where",
        "state=failed agent=rev",
        "--dry-run",
    ]);
    assert!(
        dry.contains(&format!(
            "would retry {leg_id} (failed: runs again as a new attempt)"
        )),
        "{dry}"
    );
    h.cmd(&["job", "show", &format!("{leg_id}.2")]).code(2);

    let done = h.ok(&["job", "retry", "--where", "state=failed agent=rev"]);
    assert!(done.contains(&format!("retry {leg_id}")), "{done}");
    let again: serde_json::Value =
        serde_json::from_str(&h.ok(&["job", "show", &format!("{leg_id}.2"), "--json"])).unwrap();
    assert_eq!(again["state"], "queued");

    h.cmd(&["job", "retry", "--where", &format!("root={idle}")])
        .code(1)
        .stdout(predicate::str::contains(format!(
            "refused {idle}: job {idle} has no pending human escalation"
        )));
}
