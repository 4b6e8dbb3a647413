//! [`ClusterStorage`]: graphd's [`StorageClient`] over the storage hosts of a cluster.
//!
//! A request that names vertices or edges is split by partition (NebulaGraph's `part → VIDs`), each host is sent
//! the parts it leads, all hosts at once, and the answers are put back in the request's order. A host that does
//! not lead a part says so before doing anything; the client asks again where the leader now is, until
//! [`RETRY_FOR`] has passed. Requests over a whole space (the storage-side multi-hop reads, scans, counts and the
//! range deletes) go to one host that carries every partition, once it has caught up with every partition's
//! leader ([`StorageHost::catch_up`]).
//!
//! Not yet: the hosts are reached in process (the thrift services of `docs/design/cluster.md` §2 come with the
//! processes); multi-hop reads need a host that carries every partition (graphd driving them step by step does
//! not); a statement's writes are atomic per partition (each partition's share is one write, coordinated by that
//! partition, all its copies written by [`crate::chain`]); a failure in one partition fails the statement, with
//! the others' shares written, as NebulaGraph answers a write that is not 100 % complete; jobs and snapshots are
//! refused.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use quiver_api::*;
use quiver_common::budget::Budget;
use quiver_common::{QError, QResult, Value};
use quiver_raft::{partition_group, GroupId, NodeId};
use quiver_storage::keys::part_of;

use crate::host::{HostError, Hosts, StorageHost};

/// How long a request keeps looking for a partition's leader (an election in progress) before it fails.
pub const RETRY_FOR: Duration = Duration::from_secs(15);

/// What the client needs of a cluster: its hosts, and the spaces' partitions running on them.
pub trait Cluster: Hosts {
    /// A running host by id.
    fn host(&self, id: NodeId) -> Option<Arc<StorageHost>>;
    /// The running hosts, by id.
    fn hosts(&self) -> Vec<Arc<StorageHost>>;
    /// Makes sure `space`'s partitions run on their hosts (placed and started on first use).
    fn open_space(&self, space: &SpaceDesc) -> QResult<()>;
}

pub struct ClusterStorage {
    cluster: Arc<dyn Cluster>,
    /// The leader each partition had when last asked.
    leaders: Mutex<HashMap<GroupId, NodeId>>,
}

/// Positions of a request's items, by partition.
type PartItems = BTreeMap<u32, Vec<usize>>;

impl ClusterStorage {
    pub fn new(cluster: Arc<dyn Cluster>) -> ClusterStorage {
        ClusterStorage { cluster, leaders: Mutex::default() }
    }

    fn leader(&self, space: &SpaceDesc, part: u32) -> Option<Arc<StorageHost>> {
        let group = partition_group(space.id, part);
        let cached = self.leaders.lock().expect("lock poisoned").get(&group).copied();
        if let Some(host) = cached.and_then(|id| self.cluster.host(id)) {
            return Some(host);
        }
        let host = self.cluster.leader_of(group)?;
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

    /// Runs `serve` on the leader host of each partition of `parts` with that host's partitions, all hosts at
    /// once, after the host confirmed it leads them; asks again for the parts of a host that no longer leads them.
    fn on_leaders<R: Send>(
        &self,
        space: &SpaceDesc,
        parts: Vec<u32>,
        serve: &(dyn Fn(&StorageHost, &[u32]) -> QResult<R> + Sync),
    ) -> QResult<Vec<R>> {
        self.cluster.open_space(space)?;
        let started = Instant::now();
        let mut pending = parts;
        let mut out = Vec::new();
        while !pending.is_empty() {
            let mut by_host: BTreeMap<NodeId, (Arc<StorageHost>, Vec<u32>)> = BTreeMap::new();
            let mut again = Vec::new();
            for part in std::mem::take(&mut pending) {
                match self.leader(space, part) {
                    Some(host) => by_host.entry(host.id()).or_insert_with(|| (host, Vec::new())).1.push(part),
                    None => again.push(part),
                }
            }
            let ask = |host: &StorageHost, parts: &[u32]| -> Result<R, HostError> {
                host.lead(space.id, parts)?;
                serve(host, parts).map_err(HostError::Failed)
            };
            let answers: Vec<(Vec<u32>, Result<R, HostError>)> = if by_host.len() == 1 {
                // One host: asked on this thread (no thread to start per request).
                let (host, parts) = by_host.into_values().next().expect("one host");
                let answer = ask(&host, &parts);
                vec![(parts, answer)]
            } else {
                std::thread::scope(|scope| {
                    let running: Vec<_> = by_host
                        .into_values()
                        .map(|(host, parts)| {
                            let asked = parts.clone();
                            let handle = scope.spawn(move || ask(&host, &asked));
                            (parts, handle)
                        })
                        .collect();
                    running
                        .into_iter()
                        .map(|(parts, h)| {
                            let answer = h.join().unwrap_or_else(|_| {
                                Err(HostError::Failed(QError::storage("a storage request panicked")))
                            });
                            (parts, answer)
                        })
                        .collect()
                })
            };
            for (parts, answer) in answers {
                match answer {
                    Ok(r) => out.push(r),
                    Err(HostError::Failed(e)) => return Err(e),
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

    /// `on_leaders` for a request of items, `parts[i]` the partition of item `i`: each host serves the positions
    /// of the items of its partitions, in request order.
    fn on_items<R: Send>(
        &self,
        space: &SpaceDesc,
        parts: &[u32],
        serve: &(dyn Fn(&StorageHost, &[usize]) -> QResult<R> + Sync),
    ) -> QResult<Vec<R>> {
        let mut by_part = PartItems::new();
        for (i, &p) in parts.iter().enumerate() {
            by_part.entry(p).or_default().push(i);
        }
        let asked: Vec<u32> = by_part.keys().copied().collect();
        self.on_leaders(space, asked, &|host, led| {
            let mut positions: Vec<usize> = led.iter().flat_map(|p| by_part[p].iter().copied()).collect();
            positions.sort_unstable();
            serve(host, &positions)
        })
    }

    /// Runs `serve` on the leader host of one partition (on this thread), once it confirmed it leads it.
    fn on_part<R>(
        &self,
        space: &SpaceDesc,
        part: u32,
        serve: &mut dyn FnMut(&StorageHost) -> QResult<R>,
    ) -> QResult<R> {
        self.cluster.open_space(space)?;
        let started = Instant::now();
        loop {
            let refused = match self.leader(space, part) {
                Some(host) => match host.lead(space.id, &[part]) {
                    Ok(()) => return serve(&host),
                    Err(e) => e,
                },
                None => HostError::NotLeader { part, leader: None },
            };
            match refused {
                HostError::Failed(e) => return Err(e),
                HostError::NotLeader { leader, .. } => self.forget_leader(space, part, leader),
            }
            wait_for_leaders(space, &[part], started)?;
        }
    }

    /// Runs `serve` on a host that carries every partition of `space`, once it has caught up with every leader.
    fn on_whole_space<R>(&self, space: &SpaceDesc, serve: &dyn Fn(&StorageHost) -> QResult<R>) -> QResult<R> {
        self.cluster.open_space(space)?;
        let started = Instant::now();
        loop {
            let host = self.cluster.hosts().into_iter().find(|h| h.carries_all(space)).ok_or_else(|| {
                QError::not_supported("a read of a whole space when no storage host carries all its partitions")
            })?;
            match host.catch_up(space, self.cluster.as_ref()) {
                Ok(()) => return serve(&host),
                Err(e) if started.elapsed() > RETRY_FOR => return Err(e),
                Err(_) => std::thread::sleep(Duration::from_millis(50)),
            }
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

fn jobs_refused<T>() -> QResult<T> {
    Err(QError::not_supported("jobs in cluster mode"))
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
        let answers = self.on_items(space, &parts, &|host, positions| {
            let rows = host.storage().get_vertices(space, &pick(vids, positions), tags, props)?;
            Ok((positions.to_vec(), rows))
        })?;
        Ok(reassemble(vids.len(), answers))
    }

    fn get_tag_columns(
        &self,
        space: &SpaceDesc,
        vids: &[Value],
        tags: &[SchemaRef],
        props: &PropSelection,
    ) -> QResult<Vec<TagColumns>> {
        let parts: Vec<u32> = vids.iter().map(|v| part_of(space, v)).collect();
        let answers = self.on_items(space, &parts, &|host, positions| {
            let cols = host.storage().get_tag_columns(space, &pick(vids, positions), tags, props)?;
            Ok((positions.to_vec(), cols))
        })?;
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
        let answers = self.on_items(space, &parts, &|host, positions| {
            let rows = host.storage().get_edges(space, schema, &pick(keys, positions))?;
            Ok((positions.to_vec(), rows))
        })?;
        Ok(reassemble(keys.len(), answers))
    }

    fn get_neighbors(&self, space: &SpaceDesc, req: &NeighborsRequest) -> QResult<Vec<NeighborEdge>> {
        let parts: Vec<u32> = req.vids.iter().map(|v| part_of(space, v)).collect();
        let answers = self.on_items(space, &parts, &|host, positions| {
            let sub = NeighborsRequest { vids: pick(&req.vids, positions), ..req.clone() };
            host.storage().get_neighbors(space, &sub)
        })?;
        // Back in the order of the request's vertices, each host's edges in its own order, then the limit.
        let first: HashMap<&Value, usize> = req.vids.iter().enumerate().rev().map(|(i, v)| (v, i)).collect();
        let mut edges: Vec<NeighborEdge> = answers.into_iter().flatten().collect();
        edges.sort_by_key(|e| first.get(&e.from).copied().unwrap_or(usize::MAX));
        if let Some(limit) = req.limit {
            edges.truncate(limit);
        }
        Ok(edges)
    }

    fn expand(&self, space: &SpaceDesc, req: &ExpandRequest) -> QResult<ExpandResult> {
        self.on_whole_space(space, &|host| host.storage().expand(space, req))
    }

    fn find_paths(&self, space: &SpaceDesc, req: &PathSearchRequest) -> QResult<PathSearchResult> {
        self.on_whole_space(space, &|host| host.storage().find_paths(space, req))
    }

    fn subgraph(
        &self,
        space: &SpaceDesc,
        req: &SubgraphRequest,
        expandable: &mut dyn FnMut(&[Value]) -> QResult<Vec<bool>>,
    ) -> QResult<Vec<SubgraphRound>> {
        let expandable = Mutex::new(expandable);
        self.on_whole_space(space, &|host| {
            let mut guard = expandable.lock().expect("lock poisoned");
            host.storage().subgraph(space, req, &mut **guard)
        })
    }

    fn write(&self, space: &SpaceDesc, mutations: Vec<Mutation>) -> QResult<()> {
        // A vertex deleted with its edges: each edge is deleted as DELETE EDGE would, routed by its source, then the
        // vertex alone (NebulaGraph's graphd does the same). So every write of an edge's two copies is coordinated
        // by its source's partition (crate::chain); an edge added meanwhile stays, both copies.
        let mut expanded = Vec::with_capacity(mutations.len());
        for m in mutations {
            match m {
                Mutation::DeleteVertex { vid, with_edges: true } => {
                    let part = part_of(space, &vid);
                    let edges = self.on_part(space, part, &mut |host| host.storage().edges_of(space, &vid))?;
                    expanded.extend(edges.into_iter().map(|key| Mutation::DeleteEdge { key }));
                    expanded.push(Mutation::DeleteVertex { vid, with_edges: false });
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
        self.on_items(space, &parts, &|host, positions| {
            let mut by_part: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
            for &i in positions {
                by_part.entry(parts[i]).or_default().push(i);
            }
            for (part, items) in by_part {
                host.coordinate(part, || host.storage().write(space, pick(&expanded, &items)))?;
            }
            Ok(())
        })?;
        Ok(())
    }

    fn rmw_vertex(
        &self,
        space: &SpaceDesc,
        vid: &Value,
        schema: &SchemaRef,
        decide: &mut dyn FnMut(Option<&Props>) -> QResult<RmwDecision>,
    ) -> QResult<Option<Props>> {
        let part = part_of(space, vid);
        self.on_part(space, part, &mut |host| {
            host.coordinate(part, || host.storage().rmw_vertex(space, vid, schema, decide))
        })
    }

    fn rmw_edge(
        &self,
        space: &SpaceDesc,
        key: &EdgeKeyVal,
        schema: &SchemaRef,
        decide: &mut dyn FnMut(Option<&Props>) -> QResult<RmwDecision>,
    ) -> QResult<Option<Props>> {
        let part = part_of(space, &key.src);
        self.on_part(space, part, &mut |host| {
            host.coordinate(part, || host.storage().rmw_edge(space, key, schema, decide))
        })
    }

    fn scan_vertices(&self, space: &SpaceDesc, schema: Option<&SchemaRef>, limit: usize) -> QResult<Vec<Value>> {
        self.on_whole_space(space, &|host| host.storage().scan_vertices(space, schema, limit))
    }

    fn clear_space(&self, space: &SpaceDesc) -> QResult<()> {
        self.on_whole_space(space, &|host| host.storage().clear_space(space))
    }

    fn drop_schema_data(&self, space: &SpaceDesc, schema: &SchemaRef) -> QResult<()> {
        self.on_whole_space(space, &|host| host.storage().drop_schema_data(space, schema))
    }

    fn scan_index(&self, space: &SpaceDesc, scans: &[IndexScan], budget: &Budget) -> QResult<Vec<IndexHit>> {
        self.on_whole_space(space, &|host| host.storage().scan_index(space, scans, budget))
    }

    fn index_created(&self, space: &SpaceDesc, index: &IndexRef) -> QResult<Option<i64>> {
        self.on_whole_space(space, &|host| host.storage().index_created(space, index))
    }

    fn drop_index_data(&self, space: &SpaceDesc, index_id: i32) -> QResult<()> {
        self.on_whole_space(space, &|host| host.storage().drop_index_data(space, index_id))
    }

    fn submit_job(&self, _space: &SpaceDesc, _kind: JobKind, _indexes: Vec<i32>) -> QResult<i64> {
        jobs_refused()
    }

    fn jobs(&self, _space: &SpaceDesc) -> QResult<Vec<JobInfo>> {
        jobs_refused()
    }

    fn stop_job(&self, _space: &SpaceDesc, _id: i64) -> QResult<()> {
        jobs_refused()
    }

    fn recover_jobs(&self, _space: &SpaceDesc, _only: &[i64]) -> QResult<usize> {
        jobs_refused()
    }

    fn stats(&self, space: &SpaceDesc) -> QResult<SpaceStats> {
        self.on_whole_space(space, &|host| host.storage().stats(space))
    }
}
