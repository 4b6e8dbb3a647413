//! The `StorageClient` conformance suite ([`quiver_api::conformance`]) run against [`EmbeddedStorage`] over
//! [`MemEngine`]. Only the factory below knows the implementation: storage and catalog share one engine, storage
//! reads schemas and indexes from the catalog, and the job worker runs, as in `quiver_server::Database`.
//!
//! RocksDB (`quiver-kv-rocks`) is not a dependency of this crate; the same factory over a `RocksEngine` in a
//! temporary directory belongs where both are (`quiver-server`'s tests).

use quiver_api::conformance::{self, Fixture};
use quiver_kv::{KvEngine, MemEngine};
use quiver_meta::MetaStore;
use quiver_storage::EmbeddedStorage;
use std::sync::Arc;

fn embedded(kv: Arc<dyn KvEngine>) -> Fixture {
    let catalog = Arc::new(MetaStore::open(kv.clone()).expect("an empty catalog opens"));
    let storage = Arc::new(EmbeddedStorage::new(kv));
    storage.set_catalog(catalog.clone());
    storage.start_jobs().expect("the job worker starts");
    Fixture { storage, catalog }
}

fn mem() -> Fixture {
    embedded(Arc::new(MemEngine::new()))
}

#[test]
fn embedded_storage_over_mem_engine() {
    conformance::run_all(&mem);
}
