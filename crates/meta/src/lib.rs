//! The catalog of the embedded server: spaces, tags and edge types with their schema versions, kept in memory and
//! persisted in the key-value engine under the meta key range (see `docs/design/storage.md`).
//!
//! **Architecture invariant:** the catalog knows nothing of graph data; it stores only descriptions.

use quiver_api::*;
use quiver_common::{PropType, QError, QResult};
use quiver_kv::{KvEngine, WriteBatch};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

/// Prefix of every catalog key: space id 0 is never given to a user space.
pub const META_PREFIX: &[u8] = &[0, 0, 0, 0, 0xfe];

#[derive(Serialize, Deserialize)]
struct PropRecord {
    name: String,
    ty: PropType,
    nullable: bool,
    default: Option<String>,
    comment: Option<String>,
}

#[derive(Serialize, Deserialize)]
struct SchemaRecord {
    kind: SchemaKind,
    id: i32,
    name: String,
    versions: Vec<(u32, Vec<PropRecord>)>,
    ttl_duration: i64,
    ttl_col: String,
    comment: Option<String>,
}

#[derive(Serialize, Deserialize)]
struct SpaceRecord {
    desc: SpaceDesc,
    schemas: Vec<SchemaRecord>,
    /// Tags, edge types and indexes share one id sequence, as in NebulaGraph.
    next_schema_id: i32,
    #[serde(default)]
    indexes: Vec<IndexDesc>,
    /// In the cluster: the storage hosts of each partition's replicas (partition `i + 1` at `parts[i]`); empty in
    /// one process.
    #[serde(default)]
    parts: Vec<Vec<String>>,
}

#[derive(Serialize, Deserialize)]
struct HostRecord {
    addr: String,
}

/// A cluster job's record: `"job:"` and its id, big-endian, so records are in id order.
fn job_key(id: i64) -> Vec<u8> {
    let mut k = job_prefix();
    k.extend_from_slice(&id.to_be_bytes());
    k
}

fn job_prefix() -> Vec<u8> {
    let mut k = META_PREFIX.to_vec();
    k.extend_from_slice(b"job:");
    k
}

fn host_key(addr: &str) -> Vec<u8> {
    let mut k = META_PREFIX.to_vec();
    k.extend_from_slice(b"host:");
    k.extend_from_slice(addr.as_bytes());
    k
}

#[derive(Clone)]
struct SpaceState {
    desc: Arc<SpaceDesc>,
    schemas: Vec<SchemaRef>,
    next_schema_id: i32,
    indexes: Vec<IndexRef>,
    parts: Vec<Vec<String>>,
}

pub struct MetaStore {
    kv: Arc<dyn KvEngine>,
    /// Where the catalog's writes go: straight to `kv` in one process, or through the meta service's Raft group.
    log: Arc<dyn MetaLog>,
    spaces: RwLock<BTreeMap<String, SpaceState>>,
    users: RwLock<BTreeMap<String, UserDesc>>,
    /// Batches the log has applied to `kv` (bumped by a replicated log as it applies, from any writer), and the
    /// count the in-memory state was last loaded at: when they differ the state is reloaded before use.
    applied: Arc<std::sync::atomic::AtomicU64>,
    loaded: std::sync::atomic::AtomicU64,
    /// Held from reading a job record to committing its change, so job changes are compare-and-set; true after a
    /// job change's commit failed (its entry may still be applied, after the next change was read).
    jobs: std::sync::Mutex<bool>,
}

/// Commits the catalog's write batches. In one process that is a durable write to the engine; in the cluster it is
/// a proposal to the meta service's Raft group, returning once a majority has it and it is applied here (refused
/// on a replica that does not lead).
pub trait MetaLog: Send + Sync {
    fn commit(&self, batch: WriteBatch) -> QResult<()>;

    /// Returns once everything committed before is applied here and this replica may write (the Raft leader, its
    /// previous terms' entries applied): a write computed from the state after it sees every earlier write.
    fn barrier(&self) -> QResult<()> {
        Ok(())
    }
}

/// The one-process log: a durable write to the engine.
struct LocalLog(Arc<dyn KvEngine>);

impl MetaLog for LocalLog {
    fn commit(&self, batch: WriteBatch) -> QResult<()> {
        self.0.write(batch).map_err(kv_err)
    }
}

/// The catalog's key range: every record it writes lies in it (a replicated catalog's Raft group owns it).
/// Where the last space id handed out is kept.
fn next_space_id_key() -> Vec<u8> {
    let mut key = META_PREFIX.to_vec();
    key.extend_from_slice(b"next_space_id");
    key
}

pub fn meta_range() -> (Vec<u8>, Vec<u8>) {
    let mut end = META_PREFIX.to_vec();
    *end.last_mut().expect("a prefix") += 1;
    (META_PREFIX.to_vec(), end)
}

type LoadedState = (BTreeMap<String, SpaceState>, BTreeMap<String, UserDesc>);

#[derive(Serialize, Deserialize)]
struct UserRecord {
    name: String,
    password_hash: String,
    roles: Vec<(u32, Role)>,
}

fn user_key(name: &str) -> Vec<u8> {
    let mut k = META_PREFIX.to_vec();
    k.extend_from_slice(b"user:");
    k.extend_from_slice(name.as_bytes());
    k
}

/// Every JSON record stored under `prefix`, in key order; a record that does not parse is a storage error naming
/// `what` it was.
pub fn json_records<T: serde::de::DeserializeOwned>(kv: &dyn KvEngine, prefix: &[u8], what: &str) -> QResult<Vec<T>> {
    let mut records = Vec::new();
    let mut bad = None;
    kv.scan_prefix(prefix, &mut |_, v| match serde_json::from_slice::<T>(v) {
        Ok(r) => {
            records.push(r);
            true
        }
        Err(e) => {
            bad = Some(e.to_string());
            false
        }
    })
    .map_err(kv_err)?;
    match bad {
        Some(e) => Err(QError::storage(format!("corrupt {what} record: {e}"))),
        None => Ok(records),
    }
}

/// NebulaGraph's error for a user it does not have.
pub fn user_not_found() -> QError {
    QError::execution("User not existed!")
}

fn space_key(id: u32) -> Vec<u8> {
    let mut k = META_PREFIX.to_vec();
    k.extend_from_slice(b"space");
    k.extend_from_slice(&id.to_be_bytes());
    k
}

fn kv_err(e: quiver_kv::KvError) -> QError {
    QError::storage(e)
}

fn to_record(p: &PropDef) -> PropRecord {
    PropRecord {
        name: p.name.clone(),
        ty: p.ty,
        nullable: p.nullable,
        default: p.default.as_ref().map(|(t, _)| t.clone()),
        comment: p.comment.clone(),
    }
}

fn from_record(p: PropRecord) -> QResult<PropDef> {
    let default = match p.default {
        Some(text) => {
            let e = quiver_syntax::parser::parse_expr(&text)?;
            Some((text, e))
        }
        None => None,
    };
    Ok(PropDef { name: p.name, ty: p.ty, nullable: p.nullable, default, comment: p.comment })
}

impl MetaStore {
    /// The catalog of one process, over `kv`; root/nebula is created at the first start.
    pub fn open(kv: Arc<dyn KvEngine>) -> QResult<MetaStore> {
        let store = MetaStore::open_with_log(kv.clone(), Arc::new(LocalLog(kv)), Arc::default())?;
        store.ensure_root()?;
        Ok(store)
    }

    /// A catalog whose writes go through `log`, which bumps `applied` each time it applies a batch to `kv` (from
    /// any replica's writes): the in-memory state follows. Root is not created here: only the log's leader can
    /// write ([`MetaStore::ensure_root`]).
    pub fn open_with_log(
        kv: Arc<dyn KvEngine>,
        log: Arc<dyn MetaLog>,
        applied: Arc<std::sync::atomic::AtomicU64>,
    ) -> QResult<MetaStore> {
        let (spaces, users) = Self::load_state(&kv)?;
        let loaded = std::sync::atomic::AtomicU64::new(applied.load(std::sync::atomic::Ordering::SeqCst));
        Ok(MetaStore {
            kv,
            log,
            spaces: RwLock::new(spaces),
            users: RwLock::new(users),
            applied,
            loaded,
            jobs: std::sync::Mutex::default(),
        })
    }

    /// Before a write: the log's barrier, then the state as the log has applied it.
    fn begin_write(&self) -> QResult<()> {
        self.log.barrier()?;
        self.refresh();
        Ok(())
    }

    /// Reloads the in-memory state if the log applied batches since it was loaded.
    fn refresh(&self) {
        use std::sync::atomic::Ordering::SeqCst;
        let applied = self.applied.load(SeqCst);
        if applied == self.loaded.load(SeqCst) {
            return;
        }
        let mut spaces = self.spaces.write().expect("lock poisoned");
        let mut users = self.users.write().expect("lock poisoned");
        let applied = self.applied.load(SeqCst);
        match Self::load_state(&self.kv) {
            Ok((s, u)) => {
                *spaces = s;
                *users = u;
                self.loaded.store(applied, SeqCst);
            }
            // Keeps the state it had; the next use tries again.
            Err(e) => log::warn!("cannot reload the catalog: {e}"),
        }
    }

    /// Creates root/nebula if there is no root (NebulaGraph's first start).
    pub fn ensure_root(&self) -> QResult<()> {
        if self.user(ROOT_USER).is_none() {
            // One hash per process for every new catalog: argon2 is slow on purpose, and the default credential is
            // public anyway.
            static DEFAULT_ROOT_HASH: std::sync::OnceLock<Result<String, String>> = std::sync::OnceLock::new();
            let hash = DEFAULT_ROOT_HASH.get_or_init(|| quiver_common::password::hash("nebula")).clone();
            self.create_user(ROOT_USER, hash.map_err(QError::storage)?, true)?;
        }
        Ok(())
    }

    /// CREATE SPACE with its partitions placed on storage hosts (`parts[i]`: partition `i + 1`'s replicas; empty in
    /// one process). The new id and the space's record are one write.
    pub fn create_space_placed(&self, space: NewSpace, parts: Vec<Vec<String>>, if_not_exists: bool) -> QResult<bool> {
        self.begin_write()?;
        let mut spaces = self.spaces.write().expect("lock poisoned");
        if spaces.contains_key(&space.name) {
            return if if_not_exists { Ok(false) } else { Err(QError::execution("Existed!")) };
        }
        // Ids are never reused, so no stale data of a dropped space can show up in a new one.
        let last = self.issued_space_ids(&spaces)?;
        if last >= quiver_common::limits::SPACE_ID_MAX {
            return Err(QError::execution("No space id is left: space ids are never reused"));
        }
        let id = last + 1;
        let desc = SpaceDesc {
            id,
            name: space.name.clone(),
            partition_num: space.partition_num,
            replica_factor: space.replica_factor,
            vid_type: space.vid_type,
            comment: space.comment,
        };
        let st =
            SpaceState { desc: Arc::new(desc), schemas: Vec::new(), next_schema_id: 1, indexes: Vec::new(), parts };
        let mut b = WriteBatch::new();
        b.put(next_space_id_key(), id.to_be_bytes().to_vec());
        let (k, v) = self.space_record(&st);
        b.put(k, v);
        self.log.commit(b)?;
        spaces.insert(space.name, st);
        Ok(true)
    }

    /// The highest space id handed out so far (0 before the first): a space of a lower or equal id that is not in
    /// the catalog was dropped (ids are never reused).
    pub fn space_ids_issued(&self) -> QResult<u32> {
        self.refresh();
        self.issued_space_ids(&self.spaces.read().expect("lock poisoned"))
    }

    fn issued_space_ids(&self, spaces: &BTreeMap<String, SpaceState>) -> QResult<u32> {
        let stored = match self.kv.get(&next_space_id_key()).map_err(kv_err)? {
            Some(v) => {
                u32::from_be_bytes(v.as_slice().try_into().map_err(|_| QError::storage("corrupt next_space_id"))?)
            }
            None => 0,
        };
        Ok(stored.max(spaces.values().map(|s| s.desc.id).max().unwrap_or(0)))
    }

    /// The storage hosts of each partition of a space (empty in one process).
    pub fn parts_of(&self, space: &str) -> QResult<Vec<Vec<String>>> {
        self.refresh();
        let spaces = self.spaces.read().expect("lock poisoned");
        spaces.get(space).map(|s| s.parts.clone()).ok_or_else(|| QError::space_not_found(space))
    }

    /// Partition replicas each registered host carries, over every space.
    pub fn part_load(&self) -> BTreeMap<String, usize> {
        self.refresh();
        let mut load: BTreeMap<String, usize> = self.hosts().into_iter().map(|h| (h, 0)).collect();
        for st in self.spaces.read().expect("lock poisoned").values() {
            for h in st.parts.iter().flatten() {
                *load.entry(h.clone()).or_default() += 1;
            }
        }
        load
    }

    /// `ADD HOSTS`: registers storage hosts (`ip:port`), with NebulaGraph's errors.
    pub fn add_hosts(&self, hosts: &[String]) -> QResult<()> {
        self.begin_write()?;
        let unique: std::collections::BTreeSet<&String> = hosts.iter().collect();
        if hosts.is_empty() || unique.len() != hosts.len() {
            return Err(QError::execution("Invalid param!"));
        }
        let known = self.hosts();
        if hosts.iter().any(|h| known.contains(h)) {
            return Err(QError::execution("Existed!"));
        }
        let mut b = WriteBatch::new();
        for h in hosts {
            b.put(host_key(h), serde_json::to_vec(&HostRecord { addr: h.clone() }).expect("a host serializes"));
        }
        self.log.commit(b)
    }

    /// `DROP HOSTS`: unregisters hosts that carry no partition.
    pub fn drop_hosts(&self, hosts: &[String]) -> QResult<()> {
        self.begin_write()?;
        let unique: std::collections::BTreeSet<&String> = hosts.iter().collect();
        if hosts.is_empty() || unique.len() != hosts.len() {
            return Err(QError::execution("Invalid param!"));
        }
        let known = self.hosts();
        if hosts.iter().any(|h| !known.contains(h)) {
            return Err(QError::execution("No hosts!"));
        }
        let load = self.part_load();
        if hosts.iter().any(|h| load.get(h).copied().unwrap_or(0) > 0) {
            return Err(QError::execution("There are still space on the host"));
        }
        let mut b = WriteBatch::new();
        for h in hosts {
            b.delete(host_key(h));
        }
        self.log.commit(b)
    }

    /// The registered storage hosts, in order.
    pub fn hosts(&self) -> Vec<String> {
        let records: Vec<HostRecord> = json_records(self.kv.as_ref(), &host_key(""), "host").unwrap_or_default();
        records.into_iter().map(|r| r.addr).collect()
    }

    fn load_state(kv: &Arc<dyn KvEngine>) -> QResult<LoadedState> {
        let mut prefix = META_PREFIX.to_vec();
        prefix.extend_from_slice(b"space");
        let records: Vec<SpaceRecord> = json_records(kv.as_ref(), &prefix, "catalog")?;
        let mut spaces = BTreeMap::new();
        for r in records {
            let mut schemas = Vec::new();
            for s in r.schemas {
                let mut versions = Vec::new();
                for (v, props) in s.versions {
                    versions.push(SchemaVersion {
                        version: v,
                        props: props.into_iter().map(from_record).collect::<QResult<_>>()?,
                    });
                }
                schemas.push(Arc::new(SchemaDesc {
                    kind: s.kind,
                    id: s.id,
                    name: s.name,
                    versions,
                    ttl_duration: s.ttl_duration,
                    ttl_col: s.ttl_col,
                    comment: s.comment,
                }));
            }
            let indexes = r.indexes.into_iter().map(Arc::new).collect();
            spaces.insert(
                r.desc.name.clone(),
                SpaceState {
                    desc: Arc::new(r.desc),
                    schemas,
                    next_schema_id: r.next_schema_id,
                    indexes,
                    parts: r.parts,
                },
            );
        }
        let users = Self::load_users(kv)?;
        Ok((spaces, users))
    }

    fn load_users(kv: &Arc<dyn KvEngine>) -> QResult<BTreeMap<String, UserDesc>> {
        let records: Vec<UserRecord> = json_records(kv.as_ref(), &user_key(""), "user")?;
        Ok(records
            .into_iter()
            .map(|r| {
                let roles = r.roles.into_iter().collect();
                (r.name.clone(), UserDesc { name: r.name, password_hash: r.password_hash, roles })
            })
            .collect())
    }

    fn persist_user(&self, u: &UserDesc) -> QResult<()> {
        let rec = UserRecord {
            name: u.name.clone(),
            password_hash: u.password_hash.clone(),
            roles: u.roles.iter().map(|(s, r)| (*s, *r)).collect(),
        };
        let mut b = WriteBatch::new();
        b.put(user_key(&u.name), serde_json::to_vec(&rec).expect("a user serializes"));
        self.log.commit(b)
    }

    /// After a job change whose commit failed: an empty commit, which returns once every entry before it (the
    /// failed one, if it is ever committed) is applied, so the next compare reads what that entry left.
    fn settle_jobs(&self, uncertain: &mut bool) -> QResult<()> {
        if *uncertain {
            self.log.commit(WriteBatch::new())?;
            *uncertain = false;
        }
        Ok(())
    }

    fn commit_job(&self, batch: WriteBatch, uncertain: &mut bool) -> QResult<()> {
        let committed = self.log.commit(batch);
        *uncertain = committed.is_err();
        committed
    }

    fn persist(&self, st: &SpaceState) -> QResult<()> {
        let (k, v) = self.space_record(st);
        let mut b = WriteBatch::new();
        b.put(k, v);
        self.log.commit(b)
    }

    /// A space's record, as stored.
    fn space_record(&self, st: &SpaceState) -> (Vec<u8>, Vec<u8>) {
        let rec = SpaceRecord {
            desc: (*st.desc).clone(),
            schemas: st
                .schemas
                .iter()
                .map(|s| SchemaRecord {
                    kind: s.kind,
                    id: s.id,
                    name: s.name.clone(),
                    versions: s.versions.iter().map(|v| (v.version, v.props.iter().map(to_record).collect())).collect(),
                    ttl_duration: s.ttl_duration,
                    ttl_col: s.ttl_col.clone(),
                    comment: s.comment.clone(),
                })
                .collect(),
            next_schema_id: st.next_schema_id,
            indexes: st.indexes.iter().map(|i| (**i).clone()).collect(),
            parts: st.parts.clone(),
        };
        (space_key(st.desc.id), serde_json::to_vec(&rec).expect("catalog serializes"))
    }

    /// Changes a space's state with `f`, which commits the change: on a copy, kept only if `f` succeeds, so a
    /// commit that fails (not the leader, a timeout, a disk error) leaves no change behind.
    fn with_space<T>(&self, space: &SpaceDesc, f: impl FnOnce(&mut SpaceState) -> QResult<T>) -> QResult<T> {
        self.begin_write()?;
        let mut spaces = self.spaces.write().expect("lock poisoned");
        let st = spaces
            .get_mut(&space.name)
            .filter(|s| s.desc.id == space.id)
            .ok_or_else(|| QError::space_not_found(&space.name))?;
        let mut changed = st.clone();
        let out = f(&mut changed)?;
        *st = changed;
        Ok(out)
    }
}

fn check_ttl(props: &[PropDef], ttl_col: &str, ttl_duration: i64) -> QResult<()> {
    if ttl_duration < 0 {
        return Err(QError::semantic("Ttl duration must be non-negative"));
    }
    if ttl_col.is_empty() {
        return Ok(());
    }
    // NebulaGraph's SchemaUtil::setTTLCol: an INT64 or TIMESTAMP column, else a plain error (-1005).
    match props.iter().find(|p| p.name == ttl_col) {
        None => Err(QError::execution("Ttl column name not exist in columns")),
        Some(p) if matches!(p.ty, PropType::Int64 | PropType::Timestamp) => Ok(()),
        Some(_) => Err(QError::execution("Ttl column type illegal")),
    }
}

/// NebulaGraph's `isLegalTypeConversion`: a type to itself (a fixed string to a string or a wider fixed string), an
/// integer to a wider integer, a float to a double; nothing else, as the old rows are too different from the new.
fn legal_type_change(from: PropType, to: PropType) -> bool {
    use PropType::*;
    match (from, to) {
        (FixedString(a), FixedString(b)) => a <= b,
        (FixedString(_), String) => true,
        (FixedString(_), _) => false,
        // A geography's shape is no part of its type here, as in NebulaGraph.
        (Geography(_), Geography(_)) => true,
        (a, b) if a == b => true,
        (Int32, Int64) | (Int16, Int64 | Int32) | (Int8, Int64 | Int32 | Int16) | (Float, Double) => true,
        _ => false,
    }
}

fn check_unique(props: &[PropDef]) -> QResult<()> {
    for (i, p) in props.iter().enumerate() {
        if props[..i].iter().any(|q| q.name == p.name) {
            return Err(QError::semantic(format!("Duplicate column name `{}'", p.name)));
        }
    }
    if props.len() > quiver_common::limits::PROPS_PER_SCHEMA_MAX {
        return Err(QError::semantic(format!("more than {} properties", quiver_common::limits::PROPS_PER_SCHEMA_MAX)));
    }
    Ok(())
}

impl Catalog for MetaStore {
    fn create_space(&self, space: NewSpace, if_not_exists: bool) -> QResult<bool> {
        self.create_space_placed(space, Vec::new(), if_not_exists)
    }

    fn drop_space(&self, name: &str, if_exists: bool) -> QResult<Option<Arc<SpaceDesc>>> {
        self.begin_write()?;
        let mut spaces = self.spaces.write().expect("lock poisoned");
        let Some(st) = spaces.get(name) else {
            return if if_exists { Ok(None) } else { Err(QError::space_not_found(name)) };
        };
        let desc = st.desc.clone();
        let mut b = WriteBatch::new();
        b.delete(space_key(desc.id));
        self.log.commit(b)?;
        spaces.remove(name);
        // Roles in the space go with it (space ids are never reused, so a stale role could not resurface anyway).
        let mut users = self.users.write().expect("lock poisoned");
        for u in users.values_mut() {
            if u.roles.remove(&desc.id).is_some() {
                self.persist_user(u)?;
            }
        }
        Ok(Some(desc))
    }

    fn space(&self, name: &str) -> QResult<Arc<SpaceDesc>> {
        self.refresh();
        self.spaces
            .read()
            .expect("lock poisoned")
            .get(name)
            .map(|s| s.desc.clone())
            .ok_or_else(|| QError::space_not_found(name))
    }

    fn spaces(&self) -> Vec<Arc<SpaceDesc>> {
        self.refresh();
        self.spaces.read().expect("lock poisoned").values().map(|s| s.desc.clone()).collect()
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
        self.refresh();
        check_unique(&props)?;
        check_ttl(&props, &ttl_col, ttl_duration)?;
        // NebulaGraph's SchemaUtil::validateProps: a TTL needs its column named.
        if ttl_duration != 0 && ttl_col.is_empty() {
            return Err(QError::execution("Implicit ttl_col not support"));
        }
        self.with_space(space, |st| {
            // Tags and edge types share one namespace, as in NebulaGraph.
            if let Some(existing) = st.schemas.iter().find(|s| s.name == name) {
                if if_not_exists && existing.kind == kind {
                    return Ok(false);
                }
                return Err(QError::execution("Existed!"));
            }
            let id = st.next_schema_id;
            st.next_schema_id += 1;
            st.schemas.push(Arc::new(SchemaDesc {
                kind,
                id,
                name: name.to_string(),
                versions: vec![SchemaVersion { version: 0, props }],
                ttl_duration,
                ttl_col,
                comment,
            }));
            self.persist(st)?;
            Ok(true)
        })
    }

    fn alter_schema(
        &self,
        space: &SpaceDesc,
        kind: SchemaKind,
        name: &str,
        changes: Vec<SchemaChange>,
        options: SchemaOptionsChange,
    ) -> QResult<()> {
        self.refresh();
        self.with_space(space, |st| {
            let idx =
                st.schemas.iter().position(|s| s.name == name && s.kind == kind).ok_or_else(|| kind.not_existed())?;
            let old = st.schemas[idx].clone();
            let indexed: Vec<&str> = st
                .indexes
                .iter()
                .filter(|i| i.kind == kind && i.schema_id == old.id)
                .flat_map(|i| i.fields.iter().map(|f| f.name.as_str()))
                .collect();
            let has_index = st.indexes.iter().any(|i| i.kind == kind && i.schema_id == old.id);
            for change in &changes {
                let touched: Vec<&str> = match change {
                    SchemaChange::Add(_) => Vec::new(),
                    SchemaChange::Change(ps) => ps.iter().map(|p| p.name.as_str()).collect(),
                    SchemaChange::Drop(ns) => ns.iter().map(String::as_str).collect(),
                };
                if touched.iter().any(|n| indexed.contains(n)) {
                    return Err(QError::execution("Related index exists, please drop index first"));
                }
            }
            // NebulaGraph (`MetaServiceUtils::alterSchemaProp`): the TTL of a tag or edge type that has an index
            // cannot be changed at all, not even removed.
            if has_index && (options.ttl_col.is_some() || options.ttl_duration.is_some()) {
                return Err(QError::execution("Unsupported!"));
            }
            let mut props = old.latest().props.clone();
            // Dropping the TTL column removes the TTL, as NebulaGraph's `alterColumnDefs` does.
            let mut ttl_dropped = false;
            let prop_missing = || match kind {
                SchemaKind::Tag => QError::execution("Tag prop not existed!"),
                SchemaKind::Edge => QError::execution("Edge prop not existed!"),
            };
            for change in changes {
                match change {
                    SchemaChange::Add(new) => {
                        for p in new {
                            if props.iter().any(|q| q.name == p.name) {
                                return Err(QError::execution("Existed!"));
                            }
                            // NebulaGraph (`alterColumnDefs`): a name dropped before is not added again, as rows
                            // written with an older version would show their old value under it.
                            if old.versions.iter().any(|v| v.props.iter().any(|q| q.name == p.name)) {
                                return Err(QError::execution("Schema exisited before!"));
                            }
                            props.push(p);
                        }
                    }
                    SchemaChange::Change(new) => {
                        for p in new {
                            let slot = props.iter_mut().find(|q| q.name == p.name).ok_or_else(prop_missing)?;
                            // NebulaGraph's `alterColumnDefs`: not the TTL column, and to a type the old rows'
                            // values convert to without loss (`isLegalTypeConversion`).
                            if !old.ttl_col.is_empty() && p.name == old.ttl_col {
                                return Err(QError::execution("Unsupported!"));
                            }
                            if !legal_type_change(slot.ty, p.ty) {
                                return Err(QError::execution("Unsupported!"));
                            }
                            *slot = p;
                        }
                    }
                    SchemaChange::Drop(names) => {
                        for n in names {
                            ttl_dropped |= !old.ttl_col.is_empty() && n == old.ttl_col;
                            let pos = props.iter().position(|q| q.name == n).ok_or_else(prop_missing)?;
                            props.remove(pos);
                        }
                    }
                }
            }
            check_unique(&props)?;
            let (old_duration, old_col) =
                if ttl_dropped { (0, String::new()) } else { (old.ttl_duration, old.ttl_col.clone()) };
            let ttl_col = options.ttl_col.clone().unwrap_or(old_col);
            // `ttl_col = ""` turns the TTL off, whatever duration the statement names (`alterSchemaProp`).
            let ttl_duration = match &options.ttl_col {
                Some(c) if c.is_empty() => 0,
                _ => options.ttl_duration.unwrap_or(old_duration),
            };
            // NebulaGraph's meta (`alterSchemaProp`): a TTL column the schema lacks is its missing prop, and a
            // duration set without a column (its implicit TTL) is refused.
            if !ttl_col.is_empty() && !props.iter().any(|p| p.name == ttl_col) {
                return Err(prop_missing());
            }
            check_ttl(&props, &ttl_col, ttl_duration)?;
            if ttl_duration != 0 && ttl_col.is_empty() {
                return Err(QError::execution("Unsupported!"));
            }
            let mut new = (*old).clone();
            if props != old.latest().props {
                let version = old.latest().version + 1;
                new.versions.push(SchemaVersion { version, props });
            }
            new.ttl_duration = ttl_duration;
            new.ttl_col = ttl_col;
            if options.comment.is_some() {
                new.comment = options.comment;
            }
            st.schemas[idx] = Arc::new(new);
            self.persist(st)
        })
    }

    fn drop_schema(
        &self,
        space: &SpaceDesc,
        kind: SchemaKind,
        name: &str,
        if_exists: bool,
    ) -> QResult<Option<SchemaRef>> {
        self.refresh();
        self.with_space(space, |st| {
            let Some(idx) = st.schemas.iter().position(|s| s.name == name && s.kind == kind) else {
                return if if_exists { Ok(None) } else { Err(kind.not_existed()) };
            };
            let id = st.schemas[idx].id;
            if st.indexes.iter().any(|i| i.kind == kind && i.schema_id == id) {
                return Err(QError::execution("Related index exists, please drop index first"));
            }
            let removed = st.schemas.remove(idx);
            self.persist(st)?;
            Ok(Some(removed))
        })
    }

    fn schema(&self, space: &SpaceDesc, kind: SchemaKind, name: &str) -> QResult<SchemaRef> {
        self.refresh();
        let spaces = self.spaces.read().expect("lock poisoned");
        let st = spaces.get(&space.name).ok_or_else(|| QError::space_not_found(&space.name))?;
        st.schemas.iter().find(|s| s.name == name && s.kind == kind).cloned().ok_or_else(|| match kind {
            SchemaKind::Tag => QError::execution(format!("TagNotFound: TagName `{name}`")),
            SchemaKind::Edge => QError::execution(format!("EdgeNotFound: EdgeName `{name}`")),
        })
    }

    fn schema_by_id(&self, space: &SpaceDesc, kind: SchemaKind, id: i32) -> Option<SchemaRef> {
        self.refresh();
        let spaces = self.spaces.read().expect("lock poisoned");
        spaces.get(&space.name)?.schemas.iter().find(|s| s.id == id && s.kind == kind).cloned()
    }

    fn schemas(&self, space: &SpaceDesc, kind: SchemaKind) -> Vec<SchemaRef> {
        self.refresh();
        let spaces = self.spaces.read().expect("lock poisoned");
        spaces
            .get(&space.name)
            .map(|st| st.schemas.iter().filter(|s| s.kind == kind).cloned().collect())
            .unwrap_or_default()
    }

    fn create_index(&self, space: &SpaceDesc, mut index: IndexDesc, if_not_exists: bool) -> QResult<Option<IndexRef>> {
        self.refresh();
        self.with_space(space, |st| {
            if st.indexes.iter().any(|i| i.name == index.name) {
                return if if_not_exists { Ok(None) } else { Err(QError::execution("Existed!")) };
            }
            let schema = st
                .schemas
                .iter()
                .find(|s| s.name == index.schema_name && s.kind == index.kind)
                .ok_or_else(|| index.kind.not_existed())?;
            index.schema_id = schema.id;
            let latest = schema.latest();
            let mut fields = Vec::with_capacity(index.fields.len());
            for (i, f) in index.fields.iter().enumerate() {
                if index.fields[..i].iter().any(|g| g.name == f.name) {
                    return Err(QError::execution("Invalid param!"));
                }
                // NebulaGraph's CreateTagIndexProcessor: E_KEY_NOT_FOUND for a field the schema lacks, E_UNSUPPORTED
                // for a string length past the most or one given to a fixed_string, E_INVALID_PARM for a string
                // without one.
                let p = latest
                    .props
                    .iter()
                    .find(|p| p.name == f.name)
                    .ok_or_else(|| QError::execution("Key not existed!"))?;
                let len = match (p.ty, f.len) {
                    (PropType::String, None) => return Err(QError::execution("Invalid param!")),
                    (PropType::String, Some(n)) if n == 0 || n > quiver_common::limits::INDEX_STRING_LEN_MAX => {
                        return Err(QError::execution("Unsupported!"))
                    }
                    (PropType::String, Some(n)) => Some(n),
                    (PropType::FixedString(n), None) => Some(n as u32),
                    (PropType::FixedString(_), Some(_)) => return Err(QError::execution("Unsupported!")),
                    // NebulaGraph (`CreateTagIndexProcessor`): a duration, list or set is not indexed, a bad parameter.
                    (PropType::Duration | PropType::List(_) | PropType::Set(_), _) => {
                        return Err(QError::execution("Invalid param!"))
                    }
                    // A geography is indexed alone (CreateTagIndexProcessor: no joint geo index).
                    (PropType::Geography(_), None) if index.fields.len() > 1 => {
                        return Err(QError::execution("Unsupported!"))
                    }
                    (_, Some(_)) => return Err(QError::execution("Invalid param!")),
                    (_, None) => None,
                };
                fields.push(IndexField { name: f.name.clone(), ty: p.ty, len });
            }
            if st.indexes.iter().any(|i| i.kind == index.kind && i.schema_id == index.schema_id && i.fields == fields) {
                return if if_not_exists { Ok(None) } else { Err(QError::execution("Existed!")) };
            }
            index.fields = fields;
            index.id = st.next_schema_id;
            index.state = IndexState::Building;
            st.next_schema_id += 1;
            let index = Arc::new(index);
            st.indexes.push(index.clone());
            self.persist(st)?;
            Ok(Some(index))
        })
    }

    fn drop_index(
        &self,
        space: &SpaceDesc,
        kind: SchemaKind,
        name: &str,
        if_exists: bool,
    ) -> QResult<Option<IndexRef>> {
        self.refresh();
        self.with_space(space, |st| {
            let Some(pos) = st.indexes.iter().position(|i| i.name == name && i.kind == kind) else {
                return if if_exists { Ok(None) } else { Err(QError::execution("Index not existed!")) };
            };
            let removed = st.indexes.remove(pos);
            self.persist(st)?;
            Ok(Some(removed))
        })
    }

    fn set_index_state(&self, space: &SpaceDesc, id: i32, state: IndexState) -> QResult<()> {
        self.refresh();
        self.with_space(space, |st| {
            let Some(i) = st.indexes.iter_mut().find(|i| i.id == id) else { return Ok(()) };
            if i.state != state {
                let mut new = (**i).clone();
                new.state = state;
                *i = Arc::new(new);
                self.persist(st)?;
            }
            Ok(())
        })
    }

    fn indexes(&self, space: &SpaceDesc) -> Vec<IndexRef> {
        self.refresh();
        let spaces = self.spaces.read().expect("lock poisoned");
        spaces.get(&space.name).filter(|s| s.desc.id == space.id).map(|st| st.indexes.clone()).unwrap_or_default()
    }

    fn create_user(&self, name: &str, password_hash: String, if_not_exists: bool) -> QResult<bool> {
        self.begin_write()?;
        let mut users = self.users.write().expect("lock poisoned");
        if users.contains_key(name) {
            return if if_not_exists { Ok(false) } else { Err(QError::execution("Existed!")) };
        }
        let u = UserDesc { name: name.to_string(), password_hash, roles: BTreeMap::new() };
        self.persist_user(&u)?;
        users.insert(name.to_string(), u);
        Ok(true)
    }

    fn set_password(&self, name: &str, password_hash: String) -> QResult<()> {
        self.begin_write()?;
        let mut users = self.users.write().expect("lock poisoned");
        let u = users.get_mut(name).ok_or_else(user_not_found)?;
        let mut changed = u.clone();
        changed.password_hash = password_hash;
        self.persist_user(&changed)?;
        *u = changed;
        Ok(())
    }

    fn drop_user(&self, name: &str, if_exists: bool) -> QResult<bool> {
        self.begin_write()?;
        let mut users = self.users.write().expect("lock poisoned");
        if !users.contains_key(name) {
            return if if_exists { Ok(false) } else { Err(user_not_found()) };
        }
        let mut b = WriteBatch::new();
        b.delete(user_key(name));
        self.log.commit(b)?;
        users.remove(name);
        Ok(true)
    }

    fn user(&self, name: &str) -> Option<UserDesc> {
        self.refresh();
        self.users.read().expect("lock poisoned").get(name).cloned()
    }

    fn users(&self) -> Vec<UserDesc> {
        self.refresh();
        self.users.read().expect("lock poisoned").values().cloned().collect()
    }

    fn grant(&self, name: &str, space: u32, role: Role) -> QResult<()> {
        self.begin_write()?;
        let mut users = self.users.write().expect("lock poisoned");
        let u = users.get_mut(name).ok_or_else(user_not_found)?;
        let mut changed = u.clone();
        changed.roles.insert(space, role);
        self.persist_user(&changed)?;
        *u = changed;
        Ok(())
    }

    fn job_records(&self) -> Vec<JobRecord> {
        json_records(self.kv.as_ref(), &job_prefix(), "job").unwrap_or_else(|e| {
            log::warn!("cannot read the job records: {e}");
            Vec::new()
        })
    }

    fn add_job(&self, space_id: u32, job: NewJob) -> QResult<JobRecord> {
        self.begin_write()?;
        let mut uncertain = self.jobs.lock().expect("lock poisoned");
        self.settle_jobs(&mut uncertain)?;
        // Records are never deleted, so the last one has the highest id ever given.
        let last: Vec<JobRecord> = json_records(self.kv.as_ref(), &job_prefix(), "job")?;
        let id = last.last().map_or(0, |r| r.job.id) + 1;
        let record = JobRecord { job: JobInfo::queued(id, space_id, job), runner: None, lease_until_ms: 0 };
        let mut b = WriteBatch::new();
        b.put(job_key(id), serde_json::to_vec(&record).expect("a job serializes"));
        self.commit_job(b, &mut uncertain)?;
        Ok(record)
    }

    fn swap_job(&self, seen: &JobRecord, new: JobRecord) -> QResult<bool> {
        if seen.job.id != new.job.id {
            return Err(QError::execution("a job record swapped for another job's"));
        }
        self.begin_write()?;
        let mut uncertain = self.jobs.lock().expect("lock poisoned");
        self.settle_jobs(&mut uncertain)?;
        let key = job_key(seen.job.id);
        let stored = self.kv.get(&key).map_err(kv_err)?;
        let now: Option<JobRecord> = match stored {
            Some(v) => Some(serde_json::from_slice(&v).map_err(|e| QError::storage(format!("a job record: {e}")))?),
            None => None,
        };
        if now.as_ref() != Some(seen) {
            return Ok(false);
        }
        let mut b = WriteBatch::new();
        b.put(key, serde_json::to_vec(&new).expect("a job serializes"));
        self.commit_job(b, &mut uncertain)?;
        Ok(true)
    }

    fn revoke(&self, name: &str, space: u32, role: Role) -> QResult<()> {
        self.begin_write()?;
        let mut users = self.users.write().expect("lock poisoned");
        let u = users.get_mut(name).ok_or_else(user_not_found)?;
        match u.roles.get(&space) {
            None => return Err(QError::execution("Role not existed!")),
            Some(r) if *r != role => return Err(QError::execution("Improper role!")),
            Some(_) => {}
        }
        let mut changed = u.clone();
        changed.roles.remove(&space);
        self.persist_user(&changed)?;
        *u = changed;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn space(name: &str) -> NewSpace {
        NewSpace {
            name: name.to_string(),
            partition_num: 1,
            replica_factor: 1,
            vid_type: quiver_api::VidType::Int64,
            comment: None,
        }
    }

    /// Job ids go up from 1 in submission order and survive a reopen; a swap from a record that is no longer the
    /// stored one changes nothing, and a swap from the stored one replaces it.
    #[test]
    fn job_records_are_compared_and_set() {
        let kv: Arc<dyn KvEngine> = Arc::new(quiver_kv::MemEngine::new());
        let meta = MetaStore::open(kv.clone()).unwrap();
        let a = meta.add_job(1, NewJob::of(JobKind::Stats)).unwrap();
        let b = meta
            .add_job(
                2,
                NewJob { kind: JobKind::RebuildIndex(SchemaKind::Tag), indexes: vec![7], paras: vec!["i".into()] },
            )
            .unwrap();
        assert_eq!((a.job.id, b.job.id), (1, 2));
        assert_eq!((a.job.status, a.runner.as_deref()), (JobStatus::Queue, None));
        let mut taken = a.clone();
        taken.job.status = JobStatus::Running;
        taken.runner = Some("one".into());
        assert!(meta.swap_job(&a, taken.clone()).unwrap());
        let mut other = a.clone();
        other.runner = Some("two".into());
        assert!(!meta.swap_job(&a, other).unwrap(), "a stale record is not swapped");
        let mut forged = taken.clone();
        forged.job.id = 2;
        assert!(meta.swap_job(&taken, forged).is_err(), "a record is swapped only for its own job's");
        let reopened = MetaStore::open(kv).unwrap();
        assert_eq!(reopened.job_records(), vec![taken, b]);
        assert_eq!(reopened.add_job(1, NewJob::of(JobKind::Flush)).unwrap().job.id, 3);
    }

    #[test]
    fn issued_space_ids_outlive_their_spaces() {
        let meta = MetaStore::open(Arc::new(quiver_kv::MemEngine::new())).unwrap();
        assert_eq!(meta.space_ids_issued().unwrap(), 0);
        assert!(meta.create_space(space("a"), false).unwrap());
        assert!(meta.create_space(space("b"), false).unwrap());
        assert_eq!(meta.space_ids_issued().unwrap(), 2);
        meta.drop_space("b", false).unwrap();
        meta.drop_space("a", false).unwrap();
        assert_eq!(meta.space_ids_issued().unwrap(), 2, "a dropped space's id stays issued");
        assert!(meta.create_space(space("c"), false).unwrap());
        assert_eq!(meta.space("c").unwrap().id, 3);
        assert_eq!(meta.space_ids_issued().unwrap(), 3);
    }

    #[test]
    fn space_ids_stop_below_the_raft_range() {
        let kv: Arc<dyn KvEngine> = Arc::new(quiver_kv::MemEngine::new());
        let mut b = WriteBatch::new();
        let mut key = META_PREFIX.to_vec();
        key.extend_from_slice(b"next_space_id");
        b.put(key, (quiver_common::limits::SPACE_ID_MAX - 1).to_be_bytes().to_vec());
        kv.write(b).unwrap();
        let meta = MetaStore::open(kv).unwrap();
        assert!(meta.create_space(space("last"), false).unwrap());
        assert_eq!(meta.space("last").unwrap().id, quiver_common::limits::SPACE_ID_MAX);
        let err = meta.create_space(space("one_more"), false).unwrap_err();
        assert_eq!(err.to_string(), "No space id is left: space ids are never reused");
    }
}
