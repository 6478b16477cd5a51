//! `gitmoot bench` through the binary, and the benchmarks that are run by hand
//! (`#[ignore]`d; `cargo test --release --test bench -- --ignored --nocapture`).

mod bench_cli;
mod chat_bench;
mod contract_bench;
mod daemon_bench;
mod engine_bench;
mod forecast_bench;
