//! `engine_gates.rs` again, on a throwaway PostgreSQL cluster: the harness
//! (`engine_support::pg::test_store`) picks PostgreSQL for a test binary whose name ends
//! in `_on_postgres`, so README's one test command runs the engine's rules on both
//! backends. (`GITMOOT_TEST_STORE=postgres` runs any harness-based suite there.)

#[path = "engine_gates.rs"]
mod gates;
