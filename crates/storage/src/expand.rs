//! Reads over the in-memory topology: neighbours of a batch of vertices without properties, and multi-hop
//! expansion that carries path counts instead of rows.
//!
//! Work is done in batches of [`FRONTIER_BATCH`] frontier vertices. The topology's read lock is held for one batch
//! at a time, so writers (and the background merger) get in between, and the query's budget is checked before
//! each batch, so a traversal that reaches a super vertex or runs past its deadline stops there.

use crate::EmbeddedStorage;
use quiver_api::*;
use quiver_common::budget::Meter;
use quiver_common::{QError, QResult};

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
        let topo = self.topology(space)?;
        let mut result = ExpandResult::default();
        // The frontier: distinct vertices, each with the number of paths that reach it.
        let mut frontier: Vec<(u32, u64)> = Vec::new();
        let mut counts: Vec<u64> = Vec::new();
        let mut touched: Vec<u32> = Vec::new();
        {
            let t = topo.read().expect("lock poisoned");
            counts.resize(t.dict.len(), 0);
            for vid in &req.starts {
                if let Some(v) = t.dict.get(vid) {
                    bump(&mut counts, &mut touched, v, 1);
                }
            }
        }
        collect(&mut counts, &mut touched, &mut frontier);
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
                    let adjs: Vec<_> = hop.edge_types.iter().filter_map(|et| t.adjacency(*et)).collect();
                    for &(v, m) in batch {
                        let degree: u64 = adjs.iter().map(|a| a.degree(v) as u64).sum();
                        result.edges_read += degree;
                        result.paths = result.paths.saturating_add(m.saturating_mul(degree));
                    }
                }
                return finish(result);
            }
            for batch in frontier.chunks(FRONTIER_BATCH) {
                req.budget.check()?;
                let t = topo.read().expect("lock poisoned");
                if counts.len() < t.dict.len() {
                    counts.resize(t.dict.len(), 0);
                }
                for et in &hop.edge_types {
                    let Some(adj) = t.adjacency(*et) else {
                        continue;
                    };
                    for &(v, m) in batch {
                        adj.for_each_target(v, |to| {
                            result.edges_read += 1;
                            bump(&mut counts, &mut touched, to, m);
                        });
                    }
                }
            }
            req.budget.check()?;
            collect(&mut counts, &mut touched, &mut frontier);
        }
        result.paths = frontier.iter().fold(0u64, |s, (_, m)| s.saturating_add(*m));
        let t = topo.read().expect("lock poisoned");
        result.ends = frontier.iter().map(|&(v, m)| (t.dict.value(v), m)).collect();
        finish(result)
    }
}

#[inline]
fn bump(counts: &mut Vec<u64>, touched: &mut Vec<u32>, v: u32, m: u64) {
    let i = v as usize;
    if i >= counts.len() {
        counts.resize(i + 1, 0);
    }
    if counts[i] == 0 {
        touched.push(v);
    }
    counts[i] = counts[i].saturating_add(m);
}

/// Moves the touched counts into `frontier` (first-reached order) and clears them.
fn collect(counts: &mut [u64], touched: &mut Vec<u32>, frontier: &mut Vec<(u32, u64)>) {
    frontier.clear();
    for &v in touched.iter() {
        frontier.push((v, counts[v as usize]));
        counts[v as usize] = 0;
    }
    touched.clear();
}

fn finish(r: ExpandResult) -> QResult<ExpandResult> {
    if r.paths == u64::MAX || r.ends.iter().any(|(_, m)| *m == u64::MAX) {
        return Err(QError::execution(
            "The traversal reaches more than 18446744073709551614 paths, which cannot be counted",
        ));
    }
    Ok(r)
}
