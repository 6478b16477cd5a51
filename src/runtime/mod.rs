//! Runtime adapters (claude, codex, kimi, shell): turn a job into a child process and its
//! output into raw text plus token usage.
