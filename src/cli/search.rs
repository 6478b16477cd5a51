//! `gitmoot search QUERY [--in prompts,results,activity,chat] [--limit N] [--json]`: the
//! records holding every word of the query, best first, each with where it lives and a
//! snippet with the matched words marked «like this».
//!
//! Owns the flags and the printing; the index and the ranking are `store::search`'s.

use std::io::Write;

use clap::Args;

use super::Ctx;
use super::agent::parse;
use super::output::Out;
use crate::domain::SearchSource;
use crate::store::search::{Hit, Query, search};

#[derive(Debug, Args)]
pub struct SearchArgs {
    /// The words to find (every one must appear; "tests" also finds "testing").
    #[arg(required = true, num_args = 1..)]
    query: Vec<String>,
    /// Only these kinds of record: prompts, results, activity, chat (comma-separated).
    #[arg(long = "in", value_delimiter = ',', value_parser = parse::<SearchSource>)]
    sources: Vec<SearchSource>,
    /// At most this many hits.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u16).range(1..))]
    limit: u16,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

pub fn run(ctx: &Ctx, a: SearchArgs) -> anyhow::Result<()> {
    let text = a.query.join(" ");
    let query = Query::parse(&text)?;
    let store = ctx.store()?;
    let hits = search(store.conn(), &query, &a.sources, usize::from(a.limit))?;
    let mut out = Out::block();
    if a.json {
        out.json(&hits)?;
        return Ok(out.finish()?);
    }
    if hits.is_empty() {
        writeln!(out, "no match for {text:?}")?;
    }
    for h in &hits {
        writeln!(out, "{}  {}", place(h), one_line(&h.snippet))?;
    }
    Ok(out.finish()?)
}

/// "prompt job-ab12cd34", "activity job-ab12cd34#7", "chat plan#3 @scout".
fn place(h: &Hit) -> String {
    let job = h.job.as_deref().unwrap_or("-");
    match h.source {
        SearchSource::Prompts => format!("prompt   {job}"),
        SearchSource::Results => format!("result   {job}"),
        SearchSource::Activity => format!("activity {job}#{}", h.seq.unwrap_or_default()),
        SearchSource::Chat => format!(
            "chat     {}#{} {}",
            h.thread.as_deref().unwrap_or("-"),
            h.seq.unwrap_or_default(),
            h.author.as_deref().unwrap_or("-")
        ),
    }
}

/// A snippet on one line: a record's line breaks would otherwise split its hit.
fn one_line(snippet: &str) -> String {
    snippet.split_whitespace().collect::<Vec<_>>().join(" ")
}
