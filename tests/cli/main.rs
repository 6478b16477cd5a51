//! The command line through the real binary on scratch homes: validation and exit codes,
//! the foundation verbs, operations, config, the contract and engine verbs, activity, chat
//! and its relay, concurrent writers, store copies, and the small edges (decoder messages,
//! status file modes, the PATH check of shell commands).

mod activity_cli;
mod chat_cli;
mod chat_concurrency;
mod chat_relay;
mod cli_validation;
mod closed_pipe;
mod completion_cli;
mod contract_cli;
mod dry_run_cli;
mod engine_cli;
mod fleet_cli;
mod forecast_cli;
mod foundation_cli;
mod land_guard_cli;
mod land_journal_cli;
mod ops_cli;
mod ops_config;
mod polish_cli;
mod search_cli;
mod seeds_engine_cli;
mod seeds_last_cli;
mod small_edges;
mod small_holes;
mod store_copy;
mod terminal_escapes;
mod usage_cli;
mod write_cli;
mod write_small_cli;
