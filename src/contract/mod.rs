//! The agent result contract: find, decode, validate and repair `gitmoot_result`.
//!
//! Pure code over text: no store, no processes.
