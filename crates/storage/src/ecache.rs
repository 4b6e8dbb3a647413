//! The edge property cache: the rows of frequently read edge types, decoded once and kept in columns beside the
//! topology.
//!
//! A GO that yields edge properties (`knows.time`) cannot be answered from the topology alone: it scans the
//! key-value store under every frontier vertex (an iterator seek, then a decode per edge). Once an edge type has
//! been read with properties for [`HOT_READS`] vertices, its rows are loaded into an [`EdgeColumns`] kept in the
//! space's topology: a row per edge, found by the edge's (source, rank, destination) in the topology's dense ids,
//! and one vector of decoded values per property of the type's latest schema version. Neighbour reads then walk
//! the topology's adjacency and take each edge's properties from there, touching no key-value state.
//!
//! **Copies.** Each cache holds the stored copies of one signed type, keyed by (the vertex they are stored under,
//! rank, the other end). Embedded, every copy of a space is here, so one cache of the out-copies (`+type`) serves
//! reads in both directions (a reverse read looks its rows up with the ends swapped). A cluster host carries only
//! some partitions: an in-copy's out-copy may live on another host, so the host caches each direction apart
//! ([`HotEdges::keep_directions_apart`]), `+type` from the out-copies and `-type` from the in-copies it stores
//! (both carry the same row), and a reverse read uses only the `-type` cache. [`EdgeRows`] hides which applies.
//!
//! **Invariants** (those of the vertex cache, [`crate::vcache`]):
//! - Built under the writers' lock (with the topology only read-locked, a partition at a time, while the rows are
//!   read) and changed only under the writers' lock and the topology's write lock, right after the batch it mirrors
//!   is appended (every edge write carries its row for this); it always equals the type's rows in the store. It
//!   lives and dies with the topology, whose dense ids it uses.
//! - One schema version per cache: a reader with a newer version (after `ALTER EDGE`) drops it; a written row of a
//!   version it cannot decode drops it.
//! - Types with a TTL are never cached, nor types with more than [`ECACHE_EDGES_MAX`] edges. `DROP EDGE` drops it with
//!   the type's adjacency; `CLEAR SPACE` and bulk loads drop the whole topology.

use crate::topology::SpaceTopology;
use quiver_api::{NeighborEdge, NeighborsRequest, PropRow, SchemaKind, SchemaRef, SpaceDesc};
use quiver_common::fasthash::FastSet;
use quiver_common::limits::ECACHE_EDGES_MAX;
use quiver_common::{QError, QResult, Value};
use std::sync::{Arc, RwLock};

/// Vertices expanded with properties after which an edge type's rows are cached.
pub const HOT_READS: u64 = 4096;

/// The decoded rows of one edge type: per source vertex (by the topology's dense id), its edges sorted by
/// (rank, destination id) with their values row by row, so a vertex's edges are read from one place.
pub struct EdgeColumns {
    /// The schema the rows were decoded with (its latest version is the rows' shape).
    pub schema: SchemaRef,
    /// Whether the cache holds every edge of its type, so that it also serves reads in the other direction (a
    /// cache of out-copies built where every partition is stored).
    both_directions: bool,
    /// Properties per edge (of the latest version).
    width: usize,
    lists: Vec<EdgeList>,
    edges: usize,
}

#[derive(Default)]
struct EdgeList {
    /// (rank, destination id), sorted.
    keys: Vec<(i64, u32)>,
    /// `values[i * width + p]`: property `p` of edge `keys[i]`.
    values: Vec<Value>,
}

impl EdgeColumns {
    /// An empty cache; `both_directions`: see the field.
    pub fn new(schema: SchemaRef, both_directions: bool) -> EdgeColumns {
        let width = schema.latest().props.len();
        EdgeColumns { schema, both_directions, width, lists: Vec::new(), edges: 0 }
    }

    pub fn version(&self) -> u32 {
        self.schema.latest().version
    }

    /// Sets (`Some`: every property of the latest version, in order) or removes (`None`) the row of an edge.
    pub fn set(&mut self, src: u32, rank: i64, dst: u32, values: Option<quiver_api::PropValues>) {
        let w = self.width;
        if self.lists.len() <= src as usize {
            if values.is_none() {
                return;
            }
            self.lists.resize_with(src as usize + 1, EdgeList::default);
        }
        let list = &mut self.lists[src as usize];
        match (list.keys.binary_search(&(rank, dst)), values) {
            (Ok(i), Some(values)) => list.values[i * w..(i + 1) * w].clone_from_slice(&values),
            (Err(i), Some(values)) => {
                list.keys.insert(i, (rank, dst));
                list.values.splice(i * w..i * w, values);
                self.edges += 1;
            }
            (Ok(i), None) => {
                list.keys.remove(i);
                list.values.drain(i * w..(i + 1) * w);
                self.edges -= 1;
            }
            (Err(_), None) => {}
        }
    }

    /// Adds an edge while building (in any order; [`EdgeColumns::sorted`] orders the lists once at the end).
    pub fn push(&mut self, src: u32, rank: i64, dst: u32, values: quiver_api::PropValues) {
        if self.lists.len() <= src as usize {
            self.lists.resize_with(src as usize + 1, EdgeList::default);
        }
        let list = &mut self.lists[src as usize];
        list.keys.push((rank, dst));
        list.values.extend(values);
        self.edges += 1;
    }

    /// Sorts every list built by [`EdgeColumns::push`].
    pub fn sorted(mut self) -> EdgeColumns {
        let w = self.width;
        for list in &mut self.lists {
            if list.keys.windows(2).all(|p| p[0] < p[1]) {
                continue;
            }
            let mut order: Vec<usize> = (0..list.keys.len()).collect();
            order.sort_unstable_by_key(|&i| list.keys[i]);
            list.keys = order.iter().map(|&i| list.keys[i]).collect();
            list.values = order.iter().flat_map(|&i| list.values[i * w..(i + 1) * w].iter().cloned()).collect();
        }
        self
    }

    /// The properties at `picked` (indices into the latest version's properties) of an edge, `None` if the cache
    /// has no such edge.
    pub fn get(&self, src: u32, rank: i64, dst: u32, picked: &[usize]) -> Option<quiver_api::PropValues> {
        let list = self.lists.get(src as usize)?;
        let i = list.keys.binary_search(&(rank, dst)).ok()?;
        let row = &list.values[i * self.width..(i + 1) * self.width];
        Some(picked.iter().map(|&p| row[p].clone()).collect())
    }

    pub fn rows(&self) -> usize {
        self.edges
    }

    /// Memory held, in bytes (keys, values and their heap parts, estimated).
    pub fn bytes(&self) -> usize {
        let values: usize = self.lists.iter().flat_map(|l| &l.values).map(crate::vcache::value_bytes).sum();
        let keys: usize = self.lists.iter().map(|l| l.keys.capacity() * std::mem::size_of::<(i64, u32)>()).sum();
        self.lists.capacity() * std::mem::size_of::<EdgeList>() + keys + values
    }
}

/// Where a read of one signed type finds its edges' rows: a cache, and whether its keys run the other way.
#[derive(Clone, Copy)]
pub struct EdgeRows<'a> {
    pub cols: &'a EdgeColumns,
    swapped: bool,
}

impl<'a> EdgeRows<'a> {
    /// The rows a read of signed type `et` uses in `caches` (keyed by the signed type of the copies they hold), if
    /// there are any: the cache of `et`'s own copies, else the other direction's when it holds every edge.
    pub fn of(caches: &'a std::collections::HashMap<i32, EdgeColumns>, et: i32) -> Option<EdgeRows<'a>> {
        if let Some(cols) = caches.get(&et) {
            return Some(EdgeRows { cols, swapped: false });
        }
        caches.get(&-et).filter(|c| c.both_directions).map(|cols| EdgeRows { cols, swapped: true })
    }

    pub fn version(&self) -> u32 {
        self.cols.version()
    }

    /// The properties at `picked` of the edge read from `near` (the vertex the read expands) to `far`.
    pub fn get(&self, near: u32, rank: i64, far: u32, picked: &[usize]) -> Option<quiver_api::PropValues> {
        let (a, b) = if self.swapped { (far, near) } else { (near, far) };
        self.cols.get(a, rank, b, picked)
    }
}

/// How many vertices each edge type has been expanded with properties for, per space: decides when it is hot.
#[derive(Default)]
pub struct HotEdges {
    reads: crate::vcache::ReadCounts,
    /// Types found too large or changing while being loaded: not tried again until the space's topology goes.
    refused: RwLock<FastSet<(u32, i32)>>,
    /// Each direction is cached apart, from its own copies (a cluster host: see the module doc).
    apart: std::sync::atomic::AtomicBool,
}

impl HotEdges {
    /// Counts `n` vertex reads of a cache key ([`HotEdges::key`]); true when it has just become hot.
    pub fn count(&self, space: u32, key: i32, n: u64) -> bool {
        !self.refused.read().expect("lock poisoned").contains(&(space, key))
            && self.reads.count(space, key, n, HOT_READS)
    }

    /// Caches each direction of a type apart from now on; called before any cache is built.
    pub fn keep_directions_apart(&self) {
        self.apart.store(true, std::sync::atomic::Ordering::Relaxed);
    }

    fn apart(&self) -> bool {
        self.apart.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The cache a read of signed type `et` turns hot and builds: the type's own copies when the directions are
    /// kept apart, else its out-copies.
    pub fn key(&self, et: i32) -> i32 {
        if self.apart() {
            et
        } else {
            et.abs()
        }
    }

    /// Starts counting a cache key again (its cache was dropped).
    pub fn cool(&self, space: u32, key: i32) {
        self.reads.cool(space, key);
    }

    /// Starts counting both directions of an edge type again (the type was dropped).
    pub fn cool_type(&self, space: u32, edge_type: i32) {
        self.reads.cool(space, edge_type.abs());
        self.reads.cool(space, -edge_type.abs());
    }

    /// Never turns cache key `key` ([`HotEdges::key`]) hot again until the space's topology goes.
    pub fn refuse(&self, space: u32, key: i32) {
        self.refused.write().expect("lock poisoned").insert((space, key));
    }

    pub fn forget_space(&self, space: u32) {
        self.reads.forget_space(space);
        self.refused.write().expect("lock poisoned").retain(|(s, _)| *s != space);
    }
}

impl crate::EmbeddedStorage {
    /// `get_neighbors` with properties, answered from the topology and the edge types' property caches: `None`
    /// when a requested type is not cached (this read may make it hot and build its cache first).
    pub(crate) fn neighbors_from_edge_cache(
        &self,
        space: &SpaceDesc,
        req: &NeighborsRequest,
        projections: &[crate::EdgeProjection],
        names: &[&str],
    ) -> QResult<Option<Vec<NeighborEdge>>> {
        // The topology is built here only when a type turns hot (its cache lives there): a read of a type that is
        // not cached scans the store as before, without building anything.
        let existing = self.topologies.read().expect("lock poisoned").get(&space.id).cloned();
        // Every requested type is looked at (and counted, once per request) even when an earlier one is not cached,
        // so types read together become hot together.
        let mut all_cached = true;
        let mut seen: Vec<i32> = Vec::new();
        for (et, schema) in &req.edge_types {
            let key = self.hot_edges.key(*et);
            if seen.contains(&key) {
                continue;
            }
            seen.push(key);
            let cached = existing
                .as_ref()
                .and_then(|t| EdgeRows::of(&t.read().expect("lock poisoned").edge_props, *et).map(|r| r.version()));
            let reader = schema.latest().version;
            match cached {
                Some(v) if v == reader => {}
                // An older reader (planned before an ALTER) reads the store.
                Some(v) if v > reader => all_cached = false,
                Some(_) => {
                    // The type was altered since the cache was built.
                    existing
                        .as_ref()
                        .expect("a cache lives in a topology")
                        .write()
                        .expect("lock poisoned")
                        .edge_props
                        .remove(&key);
                    self.hot_edges.cool(space.id, key);
                    all_cached = false;
                }
                None => {
                    if !self.hot_edges.count(space.id, key, req.vids.len() as u64)
                        || !quiver_common::memory::untracked(|| {
                            self.build_edge_cache(space, schema, key, &self.topology(space)?)
                        })?
                    {
                        all_cached = false;
                    }
                }
            }
        }
        if !all_cached {
            return Ok(None);
        }
        let topo = self.topology(space)?;
        let mut sink = crate::expand::EdgeSink::new(req);
        for batch in req.vids.chunks(crate::expand::FRONTIER_BATCH) {
            req.budget.check()?;
            let t = topo.read().expect("lock poisoned");
            for vid in batch {
                let Some(v) = t.dict.get(vid) else { continue };
                for ((et, schema), projection) in req.edge_types.iter().zip(projections) {
                    if sink.full() {
                        return sink.finish().map(Some);
                    }
                    let (Some(adj), Some(cache)) = (t.adjacency(*et), EdgeRows::of(&t.edge_props, *et)) else {
                        continue;
                    };
                    adj.for_each(v, &mut |(rank, to)| {
                        let edge = match cache.get(v, rank, to, &projection.picked) {
                            None => Err(QError::storage(format!(
                                "edge property cache of type {} is missing an edge",
                                et.abs()
                            ))),
                            Some(values) => {
                                let props = projection.decoded.as_ref().map(|n| PropRow { names: n.clone(), values });
                                let edge = NeighborEdge {
                                    from: vid.clone(),
                                    edge_type: *et,
                                    rank,
                                    to: t.dict.value(to),
                                    props,
                                };
                                projection.finish(edge, req.filter.as_ref(), schema, names)
                            }
                        };
                        sink.take(edge)
                    });
                    sink.check()?;
                }
            }
        }
        sink.finish().map(Some)
    }

    /// Loads the copies of cache key `key` (a signed type, see [`HotEdges::key`]) into its property cache, under
    /// the writers' lock and the topology's write lock; false when the type is too large, or changed (a newer
    /// schema version) while being read. Called untracked: the cache outlives the query that happens to build it.
    fn build_edge_cache(
        &self,
        space: &SpaceDesc,
        schema: &SchemaRef,
        key: i32,
        topo: &Arc<RwLock<SpaceTopology>>,
    ) -> QResult<bool> {
        if self.rows_of(space, SchemaKind::Edge, schema.id)? > ECACHE_EDGES_MAX {
            self.hot_edges.refuse(space.id, key);
            return Ok(false);
        }
        let _guard = self.lock_for_build();
        // The topology may have been replaced (CLEAR SPACE, a bulk load) since it was looked up.
        let current = self.topologies.read().expect("lock poisoned").get(&space.id).cloned();
        if !current.is_some_and(|c| Arc::ptr_eq(&c, topo)) {
            return Ok(false);
        }
        if topo.read().expect("lock poisoned").edge_props.contains_key(&key) {
            return Ok(true);
        }
        // The writers are held off, so the edges and the dictionary stay as they are while the rows are read; the
        // topology is only read-locked, a partition at a time, so queries keep running during the load.
        let started = std::time::Instant::now();
        let mut cols = EdgeColumns::new(schema.clone(), !self.hot_edges.apart());
        let all: Vec<usize> = (0..schema.latest().props.len()).collect();
        let vl = space.vid_type.key_len();
        for part in 1..=space.partition_num {
            let mut err = None;
            let t = topo.read().expect("lock poisoned");
            self.kv
                .scan_prefix(&crate::keys::prefix(space.id, part, crate::keys::KIND_EDGE), &mut |k, v| {
                    let r = (|| -> QResult<()> {
                        let (et, rank, to) = crate::keys::parse_edge_key_raw(space, k)?;
                        if et != key {
                            return Ok(());
                        }
                        let from = &k[crate::keys::PREFIX_LEN..crate::keys::PREFIX_LEN + vl];
                        let missing = || QError::storage("an edge's end is not in the topology");
                        let (s, d) =
                            (t.dict.get_key(from).ok_or_else(missing)?, t.dict.get_key(to).ok_or_else(missing)?);
                        cols.push(s, rank, d, crate::codec::decode_indices(schema, v, &all)?);
                        Ok(())
                    })();
                    err = r.err();
                    err.is_none()
                })
                .map_err(crate::kv_err)?;
            if let Some(e) = err {
                log::debug!("edge type {} of space {} not cached: {e}", schema.name, space.name);
                self.hot_edges.refuse(space.id, key);
                return Ok(false);
            }
        }
        let cols = cols.sorted();
        log::debug!(
            "cached edge type {} ({key}) of space {}: {} edges, {} bytes, {:.2} s",
            schema.name,
            space.name,
            cols.rows(),
            cols.bytes(),
            started.elapsed().as_secs_f64()
        );
        topo.write().expect("lock poisoned").edge_props.insert(key, cols);
        Ok(true)
    }

    /// Edges and bytes of each edge property cache of `space`: `(signed type of its copies, edges, bytes)`.
    pub fn edge_cache_stats(&self, space: &SpaceDesc) -> Vec<(i32, usize, usize)> {
        let Some(t) = self.topologies.read().expect("lock poisoned").get(&space.id).cloned() else {
            return Vec::new();
        };
        let t = t.read().expect("lock poisoned");
        let mut out: Vec<_> = t.edge_props.iter().map(|(et, c)| (*et, c.rows(), c.bytes())).collect();
        out.sort_unstable();
        out
    }
}
