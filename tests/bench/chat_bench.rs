//! Prints the chat benchmark figures (`cargo test --release --test chat_bench -- --ignored
//! --nocapture`); ignored by default because it writes 200,000 messages.

#[test]
#[ignore]
fn chat_bench_figures() {
    let rows = gitmoot::bench::bench_chat().expect("the chat bench measures");
    for (k, v) in &rows {
        println!("{k:<40} {v}");
    }
    assert!(rows.iter().all(|(k, _)| k != "error"), "{rows:?}");
}
