//! The control room glue: terminal setup and restore, the event loop, loading view models
//! from the store and executing the ui crate's actions through the same functions as the CLI.
