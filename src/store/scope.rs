//! Narrow write scopes: which writers may commit side by side on PostgreSQL.
//!
//! A plain `Store::write` takes the writers' advisory lock exclusively, so it runs alone,
//! as SQLite's IMMEDIATE transactions do. `Store::write_scoped` names what its transaction
//! touches instead (the trees a daemon's pass settles, the thread a chat send posts to):
//! it takes the writers' lock shared, then an exclusive lock per tree or thread, so
//! transactions of other trees and threads commit beside it while every plain writer still
//! excludes them all. The engine's rules and chat's gap-free `seq` are checked within one
//! tree or one thread, which is why holding those keys is enough for them.
//!
//! A scoped transaction only ever waits at its start, for keys taken in one order (the
//! writers' lock first, then the scope's keys sorted), so scoped transactions never wait on
//! each other in a circle. Later keys are only tried (`Tx::claim_tree`, `Tx::new_tree`):
//! a claim passes over a tree another transaction holds. The store's writers check that
//! each job, run, event or chat message they write lies inside the scope (`Tx::in_tree`,
//! `Tx::in_thread`); anything outside it, and any deadlock or unique-key clash between
//! scoped transactions on rows they share (the hourly usage rollup), marks the transaction
//! as strayed, and `write_scoped` rolls it back and runs it again under the exclusive lock.
//! On SQLite a scope changes nothing.

use super::pg::{Held, Key, PgConn, WRITE_LOCK};
use super::tx::{Inner, Tx};
use super::{Conn, Result, Store, StoreError};

/// What a scoped write transaction touches.
#[derive(Debug, Clone, Copy)]
pub enum Scope<'a> {
    /// A daemon's pass: the trees whose ended jobs it settles, held from the start; its
    /// claims add the trees whose lock is free (`Tx::claim_tree`).
    Trees(&'a [String]),
    /// A chat send: the thread it posts to.
    Thread(&'a str),
}

// A key (`pg::Key`) lives in the two-integer advisory key space, which PostgreSQL keeps
// apart from the one-bigint one the writers' lock lives in; two names sharing a hash only
// wait for each other.

const TREE: i32 = 1;
const THREAD: i32 = 2;

fn key(space: i32, name: &str) -> Key {
    // FNV-1a: stable across processes and versions, unlike the standard library's hasher.
    let hash = name.bytes().fold(0x811c_9dc5_u32, |h, b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    });
    (space, hash as i32)
}

impl Scope<'_> {
    /// Its keys sorted: every scoped transaction takes its keys in this one order.
    fn keys(&self) -> Vec<Key> {
        let mut keys: Vec<Key> = match self {
            Scope::Trees(roots) => roots.iter().map(|r| key(TREE, r)).collect(),
            Scope::Thread(id) => vec![key(THREAD, id)],
        };
        keys.sort_unstable();
        keys.dedup();
        keys
    }
}

impl PgConn {
    fn begin_scoped(&self, scope: &Scope<'_>) -> Result<()> {
        let keys = scope.keys();
        let mut locks = format!("SELECT pg_advisory_xact_lock_shared({WRITE_LOCK})");
        for (space, hash) in &keys {
            locks.push_str(&format!("; SELECT pg_advisory_xact_lock({space}, {hash})"));
        }
        let held = Held {
            keys: std::cell::RefCell::new(keys.into_iter().collect()),
            strayed: std::cell::Cell::new(false),
        };
        self.begin_locked(&locks, Some(held))
    }

    /// Whether this transaction holds `key` now, taking it if it is free.
    fn try_key(&self, key: Key) -> Result<bool> {
        if self
            .scope
            .borrow()
            .as_ref()
            .is_none_or(|h| h.keys.borrow().contains(&key))
        {
            return Ok(true);
        }
        let got: bool = Tx::pg(self).one(
            "SELECT pg_try_advisory_xact_lock(?1, ?2)",
            super::tx::params![key.0, key.1],
        )?;
        if got && let Some(h) = self.scope.borrow().as_ref() {
            h.keys.borrow_mut().insert(key);
        }
        Ok(got)
    }

    fn require_key(&self, key: Key, what: &str) -> Result<()> {
        let held = self
            .scope
            .borrow()
            .as_ref()
            .is_none_or(|h| h.keys.borrow().contains(&key));
        if held {
            return Ok(());
        }
        self.stray();
        Err(StoreError::OutOfScope(what.to_string()))
    }
}

impl Tx<'_> {
    /// Takes tree `root` for this transaction when no other transaction holds it: the
    /// claim passes over a tree that is being settled or claimed elsewhere. Always true
    /// outside a scoped PostgreSQL transaction.
    pub fn claim_tree(&self, root: &str) -> Result<bool> {
        match self.inner {
            Inner::Pg(c) => c.try_key(key(TREE, root)),
            Inner::Sqlite(_) => Ok(true),
        }
    }

    /// Takes the tree this transaction is creating (no other can hold a fresh id's key
    /// but by a clash of hashes, which sends the transaction round again unscoped).
    pub(crate) fn new_tree(&self, root: &str) -> Result<()> {
        if self.claim_tree(root)? {
            return Ok(());
        }
        self.in_tree(root)
    }

    /// Takes the chat thread this transaction is creating.
    pub(crate) fn new_thread(&self, id: &str) -> Result<()> {
        match self.inner {
            Inner::Pg(c) if !c.try_key(key(THREAD, id))? => c.require_key(key(THREAD, id), id),
            _ => Ok(()),
        }
    }

    /// Checks that a write to tree `root` lies inside this transaction's scope.
    pub(crate) fn in_tree(&self, root: &str) -> Result<()> {
        match self.inner {
            Inner::Pg(c) => c.require_key(key(TREE, root), root),
            Inner::Sqlite(_) => Ok(()),
        }
    }

    /// Checks that a post to chat thread `id` lies inside this transaction's scope.
    pub(crate) fn in_thread(&self, id: &str) -> Result<()> {
        match self.inner {
            Inner::Pg(c) => c.require_key(key(THREAD, id), id),
            Inner::Sqlite(_) => Ok(()),
        }
    }

    /// Whether this scoped transaction reached outside its scope: it is rolled back and run
    /// again whatever it answers, so the rest of it is wasted work.
    pub(crate) fn strayed(&self) -> bool {
        matches!(self.inner, Inner::Pg(c) if c.strayed())
    }

    /// Work no scope covers: a scoped transaction that reaches it runs again unscoped.
    pub(crate) fn unscoped(&self, what: &str) -> Result<()> {
        match self.inner {
            Inner::Pg(c) if c.scope.borrow().is_some() => {
                c.stray();
                Err(StoreError::OutOfScope(what.to_string()))
            }
            _ => Ok(()),
        }
    }
}

impl Store {
    /// The newest event id at or below which every event is committed or gone for good,
    /// for a reader following `events` by id from `cursor`: scoped transactions take their
    /// ids in one order and may commit in another, so on PostgreSQL an id missing after
    /// `cursor` may still arrive. The answer stops before the first missing id; when that is
    /// the very next one (the reader already waited for it once), the newest id is read
    /// under the writers' exclusive lock instead, once every transaction that took an id
    /// before it has ended, which moves past the gaps a rollback leaves for good. SQLite's
    /// writers commit one at a time.
    pub fn events_settled_id(&self, cursor: i64) -> Result<i64> {
        let last = super::events::last_id(self.conn())?;
        let Conn::Pg(c, _) = &self.conn else {
            return Ok(last);
        };
        if last <= cursor {
            return Ok(last);
        }
        let ids: Vec<i64> = self.conn().query_map(
            "SELECT id FROM events WHERE id > ?1 AND id <= ?2 ORDER BY id",
            super::tx::params![cursor, last],
            |r| r.get(0),
        )?;
        let unbroken = ids
            .iter()
            .zip(cursor + 1..)
            .take_while(|(id, want)| **id == *want)
            .count() as i64;
        if unbroken > 0 {
            return Ok(cursor + unbroken);
        }
        c.batch(&format!(
            "BEGIN; SELECT pg_advisory_xact_lock({WRITE_LOCK})"
        ))?;
        super::pg::finish(c, super::events::last_id(Tx::pg(c)))
    }

    /// `write` for a transaction that touches only `scope`: on PostgreSQL it commits beside
    /// transactions of other scopes (see the module). `f` may run twice: a first run that
    /// strays outside its scope is rolled back and `f` runs again under the exclusive lock,
    /// so it must leave nothing behind but its writes and its answer. On SQLite, `write`.
    pub fn write_scoped<T, E>(
        &mut self,
        scope: Scope<'_>,
        mut f: impl FnMut(&Tx<'_>) -> Result<T, E>,
    ) -> Result<T, E>
    where
        E: From<StoreError>,
    {
        self.heal()?;
        let Conn::Pg(c, _) = &self.conn else {
            return self.write(f);
        };
        c.begin_scoped(&scope)?;
        let out = f(&Tx::pg(c));
        if c.strayed() {
            let _ = c.rollback();
            return self.write(f);
        }
        super::pg::finish(c, out)
    }
}
