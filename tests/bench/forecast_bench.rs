//! `gitmoot bench --only forecast` through the real binary: the forecasts of 8 open write
//! jobs of a generated 3,000-file repository, with the bare `git merge-tree` and `git status`
//! anchors and the ratios. Asserts the shape and what was forecast, never timings.

use assert_cmd::Command;

#[test]
fn the_forecast_group_forecasts_every_pair_and_finds_the_one_conflict_beside_its_anchor() {
    let out = Command::cargo_bin("gitmoot")
        .unwrap()
        .args(["bench", "--only", "forecast", "--json"])
        .assert()
        .success();
    let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let value = |n: &str| {
        v["figures"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["figure"] == n)
            .unwrap_or_else(|| panic!("{n} missing: {v}"))["value"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let jobs = value("forecast.8_jobs_ms");
    assert!(
        jobs.contains("28 pairs, 28 forecast, 1 conflicting"),
        "{jobs}"
    );
    assert!(value("forecast.anchor.bare_merge_tree_ms").contains("28 bare"));
    assert!(value("forecast.anchor.bare_status_ms").contains("8 bare"));
    for r in [
        "forecast.ratio_to_bare",
        "forecast.ratio_to_bare_with_status",
    ] {
        let ratio: f64 = value(r).parse().unwrap();
        assert!(ratio > 0.0, "{r}: {ratio}");
    }
}
