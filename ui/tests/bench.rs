//! Frame and update cost on a large snapshot (100,000 jobs in 5,000 roots). `#[ignore]`d:
//! run `cargo test -p gitmoot-ui --release --test bench -- --ignored --nocapture` to print
//! the figures; the integrator's `gitmoot bench` adds the store side.

use crate::common;

use std::time::Instant;

use common::fixture::{NOW, large};
use gitmoot_ui::{Event, Keymap, State, Theme, render, update};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

#[test]
#[ignore]
fn large_snapshot_frame_and_update_cost() {
    let snap = large(5_000, 20);
    let jobs: usize = snap.roots.iter().map(|r| 1 + r.tree.children.len()).sum();
    let mut state = State::new(Keymap::builtin(), false, NOW);
    let t0 = Instant::now();
    update(&mut state, &snap, Event::SnapshotArrived);
    let arrive = t0.elapsed();
    let mut term = Terminal::new(TestBackend::new(120, 36)).unwrap();
    let theme = Theme::default_dark();
    let t1 = Instant::now();
    term.draw(|f| render(f, &state, &snap, &theme)).unwrap();
    let first = t1.elapsed();
    let t2 = Instant::now();
    let n = 20;
    for _ in 0..n {
        update(&mut state, &snap, common::ch('j'));
        term.draw(|f| render(f, &state, &snap, &theme)).unwrap();
    }
    let per_key = t2.elapsed() / n;
    println!("jobs={jobs} snapshot_arrived={arrive:?} first_frame={first:?} key+frame={per_key:?}");
}
