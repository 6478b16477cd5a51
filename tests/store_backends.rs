//! The store on both backends: the throwaway PostgreSQL cluster the suites share, the
//! backend-neutral transaction, and the schema each backend migrates to.

mod support;

use std::sync::Arc;

use support::pg::Cluster;

/// The cluster the PostgreSQL runs depend on comes up, serves a database over its socket
/// and over TCP, and is gone (server stopped, files removed) once its last handle drops.
#[test]
fn a_throwaway_cluster_serves_databases_and_leaves_nothing_behind() {
    let cluster = Arc::new(Cluster::start());
    let dir = cluster.dir().to_path_buf();
    let db = cluster.database();
    for url in [db.url(), db.tcp_url()] {
        let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
        let row = c
            .query_one("SELECT current_database(), 1 + 1", &[])
            .unwrap();
        assert_eq!(row.get::<_, String>(0), db.name());
        assert_eq!(row.get::<_, i32>(1), 2);
    }
    let url = cluster.url("postgres");
    drop(db);
    drop(cluster);
    assert!(!dir.exists(), "{} is left behind", dir.display());
    assert!(
        postgres::Client::connect(&url, postgres::NoTls).is_err(),
        "the server still answers"
    );
}
