//! The control room on a damaged store: each kind of damage the daemon and `job list` skip
//! or quarantine (bad result JSON, an unknown job or run state, text in an integer column of
//! either table) leaves its tree in the room as a marked, selectable `unreadable` row naming
//! the job and the column, and every other tree loads.

use gitmoot_test_support as support;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use gitmoot::home::Home;
use gitmoot::store::Store;
use gitmoot::tui::load::Loader;
use gitmoot_ui::view::{DaemonStatus, JobNode};
use gitmoot_ui::{Action, Event, Keymap, Load, Snapshot, State, Theme, render, update};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

/// Each damage: the table, the column, the value written over it.
const DAMAGE: [(&str, &str, &str); 5] = [
    ("jobs", "result", r#"{"decision": "approved", "summ"#),
    ("jobs", "state", "sleeping"),
    ("runs", "state", "sleeping"),
    ("jobs", "attempt", "twice"),
    ("runs", "tokens", "lots"),
];

fn root_of<'a>(snap: &'a Snapshot, id: &str) -> &'a JobNode {
    &snap
        .roots
        .iter()
        .find(|r| r.id == id)
        .unwrap_or_else(|| panic!("tree {id} is not in the room: {:?}", snap.roots))
        .tree
}

fn screen(state: &State, snap: &Snapshot) -> String {
    let mut t = Terminal::new(TestBackend::new(160, 40)).unwrap();
    t.draw(|f| render(f, state, snap, &Theme::default_dark()))
        .unwrap();
    let buf = t.backend().buffer().clone();
    (0..buf.area.height)
        .map(|y| {
            (0..buf.area.width)
                .map(|x| buf[(x, y)].symbol().to_string())
                .collect::<String>()
                + "\n"
        })
        .collect()
}

#[test]
fn a_damaged_row_is_a_marked_selectable_row_and_every_other_tree_loads() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("h");
    support::shell_agent(
        &home,
        "ok",
        r#"cat >/dev/null; echo '{"gitmoot_result": {"decision": "approved", "summary": "fine"}}'"#,
        &[],
    );
    let roots: Vec<String> = (0..=DAMAGE.len())
        .map(|i| support::stdout(&home, &["job", "run", "--agent", "ok", &format!("r{i}")]))
        .map(|id| id.trim().to_string())
        .collect();
    support::stdout(&home, &["daemon", "run", "--until-idle"]);
    let db = rusqlite::Connection::open(home.join("gitmoot.db")).unwrap();
    for ((table, column, value), root) in DAMAGE.iter().zip(&roots) {
        let key = if *table == "jobs" { "id" } else { "root_id" };
        let n = db
            .execute(
                &format!("UPDATE {table} SET {column} = ?1 WHERE {key} = ?2"),
                rusqlite::params![value, root],
            )
            .unwrap();
        assert_eq!(n, 1, "{table}.{column} of {root}");
    }
    drop(db);

    let home = Home::resolve(Some(&home)).unwrap();
    let mut loader = Loader::new(Store::open_home(&home).unwrap(), DaemonStatus::Embedded);
    let now = gitmoot::clock::now_ms();
    let mut snap = loader.load(now).expect("the room loads a damaged store");
    assert_eq!(snap.roots.len(), roots.len(), "{:?}", snap.roots);
    let healthy = root_of(&snap, roots.last().unwrap());
    assert_eq!(healthy.unreadable, None);
    assert_eq!(healthy.summary.as_deref(), Some("fine"));
    for ((table, column, _), root) in DAMAGE.iter().zip(&roots) {
        let node = root_of(&snap, root);
        assert_eq!(
            node.unreadable.as_deref(),
            Some(format!("{table}.{column}").as_str()),
            "{root}"
        );
    }

    let mut state = State::new(Keymap::builtin(), false, now);
    let mut events = vec![Event::Resize(160, 40), Event::SnapshotArrived];
    let mut seen = Vec::new();
    for _ in 0..roots.len() {
        for ev in events.drain(..) {
            for action in update(&mut state, &snap, ev) {
                // Opening a damaged row's drawer is a load like any other, and it must hold.
                if let Action::Load(Load::Detail(id)) = action {
                    loader.detail_job = Some(id);
                    snap = loader.load(now).expect("the drawer of a damaged row loads");
                }
            }
        }
        seen.extend(state.sel.tree.clone());
        events.push(Event::Key(KeyEvent::new(KeyCode::Down, KeyModifiers::NONE)));
    }
    // The drawer of each damaged job, asked for directly, keeps the room loading too.
    for root in &roots {
        loader.detail_job = Some(root.clone());
        snap = loader.load(now).expect("the drawer of a damaged row loads");
    }
    let text = screen(&state, &snap);
    for ((table, column, _), root) in DAMAGE.iter().zip(&roots) {
        assert!(
            text.contains(&format!("{root}  unreadable: {table}.{column}")),
            "{root} {table}.{column}:\n{text}"
        );
        assert!(seen.contains(root), "{root} is selectable: {seen:?}");
    }
}
