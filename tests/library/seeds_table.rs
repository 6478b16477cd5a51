//! `tests/SEEDS.md`, the map from each seed section to the tests that show it, stays true:
//! every `group/file::test` it names is a test function in that file, so a renamed or
//! removed test cannot leave the table pointing at nothing.

use std::path::Path;

#[test]
fn every_test_the_seeds_table_names_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let table = std::fs::read_to_string(root.join("SEEDS.md")).unwrap();
    let mut named = 0;
    let mut missing = Vec::new();
    for cell in table.split('`') {
        let Some((file, test)) = cell.split_once("::") else {
            continue;
        };
        let group = file.split('/').next().unwrap_or_default();
        if !["library", "cli", "daemon", "room"].contains(&group)
            || test.contains(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        {
            continue;
        }
        named += 1;
        let source = std::fs::read_to_string(root.join(format!("{file}.rs"))).unwrap_or_default();
        if !source.contains(&format!("fn {test}(")) {
            missing.push(cell.to_string());
        }
    }
    assert!(named > 100, "the table names only {named} tests");
    assert!(
        missing.is_empty(),
        "SEEDS.md names tests that do not exist: {missing:?}"
    );
}
