//! The store conformance suite (host/src/store/conformance.rs) on each engine the host
//! opens: a redb file in a temporary data directory, and a PostgreSQL server of its own.

use faktura_host::Options;
use faktura_tests::PostgresServer;

/// Options naming a store in `data` (and, with `store`, PostgreSQL); the suite opens the
/// store alone and runs no component.
fn options(data: &std::path::Path, store: Option<String>) -> Options {
    let mut options = Options::new(data, std::path::PathBuf::new());
    options.store = store;
    options
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redb_keeps_the_store_contract() {
    let data = tempfile::tempdir().unwrap();
    if let Err(e) = faktura_host::store_conformance(&options(data.path(), None)).await {
        panic!("redb: {e:#}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_keeps_the_store_contract() {
    let pg = PostgresServer::start();
    let data = tempfile::tempdir().unwrap();
    if let Err(e) = faktura_host::store_conformance(&options(data.path(), Some(pg.url()))).await {
        panic!("PostgreSQL: {e:#}");
    }
}
