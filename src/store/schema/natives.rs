//! The natives list: objects a backend builds in a kind of its own, each spelled once per
//! backend, with the triggers that keep them in step and the statements that fill them
//! from rows a store already holds (empty on a fresh store).
//!
//! `search` is the full-text index behind `gitmoot search` (`store/search.rs`). Each
//! searchable record is one `search_docs` row, `(source, ref)` naming it: a job's prompt
//! (`prompts`, the job id), its result (`results`, the job id; its summary and the text of
//! its findings, changes and tests), a chat message (`chat`, the message id), and on
//! PostgreSQL an activity step (`activity`, `job#seq`). SQLite keeps the text in an FTS5
//! table whose rowid is the doc's id; PostgreSQL keeps it in the row with a stored
//! `tsvector` under a GIN index. Both stem English words (Porter; `english`), so "tests"
//! finds "testing".
//!
//! `activity_search` moved SQLite's activity steps out of `search_docs` into an FTS5 table
//! of their own, `search_activity`, which indexes `activity` in place: its rowid is the
//! step's id and it reads the text from the step's row (external content), so a step costs
//! the index alone and no second copy of its text, no doc row and no key in the docs'
//! unique index. Steps are most of what a store indexes (a streaming fleet writes
//! thousands a second), and with that indirection and the sizes gone, storing one costs a
//! third fewer instructions (30.7k against 47.6k, counted with cachegrind). Nothing keeps a
//! step's size (`columnsize = 0`): ranking re-reads the newest matches a query scores
//! instead. PostgreSQL keeps its steps in `search_docs`: its index
//! is per row and holds no second copy to save.
//!
//! Triggers rather than the store's write functions: every writer of those tables (the
//! daemon, chat, `store copy`, a repair) keeps the index without knowing of it, and each
//! job trigger fires only when its column changed, so a claim or a settlement that leaves
//! the prompt and result alone costs nothing.

use super::model::Native;

/// The version whose migration made the search index.
const SEARCH_SINCE: usize = 14;

/// The version whose migration gave SQLite's activity steps their own index.
const ACTIVITY_SEARCH_SINCE: usize = 18;

pub(super) const NATIVES: &[Native] = &[
    Native {
        name: "search",
        sqlite: SEARCH_SQLITE,
        pg: SEARCH_PG,
        since: SEARCH_SINCE,
    },
    Native {
        name: "activity_search",
        sqlite: ACTIVITY_SEARCH_SQLITE,
        pg: "",
        since: ACTIVITY_SEARCH_SINCE,
    },
];

/// A result's searchable text on SQLite: its summary and every string in its findings,
/// changes and tests (`$r` a JSON text already known valid).
macro_rules! sqlite_result_text {
    ($r:literal) => {
        concat!(
            "trim(coalesce(json_extract(",
            $r,
            ", '$.summary'), '') || ' ' || coalesce((SELECT group_concat(value, ' ') FROM (",
            "SELECT value FROM json_tree(",
            $r,
            ", '$.findings') WHERE type = 'text' UNION ALL SELECT value FROM json_tree(",
            $r,
            ", '$.changes_made') WHERE type = 'text' UNION ALL SELECT value FROM json_tree(",
            $r,
            ", '$.tests_run') WHERE type = 'text')), ''))"
        )
    };
}

/// Adds the doc `(source, ref)` and its text (SQLite's trigger statements; `$when` the
/// condition each statement holds under, so a skipped doc leaves no text behind).
macro_rules! sqlite_add {
    ($source:literal, $ref:literal, $body:expr, $when:literal) => {
        concat!(
            "    INSERT INTO search_docs(source, ref) SELECT '",
            $source,
            "', ",
            $ref,
            " WHERE ",
            $when,
            ";\n    INSERT INTO search_text(rowid, body) SELECT last_insert_rowid(), ",
            $body,
            " WHERE ",
            $when,
            ";\n"
        )
    };
}

/// Drops the doc `(source, ref)` and its text (SQLite's trigger statements).
macro_rules! sqlite_drop {
    ($source:literal, $ref:literal) => {
        concat!(
            "    DELETE FROM search_text WHERE rowid = (SELECT id FROM search_docs WHERE ref = ",
            $ref,
            " AND source = '",
            $source,
            "');\n    DELETE FROM search_docs WHERE ref = ",
            $ref,
            " AND source = '",
            $source,
            "';\n"
        )
    };
}

/// A job's result as a doc (SQLite's trigger statements), when it is valid JSON.
macro_rules! sqlite_add_result {
    () => {
        sqlite_add!(
            "results",
            "NEW.id",
            sqlite_result_text!("NEW.result"),
            "json_valid(NEW.result)"
        )
    };
}

/// An activity step as a doc (SQLite's trigger statements): its summary and detail.
macro_rules! sqlite_add_step {
    () => {
        sqlite_add!(
            "activity",
            "NEW.job_id || '#' || NEW.seq",
            "NEW.summary || coalesce(' ' || NEW.detail, '')",
            "1"
        )
    };
}

/// SQLite's FTS5 table of every doc's text.
macro_rules! sqlite_search_text {
    () => {
        "CREATE VIRTUAL TABLE search_text USING fts5(body, tokenize = 'porter unicode61');\n"
    };
}

/// Fills `search_text` with the text of the prompt, result and chat docs `search_docs`
/// names (SQLite's statements).
macro_rules! sqlite_fill_prompts {
    () => {
        "INSERT INTO search_text(rowid, body)
    SELECT d.id, j.prompt FROM search_docs d JOIN jobs j ON j.id = d.ref WHERE d.source = 'prompts';
"
    };
}

macro_rules! sqlite_fill_results {
    () => {
        concat!(
            "INSERT INTO search_text(rowid, body)
    SELECT d.id, ",
            sqlite_result_text!("j.result"),
            " FROM search_docs d JOIN jobs j ON j.id = d.ref WHERE d.source = 'results';
"
        )
    };
}

macro_rules! sqlite_fill_chat {
    () => {
        "INSERT INTO search_text(rowid, body)
    SELECT d.id, m.body FROM search_docs d JOIN chat_messages m ON m.id = d.ref WHERE d.source = 'chat';
"
    };
}

const SEARCH_SQLITE: &str = concat!(
    "CREATE TABLE search_docs (
    id     INTEGER PRIMARY KEY,
    source TEXT NOT NULL,
    ref    TEXT NOT NULL,
    UNIQUE (ref, source)
);
",
    sqlite_search_text!(),
    "CREATE TRIGGER search_jobs_insert AFTER INSERT ON jobs BEGIN
",
    sqlite_add!("prompts", "NEW.id", "NEW.prompt", "1"),
    sqlite_add_result!(),
    "END;
CREATE TRIGGER search_jobs_prompt AFTER UPDATE OF prompt ON jobs
    WHEN NEW.prompt IS NOT OLD.prompt BEGIN
",
    sqlite_drop!("prompts", "OLD.id"),
    sqlite_add!("prompts", "NEW.id", "NEW.prompt", "1"),
    "END;
CREATE TRIGGER search_jobs_result AFTER UPDATE OF result ON jobs
    WHEN NEW.result IS NOT OLD.result BEGIN
",
    sqlite_drop!("results", "OLD.id"),
    sqlite_add_result!(),
    "END;
CREATE TRIGGER search_jobs_delete AFTER DELETE ON jobs BEGIN
",
    sqlite_drop!("prompts", "OLD.id"),
    sqlite_drop!("results", "OLD.id"),
    "END;
CREATE TRIGGER search_activity_insert AFTER INSERT ON activity BEGIN
",
    sqlite_add_step!(),
    "END;
CREATE TRIGGER search_activity_update AFTER UPDATE OF job_id, seq, summary, detail ON activity BEGIN
",
    sqlite_drop!("activity", "OLD.job_id || '#' || OLD.seq"),
    sqlite_add_step!(),
    "END;
CREATE TRIGGER search_activity_delete AFTER DELETE ON activity BEGIN
",
    sqlite_drop!("activity", "OLD.job_id || '#' || OLD.seq"),
    "END;
CREATE TRIGGER search_chat_insert AFTER INSERT ON chat_messages BEGIN
",
    sqlite_add!("chat", "NEW.id", "NEW.body", "1"),
    "END;
CREATE TRIGGER search_chat_update AFTER UPDATE OF id, body ON chat_messages
    WHEN NEW.body IS NOT OLD.body OR NEW.id IS NOT OLD.id BEGIN
",
    sqlite_drop!("chat", "OLD.id"),
    sqlite_add!("chat", "NEW.id", "NEW.body", "1"),
    "END;
CREATE TRIGGER search_chat_delete AFTER DELETE ON chat_messages BEGIN
",
    sqlite_drop!("chat", "OLD.id"),
    "END;
INSERT INTO search_docs(source, ref) SELECT 'prompts', id FROM jobs;
INSERT INTO search_docs(source, ref) SELECT 'results', id FROM jobs WHERE json_valid(result);
INSERT INTO search_docs(source, ref) SELECT 'activity', job_id || '#' || seq FROM activity;
INSERT INTO search_docs(source, ref) SELECT 'chat', id FROM chat_messages;
",
    sqlite_fill_prompts!(),
    sqlite_fill_results!(),
    "INSERT INTO search_text(rowid, body)
    SELECT d.id, a.summary || coalesce(' ' || a.detail, '') FROM search_docs d
    JOIN activity a ON a.job_id || '#' || a.seq = d.ref WHERE d.source = 'activity';
",
    sqlite_fill_chat!(),
);

const SEARCH_PG: &str = "CREATE TABLE search_docs (
    id     bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    source text NOT NULL,
    ref    text NOT NULL,
    body   text NOT NULL,
    tsv    tsvector GENERATED ALWAYS AS (to_tsvector('english'::regconfig, body)) STORED,
    UNIQUE (ref, source)
);
CREATE INDEX search_docs_tsv ON search_docs USING gin (tsv);
CREATE FUNCTION search_result_text(r jsonb) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT concat_ws(' ', r ->> 'summary', (
        SELECT string_agg(v #>> '{}', ' ') FROM (
            SELECT jsonb_path_query(coalesce(r -> 'findings', '[]'), 'strict $.** ? (@.type() == \"string\")')
            UNION ALL
            SELECT jsonb_path_query(coalesce(r -> 'changes_made', '[]'), 'strict $.** ? (@.type() == \"string\")')
            UNION ALL
            SELECT jsonb_path_query(coalesce(r -> 'tests_run', '[]'), 'strict $.** ? (@.type() == \"string\")')
        ) s(v)))
$$;
CREATE FUNCTION search_put(s text, k text, b text) RETURNS void LANGUAGE sql AS $$
    INSERT INTO search_docs(source, ref, body) VALUES (s, k, b)
        ON CONFLICT (ref, source) DO UPDATE SET body = excluded.body;
$$;
CREATE FUNCTION search_jobs() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        DELETE FROM search_docs WHERE ref = OLD.id AND source IN ('prompts', 'results');
        RETURN NULL;
    END IF;
    IF TG_OP = 'INSERT' THEN
        PERFORM search_put('prompts', NEW.id, NEW.prompt);
        IF NEW.result IS NOT NULL THEN
            PERFORM search_put('results', NEW.id, search_result_text(NEW.result));
        END IF;
        RETURN NULL;
    END IF;
    IF NEW.prompt IS DISTINCT FROM OLD.prompt THEN
        PERFORM search_put('prompts', NEW.id, NEW.prompt);
    END IF;
    IF NEW.result IS DISTINCT FROM OLD.result THEN
        IF NEW.result IS NULL THEN
            DELETE FROM search_docs WHERE ref = NEW.id AND source = 'results';
        ELSE
            PERFORM search_put('results', NEW.id, search_result_text(NEW.result));
        END IF;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER search_jobs AFTER INSERT OR DELETE OR UPDATE OF prompt, result ON jobs
    FOR EACH ROW EXECUTE FUNCTION search_jobs();
CREATE FUNCTION search_activity() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        DELETE FROM search_docs WHERE ref = OLD.job_id || '#' || OLD.seq AND source = 'activity';
    END IF;
    IF TG_OP <> 'DELETE' THEN
        PERFORM search_put('activity', NEW.job_id || '#' || NEW.seq,
            NEW.summary || coalesce(' ' || NEW.detail, ''));
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER search_activity AFTER INSERT OR DELETE OR UPDATE OF job_id, seq, summary, detail
    ON activity FOR EACH ROW EXECUTE FUNCTION search_activity();
CREATE FUNCTION search_chat() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        DELETE FROM search_docs WHERE ref = OLD.id AND source = 'chat';
    END IF;
    IF TG_OP <> 'DELETE' THEN
        PERFORM search_put('chat', NEW.id, NEW.body);
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER search_chat AFTER INSERT OR DELETE OR UPDATE OF id, body ON chat_messages
    FOR EACH ROW EXECUTE FUNCTION search_chat();
INSERT INTO search_docs(source, ref, body) SELECT 'prompts', id, prompt FROM jobs;
INSERT INTO search_docs(source, ref, body)
    SELECT 'results', id, search_result_text(result) FROM jobs WHERE result IS NOT NULL;
INSERT INTO search_docs(source, ref, body)
    SELECT 'activity', job_id || '#' || seq, summary || coalesce(' ' || detail, '') FROM activity;
INSERT INTO search_docs(source, ref, body) SELECT 'chat', id, body FROM chat_messages;
";

/// Indexes step `NEW` in `search_activity` (SQLite's trigger statement).
macro_rules! sqlite_index_step {
    () => {
        "    INSERT INTO search_activity(rowid, summary, detail) VALUES (NEW.id, NEW.summary, NEW.detail);\n"
    };
}

/// Takes step `OLD` out of `search_activity`, which needs the text it indexed (SQLite's
/// trigger statement).
macro_rules! sqlite_unindex_step {
    () => {
        "    INSERT INTO search_activity(search_activity, rowid, summary, detail)
        VALUES ('delete', OLD.id, OLD.summary, OLD.detail);\n"
    };
}

/// SQLite's activity steps out of `search_docs` and into `search_activity`, rebuilt from the
/// steps a store holds; the steps' triggers keep their names and index the new table.
/// `search_text` is made again from the docs left rather than rid of the steps one by one:
/// a step's removal re-reads its text, and steps outnumber the other docs by far (a store
/// of 100,000 steps migrated in 1.1 s this way against 2.3 s; with 200,000 chat messages
/// besides, 2.2 s against 2.8 s).
/// Each statement holds when run again (the store-usage tests replay the migrations after
/// this one on a store that already has it).
const ACTIVITY_SEARCH_SQLITE: &str = concat!(
    "DROP TRIGGER IF EXISTS search_activity_insert;
DROP TRIGGER IF EXISTS search_activity_update;
DROP TRIGGER IF EXISTS search_activity_delete;
DELETE FROM search_docs WHERE source = 'activity';
DROP TABLE search_text;
",
    sqlite_search_text!(),
    sqlite_fill_prompts!(),
    sqlite_fill_results!(),
    sqlite_fill_chat!(),
    "CREATE VIRTUAL TABLE IF NOT EXISTS search_activity USING fts5(summary, detail,
    content = 'activity', content_rowid = 'id', columnsize = 0, tokenize = 'porter unicode61');
CREATE TRIGGER search_activity_insert AFTER INSERT ON activity BEGIN
",
    sqlite_index_step!(),
    "END;
CREATE TRIGGER search_activity_update AFTER UPDATE OF id, summary, detail ON activity BEGIN
",
    sqlite_unindex_step!(),
    sqlite_index_step!(),
    "END;
CREATE TRIGGER search_activity_delete AFTER DELETE ON activity BEGIN
",
    sqlite_unindex_step!(),
    "END;
INSERT INTO search_activity(search_activity) VALUES ('rebuild');
"
);
