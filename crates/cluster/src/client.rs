//! [`ClusterStorage`]: graphd's [`StorageClient`] over the storage hosts of a cluster.
//!
//! A request that names vertices or edges is split by partition (NebulaGraph's `part → VIDs`), each host is sent
//! the parts it leads, all hosts at once, and the answers are put back in the request's order. A host that does
//! not lead a part says so before doing anything; the client asks again where the leader now is, until
//! [`RETRY_FOR`] has passed. Requests over a whole space (the storage-side multi-hop reads, scans, counts and the
//! range deletes) go to one host that carries every partition, once it has caught up with every partition's
//! leader ([`crate::StorageHost::catch_up`]).
//!
//! Hosts are reached through [`HostHandle`]: in process, or behind the network ([`crate::process`]); every request
//! is a [`HostRequest`] value either way.
//!
//! When no host carries every partition (NebulaGraph's default `replica_factor = 1` on several hosts), the reads
//! over a whole space are driven from here: GO walks step by step, path searches and subgraphs level by level
//! (their neighbours read from the partitions' leaders), and scans, counts, index builds and index scans per
//! partition leader; MATCH counts are walked row by row (`counts_paths` is false, so the optimizer does not fuse
//! them into a storage path count, which is refused). Jobs are the meta service's and run per partition leader
//! whatever the placement ([`crate::jobs`]). Not yet: a statement's writes are atomic per partition (each
//! partition's share is one write, coordinated by that partition, all its copies written by [`crate::chain`]); a
//! failure in one partition fails the statement, with the others' shares written, as NebulaGraph answers a write
//! that is not 100 % complete; snapshots are refused.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use quiver_api::*;
use quiver_common::budget::Budget;
use quiver_common::fasthash::FastMap;
use quiver_common::{QError, QResult, Value};
use quiver_raft::{partition_group, GroupId, NodeId};
use quiver_storage::keys::part_of;

use crate::host::HostError;
use crate::rpc::{
    unexpected, Answer, HostHandle, HostRequest, PartOp, RmwOutcome, RmwStep, RmwTarget, SpaceOp, SubgraphAnswer,
};

/// How long a request keeps looking for a partition's leader (an election in progress) before it fails.
pub const RETRY_FOR: Duration = Duration::from_secs(15);

/// What the client needs of a cluster: its hosts, and the spaces' partitions running on them.
pub trait Cluster: Send + Sync {
    /// A host by id.
    fn host(&self, id: NodeId) -> Option<Arc<dyn HostHandle>>;
    /// The hosts, by id.
    fn hosts(&self) -> Vec<Arc<dyn HostHandle>>;
    /// The host that leads `space`'s partition `part` as far as the cluster knows (or one that carries it: a host
    /// that does not lead it says where the leader is).
    fn leader_of(&self, space: u32, part: u32) -> Option<Arc<dyn HostHandle>>;
    /// Makes sure `space`'s partitions run on their hosts (placed and started on first use).
    fn open_space(&self, space: &SpaceDesc) -> QResult<()>;
    /// Whether some host carries every partition of `space` (it serves reads over the whole space).
    fn carried_whole(&self, space: &SpaceDesc) -> bool;
    /// Whether `space` is still in the catalog (a dropped space's partitions are dropped by their hosts).
    fn space_exists(&self, _space: &SpaceDesc) -> bool {
        true
    }
}

/// How many times a read-modify-write decides again on a row that changed under it before it gives up.
const RMW_ATTEMPTS: usize = 100;

/// The one answer of the kind `$variant` each host gave, with the positions it answered for.
macro_rules! answers {
    ($answers:expr, $variant:path) => {
        $answers
            .into_iter()
            .map(|(positions, answer)| match answer {
                $variant(rows) => Ok((positions, rows)),
                other => Err(unexpected(other)),
            })
            .collect::<QResult<Vec<_>>>()
    };
}

/// The answer of the kind `$variant`.
macro_rules! answer {
    ($answer:expr, $variant:path) => {
        match $answer {
            $variant(v) => Ok(v),
            other => Err(unexpected(other)),
        }
    };
}

pub struct ClusterStorage {
    cluster: Arc<dyn Cluster>,
    /// The catalog: where the jobs are kept ([`crate::jobs`]), and the indexes a build marks ready.
    pub(crate) catalog: Arc<dyn Catalog>,
    /// The leader each partition had when last asked.
    leaders: Mutex<HashMap<GroupId, NodeId>>,
    /// Where the next read of a whole space starts looking for a host that carries the space: they take turns, so
    /// no one host walks every multi-hop read.
    next_whole: std::sync::atomic::AtomicUsize,
    pub(crate) job_wake: Arc<crate::jobs::JobWake>,
}

/// Positions of a request's items, by partition.
type PartItems = BTreeMap<u32, Vec<usize>>;

impl ClusterStorage {
    /// A client of `cluster`, whose schemas and jobs are in `catalog`. Its jobs run once
    /// [`ClusterStorage::start_jobs`] is called.
    pub fn new(cluster: Arc<dyn Cluster>, catalog: Arc<dyn Catalog>) -> ClusterStorage {
        ClusterStorage {
            cluster,
            catalog,
            leaders: Mutex::default(),
            next_whole: std::sync::atomic::AtomicUsize::new(0),
            job_wake: Arc::default(),
        }
    }

    pub(crate) fn cluster(&self) -> &Arc<dyn Cluster> {
        &self.cluster
    }

    fn leader(&self, space: &SpaceDesc, part: u32) -> Option<Arc<dyn HostHandle>> {
        let group = partition_group(space.id, part);
        let cached = self.leaders.lock().expect("lock poisoned").get(&group).copied();
        if let Some(host) = cached.and_then(|id| self.cluster.host(id)) {
            return Some(host);
        }
        let host = self.cluster.leader_of(space.id, part)?;
        self.leaders.lock().expect("lock poisoned").insert(group, host.id());
        Some(host)
    }

    fn forget_leader(&self, space: &SpaceDesc, part: u32, hint: Option<NodeId>) {
        let group = partition_group(space.id, part);
        let mut leaders = self.leaders.lock().expect("lock poisoned");
        match hint {
            Some(id) => leaders.insert(group, id),
            None => leaders.remove(&group),
        };
    }

    /// Sends each partition of `parts`' leader host the request `op` makes for that host's partitions, all hosts
    /// at once; a host answers once it confirmed it leads them. Asks again for the parts of a host that does not.
    fn on_leaders(
        &self,
        space: &SpaceDesc,
        parts: Vec<u32>,
        op: &(dyn Fn(&[u32]) -> PartOp + Sync),
    ) -> QResult<Vec<(Vec<u32>, Answer)>> {
        self.cluster.open_space(space)?;
        let started = Instant::now();
        let mut pending = parts;
        let mut out = Vec::new();
        while !pending.is_empty() {
            // By host id (a few hosts: a list, searched).
            let mut by_host: Vec<(Arc<dyn HostHandle>, Vec<u32>)> = Vec::new();
            let mut again = Vec::new();
            for part in std::mem::take(&mut pending) {
                match self.leader(space, part) {
                    Some(host) => match by_host.iter_mut().find(|(h, _)| h.id() == host.id()) {
                        Some((_, parts)) => parts.push(part),
                        None => by_host.push((host, vec![part])),
                    },
                    None => again.push(part),
                }
            }
            by_host.sort_by_key(|(h, _)| h.id());
            let ask = |host: &dyn HostHandle, parts: &[u32]| -> Result<Answer, HostError> {
                host.call(HostRequest::Parts { space: space.clone(), lead: parts.to_vec(), op: op(parts) })
            };
            // The first host is asked on this thread, each other one on a thread of its own, all at once (one host,
            // most requests: no thread started).
            let mut hosts = by_host.into_iter();
            let answers: Vec<(Vec<u32>, Result<Answer, HostError>)> = match hosts.next() {
                // No part's leader is known: they are all asked again below.
                None => Vec::new(),
                Some((first_host, first_parts)) => std::thread::scope(|scope| {
                    let running: Vec<_> = hosts
                        .map(|(host, parts)| {
                            let asked = parts.clone();
                            let handle = scope.spawn(move || ask(host.as_ref(), &asked));
                            (parts, handle)
                        })
                        .collect();
                    let first = ask(first_host.as_ref(), &first_parts);
                    std::iter::once((first_parts, first))
                        .chain(running.into_iter().map(|(parts, h)| {
                            let answer = h.join().unwrap_or_else(|_| {
                                Err(HostError::Failed(QError::storage("a storage request panicked")))
                            });
                            (parts, answer)
                        }))
                        .collect()
                }),
            };
            for (parts, answer) in answers {
                match answer {
                    Ok(r) => out.push((parts, r)),
                    Err(HostError::Failed(e)) => return Err(e),
                    Err(e @ (HostError::NotCarried | HostError::Replica(_) | HostError::Behind(_))) => {
                        return Err(QError::storage(format!("a storage host refused: {e:?}")))
                    }
                    Err(HostError::NotLeader { part, leader }) => {
                        // The host refused before doing anything: all of its parts are asked again.
                        for p in parts {
                            self.forget_leader(space, p, if p == part { leader } else { None });
                            again.push(p);
                        }
                    }
                }
            }
            if !again.is_empty() {
                wait_for_leaders(space, &again, started)?;
                pending = again;
            }
        }
        Ok(out)
    }

    /// `on_leaders` for a request of items, `parts[i]` the partition of item `i`: each host is sent the request
    /// `op` makes for the positions of the items of its partitions, in request order; answers with them.
    fn on_items(
        &self,
        space: &SpaceDesc,
        parts: &[u32],
        op: &(dyn Fn(&[usize]) -> PartOp + Sync),
    ) -> QResult<Vec<(Vec<usize>, Answer)>> {
        if let Some(&only) = parts.first().filter(|&&p| parts.iter().all(|&q| q == p)) {
            // Every item in one partition (a 1-hop read from one vertex, most often): no grouping.
            let all: Vec<usize> = (0..parts.len()).collect();
            let answers = self.on_leaders(space, vec![only], &|_| op(&all))?;
            return Ok(answers.into_iter().map(|(_, answer)| (all.clone(), answer)).collect());
        }
        let mut by_part = PartItems::new();
        for (i, &p) in parts.iter().enumerate() {
            by_part.entry(p).or_default().push(i);
        }
        let positions_of = |led: &[u32]| {
            let mut positions: Vec<usize> = led.iter().flat_map(|p| by_part[p].iter().copied()).collect();
            positions.sort_unstable();
            positions
        };
        let asked: Vec<u32> = by_part.keys().copied().collect();
        let answers = self.on_leaders(space, asked, &|led| op(&positions_of(led)))?;
        Ok(answers.into_iter().map(|(led, answer)| (positions_of(&led), answer)).collect())
    }

    /// Sends `op` to the leader host of one partition (on this thread), which runs it once it confirmed it leads it.
    pub(crate) fn on_part(&self, space: &SpaceDesc, part: u32, op: &dyn Fn() -> PartOp) -> QResult<Answer> {
        self.cluster.open_space(space)?;
        let started = Instant::now();
        loop {
            let refused = match self.leader(space, part) {
                Some(host) => {
                    match host.call(HostRequest::Parts { space: space.clone(), lead: vec![part], op: op() }) {
                        Ok(answer) => return Ok(answer),
                        Err(e) => e,
                    }
                }
                None => HostError::NotLeader { part, leader: None },
            };
            match refused {
                HostError::Failed(e) => return Err(e),
                HostError::NotLeader { leader, .. } => self.forget_leader(space, part, leader),
                e @ (HostError::NotCarried | HostError::Replica(_) | HostError::Behind(_)) => {
                    return Err(QError::storage(format!("a storage host refused: {e:?}")))
                }
            }
            wait_for_leaders(space, &[part], started)?;
        }
    }

    /// Sends `op` to a host that carries every partition of `space` (the hosts take turns), which runs it once it has
    /// caught up with every leader; `None` when no host carries them all.
    fn on_whole_space_if_carried(&self, space: &SpaceDesc, op: &dyn Fn() -> SpaceOp) -> QResult<Option<Answer>> {
        self.cluster.open_space(space)?;
        let started = Instant::now();
        loop {
            let mut last = None;
            let hosts = self.cluster.hosts();
            let first = self.next_whole.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % hosts.len().max(1);
            for host in hosts.iter().cycle().skip(first).take(hosts.len()) {
                match host.call(HostRequest::Whole { space: space.clone(), op: op() }) {
                    Ok(answer) => return Ok(Some(answer)),
                    Err(HostError::NotCarried) => {}
                    Err(HostError::Failed(e)) => return Err(e),
                    Err(e) => last = Some(e),
                }
            }
            match last {
                None => return Ok(None),
                Some(e) if started.elapsed() > RETRY_FOR => {
                    return Err(QError::storage(format!("no storage host could serve the whole space: {e:?}")))
                }
                Some(_) => std::thread::sleep(Duration::from_millis(50)),
            }
        }
    }

    /// A GO walk ([`ExpandRequest`] without `paths`) driven step by step: each step's frontier is split by partition
    /// and each leader host walks one step from its share ([`PartOp::ExpandStep`]), all hosts at once; the far ends
    /// are merged with their walk counts. The ends come in first-reached order per host, hosts in partition order.
    fn expand_by_steps(&self, space: &SpaceDesc, req: &ExpandRequest) -> QResult<ExpandResult> {
        let mut result = ExpandResult::default();
        let (mut frontier, mut at) = (Vec::new(), HashMap::new());
        for v in &req.starts {
            tally(&mut frontier, &mut at, v.clone(), 1);
        }
        // Walked lazily: `GO 4294967295 STEPS` repeats one hop that many times, and stops when nothing is left.
        let steps = req.hops.iter().flat_map(|h| std::iter::repeat_n(h, h.times as usize));
        let total: u64 = req.hops.iter().map(|h| u64::from(h.times)).sum();
        for (i, hop) in steps.enumerate() {
            req.budget.check()?;
            if frontier.is_empty() {
                return Ok(result);
            }
            if hop.distinct {
                frontier.iter_mut().for_each(|(_, m)| *m = 1);
            }
            let count_only = i as u64 + 1 == total && req.output == ExpandOutput::Count;
            let parts: Vec<u32> = frontier.iter().map(|(v, _)| part_of(space, v)).collect();
            let answers = self.on_items(space, &parts, &|positions| PartOp::ExpandStep {
                frontier: pick(&frontier, positions),
                edge_types: hop.edge_types.clone(),
                count_only,
                budget: req.budget.clone(),
            })?;
            let (mut next, mut next_at) = (Vec::new(), HashMap::new());
            for (_, step) in answers!(answers, Answer::Expand)? {
                result.edges_read += step.edges_read;
                if count_only {
                    result.paths = result.paths.saturating_add(step.paths);
                }
                for (v, m) in step.ends {
                    tally(&mut next, &mut next_at, v, m);
                }
            }
            if count_only {
                return quiver_storage::check_expand_counts(result);
            }
            frontier = next;
        }
        result.paths = frontier.iter().fold(0u64, |s, (_, m)| s.saturating_add(*m));
        result.ends = frontier;
        quiver_storage::check_expand_counts(result)
    }

    /// A read-modify-write of one row as a compare-and-set loop ([`RmwStep`]).
    fn rmw(
        &self,
        space: &SpaceDesc,
        part: u32,
        target: &dyn Fn() -> RmwTarget,
        schema: &SchemaRef,
        decide: &mut dyn FnMut(Option<&Props>) -> QResult<RmwDecision>,
    ) -> QResult<Option<Props>> {
        let step = |step: RmwStep| -> QResult<RmwOutcome> {
            let op = || PartOp::Rmw { target: target(), schema: schema.clone(), step: step.clone() };
            match self.on_part(space, part, &op)? {
                Answer::Rmw(outcome) => Ok(outcome),
                other => Err(unexpected(other)),
            }
        };
        let mut seen = match step(RmwStep::Read)? {
            RmwOutcome::Seen(now) => now,
            other => return Err(QError::storage(format!("a read of a row answered {other:?}"))),
        };
        for _ in 0..RMW_ATTEMPTS {
            let values = match decide(seen.as_ref())? {
                RmwDecision::Write(values) => Some(values),
                RmwDecision::Keep => None,
            };
            match step(RmwStep::Write { seen: seen.clone(), values })? {
                RmwOutcome::Done(row) => return Ok(row),
                RmwOutcome::Changed(now) | RmwOutcome::Seen(now) => seen = now,
            }
        }
        Err(QError::storage(format!(
            "the row changed under {RMW_ATTEMPTS} attempts to update it; nothing was written. Try again later"
        )))
    }
}

/// Adds `m` walks reaching `v` to `list` (in first-reached order; `at`: where each vertex is in it).
fn tally(list: &mut Vec<(Value, u64)>, at: &mut HashMap<Value, usize>, v: Value, m: u64) {
    match at.get(&v) {
        Some(&i) => list[i].1 = list[i].1.saturating_add(m),
        None => {
            at.insert(v.clone(), list.len());
            list.push((v, m));
        }
    }
}

/// Pauses before asking again for partitions that had no leader, or gives up once [`RETRY_FOR`] has passed.
fn wait_for_leaders(space: &SpaceDesc, parts: &[u32], started: Instant) -> QResult<()> {
    if started.elapsed() > RETRY_FOR {
        return Err(QError::storage(format!(
            "no leader answered for parts {parts:?} of space {} within {} s",
            space.id,
            RETRY_FOR.as_secs()
        )));
    }
    std::thread::sleep(Duration::from_millis(50));
    Ok(())
}

fn pick<T: Clone>(all: &[T], positions: &[usize]) -> Vec<T> {
    positions.iter().map(|&i| all[i].clone()).collect()
}

/// Answers of several hosts, each for its positions, back in the request's order.
fn reassemble<T>(n: usize, parts: Vec<(Vec<usize>, Vec<T>)>) -> Vec<T> {
    let mut slots: Vec<Option<T>> = (0..n).map(|_| None).collect();
    for (positions, values) in parts {
        for (i, v) in positions.into_iter().zip(values) {
            slots[i] = Some(v);
        }
    }
    slots.into_iter().map(|v| v.expect("every position answered")).collect()
}

pub(crate) fn done(answer: Answer) -> QResult<()> {
    match answer {
        Answer::Done => Ok(()),
        other => Err(unexpected(other)),
    }
}

impl StorageClient for ClusterStorage {
    fn get_vertices(
        &self,
        space: &SpaceDesc,
        vids: &[Value],
        tags: &[SchemaRef],
        props: &PropSelection,
    ) -> QResult<Vec<Option<VertexData>>> {
        let parts: Vec<u32> = vids.iter().map(|v| part_of(space, v)).collect();
        let answers = self.on_items(space, &parts, &|positions| PartOp::GetVertices {
            vids: pick(vids, positions),
            tags: tags.to_vec(),
            props: props.clone(),
        })?;
        Ok(reassemble(vids.len(), answers!(answers, Answer::Vertices)?))
    }

    fn get_tag_columns(
        &self,
        space: &SpaceDesc,
        vids: &[Value],
        tags: &[SchemaRef],
        props: &PropSelection,
    ) -> QResult<Vec<TagColumns>> {
        let parts: Vec<u32> = vids.iter().map(|v| part_of(space, v)).collect();
        let answers = self.on_items(space, &parts, &|positions| PartOp::GetTagColumns {
            vids: pick(vids, positions),
            tags: tags.to_vec(),
            props: props.clone(),
        })?;
        let answers = answers!(answers, Answer::TagColumns)?;
        let n = vids.len();
        let mut out: Vec<TagColumns> = tags
            .iter()
            .map(|t| {
                let (_, names) = TagColumns::selected(t, props);
                TagColumns {
                    schema: t.clone(),
                    present: vec![false; n],
                    columns: vec![vec![Value::Empty; n]; names.len()],
                    names,
                }
            })
            .collect();
        for (positions, cols) in answers {
            for (whole, part) in out.iter_mut().zip(cols) {
                for (j, &i) in positions.iter().enumerate() {
                    whole.present[i] = part.present[j];
                    for (wc, pc) in whole.columns.iter_mut().zip(&part.columns) {
                        wc[i] = pc[j].clone();
                    }
                }
            }
        }
        Ok(out)
    }

    fn get_edges(&self, space: &SpaceDesc, schema: &SchemaRef, keys: &[EdgeKeyVal]) -> QResult<Vec<Option<Props>>> {
        let parts: Vec<u32> = keys.iter().map(|k| part_of(space, &k.src)).collect();
        let answers = self.on_items(space, &parts, &|positions| PartOp::GetEdges {
            schema: schema.clone(),
            keys: pick(keys, positions),
        })?;
        Ok(reassemble(keys.len(), answers!(answers, Answer::Edges)?))
    }

    fn get_neighbors(&self, space: &SpaceDesc, req: &NeighborsRequest) -> QResult<Vec<NeighborEdge>> {
        let parts: Vec<u32> = req.vids.iter().map(|v| part_of(space, v)).collect();
        let answers = self.on_items(space, &parts, &|positions| {
            PartOp::GetNeighbors(NeighborsRequest { vids: pick(&req.vids, positions), ..req.clone() })
        })?;
        let mut answers = answers!(answers, Answer::Neighbors)?;
        if answers.len() == 1 {
            // One host read every vertex, in the request's order.
            return Ok(answers.pop().expect("one answer").1);
        }
        // Back in the order of the request's vertices, each host's edges in its own order, then the limit.
        // Each edge's key is looked up once (a sort's comparisons would look it up O(n log n) times).
        let first: FastMap<&Value, usize> = req.vids.iter().enumerate().rev().map(|(i, v)| (v, i)).collect();
        let mut keyed: Vec<(usize, NeighborEdge)> = answers
            .into_iter()
            .flat_map(|(_, edges)| edges)
            .map(|e| (first.get(&e.from).copied().unwrap_or(usize::MAX), e))
            .collect();
        keyed.sort_by_key(|(at, _)| *at);
        let mut edges: Vec<NeighborEdge> = keyed.into_iter().map(|(_, e)| e).collect();
        if let Some(limit) = req.limit {
            edges.truncate(limit);
        }
        Ok(edges)
    }

    fn counts_paths(&self, space: &SpaceDesc) -> bool {
        self.cluster.carried_whole(space)
    }

    fn expand(&self, space: &SpaceDesc, req: &ExpandRequest) -> QResult<ExpandResult> {
        match self.on_whole_space_if_carried(space, &|| SpaceOp::Expand(req.clone()))? {
            Some(answer) => answer!(answer, Answer::Expand),
            // No host carries the whole space: a GO walk is driven from here, one request per leader host per step.
            None if !req.paths => self.expand_by_steps(space, req),
            None => Err(QError::not_supported(
                "a MATCH path count over a space no storage host carries whole (in a cluster)",
            )),
        }
    }

    fn find_paths(&self, space: &SpaceDesc, req: &PathSearchRequest) -> QResult<PathSearchResult> {
        match self.on_whole_space_if_carried(space, &|| SpaceOp::FindPaths(req.clone()))? {
            Some(answer) => answer!(answer, Answer::Paths),
            // No host carries the whole space: the search runs here, each level's neighbours read from the
            // partitions' leaders (one request per leader host per level).
            None => quiver_storage::search_paths_by_reads(req, &mut |r| self.get_neighbors(space, r)),
        }
    }

    fn subgraph(
        &self,
        space: &SpaceDesc,
        req: &SubgraphRequest,
        expandable: &mut dyn FnMut(&[Value]) -> QResult<Vec<bool>>,
    ) -> QResult<Vec<SubgraphRound>> {
        // Each round from the second asks the query layer which vertices it may expand from: the host runs the
        // rounds with the answers so far and returns the next question, answered here, until it has every answer.
        let mut decided: Vec<(Vec<Value>, Vec<bool>)> = Vec::new();
        loop {
            let op = || SpaceOp::Subgraph { req: req.clone(), decided: decided.clone() };
            let Some(answer) = self.on_whole_space_if_carried(space, &op)? else {
                // No host carries the whole space: the rounds run here, each one's neighbours read from the
                // partitions' leaders (one request per leader host per round).
                return quiver_storage::subgraph_by_reads(req, &mut |r| self.get_neighbors(space, r), expandable);
            };
            match answer!(answer, Answer::Subgraph)? {
                SubgraphAnswer::Rounds(rounds) => return Ok(rounds),
                SubgraphAnswer::Decide { round, vertices } => {
                    let keep = expandable(&vertices)?;
                    decided.truncate(round);
                    decided.push((vertices, keep));
                }
            }
        }
    }

    fn write(&self, space: &SpaceDesc, mutations: Vec<Mutation>) -> QResult<()> {
        // A vertex deleted with its edges: each edge is deleted as DELETE EDGE would, routed by its source, then the
        // vertex alone (NebulaGraph's graphd does the same). So every write of an edge's two copies is coordinated
        // by its source's partition (crate::chain); an edge added meanwhile stays, both copies.
        // The vertices' edges are listed by their partitions' leaders, one request per leader host, all at once.
        let deleted: Vec<&Value> = mutations
            .iter()
            .filter_map(|m| match m {
                Mutation::DeleteVertex { vid, with_edges: true } => Some(vid),
                _ => None,
            })
            .collect();
        let mut expanded = Vec::with_capacity(mutations.len());
        if !deleted.is_empty() {
            let parts: Vec<u32> = deleted.iter().map(|vid| part_of(space, vid)).collect();
            let op = |positions: &[usize]| PartOp::EdgesOf(positions.iter().map(|&i| deleted[i].clone()).collect());
            for (_, answer) in self.on_items(space, &parts, &op)? {
                expanded.extend(answer!(answer, Answer::EdgeKeys)?.into_iter().map(|key| Mutation::DeleteEdge { key }));
            }
        }
        for m in mutations {
            match m {
                Mutation::DeleteVertex { vid, with_edges: true } => {
                    expanded.push(Mutation::DeleteVertex { vid, with_edges: false })
                }
                m => expanded.push(m),
            }
        }
        let parts: Vec<u32> = expanded
            .iter()
            .map(|m| match m {
                Mutation::InsertVertex { vid, .. }
                | Mutation::DeleteVertex { vid, .. }
                | Mutation::DeleteTags { vid, .. } => part_of(space, vid),
                Mutation::InsertEdge { key, .. } | Mutation::DeleteEdge { key } => part_of(space, &key.src),
            })
            .collect();
        // One write per partition, coordinated by it, in the statement's order within it.
        let answers = self.on_items(space, &parts, &|positions| {
            let mut by_part: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
            for &i in positions {
                by_part.entry(parts[i]).or_default().push(i);
            }
            PartOp::Write(by_part.into_iter().map(|(part, items)| (part, pick(&expanded, &items))).collect())
        })?;
        answers.into_iter().try_for_each(|(_, answer)| done(answer))
    }

    fn rmw_vertex(
        &self,
        space: &SpaceDesc,
        vid: &Value,
        schema: &SchemaRef,
        decide: &mut dyn FnMut(Option<&Props>) -> QResult<RmwDecision>,
    ) -> QResult<Option<Props>> {
        self.rmw(space, part_of(space, vid), &|| RmwTarget::Vertex(vid.clone()), schema, decide)
    }

    fn rmw_edge(
        &self,
        space: &SpaceDesc,
        key: &EdgeKeyVal,
        schema: &SchemaRef,
        decide: &mut dyn FnMut(Option<&Props>) -> QResult<RmwDecision>,
    ) -> QResult<Option<Props>> {
        self.rmw(space, part_of(space, &key.src), &|| RmwTarget::Edge(key.clone()), schema, decide)
    }

    fn scan_vertices(&self, space: &SpaceDesc, schema: Option<&SchemaRef>, limit: usize) -> QResult<Vec<Value>> {
        let op = || SpaceOp::ScanVertices { schema: schema.cloned(), limit: limit as u64 };
        if let Some(answer) = self.on_whole_space_if_carried(space, &op)? {
            return answer!(answer, Answer::Vids);
        }
        // No host carries the whole space: each partition's leader scans its own, in partition order here.
        let op = |_: &[u32]| PartOp::ScanVertices { schema: schema.cloned(), limit: limit as u64 };
        let answers = self.on_leaders(space, space.all_parts(), &op)?;
        let mut by_part: Vec<(u32, Vec<Value>)> = Vec::new();
        for (_, answer) in answers {
            by_part.extend(answer!(answer, Answer::PartVids)?);
        }
        by_part.sort_by_key(|(part, _)| *part);
        Ok(by_part.into_iter().flat_map(|(_, vids)| vids).take(limit).collect())
    }

    fn clear_space(&self, space: &SpaceDesc) -> QResult<()> {
        if !self.cluster.space_exists(space) {
            // DROP SPACE: the storage hosts close its partitions and delete their data as they see the catalog.
            return Ok(());
        }
        match self.on_whole_space_if_carried(space, &|| SpaceOp::ClearSpace)? {
            Some(answer) => done(answer),
            // A range delete reads nothing: partition 1's leader coordinates it as a chain over every partition.
            None => done(self.on_part(space, 1, &|| PartOp::ClearSpace)?),
        }
    }

    fn drop_schema_data(&self, space: &SpaceDesc, schema: &SchemaRef) -> QResult<()> {
        match self.on_whole_space_if_carried(space, &|| SpaceOp::DropSchemaData(schema.clone()))? {
            Some(answer) => done(answer),
            // No host carries the whole space: each partition's leader deletes its partitions' rows.
            None => self
                .on_leaders(space, space.all_parts(), &|_| PartOp::DropSchemaData(schema.clone()))?
                .into_iter()
                .try_for_each(|(_, answer)| done(answer)),
        }
    }

    fn scan_index(&self, space: &SpaceDesc, scans: &[IndexScan], budget: &Budget) -> QResult<Vec<IndexHit>> {
        let op = || SpaceOp::ScanIndex { scans: scans.to_vec(), budget: budget.clone() };
        if let Some(answer) = self.on_whole_space_if_carried(space, &op)? {
            return answer!(answer, Answer::Hits);
        }
        // No host carries the whole space: each partition's leader scans its own; the hits are put in the order one
        // host gives them (by scan, then partition).
        let op = |_: &[u32]| PartOp::ScanIndex { scans: scans.to_vec(), budget: budget.clone() };
        let mut by_part: Vec<(u32, Vec<Vec<IndexHit>>)> = Vec::new();
        for (_, answer) in self.on_leaders(space, space.all_parts(), &op)? {
            by_part.extend(answer!(answer, Answer::PartHits)?);
        }
        by_part.sort_by_key(|(part, _)| *part);
        let mut hits = Vec::new();
        for scan in 0..scans.len() {
            for (_, per_scan) in &mut by_part {
                hits.append(
                    per_scan
                        .get_mut(scan)
                        .ok_or_else(|| QError::storage("a host answered fewer index scans than asked"))?,
                );
            }
        }
        Ok(hits)
    }

    fn index_created(&self, space: &SpaceDesc, index: &IndexRef) -> QResult<Option<i64>> {
        // Each partition's leader writes its partitions' entries, then the index is ready; a build too large to
        // run inside the statement is a job, as in one process.
        if self.stats(space)?.rows(index.kind, index.schema_id) > quiver_storage::jobs::INLINE_BUILD_ROWS {
            let job = NewJob { kind: JobKind::RebuildIndex(index.kind), indexes: vec![index.id], paras: Vec::new() };
            return self.submit_cluster_job(space, job).map(Some);
        }
        self.on_leaders(space, space.all_parts(), &|_| PartOp::BuildIndex(index.clone()))?
            .into_iter()
            .try_for_each(|(_, answer)| done(answer))?;
        self.catalog.set_index_state(space, index.id, IndexState::Ready)?;
        Ok(None)
    }

    fn drop_index_data(&self, space: &SpaceDesc, index_id: i32) -> QResult<()> {
        match self.on_whole_space_if_carried(space, &|| SpaceOp::DropIndexData(index_id))? {
            Some(answer) => done(answer),
            None => done(self.on_part(space, 1, &|| PartOp::DropIndexData(index_id))?),
        }
    }

    // Jobs are the meta service's and run per partition leader (`crate::jobs`).
    fn submit_job(&self, space: &SpaceDesc, job: NewJob) -> QResult<i64> {
        self.submit_cluster_job(space, job)
    }

    fn jobs(&self, space: &SpaceDesc) -> QResult<Vec<JobInfo>> {
        Ok(self.cluster_jobs(space))
    }

    fn stop_job(&self, space: &SpaceDesc, id: i64) -> QResult<()> {
        self.stop_cluster_job(space, id)
    }

    fn recover_jobs(&self, space: &SpaceDesc, only: &[i64]) -> QResult<usize> {
        self.recover_cluster_jobs(space, only)
    }

    fn stats(&self, space: &SpaceDesc) -> QResult<SpaceStats> {
        if let Some(answer) = self.on_whole_space_if_carried(space, &|| SpaceOp::Stats)? {
            return answer!(answer, Answer::Stats);
        }
        // No host carries the whole space: each partition's leader counts its own partitions, summed here.
        let answers = self.on_leaders(space, space.all_parts(), &|_| PartOp::Stats)?;
        let (mut tags, mut edges) = (BTreeMap::<i32, i64>::new(), BTreeMap::<i32, i64>::new());
        let mut total = SpaceStats::default();
        for (_, answer) in answers {
            let s = answer!(answer, Answer::Stats)?;
            for (id, n) in s.tags {
                *tags.entry(id).or_default() += n;
            }
            for (id, n) in s.edges {
                *edges.entry(id).or_default() += n;
            }
            total.vertices += s.vertices;
            total.total_edges += s.total_edges;
        }
        total.tags = tags.into_iter().collect();
        total.edges = edges.into_iter().collect();
        Ok(total)
    }
}

/// Whether one host is among every partition's replicas (`parts`: each partition's hosts).
pub(crate) fn one_host_in_all<H: PartialEq>(parts: &[Vec<H>]) -> bool {
    parts.first().is_some_and(|first| first.iter().any(|h| parts.iter().all(|p| p.contains(h))))
}
