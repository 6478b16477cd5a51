//! Prints `bench_daemon` figures; ignored by default (run with
//! `cargo test --release --test daemon_bench -- --ignored --nocapture`).

#[test]
#[ignore]
fn bench_daemon_prints_its_figures() {
    for (name, value) in gitmoot::bench::bench_daemon().unwrap_or_else(|f| vec![f.row()]) {
        println!("{name:<40} {value}");
    }
}
