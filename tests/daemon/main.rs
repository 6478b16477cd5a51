//! The daemon and the runtimes through the real binary: its lifecycle, the embedded daemon,
//! fleets on one store (SQLite and PostgreSQL), supervision of agents' processes, the
//! runtime adapters, the wall-clock bound, git inside a write job's grant, and the real Claude Code and Codex CLIs against
//! model stand-ins.

mod containment;
mod daemon_e2e;
mod daemon_embedded;
mod daemon_fleet;
mod daemon_lifecycle;
mod output_bounds;
mod pg_fleet;
mod pg_paused;
mod pg_recovery;
mod pg_soak;
mod real_cli;
mod runtime_adapters;
mod stalls;
mod stopping;
mod store_edges;
mod supervise;
mod walltime_e2e;
mod write_grant;
mod write_hosts;
mod write_jobs;
