//! The settle benchmark: `cargo test --release --test engine_bench -- --ignored --nocapture`
//! prints the figures `gitmoot bench` reports.

#[test]
#[ignore = "benchmark; run in release with --ignored --nocapture"]
fn bench_settle_prints_figures() {
    let figures = gitmoot::bench::bench_settle().unwrap_or_else(|f| vec![f.row()]);
    for (k, v) in &figures {
        println!("{k}: {v}");
    }
    let get = |k: &str| {
        figures
            .iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.clone())
            .unwrap()
    };
    assert_eq!(get("settle_tree_jobs"), "64");
    assert!(get("settle_one_job_median_ms").parse::<f64>().is_ok());
}

#[test]
fn bench_settle_measures_a_tree_of_64() {
    let figures = gitmoot::bench::bench_settle().unwrap_or_else(|f| vec![f.row()]);
    assert!(
        figures
            .iter()
            .any(|(k, v)| k == "settle_tree_jobs" && v == "64"),
        "{figures:?}"
    );
    assert!(
        figures
            .iter()
            .any(|(k, v)| k == "settle_samples" && v.parse::<u32>().unwrap() > 50),
        "{figures:?}"
    );
}
