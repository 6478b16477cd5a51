//! The result-parser benchmark, run on demand (not a timed test):
//! `cargo test --release --test contract_bench -- --ignored --nocapture`.

#[test]
#[ignore = "benchmark: run in release with --ignored --nocapture"]
fn parse_one_mebibyte_with_ten_thousand_braces() {
    for (name, value) in gitmoot::bench::bench_parse() {
        println!("{name}: {value}");
        assert!(!value.starts_with("failed"), "{name}: {value}");
    }
}

#[test]
fn bench_fixtures_are_the_advertised_size_and_parse() {
    let text = gitmoot::bench::parse::realistic_output();
    assert!(text.len() <= gitmoot::bench::parse::BENCH_BYTES);
    assert!(text.len() > gitmoot::bench::parse::BENCH_BYTES - 1_000);
    assert_eq!(
        text.matches('{').count(),
        gitmoot::bench::parse::BENCH_BRACES + 4,
        "decoys plus the result's own four"
    );
    assert!(gitmoot::contract::parse(&text).is_ok());
    assert!(gitmoot::contract::parse(&gitmoot::bench::parse::unbalanced_output()).is_ok());
}
