//! A chat post's Markdown in the Threads pane at 80×24 and 120×36: no heading, fence or
//! table markers on screen, the fence's language shown as a label, and every wrapped line
//! of a quote keeping its `▏` bar.

use crate::common::fixture::{self, NOW};
use crate::common::*;
use crossterm::event::KeyCode;
use gitmoot_ui::{Event, Keymap, State, Theme, render, update};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

const POST: &str = "## Rollout plan\n\n\
> the staging soak found nothing new, so the canary goes first and the rest follows \
within the hour if its error rate holds\n\n\
```toml\nlimit = 600\n```\n\n\
| stage | share |\n|---|---|\n| canary | 5% |";

fn transcript_at(w: u16, h: u16) -> String {
    let mut snap = fixture::snapshot();
    let t = snap.transcript.as_mut().expect("the fixture's transcript");
    t.messages.truncate(1);
    t.messages[0].body = POST.to_string();
    let mut s = State::new(Keymap::builtin(), false, NOW);
    update(&mut s, &snap, Event::Resize(w, h));
    update(&mut s, &snap, Event::SnapshotArrived);
    update(&mut s, &snap, ch('4'));
    update(&mut s, &snap, key(KeyCode::Enter));
    let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
    term.draw(|f| render(f, &s, &snap, &Theme::default_dark()))
        .unwrap();
    buffer_text(term.backend().buffer())
}

#[test]
fn a_post_reads_as_markdown_at_every_size() {
    for (w, h) in [(80, 24), (120, 36)] {
        let screen = transcript_at(w, h);
        assert!(screen.contains("Rollout plan"), "{screen}");
        for raw in ["## ", "```", "|---"] {
            assert!(!screen.contains(raw), "{raw} at {w}×{h}:\n{screen}");
        }
        assert!(screen.contains("── toml"), "{screen}");
        assert!(screen.contains("limit = 600"), "{screen}");
        assert!(screen.contains("canary │ 5%"), "{screen}");
        // The quote wraps over several lines, each with its bar.
        let quoted: Vec<&str> = screen.lines().filter(|l| l.contains("▏ ")).collect();
        assert!(quoted.len() >= 3, "{w}×{h}:\n{screen}");
        // The blank line before the quote is outside it.
        let blank = |l: &&str| {
            l.split_once('▏')
                .is_some_and(|(_, rest)| rest.trim().trim_end_matches('┃').trim().is_empty())
        };
        assert!(!quoted.iter().any(blank), "{screen}");
        assert!(
            screen.contains("holds") && quoted.iter().any(|l| l.contains("holds")),
            "the quote's last words keep the bar:\n{screen}"
        );
    }
}
