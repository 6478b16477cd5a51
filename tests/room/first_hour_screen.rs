//! The control room's first hour (issue 29, items 1, 4, 5, 8, 9, 11 and 13) in a real
//! terminal: `gitmoot demo` in tmux at the sizes the issue names, keystrokes in, the
//! screen read back.

use gitmoot_test_support as support;

use std::time::Duration;

use support::tmux::Tmux;

const WAIT: Duration = Duration::from_secs(60);

/// `gitmoot demo` (instant agents) on a fresh home in a `size` pane, once its scene has
/// settled at the two human gates; the folder lives as long as the terminal.
fn demo(name: &str, size: (u16, u16)) -> (Tmux, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let cmd = format!(
        "sh -c '{} demo --home {} --speed 0; echo TUI-EXITED; sleep 30'",
        support::bin(),
        dir.path().join("h").display()
    );
    let t = Tmux::start_sized(name, &cmd, &[], size);
    t.wait_for("2 waiting", WAIT);
    (t, dir)
}

/// The first `cols` columns of each line (the left column of the panes).
fn left(screen: &str, cols: usize) -> String {
    screen
        .lines()
        .map(|l| l.chars().take(cols).collect::<String>() + "\n")
        .collect()
}

/// Types `text` as it is (no tmux key names).
fn type_text(t: &Tmux, text: &str) {
    t.keys(&["-l", text]);
}

/// Opens the drawer's Activity tab of the demo's `survey` leg (found with the tree's filter,
/// since the legs' order depends on which finished first).
fn survey_activity(t: &Tmux) {
    t.keys(&["2"]);
    type_text(t, "/survey");
    t.keys(&["Enter"]);
    t.wait_for("· 1 of", WAIT);
    t.keys(&["G"]);
    t.keys(&["Enter"]);
    t.wait_for("overview │ activity", WAIT);
    t.keys(&["l"]);
    t.wait_for("● following", WAIT);
}

#[test]
fn item_1_the_live_log_keeps_its_shape_and_is_searched_followed_and_wrapped_at_80x24() {
    let (t, _dir) = demo("hour-log", (80, 24));
    survey_activity(&t);
    let screen = t.screen();
    // The agent's JSON keeps its indentation: the step's time, its glyph column, then the
    // line's own two spaces.
    assert!(screen.contains("     \"gitmoot_result\": {"), "{screen}");
    t.keys(&["k"]);
    t.wait_for("‖ paused", WAIT);
    t.keys(&["G"]);
    t.wait_for("● following", WAIT);
    // `/` searches the log, not the tree behind it.
    type_text(&t, "/decision");
    t.keys(&["Enter"]);
    // The tree's own `/survey` count (`· 1 of 12`) is on screen already: wait for the
    // log's lines to go, not for a count.
    t.wait_gone("changes_made", WAIT);
    let screen = t.wait_for("· 1 of", WAIT);
    assert!(screen.contains("\"decision\""), "{screen}");
    assert!(
        screen.contains("survey · scout"),
        "the tree is not filtered: {screen}"
    );
    t.keys(&["w"]);
    t.wait_for("wrapped", WAIT);
}

#[test]
fn item_4_slash_matches_a_substring_counts_and_searches_the_focused_view_at_80x24() {
    let (t, _dir) = demo("hour-filter", (80, 24));
    t.keys(&["2"]);
    type_text(&t, "/soak");
    t.keys(&["Enter"]);
    let screen = t.wait_for("· 3 of", WAIT);
    let tree = left(&screen, 40);
    assert!(tree.contains("Soak-test"), "{screen}");
    assert!(!tree.contains("survey · scout"), "fuzzy no more: {screen}");
    t.keys(&["Escape"]);
    t.wait_gone("· 3 of", WAIT);
    // In Threads the open thread's messages are searched, and the thread stays listed.
    t.keys(&["4"]);
    t.wait_for("inboxes", WAIT);
    type_text(&t, "/limits");
    t.keys(&["Enter"]);
    let screen = t.wait_for("2 of 5 · Release", WAIT);
    assert!(screen.contains("limits"), "{screen}");
    assert!(!screen.contains("No messages."), "{screen}");
}

#[test]
fn item_5_at_60x16_attention_comes_first_then_the_tree() {
    let (t, _dir) = demo("hour-small", (60, 16));
    let screen = t.screen();
    assert!(screen.contains("1 Attention"), "{screen}");
    assert!(screen.contains("? ask"), "{screen}");
    assert!(screen.contains("2 Jobs"), "{screen}");
    t.keys(&["4"]);
    let screen = t.wait_for("4 Threads", WAIT);
    assert!(screen.contains("1 Attention"), "{screen}");
}

#[test]
fn item_8_threads_keep_their_marker_and_border_and_promote_names_its_agent_at_120x36() {
    let (t, _dir) = demo("hour-threads", (120, 36));
    t.keys(&["4"]);
    let screen = t.wait_for("inboxes", WAIT);
    assert!(screen.contains("──┤"), "{screen}");
    assert!(!screen.contains('┘'), "{screen}");
    // To the transcript and its first message, which mentions @scout alone.
    t.keys(&["l", "l", "g"]);
    t.wait_for("▌#1", WAIT);
    t.keys(&["p"]);
    let screen = t.wait_for("Promote to a job", WAIT);
    assert!(screen.contains("run by @scout"), "{screen}");
}

#[test]
fn item_9_at_140x40_titles_come_first() {
    let (t, _dir) = demo("hour-titles", (140, 40));
    let screen = t.screen();
    assert!(
        left(&screen, 70).contains("Plan the session-refresh rollout"),
        "{screen}"
    );
}

#[test]
fn item_11_the_help_goes_to_its_end_with_g_and_is_searched_at_80x24() {
    let (t, _dir) = demo("hour-help", (80, 24));
    t.keys(&["?"]);
    t.wait_for("╭ keys", WAIT);
    t.keys(&["G"]);
    let screen = t.wait_for("Cancel", WAIT);
    assert!(screen.contains("╭ keys"), "G keeps the help open: {screen}");
    t.keys(&["g"]);
    type_text(&t, "/wrap");
    t.keys(&["Enter"]);
    let screen = t.wait_for("· 1 of", WAIT);
    assert!(screen.contains("wrap long steps"), "{screen}");
    t.keys(&["Escape"]);
    t.wait_gone("· 1 of", WAIT);
    t.keys(&["Escape"]);
    t.wait_gone("╭ keys", WAIT);
}

#[test]
fn item_13_shift_letters_sort_and_the_drawer_shows_its_position_at_80x24() {
    let (t, _dir) = demo("hour-sort", (80, 24));
    t.keys(&["2", "S"]);
    t.wait_for(" roots · by state", WAIT);
    t.keys(&["S"]);
    t.wait_for("by state, reversed", WAIT);
    t.keys(&["A", "g", "Enter"]);
    // Once the drawer's overview has loaded.
    let screen = t.wait_for("── prompt", WAIT);
    let edge: String = screen.lines().filter_map(|l| l.chars().nth(79)).collect();
    assert!(edge.contains('█'), "{screen}");
}

/// Item 10 at 80×24: a fresh home's control room names the home it watches, tells a
/// newcomer to register an agent before suggesting a job, and says how to open a thread;
/// once an agent exists the tree suggests the job.
#[test]
fn item_10_a_fresh_home_names_itself_and_says_what_to_do_first_at_80x24() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("fresh");
    support::stdout(&home, &["init"]);
    let cmd = format!(
        "sh -c '{} --home {} tui; echo TUI-EXITED; sleep 30'",
        support::bin(),
        home.display()
    );
    let t = Tmux::start_sized("hour-fresh", &cmd, &[], (80, 24));
    // The hint wraps in the narrow pane; every part of it shows.
    let screen = t.wait_for("No agents yet: `:agent add", WAIT);
    assert!(screen.contains("--runtime claude`."), "{screen}");
    let header = screen.lines().next().unwrap_or_default();
    assert!(header.contains("fresh │ daemon embedded"), "{header}");
    assert!(!screen.contains(":job run"), "{screen}");
    t.keys(&["4"]);
    let screen = t.wait_for("No threads yet:", WAIT);
    assert!(screen.contains("OWNER/REPO`."), "{screen}");
    support::shell_agent(&home, "scout", "true", &[]);
    t.keys(&["2"]);
    let screen = t.wait_for("No jobs yet.", WAIT);
    assert!(screen.contains("starts one."), "{screen}");
    t.keys(&["C-c"]);
    t.wait_for("TUI-EXITED", WAIT);
}
