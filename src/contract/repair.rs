//! The repair re-ask: the prompt sent once to an agent whose output failed the contract,
//! and the failure reason recorded when the repair fails too.
//!
//! Owns the wording only; deciding when to repair (`[orchestrate].max_repair_attempts`)
//! and sending the prompt belong to the daemon.

use super::ContractErrors;

/// How much of the previous output the repair prompt quotes back.
pub const REPAIR_OUTPUT_TRUNCATE_BYTES: usize = 12_000;

/// Renders the repair prompt: every error a bullet, the expected shape, then the previous
/// output (at most [`REPAIR_OUTPUT_TRUNCATE_BYTES`], cut on a character boundary).
pub fn repair_prompt(errors: &ContractErrors, previous_output: &str) -> String {
    let mut out = String::from(
        "Your previous response did not contain a valid gitmoot_result JSON object.\n\n\
         Validation errors (fix every line):\n",
    );
    for line in errors.lines().iter().flat_map(|e| e.lines()) {
        if !line.trim().is_empty() {
            out.push_str("- ");
            out.push_str(line.trim());
            out.push('\n');
        }
    }
    out.push_str("\nReturn only one JSON object, fixed as listed above, in this shape:\n\n");
    out.push_str(super::instructions::SHAPE);
    out.push('\n');
    out.push_str(super::instructions::FIELD_RULES);
    out.push_str("\nPrevious raw output:\n");
    let (kept, cut) = truncate(previous_output, REPAIR_OUTPUT_TRUNCATE_BYTES);
    out.push_str(kept);
    if cut {
        out.push_str("\n[truncated]");
    }
    out.push('\n');
    out
}

/// The job failure reason once the repair attempts are used up.
pub fn repair_failed_reason(errors: &ContractErrors) -> String {
    format!("repair output malformed: {errors}")
}

/// The longest prefix of at most `max` bytes that ends on a character boundary.
fn truncate(text: &str, max: usize) -> (&str, bool) {
    if text.len() <= max {
        return (text, false);
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (&text[..end], true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncation_respects_char_boundaries() {
        let text = "é".repeat(7_000); // 14,000 bytes, two per char
        let (kept, cut) = truncate(&text, 12_001);
        assert!(cut);
        assert_eq!(kept.len(), 12_000);
        assert_eq!(truncate("short", 12_000), ("short", false));
    }
}
