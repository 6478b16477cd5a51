//! The activity store's unit tests.
use rusqlite::Connection;

use super::*;

fn conn() -> Connection {
    super::super::test_conn()
}

fn step(summary: &str) -> NewActivity<'_> {
    NewActivity {
        kind: "output",
        summary,
        detail: None,
    }
}

/// A batch of job `j1`'s steps at `at`, the job still running.
fn append_running(c: &Connection, at: Millis, steps: &[NewActivity<'_>]) -> Appended {
    append(
        c,
        "j1",
        "r1",
        at,
        steps,
        Then::Running(LiveSpend::default()),
    )
    .unwrap()
}

/// Many jobs' batches in one call store what one call per batch stores: each job's
/// seqs continue (a job twice in one call included) and chunks past one statement keep
/// their order.
#[test]
fn append_all_stores_what_one_append_per_batch_stores() {
    let n = ROWS_PER_INSERT + 70;
    let texts: Vec<String> = (0..n).map(|i| format!("line {i}")).collect();
    let steps: Vec<_> = texts.iter().map(|t| step(t)).collect();
    let running = Then::Running(LiveSpend::default());
    let job = |job_id, batch| JobBatch {
        job_id,
        root_id: "r1",
        batch,
        then: running,
    };
    let (one, all) = (conn(), conn());
    let calls = [
        ("j1", &steps[..3]),
        ("j2", &steps[3..n - 20]),
        ("j1", &steps[n - 20..]),
    ];
    for (id, batch) in calls {
        append(&one, id, "r1", 10, batch, running).unwrap();
    }
    let jobs: Vec<_> = calls.iter().map(|(id, b)| job(*id, *b)).collect();
    let done = append_all(&all, 10, &jobs, None).unwrap();
    assert_eq!(done.iter().map(|d| d.stored).sum::<u64>(), n as u64);
    for id in ["j1", "j2"] {
        let listed = |c: &Connection| {
            let rows = list(c, id, 0, n).unwrap();
            rows.into_iter()
                .map(|r| (r.seq, r.summary))
                .collect::<Vec<_>>()
        };
        assert_eq!(listed(&all), listed(&one), "{id}");
        assert_eq!(of_job(&all, id).unwrap(), of_job(&one, id).unwrap());
    }
    assert_eq!(list(&all, "j1", 0, n).unwrap().len(), 23);
}

/// A batch of large records is cut into statements of bounded text, each row in one of
/// them and in order, and a record past the bound alone still gets a statement.
#[test]
fn large_records_are_inserted_in_statements_of_bounded_text() {
    let big = "x".repeat(100 * 1024);
    let huge = "y".repeat(BYTES_PER_INSERT + 1);
    let mut rows: Vec<Row<'_>> = (0..10).map(|i| ("j1", i, step(&big))).collect();
    rows.insert(4, ("j1", 99, step(&huge)));
    let cut: Vec<&[Row<'_>]> = statements(&rows).collect();
    let text = |c: &[Row<'_>]| c.iter().map(|(_, _, a)| a.summary.len()).sum::<usize>();
    assert!(
        cut.iter()
            .all(|c| c.len() == 1 || text(c) <= BYTES_PER_INSERT)
    );
    assert!(
        cut.iter().any(|c| c.len() == 1 && c[0].1 == 99),
        "the large record alone"
    );
    let seqs: Vec<u64> = cut.concat().iter().map(|(_, seq, _)| *seq).collect();
    assert_eq!(
        seqs,
        rows.iter().map(|(_, seq, _)| *seq).collect::<Vec<_>>()
    );
}

/// A writer's batch, many jobs' lines, writes the search index once: FTS5 adds a segment
/// for each statement that writes it, and each segment is merged and rewritten later.
#[test]
fn a_batch_of_many_jobs_lines_adds_one_search_segment() {
    let c = conn();
    let segments = || -> i64 {
        c.query_row(
            "SELECT count(DISTINCT segid) FROM search_activity_idx",
            [],
            |r| r.get(0),
        )
        .unwrap()
    };
    let before = segments();
    let texts: Vec<String> = (0..300)
        .map(|i| format!("step {i} ran the tests"))
        .collect();
    let steps: Vec<_> = texts.iter().map(|t| step(t)).collect();
    let ids: Vec<String> = (0..30).map(|j| format!("job-{j}")).collect();
    let jobs: Vec<_> = ids
        .iter()
        .zip(steps.chunks(10))
        .map(|(job_id, batch)| JobBatch {
            job_id,
            root_id: "r1",
            batch,
            then: Then::Running(LiveSpend::default()),
        })
        .collect();
    append_all(&c, 10, &jobs, None).unwrap();
    assert_eq!(segments() - before, 1);
}

/// Whatever text a step holds comes back as it went in (quotes, NUL, JSON-looking text),
/// and a missing detail stays missing.
#[test]
fn every_text_survives_the_trip_through_the_statement() {
    let c = conn();
    let awkward = [
        ("quote \" back\\slash", Some("tab\tnew\nline")),
        ("nul \0 inside", Some("\0")),
        ("unicode ✓ 🦀 \u{7f}", None),
        ("{\"json\": [1, null]}", Some("")),
    ];
    let steps: Vec<_> = awkward
        .iter()
        .map(|(summary, detail)| NewActivity {
            kind: "tool",
            summary,
            detail: *detail,
        })
        .collect();
    append_running(&c, 7, &steps);
    let got: Vec<_> = list(&c, "j1", 0, 10)
        .unwrap()
        .into_iter()
        .map(|r| (r.seq, r.at_ms, r.kind, r.summary, r.detail))
        .collect();
    let want: Vec<_> = awkward
        .iter()
        .enumerate()
        .map(|(i, (s, d))| {
            (
                i as u64,
                7,
                "tool".into(),
                s.to_string(),
                d.map(String::from),
            )
        })
        .collect();
    assert_eq!(got, want);
}

#[test]
fn batches_continue_the_sequence_and_the_cap_writes_one_truncated_record() {
    let c = conn();
    append_running(&c, 10, &[step("a"), step("b")]);
    append_running(&c, 20, &[step("c")]);
    let got: Vec<_> = list(&c, "j1", 0, 10)
        .unwrap()
        .into_iter()
        .map(|r| (r.seq, r.summary))
        .collect();
    assert_eq!(got, [(0, "a".into()), (1, "b".into()), (2, "c".into())]);
    let many: Vec<String> = (0..MAX_RECORDS + 10).map(|i| i.to_string()).collect();
    let batch: Vec<_> = many.iter().map(|s| step(s)).collect();
    let done = append_running(&c, 30, &batch);
    let info = of_job(&c, "j1").unwrap().unwrap();
    assert_eq!(info.records, MAX_RECORDS);
    assert!(info.truncated);
    assert_eq!(info.last_kind.as_deref(), Some("truncated"));
    assert_eq!(done.stored + 3 + 1, MAX_RECORDS);
    assert_eq!(done.dropped, MAX_RECORDS + 10 - done.stored);
    // Later batches add nothing, not even a second marker.
    append_running(&c, 40, &[step("late")]);
    assert_eq!(of_job(&c, "j1").unwrap().unwrap().records, MAX_RECORDS);
}

#[test]
fn live_spend_counts_running_jobs_until_they_finish() {
    let c = conn();
    let spend = |t, usd| {
        Then::Running(LiveSpend {
            tokens: t,
            cost_usd: usd,
        })
    };
    append(&c, "j1", "r1", 10, &[], spend(100, 0.5)).unwrap();
    append(&c, "j2", "r1", 10, &[], spend(50, 0.25)).unwrap();
    assert_eq!(live_root_spend(&c, "r1", "j2").unwrap().tokens, 100);
    assert_eq!(live_spend_by_root(&c).unwrap()[0].1.tokens, 150);
    finish(&c, "j1", "r1", 20, 7, 3).unwrap();
    assert_eq!(live_root_spend(&c, "r1", "").unwrap().tokens, 50);
    let j1 = of_job(&c, "j1").unwrap().unwrap();
    assert_eq!(
        (j1.cache_read_tokens, j1.cache_creation_tokens, j1.running),
        (7, 3, false)
    );
    // A last batch closes the row in the same statement.
    let last = Then::Finished {
        cache_read_tokens: 4,
        cache_creation_tokens: 1,
    };
    append(&c, "j2", "r1", 30, &[step("last")], last).unwrap();
    assert_eq!(live_root_spend(&c, "r1", "").unwrap().tokens, 0);
    let j2 = of_job(&c, "j2").unwrap().unwrap();
    assert_eq!(
        (j2.records, j2.last_summary.as_deref(), j2.running),
        (1, Some("last"), false)
    );
    assert_eq!((j2.cache_read_tokens, j2.cache_creation_tokens), (4, 1));
}
