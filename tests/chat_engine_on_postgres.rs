//! `chat_engine.rs` again, on a throwaway PostgreSQL cluster: its fixture
//! (`support/pg.rs`'s `test_store`) picks PostgreSQL for a test binary whose name ends in
//! `_on_postgres`, so README's one test command runs the chat rules on both backends.

#[path = "chat_engine.rs"]
mod chat_engine;
