//! `gitmoot bench` through the real binary: the parse group's figures as JSON and as the
//! Markdown table. Asserts the shape only, never timings.

use assert_cmd::Command;

fn bench(args: &[&str]) -> String {
    let out = Command::cargo_bin("gitmoot")
        .unwrap()
        .arg("bench")
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn parse_figures_as_json() {
    let v: serde_json::Value =
        serde_json::from_str(&bench(&["--only", "parse", "--json"])).unwrap();
    let figures = v["figures"].as_array().unwrap();
    assert_eq!(figures.len(), 2, "{v}");
    for f in figures {
        assert_eq!(f["group"], "parse");
        assert!(
            f["figure"]
                .as_str()
                .unwrap()
                .starts_with("result parse, 1 MiB")
        );
        let value = f["value"].as_str().unwrap();
        assert!(
            value.ends_with("bytes)") && value.contains(" ms (mean of "),
            "{value}"
        );
        assert!(f["target"].is_string());
    }
}

#[test]
fn parse_figures_as_a_markdown_table() {
    let text = bench(&["--only", "parse"]);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "| figure | value | target |");
    assert_eq!(lines[1], "|---|---|---|");
    assert_eq!(lines.len(), 4, "{text}");
    assert!(
        lines[2..]
            .iter()
            .all(|l| l.starts_with("| result parse") && l.ends_with('|'))
    );
}

#[test]
fn an_unknown_group_is_a_usage_error() {
    let out = Command::cargo_bin("gitmoot")
        .unwrap()
        .args(["bench", "--only", "nope"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}
