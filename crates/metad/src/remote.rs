//! The catalog as graphd and storaged see it in a cluster of processes: a copy of the meta service's catalog in
//! memory, refreshed when the meta group has applied more ([`RemoteCatalog::refresh`], on a timer and after each
//! of this process's own changes); reads are answered from the copy, changes are sent to the meta leader.
//! NebulaGraph's meta client works the same way (a cache that follows the meta service's version).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use quiver_api::*;
use quiver_common::{QError, QResult};
use quiver_kv::{KvEngine, MemEngine, WriteBatch};
use quiver_meta::{MetaLog, MetaStore};

use crate::service::{CatalogCall, MetaAnswer, MetaClient, MetaRequest};

/// The copy is never written through: changes go to the meta service.
struct CopyLog;

impl MetaLog for CopyLog {
    fn barrier(&self) -> QResult<()> {
        Ok(())
    }

    fn commit(&self, _batch: WriteBatch) -> QResult<()> {
        Err(QError::execution("the catalog's copy is not written here: changes go to the meta service"))
    }
}

pub struct RemoteCatalog {
    client: Arc<MetaClient>,
    engine: Arc<MemEngine>,
    store: MetaStore,
    /// Bumped when the copy changes, so the store reloads.
    applied: Arc<AtomicU64>,
    /// The meta group's applied index the copy is as of.
    known: AtomicU64,
    refreshing: Mutex<()>,
}

impl RemoteCatalog {
    /// Connects and takes a first copy of the catalog.
    pub fn connect(client: Arc<MetaClient>) -> QResult<Arc<RemoteCatalog>> {
        let engine = Arc::new(MemEngine::new());
        let applied = Arc::new(AtomicU64::new(0));
        let store = MetaStore::open_with_log(engine.clone(), Arc::new(CopyLog), applied.clone())?;
        let catalog = Arc::new(RemoteCatalog {
            client,
            engine,
            store,
            applied,
            known: AtomicU64::new(0),
            refreshing: Mutex::default(),
        });
        catalog.refresh()?;
        Ok(catalog)
    }

    /// The meta group's applied index this copy is as of.
    pub fn known(&self) -> u64 {
        self.known.load(Ordering::SeqCst)
    }

    /// Refreshes unless the copy is as of `index` or later (a request made with a newer catalog).
    pub fn refresh_to(&self, index: u64) -> QResult<()> {
        if self.known() >= index {
            return Ok(());
        }
        self.refresh()
    }

    pub fn client(&self) -> &Arc<MetaClient> {
        &self.client
    }

    /// Takes the meta service's catalog if it changed since the copy was taken.
    pub fn refresh(&self) -> QResult<()> {
        let _one = self.refreshing.lock().expect("lock poisoned");
        let known = self.known.load(Ordering::SeqCst);
        let MetaAnswer::Catalog { index, pairs } = self.client.call(&MetaRequest::Catalog { known })? else {
            return Err(QError::execution("the meta service answered a catalog request with something else"));
        };
        if let Some(pairs) = pairs {
            let (start, end) = quiver_meta::meta_range();
            let mut batch = WriteBatch::new();
            batch.delete_range(start, end);
            for (k, v) in pairs {
                batch.put(k, v);
            }
            self.engine.write(batch).map_err(|e| QError::execution(e.to_string()))?;
            self.applied.fetch_add(1, Ordering::SeqCst);
        }
        self.known.store(index, Ordering::SeqCst);
        Ok(())
    }

    /// Refreshes every `every` while the catalog is in use.
    pub fn refresh_every(self: &Arc<Self>, every: Duration) {
        let me = Arc::downgrade(self);
        std::thread::spawn(move || loop {
            std::thread::sleep(every);
            let Some(catalog) = me.upgrade() else { return };
            if let Err(e) = catalog.refresh() {
                log::warn!("cannot refresh the catalog: {e}");
            }
        });
    }

    /// Where each partition of `space` is placed (replica addresses, partition 1 first).
    pub fn parts_of(&self, space: &str) -> QResult<Vec<Vec<String>>> {
        self.store.parts_of(space)
    }

    /// The highest space id handed out ([`MetaStore::space_ids_issued`]).
    pub fn space_ids_issued(&self) -> QResult<u32> {
        self.store.space_ids_issued()
    }

    /// The registered storage hosts.
    pub fn hosts(&self) -> Vec<String> {
        self.store.hosts()
    }

    /// Sends a change to the meta service, then takes the catalog it left.
    fn change(&self, call: CatalogCall) -> QResult<MetaAnswer> {
        let answer = self.client.call(&MetaRequest::Call(call))?;
        self.refresh()?;
        Ok(answer)
    }
}

fn unexpected<T>(answer: MetaAnswer) -> QResult<T> {
    Err(QError::execution(format!("the meta service answered with an unexpected {answer:?}")))
}

impl Catalog for RemoteCatalog {
    fn create_space(&self, space: NewSpace, if_not_exists: bool) -> QResult<bool> {
        match self.change(CatalogCall::CreateSpace { space, if_not_exists })? {
            MetaAnswer::Bool(b) => Ok(b),
            other => unexpected(other),
        }
    }

    fn drop_space(&self, name: &str, if_exists: bool) -> QResult<Option<Arc<SpaceDesc>>> {
        match self.change(CatalogCall::DropSpace { name: name.to_string(), if_exists })? {
            MetaAnswer::Space(s) => Ok(s),
            other => unexpected(other),
        }
    }

    fn space(&self, name: &str) -> QResult<Arc<SpaceDesc>> {
        self.store.space(name)
    }

    fn spaces(&self) -> Vec<Arc<SpaceDesc>> {
        self.store.spaces()
    }

    fn create_schema(
        &self,
        space: &SpaceDesc,
        kind: SchemaKind,
        name: &str,
        props: Vec<PropDef>,
        ttl_duration: i64,
        ttl_col: String,
        comment: Option<String>,
        if_not_exists: bool,
    ) -> QResult<bool> {
        let call = CatalogCall::CreateSchema {
            space: space.clone(),
            kind,
            name: name.to_string(),
            props,
            ttl_duration,
            ttl_col,
            comment,
            if_not_exists,
        };
        match self.change(call)? {
            MetaAnswer::Bool(b) => Ok(b),
            other => unexpected(other),
        }
    }

    fn alter_schema(
        &self,
        space: &SpaceDesc,
        kind: SchemaKind,
        name: &str,
        changes: Vec<SchemaChange>,
        options: SchemaOptionsChange,
    ) -> QResult<()> {
        let call = CatalogCall::AlterSchema { space: space.clone(), kind, name: name.to_string(), changes, options };
        match self.change(call)? {
            MetaAnswer::Done => Ok(()),
            other => unexpected(other),
        }
    }

    fn drop_schema(
        &self,
        space: &SpaceDesc,
        kind: SchemaKind,
        name: &str,
        if_exists: bool,
    ) -> QResult<Option<SchemaRef>> {
        let call = CatalogCall::DropSchema { space: space.clone(), kind, name: name.to_string(), if_exists };
        match self.change(call)? {
            MetaAnswer::Schema(s) => Ok(s),
            other => unexpected(other),
        }
    }

    fn schema(&self, space: &SpaceDesc, kind: SchemaKind, name: &str) -> QResult<SchemaRef> {
        self.store.schema(space, kind, name)
    }

    fn schema_by_id(&self, space: &SpaceDesc, kind: SchemaKind, id: i32) -> Option<SchemaRef> {
        self.store.schema_by_id(space, kind, id)
    }

    fn schemas(&self, space: &SpaceDesc, kind: SchemaKind) -> Vec<SchemaRef> {
        self.store.schemas(space, kind)
    }

    fn create_index(&self, space: &SpaceDesc, index: IndexDesc, if_not_exists: bool) -> QResult<Option<IndexRef>> {
        match self.change(CatalogCall::CreateIndex { space: space.clone(), index, if_not_exists })? {
            MetaAnswer::Index(i) => Ok(i),
            other => unexpected(other),
        }
    }

    fn drop_index(
        &self,
        space: &SpaceDesc,
        kind: SchemaKind,
        name: &str,
        if_exists: bool,
    ) -> QResult<Option<IndexRef>> {
        let call = CatalogCall::DropIndex { space: space.clone(), kind, name: name.to_string(), if_exists };
        match self.change(call)? {
            MetaAnswer::Index(i) => Ok(i),
            other => unexpected(other),
        }
    }

    fn set_index_state(&self, space: &SpaceDesc, id: i32, state: IndexState) -> QResult<()> {
        match self.change(CatalogCall::SetIndexState { space: space.clone(), id, state })? {
            MetaAnswer::Done => Ok(()),
            other => unexpected(other),
        }
    }

    fn indexes(&self, space: &SpaceDesc) -> Vec<IndexRef> {
        self.store.indexes(space)
    }

    fn create_user(&self, name: &str, password_hash: String, if_not_exists: bool) -> QResult<bool> {
        match self.change(CatalogCall::CreateUser { name: name.to_string(), password_hash, if_not_exists })? {
            MetaAnswer::Bool(b) => Ok(b),
            other => unexpected(other),
        }
    }

    fn set_password(&self, name: &str, password_hash: String) -> QResult<()> {
        match self.change(CatalogCall::SetPassword { name: name.to_string(), password_hash })? {
            MetaAnswer::Done => Ok(()),
            other => unexpected(other),
        }
    }

    fn drop_user(&self, name: &str, if_exists: bool) -> QResult<bool> {
        match self.change(CatalogCall::DropUser { name: name.to_string(), if_exists })? {
            MetaAnswer::Bool(b) => Ok(b),
            other => unexpected(other),
        }
    }

    fn user(&self, name: &str) -> Option<UserDesc> {
        self.store.user(name)
    }

    fn users(&self) -> Vec<UserDesc> {
        self.store.users()
    }

    fn grant(&self, name: &str, space: u32, role: Role) -> QResult<()> {
        match self.change(CatalogCall::Grant { name: name.to_string(), space, role })? {
            MetaAnswer::Done => Ok(()),
            other => unexpected(other),
        }
    }

    fn revoke(&self, name: &str, space: u32, role: Role) -> QResult<()> {
        match self.change(CatalogCall::Revoke { name: name.to_string(), space, role })? {
            MetaAnswer::Done => Ok(()),
            other => unexpected(other),
        }
    }

    fn job_records(&self) -> Vec<JobRecord> {
        self.store.job_records()
    }

    fn add_job(&self, space_id: u32, job: NewJob) -> QResult<JobRecord> {
        match self.change(CatalogCall::AddJob { space_id, job })? {
            MetaAnswer::Job(record) => Ok(record),
            other => unexpected(other),
        }
    }

    fn swap_job(&self, seen: &JobRecord, new: JobRecord) -> QResult<bool> {
        match self.change(CatalogCall::SwapJob { seen: Box::new(seen.clone()), new: Box::new(new) })? {
            MetaAnswer::Bool(b) => Ok(b),
            other => unexpected(other),
        }
    }
}
