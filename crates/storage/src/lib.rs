//! Graph storage over a key-value engine: key layout ([`keys`]), row codec ([`codec`]) and the in-process
//! [`StorageClient`] ([`EmbeddedStorage`]).
//!
//! **Architecture invariants:** storage knows nothing of nGQL text. Every mutation of one statement is applied as
//! one atomic `WriteBatch`: an edge's out-key and in-key, a vertex and its tags, always together. A write is
//! acknowledged only once it, and everything it read, is durable.
//!
//! ## Group commit
//! Writers take `write_lock` only to read what they depend on (IF NOT EXISTS, read-modify-write, the keys a
//! DELETE must remove) and to append their batch to the engine's log ([`KvEngine::write_buffered`]); each batch
//! gets a sequence number in log order. They then wait in [`CommitQueue::wait_durable`]: the first waiter fsyncs
//! the log once for every batch appended so far, and the others that arrived meanwhile find their number covered
//! and return without an fsync of their own. A reader may see a batch a moment before its writer is
//! acknowledged; a crash in that window loses the batch whole, and its writer was never told it succeeded.

pub mod bulk;
pub mod codec;
pub mod ecache;
mod expand;
pub mod index;
pub mod jobs;
pub mod keys;
mod replica;
mod search;
pub mod topology;
mod ttl;
pub mod vcache;
mod write;

pub use expand::finish as check_expand_counts;
pub use replica::{CommitObserver, Proposer};
pub use search::{search_paths_by_reads, subgraph_by_reads, NeighborRead};
pub use write::PartCounters;

use quiver_api::*;
use quiver_common::eval::{eval_condition, EvalContext};
use quiver_common::expr::{EdgeMeta, Expr};
use quiver_common::limits::VCACHE_ROWS_MAX;
use quiver_common::{QError, QResult, Value};
use quiver_kv::{KvEngine, WriteBatch};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex, MutexGuard, RwLock};
use topology::{SpaceTopology, TopoEdge, TopologyStats};

pub struct EmbeddedStorage {
    kv: Arc<dyn KvEngine>,
    /// Serializes writers while they read and append, so read-modify-write and IF NOT EXISTS see a stable state.
    /// Not held across the fsync. Readers never take it. Guards the `SHOW STATS` counters.
    write_lock: Mutex<WriterState>,
    /// Where storage reads the latest schemas and the indexes it maintains, and marks built indexes ready.
    catalog: RwLock<Option<Arc<dyn Catalog>>>,
    jobs: Arc<jobs::Jobs>,
    commits: CommitQueue,
    /// The in-memory topology of each space, built from the key-value store on first use and changed with every
    /// write under `write_lock` (lock order: `write_lock`, then this map, then a space's topology).
    topologies: Arc<Topologies>,
    /// Pages whose delta is due for a merge, for the background merger.
    merges: Mutex<mpsc::Sender<MergeJob>>,
    /// Hot tags' rows, decoded, by column; changed with every write under `write_lock` (lock order: `write_lock`,
    /// then the cache's map, then a tag's columns).
    vcache: vcache::VertexCache,
    /// Read counts that decide when an edge type's properties are cached (the caches live in the topologies).
    hot_edges: ecache::HotEdges,
    /// Where storage's figures go (`num_vertices_inserted`, `num_edges_inserted`, `commit_latency_us`), if anywhere.
    metrics: std::sync::OnceLock<Arc<quiver_common::metrics::Metrics>>,
    /// Who is handed every committed batch ([`replica`]), if anyone.
    observer: RwLock<Option<CommitObserver>>,
    /// In cluster mode, where a writer's batch goes instead of the engine ([`replica`]): the partitions' Raft
    /// groups, which write it here when they apply it.
    proposer: std::sync::OnceLock<Proposer>,
    /// Serializes mirroring applied batches ([`EmbeddedStorage::mirror_applied`], which runs without the writers'
    /// lock) against building a mirror from the store, so no applied batch falls between a build's scan and the
    /// mirror going live. Lock order: `write_lock`, then this.
    mirror_lock: Mutex<()>,
    /// Spaces whose counters an applied batch changed behind the writers' back: reloaded from the store by the
    /// next writer or `SHOW STATS` read.
    stale_counters: Mutex<std::collections::HashSet<u32>>,
}

/// What the writers' lock guards besides the order of writes.
#[derive(Default)]
pub(crate) struct WriterState {
    /// Per space, the exact counters of each partition, loaded on the first write or read of the space.
    pub counters: HashMap<u32, write::SpaceCounters>,
}

type Topologies = RwLock<HashMap<u32, Arc<RwLock<SpaceTopology>>>>;

/// `(space id, signed edge type, page)`.
type MergeJob = (u32, i32, usize);

/// What a write batch changes in the in-memory mirrors of the store (the topology and the vertex property
/// cache), applied right after the batch is appended.
enum TopoOp {
    /// An edge written, with its row (mirrored in the type's property cache).
    Add(TopoEdge, Vec<u8>),
    Remove(TopoEdge),
    /// One stored copy of an edge written (its row) or deleted, as a replicated batch has it ([`replica`]): `src` is
    /// the vertex it is stored under and the type is signed (negative: the in-copy).
    Copy(TopoEdge, Option<Vec<u8>>),
    /// The space's data was removed: drop its topology and caches (the next read rebuilds the topology, empty).
    Clear,
    DropEdgeType(i32),
    /// A tag row of a vertex was written (its bytes) or deleted.
    Tag {
        vid: Value,
        tag: i32,
        row: Option<Vec<u8>>,
    },
    DropTag(i32),
    /// A vertex key written (`exists`) or deleted.
    Vertex {
        vid: Value,
        exists: bool,
    },
}

/// A key-value batch and the in-memory changes that mirror it.
#[derive(Default)]
struct Batch {
    kv: WriteBatch,
    topo: Vec<TopoOp>,
    /// The counters the batch changed, as they were before it (put back if the append fails).
    counters_before: std::collections::BTreeMap<u32, write::PartCounters>,
}

/// Sequence numbers of appended and of durable batches; see the module doc.
#[derive(Default)]
struct CommitQueue {
    /// The number of the last batch appended to the log. Advanced only under `write_lock`, after the append.
    appended: AtomicU64,
    /// The number of the last batch known durable. Held across the fsync, so waiters queue behind it.
    durable: Mutex<u64>,
    /// How many fsyncs were issued (for tests and the closing numbers).
    syncs: AtomicU64,
}

impl CommitQueue {
    /// Returns once batch `seq` (and every one before it) is durable.
    fn wait_durable(&self, kv: &dyn KvEngine, seq: u64) -> QResult<()> {
        let mut durable = self.durable.lock().expect("lock poisoned");
        if *durable >= seq {
            return Ok(());
        }
        // Everything numbered up to `target` is already in the log, so one fsync covers it all.
        let target = self.appended.load(Ordering::Acquire);
        kv.sync().map_err(kv_err)?;
        self.syncs.fetch_add(1, Ordering::Relaxed);
        *durable = target;
        Ok(())
    }
}

/// Seconds since the Unix epoch: TTL expiry and job times.
pub(crate) fn now_secs() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0)
}

fn kv_err(e: quiver_kv::KvError) -> QError {
    QError::storage(e)
}

impl EmbeddedStorage {
    pub fn new(kv: Arc<dyn KvEngine>) -> EmbeddedStorage {
        let topologies: Arc<Topologies> = Arc::default();
        let (tx, rx) = mpsc::channel::<MergeJob>();
        let merged = topologies.clone();
        // Exits when the storage (the only sender) is dropped.
        std::thread::Builder::new()
            .name("topology-merge".into())
            .spawn(move || {
                while let Ok((space, et, page)) = rx.recv() {
                    let t = merged.read().expect("lock poisoned").get(&space).cloned();
                    if let Some(t) = t {
                        t.write().expect("lock poisoned").merge_page(et, page);
                    }
                }
            })
            .expect("spawn the topology merger");
        EmbeddedStorage {
            kv,
            write_lock: Mutex::default(),
            catalog: RwLock::new(None),
            jobs: Arc::default(),
            commits: CommitQueue::default(),
            topologies,
            merges: Mutex::new(tx),
            vcache: vcache::VertexCache::default(),
            hot_edges: ecache::HotEdges::default(),
            metrics: std::sync::OnceLock::new(),
            observer: RwLock::new(None),
            proposer: std::sync::OnceLock::new(),
            mirror_lock: Mutex::new(()),
            stale_counters: Mutex::default(),
        }
    }

    /// The in-memory mirrors' sizes for `/metrics`: `(Prometheus name, help, value)`.
    pub fn memory_figures(&self) -> Vec<(String, String, f64)> {
        let topologies: Vec<_> = self.topologies.read().expect("lock poisoned").values().cloned().collect();
        let (mut bytes, mut edges, mut vertices) = (0usize, 0usize, 0usize);
        for t in topologies {
            let s = t.read().expect("lock poisoned").stats();
            bytes += s.bytes;
            edges += s.directed_edges;
            vertices += s.vertices;
        }
        let (rows, cache_bytes) = self.vcache.totals();
        [
            ("quiver_topology_bytes", "bytes of the in-memory topologies", bytes),
            ("quiver_topology_vertices", "vertices in the in-memory topologies", vertices),
            ("quiver_topology_directed_edges", "edge copies (out and in) in the in-memory topologies", edges),
            ("quiver_vertex_cache_rows", "tag rows in the vertex property cache", rows),
            ("quiver_vertex_cache_bytes", "bytes of the vertex property cache", cache_bytes),
        ]
        .into_iter()
        .map(|(n, h, v)| (n.to_string(), h.to_string(), v as f64))
        .collect()
    }

    /// Records storage's figures in `metrics` from now on.
    pub fn set_metrics(&self, metrics: Arc<quiver_common::metrics::Metrics>) {
        let _ = self.metrics.set(metrics);
    }

    fn record(&self, name: &str, value: i64) {
        if let Some(m) = self.metrics.get() {
            m.add(name, value);
        }
    }

    /// Connects storage to the catalog, as a storage service reads the meta service: the latest schemas and the
    /// indexes to maintain on every write, and where a finished index build is marked ready.
    pub fn set_catalog(&self, catalog: Arc<dyn Catalog>) {
        *self.catalog.write().expect("lock poisoned") = Some(catalog);
    }

    pub(crate) fn catalog(&self) -> Option<Arc<dyn Catalog>> {
        self.catalog.read().expect("lock poisoned").clone()
    }

    /// Rows per tag and out-edges per edge type, summed over partitions, plus totals.
    fn counted(&self, space: &SpaceDesc) -> QResult<SpaceStats> {
        self.counted_in(space, None)
    }

    /// `SHOW STATS` of partitions `parts` only (a cluster's client sums those each partition's leader counts).
    pub fn stats_of_parts(&self, space: &SpaceDesc, parts: &[u32]) -> QResult<SpaceStats> {
        self.counted_in(space, Some(parts))
    }

    /// `scan_vertices` over partitions `parts` only, in that order (a cluster's client asks each partition's leader
    /// for its partitions).
    pub fn scan_vertices_in(
        &self,
        space: &SpaceDesc,
        parts: &[u32],
        schema: Option<&SchemaRef>,
        limit: usize,
    ) -> QResult<Vec<Value>> {
        let mut out = Vec::new();
        if limit == 0 {
            return Ok(out);
        }
        let vl = space.vid_type.key_len();
        let kind = if schema.is_some() { keys::KIND_TAG } else { keys::KIND_VERTEX };
        self.scan_these_parts(space, parts, kind, &mut |k| {
            if let Some(s) = schema {
                if keys::tag_id_of_key(space, k) != s.id {
                    return Ok(true);
                }
            }
            out.push(keys::decode_vid(space, &k[keys::PREFIX_LEN..keys::PREFIX_LEN + vl])?);
            Ok(out.len() < limit)
        })?;
        Ok(out)
    }

    /// `scan_index` over partitions `parts` only: each partition's hits, per scan (a cluster's client asks each
    /// partition's leader for its partitions and puts the hits in `scan_index`'s order, by scan, then partition).
    /// A row's entries are all in its partition (an edge's in its source's), so no target repeats across partitions.
    pub fn scan_index_in(
        &self,
        space: &SpaceDesc,
        parts: &[u32],
        scans: &[IndexScan],
        budget: &quiver_common::budget::Budget,
    ) -> QResult<Vec<(u32, Vec<Vec<IndexHit>>)>> {
        let mut out: Vec<(u32, Vec<Vec<IndexHit>>)> =
            parts.iter().map(|&p| (p, vec![Vec::new(); scans.len()])).collect();
        self.scan_index_each(space, parts, scans, budget, &mut |scan, at, hit| out[at].1[scan].push(hit))?;
        Ok(out)
    }

    /// Every hit of `scans` in partitions `parts`, by scan, then partition (`parts`' order), then range, each target
    /// once; `emit` gets (the scan's position, the partition's position in `parts`, the hit).
    fn scan_index_each(
        &self,
        space: &SpaceDesc,
        parts: &[u32],
        scans: &[IndexScan],
        budget: &quiver_common::budget::Budget,
        emit: &mut dyn FnMut(usize, usize, IndexHit),
    ) -> QResult<()> {
        let mut seen = std::collections::HashSet::new();
        let mut meter = quiver_common::budget::Meter::new(budget);
        for (i, scan) in scans.iter().enumerate() {
            // Where an entry's target (VID, or src, rank, dst) starts: what identifies a hit across scans.
            let target_at = keys::PREFIX_LEN + 4 + index::fields_width(&scan.index);
            // One scan meets each target once, but for a geo index, whose rows have an entry per cell.
            let once = scans.len() == 1 && !scan.index.is_geo();
            for (at, &part) in parts.iter().enumerate() {
                for (start, end) in index::scan_ranges(space.id, part, scan)? {
                    let mut err = None;
                    self.kv
                        .scan_range(&start, &end, &mut |k, _| {
                            match index::entry_target(space, &scan.index, k).and_then(|hit| meter.tick().map(|_| hit)) {
                                Ok(hit) => {
                                    if once || seen.insert(k[target_at..].to_vec()) {
                                        emit(i, at, hit);
                                    }
                                }
                                Err(e) => err = Some(e),
                            }
                            err.is_none()
                        })
                        .map_err(kv_err)?;
                    if let Some(e) = err {
                        return Err(e);
                    }
                }
            }
        }
        budget.check()
    }

    /// An index's entries in partitions `parts` deleted, in one write.
    pub(crate) fn drop_index_data_in(&self, space: &SpaceDesc, index_id: i32, parts: &[u32]) -> QResult<()> {
        let guard = self.lock_writers();
        let mut b = Batch::default();
        for &part in parts {
            let p = index::index_prefix(space.id, part, index_id);
            let end = quiver_kv::prefix_end(&p).expect("index prefix ends");
            b.kv.delete_range(p, end);
        }
        self.commit(guard, space, b)
    }

    /// An index's entries for the rows of partitions `parts`, written anew (a cluster's client asks each
    /// partition's leader to build its partitions, then marks the index ready itself).
    pub fn build_index_in(&self, space: &SpaceDesc, index: &IndexDesc, parts: &[u32]) -> QResult<()> {
        self.build_index(space, index, parts, None, &|_, _| {})
    }

    /// The rows of a dropped tag or edge type in partitions `parts` deleted, in one write (a cluster's client asks
    /// each partition's leader for its partitions).
    pub fn drop_schema_data_in(&self, space: &SpaceDesc, schema: &SchemaRef, parts: &[u32]) -> QResult<()> {
        let mut guard = self.lock_writers();
        self.load_counters(space, &mut guard)?;
        let mut b = Batch::default();
        for (i, c) in guard.counters.get_mut(&space.id).expect("loaded above").iter_mut().enumerate() {
            if !parts.contains(&(i as u32 + 1)) {
                continue;
            }
            let removed = match schema.kind {
                SchemaKind::Tag => c.tags.remove(&schema.id).is_some(),
                SchemaKind::Edge => c.edges.remove(&schema.id).is_some(),
            };
            if removed {
                write::put_counters(&mut b.kv, space.id, i as u32 + 1, c);
            }
        }
        let vl = space.vid_type.key_len();
        for &part in parts {
            let kind = if schema.kind == SchemaKind::Tag { keys::KIND_TAG } else { keys::KIND_EDGE };
            // Tag rows come grouped by vertex: one whose only tag this was is gone with it (a vertex exists by
            // its tags, as in NebulaGraph, which keeps no vertex key by default).
            let mut orphans: Vec<Vec<u8>> = Vec::new();
            let mut group: Option<(Vec<u8>, bool, bool)> = None;
            let close = |g: Option<(Vec<u8>, bool, bool)>, orphans: &mut Vec<Vec<u8>>| {
                if let Some((vid, dropped, other)) = g {
                    if dropped && !other {
                        orphans.push(vid);
                    }
                }
            };
            self.kv
                .scan_prefix(&keys::prefix(space.id, part, kind), &mut |k, _| {
                    let off = keys::PREFIX_LEN + vl;
                    let id = if kind == keys::KIND_TAG {
                        keys::tag_id_of_key(space, k)
                    } else {
                        ((u32::from_be_bytes(k[off..off + 4].try_into().expect("edge key")) ^ (1 << 31)) as i32).abs()
                    };
                    if kind == keys::KIND_TAG {
                        let vid = &k[keys::PREFIX_LEN..off];
                        if group.as_ref().is_none_or(|(g, _, _)| g.as_slice() != vid) {
                            close(group.take(), &mut orphans);
                            group = Some((vid.to_vec(), false, false));
                        }
                        let g = group.as_mut().expect("set above");
                        if id == schema.id {
                            g.1 = true;
                        } else {
                            g.2 = true;
                        }
                    }
                    if id == schema.id {
                        b.kv.delete(k.to_vec());
                    }
                    true
                })
                .map_err(kv_err)?;
            close(group.take(), &mut orphans);
            let c = &mut guard.counters.get_mut(&space.id).expect("loaded above")[part as usize - 1];
            let mut gone = 0;
            for vid in orphans {
                let mut vkey = keys::prefix(space.id, part, keys::KIND_VERTEX);
                vkey.extend_from_slice(&vid);
                if self.kv.get(&vkey).map_err(kv_err)?.is_some() {
                    b.kv.delete(vkey);
                    b.topo.push(TopoOp::Vertex { vid: keys::decode_vid(space, &vid)?, exists: false });
                    gone += 1;
                }
            }
            if gone > 0 {
                c.vertices -= gone;
                debug_assert!(c.vertices >= 0, "a partition's vertex count went below zero");
                write::put_counters(&mut b.kv, space.id, part, c);
            }
        }
        b.topo.push(if schema.kind == SchemaKind::Edge {
            TopoOp::DropEdgeType(schema.id)
        } else {
            TopoOp::DropTag(schema.id)
        });
        self.commit(guard, space, b)
    }

    fn counted_in(&self, space: &SpaceDesc, only: Option<&[u32]>) -> QResult<SpaceStats> {
        let mut w = self.lock_writers();
        self.load_counters(space, &mut w)?;
        let parts = &w.counters[&space.id];
        let mut tags: std::collections::BTreeMap<i32, i64> = Default::default();
        let mut edges: std::collections::BTreeMap<i32, i64> = Default::default();
        let mut stats = SpaceStats::default();
        let wanted = |i: usize| only.is_none_or(|o| o.contains(&(i as u32 + 1)));
        for (_, p) in parts.iter().enumerate().filter(|(i, _)| wanted(*i)) {
            for (id, n) in &p.tags {
                *tags.entry(*id).or_default() += n;
            }
            for (id, n) in &p.edges {
                *edges.entry(*id).or_default() += n;
                stats.total_edges += n;
            }
            stats.vertices += p.vertices;
        }
        stats.tags = tags.into_iter().collect();
        stats.edges = edges.into_iter().collect();
        Ok(stats)
    }

    /// Rows of one tag or edge type (out-edges), summed over partitions.
    pub(crate) fn rows_of(&self, space: &SpaceDesc, kind: SchemaKind, id: i32) -> QResult<i64> {
        Ok(self.counted(space)?.rows(kind, id))
    }

    /// The topology of `space`, built from the key-value store if this is its first use.
    pub fn topology(&self, space: &SpaceDesc) -> QResult<Arc<RwLock<SpaceTopology>>> {
        if let Some(t) = self.topologies.read().expect("lock poisoned").get(&space.id) {
            return Ok(t.clone());
        }
        // Built under the writers' lock so no write falls between the scan and the topology going live.
        let _guard = self.lock_for_build();
        if let Some(t) = self.topologies.read().expect("lock poisoned").get(&space.id) {
            return Ok(t.clone());
        }
        let vl = space.vid_type.key_len();
        // The topology outlives the query that happens to build it: not the query's memory.
        let t = quiver_common::memory::untracked(|| {
            SpaceTopology::build(
                space,
                &mut |visit| {
                    self.scan_parts(space, keys::KIND_EDGE, &mut |k| {
                        let from = &k[keys::PREFIX_LEN..keys::PREFIX_LEN + vl];
                        keys::parse_edge_key_raw(space, k).and_then(|(et, rank, to)| visit(from, et, rank, to))?;
                        Ok(true)
                    })
                },
                &mut |visit| {
                    self.scan_parts(space, keys::KIND_VERTEX, &mut |k| {
                        visit(&k[keys::PREFIX_LEN..keys::PREFIX_LEN + vl])?;
                        Ok(true)
                    })
                },
            )
        })?;
        let t = Arc::new(RwLock::new(t));
        self.topologies.write().expect("lock poisoned").insert(space.id, t.clone());
        Ok(t)
    }

    /// Calls `visit` with every key of `kind` in `space`, partition by partition, until it returns `false`; its
    /// first error stops the scan and is returned.
    fn scan_parts(&self, space: &SpaceDesc, kind: u8, visit: &mut dyn FnMut(&[u8]) -> QResult<bool>) -> QResult<()> {
        let all = space.all_parts();
        self.scan_these_parts(space, &all, kind, visit)
    }

    fn scan_these_parts(
        &self,
        space: &SpaceDesc,
        parts: &[u32],
        kind: u8,
        visit: &mut dyn FnMut(&[u8]) -> QResult<bool>,
    ) -> QResult<()> {
        for &part in parts {
            let mut outcome = Ok(true);
            self.kv
                .scan_prefix(&keys::prefix(space.id, part, kind), &mut |k, _| {
                    outcome = visit(k);
                    matches!(outcome, Ok(true))
                })
                .map_err(kv_err)?;
            if !outcome? {
                break;
            }
        }
        Ok(())
    }

    /// Vertex and edge counts and memory of a space's topology (building it if needed).
    pub fn topology_stats(&self, space: &SpaceDesc) -> QResult<TopologyStats> {
        Ok(self.topology(space)?.read().expect("lock poisoned").stats())
    }

    /// How many log fsyncs storage has issued; fewer than acknowledged writes when group commit works.
    pub fn sync_count(&self) -> u64 {
        self.commits.syncs.load(Ordering::Relaxed)
    }

    /// How many non-empty batches storage has appended to the log.
    pub fn batch_count(&self) -> u64 {
        self.commits.appended.load(Ordering::Relaxed)
    }

    /// The writers' lock. A writer that panicked while holding it (a bug) leaves no half-written batch in the store
    /// (a batch is written whole or not at all), but may have left the counters or the in-memory mirrors half
    /// changed: they are dropped, to be reloaded and rebuilt from the store, and writes go on.
    fn lock_writers(&self) -> MutexGuard<'_, WriterState> {
        match self.write_lock.lock() {
            Ok(g) => g,
            Err(poisoned) => {
                let mut g = poisoned.into_inner();
                log::error!("a writer panicked while holding the writers' lock: counters and caches are rebuilt");
                g.counters.clear();
                let spaces: Vec<u32> =
                    self.topologies.read().unwrap_or_else(|p| p.into_inner()).keys().copied().collect();
                self.topologies.write().unwrap_or_else(|p| p.into_inner()).clear();
                self.vcache.clear();
                for space in spaces {
                    self.hot_edges.forget_space(space);
                }
                self.write_lock.clear_poison();
                g
            }
        }
    }

    /// What a mirror's build from the store holds: the writers' lock, and the lock that keeps replicated applies
    /// from being mirrored until the build is live (they are mirrored after it, again: mirroring is idempotent).
    pub(crate) fn lock_for_build(&self) -> (MutexGuard<'_, WriterState>, MutexGuard<'_, ()>) {
        let writers = self.lock_writers();
        (writers, self.mirror_lock.lock().unwrap_or_else(|p| p.into_inner()))
    }

    fn keys_with_prefix(&self, prefix: &[u8]) -> QResult<Vec<Vec<u8>>> {
        let mut keys = Vec::new();
        self.kv
            .scan_prefix(prefix, &mut |k, _| {
                keys.push(k.to_vec());
                true
            })
            .map_err(kv_err)?;
        Ok(keys)
    }

    /// Reads the row at `key`, lets `decide` compute the new one, and writes it with `put`, all under the write
    /// lock so no other write to the space comes in between.
    fn rmw(
        &self,
        key: Vec<u8>,
        schema: &SchemaRef,
        decide: &mut dyn FnMut(Option<&Props>) -> QResult<RmwDecision>,
        space: &SpaceDesc,
        put: impl FnOnce(&mut write::Tx<'_>, &mut WriterState, Vec<u8>) -> QResult<()>,
    ) -> QResult<Option<Props>> {
        let mut guard = self.lock_writers();
        let now = now_secs();
        // An expired row is absent: UPDATE does not find it, UPSERT writes a new one.
        let current = self
            .kv
            .get(&key)
            .map_err(kv_err)?
            .map(|r| codec::decode(schema, &r))
            .transpose()?
            .filter(|p| !ttl::expired(schema, p, now));
        match decide(current.as_ref())? {
            RmwDecision::Keep => {
                self.commit(guard, space, Batch::default())?;
                Ok(current)
            }
            RmwDecision::Write(values) => {
                let row = codec::encode(schema.latest(), &values);
                let props = codec::decode(schema, &row)?;
                let mut tx = write::Tx::new(self, space, &mut guard)?;
                if let Err(e) = put(&mut tx, &mut guard, row) {
                    tx.rollback(&mut guard);
                    return Err(e);
                }
                let b = tx.finish(&guard);
                self.commit(guard, space, b)?;
                Ok(Some(props))
            }
        }
    }

    /// Appends `b` (built under `guard`) and applies its topology change, releases the writers' lock, and waits
    /// until `b` is durable. An empty batch still waits for every batch appended before it, since its writer may
    /// have read them.
    fn commit(&self, mut guard: MutexGuard<'_, WriterState>, space: &SpaceDesc, b: Batch) -> QResult<()> {
        let appending = std::time::Instant::now();
        if let Some(proposer) = self.proposer.get() {
            return self.propose(guard, proposer, space, b);
        }
        let seq = if b.kv.is_empty() {
            self.commits.appended.load(Ordering::Acquire)
        } else {
            let observed = self.commit_observer().map(|o| (o, b.kv.clone()));
            if let Err(e) = self.kv.write_buffered(b.kv) {
                write::restore_counters(&mut guard, space.id, b.counters_before);
                return Err(kv_err(e));
            }
            if let Some((observer, batch)) = observed {
                observer(space, &batch);
            }
            self.commits.appended.fetch_add(1, Ordering::AcqRel) + 1
        };
        self.apply_topology(space, b.topo);
        drop(guard);
        self.commits.wait_durable(self.kv.as_ref(), seq)?;
        self.record("commit_latency_us", appending.elapsed().as_micros().min(i64::MAX as u128) as i64);
        Ok(())
    }

    /// Drops a space's in-memory mirrors of the store (topology, cached tags, hot edges), to be built again from
    /// the store on their next use. The caller holds the writers' lock, or the store changed under none.
    pub(crate) fn forget_mirrors(&self, space_id: u32) {
        self.topologies.write().expect("lock poisoned").remove(&space_id);
        self.vcache.drop_space(space_id);
        self.hot_edges.forget_space(space_id);
    }

    /// Mirrors an appended batch in the space's topology, if it is built (else it is built later from the store).
    fn apply_topology(&self, space: &SpaceDesc, ops: Vec<TopoOp>) {
        if ops.is_empty() {
            return;
        }
        if ops.iter().any(|op| matches!(op, TopoOp::Clear)) {
            self.forget_mirrors(space.id);
            return;
        }
        self.apply_vcache(space, &ops);
        if !ops.iter().any(|op| {
            matches!(
                op,
                TopoOp::Add(..)
                    | TopoOp::Remove(_)
                    | TopoOp::Copy(..)
                    | TopoOp::DropEdgeType(_)
                    | TopoOp::Vertex { .. }
            )
        }) {
            return;
        }
        let Some(t) = self.topologies.read().expect("lock poisoned").get(&space.id).cloned() else {
            return;
        };
        let mut due = Vec::new();
        {
            let mut t = t.write().expect("lock poisoned");
            for op in &ops {
                match op {
                    TopoOp::Add(e, row) => {
                        t.add_edge(e, &mut due);
                        for key in t.mirror_edge_row(e, Some(row)) {
                            self.hot_edges.cool(space.id, key);
                        }
                    }
                    TopoOp::Remove(e) => {
                        t.mirror_edge_row(e, None);
                        t.remove_edge(e, &mut due);
                    }
                    TopoOp::Copy(c, row) => {
                        // Each copy is mirrored in the cache of its own signed type (embedded, only the out-copies
                        // have one), in the order of `Add` (after the ids exist) and `Remove` (before they may go).
                        match row {
                            Some(row) => {
                                t.change_copy(c, true, &mut due);
                                if let Some(key) = t.mirror_copy_row(c, Some(row)) {
                                    self.hot_edges.cool(space.id, key);
                                }
                            }
                            None => {
                                t.mirror_copy_row(c, None);
                                t.change_copy(c, false, &mut due);
                            }
                        }
                    }
                    TopoOp::DropEdgeType(et) => {
                        t.drop_edge_type(*et);
                        self.hot_edges.cool_type(space.id, *et);
                    }
                    TopoOp::Vertex { vid, exists } => t.set_vertex(vid, *exists),
                    TopoOp::Tag { .. } | TopoOp::DropTag(_) => {}
                    TopoOp::Clear => unreachable!("handled above"),
                }
            }
        }
        due.sort_unstable();
        due.dedup();
        let tx = self.merges.lock().expect("lock poisoned");
        for (et, page) in due {
            // The merger only exits when storage is dropped, so a send cannot fail while `self` lives.
            let _ = tx.send((space.id, et, page));
        }
    }
}

impl EmbeddedStorage {
    /// Mirrors an appended batch's tag writes in the cached tags (see [`vcache`]); called under the writers' lock.
    fn apply_vcache(&self, space: &SpaceDesc, ops: &[TopoOp]) {
        for op in ops {
            match op {
                TopoOp::DropTag(tag) => self.vcache.drop_tag(space.id, *tag),
                TopoOp::Tag { vid, tag, row } => {
                    let Some(c) = self.vcache.get_any(space.id, *tag) else {
                        continue;
                    };
                    let mut c = c.write().expect("lock poisoned");
                    // Decoded with the cache's schema, as its rows were: a row of an older version reads in the
                    // cache's shape; one of a version the cache does not know fails, and the cache goes.
                    match row.as_ref().map(|bytes| codec::decode(&c.schema, bytes)).transpose() {
                        Ok(props) => c.set(vid, props),
                        Err(_) => {
                            drop(c);
                            self.vcache.drop_tag(space.id, *tag);
                        }
                    }
                }
                _ => {}
            }
        }
    }

    /// The cache of tag `schema` for a read of `n` vertices: built (under the writers' lock) when this read makes
    /// the tag hot; `None` when it is not cached.
    fn tag_cache(
        &self,
        space: &SpaceDesc,
        schema: &SchemaRef,
        n: usize,
    ) -> QResult<Option<Arc<RwLock<vcache::TagCache>>>> {
        if ttl::has_ttl(schema) {
            return Ok(None);
        }
        if let Some(c) = self.vcache.get(space.id, schema) {
            return Ok(Some(c));
        }
        let mut rows = || self.rows_of(space, SchemaKind::Tag, schema.id);
        if !self.vcache.count_reads(space.id, schema.id, n as u64, &mut rows)? || rows()? > VCACHE_ROWS_MAX {
            return Ok(None);
        }
        let _guard = self.lock_for_build();
        // The cache outlives the query that happens to build it: not the query's memory.
        quiver_common::memory::untracked(|| self.load_tag_cache(space, schema))
    }

    /// Reads a tag's rows into a new cache entry (the writers' lock held); `None` if a newer schema version raced.
    fn load_tag_cache(&self, space: &SpaceDesc, schema: &SchemaRef) -> QResult<Option<Arc<RwLock<vcache::TagCache>>>> {
        let mut cols = vcache::TagCache::new(space, schema.clone());
        let vl = space.vid_type.key_len();
        for part in 1..=space.partition_num {
            let mut err = None;
            self.kv
                .scan_prefix(&keys::prefix(space.id, part, keys::KIND_TAG), &mut |k, v| {
                    if keys::tag_id_of_key(space, k) != schema.id {
                        return true;
                    }
                    let r = codec::decode(schema, v)
                        .and_then(|props| cols.set_key(&k[keys::PREFIX_LEN..keys::PREFIX_LEN + vl], props));
                    err = r.err();
                    err.is_none()
                })
                .map_err(kv_err)?;
            if let Some(e) = err {
                // A row of a schema version newer than `schema` (an ALTER raced this read): not cached now.
                log::debug!("tag {} of space {} not cached: {e}", schema.name, space.name);
                self.vcache.cool(space.id, schema.id);
                return Ok(None);
            }
        }
        log::debug!("cached tag {} of space {}: {} rows, {} bytes", schema.name, space.name, cols.rows(), cols.bytes());
        Ok(Some(self.vcache.insert(space.id, cols)))
    }

    /// Rows and bytes of each cached tag of `space`: `(tag id, rows, bytes)`.
    pub fn vertex_cache_stats(&self, space: &SpaceDesc) -> Vec<(i32, usize, usize)> {
        self.vcache.stats(space.id)
    }
}

/// Which properties of one edge type a neighbours request decodes: those it returns, then those only its filter
/// reads (dropped again after the filter).
struct EdgeProjection {
    /// Indices into the schema's current version, returned ones first.
    picked: Vec<usize>,
    /// Names of `picked`; `None` when nothing is decoded.
    decoded: Option<Arc<[String]>>,
    /// Names of the returned prefix of `picked`; `None` when the request returns no properties.
    returned: Option<Arc<[String]>>,
}

impl EdgeProjection {
    fn new(schema: &SchemaDesc, returned: &PropSelection, filter_props: &[String]) -> EdgeProjection {
        let latest = schema.latest();
        let mut picked: Vec<usize> =
            (0..latest.props.len()).filter(|&i| returned.wants(&latest.props[i].name)).collect();
        let n_returned = picked.len();
        picked.extend(
            (0..latest.props.len())
                .filter(|&i| !returned.wants(&latest.props[i].name) && filter_props.contains(&latest.props[i].name)),
        );
        let names = |idx: &[usize]| -> Arc<[String]> { idx.iter().map(|&i| latest.props[i].name.clone()).collect() };
        let returns = *returned != PropSelection::None;
        EdgeProjection {
            decoded: (returns || picked.len() > n_returned).then(|| names(&picked)),
            returned: returns.then(|| names(&picked[..n_returned])),
            picked,
        }
    }
}

impl EdgeProjection {
    /// Applies the request's filter to an edge decoded by this projection, then drops what only the filter read.
    fn finish(
        &self,
        mut edge: NeighborEdge,
        filter: Option<&Expr>,
        schema: &SchemaDesc,
        request_types: &[&str],
    ) -> QResult<Option<NeighborEdge>> {
        let Some(filter) = filter else {
            return Ok(Some(edge));
        };
        let ctx = EdgeFilterContext { edge: &edge, schema, request_types };
        if !eval_condition(filter, &ctx)? {
            return Ok(None);
        }
        edge.props = match (&self.returned, edge.props) {
            (None, _) | (_, None) => None,
            (Some(names), Some(mut row)) => {
                row.values.truncate(names.len());
                Some(PropRow { names: names.clone(), values: row.values })
            }
        };
        Ok(Some(edge))
    }
}

/// What a pushed-down filter sees: one edge, decoded as far as the filter and the projection need.
struct EdgeFilterContext<'a> {
    edge: &'a NeighborEdge,
    schema: &'a SchemaDesc,
    /// Names of all edge types in the request: a property of one of them on another type's row is EMPTY.
    request_types: &'a [&'a str],
}

impl EvalContext for EdgeFilterContext<'_> {
    fn label_prop(&self, label: &str, prop: &str) -> QResult<Value> {
        if label == self.schema.name {
            return Ok(self.edge.props.as_ref().and_then(|p| p.get(prop)).cloned().unwrap_or(Value::Empty));
        }
        if self.request_types.contains(&label) {
            return Ok(Value::Empty);
        }
        Err(QError::semantic(format!("Invalid label identifiers: {label}")))
    }

    fn src_prop(&self, tag: &str, prop: &str) -> QResult<Value> {
        Err(QError::execution(format!("a pushed-down filter cannot read `$^.{tag}.{prop}' in storage")))
    }

    fn dst_prop(&self, tag: &str, prop: &str) -> QResult<Value> {
        Err(QError::execution(format!("a pushed-down filter cannot read `$$.{tag}.{prop}' in storage")))
    }

    fn edge_meta(&self, edge: &str, meta: EdgeMeta) -> QResult<Value> {
        if edge != self.schema.name {
            return if self.request_types.contains(&edge) {
                Ok(Value::Empty)
            } else {
                Err(QError::semantic(format!("Invalid label identifiers: {edge}")))
            };
        }
        Ok(match meta {
            EdgeMeta::Src => self.edge.from.clone(),
            EdgeMeta::Dst => self.edge.to.clone(),
            EdgeMeta::Rank => Value::Int(self.edge.rank),
            EdgeMeta::Type => Value::Int(self.edge.edge_type as i64),
        })
    }
}

impl EmbeddedStorage {
    /// Whether each of `vids` exists (has its vertex key), from the topology's bits; `None` when the space's topology
    /// is not built. The bits are mirrored under the writers' lock, as the store is written.
    fn existing_in_topology<'v>(&self, space: &SpaceDesc, vids: impl Iterator<Item = &'v Value>) -> Option<Vec<bool>> {
        let t = self.topologies.read().expect("lock poisoned").get(&space.id).cloned()?;
        let t = t.read().expect("lock poisoned");
        Some(vids.map(|vid| t.dict.get(vid).is_some_and(|id| t.vertex_exists(id))).collect())
    }
}

impl StorageClient for EmbeddedStorage {
    fn get_vertices(
        &self,
        space: &SpaceDesc,
        vids: &[Value],
        tags: &[SchemaRef],
        props: &PropSelection,
    ) -> QResult<Vec<Option<VertexData>>> {
        if tags.is_empty() {
            // Only whether each vertex exists: the topology's bits answer, if it is built.
            if let Some(exist) = self.existing_in_topology(space, vids.iter()) {
                return Ok(vids
                    .iter()
                    .zip(exist)
                    .map(|(vid, e)| e.then(|| VertexData { vid: vid.clone(), tags: Vec::new() }))
                    .collect());
            }
        }
        let mut out = Vec::with_capacity(vids.len());
        let now = now_secs();
        let caches = tags.iter().map(|t| self.tag_cache(space, t, vids.len())).collect::<QResult<Vec<_>>>()?;
        let cached: Vec<Option<std::sync::RwLockReadGuard<'_, vcache::TagCache>>> =
            caches.iter().map(|c| c.as_ref().map(|c| c.read().expect("lock poisoned"))).collect();
        // The tags read from the store.
        let stored: Vec<&SchemaRef> = tags.iter().zip(&cached).filter(|(_, c)| c.is_none()).map(|(t, _)| t).collect();
        // Per tag, once: the selected properties of its current version, under names every row shares.
        let projections: Vec<(Vec<usize>, Arc<[String]>)> =
            tags.iter().map(|t| TagColumns::selected(t, props)).collect();
        // Every stored row in one batched read, vertex by vertex in `stored`'s order.
        let keys: Vec<Vec<u8>> =
            vids.iter().flat_map(|vid| stored.iter().map(move |t| keys::tag_key(space, vid, t.id))).collect();
        let mut rows = if keys.is_empty() { Vec::new() } else { self.kv.multi_get(&keys).map_err(kv_err)? }.into_iter();
        // Vertices none of whose read tags is there: whether the vertex itself is, asked afterwards in one batch.
        let mut unknown: Vec<usize> = Vec::new();
        for vid in vids {
            let mut data = VertexData { vid: vid.clone(), tags: Vec::new() };
            let mut expired = false;
            for ((t, c), (picked, names)) in tags.iter().zip(&cached).zip(&projections) {
                if let Some(c) = c {
                    if let Some(row) = c.get(vid, picked, names) {
                        data.tags.push((t.clone(), row));
                    }
                    continue;
                }
                if let Some(row) = rows.next().flatten() {
                    // The TTL column is decoded for the expiry check even when not selected.
                    let mut decoded =
                        codec::decode_only(t, &row, &|n| props.wants(n) || (ttl::has_ttl(t) && n == t.ttl_col))?;
                    if ttl::expired(t, &decoded, now) {
                        expired = true;
                    } else {
                        let values = names.iter().map(|n| decoded.remove(n).unwrap_or(Value::NULL)).collect();
                        data.tags.push((t.clone(), PropRow { names: names.clone(), values }));
                    }
                }
            }
            // A vertex whose read tags have all expired is gone, as a vertex whose only tag expired.
            if data.tags.is_empty() {
                if !expired {
                    unknown.push(out.len());
                }
                out.push(None);
            } else {
                out.push(Some(data));
            }
        }
        if !unknown.is_empty() {
            // The topology's bits answer, if it is built (edges to vertices never inserted are common: each would
            // be a point read of the store on every visit).
            if let Some(exist) = self.existing_in_topology(space, unknown.iter().map(|&i| &vids[i])) {
                for (&i, e) in unknown.iter().zip(exist) {
                    if e {
                        out[i] = Some(VertexData { vid: vids[i].clone(), tags: Vec::new() });
                    }
                }
                return Ok(out);
            }
            let keys: Vec<Vec<u8>> = unknown.iter().map(|&i| keys::vertex_key(space, &vids[i])).collect();
            for (&i, found) in unknown.iter().zip(self.kv.multi_get(&keys).map_err(kv_err)?) {
                if found.is_some() {
                    out[i] = Some(VertexData { vid: vids[i].clone(), tags: Vec::new() });
                }
            }
        }
        Ok(out)
    }

    fn get_tag_columns(
        &self,
        space: &SpaceDesc,
        vids: &[Value],
        tags: &[SchemaRef],
        props: &PropSelection,
    ) -> QResult<Vec<TagColumns>> {
        let mut out = Vec::with_capacity(tags.len());
        for t in tags {
            // Reads count towards a tag turning hot once, in `get_vertices` when the tag is not cached yet.
            match self.tag_cache(space, t, 0)? {
                // A cached tag's values are copied straight from its columns.
                Some(c) => {
                    let (picked, names) = TagColumns::selected(t, props);
                    let (present, columns) = c.read().expect("lock poisoned").gather(vids, &picked);
                    out.push(TagColumns { schema: t.clone(), present, names, columns });
                }
                None => {
                    let rows = self.get_vertices(space, vids, std::slice::from_ref(t), props)?;
                    out.push(TagColumns::from_vertices(t, props, &rows));
                }
            }
        }
        Ok(out)
    }

    fn get_edges(
        &self,
        space: &SpaceDesc,
        schema: &SchemaRef,
        edge_keys: &[EdgeKeyVal],
    ) -> QResult<Vec<Option<Props>>> {
        let ks: Vec<Vec<u8>> =
            edge_keys.iter().map(|k| keys::edge_key(space, &k.src, k.edge_type, k.rank, &k.dst)).collect();
        let now = now_secs();
        self.kv
            .multi_get(&ks)
            .map_err(kv_err)?
            .into_iter()
            .map(|row| {
                Ok(row.map(|r| codec::decode(schema, &r)).transpose()?.filter(|p| !ttl::expired(schema, p, now)))
            })
            .collect()
    }

    fn find_paths(&self, space: &SpaceDesc, req: &PathSearchRequest) -> QResult<PathSearchResult> {
        self.search_paths(space, req)
    }

    fn subgraph(
        &self,
        space: &SpaceDesc,
        req: &SubgraphRequest,
        expandable: &mut dyn FnMut(&[Value]) -> QResult<Vec<bool>>,
    ) -> QResult<Vec<SubgraphRound>> {
        self.subgraph_rounds(space, req, expandable)
    }

    fn get_neighbors(&self, space: &SpaceDesc, req: &NeighborsRequest) -> QResult<Vec<NeighborEdge>> {
        // The topology knows which edges exist, not whether they expired: TTL edge types are read from the store.
        let any_ttl = req.edge_types.iter().any(|(_, s)| ttl::has_ttl(s));
        if req.props == PropSelection::None && req.filter.is_none() && !any_ttl {
            return self.neighbors_from_topology(space, req);
        }
        let now = now_secs();
        // Properties the filter reads are decoded even when not returned.
        let mut filter_props = Vec::new();
        if let Some(f) = &req.filter {
            f.visit(&mut |e| {
                if let Expr::LabelProp { prop, .. } = e {
                    filter_props.push(prop.clone());
                }
            });
        }
        let names: Vec<&str> = req.edge_types.iter().map(|(_, s)| s.name.as_str()).collect();
        // Per edge type, once: which properties are decoded (returned ones first, then those only the filter
        // reads), under names every row of that type shares.
        let projections: Vec<EdgeProjection> =
            req.edge_types.iter().map(|(_, schema)| EdgeProjection::new(schema, &req.props, &filter_props)).collect();
        if !any_ttl {
            if let Some(out) = self.neighbors_from_edge_cache(space, req, &projections, &names)? {
                return Ok(out);
            }
        }
        let mut sink = expand::EdgeSink::new(req);
        if sink.full() {
            return sink.finish();
        }
        // Every (vertex, type) prefix in the request's order, read with one cursor.
        let types = req.edge_types.len();
        let prefixes: Vec<Vec<u8>> = req
            .vids
            .iter()
            .flat_map(|vid| req.edge_types.iter().map(move |(et, _)| keys::edge_type_prefix(space, vid, *et)))
            .collect();
        self.kv
            .scan_prefixes(&prefixes, &mut |i, k, v| {
                let (vid, (et, schema), projection) =
                    (&req.vids[i / types], &req.edge_types[i % types], &projections[i % types]);
                let edge = (|| -> QResult<Option<NeighborEdge>> {
                    let (_, rank, to) = keys::parse_edge_key(space, k)?;
                    if ttl::row_expired(schema, v, now)? {
                        return Ok(None);
                    }
                    let props = match &projection.decoded {
                        None => None,
                        Some(names) => Some(PropRow {
                            names: names.clone(),
                            values: codec::decode_indices(schema, v, &projection.picked)?,
                        }),
                    };
                    let edge = NeighborEdge { from: vid.clone(), edge_type: *et, rank, to, props };
                    projection.finish(edge, req.filter.as_ref(), schema, &names)
                })();
                sink.take(edge)
            })
            .map_err(kv_err)?;
        sink.finish()
    }

    fn expand(&self, space: &SpaceDesc, req: &ExpandRequest) -> QResult<ExpandResult> {
        self.expand_topology(space, req)
    }

    fn write(&self, space: &SpaceDesc, mutations: Vec<Mutation>) -> QResult<()> {
        let vertices = mutations.iter().filter(|m| matches!(m, Mutation::InsertVertex { .. })).count() as i64;
        let edges = mutations.iter().filter(|m| matches!(m, Mutation::InsertEdge { .. })).count() as i64;
        // The rows are encoded before the writers' lock is taken: concurrent writers encode in parallel, and the
        // lock covers only what must see the batches before it (reads, counters, the log append).
        let mut encoded = Vec::with_capacity(mutations.len());
        for m in &mutations {
            match m {
                Mutation::InsertVertex { tags, .. } => {
                    encoded.extend(tags.iter().map(|(schema, values)| codec::encode(schema.latest(), values)))
                }
                Mutation::InsertEdge { schema, values, .. } => encoded.push(codec::encode(schema.latest(), values)),
                _ => {}
            }
        }
        let mut guard = self.lock_writers();
        let w = &mut *guard;
        let mut tx = write::Tx::new(self, space, w)?;
        let mut rows = encoded.into_iter();
        let mut next_row = || rows.next().expect("a row was encoded for every tag and edge");
        let applied = (|| -> QResult<()> {
            for m in mutations {
                match m {
                    Mutation::InsertVertex { vid, tags, if_not_exists } => {
                        tx.put_vertex(w, &vid)?;
                        for (schema, _) in tags {
                            let row = next_row();
                            if if_not_exists && tx.visible(&keys::tag_key(space, &vid, schema.id), &schema)? {
                                continue;
                            }
                            tx.put_tag(w, &vid, &schema, row)?;
                        }
                    }
                    Mutation::InsertEdge { key, schema, if_not_exists, .. } => {
                        let row = next_row();
                        if if_not_exists
                            && tx
                                .visible(&keys::edge_key(space, &key.src, key.edge_type, key.rank, &key.dst), &schema)?
                        {
                            continue;
                        }
                        tx.put_edge(w, &key, &schema, row)?;
                    }
                    Mutation::DeleteVertex { vid, with_edges } => {
                        tx.delete_vertex(w, &vid)?;
                        tx.delete_all_tags(w, &vid)?;
                        if with_edges {
                            tx.delete_edges_of(w, &vid)?;
                        }
                    }
                    Mutation::DeleteTags { vid, tags } => match tags {
                        Some(tags) => {
                            for t in tags {
                                tx.delete_tag(w, &vid, t.id)?;
                            }
                        }
                        None => tx.delete_all_tags(w, &vid)?,
                    },
                    Mutation::DeleteEdge { key } => tx.delete_edge(w, &key)?,
                }
            }
            Ok(())
        })();
        if let Err(e) = applied {
            tx.rollback(w);
            return Err(e);
        }
        let b = tx.finish(w);
        self.commit(guard, space, b)?;
        if vertices > 0 {
            self.record("num_vertices_inserted", vertices);
        }
        if edges > 0 {
            self.record("num_edges_inserted", edges);
        }
        Ok(())
    }

    fn rmw_vertex(
        &self,
        space: &SpaceDesc,
        vid: &Value,
        schema: &SchemaRef,
        decide: &mut dyn FnMut(Option<&Props>) -> QResult<RmwDecision>,
    ) -> QResult<Option<Props>> {
        self.rmw(keys::tag_key(space, vid, schema.id), schema, decide, space, |tx, w, row| {
            tx.put_tag(w, vid, schema, row)
        })
    }

    fn rmw_edge(
        &self,
        space: &SpaceDesc,
        key: &EdgeKeyVal,
        schema: &SchemaRef,
        decide: &mut dyn FnMut(Option<&Props>) -> QResult<RmwDecision>,
    ) -> QResult<Option<Props>> {
        let out_key = keys::edge_key(space, &key.src, key.edge_type, key.rank, &key.dst);
        self.rmw(out_key, schema, decide, space, |tx, w, row| tx.put_edge(w, key, schema, row))
    }

    fn scan_vertices(&self, space: &SpaceDesc, schema: Option<&SchemaRef>, limit: usize) -> QResult<Vec<Value>> {
        let all = space.all_parts();
        self.scan_vertices_in(space, &all, schema, limit)
    }

    fn clear_space(&self, space: &SpaceDesc) -> QResult<()> {
        let mut guard = self.lock_writers();
        // The counters' records go with the range; the next use counts the (empty) space again.
        guard.counters.remove(&space.id);
        let (start, end) = keys::space_range(space.id);
        let mut b = Batch::default();
        b.kv.delete_range(start, end);
        b.topo.push(TopoOp::Clear);
        self.commit(guard, space, b)
    }

    fn drop_schema_data(&self, space: &SpaceDesc, schema: &SchemaRef) -> QResult<()> {
        self.drop_schema_data_in(space, schema, &space.all_parts())
    }

    fn scan_index(
        &self,
        space: &SpaceDesc,
        scans: &[IndexScan],
        budget: &quiver_common::budget::Budget,
    ) -> QResult<Vec<IndexHit>> {
        let all = space.all_parts();
        let mut out = Vec::new();
        self.scan_index_each(space, &all, scans, budget, &mut |_, _, hit| out.push(hit))?;
        Ok(out)
    }

    fn index_created(&self, space: &SpaceDesc, index: &IndexRef) -> QResult<Option<i64>> {
        let catalog = self.catalog().ok_or_else(|| QError::storage("indexes need the catalog"))?;
        let rows = self.rows_of(space, index.kind, index.schema_id)?;
        if rows > jobs::INLINE_BUILD_ROWS {
            let job = NewJob { kind: JobKind::RebuildIndex(index.kind), indexes: vec![index.id], paras: Vec::new() };
            return self.submit_job_internal(space, job).map(Some);
        }
        self.build_index(space, index, &space.all_parts(), None, &|_, _| {})?;
        catalog.set_index_state(space, index.id, IndexState::Ready)?;
        Ok(None)
    }

    fn drop_index_data(&self, space: &SpaceDesc, index_id: i32) -> QResult<()> {
        let all = space.all_parts();
        self.drop_index_data_in(space, index_id, &all)
    }

    fn submit_job(&self, space: &SpaceDesc, job: NewJob) -> QResult<i64> {
        self.submit_job_internal(space, job)
    }

    fn jobs(&self, space: &SpaceDesc) -> QResult<Vec<JobInfo>> {
        self.jobs_of(space)
    }

    fn stop_job(&self, space: &SpaceDesc, id: i64) -> QResult<()> {
        self.stop_job_internal(space, id)
    }

    fn recover_jobs(&self, space: &SpaceDesc, only: &[i64]) -> QResult<usize> {
        self.recover_jobs_internal(space, only)
    }

    fn create_snapshot(&self, name: &str) -> QResult<()> {
        // The catalog lives in the same engine: the checkpoint holds schemas and data of one moment. Writers are
        // held off meanwhile, so no batch is half in it (the engine's checkpoint is consistent by itself; this
        // keeps the `SHOW STATS` counters, written with their batch, in step too).
        if !self.kv.keeps_files() {
            return Err(QError::not_supported("`CREATE SNAPSHOT' of a storage that keeps no files"));
        }
        let _writers = self.lock_writers();
        self.kv.create_checkpoint(name).map_err(|e| QError::execution(format!("Snapshot failure! ({e})")))
    }

    fn snapshots(&self) -> QResult<Vec<String>> {
        self.kv.checkpoints().map_err(QError::storage)
    }

    fn drop_snapshot(&self, name: &str) -> QResult<bool> {
        self.kv.drop_checkpoint(name).map_err(QError::storage)
    }

    fn stats(&self, space: &SpaceDesc) -> QResult<SpaceStats> {
        self.counted(space)
    }
}

pub(crate) fn topo_edge(key: &EdgeKeyVal) -> TopoEdge {
    TopoEdge { src: key.src.clone(), edge_type: key.edge_type, rank: key.rank, dst: key.dst.clone() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quiver_common::PropType;

    /// A writer that panics while holding the writers' lock does not stop later writes, and the counters stay
    /// exact (they are reloaded from the store).
    #[test]
    fn a_panicked_writer_does_not_stop_writes() {
        let kv: Arc<dyn KvEngine> = Arc::new(quiver_kv::MemEngine::new());
        let catalog = Arc::new(quiver_meta::MetaStore::open(kv.clone()).unwrap());
        let st = EmbeddedStorage::new(kv);
        st.set_catalog(catalog.clone());
        let new =
            NewSpace { name: "p".into(), partition_num: 2, replica_factor: 1, vid_type: VidType::Int64, comment: None };
        catalog.create_space(new, false).unwrap();
        let space = catalog.space("p").unwrap();
        let prop = PropDef { name: "n".into(), ty: PropType::Int64, nullable: true, default: None, comment: None };
        catalog.create_schema(&space, SchemaKind::Tag, "t", vec![prop], 0, String::new(), None, false).unwrap();
        let t = catalog.schema(&space, SchemaKind::Tag, "t").unwrap();
        let insert = |vid: i64| Mutation::InsertVertex {
            vid: Value::Int(vid),
            tags: vec![(t.clone(), vec![Value::Int(vid)])],
            if_not_exists: false,
        };
        st.write(&space, vec![insert(1)]).unwrap();
        assert_eq!(st.stats(&space).unwrap().vertices, 1);
        // A writer panics while it holds the lock, its counters half changed.
        let poisoned = std::thread::scope(|s| {
            s.spawn(|| {
                let mut w = st.write_lock.lock().unwrap();
                w.counters.get_mut(&space.id).unwrap()[0].vertices += 100;
                panic!("a bug in a writer");
            })
            .join()
        });
        assert!(poisoned.is_err());
        st.write(&space, vec![insert(2)]).unwrap();
        assert_eq!(st.stats(&space).unwrap().vertices, 2, "the half-changed counters were reloaded");
    }
}
