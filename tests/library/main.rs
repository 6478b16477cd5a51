//! The library's suites, each a module: the engine's rules (scenarios, gates, invariants,
//! properties, the seeds' examples), chat against the engine, the result contract, and the
//! store (both backends, migrations, pages), plus the house's own layout (`architecture`)
//! and the seeds table (`seeds_table`: every test `tests/SEEDS.md` names exists).
//! They call the library on real stores; `on_postgres` runs the engine, gate and chat suites
//! again on a throwaway PostgreSQL cluster, the backend named by the harness each imports.

use gitmoot_test_support::engine::on_sqlite as engine_support;
use gitmoot_test_support::pg::on_sqlite as pg;

mod architecture;
mod chat_engine;
mod contract_checks;
mod contract_props;
mod contract_table;
mod engine_gates;
mod engine_invariants;
mod engine_prop;
mod engine_scenarios;
mod engine_seeds;
mod on_postgres;
mod seeds_table;
mod store_backends;
mod store_migrations;
mod store_pages;
mod store_scopes;
mod store_usage;
