//! The `StorageClient` conformance suite ([`quiver_api::conformance`]) run against the storage a server runs:
//! [`EmbeddedStorage`] over RocksDB, each check in a fresh database of its own. (Over `MemEngine` it runs in
//! `crates/storage/tests/conformance.rs`; this crate is where storage and RocksDB meet.)

use quiver_api::conformance::{self, Fixture};
use quiver_kv::KvEngine;
use quiver_kv_rocks::RocksEngine;
use quiver_meta::MetaStore;
use quiver_storage::EmbeddedStorage;
use std::sync::{Arc, Mutex};

#[test]
fn embedded_storage_over_rocksdb() {
    // Each database's directory lives until the suite is done.
    let dirs = Mutex::new(Vec::new());
    conformance::run_all(&|| {
        let dir = tempfile::tempdir().expect("a temporary directory");
        // As a data directory holds it: snapshots go beside `kv/`, inside the temporary directory.
        let kv: Arc<dyn KvEngine> = Arc::new(RocksEngine::open(&dir.path().join("kv")).expect("RocksDB opens"));
        dirs.lock().expect("lock").push(dir);
        let catalog = Arc::new(MetaStore::open(kv.clone()).expect("an empty catalog opens"));
        let storage = Arc::new(EmbeddedStorage::new(kv));
        storage.set_catalog(catalog.clone());
        storage.start_jobs().expect("the job worker starts");
        Fixture { storage, catalog }
    });
}
