//! The embedded server: wires the catalog, storage and query engine into one process, loads datasets, and serves
//! the HTTP API and NebulaGraph's graph protocol. Thin by design: everything it wires lives in its own crate.

pub mod auth;
pub mod graphd;
pub mod http;
pub mod import;
pub mod loader;
pub mod mapping;
pub mod memguard;
pub mod metrics;
pub mod net;
pub mod progress;
pub mod sessions;
pub mod slowlog;
pub mod tls;

use quiver_common::limits::HTTP_RESPONSE_BYTES_MAX;
use quiver_common::{QError, QResult};
use quiver_kv::{KvEngine, MemEngine};
use quiver_kv_rocks::RocksEngine;
use quiver_meta::MetaStore;
use quiver_query::{DataSet, Params, QueryEngine, Session};
use quiver_storage::EmbeddedStorage;
use std::path::Path;
use std::sync::Arc;

/// One embedded database: catalog, storage and query engine over one key-value engine.
pub struct Database {
    pub engine: QueryEngine,
    kv: Arc<dyn KvEngine>,
    /// The storage in this process; `None` in a cluster's graphd, whose storage is behind the network.
    storage: Option<Arc<EmbeddedStorage>>,
    /// The process's figures (`/stats`, `/metrics`).
    pub metrics: Arc<quiver_common::metrics::Metrics>,
    /// Sign-in checks, when authorization is on (see [`Database::enable_authorize`]).
    pub auth: Option<Arc<auth::Authenticator>>,
}

impl Database {
    /// Opens (or creates) a durable database in `dir`.
    pub fn open(dir: &Path) -> QResult<Database> {
        Database::open_with(dir, false)
    }

    /// Opens with RocksDB's statistics on or off (`--rocksdb-statistics`: block cache hits and misses in
    /// `/metrics`).
    pub fn open_with(dir: &Path, rocksdb_statistics: bool) -> QResult<Database> {
        std::fs::create_dir_all(dir)
            .map_err(|e| QError::storage(format!("cannot create data directory {}: {e}", dir.display())))?;
        let kv = RocksEngine::open_with(&dir.join("kv"), rocksdb_statistics)
            .map_err(|e| QError::storage(format!("cannot open data directory {}: {e}", dir.display())))?;
        Database::with_engine(Arc::new(kv))
    }

    /// A database that lives in memory only (tests).
    pub fn in_memory() -> Database {
        Database::with_engine(Arc::new(MemEngine::new())).expect("an empty in-memory catalog opens")
    }

    pub fn with_engine(kv: Arc<dyn KvEngine>) -> QResult<Database> {
        let meta = Arc::new(MetaStore::open(kv.clone())?);
        let storage = Arc::new(EmbeddedStorage::new(kv.clone()));
        // Storage reads schemas and indexes from the catalog, as a storage service reads the meta service.
        storage.set_catalog(meta.clone());
        // Jobs a restart interrupted are queued again from here.
        storage.start_jobs()?;
        let metrics = Arc::new(quiver_common::metrics::Metrics::new());
        storage.set_metrics(metrics.clone());
        Ok(Database {
            engine: QueryEngine::new(meta, storage.clone()),
            kv,
            storage: Some(storage),
            metrics,
            auth: None,
        })
    }

    /// A cluster's graphd: the query layer over a catalog and a storage reached through the network; nothing is
    /// kept in this process.
    pub fn remote(catalog: Arc<dyn quiver_api::Catalog>, storage: Arc<dyn quiver_api::StorageClient>) -> Database {
        let metrics = Arc::new(quiver_common::metrics::Metrics::new());
        let kv: Arc<dyn KvEngine> = Arc::new(MemEngine::new());
        Database { engine: QueryEngine::new(catalog, storage), kv, storage: None, metrics, auth: None }
    }

    /// The storage in this process, or the error a bulk operation gets in a cluster's graphd.
    pub fn local_storage(&self) -> QResult<&Arc<EmbeddedStorage>> {
        self.storage.as_ref().ok_or_else(|| QError::not_supported("a bulk load through a cluster's graphd"))
    }

    /// Turns authorization on (`--enable-authorize`): sign-ins check passwords, with lockout after
    /// `attempts_max` wrong ones for `lock_secs` (0 for either: no lockout), and roles decide what users may run.
    pub fn enable_authorize(&mut self, attempts_max: u32, lock_secs: u64) {
        self.engine.authorize = true;
        self.auth = Some(Arc::new(auth::Authenticator::new(self.engine.catalog.clone(), attempts_max, lock_secs)));
    }

    /// The storage engine's own figures (RocksDB's properties) and the in-memory mirrors' sizes, named for
    /// Prometheus, with their help.
    pub fn engine_figures(&self) -> Vec<(String, String, f64)> {
        let mut figures = self.kv.properties();
        if let Some(storage) = &self.storage {
            figures.extend(storage.memory_figures());
        }
        figures
    }

    pub fn execute(&self, session: &mut Session, stmt: &str, params: &Params) -> QResult<DataSet> {
        self.engine.execute(session, stmt, params)
    }

    /// Runs a request on the blocking pool and answers it in the JSON of NebulaGraph's `executeJson` (see
    /// [`Database::execute_json_now`]); with the session as the request left it.
    pub async fn execute_json(
        self: &Arc<Self>,
        mut session: Session,
        stmt: String,
        params: Params,
    ) -> (Vec<u8>, Session) {
        let db = self.clone();
        let started = std::time::Instant::now();
        let joined = tokio::task::spawn_blocking(move || {
            let body = db.execute_json_now(&mut session, &stmt, &params, started);
            (body, session)
        })
        .await;
        joined.unwrap_or_else(|e| {
            log::error!("query task failed: {e}");
            let e = QError::execution(format!("internal error: {e}"));
            (http::encode_response(&Err(e), None, 0, None, usize::MAX), Session::default())
        })
    }

    /// Runs a request on the calling thread and answers it in the JSON of NebulaGraph's `executeJson` (the HTTP
    /// API, the graph protocol's `executeJson`), encoded under the request's budget and within
    /// [`HTTP_RESPONSE_BYTES_MAX`]; the latency it reports counts from `started`.
    pub fn execute_json_now(
        &self,
        session: &mut Session,
        stmt: &str,
        params: &Params,
        started: std::time::Instant,
    ) -> Vec<u8> {
        self.engine.execute_encoded(session, stmt, params, |result, session, budget| {
            let latency = started.elapsed().as_micros();
            let space = session.space.as_deref();
            http::encode_response(&result, space, latency, Some(budget), HTTP_RESPONSE_BYTES_MAX)
        })
    }

    /// `(batches written, log fsyncs)` since start: with concurrent writers, group commit makes the second
    /// smaller than the first.
    pub fn commit_stats(&self) -> (u64, u64) {
        self.storage.as_ref().map_or((0, 0), |s| (s.batch_count(), s.sync_count()))
    }

    /// Flushes memtables so a clean shutdown leaves nothing to replay.
    pub fn flush(&self) -> QResult<()> {
        self.kv.flush().map_err(QError::storage)
    }
}
