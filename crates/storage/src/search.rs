//! Path search between two vertex sets (`FIND PATH`), on dense vertex ids.
//!
//! - **Shortest paths.** One source and one other target: a bidirectional breadth-first search that expands the
//!   smaller frontier first and stops at the first level where the two balls meet. Otherwise one breadth-first
//!   search per vertex of the smaller side towards the whole other side (each pair's length is the level where its
//!   far vertex is first reached). Every edge into a vertex from the level before it is kept as a predecessor, and
//!   paths are built from those only at the end, so all shortest paths cost the searched balls plus the paths
//!   themselves.
//! - **All paths, no-loop paths.** A breadth-first search backwards from the targets first gives each vertex's
//!   distance to the nearest target; the depth-first enumeration from each source then never enters a vertex from
//!   which no target is within the steps left.
//!
//! Neighbours come from a [`Source`]: the topology itself, or storage's neighbour read when the edges need a filter
//! or may have expired (TTL). The budget is checked per batch of edges read and per path found; a `limit` stops the
//! search once it has that many paths.

use crate::expand::FRONTIER_BATCH;
use crate::topology::SpaceTopology;
use crate::EmbeddedStorage;
use quiver_api::*;
use quiver_common::budget::{Budget, Meter};
use quiver_common::expr::Expr;
use quiver_common::{QResult, Value};
use std::collections::{HashMap, HashSet};
use std::rc::Rc;
use std::sync::RwLock;

/// One edge read: from a vertex, over a signed type, to a vertex.
#[derive(Clone, Copy, Debug)]
struct Hit {
    from: u32,
    et: i32,
    rank: i64,
    to: u32,
}

/// The edge a step walks, as stored: `(source, destination, type, rank)`, so walks of one edge in opposite
/// directions are the same edge.
fn stored(from: u32, et: i32, rank: i64, to: u32) -> (u32, u32, i32, i64) {
    if et > 0 {
        (from, to, et, rank)
    } else {
        (to, from, -et, rank)
    }
}

/// Where a search reads neighbours.
trait Source {
    /// Appends every edge of each vertex of `vs` over the request's types (`backward`: over the types negated,
    /// walking from a target towards a source).
    fn expand(&mut self, vs: &[u32], backward: bool, out: &mut Vec<Hit>) -> QResult<()> {
        self.expand_to(vs, backward, &|_| true, out)
    }
    /// The same, only the edges whose far end `to` accepts.
    fn expand_to(&mut self, vs: &[u32], backward: bool, to: &dyn Fn(u32) -> bool, out: &mut Vec<Hit>) -> QResult<()>;
    /// A vertex's id, `None` if the search cannot meet it.
    fn id_of(&mut self, v: &Value) -> Option<u32>;
    fn vid(&self, id: u32) -> Value;
    fn edges_read(&self) -> u64;
}

/// How a search numbers the vertices it meets: by the topology's dictionary, or by its own, in the order met.
enum Ids<'a> {
    Topology(&'a RwLock<SpaceTopology>),
    Own { ids: HashMap<Value, u32>, values: Vec<Value> },
}

impl Ids<'_> {
    /// The topology's id of `v` (`None` for a vertex written after it was read), or the search's own (numbered now
    /// if new).
    fn get(&mut self, v: &Value) -> Option<u32> {
        match self {
            Ids::Topology(topo) => topo.read().expect("lock poisoned").dict.get(v),
            Ids::Own { ids, values } => Some(*ids.entry(v.clone()).or_insert_with(|| {
                values.push(v.clone());
                values.len() as u32 - 1
            })),
        }
    }

    fn value(&self, id: u32) -> Value {
        match self {
            Ids::Topology(topo) => topo.read().expect("lock poisoned").dict.value(id),
            Ids::Own { values, .. } => values[id as usize].clone(),
        }
    }
}

/// Neighbours straight from the topology's adjacency, the read lock held per batch of vertices.
struct TopoSource<'a> {
    topo: &'a RwLock<SpaceTopology>,
    types: Vec<i32>,
    budget: &'a Budget,
    edges_read: u64,
}

impl Source for TopoSource<'_> {
    fn expand_to(&mut self, vs: &[u32], backward: bool, keep: &dyn Fn(u32) -> bool, out: &mut Vec<Hit>) -> QResult<()> {
        for batch in vs.chunks(FRONTIER_BATCH) {
            let before = out.len();
            {
                let t = self.topo.read().expect("lock poisoned");
                for &et in &self.types {
                    let et = if backward { -et } else { et };
                    let Some(adj) = t.adjacency(et) else { continue };
                    for &from in batch {
                        adj.for_each_entry(from, |rank, to| {
                            if keep(to) {
                                out.push(Hit { from, et, rank, to })
                            }
                        });
                    }
                }
            }
            self.edges_read += (out.len() - before) as u64;
            self.budget.check()?;
        }
        Ok(())
    }

    fn id_of(&mut self, v: &Value) -> Option<u32> {
        self.topo.read().expect("lock poisoned").dict.get(v)
    }

    fn vid(&self, id: u32) -> Value {
        self.topo.read().expect("lock poisoned").dict.value(id)
    }

    fn edges_read(&self) -> u64 {
        self.edges_read
    }
}

/// Neighbours through a neighbour read (a filter evaluated per edge, expired edges left out): this storage's,
/// their ends numbered by the topology's dictionary, or a cluster's client's, numbered as met.
struct ReadSource<'a> {
    read: Box<NeighborRead<'a>>,
    ids: Ids<'a>,
    edge_types: &'a [(i32, SchemaRef)],
    filter: Option<&'a Expr>,
    budget: &'a Budget,
    edges_read: u64,
}

/// A neighbour read ([`StorageClient::get_neighbors`] of one space).
pub type NeighborRead<'a> = dyn FnMut(&NeighborsRequest) -> QResult<Vec<NeighborEdge>> + 'a;

impl Source for ReadSource<'_> {
    fn expand_to(&mut self, vs: &[u32], backward: bool, keep: &dyn Fn(u32) -> bool, out: &mut Vec<Hit>) -> QResult<()> {
        let edge_types: Vec<(i32, SchemaRef)> =
            self.edge_types.iter().map(|(et, s)| (if backward { -*et } else { *et }, s.clone())).collect();
        for batch in vs.chunks(FRONTIER_BATCH) {
            let vids: Vec<Value> = batch.iter().map(|&v| self.ids.value(v)).collect();
            let read = (self.read)(&NeighborsRequest {
                vids,
                edge_types: edge_types.clone(),
                props: PropSelection::None,
                filter: self.filter.cloned(),
                limit: None,
                budget: self.budget.clone(),
            })?;
            self.edges_read += read.len() as u64;
            for e in read {
                // An edge written after the topology was read is not searched.
                if let (Some(from), Some(to)) = (self.ids.get(&e.from), self.ids.get(&e.to)) {
                    if keep(to) {
                        out.push(Hit { from, et: e.edge_type, rank: e.rank, to });
                    }
                }
            }
        }
        Ok(())
    }

    fn id_of(&mut self, v: &Value) -> Option<u32> {
        self.ids.get(v)
    }

    fn vid(&self, id: u32) -> Value {
        self.ids.value(id)
    }

    fn edges_read(&self) -> u64 {
        self.edges_read
    }
}

/// A path under construction: its start and its steps `(signed type, rank, vertex reached)`.
type Steps = Vec<(i32, i64, u32)>;

/// Where found paths go: up to the request's limit, the budget checked per path.
struct Sink<'a> {
    paths: Vec<(u32, Steps)>,
    limit: usize,
    meter: Meter<'a>,
}

impl Sink<'_> {
    fn full(&self) -> bool {
        self.paths.len() >= self.limit
    }

    fn push(&mut self, src: u32, steps: Steps) -> QResult<()> {
        self.meter.tick()?;
        self.paths.push((src, steps));
        Ok(())
    }
}

/// Distances from the vertices a search started at, on dense ids; reset in time proportional to what was set.
struct Levels {
    dist: Vec<u32>,
    touched: Vec<u32>,
}

const UNSEEN: u32 = u32::MAX;

impl Levels {
    fn new() -> Levels {
        Levels { dist: Vec::new(), touched: Vec::new() }
    }

    fn get(&self, v: u32) -> u32 {
        self.dist.get(v as usize).copied().unwrap_or(UNSEEN)
    }

    fn set(&mut self, v: u32, d: u32) {
        let i = v as usize;
        if i >= self.dist.len() {
            self.dist.resize((i + 1).max(self.dist.len() * 2), UNSEEN);
        }
        if self.dist[i] == UNSEEN {
            self.touched.push(v);
        }
        self.dist[i] = d;
    }

    fn clear(&mut self) {
        for &v in &self.touched {
            self.dist[v as usize] = UNSEEN;
        }
        self.touched.clear();
    }
}

/// One side of a breadth-first search: distances, the current frontier, and every edge into a vertex from the
/// level before it.
struct Ball {
    levels: Levels,
    frontier: Vec<u32>,
    depth: u32,
    backward: bool,
    /// `(to, hit)`: sorted by `to` once the search ends.
    preds: Vec<Hit>,
}

impl Ball {
    /// A ball around `start`, reusing the (cleared) distances of an earlier one.
    fn new(start: u32, backward: bool, mut levels: Levels) -> Ball {
        levels.set(start, 0);
        Ball { levels, frontier: vec![start], depth: 0, backward, preds: Vec::new() }
    }

    /// Expands the frontier one level; returns the vertices first reached. Edges back into `skip` (a source that
    /// is its own target: its cycles are closed separately) are handed to `closing`.
    fn expand(&mut self, src: &mut dyn Source, hits: &mut Vec<Hit>, mut closing: impl FnMut(Hit)) -> QResult<()> {
        hits.clear();
        src.expand(&self.frontier, self.backward, hits)?;
        let next_depth = self.depth + 1;
        let mut next = Vec::new();
        for &h in hits.iter() {
            let d = self.levels.get(h.to);
            if d == 0 {
                closing(h);
            } else if d == UNSEEN {
                self.levels.set(h.to, next_depth);
                next.push(h.to);
                self.preds.push(h);
            } else if d == next_depth {
                self.preds.push(h);
            }
        }
        self.frontier = next;
        self.depth = next_depth;
        Ok(())
    }

    fn sort_preds(&mut self) {
        self.preds.sort_unstable_by_key(|h| h.to);
    }

    /// The edges into `v` from the level before it.
    fn preds_of(&self, v: u32) -> &[Hit] {
        let lo = self.preds.partition_point(|h| h.to < v);
        let hi = self.preds.partition_point(|h| h.to <= v);
        &self.preds[lo..hi]
    }

    /// Every shortest walk from the ball's start to `v`, as steps in the ball's own direction of walking (each
    /// handed to `f` with the steps in order from the start), until `f` returns false. Iterative, so a path of
    /// any length cannot exhaust the stack.
    fn walks_to(&self, v: u32, f: &mut dyn FnMut(&Steps) -> QResult<bool>) -> QResult<bool> {
        // The steps from `v` back towards the start, and per vertex on the way the next predecessor to try.
        let mut rev: Steps = Vec::new();
        let mut stack: Vec<(u32, usize)> = vec![(v, 0)];
        while let Some((at, next)) = stack.last_mut() {
            if self.levels.get(*at) == 0 {
                let steps: Steps = rev.iter().rev().copied().collect();
                if !f(&steps)? {
                    return Ok(false);
                }
                stack.pop();
                rev.pop();
                continue;
            }
            let Some(&h) = self.preds_of(*at).get(*next) else {
                stack.pop();
                rev.pop();
                continue;
            };
            *next += 1;
            rev.push((h.et, h.rank, h.to));
            stack.push((h.from, 0));
        }
        Ok(true)
    }
}

/// A walk found by a backward search (from `start`, steps over negated types), turned into the forward path it
/// is: from its last vertex back to `start`.
fn reverse(start: u32, steps: &Steps) -> (u32, Steps) {
    let mut out = Vec::with_capacity(steps.len());
    let mut at = start;
    let mut forward: Vec<(i32, i64, u32)> = Vec::with_capacity(steps.len());
    for &(et, rank, to) in steps {
        // Walking `et` from `at` to `to` is walking `-et` from `to` to `at`.
        forward.push((-et, rank, at));
        at = to;
    }
    out.extend(forward.into_iter().rev());
    (at, out)
}

fn has_duplicate_edge(src: u32, steps: &Steps) -> bool {
    let mut seen = HashSet::with_capacity(steps.len());
    let mut at = src;
    for &(et, rank, to) in steps {
        if !seen.insert(stored(at, et, rank, to)) {
            return true;
        }
        at = to;
    }
    false
}

impl EmbeddedStorage {
    /// Where a search over `edge_types` reads neighbours: the topology itself, or storage's neighbour read when the
    /// edges need a filter or may have expired (TTL).
    fn source<'a>(
        &'a self,
        space: &'a SpaceDesc,
        topo: &'a RwLock<SpaceTopology>,
        edge_types: &'a [(i32, SchemaRef)],
        filter: Option<&'a Expr>,
        budget: &'a Budget,
    ) -> Box<dyn Source + 'a> {
        let any_ttl = edge_types.iter().any(|(_, s)| crate::ttl::has_ttl(s));
        if filter.is_none() && !any_ttl {
            Box::new(TopoSource { topo, types: edge_types.iter().map(|(et, _)| *et).collect(), budget, edges_read: 0 })
        } else {
            Box::new(ReadSource {
                read: Box::new(move |req| self.get_neighbors(space, req)),
                ids: Ids::Topology(topo),
                edge_types,
                filter,
                budget,
                edges_read: 0,
            })
        }
    }

    pub(crate) fn search_paths(&self, space: &SpaceDesc, req: &PathSearchRequest) -> QResult<PathSearchResult> {
        let topo = self.topology(space)?;
        let mut source = self.source(space, &topo, &req.edge_types, req.filter.as_ref(), &req.budget);
        search_paths(source.as_mut(), req)
    }
}

/// A reading source numbering vertices as it meets them: searches over a cluster's neighbour reads.
fn client_source<'a>(
    read: &'a mut NeighborRead<'a>,
    edge_types: &'a [(i32, SchemaRef)],
    filter: Option<&'a Expr>,
    budget: &'a Budget,
) -> ReadSource<'a> {
    ReadSource {
        read: Box::new(read),
        ids: Ids::Own { ids: HashMap::new(), values: Vec::new() },
        edge_types,
        filter,
        budget,
        edges_read: 0,
    }
}

/// `FIND PATH` over neighbour reads alone, one read per frontier batch: a cluster's client when no storage host
/// carries the whole space (each read goes to the partitions' leaders).
pub fn search_paths_by_reads<'a>(
    req: &'a PathSearchRequest,
    read: &'a mut NeighborRead<'a>,
) -> QResult<PathSearchResult> {
    let mut source = client_source(read, &req.edge_types, req.filter.as_ref(), &req.budget);
    search_paths(&mut source, req)
}

fn search_paths(src: &mut dyn Source, req: &PathSearchRequest) -> QResult<PathSearchResult> {
    let mut ids = |vids: &[Value]| -> Vec<u32> {
        let mut seen = HashSet::new();
        vids.iter().filter_map(|v| src.id_of(v)).filter(|id| seen.insert(*id)).collect()
    };
    let (sources, targets) = (ids(&req.sources), ids(&req.targets));
    let mut sink = Sink { paths: Vec::new(), limit: req.limit.unwrap_or(usize::MAX), meter: Meter::new(&req.budget) };
    if !sources.is_empty() && !targets.is_empty() && req.max_steps > 0 && !sink.full() {
        match req.kind {
            PathKind::Shortest | PathKind::SingleShortest => {
                shortest(src, &sources, &targets, req.max_steps, req.kind == PathKind::SingleShortest, &mut sink)?
            }
            PathKind::All | PathKind::NoLoop => {
                all(src, &sources, &targets, req.max_steps, req.kind == PathKind::NoLoop, &mut sink)?
            }
        }
    }
    let paths = sink
        .paths
        .iter()
        .map(|(s, steps)| FoundPath {
            src: src.vid(*s),
            steps: steps.iter().map(|&(et, rank, to)| FoundStep { edge_type: et, rank, dst: src.vid(to) }).collect(),
        })
        .collect();
    req.budget.check()?;
    Ok(PathSearchResult { paths, edges_read: src.edges_read() })
}

fn shortest(
    src: &mut dyn Source,
    sources: &[u32],
    targets: &[u32],
    max: u32,
    single: bool,
    sink: &mut Sink<'_>,
) -> QResult<()> {
    if let ([s], [t]) = (sources, targets) {
        if s != t {
            return shortest_pair(src, *s, *t, max, single, sink);
        }
    }
    // One search per vertex of the smaller side, towards the whole other side.
    let backward = targets.len() < sources.len();
    let (starts, ends) = if backward { (targets, sources) } else { (sources, targets) };
    let ends: HashSet<u32> = ends.iter().copied().collect();
    let mut hits = Vec::new();
    let mut spare = Levels::new();
    for &s in starts {
        if sink.full() {
            break;
        }
        let mut ball = Ball::new(s, backward, std::mem::replace(&mut spare, Levels::new()));
        let mut remaining: HashSet<u32> = ends.clone();
        // A start that is also an end: its shortest cycles, closed by edges back into it.
        let mut closing: Vec<Hit> = Vec::new();
        let wants_cycle = remaining.remove(&s);
        let mut cycle_found = !wants_cycle;
        let mut found: Vec<u32> = Vec::new();
        while ball.depth < max && !ball.frontier.is_empty() && (!remaining.is_empty() || !cycle_found) {
            ball.expand(src, &mut hits, |h| {
                if !cycle_found {
                    closing.push(h)
                }
            })?;
            cycle_found |= !closing.is_empty();
            for v in &ball.frontier {
                if remaining.remove(v) {
                    found.push(*v);
                }
            }
        }
        ball.sort_preds();
        for end in found {
            ball.walks_to(end, &mut |steps| {
                if sink.full() {
                    return Ok(false);
                }
                let pushed = emit(sink, backward, s, steps.clone())?;
                Ok(!(sink.full() || single && pushed))
            })?;
        }
        let mut done = false;
        for h in closing {
            if done || sink.full() {
                break;
            }
            ball.walks_to(h.from, &mut |steps| {
                if sink.full() {
                    return Ok(false);
                }
                let mut steps = steps.clone();
                steps.push((h.et, h.rank, s));
                done = emit(sink, backward, s, steps)? && single;
                Ok(!done && !sink.full())
            })?;
        }
        spare = ball.levels;
        spare.clear();
    }
    Ok(())
}

/// Hands a walk found from `start` to the sink as the forward path it is, unless it walks an edge twice; returns
/// whether it was kept.
fn emit(sink: &mut Sink<'_>, backward: bool, start: u32, steps: Steps) -> QResult<bool> {
    let (s, steps) = if backward { reverse(start, &steps) } else { (start, steps) };
    if has_duplicate_edge(s, &steps) {
        return Ok(false);
    }
    sink.push(s, steps)?;
    Ok(true)
}

/// The shortest paths between two different vertices: balls grown from both ends, the smaller frontier first,
/// until they meet.
fn shortest_pair(src: &mut dyn Source, s: u32, t: u32, max: u32, single: bool, sink: &mut Sink<'_>) -> QResult<()> {
    let mut fwd = Ball::new(s, false, Levels::new());
    let mut bwd = Ball::new(t, true, Levels::new());
    let mut hits = Vec::new();
    while fwd.depth + bwd.depth < max && !fwd.frontier.is_empty() && !bwd.frontier.is_empty() {
        let forward = fwd.frontier.len() <= bwd.frontier.len();
        let (grown, other) = if forward { (&mut fwd, &bwd) } else { (&mut bwd, &fwd) };
        // Edges back into a ball's own start lead nowhere new: not predecessors.
        grown.expand(src, &mut hits, |_| {})?;
        let Some(rest) = grown.frontier.iter().map(|&v| other.levels.get(v)).filter(|&d| d != UNSEEN).min() else {
            continue;
        };
        let meets: Vec<u32> = grown.frontier.iter().copied().filter(|&v| other.levels.get(v) == rest).collect();
        fwd.sort_preds();
        bwd.sort_preds();
        for m in meets {
            let go_on = fwd.walks_to(m, &mut |head| {
                bwd.walks_to(m, &mut |tail| {
                    if sink.full() {
                        return Ok(false);
                    }
                    let (_, tail) = reverse(t, tail);
                    let mut steps = head.clone();
                    steps.extend(tail);
                    sink.push(s, steps)?;
                    Ok(!single)
                })
            })?;
            if !go_on || single {
                break;
            }
        }
        return Ok(());
    }
    Ok(())
}

/// Every path of one to `max` steps from a source to a target, with no edge (or, `no_loop`, no vertex) twice.
fn all(
    src: &mut dyn Source,
    sources: &[u32],
    targets: &[u32],
    max: u32,
    no_loop: bool,
    sink: &mut Sink<'_>,
) -> QResult<()> {
    // Each vertex's distance to the nearest target, walking backwards, up to `max`.
    let mut to_target = Levels::new();
    let mut frontier: Vec<u32> = targets.to_vec();
    targets.iter().for_each(|&t| to_target.set(t, 0));
    let mut hits = Vec::new();
    for depth in 1..=max {
        if frontier.is_empty() {
            break;
        }
        hits.clear();
        src.expand(&frontier, true, &mut hits)?;
        frontier.clear();
        for h in &hits {
            if to_target.get(h.to) == UNSEEN {
                to_target.set(h.to, depth);
                frontier.push(h.to);
            }
        }
    }
    let is_target: HashSet<u32> = targets.iter().copied().collect();
    let mut cache: HashMap<u32, Rc<Vec<Hit>>> = HashMap::new();
    let mut neighbours = |v: u32, src: &mut dyn Source| -> QResult<Rc<Vec<Hit>>> {
        if let Some(n) = cache.get(&v) {
            return Ok(n.clone());
        }
        let mut out = Vec::new();
        src.expand(&[v], false, &mut out)?;
        let n = Rc::new(out);
        cache.insert(v, n.clone());
        Ok(n)
    };
    for &s in sources {
        if sink.full() {
            break;
        }
        if to_target.get(s) == UNSEEN {
            continue;
        }
        // Depth-first: per level, the vertex's edges and the next one to try.
        let mut stack: Vec<(Rc<Vec<Hit>>, usize)> = vec![(neighbours(s, src)?, 0)];
        let mut steps: Steps = Vec::new();
        let mut edges: Vec<(u32, u32, i32, i64)> = Vec::new();
        let mut on_path: Vec<u32> = vec![s];
        while let Some((list, pos)) = stack.last_mut() {
            // Per edge considered: a walk over cached neighbours reads nothing and may find nothing for long.
            sink.meter.tick()?;
            let Some(&h) = list.get(*pos) else {
                stack.pop();
                steps.pop();
                edges.pop();
                on_path.pop();
                continue;
            };
            *pos += 1;
            let depth = steps.len() as u32 + 1;
            let d = to_target.get(h.to);
            if d == UNSEEN || depth + d > max {
                continue;
            }
            let key = stored(h.from, h.et, h.rank, h.to);
            if if no_loop { on_path.contains(&h.to) } else { edges.contains(&key) } {
                continue;
            }
            steps.push((h.et, h.rank, h.to));
            if is_target.contains(&h.to) {
                sink.push(s, steps.clone())?;
                if sink.full() {
                    return Ok(());
                }
            }
            if depth < max {
                edges.push(key);
                on_path.push(h.to);
                let next = neighbours(h.to, src)?;
                stack.push((next, 0));
            } else {
                steps.pop();
            }
        }
    }
    Ok(())
}

impl EmbeddedStorage {
    /// GET SUBGRAPH's rounds on dense ids: each round's edges are kept or dropped by a look at two arrays, and only
    /// the kept ones become values.
    pub(crate) fn subgraph_rounds(
        &self,
        space: &SpaceDesc,
        req: &SubgraphRequest,
        expandable: &mut dyn FnMut(&[Value]) -> QResult<Vec<bool>>,
    ) -> QResult<Vec<SubgraphRound>> {
        let topo = self.topology(space)?;
        let mut source = self.source(space, &topo, &req.edge_types, req.filter.as_ref(), &req.budget);
        subgraph_rounds(source.as_mut(), req, expandable)
    }
}

/// GET SUBGRAPH over neighbour reads alone, one read per round: a cluster's client when no storage host carries the
/// whole space.
pub fn subgraph_by_reads<'a>(
    req: &'a SubgraphRequest,
    read: &'a mut NeighborRead<'a>,
    expandable: &mut dyn FnMut(&[Value]) -> QResult<Vec<bool>>,
) -> QResult<Vec<SubgraphRound>> {
    let mut source = client_source(read, &req.edge_types, req.filter.as_ref(), &req.budget);
    subgraph_rounds(&mut source, req, expandable)
}

/// GET SUBGRAPH's rounds on dense ids: each round's edges are kept or dropped by a look at two arrays, and only the
/// kept ones become values.
fn subgraph_rounds(
    src: &mut dyn Source,
    req: &SubgraphRequest,
    expandable: &mut dyn FnMut(&[Value]) -> QResult<Vec<bool>>,
) -> QResult<Vec<SubgraphRound>> {
    let mut seen = HashSet::new();
    let starts: Vec<Value> = req.starts.iter().filter(|v| seen.insert((*v).clone())).cloned().collect();
    let mut frontier: Vec<u32> = starts.iter().filter_map(|v| src.id_of(v)).collect();
    // `STEPS 4294967295` walks until no new vertex is met (the rounds stop there whatever the count).
    let total = req.steps.saturating_add(1);
    // The round each vertex was met in, once that round is over (the starts: 0); NebulaGraph's `historyVids_`.
    let mut history = Levels::new();
    // Membership in the round being walked (the round's number), with what it adds to `history`.
    let mut current = Levels::new();
    let mut added: Vec<(u32, u32)> = Vec::new();
    let mut expanded = Levels::new();
    let mut rounds: Vec<(Vec<Value>, Vec<Hit>)> = Vec::new();
    let mut hits = Vec::new();
    for step in 1..=total {
        req.budget.check()?;
        let vertices = if step == 1 {
            for &v in &frontier {
                current.set(v, 1);
                added.push((v, 0));
            }
            starts.clone()
        } else {
            let mut vertices: Vec<Value> = frontier.iter().map(|&v| src.vid(v)).collect();
            let keep = expandable(&vertices)?;
            let mut k = keep.iter();
            frontier.retain(|_| k.next().copied().unwrap_or(true));
            let mut k = keep.iter();
            vertices.retain(|_| k.next().copied().unwrap_or(true));
            vertices
        };
        for &v in &frontier {
            expanded.set(v, 1);
        }
        if step > 1 {
            // Edges of the round before to a vertex refused just now go (`filterEdges(-1)`).
            if let Some((_, edges)) = rounds.last_mut() {
                edges.retain(|h| expanded.get(h.to) != UNSEEN);
            }
            if frontier.is_empty() {
                break;
            }
        }
        hits.clear();
        if step == total {
            // The last round keeps only edges to vertices met before: the others are not even collected.
            src.expand_to(&frontier, false, &|to| history.get(to) != UNSEEN, &mut hits)?;
        } else {
            src.expand(&frontier, false, &mut hits)?;
        }
        let mut next = Vec::new();
        let mut edges = Vec::new();
        for &h in &hits {
            let found = history.get(h.to);
            if found != UNSEEN {
                if req.bidirect.contains(&h.et) && (h.et < 0 || found + 2 == step) {
                    continue;
                }
            } else {
                if step == total {
                    continue;
                }
                if current.get(h.to) != step {
                    current.set(h.to, step);
                    added.push((h.to, step));
                    next.push(h.to);
                }
            }
            edges.push(h);
        }
        rounds.push((vertices, edges));
        for (v, round) in added.drain(..) {
            history.set(v, round);
        }
        if next.is_empty() {
            break;
        }
        frontier = next;
    }
    // At the end, the last round's edges to a vertex never expanded go too (`filterEdges(0)`).
    if let Some((_, edges)) = rounds.last_mut() {
        edges.retain(|h| expanded.get(h.to) != UNSEEN);
    }
    Ok(rounds
        .into_iter()
        .map(|(vertices, edges)| SubgraphRound {
            vertices,
            edges: edges
                .into_iter()
                .map(|h| NeighborEdge {
                    from: src.vid(h.from),
                    edge_type: h.et,
                    rank: h.rank,
                    to: src.vid(h.to),
                    props: None,
                })
                .collect(),
        })
        .collect())
}
