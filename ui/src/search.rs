//! The `/` query every view filters with: a case-insensitive substring by default, fuzzy
//! (nucleo's scoring) when it starts with `-f ` as in k9s, and where in a text it matched,
//! so the widgets highlight what the filter found.
//!
//! Owns matching only; which rows a view keeps is `rows`' business and drawing the
//! highlight the widgets'. Must not read or change state.

use nucleo_matcher::pattern::{Atom, AtomKind, CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher, Utf32Str};
use ratatui::style::Style;
use ratatui::text::Span;

/// The prefix that asks for fuzzy matching (k9s's `/-f`).
pub const FUZZY: &str = "-f ";

enum Query {
    /// The whole text, spaces included, must occur in the row.
    Substring(Atom),
    /// Every word of the text, as a subsequence, scored by nucleo.
    Fuzzy(Pattern),
}

/// A typed filter, ready to test rows against.
pub struct Filter {
    query: Option<Query>,
    matcher: Matcher,
    buf: Vec<char>,
}

impl Filter {
    pub fn new(text: &str) -> Self {
        let text = text.trim();
        // `-f` alone (the line just typed) asks for fuzzy matching of nothing yet; `-fix`
        // is a word to find.
        let fuzzy = text
            .strip_prefix(FUZZY)
            .or((text == FUZZY.trim_end()).then_some(""));
        let query = if let Some(fuzzy) = fuzzy {
            let fuzzy = fuzzy.trim();
            (!fuzzy.is_empty()).then(|| {
                Query::Fuzzy(Pattern::parse(
                    fuzzy,
                    CaseMatching::Ignore,
                    Normalization::Smart,
                ))
            })
        } else {
            (!text.is_empty()).then(|| {
                Query::Substring(Atom::new(
                    text,
                    CaseMatching::Ignore,
                    Normalization::Smart,
                    AtomKind::Substring,
                    false,
                ))
            })
        };
        Filter {
            query,
            matcher: Matcher::new(Config::DEFAULT),
            buf: Vec::new(),
        }
    }

    pub fn is_active(&self) -> bool {
        self.query.is_some()
    }

    pub fn matches(&mut self, haystack: &str) -> bool {
        let hay = Utf32Str::new(haystack, &mut self.buf);
        match &self.query {
            None => true,
            Some(Query::Substring(a)) => a.score(hay, &mut self.matcher).is_some(),
            Some(Query::Fuzzy(p)) => p.score(hay, &mut self.matcher).is_some(),
        }
    }

    /// The char positions of `haystack` the query matched, sorted; empty when it did not
    /// match or no filter is set.
    pub fn positions(&mut self, haystack: &str) -> Vec<usize> {
        let mut idx = Vec::new();
        let hay = Utf32Str::new(haystack, &mut self.buf);
        let hit = match &self.query {
            None => None,
            Some(Query::Substring(a)) => a.indices(hay, &mut self.matcher, &mut idx).map(|_| ()),
            Some(Query::Fuzzy(p)) => p.indices(hay, &mut self.matcher, &mut idx).map(|_| ()),
        };
        if hit.is_none() {
            return Vec::new();
        }
        idx.sort_unstable();
        idx.dedup();
        idx.into_iter().map(|i| i as usize).collect()
    }

    /// `spans` with the characters the query matched (in their joined text) restyled
    /// with `hit` patched over their own style; unchanged when nothing matched.
    pub fn mark(&mut self, spans: Vec<Span<'static>>, hit: Style) -> Vec<Span<'static>> {
        let text: String = spans.iter().map(|s| s.content.as_ref()).collect();
        let pos = self.positions(&text);
        if pos.is_empty() {
            return spans;
        }
        let mut out: Vec<Span<'static>> = Vec::new();
        let mut next = pos.iter().peekable();
        let mut i = 0;
        for span in spans {
            let mut run = String::new();
            let mut run_hit = false;
            for c in span.content.chars() {
                let is_hit = next.next_if(|p| **p == i).is_some();
                if is_hit != run_hit && !run.is_empty() {
                    out.push(styled(std::mem::take(&mut run), span.style, run_hit, hit));
                }
                run_hit = is_hit;
                run.push(c);
                i += 1;
            }
            if !run.is_empty() {
                out.push(styled(run, span.style, run_hit, hit));
            }
        }
        out
    }
}

fn styled(text: String, base: Style, is_hit: bool, hit: Style) -> Span<'static> {
    Span::styled(text, if is_hit { base.patch(hit) } else { base })
}

/// `n of m`, the count a filtered view puts in its title; empty without a filter.
pub fn count_note(filter: &str, shown: usize, total: usize) -> String {
    if filter.trim().is_empty() {
        String::new()
    } else {
        format!("{shown} of {total}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_substring_is_the_default_and_fuzzy_is_asked_for() {
        let mut f = Filter::new("soak");
        assert!(!f.matches("job-1 survey · scout succeeded ask"));
        assert!(f.matches("Soak-test the release"));
        let mut f = Filter::new("-f soak");
        assert!(f.matches("job-1 survey · scout succeeded ask"));
        assert!(!Filter::new("-f").is_active());
        let mut f = Filter::new("-fix");
        assert!(f.matches("cargo test -fix") && !f.matches("fix"));
        let mut f = Filter::new("session refresh");
        assert!(f.matches("Plan the SESSION REFRESH rollout"));
        assert!(!f.matches("refresh the session"));
    }

    #[test]
    fn positions_name_the_matched_characters() {
        let mut f = Filter::new("lim");
        assert_eq!(f.positions("rate limits"), vec![5, 6, 7]);
        assert!(f.positions("nothing").is_empty());
        let spans = vec![Span::raw("rate l"), Span::raw("imits")];
        let spans = f.mark(spans, Style::new().bold());
        let texts: Vec<&str> = spans.iter().map(|s| s.content.as_ref()).collect();
        assert_eq!(texts, vec!["rate ", "l", "im", "its"]);
        assert_eq!(spans[2].style, Style::new().bold());
        assert!(Filter::new("  ").positions("x").is_empty());
        assert_eq!(count_note("lim", 2, 9), "2 of 9");
        assert_eq!(count_note("", 2, 9), "");
    }
}
