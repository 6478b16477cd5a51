//! The engine's scenario and gate suites and chat against the engine again, on a throwaway
//! PostgreSQL cluster: the same files as the SQLite runs, with the harness and the store
//! this module imports, so the one test command runs those rules on both backends.

use gitmoot_test_support::engine::on_postgres as engine_support;
use gitmoot_test_support::pg::on_postgres as pg;

// Loading a suite's file a second time, under another backend, is the point of this module.

#[allow(clippy::duplicate_mod)]
#[path = "chat_engine.rs"]
mod chat_engine;
#[allow(clippy::duplicate_mod)]
#[path = "engine_gates.rs"]
mod engine_gates;
#[allow(clippy::duplicate_mod)]
#[path = "engine_scenarios.rs"]
mod engine_scenarios;
