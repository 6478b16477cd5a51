//! README screenshots from a real demo home. `gitmoot demo --headless` seeds the scene and
//! runs it on the real engine and daemon to the first human gate; this test opens that home
//! through the control room's own loader (`tui::load::Loader`), drives `gitmoot_ui` with key
//! presses and renders each shot at 120×36 with the default dark theme.
//!
//! Ids, clock times and elapsed seconds differ on every run, so each frame is normalized
//! before it is compared: ids become same-width placeholders numbered in the order the panes
//! list them (`job-aaaaaaa1`), clock times and the seconds of elapsed times are masked, and
//! the clock stands a fixed while after the scene's last event. `screenshots/<name>.txt`
//! holds that normalized text and the test fails when today's differs;
//! `UPDATE_SCREENSHOTS=1 cargo test --test room screenshots` rewrites the `.txt` and `.svg` files
//! (the SVG is drawn from the normalized frame, so a rerun changes nothing) and `keys.md`.
//! A few facts are pinned as well: the gate's question and choices, the failed leg's name,
//! and the whole prompt in the detail drawer.

use gitmoot_test_support as support;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use gitmoot::config::Config;
use gitmoot::home::Home;
use gitmoot::store::Store;
use gitmoot::tui::load::Loader;
use gitmoot_ui::view::DaemonStatus;
use gitmoot_ui::{Action, Event, Keymap, Load, Snapshot, State, Theme, Write, render, update};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;

const W: u16 = 120;
const H: u16 = 36;

/// How long after the scene's last event the shots are taken. Everything in the scene
/// happened within seconds before it, so every age and every elapsed minute count reads
/// `4m` (the seconds are masked) for any run shorter than 55 s.
const LATER_MS: i64 = 4 * 60_000 + 5_000;

const SHOTS: [&str; 9] = [
    "attention",
    "tree",
    "dag",
    "threads",
    "detail",
    "help",
    "kill_dialog",
    "answer_form",
    "compose",
];

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("screenshots")
}

fn updating() -> bool {
    std::env::var("UPDATE_SCREENSHOTS").as_deref() == Ok("1")
}

fn ch(c: char) -> Event {
    let mods = if c.is_ascii_uppercase() {
        KeyModifiers::SHIFT
    } else {
        KeyModifiers::NONE
    };
    Event::Key(KeyEvent::new(KeyCode::Char(c), mods))
}

fn key(code: KeyCode) -> Event {
    Event::Key(KeyEvent::new(code, KeyModifiers::NONE))
}

fn chars(s: &str) -> Vec<Event> {
    s.chars().map(ch).collect()
}

/// The key presses that lead from a freshly opened control room to each shot.
fn keys(name: &str) -> Vec<Event> {
    match name {
        "attention" => Vec::new(),
        "tree" => chars("2j"),
        "dag" => chars("3jj"),
        "threads" => vec![ch('4'), ch('j'), key(KeyCode::Enter)],
        "detail" => vec![ch('2'), key(KeyCode::Enter)],
        "help" => chars("2?"),
        "kill_dialog" => chars("2K"),
        "answer_form" => vec![ch('a'), key(KeyCode::Down)],
        "compose" => {
            let mut k = vec![ch('4'), ch('j'), key(KeyCode::Enter), ch('r')];
            k.extend(chars("the plan is waiting on the rollout question, @rev"));
            k.push(key(KeyCode::Tab));
            k
        }
        other => panic!("no keys for shot {other}"),
    }
}

/// A home at the scene's first human gate, made by the real binary.
fn demo_home(root: &Path) -> Home {
    // Slots for every job the scene can have ready at once: the daemon then claims the two
    // soak legs in one transaction, so the kill always finds both running.
    let home = support::configured_home(root, "demo", "[daemon]\nparallel = 8\ntick = \"250ms\"\n");
    let out = support::gitmoot(&home)
        .args(["demo", "--headless", "--speed", "0"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    Home::resolve(Some(&home)).unwrap()
}

/// The control room on a home, as `gitmoot tui` builds it, with a clock that stands still.
struct Room {
    loader: Loader,
    state: State,
    snap: Snapshot,
    now: i64,
}

impl Room {
    fn open(home: &Home, now: i64) -> Room {
        let config = Config::load(&home.config_path()).unwrap();
        // Opened on a home whose daemon has stopped, `gitmoot tui` embeds its own.
        let mut loader = Loader::new(Store::open_home(home).unwrap(), DaemonStatus::Embedded);
        loader.configure(&config);
        let snap = loader.load(now).unwrap();
        let mut room = Room {
            loader,
            state: State::new(Keymap::builtin(), false, now),
            snap,
            now,
        };
        room.send(vec![Event::Resize(W, H), Event::SnapshotArrived]);
        room
    }

    /// Feeds events through `update` and performs the loads they ask for, as the event
    /// loop does; a shot that would write anything is a mistake in its keys. Looking at a
    /// thread reports it read, which is left undone so every shot starts from the home
    /// the demo left.
    fn send(&mut self, events: Vec<Event>) {
        for ev in events {
            let mut actions = update(&mut self.state, &self.snap, ev);
            while !actions.is_empty() {
                for action in std::mem::take(&mut actions) {
                    match action {
                        Action::Load(Load::Detail(id)) => self.loader.detail_job = Some(id),
                        Action::Load(Load::Thread(id)) => self.loader.thread = Some(id),
                        Action::Write(Write::MarkSeen { .. }) => continue,
                        other => panic!("a screenshot's keys asked for {other:?}"),
                    }
                    self.snap = self.loader.load(self.now).unwrap();
                    actions.extend(update(&mut self.state, &self.snap, Event::SnapshotArrived));
                }
            }
        }
    }

    fn frame(&self) -> Buffer {
        let mut t = Terminal::new(TestBackend::new(W, H)).unwrap();
        t.draw(|f| render(f, &self.state, &self.snap, &Theme::default_dark()))
            .unwrap();
        t.backend().buffer().clone()
    }
}

/// A cell that is not one plain character (the tail of a wide glyph): never part of a token.
const OPAQUE: char = '\u{fffe}';

/// The shortest id fragment (an id whose start a dialog covers) that is rewritten: shorter
/// runs could be ordinary words, and a layout that shows one makes the test fail at once.
const FRAGMENT: usize = 4;

/// Rewrites the run-dependent parts of frames, keeping every cell's style and position.
struct Normalizer {
    /// Each id of the home, the length of its kind prefix (`job-`, `chat-`) and its
    /// placeholder, as wide as the id.
    ids: Vec<(Vec<char>, usize, Vec<char>)>,
}

impl Normalizer {
    /// Placeholders are numbered in the order the panes list the ids (roots newest first,
    /// threads by latest activity), which the scene fixes: `job-aaaaaaa1`, `job-aaaaaaa2`, ….
    fn new(snap: &Snapshot, state: &State) -> Self {
        let mut ids = Vec::new();
        let mut add = |prefix: &str, list: Vec<&str>| {
            for (n, id) in list.into_iter().enumerate() {
                let n = (n + 1).to_string();
                let fill = id.len() - prefix.len() - n.len();
                let placeholder = format!("{prefix}{}{n}", "a".repeat(fill));
                ids.push((
                    id.chars().collect(),
                    prefix.len(),
                    placeholder.chars().collect(),
                ));
            }
        };
        add(
            "job-",
            snap.roots_newest_first()
                .iter()
                .map(|r| r.id.as_str())
                .collect(),
        );
        add(
            "chat-",
            gitmoot_ui::rows::thread_rows(snap, state)
                .iter()
                .map(|t| t.id.as_str())
                .collect(),
        );
        Normalizer { ids }
    }

    fn frame(&self, buf: &mut Buffer) {
        for y in 0..buf.area.height {
            let mut row: Vec<char> = (0..buf.area.width)
                .map(|x| {
                    let mut s = buf[(x, y)].symbol().chars();
                    match (s.next(), s.next()) {
                        (Some(c), None) => c,
                        _ => OPAQUE,
                    }
                })
                .collect();
            let before = row.clone();
            self.ids_in(&mut row);
            mask_times(&mut row);
            for (x, (new, old)) in row.iter().zip(&before).enumerate() {
                if new != old {
                    buf[(x as u16, y)].set_char(*new);
                }
            }
        }
    }

    /// An id of the run that normalizing left in `text`, if any.
    fn leaked(&self, text: &str) -> Option<String> {
        self.ids
            .iter()
            .map(|(id, _, _)| id.iter().collect::<String>())
            .find(|id| text.contains(id.as_str()))
    }

    /// Ids whole, cut short (by an ellipsis or a pane's edge) or with their start hidden
    /// under a dialog; each visible part becomes the same part of the placeholder.
    fn ids_in(&self, row: &mut [char]) {
        let word = |row: &[char], i: usize| row.get(i).is_some_and(|c| c.is_ascii_alphanumeric());
        let mut i = 0;
        while i < row.len() {
            if word(row, i.wrapping_sub(1)) || !word(row, i) {
                i += 1;
                continue;
            }
            let head = self.ids.iter().find_map(|(id, prefix, placeholder)| {
                let shown = id.iter().zip(&row[i..]).take_while(|(a, b)| a == b).count();
                (shown > *prefix && !word(row, i + shown)).then(|| placeholder[..shown].to_vec())
            });
            let run = row[i..]
                .iter()
                .take_while(|c| c.is_ascii_alphanumeric())
                .count();
            let tail = || {
                self.ids.iter().find_map(|(id, prefix, placeholder)| {
                    (run >= FRAGMENT && run <= id.len() - *prefix && id.ends_with(&row[i..i + run]))
                        .then(|| placeholder[placeholder.len() - run..].to_vec())
                })
            };
            match head.or_else(tail) {
                Some(text) => {
                    row[i..i + text.len()].copy_from_slice(&text);
                    i += text.len();
                }
                None => i += run,
            }
        }
    }
}

/// Clock times become `hh:mm:ss` / `hh:mm`; elapsed times keep their minutes and lose
/// their seconds (`4m31s` → `4m00s`, `2s` → `0s`, right-aligned in the token's width).
/// Ages (`4m`, `2h`) stay: the shots are taken mid-minute, so they do not move.
fn mask_times(row: &mut [char]) {
    let digit = |row: &[char], i: usize| row.get(i).is_some_and(|c| c.is_ascii_digit());
    let word = |row: &[char], i: usize| row.get(i).is_some_and(|c| c.is_ascii_alphanumeric());
    let mut i = 0;
    while i < row.len() {
        if !digit(row, i) || (i > 0 && (word(row, i - 1) || row[i - 1] == ':')) {
            i += 1;
            continue;
        }
        let mut j = i;
        while digit(row, j) {
            j += 1;
        }
        let clock = |n: usize| {
            (0..n).all(|k| {
                let at = j + k * 3;
                row.get(at) == Some(&':') && digit(row, at + 1) && digit(row, at + 2)
            }) && !(row.get(j + n * 3) == Some(&':') || word(row, j + n * 3))
        };
        let (end, masked): (usize, Vec<char>) = if j - i == 2 && clock(2) {
            (j + 6, "hh:mm:ss".chars().collect())
        } else if j - i == 2 && clock(1) {
            (j + 3, "hh:mm".chars().collect())
        } else if row.get(j) == Some(&'s') && !word(row, j + 1) {
            let mut m = vec![' '; j + 1 - i];
            let n = m.len();
            m[n - 2] = '0';
            m[n - 1] = 's';
            (j + 1, m)
        } else if row.get(j) == Some(&'m')
            && digit(row, j + 1)
            && digit(row, j + 2)
            && row.get(j + 3) == Some(&'s')
            && !word(row, j + 4)
        {
            let mut m: Vec<char> = row[i..j + 4].to_vec();
            let n = m.len();
            m[n - 3] = '0';
            m[n - 2] = '0';
            (j + 4, m)
        } else {
            i = j;
            continue;
        };
        row[i..end].copy_from_slice(&masked);
        i = end;
    }
}

fn text(buf: &Buffer) -> String {
    let mut out = String::new();
    for y in 0..buf.area.height {
        let line: String = (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect();
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// The scene's last event: the shots' clock is this plus `LATER_MS`.
fn last_event_ms(home: &Home) -> i64 {
    Store::open_home(home)
        .unwrap()
        .conn()
        .one("SELECT MAX(ts_ms) FROM events", &[])
        .unwrap()
}

/// The text inside the pane whose title starts with `title`, its lines joined by spaces:
/// what a reader of that pane sees, however it wrapped.
fn pane(buf: &Buffer, title: &str) -> String {
    let cell = |x: u16, y: u16| buf[(x, y)].symbol();
    let width = buf.area.width;
    let (x0, y0) = (0..buf.area.height)
        .flat_map(|y| (0..width).map(move |x| (x, y)))
        .find(|&(x, y)| {
            let rest: String = (x..width).map(|x| cell(x, y)).collect();
            rest.starts_with(title)
        })
        .unwrap_or_else(|| panic!("no pane titled {title}"));
    let left = (0..x0)
        .rev()
        .find(|&x| ["┏", "╭"].contains(&cell(x, y0)))
        .unwrap();
    let right = (x0..width)
        .find(|&x| ["┓", "╮"].contains(&cell(x, y0)))
        .unwrap();
    let lines: Vec<String> = (y0 + 1..buf.area.height)
        .take_while(|&y| !["┗", "╰"].contains(&cell(left, y)))
        .map(|y| (left + 1..right).map(|x| cell(x, y)).collect())
        .collect();
    lines
        .join(" ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn screenshots_match_the_committed_files() {
    let tmp = tempfile::tempdir().unwrap();
    let home = demo_home(tmp.path());
    let now = last_event_ms(&home) + LATER_MS;
    let first = Room::open(&home, now);
    let norm = Normalizer::new(&first.snap, &first.state);
    let mut shots = HashMap::new();
    let mut stale = Vec::new();
    for name in SHOTS {
        let mut room = Room::open(&home, now);
        room.send(keys(name));
        let mut buf = room.frame();
        norm.frame(&mut buf);
        let txt = text(&buf);
        if let Some(id) = norm.leaked(&txt) {
            panic!("{name} still shows the run's id {id}:\n{txt}");
        }
        let txt_path = dir().join(format!("{name}.txt"));
        if updating() {
            std::fs::write(&txt_path, &txt).unwrap();
            std::fs::write(
                dir().join(format!("{name}.svg")),
                gitmoot_ui::svg::buffer_to_svg(&buf),
            )
            .unwrap();
        } else if std::fs::read_to_string(&txt_path).unwrap_or_default() != txt {
            stale.push(name);
        }
        shots.insert(name, (txt, buf));
    }
    let question = "How should the sessions migration roll out?";
    let (attention, _) = &shots["attention"];
    assert!(attention.contains(question), "{attention}");
    assert!(attention.contains("leg integration failed"), "{attention}");
    let (answer, _) = &shots["answer_form"];
    for part in [question, "○ online, batched", "● maintenance window"] {
        assert!(answer.contains(part), "{part:?} not in\n{answer}");
    }
    let (_, detail) = &shots["detail"];
    let shown = pane(detail, "5 Detail");
    assert!(
        shown.contains(&format!(
            "── prompt {} ── result",
            gitmoot::demo::scene::MAIN_GOAL
        )),
        "the detail drawer cuts the prompt short: {shown}"
    );
    let (threads, _) = &shots["threads"];
    assert!(threads.contains("@reviewer you had notes"), "{threads}");
    assert!(
        stale.is_empty(),
        "stale screenshots {stale:?}: run UPDATE_SCREENSHOTS=1 cargo test --test room screenshots"
    );
}

/// `screenshots/keys.md` is the README's keys table, generated from the built-in keymap.
#[test]
fn keys_table_matches_the_keymap() {
    let path = dir().join("keys.md");
    let md = gitmoot_ui::keys_markdown();
    if updating() {
        std::fs::write(&path, &md).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert_eq!(
        committed, md,
        "stale keys table: run UPDATE_SCREENSHOTS=1 cargo test --test room screenshots"
    );
}

/// README shows two shots inline (not only linked), and every shot it names is one this
/// test renders from the real demo home, so none can go stale unnoticed.
#[test]
fn readme_shows_rendered_shots_inline() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let inline: Vec<&str> = readme
        .lines()
        .filter_map(|l| l.strip_prefix("!["))
        .filter_map(|l| l.split_once("](screenshots/"))
        .filter_map(|(_, rest)| rest.strip_suffix(".svg)"))
        .collect();
    assert!(inline.len() >= 2, "inline shots: {inline:?}");
    for shot in readme
        .split("(screenshots/")
        .skip(1)
        .filter_map(|rest| rest.split_once(".svg)"))
        .map(|(name, _)| name)
    {
        assert!(
            SHOTS.contains(&shot),
            "README names {shot}.svg, which no test renders"
        );
    }
}
