//! The per-model price table behind the USD budget, also used by the daemon to price
//! usage a runtime reports without a cost.
//!
//! Owns list prices only; budgets are checked in `dispatch`.

/// USD per million tokens (input, output), matched by case-insensitive substring in order.
const PRICES: [(&str, f64, f64); 3] = [
    ("opus", 15.0, 75.0),
    ("sonnet", 3.0, 15.0),
    ("haiku", 0.25, 1.25),
];

/// The mid tier: unknown or empty models are priced so they are never free.
const DEFAULT_PRICE: (f64, f64) = (3.0, 15.0);

/// What `tokens_in`/`tokens_out` cost on `model`.
pub fn price_usd(model: Option<&str>, tokens_in: u64, tokens_out: u64) -> f64 {
    let name = model.unwrap_or("").to_ascii_lowercase();
    let (pin, pout) = PRICES
        .iter()
        .find(|(needle, _, _)| name.contains(needle))
        .map(|&(_, i, o)| (i, o))
        .unwrap_or(DEFAULT_PRICE);
    (tokens_in as f64 * pin + tokens_out as f64 * pout) / 1_000_000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiers_match_by_substring_and_unknown_is_sonnet() {
        assert_eq!(price_usd(Some("claude-opus-4"), 1_000_000, 0), 15.0);
        assert_eq!(price_usd(Some("Claude-3-5-SONNET"), 0, 1_000_000), 15.0);
        assert_eq!(price_usd(Some("haiku"), 1_000_000, 1_000_000), 1.5);
        assert_eq!(price_usd(Some("gpt-5-codex"), 1_000_000, 0), 3.0);
        assert_eq!(price_usd(None, 0, 0), 0.0);
        assert_eq!(price_usd(None, 2_000_000, 0), 6.0);
    }
}
