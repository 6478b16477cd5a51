//! Full-text search over the store: job prompts, results, activity steps and chat
//! messages, through the index the natives list builds and its triggers keep in step
//! (`schema/natives.rs`). A query is answered by the index alone (FTS5's `MATCH`,
//! PostgreSQL's `@@` over a GIN index), ranked (BM25; `ts_rank`), each hit with a snippet
//! whose matched words are marked «like this», then each hit found where it lives by its key.
//! Only the newest [`CANDIDATES`] matches are ranked, so a word in tens of thousands of
//! records costs a bounded scoring rather than one per match.
//!
//! A query is words, all of which must appear (stemmed: "tests" finds "testing"); marks
//! and operators are read as text, so no input is a syntax error.

use serde::Serialize;

use super::Result;
use super::tx::{Backend, Param, Tx, params};
use crate::Invalid;
use crate::domain::SearchSource;

/// What marks a matched word in a snippet.
pub const MARK_START: &str = "«";
pub const MARK_END: &str = "»";

/// How many of the newest matches (by index row, i.e. by when the record was indexed) a
/// query ranks; an older match is found only when fewer newer ones match.
pub const CANDIDATES: usize = 1000;

/// One record that matched.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hit {
    pub source: SearchSource,
    /// The job a prompt, result or activity step belongs to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job: Option<String>,
    /// An activity step's or a chat message's place in its job or thread.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
    /// A chat message's thread (its slug) and author.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thread: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    pub snippet: String,
    /// Higher is a better match; comparable within one answer only.
    pub score: f64,
}

/// A query: its words, at least one of them holding a letter or a digit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query(Vec<String>);

impl Query {
    pub fn parse(text: &str) -> std::result::Result<Self, Invalid> {
        let words: Vec<String> = text.split_whitespace().map(str::to_string).collect();
        if !words.iter().any(|w| w.chars().any(char::is_alphanumeric)) {
            return Err(Invalid(format!(
                "search query {text:?} has no word to look for"
            )));
        }
        Ok(Self(words))
    }
}

/// The best `limit` records of `sources` (every source when empty) that hold every word
/// of `query`, ranked among the newest [`CANDIDATES`] of them, best first.
pub fn search<'a>(
    tx: impl Into<Tx<'a>>,
    query: &Query,
    sources: &[SearchSource],
    limit: usize,
) -> Result<Vec<Hit>> {
    let tx = tx.into();
    // Four slots, the chosen sources repeated into the unused ones.
    let chosen = if sources.is_empty() {
        SearchSource::ALL
    } else {
        sources
    };
    let slot = |i: usize| chosen[i.min(chosen.len() - 1)];
    let (a, b, c, d) = (slot(0), slot(1), slot(2), slot(3));
    let matched = match tx.backend() {
        Backend::Sqlite => {
            // Each word a quoted FTS5 string: its marks are text, never operators.
            let expr: Vec<String> = query
                .0
                .iter()
                .map(|w| format!("\"{}\"", w.replace('"', "\"\"")))
                .collect();
            ranked(
                &tx,
                "SELECT d.source, d.ref, snippet(search_text, 0, '«', '»', '…', 24), -bm25(search_text)
                 FROM search_text JOIN search_docs d ON d.id = search_text.rowid
                 WHERE search_text MATCH ?1 AND d.source IN (?2, ?3, ?4, ?5)
                   AND search_text.rowid >= (SELECT MIN(id) FROM (
                       SELECT n.id FROM search_text JOIN search_docs n ON n.id = search_text.rowid
                       WHERE search_text MATCH ?1 AND n.source IN (?2, ?3, ?4, ?5)
                       ORDER BY search_text.rowid DESC LIMIT ?7))
                 ORDER BY bm25(search_text), d.id DESC LIMIT ?6",
                params![expr.join(" "), a, b, c, d, limit, CANDIDATES],
            )?
        }
        Backend::Postgres => ranked(
            &tx,
            "SELECT source, ref, ts_headline('english', body, q,
                    'StartSel=«, StopSel=», MaxWords=24, MinWords=8, MaxFragments=2, FragmentDelimiter=…'),
                    CAST(ts_rank(tsv, q) AS double precision)
             FROM (SELECT id, source, ref, body, tsv
                   FROM search_docs, plainto_tsquery('english', ?1) n
                   WHERE tsv @@ n AND source IN (?2, ?3, ?4, ?5)
                   ORDER BY id DESC LIMIT ?7) newest, plainto_tsquery('english', ?1) q
             ORDER BY 4 DESC, id DESC LIMIT ?6",
            params![query.0.join(" "), a, b, c, d, limit, CANDIDATES],
        )?,
    };
    matched
        .into_iter()
        .map(|(source, key, snippet, score)| place(&tx, source, &key, snippet, score))
        .collect()
}

type Matched = (SearchSource, String, String, f64);

fn ranked(tx: &Tx<'_>, sql: &str, params: &[&dyn Param]) -> Result<Vec<Matched>> {
    tx.query_map(sql, params, |r| {
        Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
    })
}

/// A hit where it lives: its job (and step), or its message's thread, seq and author.
fn place(tx: &Tx<'_>, source: SearchSource, key: &str, snippet: String, score: f64) -> Result<Hit> {
    let mut hit = Hit {
        source,
        job: None,
        seq: None,
        thread: None,
        author: None,
        snippet,
        score,
    };
    match source {
        SearchSource::Prompts | SearchSource::Results => hit.job = Some(key.to_string()),
        SearchSource::Activity => {
            // `job#seq`: the seq is digits, so the last `#` ends the job id.
            let (job, seq) = key.rsplit_once('#').unwrap_or((key, ""));
            hit.job = Some(job.to_string());
            hit.seq = seq.parse().ok();
        }
        SearchSource::Chat => {
            let found: Option<(String, u64, String)> = tx.query_opt(
                "SELECT t.slug, m.seq, m.author_name FROM chat_messages m
                 JOIN chat_threads t ON t.id = m.thread_id WHERE m.id = ?1",
                params![key],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )?;
            if let Some((thread, seq, author)) = found {
                (hit.thread, hit.seq, hit.author) = (Some(thread), Some(seq), Some(author));
            }
        }
    }
    Ok(hit)
}

#[cfg(test)]
mod tests {
    use rusqlite::Connection;

    use super::*;

    /// Job `key`'s prompt, indexed as the triggers would.
    fn index(c: &Connection, key: &str, body: &str) {
        c.execute(
            "INSERT INTO search_docs(source, ref) VALUES ('prompts', ?1)",
            [key],
        )
        .unwrap();
        c.execute(
            "INSERT INTO search_text(rowid, body) VALUES (last_insert_rowid(), ?1)",
            [body],
        )
        .unwrap();
    }

    fn found(c: &Connection, limit: usize) -> Vec<String> {
        let q = Query::parse("pelican").unwrap();
        search(c, &q, &[SearchSource::Prompts], limit)
            .unwrap()
            .into_iter()
            .filter_map(|h| h.job)
            .collect()
    }

    #[test]
    fn only_the_newest_matches_are_ranked() {
        let c = super::super::test_conn();
        index(&c, "old", "pelican pelican pelican");
        index(
            &c,
            "new-0",
            "a pelican among many other words in a long prompt",
        );
        assert_eq!(found(&c, 1), ["old"]);
        for i in 1..CANDIDATES {
            index(&c, &format!("new-{i}"), "a pelican among many other words");
        }
        let hits = found(&c, CANDIDATES + 1);
        assert_eq!(hits.len(), CANDIDATES);
        assert!(!hits.iter().any(|j| j == "old"));
    }
}
