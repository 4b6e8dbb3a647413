//! Reads over the in-memory topology: neighbours of a batch of vertices without properties, and multi-hop
//! expansion that carries path counts instead of rows (GO's walks here, MATCH's paths in [`paths`]).
//!
//! Work is done in batches of [`FRONTIER_BATCH`] frontier vertices. The topology's read lock is held for one batch
//! at a time, so writers (and the background merger) get in between, and the query's budget is checked before
//! each batch, so a traversal that reaches a super vertex or runs past its deadline stops there.

use crate::topology::{Adjacency, SpaceTopology};
use crate::EmbeddedStorage;
use quiver_api::*;
use quiver_common::budget::Meter;
use quiver_common::limits;
use quiver_common::{QError, QResult, Value};

/// Frontier vertices expanded per lock acquisition and budget check.
pub const FRONTIER_BATCH: usize = 4096;

/// Where a neighbours read with properties or a filter collects the edges it keeps: metered, up to the request's
/// limit; the first error stops the read.
pub(crate) struct EdgeSink<'a> {
    pub out: Vec<NeighborEdge>,
    limit: usize,
    meter: Meter<'a>,
    failed: Option<QError>,
}

impl<'a> EdgeSink<'a> {
    pub fn new(req: &'a NeighborsRequest) -> EdgeSink<'a> {
        EdgeSink {
            out: Vec::new(),
            limit: req.limit.unwrap_or(usize::MAX),
            meter: Meter::new(&req.budget),
            failed: None,
        }
    }

    /// Takes the outcome of one stored edge (`None`: filtered out or expired); false once the read should stop.
    pub fn take(&mut self, edge: QResult<Option<NeighborEdge>>) -> bool {
        match edge.and_then(|e| {
            if e.is_some() {
                self.meter.tick()?;
            }
            Ok(e)
        }) {
            Ok(Some(e)) => {
                self.out.push(e);
                !self.full()
            }
            Ok(None) => true,
            Err(e) => {
                self.failed = Some(e);
                false
            }
        }
    }

    pub fn full(&self) -> bool {
        self.out.len() >= self.limit
    }

    /// The error that stopped the read, if one did.
    pub fn check(&mut self) -> QResult<()> {
        self.failed.take().map_or(Ok(()), Err)
    }

    pub fn finish(mut self) -> QResult<Vec<NeighborEdge>> {
        self.check()?;
        Ok(self.out)
    }
}

impl EmbeddedStorage {
    /// `get_neighbors` without properties or filter: answered from the topology, in key order.
    pub(crate) fn neighbors_from_topology(
        &self,
        space: &SpaceDesc,
        req: &NeighborsRequest,
    ) -> QResult<Vec<NeighborEdge>> {
        let topo = self.topology(space)?;
        let limit = req.limit.unwrap_or(usize::MAX);
        let mut out = Vec::new();
        let mut meter = Meter::new(&req.budget);
        let mut failed = None;
        for batch in req.vids.chunks(FRONTIER_BATCH) {
            let t = topo.read().expect("lock poisoned");
            for vid in batch {
                let Some(v) = t.dict.get(vid) else { continue };
                for (et, _) in &req.edge_types {
                    let Some(adj) = t.adjacency(*et) else {
                        continue;
                    };
                    adj.for_each(v, &mut |(rank, to)| {
                        if out.len() >= limit {
                            return false;
                        }
                        out.push(NeighborEdge {
                            from: vid.clone(),
                            edge_type: *et,
                            rank,
                            to: t.dict.value(to),
                            props: None,
                        });
                        if let Err(e) = meter.tick() {
                            failed = Some(e);
                            return false;
                        }
                        true
                    });
                    if let Some(e) = failed.take() {
                        return Err(e);
                    }
                }
            }
            if out.len() >= limit {
                break;
            }
        }
        req.budget.check()?;
        Ok(out)
    }

    pub(crate) fn expand_topology(&self, space: &SpaceDesc, req: &ExpandRequest) -> QResult<ExpandResult> {
        // The topology cannot tell expired edges; the planner never fuses traversals over TTL edge types.
        if let Some(c) = self.catalog() {
            for et in req.hops.iter().flat_map(|h| &h.edge_types) {
                if c.schema_by_id(space, SchemaKind::Edge, et.abs()).is_some_and(|s| crate::ttl::has_ttl(&s)) {
                    return Err(QError::execution(format!(
                        "edge type {} has a TTL: a fused traversal cannot see which edges expired",
                        et.abs()
                    )));
                }
            }
        }
        if req.output == ExpandOutput::LastEdges && !req.paths {
            return Err(QError::execution("the last edges of an expansion are counted for MATCH's paths only"));
        }
        let topo = self.topology(space)?;
        if req.paths {
            let props = req.last_edge_props.as_ref().filter(|_| req.output == ExpandOutput::LastEdges);
            let (mut result, served) = {
                let t = topo.read().expect("lock poisoned");
                let cached = props.and_then(|p| paths::CachedProps::of(&t, p));
                let served = cached.is_some();
                (paths::count(&t, req, cached.as_deref())?, served)
            };
            if let Some(p) = props.filter(|_| !served) {
                self.read_last_edge_props(space, p, &mut result.last_edges, &req.budget)?;
            }
            return finish(result);
        }
        let mut result = ExpandResult::default();
        // The frontier: distinct vertices, each with the number of paths that reach it.
        let mut frontier: Vec<(u32, u64)> = Vec::new();
        let mut tally = {
            let t = topo.read().expect("lock poisoned");
            let mut tally = Tally::new(t.dict.len());
            for vid in &req.starts {
                if let Some(v) = t.dict.get(vid) {
                    tally.bump(v, 1);
                }
            }
            tally
        };
        tally.drain_into(&mut frontier);
        // One entry per step: a hop repeated `times` times is that many steps.
        let steps = req.hops.iter().flat_map(|h| std::iter::repeat_n(h, h.times as usize));
        let total: u64 = req.hops.iter().map(|h| u64::from(h.times)).sum();
        for (i, hop) in steps.enumerate() {
            // Checked every step, not only per batch: a long walk over a small cycle must stop at its deadline too.
            req.budget.check()?;
            if frontier.is_empty() {
                // Nothing reached: every later step is empty as well.
                return finish(result);
            }
            if hop.distinct {
                frontier.iter_mut().for_each(|(_, m)| *m = 1);
            }
            let last = i as u64 + 1 == total;
            if last && req.output == ExpandOutput::Count {
                for batch in frontier.chunks(FRONTIER_BATCH) {
                    req.budget.check()?;
                    let t = topo.read().expect("lock poisoned");
                    count_through(&adjacencies(&t, &hop.edge_types), batch, &mut result);
                }
                return finish(result);
            }
            for batch in frontier.chunks(FRONTIER_BATCH) {
                req.budget.check()?;
                let t = topo.read().expect("lock poisoned");
                walk_step(&adjacencies(&t, &hop.edge_types), batch, &mut tally, &mut result.edges_read);
            }
            req.budget.check()?;
            tally.drain_into(&mut frontier);
        }
        set_ends(&topo.read().expect("lock poisoned"), frontier, &mut result);
        finish(result)
    }
}

impl EmbeddedStorage {
    /// One step of a GO walk (`ExpandRequest` without `paths`) from `frontier`, each vertex with the number of walks
    /// reaching it, over `edge_types`: the far ends with their walk counts in first-reached order (`ends`), or with
    /// `count_only` just the number of walks through the step (`paths`, from degrees). What a cluster's client asks
    /// each host for the frontier vertices of the partitions it leads, when no host carries the whole space (the
    /// adjacency here covers the edges stored in this host's partitions: out-edges of its vertices, in-edges to them).
    pub fn expand_step(
        &self,
        space: &SpaceDesc,
        frontier: &[(Value, u64)],
        edge_types: &[i32],
        count_only: bool,
        budget: &quiver_common::budget::Budget,
    ) -> QResult<ExpandResult> {
        let topo = self.topology(space)?;
        let mut result = ExpandResult::default();
        let mut tally: Option<Tally> = None;
        for batch in frontier.chunks(FRONTIER_BATCH) {
            budget.check()?;
            let t = topo.read().expect("lock poisoned");
            let ids: Vec<(u32, u64)> = batch.iter().filter_map(|(v, m)| t.dict.get(v).map(|id| (id, *m))).collect();
            let adjs = adjacencies(&t, edge_types);
            if count_only {
                count_through(&adjs, &ids, &mut result);
                continue;
            }
            let tally = tally.get_or_insert_with(|| Tally::new(t.dict.len()));
            walk_step(&adjs, &ids, tally, &mut result.edges_read);
        }
        if let Some(mut tally) = tally {
            let mut reached = Vec::new();
            tally.drain_into(&mut reached);
            set_ends(&topo.read().expect("lock poisoned"), reached, &mut result);
        }
        finish(result)
    }
}

/// Path counts per vertex (by the topology's dense id), with the vertices counted since the last drain in the order
/// first reached.
///
/// The counts vector has a slot per vertex of the space, so a short walk on a large graph would spend its time
/// zeroing it (520 KiB for 65,000 vertices: about a fifth of a 1-hop MATCH). It is taken from a per-thread pool
/// instead and handed back zeroed: only the touched slots are reset.
///
/// **Invariant:** a slot is non-zero only if its vertex is in `touched` (only [`Tally::bump`] raises a count, and it
/// notes a slot the first time), so zeroing the touched slots zeroes the vector.
pub(crate) struct Tally {
    counts: Vec<u64>,
    touched: Vec<u32>,
}

thread_local! {
    /// Zeroed count vectors kept for the next walk on this thread (at most [`TALLY_POOL`]).
    static TALLIES: std::cell::RefCell<Vec<Vec<u64>>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Count vectors kept per thread: a walk uses at most two at once.
const TALLY_POOL: usize = 2;

impl Tally {
    /// Counts for `len` vertices, all zero.
    pub fn new(len: usize) -> Tally {
        let pooled = TALLIES.with(|p| p.borrow_mut().pop());
        let mut counts = pooled.unwrap_or_default();
        if counts.len() < len {
            // Grown outside the query's account: the vector outlives the query in the pool.
            quiver_common::memory::untracked(|| counts.resize(len, 0));
        }
        Tally { counts, touched: Vec::new() }
    }

    #[inline]
    pub fn bump(&mut self, v: u32, m: u64) {
        let i = v as usize;
        if i >= self.counts.len() {
            self.counts.resize(i + 1, 0);
        }
        if self.counts[i] == 0 {
            self.touched.push(v);
        }
        self.counts[i] = self.counts[i].saturating_add(m);
    }

    /// Takes `n` off the count of `v` (at most its count).
    pub fn take(&mut self, v: u32, n: u64) {
        let c = &mut self.counts[v as usize];
        *c = c.saturating_sub(n);
    }

    /// Moves the counts into `frontier` (first-reached order) and clears them.
    pub fn drain_into(&mut self, frontier: &mut Vec<(u32, u64)>) {
        frontier.clear();
        for &v in &self.touched {
            frontier.push((v, std::mem::take(&mut self.counts[v as usize])));
        }
        self.touched.clear();
    }
}

impl Drop for Tally {
    fn drop(&mut self) {
        for &v in &self.touched {
            self.counts[v as usize] = 0;
        }
        let counts = std::mem::take(&mut self.counts);
        if counts.len() <= limits::TALLY_POOLED_VERTICES_MAX {
            TALLIES.with(|p| {
                let mut p = p.borrow_mut();
                if p.len() < TALLY_POOL {
                    p.push(counts);
                }
            });
        }
    }
}

impl EmbeddedStorage {
    /// The last edges' properties where the edge property cache does not serve them: read as the neighbours of
    /// their near ends (which counts towards making the types hot).
    fn read_last_edge_props(
        &self,
        space: &SpaceDesc,
        p: &LastEdgeProps,
        last: &mut [(LastEdge, u64)],
        budget: &quiver_common::budget::Budget,
    ) -> QResult<()> {
        if last.is_empty() || p.props == PropSelection::None {
            return Ok(());
        }
        let mut near: Vec<Value> = last.iter().map(|(e, _)| e.from.clone()).collect();
        near.sort_by(|a, b| a.total_cmp(b));
        near.dedup();
        let req = NeighborsRequest {
            vids: near,
            edge_types: p.types.clone(),
            props: p.props.clone(),
            filter: None,
            limit: None,
            budget: budget.clone(),
        };
        // Each last edge (they are distinct) by its key, then the rows read matched to them: the map borrows the
        // edges' values instead of copying them.
        let mut at: quiver_common::fasthash::FastMap<(i32, &Value, &Value, i64), usize> =
            quiver_common::fasthash::FastMap::with_capacity_and_hasher(last.len(), Default::default());
        for (i, (e, _)) in last.iter().enumerate() {
            at.insert((e.edge_type, &e.from, &e.to, e.rank), i);
        }
        let mut found: Vec<(usize, PropRow)> = Vec::with_capacity(last.len());
        for n in self.get_neighbors(space, &req)? {
            if let Some(props) = n.props {
                if let Some(&i) = at.get(&(n.edge_type, &n.from, &n.to, n.rank)) {
                    found.push((i, props));
                }
            }
        }
        drop(at);
        for (i, props) in found {
            last[i].0.props = Some(props);
        }
        Ok(())
    }
}

/// The adjacencies of `edge_types` (signed) that have edges.
fn adjacencies<'t>(t: &'t SpaceTopology, edge_types: &[i32]) -> Vec<&'t Adjacency> {
    edge_types.iter().filter_map(|et| t.adjacency(*et)).collect()
}

/// The last step of a count: the walks through it from `batch` (each vertex with the walks reaching it), from
/// degrees over `adjs`.
fn count_through(adjs: &[&Adjacency], batch: &[(u32, u64)], result: &mut ExpandResult) {
    for &(v, m) in batch {
        let degree: u64 = adjs.iter().map(|a| a.degree(v) as u64).sum();
        result.edges_read += degree;
        result.paths = result.paths.saturating_add(m.saturating_mul(degree));
    }
}

/// One step from `batch` over `adjs`: each far end tallied with the walks reaching its near end.
fn walk_step(adjs: &[&Adjacency], batch: &[(u32, u64)], tally: &mut Tally, edges_read: &mut u64) {
    for adj in adjs {
        for &(v, m) in batch {
            adj.for_each_target(v, |to| {
                *edges_read += 1;
                tally.bump(to, m);
            });
        }
    }
}

/// The walk's far ends with their walk counts, and the walks in all.
fn set_ends(t: &SpaceTopology, reached: Vec<(u32, u64)>, result: &mut ExpandResult) {
    result.paths = reached.iter().fold(0u64, |s, (_, m)| s.saturating_add(*m));
    result.ends = reached.into_iter().map(|(v, m)| (t.dict.value(v), m)).collect();
}

/// Refuses a result whose counts saturated (a cluster's client checks the counts it sums with it too).
pub fn finish(r: ExpandResult) -> QResult<ExpandResult> {
    if r.paths == u64::MAX || r.ends.iter().any(|(_, m)| *m == u64::MAX) {
        return Err(QError::execution(
            "The traversal reaches more than 18446744073709551614 paths, which cannot be counted",
        ));
    }
    Ok(r)
}

/// MATCH's path counts: no edge twice within a path, only existing vertices reached.
///
/// Walk counts per frontier vertex cannot tell whether a walk reuses an edge, so the paths one hop short of the end
/// (the prefixes) are enumerated depth-first, each with its edges. The last hop is then counted per distinct
/// vertex a prefix ends at: its degree over the last hop's types (its neighbours that exist, when some edge has a
/// missing end), times the prefixes ending there, less, per prefix, each of its own edges that the last hop could
/// take again (an edge appears once in its source's out-list and once in its destination's in-list). A 3-hop
/// count thus costs the 2-hop paths, not the 3-hop ones.
///
/// The prefixes' own last hop runs in bulk: an entry that leads to neither the vertex it leaves nor an end of an
/// earlier edge of the prefix cannot repeat an earlier edge, and its own edge reappears in the next hop's lists a
/// number of times that depends only on its type; so such entries are only counted per vertex, as GO's counting
/// hop does, and their repeats added per (vertex, type).
///
/// The read lock is held for the whole count; the budget is checked as prefixes and edges are visited.
mod paths {
    use super::Tally;
    use crate::ecache::EdgeRows;
    use crate::topology::{Adjacency, SpaceTopology};
    use crate::EdgeProjection;
    use quiver_api::{ExpandOutput, ExpandRequest, ExpandResult, LastEdge, LastEdgeProps, PropRow};
    use quiver_common::budget::Meter;
    use quiver_common::fasthash::FastMap as HashMap;
    use quiver_common::{QError, QResult};
    use std::sync::Arc;

    /// The last hop's properties as the edge property cache serves them: per signed type, its cache and the
    /// properties picked.
    pub(super) struct CachedProps<'a> {
        et: i32,
        cache: EdgeRows<'a>,
        picked: Vec<usize>,
        names: Option<Arc<[String]>>,
    }

    impl<'a> CachedProps<'a> {
        /// `None` unless every type's cache is there and of the request's schema version.
        pub fn of(t: &'a SpaceTopology, p: &LastEdgeProps) -> Option<Vec<CachedProps<'a>>> {
            p.types
                .iter()
                .map(|(et, schema)| {
                    let cache = EdgeRows::of(&t.edge_props, *et).filter(|c| c.version() == schema.latest().version)?;
                    let projection = EdgeProjection::new(schema, &p.props, &[]);
                    Some(CachedProps { et: *et, cache, picked: projection.picked, names: projection.returned })
                })
                .collect()
        }
    }

    /// An edge of a prefix as stored: `(type, source, destination, rank)`, the type positive.
    type PathEdge = (i32, u32, u32, i64);

    /// One hop: its signed types with their adjacency (types with no edges left out).
    type Hop<'a> = Vec<(i32, &'a Adjacency)>;

    struct Walk<'a> {
        t: &'a SpaceTopology,
        meter: Meter<'a>,
        /// Whether both ends of every edge exist (no existence check per entry needed).
        every_end_exists: bool,
        edges: Vec<PathEdge>,
        /// Prefixes per vertex they end at.
        mult: Tally,
        /// Last-hop entries that are a prefix's own edge again: `(far end, how many)`.
        repeats: Vec<(u32, u64)>,
        /// With [`ExpandOutput::LastEdges`], the same per last-hop entry: `(signed type, near end, far end, rank)`.
        edge_repeats: Option<HashMap<(i32, u32, u32, i64), u64>>,
        edges_read: u64,
        failed: Option<QError>,
        /// Buffers of [`Walk::final_prefix_hop`], kept between its calls: the vertices near the prefix, and the
        /// entries `(rank, far end)` that lead to one (and their places in the list).
        near_to: Vec<u32>,
        near: Vec<(i64, u32)>,
        near_at: Vec<usize>,
    }

    /// `props`: with [`ExpandOutput::LastEdges`], the last edges' properties from the edge property cache.
    pub(super) fn count(
        t: &SpaceTopology,
        req: &ExpandRequest,
        props: Option<&[CachedProps<'_>]>,
    ) -> QResult<ExpandResult> {
        if req.hops.iter().any(|h| h.distinct) {
            return Err(QError::execution("a path count walks every hop from each path"));
        }
        let hops: Vec<Hop<'_>> = req
            .hops
            .iter()
            .flat_map(|h| std::iter::repeat_n(h, h.times as usize))
            .map(|h| h.edge_types.iter().filter_map(|et| t.adjacency(*et).map(|a| (*et, a))).collect())
            .collect();
        let Some((last, prefix_hops)) = hops.split_last() else {
            return Err(QError::execution("a path count needs at least one hop"));
        };
        let mut w = Walk {
            t,
            meter: Meter::new(&req.budget),
            every_end_exists: t.every_edge_end_exists(),
            edges: Vec::with_capacity(prefix_hops.len()),
            mult: Tally::new(t.dict.len()),
            repeats: Vec::new(),
            edge_repeats: (req.output == ExpandOutput::LastEdges).then(HashMap::default),
            edges_read: 0,
            failed: None,
            near_to: Vec::new(),
            near: Vec::new(),
            near_at: Vec::new(),
        };
        for vid in &req.starts {
            req.budget.check()?;
            let Some(v) = t.dict.get(vid).filter(|v| t.vertex_exists(*v)) else { continue };
            w.prefixes(prefix_hops, last, v);
            if let Some(e) = w.failed.take() {
                return Err(e);
            }
        }
        req.budget.check()?;
        let mut ends = Vec::new();
        w.mult.drain_into(&mut ends);
        let mut result = ExpandResult { edges_read: w.edges_read, ..ExpandResult::default() };
        match req.output {
            ExpandOutput::Count => {
                for &(v, m) in &ends {
                    let degree: u64 = if w.every_end_exists {
                        last.iter().map(|(_, a)| a.degree(v) as u64).sum()
                    } else {
                        let mut n = 0;
                        for (_, a) in last {
                            a.for_each_target(v, |to| n += u64::from(t.vertex_exists(to)));
                        }
                        n
                    };
                    result.edges_read += degree;
                    result.paths = result.paths.saturating_add(m.saturating_mul(degree));
                }
                result.paths -= w.repeats.iter().map(|(_, n)| n).sum::<u64>();
            }
            ExpandOutput::Ends => {
                let mut counts = Tally::new(t.dict.len());
                for (i, &(v, m)) in ends.iter().enumerate() {
                    if i % crate::expand::FRONTIER_BATCH == 0 {
                        req.budget.check()?;
                    }
                    for (_, a) in last {
                        a.for_each_target(v, |to| {
                            result.edges_read += 1;
                            if w.every_end_exists || t.vertex_exists(to) {
                                counts.bump(to, m);
                            }
                        });
                    }
                }
                for (to, n) in w.repeats {
                    counts.take(to, n);
                }
                let mut reached = Vec::new();
                counts.drain_into(&mut reached);
                reached.retain(|(_, m)| *m > 0);
                result.paths = reached.iter().fold(0u64, |s, (_, m)| s.saturating_add(*m));
                result.ends = reached.into_iter().map(|(v, m)| (t.dict.value(v), m)).collect();
            }
            ExpandOutput::LastEdges => {
                let repeats = w.edge_repeats.take().unwrap_or_default();
                for (i, &(v, m)) in ends.iter().enumerate() {
                    if i % crate::expand::FRONTIER_BATCH == 0 {
                        req.budget.check()?;
                    }
                    for &(et, a) in last {
                        let cached = props.and_then(|p| p.iter().find(|c| c.et == et));
                        let mut missing = false;
                        a.for_each_entry(v, |rank, to| {
                            result.edges_read += 1;
                            if !(w.every_end_exists || t.vertex_exists(to)) {
                                return;
                            }
                            let n = m - repeats.get(&(et, v, to, rank)).copied().unwrap_or(0);
                            if n > 0 {
                                result.paths = result.paths.saturating_add(n);
                                let props = cached.and_then(|c| {
                                    let names = c.names.clone()?;
                                    let values = c.cache.get(v, rank, to, &c.picked);
                                    missing |= values.is_none();
                                    Some(PropRow { names, values: values.unwrap_or_default() })
                                });
                                let edge = LastEdge {
                                    edge_type: et,
                                    from: t.dict.value(v),
                                    to: t.dict.value(to),
                                    rank,
                                    props,
                                };
                                result.last_edges.push((edge, n));
                            }
                        });
                        if missing {
                            return Err(QError::storage(format!(
                                "edge property cache of type {} is missing an edge",
                                et.abs()
                            )));
                        }
                    }
                }
            }
        }
        Ok(result)
    }

    impl Walk<'_> {
        /// Enumerates the prefixes from `v` over `hops` (with the edges already in `self.edges`).
        fn prefixes(&mut self, hops: &[Hop<'_>], last: &Hop<'_>, v: u32) {
            let Some((hop, rest)) = hops.split_first() else {
                self.prefix_ends(last, v);
                return;
            };
            if rest.is_empty() {
                self.final_prefix_hop(hop, last, v);
                return;
            }
            for &(et, adj) in hop {
                adj.for_each_entry(v, |rank, to| {
                    if self.failed.is_some() {
                        return;
                    }
                    self.edges_read += 1;
                    self.step(et, v, rank, to, |w, to| w.prefixes(rest, last, to));
                });
                if self.failed.is_some() {
                    return;
                }
            }
        }

        /// Takes the edge `(et, v -> to, rank)` if the path may (not one of its edges, `to` exists) and continues
        /// with `then`.
        fn step(&mut self, et: i32, v: u32, rank: i64, to: u32, then: impl FnOnce(&mut Self, u32)) {
            let edge = if et > 0 { (et, v, to, rank) } else { (-et, to, v, rank) };
            if self.edges.contains(&edge) || !self.t.vertex_exists(to) {
                return;
            }
            self.edges.push(edge);
            then(self, to);
            self.edges.pop();
        }

        /// The prefixes' own last hop from `v`: each entry taken ends a prefix.
        ///
        /// The entries not near the prefix are tallied in bulk; the few near ones are noted and taken after them,
        /// one by one. Tallying is bound by cache misses on the tally, so its loop is kept as short as GO's
        /// counting hop's (measured: the MATCH form of the RageDB 3-hop count went from 1.54x to 1.17x the time of
        /// the GO form in process when its near test left that loop).
        fn final_prefix_hop(&mut self, hop: &Hop<'_>, last: &Hop<'_>, v: u32) {
            if let Err(e) = self.meter.tick() {
                self.failed = Some(e);
                return;
            }
            // The vertices an entry may lead to and take an edge of the prefix again: `v` itself (a self-loop) and
            // the ends of the prefix's edges.
            let mut near_to = std::mem::take(&mut self.near_to);
            near_to.clear();
            near_to.push(v);
            near_to.extend(self.edges.iter().flat_map(|&(_, s, d, _)| [s, d]));
            let mut near = std::mem::take(&mut self.near);
            let mut near_at = std::mem::take(&mut self.near_at);
            for &(et, adj) in hop {
                // How often the edge just taken is in the far end's last-hop lists (not being a self-loop).
                let back = last.iter().filter(|(l, _)| *l == -et).count() as u64;
                let (mut bulk, mut read) = (0u64, 0u64);
                let (t, every_end_exists, mult) = (self.t, self.every_end_exists, &mut self.mult);
                let mut repeats = self.edge_repeats.as_mut().filter(|_| back > 0);
                match adj.targets(v).filter(|_| repeats.is_none()) {
                    Some(targets) => {
                        // The few near entries are found first by a scan at memory speed; the entries between them
                        // are tallied by loops as short as GO's counting hop, which keep more of their cache misses
                        // in flight than a loop that also tests each entry. Ranks are read only for the near
                        // entries, by their place in the list.
                        near_places(targets, &near_to, &mut near_at);
                        let mut from = 0;
                        for &at in near_at.iter().chain([&targets.len()]) {
                            bulk += tally_each(&targets[from..at], mult, t, every_end_exists);
                            from = at + 1;
                        }
                        read = targets.len() as u64;
                        near.extend(near_at.drain(..).filter_map(|i| adj.entry(v, i)));
                    }
                    None => adj.for_each_entry(v, |rank, to| {
                        read += 1;
                        if near_to.contains(&to) {
                            near.push((rank, to));
                        } else if every_end_exists || t.vertex_exists(to) {
                            mult.bump(to, 1);
                            bulk += 1;
                            if let Some(r) = repeats.as_mut() {
                                // The edge just taken, walked back from `to` by the last hop.
                                *r.entry((-et, to, v, rank)).or_default() += back;
                            }
                        }
                    }),
                }
                self.edges_read += read;
                for (rank, to) in near.drain(..) {
                    self.step(et, v, rank, to, |w, to| w.prefix_ends(last, to));
                }
                if back > 0 && bulk > 0 {
                    self.repeats.push((v, back * bulk));
                }
            }
            self.near_to = near_to;
            self.near = near;
            self.near_at = near_at;
        }

        /// A prefix ending at `v`: counted there, and its own edges that the last hop would take again noted.
        fn prefix_ends(&mut self, last: &Hop<'_>, v: u32) {
            if let Err(e) = self.meter.tick() {
                self.failed = Some(e);
                return;
            }
            self.mult.bump(v, 1);
            for &(ty, src, dst, rank) in &self.edges {
                for &(et, _) in last {
                    let far = if et == ty && src == v {
                        dst
                    } else if et == -ty && dst == v {
                        src
                    } else {
                        continue;
                    };
                    self.repeats.push((far, 1));
                    if let Some(r) = self.edge_repeats.as_mut() {
                        *r.entry((et, v, far, rank)).or_default() += 1;
                    }
                }
            }
        }
    }

    /// The places in `targets` (ascending) of the vertices in `near`: one pass per vertex, in chunks the compiler
    /// compares at once.
    fn near_places(targets: &[u32], near: &[u32], at: &mut Vec<usize>) {
        const CHUNK: usize = 16;
        at.clear();
        for (k, &n) in near.iter().enumerate() {
            if near[..k].contains(&n) {
                continue;
            }
            for (c, chunk) in targets.chunks(CHUNK).enumerate() {
                if chunk.iter().fold(false, |hit, &to| hit | (to == n)) {
                    at.extend(chunk.iter().enumerate().filter(|(_, &to)| to == n).map(|(i, _)| c * CHUNK + i));
                }
            }
        }
        at.sort_unstable();
    }

    /// Tallies each far end in `targets` once (each that exists): returns how many were tallied.
    fn tally_each(targets: &[u32], mult: &mut Tally, t: &SpaceTopology, every_end_exists: bool) -> u64 {
        if every_end_exists {
            for &to in targets {
                mult.bump(to, 1);
            }
            targets.len() as u64
        } else {
            let mut n = 0;
            for &to in targets.iter().filter(|to| t.vertex_exists(**to)) {
                mult.bump(to, 1);
                n += 1;
            }
            n
        }
    }

    #[cfg(test)]
    mod tests {
        use super::near_places;

        /// The places of the near vertices, ascending, each place once, wherever the chunks of the scan split the
        /// list (a vertex listed twice in `near` too).
        #[test]
        fn near_places_finds_every_place_of_each_near_vertex() {
            for len in [0usize, 1, 15, 16, 17, 33, 100] {
                let targets: Vec<u32> = (0..len).map(|i| (i as u32 * 7) % 5).collect();
                for near in [vec![], vec![3], vec![0, 4], vec![4, 0, 4], vec![9]] {
                    let mut at = vec![99];
                    near_places(&targets, &near, &mut at);
                    let want: Vec<usize> = (0..len).filter(|&i| near.contains(&targets[i])).collect();
                    assert_eq!(at, want, "len {len}, near {near:?}");
                }
            }
        }
    }
}
