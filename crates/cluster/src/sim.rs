//! A whole storage cluster in one process: hosts with in-memory engines over [`SimNet`], whose faults (lost,
//! delayed, duplicated messages, cut links) and crashes the tests drive. The spaces' partitions are placed as the
//! meta service places them ([`quiver_metad::place`]) when a space is first used, with the cluster's replica
//! count (the catalog's spaces may ask for fewer: the conformance suite's ask for one).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::{Duration, Instant};

use quiver_api::{Catalog, SpaceDesc};
use quiver_common::{QError, QResult};
use quiver_kv::{KvEngine, MemEngine};
use quiver_raft::sim::SimNet;
use quiver_raft::{BasicNode, NodeId, Timing};
use quiver_storage::EmbeddedStorage;

use crate::client::Cluster;
use crate::host::{Hosts, PartLeader, StorageHost};
use crate::rpc::{Encoded, HostHandle};

/// How long opening a space waits for every partition to elect a leader.
const ELECTED_WITHIN: Duration = Duration::from_secs(20);

/// A space, and its partitions' hosts (partition `i + 1`'s at `i`).
type Placement = (Arc<SpaceDesc>, Vec<Vec<NodeId>>);

pub struct SimCluster {
    runtime: tokio::runtime::Runtime,
    net: Arc<SimNet>,
    catalog: Arc<dyn Catalog>,
    timing: Timing,
    replicas: u32,
    engines: BTreeMap<NodeId, Arc<dyn KvEngine>>,
    /// The running hosts (a crashed one is absent until it restarts on its engine).
    hosts: RwLock<BTreeMap<NodeId, Arc<StorageHost>>>,
    /// Each opened space's placement: partition `i + 1`'s hosts.
    placed: Mutex<HashMap<u32, Placement>>,
    me: Weak<SimCluster>,
}

impl SimCluster {
    /// `hosts` storage hosts (ids 1..=hosts), every partition on `replicas` of them; schemas and indexes read from
    /// `catalog`.
    pub fn start(hosts: u64, replicas: u32, catalog: Arc<dyn Catalog>, timing: Timing, seed: u64) -> Arc<SimCluster> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("sim-cluster")
            .enable_all()
            .build()
            .expect("a runtime starts");
        let engines = (1..=hosts).map(|id| (id, Arc::new(MemEngine::new()) as Arc<dyn KvEngine>)).collect();
        let cluster = Arc::new_cyclic(|me| SimCluster {
            runtime,
            net: SimNet::new(seed),
            catalog,
            timing,
            replicas,
            engines,
            hosts: RwLock::new(BTreeMap::new()),
            placed: Mutex::new(HashMap::new()),
            me: me.clone(),
        });
        for id in 1..=hosts {
            cluster.boot(id);
        }
        cluster
    }

    pub fn net(&self) -> &Arc<SimNet> {
        &self.net
    }

    fn boot(&self, id: NodeId) {
        let engine = self.engines[&id].clone();
        let storage = Arc::new(EmbeddedStorage::new(engine.clone()));
        storage.set_catalog(self.catalog.clone());
        let hosts: Weak<dyn Hosts> = self.me.clone();
        let _runtime = self.runtime.enter();
        let host = StorageHost::start(id, engine, storage, self.timing.clone(), hosts);
        self.net.add_host(host.raft().clone());
        let placed: Vec<(Arc<SpaceDesc>, u32)> = self
            .placed
            .lock()
            .expect("lock poisoned")
            .values()
            .flat_map(|(space, parts)| {
                parts
                    .iter()
                    .enumerate()
                    .filter(|(_, on)| on.contains(&id))
                    .map(|(i, _)| (space.clone(), i as u32 + 1))
                    .collect::<Vec<_>>()
            })
            .collect();
        self.runtime.block_on(async {
            for (space, part) in placed {
                host.open_part(space, part, self.net.transport(id)).await.expect("a partition reopens");
            }
        });
        self.hosts.write().expect("lock poisoned").insert(id, host);
    }

    /// Kills a host as kill -9 would: it stops answering and its groups stop; its engine keeps what it held.
    pub fn crash(&self, id: NodeId) {
        let host = self.hosts.write().expect("lock poisoned").remove(&id);
        self.net.remove_host(id);
        if let Some(host) = host {
            self.runtime.block_on(host.raft().shutdown());
        }
    }

    /// Starts a crashed host again on its engine, with every partition it carries.
    pub fn restart(&self, id: NodeId) {
        self.boot(id);
    }

    /// The host leading `space`'s partition `part` now, if any.
    pub fn leader_id(&self, space: u32, part: u32) -> Option<NodeId> {
        self.leader_host(space, part).map(|h| h.id())
    }

    /// The host leading `space`'s partition `part` now, if any.
    pub fn leader_host(&self, space: u32, part: u32) -> Option<Arc<StorageHost>> {
        crate::host::latest_leader(self.hosts.read().expect("lock poisoned").values(), space, part)
    }

    /// A running host by id.
    pub fn storage_host(&self, id: NodeId) -> Option<Arc<StorageHost>> {
        self.hosts.read().expect("lock poisoned").get(&id).cloned()
    }

    /// The running hosts, by id.
    pub fn storage_hosts(&self) -> Vec<Arc<StorageHost>> {
        self.hosts.read().expect("lock poisoned").values().cloned().collect()
    }
}

impl Hosts for SimCluster {
    fn part_leader(&self, space: u32, part: u32) -> Option<Arc<dyn PartLeader>> {
        let replica = self.leader_host(space, part)?.replica(space, part)?;
        Some(replica)
    }
}

/// Clients reach the hosts through the encoding of requests and replies, as they would over the network.
fn handle(host: Arc<StorageHost>) -> Arc<dyn HostHandle> {
    Arc::new(Encoded(host))
}

impl Cluster for SimCluster {
    fn host(&self, id: NodeId) -> Option<Arc<dyn HostHandle>> {
        self.storage_host(id).map(handle)
    }

    fn hosts(&self) -> Vec<Arc<dyn HostHandle>> {
        self.storage_hosts().into_iter().map(handle).collect()
    }

    fn leader_of(&self, space: u32, part: u32) -> Option<Arc<dyn HostHandle>> {
        self.leader_host(space, part).map(handle)
    }

    fn carried_whole(&self, space: &SpaceDesc) -> bool {
        self.open_space(space).is_ok()
            && self
                .placed
                .lock()
                .expect("lock poisoned")
                .get(&space.id)
                .is_some_and(|(_, parts)| crate::client::one_host_in_all(parts))
    }

    fn open_space(&self, space: &SpaceDesc) -> QResult<()> {
        let mut placed = self.placed.lock().expect("lock poisoned");
        if placed.contains_key(&space.id) {
            return Ok(());
        }
        let hosts = self.storage_hosts();
        let names: Vec<String> = hosts.iter().map(|h| h.id().to_string()).collect();
        let mut load = BTreeMap::new();
        for (_, parts) in placed.values() {
            for id in parts.iter().flatten() {
                *load.entry(id.to_string()).or_insert(0) += 1;
            }
        }
        let parts: Vec<Vec<NodeId>> = quiver_metad::place(space.partition_num, self.replicas, &names, &load)?
            .into_iter()
            .map(|on| on.iter().map(|n| n.parse().expect("a host id")).collect())
            .collect();
        let desc = Arc::new(space.clone());
        self.runtime.block_on(async {
            for (i, on) in parts.iter().enumerate() {
                let part = i as u32 + 1;
                let mut replicas = Vec::new();
                for id in on {
                    let host = hosts.iter().find(|h| h.id() == *id).expect("placed on a running host");
                    replicas.push(host.open_part(desc.clone(), part, self.net.transport(*id)).await?);
                }
                let members: BTreeMap<NodeId, BasicNode> =
                    on.iter().map(|&id| (id, BasicNode::new(format!("sim-{id}")))).collect();
                // The replica that initializes a group usually wins its first election: taking turns spreads the
                // leaders over the hosts, as NebulaGraph's leader balancing does.
                let first = &replicas[i % replicas.len()];
                first.initialize(members).await.map_err(|e| QError::storage(e.to_string()))?;
            }
            QResult::Ok(())
        })?;
        placed.insert(space.id, (desc, parts));
        drop(placed);
        let started = Instant::now();
        for part in 1..=space.partition_num {
            while self.leader_id(space.id, part).is_none() {
                if started.elapsed() > ELECTED_WITHIN {
                    return Err(QError::storage(format!("part {part} elected no leader")));
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        Ok(())
    }
}

impl Drop for SimCluster {
    fn drop(&mut self) {
        let hosts: Vec<_> = std::mem::take(&mut *self.hosts.write().expect("lock poisoned")).into_values().collect();
        for host in hosts {
            self.runtime.block_on(host.raft().shutdown());
        }
    }
}
