//! Scoped writes on PostgreSQL (`Store::write_scoped`): transactions of different trees or
//! threads commit side by side, while the same tree, the same thread and every plain write
//! still wait their turn, and a transaction that reaches outside its scope runs again alone.
//!
//! Whether a transaction waits is read from `pg_locks` (its backend waiting on a lock), not
//! timed, so a transaction that would block forever fails the test instead of hanging it.

use gitmoot_test_support as support;

use std::sync::mpsc;
use std::thread::JoinHandle;

use gitmoot::chat::messages::{SendOptions, send_message};
use gitmoot::chat::threads::{self, NewThread};
use gitmoot::clock::{ManualClock, SystemClock};
use gitmoot::domain::{Action, EventKind};
use gitmoot::engine::{SubmitRoot, submit_root};
use gitmoot::store::agents::{self, Agent};
use gitmoot::store::events::{self, NewEvent};
use gitmoot::store::jobs;
use gitmoot::store::usage;
use gitmoot::store::{Location, Scope, Store, StoreError, Tx};

/// How a transaction started on another thread came out.
#[derive(Debug, PartialEq)]
enum Seen {
    Committed,
    /// Its backend waits on a lock another transaction holds.
    Waiting,
}

/// A store on the database at `url`, with its backend's pid.
fn open(url: &str) -> (Store, i32) {
    let store = Store::open_location(&Location::Postgres(url.to_string())).unwrap();
    let pid: i64 = store
        .conn()
        .one("SELECT pg_backend_pid()::bigint", &[])
        .unwrap();
    (store, pid as i32)
}

/// Runs `f` on `store` (opened beforehand: opening migrates, which is a plain write) on
/// another thread and watches it: `Committed` once it returned, `Waiting` as soon as its
/// backend waits on a lock.
fn watch<T: Send + 'static>(
    url: &str,
    (mut store, pid): (Store, i32),
    f: impl FnOnce(&mut Store) -> T + Send + 'static,
) -> (Seen, JoinHandle<T>) {
    let handle = std::thread::spawn(move || f(&mut store));
    let mut probe = postgres::Client::connect(url, postgres::NoTls).unwrap();
    loop {
        if handle.is_finished() {
            return (Seen::Committed, handle);
        }
        let waiting: bool = probe
            .query_one(
                "SELECT EXISTS(SELECT 1 FROM pg_locks WHERE pid = $1 AND NOT granted)",
                &[&pid],
            )
            .unwrap()
            .get(0);
        if waiting {
            return (Seen::Waiting, handle);
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
}

/// Holds a scoped transaction open on `store` on another thread until released.
fn hold(mut store: Store, scope: ScopeOwned) -> Held {
    let (held_tx, held_rx) = mpsc::channel();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let handle = std::thread::spawn(move || {
        store
            .write_scoped(scope.scope(), |_tx| -> Result<(), StoreError> {
                held_tx.send(()).unwrap();
                let _ = release_rx.recv();
                Ok(())
            })
            .unwrap();
    });
    held_rx.recv().unwrap();
    Held {
        release: Some(release_tx),
        handle: Some(handle),
    }
}

/// A scope with the strings it names.
enum ScopeOwned {
    Trees(Vec<String>),
    Thread(String),
}

impl ScopeOwned {
    fn scope(&self) -> Scope<'_> {
        match self {
            ScopeOwned::Trees(t) => Scope::Trees(t),
            ScopeOwned::Thread(t) => Scope::Thread(t),
        }
    }
}

struct Held {
    release: Option<mpsc::Sender<()>>,
    handle: Option<JoinHandle<()>>,
}

impl Held {
    fn release(mut self) {
        self.release.take();
        self.handle.take().unwrap().join().unwrap();
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.release.take();
    }
}

fn tree(store: &mut Store, clock: &ManualClock) -> String {
    store
        .write(|tx| submit_root(tx, clock, SubmitRoot::new("a", Action::Ask, "p", "test")))
        .unwrap()
}

/// A store on `url` with agent `a` and two of its trees.
fn two_trees(url: &str) -> (Store, String, String) {
    let (mut store, _) = open(url);
    agents::insert(store.conn(), &Agent::shell("a", "true")).unwrap();
    let clock = ManualClock::new(1_000);
    let (a, b) = (tree(&mut store, &clock), tree(&mut store, &clock));
    (store, a, b)
}

/// One event on tree `root` in a transaction scoped to `scope`.
fn note(store: &mut Store, scope: &[String], root: &str) -> Result<i64, StoreError> {
    store.write_scoped(Scope::Trees(scope), |tx| {
        events::append(tx, NewEvent::job(1, root, root, EventKind::Queued))
    })
}

#[test]
fn a_tree_held_open_stops_its_own_tree_and_plain_writes_but_not_another_tree() {
    let db = support::pg::database();
    let url = db.url();
    let (mut store, a, b) = two_trees(&url);

    let stores: Vec<(Store, i32)> = (0..4).map(|_| open(&url)).collect();
    let [holder, other, same, plain] = <[_; 4]>::try_from(stores).ok().unwrap();
    let held = hold(holder.0, ScopeOwned::Trees(vec![a.clone()]));
    // Another tree settles and claims beside it.
    let b_scope = vec![b.clone()];
    let (seen, done) = watch(&url, other, move |s| note(s, &b_scope, &b_scope[0]));
    assert_eq!(seen, Seen::Committed, "tree B waited for tree A");
    done.join().unwrap().unwrap();
    // A claim passes over the held tree and takes the free one.
    let a2 = a.clone();
    let taken = store
        .write_scoped(Scope::Trees(&[]), |tx: &Tx<'_>| {
            Ok::<_, StoreError>((tx.claim_tree(&a2)?, tx.claim_tree("job-elsewhere")?))
        })
        .unwrap();
    assert_eq!(taken, (false, true));
    // The same tree, and a write that names no scope, wait for it.
    let a_scope = vec![a.clone()];
    let (seen_same, same) = watch(&url, same, move |s| note(s, &a_scope, &a_scope[0]));
    assert_eq!(
        seen_same,
        Seen::Waiting,
        "tree A's second pass did not wait"
    );
    let (seen_plain, plain) = watch(&url, plain, |s| {
        s.write(|tx| agents::insert(tx, &Agent::shell("b", "true")))
    });
    assert_eq!(seen_plain, Seen::Waiting, "a plain write did not wait");
    held.release();
    same.join().unwrap().unwrap();
    plain.join().unwrap().unwrap();
}

#[test]
fn a_write_outside_its_scope_runs_again_under_the_exclusive_lock() {
    let db = support::pg::database();
    let (mut store, a, b) = two_trees(&db.url());
    let before = events::last_id(store.conn()).unwrap();
    let mut runs = 0;
    store
        .write_scoped(Scope::Trees(std::slice::from_ref(&a)), |tx| {
            runs += 1;
            events::append(tx, NewEvent::job(1, &a, &a, EventKind::Queued))?;
            events::append(tx, NewEvent::job(1, &b, &b, EventKind::Queued))
        })
        .unwrap();
    assert_eq!(runs, 2, "the strayed run was not run again");
    let kept: Vec<String> = events::since(store.conn(), before, 10)
        .unwrap()
        .into_iter()
        .filter_map(|e| e.root_id)
        .collect();
    assert_eq!(kept, [a, b], "only the second run's events are kept");
}

#[test]
fn sends_to_one_thread_queue_and_stay_gap_free_while_other_threads_commit() {
    let db = support::pg::database();
    let url = db.url();
    let (mut store, _) = open(&url);
    agents::insert(store.conn(), &Agent::shell("a", "true")).unwrap();
    let mut thread = |name: &str| {
        store
            .write(|tx| {
                threads::create(
                    tx,
                    &SystemClock,
                    NewThread {
                        name,
                        repo: "acme/api",
                        title: None,
                        created_by: "human",
                    },
                )
            })
            .unwrap()
            .id
    };
    let (t, u) = (thread("t"), thread("u"));
    let send = |thread: String| {
        move |s: &mut Store| {
            send_message(
                s,
                &SystemClock,
                &thread,
                None,
                "hello",
                &SendOptions::default(),
            )
            .map(|sent| sent.message.seq)
        }
    };
    let stores: Vec<(Store, i32)> = (0..4).map(|_| open(&url)).collect();
    let [holder, to_u, to_t, again] = <[_; 4]>::try_from(stores).ok().unwrap();
    let held = hold(holder.0, ScopeOwned::Thread(t.clone()));
    let (seen_u, to_u) = watch(&url, to_u, send(u.clone()));
    assert_eq!(
        seen_u,
        Seen::Committed,
        "a send to thread U waited for thread T"
    );
    assert_eq!(to_u.join().unwrap().unwrap(), 1);
    let (seen_t, to_t) = watch(&url, to_t, send(t.clone()));
    assert_eq!(
        seen_t,
        Seen::Waiting,
        "a second send to thread T did not wait"
    );
    held.release();
    let first = to_t.join().unwrap().unwrap();
    let (_, again) = watch(&url, again, send(t.clone()));
    let second = again.join().unwrap().unwrap();
    assert_eq!((first, second), (1, 2));
    // By its slug, looked up first; by a slug spelled like an id, guessed wrong and run
    // again unscoped.
    let slugged = thread("chat-x");
    for (arg, id, seq) in [("t", &t, 3), ("chat-x", &slugged, 1)] {
        let opts = SendOptions::default();
        let sent = send_message(&mut store, &SystemClock, arg, None, "hi", &opts).unwrap();
        assert_eq!((&sent.message.thread_id, sent.message.seq), (id, seq));
    }
}

/// A reader following `events` by id stops before an id a transaction still holds open,
/// though later ids committed, and moves past it once that transaction rolled back.
#[test]
fn an_event_follower_waits_for_an_open_id_and_passes_a_rolled_back_one() {
    let db = support::pg::database();
    let url = db.url();
    let (mut store, a, b) = two_trees(&url);
    let (mut holder, _) = open(&url);
    let cursor = events::last_id(store.conn()).unwrap();
    let b_scope = vec![b.clone()];
    let first = note(&mut store, &b_scope, &b).unwrap();
    let (held_tx, held_rx) = mpsc::channel();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let open_a = a.clone();
    let handle = std::thread::spawn(move || {
        let scope = vec![open_a.clone()];
        holder.write_scoped(Scope::Trees(&scope), |tx| -> Result<(), StoreError> {
            let id = events::append(tx, NewEvent::job(1, &open_a, &open_a, EventKind::Queued))?;
            held_tx.send(id).unwrap();
            let _ = release_rx.recv();
            Err(StoreError::NoRow {
                sql: "rolled back".into(),
            })
        })
    });
    let held = held_rx.recv().unwrap();
    let later = note(&mut store, &b_scope, &b).unwrap();
    assert_eq!((first, held, later), (cursor + 1, cursor + 2, cursor + 3));
    assert_eq!(store.events_settled_id(cursor).unwrap(), first);
    drop(release_tx);
    assert!(handle.join().unwrap().is_err());
    assert_eq!(store.events_settled_id(first).unwrap(), later);
}

/// A settled job's spend reaches the hourly rollup as its transaction commits (so daemons
/// settling side by side do not queue on the rollup's row), and within the transaction as
/// soon as a reader asks for it (`usage::rollup_now`, the claim's daily caps).
#[test]
fn a_settled_job_s_spend_reaches_the_rollup_at_commit_or_when_asked() {
    let db = support::pg::database();
    let (mut store, first, second) = two_trees(&db.url());
    let settle = |tx: &Tx<'_>, id: &str| -> Result<(), StoreError> {
        let before = jobs::require(tx, id)?;
        let mut after = before.clone();
        after.cost_usd = 1.5;
        jobs::put_over(tx, &before, &after)
    };
    let seen = store
        .write(|tx| {
            settle(tx, &first)?;
            let deferred = usage::spent_since(tx, None, 0)?;
            usage::rollup_now(tx)?;
            Ok::<_, StoreError>((deferred, usage::spent_since(tx, None, 0)?))
        })
        .unwrap();
    assert_eq!(seen, (0.0, 1.5));
    store.write(|tx| settle(tx, &second)).unwrap();
    assert_eq!(usage::spent_since(store.conn(), None, 0).unwrap(), 3.0);
}
