//! What each `gitmoot bench` figure is judged against: its target, and which figures are
//! held as a ratio to an anchor measured in the same run.
//!
//! Owns the table only; measuring is the groups' and printing is `mod.rs`'s.

/// The target a figure is judged against: the SPEC §11 floor, or issue 19's goal where
/// it is stricter.
pub(super) fn target(figure: &str) -> &'static str {
    match figure {
        "tui.first_frame_ms" => "<= 15 ms",
        "tui.refresh_store_ms" => "< 5 ms",
        "tui.refresh_with_render_ms" => "<= 10x bare frame",
        "tui.idle.cpu_percent" => "< 1 % (near zero)",
        "diff.open_ms" => "< 100 ms",
        "daemon.overhead_per_job_ms" => "<= 1x sh -c true spawn",
        "daemon.parallel4.jobs_per_s" => ">= 1,500/s",
        "daemon.parallel4.cpu_ms_per_job" => "<= 1.2x bare sh -c true spawn CPU",
        "chat.send.per_second" => ">= 0.3x raw WAL insert",
        "chat.inbox.unread_counts_median_us" => "< 1,000 us",
        "activity.records_lost" => "0",
        "activity.overhead_percent" => "< 10 %",
        "output.peak_rss_above_idle_mb" => "< 64 MB",
        "output.largest_record_mib" => "<= 4 MiB",
        "fleet.postgres.chat_sends_per_s" => "gap-free seq under concurrent hosts",
        "fleet.postgres.4_daemons.jobs_per_s" => ">= 1x 1 daemon",
        "fleet_live.records_lost" => "0",
        "fleet_live.room_cpu_percent" => "<= 3 % at 100 agents",
        "fleet_live.daemon_cpu_per_record_us" => "<= 30 us",
        "fleet_live.key_to_screen_max_ms" => "<= 30 ms at 100 agents",
        "worktree.job_diff_ms" => "<= 1.3x bare git diff + ls-files",
        "worktree.list_ms" => "<= 1.3x bare git diff + ls-files x8",
        "worktree.room_first_read_ms" => "no git",
        "worktree.room_reread_one_ms" => "one job's worktree (its files and its loss)",
        _ => "",
    }
}

/// Which figures are judged as a ratio to which anchor of the same run: (figure, anchor,
/// target, whether the ratio must stay at most the bound).
pub(super) const RATIOS: [(&str, &str, &str, f64, bool); 8] = [
    (
        "daemon.parallel4.cpu_ms_per_job",
        "daemon.bare_spawn_cpu_ms",
        "<= 1.2",
        1.2,
        true,
    ),
    (
        "daemon.overhead_per_job_ms",
        "daemon.sh_true_spawn_ms",
        "<= 1.0",
        1.0,
        true,
    ),
    (
        "chat.send.per_second",
        "chat.anchor.raw_wal_insert_per_second",
        ">= 0.3",
        0.3,
        false,
    ),
    (
        "tui.refresh_with_render_ms",
        "tui.anchor.bare_frame_ms",
        "<= 10",
        10.0,
        true,
    ),
    (
        "worktree.job_diff_ms",
        "worktree.anchor.git_diff_one_ms",
        "<= 1.3",
        1.3,
        true,
    ),
    (
        "worktree.list_ms",
        "worktree.anchor.git_diff_all_ms",
        "<= 1.3",
        1.3,
        true,
    ),
    (
        "worktree.room_reread_one_ms",
        "worktree.anchor.git_diff_one_ms",
        "<= 3",
        3.0,
        true,
    ),
    // Four daemons on one PostgreSQL store must not finish fewer jobs than one.
    (
        "fleet.postgres.4_daemons.jobs_per_s",
        "fleet.postgres.1_daemons.jobs_per_s",
        ">= 1.0",
        1.0,
        false,
    ),
];
