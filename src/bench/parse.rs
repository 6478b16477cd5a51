//! The parser benchmark behind `gitmoot bench`: realistic large outputs, timed.
//!
//! Owns the fixture builders and the timing loop only; printing belongs to the caller.

use std::time::{Duration, Instant};

/// Output size the daemon stores at most, and what the benchmark parses.
pub const BENCH_BYTES: usize = 1 << 20;
/// Decoy `{` characters in the benchmark output.
pub const BENCH_BRACES: usize = 10_000;

/// A valid result, as an agent ends its reply.
const TAIL: &str = r#"
Here is my result:

```json
{"gitmoot_result": {"decision": "approved", "summary": "Reviewed the parser; no blocking issues.",
 "evidence": "executed", "tests_run": [{"name": "unit", "command": "cargo test", "result": "pass"}],
 "findings": [{"title": "nit", "severity": "P3"}], "changes_made": [], "needs": []}}
```
"#;

/// About 1 MiB of agent prose: code with braces, JSON decoys, a few objects that only
/// mention `"gitmoot_result"`, then the real result at the very end (the worst case for
/// a left-to-right search).
pub fn realistic_output() -> String {
    let chunks = [
        "fn helper() { let x = vec![1, 2]; if x.is_empty() { return; } }\n",
        "The config looks like {\"retries\": 3, \"backoff\": {\"ms\": 250}} in production.\n",
        "Templates use {name} and {{escaped}} placeholders; see docs.\n",
        "A decoy: {\"note\": \"the gitmoot_result key goes last\"} — not the result.\n",
        "Mentioned inline: {\"gitmoot_result\" is what I will return} as prose.\n",
    ];
    let mut out = String::with_capacity(BENCH_BYTES + TAIL.len());
    let mut braces = 0;
    let mut n = 0;
    while braces < BENCH_BRACES {
        let chunk = chunks[n % chunks.len()];
        let opens = chunk.matches('{').count();
        if braces + opens > BENCH_BRACES {
            break;
        }
        out.push_str(chunk);
        braces += opens;
        n += 1;
    }
    while braces < BENCH_BRACES {
        out.push_str("An empty map {} here.\n");
        braces += 1;
    }
    let filler = "Plain reasoning text without any braces, explaining the review steps. ";
    while out.len() + filler.len() + TAIL.len() <= BENCH_BYTES {
        out.push_str(filler);
    }
    out.push_str(TAIL);
    out
}

/// 1 MiB whose 10,000 braces never close, before the result: every count runs to the end
/// of the text, which a per-brace scan would pay for ten thousand times.
pub fn unbalanced_output() -> String {
    let mut out = "{ unclosed ".repeat(BENCH_BRACES);
    let filler = "more text with a stray \" quote and no braces at all. ";
    while out.len() + filler.len() + TAIL.len() <= BENCH_BYTES {
        out.push_str(filler);
    }
    out.push_str(TAIL);
    out
}

/// One timed operation on a fixture.
type Run = dyn Fn(&str) -> Result<(), crate::contract::ContractErrors>;

/// Times `parse` on both fixtures, and the locator alone on the realistic one; returns
/// (figure, value) pairs for `gitmoot bench`.
pub fn bench_parse() -> Vec<(String, String)> {
    let realistic = realistic_output();
    let unbalanced = unbalanced_output();
    let parse = |text: &str| crate::contract::parse(text).map(|_| ());
    let locate = |text: &str| {
        std::hint::black_box(crate::contract::locate::candidates(text));
        Ok(())
    };
    let runs: [(&str, &str, &Run); 3] = [
        ("result parse, 1 MiB / 10k braces", &realistic, &parse),
        (
            "result parse, 1 MiB / 10k unclosed braces",
            &unbalanced,
            &parse,
        ),
        (
            "result locate only, 1 MiB / 10k braces",
            &realistic,
            &locate,
        ),
    ];
    runs.into_iter()
        .map(|(name, text, run)| {
            let value = match time(text, run) {
                Ok(t) => format!(
                    "{:.2} ms (fastest of {}; mean {:.2} ms; {} bytes)",
                    t.min.as_secs_f64() * 1e3,
                    t.iterations,
                    t.mean.as_secs_f64() * 1e3,
                    text.len()
                ),
                Err(e) => format!("failed: {e}"),
            };
            (name.to_owned(), value)
        })
        .collect()
}

/// Mean and fastest time of `run` over at least 10 iterations and about half a second.
/// The fastest is the figure to trust on a busy machine.
fn time(text: &str, run: &Run) -> Result<Timing, crate::contract::ContractErrors> {
    run(text)?;
    let start = Instant::now();
    let mut timing = Timing {
        mean: Duration::ZERO,
        min: Duration::MAX,
        iterations: 0,
    };
    while timing.iterations < 10 || start.elapsed() < Duration::from_millis(500) {
        let one = Instant::now();
        run(std::hint::black_box(text))?;
        timing.min = timing.min.min(one.elapsed());
        timing.iterations += 1;
    }
    timing.mean = start.elapsed() / timing.iterations;
    Ok(timing)
}

struct Timing {
    mean: Duration,
    min: Duration,
    iterations: u32,
}
