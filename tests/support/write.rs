//! Write jobs on a real git repository: a scratch home whose repo `acme/app` is a git
//! checkout on `main` (README and lib.txt committed, the checkout's identity set), and a
//! `workspace-write` shell agent `coder` that runs the first line of its prompt as a shell
//! snippet in its working directory (in a review round, the comments' `DO: ` lines), then reports `pwd`, branch and the snippet's `$S`/`$E`
//! markers as its summary.

use std::path::PathBuf;

use serde_json::Value;

use crate::daemon::{TestHome, git};

pub struct WriteHome {
    pub h: TestHome,
    pub repo: PathBuf,
}

/// The agent: the prompt's first line is the work, the summary says where it ran.
const CODER: &str = r#"cat > /dev/null
if grep -q '^Review comments' "$GITMOOT_PROMPT_FILE"; then
  eval "$(sed -n 's/^DO: //p' "$GITMOOT_PROMPT_FILE")"
else
  eval "$(sed -n '1p' "$GITMOOT_PROMPT_FILE")"
fi
printf '{"gitmoot_result":{"decision":"implemented","summary":"%s %s %s %s","changes_made":["%s"]}}\n' \
  "$(pwd)" "$(git rev-parse --abbrev-ref HEAD)" "${S:-0}" "${E:-0}" "${CLAIM:-}"
"#;

impl WriteHome {
    /// The home and its repo, `repo_extra` added to the repo's config section.
    pub fn new(repo_extra: &str) -> Self {
        let h = TestHome::new();
        let repo = h.file("app");
        std::fs::create_dir_all(&repo).unwrap();
        std::fs::write(repo.join("README"), "base\n").unwrap();
        std::fs::write(repo.join("lib.txt"), "one\ntwo\nthree\n").unwrap();
        git(&repo, &["init", "-q", "-b", "main"]);
        git(&repo, &["config", "user.name", "Op"]);
        git(&repo, &["config", "user.email", "op@example.com"]);
        git(&repo, &["add", "."]);
        git(&repo, &["commit", "-qm", "base"]);
        h.config(&format!(
            "[repos.\"acme/app\"]\npath = \"{}\"\nmax_parallel = 3\n{repo_extra}",
            repo.display()
        ));
        let script = h.file("coder.sh");
        std::fs::write(&script, CODER).unwrap();
        let command = format!("sh {}", script.display());
        h.ok(&crate::agent_args::shell_agent_args(
            "coder",
            &command,
            &["--policy", "workspace-write", "--capability", "implement"],
        ));
        WriteHome { h, repo }
    }

    /// Three finished jobs: `a` (committed) and `b` (uncommitted) both change `lib.txt`, `c`
    /// adds a file of its own; (home, a, b, c).
    pub fn overlapping() -> (Self, String, String, String) {
        let w = WriteHome::new("");
        let a = w.implement(
            "printf 'ONE\\ntwo\\nthree\\n' > lib.txt; git commit -qam a",
            &[],
        );
        let b = w.implement("printf 'one\\ntwo\\nTHREE\\n' > lib.txt", &[]);
        let c = w.implement("echo c > c.txt", &[]);
        w.h.daemon_until_idle(3);
        (w, a, b, c)
    }

    /// `job run --action implement --repo acme/app EXTRA… WORK`; the job id.
    pub fn implement(&self, work: &str, extra: &[&str]) -> String {
        let mut args = vec!["--action", "implement", "--repo", "acme/app"];
        args.extend_from_slice(extra);
        self.h.submit("coder", work, &args)
    }

    pub fn git(&self, args: &[&str]) -> String {
        git(&self.repo, args)
    }

    /// `gitmoot --home … ARGS`, its output kept whatever the exit.
    pub fn run(&self, args: &[&str]) -> std::process::Output {
        self.h.cmd(args).output().unwrap()
    }

    /// `ARGS` with `--json` in them, parsed.
    pub fn json(&self, args: &[&str]) -> Value {
        serde_json::from_str(&self.h.ok(args)).unwrap()
    }

    /// Runs `args`, which must fail with `code`; its one-line stderr.
    pub fn fails(&self, args: &[&str], code: i32) -> String {
        let out = self.run(args);
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: one line: {err}");
        assert!(err.starts_with("error: "), "{err}");
        err
    }

    /// The kinds of the job's events, in order.
    pub fn event_kinds(&self, job: &str) -> Vec<String> {
        self.json(&["job", "events", job, "--json"])
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["kind"].as_str().unwrap().to_string())
            .collect()
    }

    /// The worktree the job ran in.
    pub fn worktree(&self, job: &str) -> PathBuf {
        PathBuf::from(self.summary(job).0)
    }

    /// The summary the coder reported: (pwd, branch, start ns, end ns).
    pub fn summary(&self, job: &str) -> (String, String, u128, u128) {
        let v = self.json(&["job", "show", job, "--json"]);
        let s = v["result"]["summary"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let p: Vec<&str> = s.split(' ').collect();
        assert_eq!(p.len(), 4, "summary of {job}: {v}");
        (
            p[0].into(),
            p[1].into(),
            p[2].parse().unwrap(),
            p[3].parse().unwrap(),
        )
    }
}
