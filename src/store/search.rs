//! Full-text search over the store: job prompts, results, activity steps and chat
//! messages, through the index the natives list builds and its triggers keep in step
//! (`schema/natives.rs`). A query is answered by the index alone (FTS5's `MATCH`,
//! PostgreSQL's `@@` over a GIN index), ranked (BM25; `ts_rank`), each hit with a snippet
//! whose matched words are marked «like this», then each hit found where it lives by its key.
//! Only the newest [`CANDIDATES`] matches are ranked (on SQLite, the newest of the activity
//! steps and the newest of the other records), so a word in tens of thousands of records
//! costs a bounded scoring rather than one per match.
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
/// of `query`, ranked among the newest [`CANDIDATES`] of them (on SQLite, of the activity
/// steps and of the other records apart), best first.
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
                // Activity steps have an index of their own (`schema/natives.rs`): each
                // index ranks its own newest matches, and the two lists meet by score.
                "SELECT source, ref, snip, score FROM (
                     SELECT d.source AS source, d.ref AS ref,
                            snippet(search_text, 0, '«', '»', '…', 24) AS snip,
                            -bm25(search_text) AS score, d.id AS at
                     FROM search_text JOIN search_docs d ON d.id = search_text.rowid
                     WHERE search_text MATCH ?1 AND d.source IN (?2, ?3, ?4, ?5)
                       AND search_text.rowid >= (SELECT MIN(id) FROM (
                           SELECT n.id FROM search_text JOIN search_docs n ON n.id = search_text.rowid
                           WHERE search_text MATCH ?1 AND n.source IN (?2, ?3, ?4, ?5)
                           ORDER BY search_text.rowid DESC LIMIT ?7))
                     UNION ALL
                     SELECT 'activity', s.job_id || '#' || s.seq,
                            snippet(search_activity, -1, '«', '»', '…', 24), -bm25(search_activity), s.id
                     FROM search_activity JOIN activity s ON s.id = search_activity.rowid
                     WHERE search_activity MATCH ?1 AND 'activity' IN (?2, ?3, ?4, ?5)
                       AND search_activity.rowid >= (SELECT MIN(r) FROM (
                           SELECT rowid AS r FROM search_activity WHERE search_activity MATCH ?1
                           ORDER BY rowid DESC LIMIT ?7)))
                 ORDER BY score DESC, at DESC LIMIT ?6",
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

    /// Step `seq` of job `j`, as the daemon stores one.
    fn step(c: &Connection, seq: i64, summary: &str, detail: Option<&str>) {
        c.execute(
            "INSERT INTO activity(job_id, seq, at_ms, kind, summary, detail)
             VALUES ('j', ?1, 1, 'output', ?2, ?3)",
            rusqlite::params![seq, summary, detail],
        )
        .unwrap();
    }

    fn steps_with(c: &Connection, word: &str) -> Vec<u64> {
        let q = Query::parse(word).unwrap();
        let mut seqs: Vec<u64> = search(c, &q, &[SearchSource::Activity], 10)
            .unwrap()
            .into_iter()
            .map(|h| {
                assert_eq!(h.job.as_deref(), Some("j"));
                h.seq.unwrap()
            })
            .collect();
        seqs.sort();
        seqs
    }

    /// A step is indexed where it is stored (no doc row, no second copy of its text), its
    /// detail too, and the index follows the step's row when it changes or goes.
    #[test]
    fn steps_are_indexed_in_place_and_the_index_follows_their_rows() {
        let c = super::super::test_conn();
        step(&c, 0, "ran the pelican tests", None);
        step(&c, 1, "read a file", Some("the walrus module"));
        step(&c, 2, "a pelican again", None);
        assert_eq!(steps_with(&c, "pelican"), [0, 2]);
        assert_eq!(steps_with(&c, "walrus"), [1]);
        let docs: i64 = c
            .query_row("SELECT COUNT(*) FROM search_docs", [], |r| r.get(0))
            .unwrap();
        assert_eq!(docs, 0, "steps need no doc rows");
        c.execute_batch(
            "UPDATE activity SET summary = 'ran the okapi tests' WHERE seq = 0;
             DELETE FROM activity WHERE seq = 2;",
        )
        .unwrap();
        assert_eq!(steps_with(&c, "pelican"), Vec::<u64>::new());
        assert_eq!(steps_with(&c, "okapi"), [0]);
        // FTS5's check with rank 1 compares the index with the rows it reads its text from.
        c.execute(
            "INSERT INTO search_activity(search_activity, rank) VALUES ('integrity-check', 1)",
            [],
        )
        .unwrap();
    }

    /// Steps have their own newest matches: an older, better one is passed over once
    /// `CANDIDATES` newer steps match.
    #[test]
    fn only_the_newest_matching_steps_are_ranked() {
        let c = super::super::test_conn();
        step(&c, 0, "ibis ibis ibis", None);
        for seq in 1..=CANDIDATES as i64 {
            step(
                &c,
                seq,
                "an ibis among many other words in a long line",
                None,
            );
        }
        let q = Query::parse("ibis").unwrap();
        let hits = search(&c, &q, &[SearchSource::Activity], CANDIDATES + 1).unwrap();
        assert_eq!(hits.len(), CANDIDATES);
        assert!(hits.iter().all(|h| h.seq != Some(0)));
    }

    /// Steps and other records meet in one answer, best first, each with its marked
    /// snippet; a search of other sources leaves the steps out.
    #[test]
    fn steps_and_prompts_are_ranked_in_one_answer() {
        let c = super::super::test_conn();
        index(&c, "p", "a prompt about the heron");
        step(&c, 0, "heron heron", Some("more about the heron"));
        let q = Query::parse("heron").unwrap();
        let hits = search(&c, &q, &[], 10).unwrap();
        let sources: Vec<_> = hits.iter().map(|h| h.source).collect();
        assert_eq!(sources.len(), 2);
        assert!(
            sources.contains(&SearchSource::Prompts) && sources.contains(&SearchSource::Activity)
        );
        assert!(hits[0].score >= hits[1].score);
        let step_hit = hits
            .iter()
            .find(|h| h.source == SearchSource::Activity)
            .unwrap();
        assert!(step_hit.snippet.contains("«heron»"), "{}", step_hit.snippet);
        let prompts = search(&c, &q, &[SearchSource::Prompts], 10).unwrap();
        assert_eq!(prompts.len(), 1);
        assert_eq!(prompts[0].job.as_deref(), Some("p"));
    }
}
