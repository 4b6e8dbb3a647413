//! A cluster of processes (`quiver metad`, `quiver storaged`, `quiver graphd`): storage hosts and the client
//! reached over TCP ([`RemoteHost`], [`RemotePart`]), the placement read from the meta service's catalog
//! ([`ProcessCluster`]), and a storage host's life as a process ([`Storaged`]: heartbeats, opening the partitions
//! placed on it, serving requests on its Raft port).
//!
//! Node ids are made from addresses ([`quiver_metad::service::node_id`]), so a leader hint names where to ask.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use quiver_api::{Catalog, SpaceDesc};
use quiver_common::{QError, QResult};
use quiver_kv::{KvEngine, WriteBatch};
use quiver_metad::remote::RemoteCatalog;
use quiver_metad::service::{node_addr, node_id, MetaRequest};
use quiver_raft::tcp::{Service, ServiceClient, TcpTransport};
use quiver_raft::{BasicNode, NodeId, ReplicaError, Timing};
use quiver_storage::EmbeddedStorage;

use crate::client::Cluster;
use crate::host::{HostError, Hosts, LeaderFuture, LeaderHost, PartLeader, StorageHost};
use crate::rpc::{
    batch_bytes, decode, encode, unexpected, Answer, Envelope, HostHandle, HostRequest, Refusal, ReplicaOp, Reply,
};

/// How long the first request to a new space waits for its partitions to be opened and led.
pub const SPACE_READY_WITHIN: Duration = Duration::from_secs(30);

/// How long a request to a storage host waits for its answer (longer than a host's own waits on its groups).
pub const HOST_CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// How often a storage host heartbeats to the meta service and looks for partitions placed on it (NebulaGraph:
/// `heartbeat_interval_secs`, 10 s by default; shorter here, so a new space is served sooner).
pub const HEARTBEAT_EVERY: Duration = Duration::from_secs(1);

/// A storage host behind the network.
pub struct RemoteHost {
    id: NodeId,
    addr: String,
    client: Arc<ServiceClient>,
    catalog: Arc<RemoteCatalog>,
}

impl RemoteHost {
    fn ask(&self, request: &HostRequest) -> Result<Answer, HostError> {
        let bytes = encode(&Envelope { catalog: self.catalog.known(), request });
        let sent = self.client.call(&bytes, HOST_CALL_TIMEOUT);
        match sent {
            Ok(reply) => {
                let reply: Envelope<Reply> = decode(&reply, "storage reply").map_err(HostError::Failed)?;
                // The host's catalog may be newer (it changed an index's state): this copy follows it.
                self.catalog.refresh_to(reply.catalog).map_err(HostError::Failed)?;
                let reply = reply.request;
                reply.map_err(HostError::from)
            }
            // Not sent: nothing was done there; the client looks for the leader again.
            Err(quiver_raft::tcp::CallError::Unreachable(_)) => match request {
                HostRequest::Parts { lead, .. } => {
                    Err(HostError::NotLeader { part: lead.first().copied().unwrap_or(0), leader: None })
                }
                _ => Err(HostError::Behind(format!("storage host {} is unreachable", self.addr))),
            },
            Err(e) => Err(HostError::Failed(QError::storage(format!(
                "storage host {} did not answer ({e}); the request may or may not have been done",
                self.addr
            )))),
        }
    }
}

impl HostHandle for RemoteHost {
    fn id(&self) -> NodeId {
        self.id
    }

    fn call(&self, request: HostRequest) -> Result<Answer, HostError> {
        self.ask(&request)
    }
}

/// A partition's leader on another storage host.
pub struct RemotePart {
    addr: String,
    space: u32,
    part: u32,
    transport: Arc<TcpTransport>,
    catalog: Arc<RemoteCatalog>,
}

impl RemotePart {
    async fn ask(&self, op: ReplicaOp) -> Result<Answer, ReplicaError> {
        self.send(HostRequest::Replica { space: self.space, part: self.part, op }).await
    }

    /// Sends `request` to this partition leader's host.
    async fn send(&self, request: HostRequest) -> Result<Answer, ReplicaError> {
        let group = quiver_raft::partition_group(self.space, self.part);
        let lost = |reason: String| ReplicaError::Unknown { group, reason };
        let bytes = encode(&Envelope { catalog: self.catalog.known(), request });
        let reply = match self.transport.call_service(&self.addr, &bytes, HOST_CALL_TIMEOUT).await {
            Ok(reply) => reply,
            Err(quiver_raft::tcp::CallError::Unreachable(why)) => {
                return Err(ReplicaError::NotLeader { group, leader: None }).inspect_err(|_| log::debug!("{why}"))
            }
            Err(e) => return Err(lost(e.to_string())),
        };
        match decode::<Envelope<Reply>>(&reply, "replica reply").map_err(|e| lost(e.message))?.request {
            Ok(answer) => Ok(answer),
            Err(Refusal::Replica(e)) => Err(e),
            Err(Refusal::NotLeader { leader, .. }) => Err(ReplicaError::NotLeader { group, leader }),
            Err(other) => Err(lost(format!("{other:?}"))),
        }
    }
}

impl PartLeader for RemotePart {
    fn write(&self, batch: WriteBatch) -> LeaderFuture<'_, u64> {
        Box::pin(async move {
            match self.ask(ReplicaOp::Write(batch_bytes(&batch))).await? {
                Answer::Term(term) => Ok(term),
                other => Err(ReplicaError::Unknown { group: 0, reason: unexpected(other).message }),
            }
        })
    }

    fn write_fenced(&self, fence: Vec<u8>, term: u64, batch: WriteBatch) -> LeaderFuture<'_, bool> {
        Box::pin(async move {
            match self.ask(ReplicaOp::Fenced { fence, term, batch: batch_bytes(&batch) }).await? {
                Answer::Fenced(applied) => Ok(applied),
                other => Err(ReplicaError::Unknown { group: 0, reason: unexpected(other).message }),
            }
        })
    }

    fn read_index(&self) -> LeaderFuture<'_, u64> {
        Box::pin(async move {
            match self.ask(ReplicaOp::ReadIndex).await? {
                Answer::ReadIndex(index) => Ok(index),
                other => Err(ReplicaError::Unknown { group: 0, reason: unexpected(other).message }),
            }
        })
    }

    fn on_other_host(&self) -> Option<&dyn LeaderHost> {
        Some(self)
    }
}

impl LeaderHost for RemotePart {
    fn addr(&self) -> &str {
        &self.addr
    }

    fn read_indexes(&self, parts: Vec<u32>) -> LeaderFuture<'_, Vec<Result<u64, ReplicaError>>> {
        Box::pin(async move {
            let request = HostRequest::ReadIndexes { space: self.space, parts };
            match self.send(request).await? {
                Answer::ReadIndexes(indexes) => Ok(indexes),
                other => Err(ReplicaError::Unknown { group: 0, reason: unexpected(other).message }),
            }
        })
    }
}

/// The cluster as a process sees it: storage hosts by address, partitions placed as the catalog says; on a storage
/// host, also that host itself.
pub struct ProcessCluster {
    catalog: Arc<RemoteCatalog>,
    transport: Arc<TcpTransport>,
    /// This process's storage host, on a storaged.
    local: Mutex<Option<Weak<StorageHost>>>,
    /// The spaces whose every partition was seen led.
    ready: Mutex<std::collections::BTreeSet<u32>>,
    /// Each storage host as reached from here (a blocking client with its pooled connections), by node id: a
    /// request's leader lookup neither formats an address nor allocates a handle.
    remotes: Mutex<std::collections::HashMap<NodeId, Arc<RemoteHost>>>,
}

impl ProcessCluster {
    pub fn new(catalog: Arc<RemoteCatalog>, transport: Arc<TcpTransport>) -> Arc<ProcessCluster> {
        Arc::new(ProcessCluster {
            catalog,
            transport,
            local: Mutex::default(),
            ready: Mutex::default(),
            remotes: Mutex::default(),
        })
    }

    /// Of `hosts` (those that answer), who claims to lead each partition in the latest term: `(space, part)` to the
    /// host's address and the term.
    pub fn claims(&self, hosts: &[String]) -> BTreeMap<(u32, u32), (String, u64)> {
        let mut led: BTreeMap<(u32, u32), (String, u64)> = BTreeMap::new();
        let unique: std::collections::BTreeSet<&String> = hosts.iter().collect();
        for addr in unique {
            if let Some(Ok(Answer::Leaders(parts))) = self.remote(addr).map(|h| h.call(HostRequest::Leaders)) {
                for (space, part, term) in parts {
                    let newer = led.get(&(space, part)).is_none_or(|(_, t)| term > *t);
                    if newer {
                        led.insert((space, part), (addr.clone(), term));
                    }
                }
            }
        }
        led
    }

    /// The hosts `space`'s partition `part` is placed on, as the catalog says.
    fn peers(&self, space: u32, part: u32) -> Option<Vec<String>> {
        let desc = self.catalog.spaces().into_iter().find(|s| s.id == space)?;
        let mut placed = self.catalog.parts_of(&desc.name).ok()?;
        let i = part.checked_sub(1)? as usize;
        (i < placed.len()).then(|| placed.swap_remove(i))
    }

    /// A storage host at `addr`, as this process reaches it.
    pub fn remote(&self, addr: &str) -> Option<Arc<dyn HostHandle>> {
        let id = node_id(addr).ok()?;
        Some(self.remote_by_id(id, || addr.to_string()))
    }

    fn remote_by_id(&self, id: NodeId, addr: impl FnOnce() -> String) -> Arc<dyn HostHandle> {
        let mut remotes = self.remotes.lock().expect("lock poisoned");
        remotes
            .entry(id)
            .or_insert_with(|| {
                let addr = addr();
                let client = Arc::new(ServiceClient::new(&addr));
                Arc::new(RemoteHost { id, addr, client, catalog: self.catalog.clone() })
            })
            .clone()
    }

    fn local(&self) -> Option<Arc<StorageHost>> {
        self.local.lock().expect("lock poisoned").as_ref().and_then(Weak::upgrade)
    }
}

impl Cluster for ProcessCluster {
    fn host(&self, id: NodeId) -> Option<Arc<dyn HostHandle>> {
        Some(self.remote_by_id(id, || node_addr(id)))
    }

    fn hosts(&self) -> Vec<Arc<dyn HostHandle>> {
        self.catalog.hosts().iter().filter_map(|a| self.remote(a)).collect()
    }

    fn leader_of(&self, space: u32, part: u32) -> Option<Arc<dyn HostHandle>> {
        // Of the hosts carrying the partition, the one that claims it in the latest term.
        let claims = self.claims(&self.peers(space, part)?);
        let (addr, _) = claims.get(&(space, part))?;
        self.remote(addr)
    }

    fn space_exists(&self, space: &SpaceDesc) -> bool {
        self.catalog.spaces().iter().any(|s| s.id == space.id)
    }

    fn carried_whole(&self, space: &SpaceDesc) -> bool {
        self.catalog.parts_of(&space.name).is_ok_and(|placed| crate::client::one_host_in_all(&placed))
    }

    fn open_space(&self, space: &SpaceDesc) -> QResult<()> {
        // Storage hosts open the partitions placed on them as they see the catalog (Storaged::tick); a new space's
        // first request waits until every partition has elected a leader.
        if self.ready.lock().expect("lock poisoned").contains(&space.id) {
            return Ok(());
        }
        let started = std::time::Instant::now();
        loop {
            let placed = self.catalog.parts_of(&space.name)?;
            let hosts: Vec<String> = placed.iter().flatten().cloned().collect();
            let led = self.claims(&hosts);
            if (1..=space.partition_num).all(|p| led.contains_key(&(space.id, p))) {
                self.ready.lock().expect("lock poisoned").insert(space.id);
                return Ok(());
            }
            if started.elapsed() > SPACE_READY_WITHIN {
                return Err(QError::storage(format!(
                    "the partitions of space `{}' have not all elected a leader within {} s. Try again later",
                    space.name,
                    SPACE_READY_WITHIN.as_secs()
                )));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Hosts for ProcessCluster {
    fn part_leader(&self, space: u32, part: u32) -> Option<Arc<dyn PartLeader>> {
        let local = self.local()?;
        let addr = match local.replica(space, part) {
            Some(replica) if replica.is_leader() => return Some(replica),
            Some(replica) => node_addr(replica.leader()?),
            // Not carried here: a replica as placed (one that does not lead refuses, and the caller asks again).
            None => {
                let peers = self.peers(space, part)?;
                let turn = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.subsec_nanos() as usize);
                peers.get(turn % peers.len().max(1))?.clone()
            }
        };
        Some(Arc::new(RemotePart {
            addr,
            space,
            part,
            transport: self.transport.clone(),
            catalog: self.catalog.clone(),
        }))
    }
}

/// A storage host running as a process.
pub struct Storaged {
    pub addr: String,
    pub host: Arc<StorageHost>,
    pub cluster: Arc<ProcessCluster>,
    pub catalog: Arc<RemoteCatalog>,
    transport: Arc<TcpTransport>,
    opened: Mutex<BTreeMap<(u32, u32), ()>>,
    /// Whether the partitions of spaces dropped while this host was down were deleted (the first heartbeat does).
    swept: std::sync::atomic::AtomicBool,
}

/// A storage host's requests from graphd and other hosts.
struct StorageService {
    host: Weak<StorageHost>,
    catalog: Arc<RemoteCatalog>,
    /// Set when started with `--fault-injection`: [`HostRequest::CutOff`] is served.
    faults: Option<Arc<TcpTransport>>,
}

impl Service for StorageService {
    fn serve(&self, request: &[u8]) -> Vec<u8> {
        let reply: Reply = match (self.host.upgrade(), decode::<Envelope<HostRequest>>(request, "storage request")) {
            (_, Ok(Envelope { request: HostRequest::CutOff(cut), .. })) if self.faults.is_some() => {
                self.faults.as_ref().expect("fault injection on").set_cut_off(cut);
                log::warn!("fault injection: Raft traffic {}", if cut { "cut off" } else { "restored" });
                Ok(Answer::Done)
            }
            (Some(host), Ok(Envelope { catalog, request })) => match self.catalog.refresh_to(catalog) {
                Ok(()) => host.serve(request).map_err(Refusal::from),
                Err(e) => Err(Refusal::Failed(e)),
            },
            (None, _) => Err(Refusal::Failed(QError::storage("the storage host is stopping"))),
            (_, Err(e)) => Err(Refusal::Failed(e)),
        };
        encode(&Envelope { catalog: self.catalog.known(), request: reply })
    }
}

impl Storaged {
    /// Starts a storage host at `addr` over `engine`, serving on a listener bound to `addr`, with the catalog from
    /// `catalog`. Call from outside the runtime; the host's tasks run on `runtime`. `fault_injection` lets a
    /// request cut the host's Raft traffic off (the process tests; never on by default: anyone who reaches the port
    /// could partition the host).
    pub fn start(
        addr: &str,
        engine: Arc<dyn KvEngine>,
        catalog: Arc<RemoteCatalog>,
        runtime: &tokio::runtime::Runtime,
        fault_injection: bool,
    ) -> QResult<Arc<Storaged>> {
        let id = node_id(addr)?;
        let transport = TcpTransport::new();
        let cluster = ProcessCluster::new(catalog.clone(), transport.clone());
        let storage = Arc::new(EmbeddedStorage::new(engine.clone()));
        storage.set_catalog(catalog.clone() as Arc<dyn Catalog>);
        let hosts: Weak<dyn Hosts> = Arc::downgrade(&cluster) as Weak<dyn Hosts>;
        let host = {
            let _enter = runtime.enter();
            StorageHost::start(id, engine, storage, Timing::default(), hosts)
        };
        *cluster.local.lock().expect("lock poisoned") = Some(Arc::downgrade(&host));
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind(addr))
            .map_err(|e| QError::storage(format!("cannot listen on {addr}: {e}")))?;
        let faults = fault_injection.then(|| transport.clone());
        let service: Arc<dyn Service> =
            Arc::new(StorageService { host: Arc::downgrade(&host), catalog: catalog.clone(), faults });
        let cut_off = transport.cut_off_flag();
        runtime.spawn(quiver_raft::tcp::serve_with(listener, host.raft().clone(), Some(service), cut_off));
        Ok(Arc::new(Storaged {
            addr: addr.to_string(),
            host,
            cluster,
            catalog,
            transport,
            opened: Mutex::default(),
            swept: Default::default(),
        }))
    }

    /// One heartbeat: tells the meta service this host is alive, takes the catalog, opens the partitions placed
    /// here that are not open yet (one replica of each new partition, in turn, makes its group), and closes those of
    /// dropped spaces, deleting their data (NebulaGraph's storaged does the same on its heartbeat).
    pub fn tick(&self) -> QResult<()> {
        self.catalog.client().call(&MetaRequest::Heartbeat { host: self.addr.clone() })?;
        self.catalog.refresh()?;
        let live: std::collections::BTreeSet<u32> = self.catalog.spaces().iter().map(|s| s.id).collect();
        if !self.swept.load(std::sync::atomic::Ordering::Acquire) {
            self.sweep_dropped(&live)?;
            self.swept.store(true, std::sync::atomic::Ordering::Release);
        }
        let dropped: Vec<(u32, u32)> =
            self.opened.lock().expect("lock poisoned").keys().filter(|(s, _)| !live.contains(s)).copied().collect();
        for (space, part) in dropped {
            self.host.close_part(space, part)?;
            self.opened.lock().expect("lock poisoned").remove(&(space, part));
            log::info!("closed part {part} of dropped space {space}");
        }
        let mut to_open = Vec::new();
        for space in self.catalog.spaces() {
            let Ok(placed) = self.catalog.parts_of(&space.name) else { continue };
            for (i, replicas) in placed.into_iter().enumerate() {
                let part = i as u32 + 1;
                if replicas.contains(&self.addr)
                    && !self.opened.lock().expect("lock poisoned").contains_key(&(space.id, part))
                {
                    to_open.push((space.clone(), part, replicas));
                }
            }
        }
        self.open_together(to_open)
    }

    /// Once, at the first heartbeat: deletes what the engine holds of partitions of spaces dropped while this host
    /// was down (it never opened them since its start, so the heartbeats' closing does not see them). Only a space
    /// whose id the catalog has handed out and no longer lists is dropped: a catalog read from a meta leader behind
    /// this host's last one (a space created since) deletes nothing of it.
    fn sweep_dropped(&self, live: &std::collections::BTreeSet<u32>) -> QResult<()> {
        let issued = self.catalog.space_ids_issued()?;
        let stored = self.host.raft().stored_groups().map_err(QError::storage)?;
        for group in stored {
            let (space, part) = ((group >> 32) as u32, group as u32);
            if space <= issued && !live.contains(&space) {
                self.host.close_part(space, part)?;
                log::info!("deleted part {part} of space {space}, dropped while this host was down");
            }
        }
        Ok(())
    }

    /// Opens these partitions' replicas here, all at once, their starts staggered over one Raft tick interval
    /// (`Timing::staggered_starts`): groups started together would otherwise tick, send their heartbeats and check
    /// their election timeouts on the same instants, for as long as they run. The first error is returned once all
    /// were tried; those opened are not opened again.
    fn open_together(&self, placed: Vec<(Arc<SpaceDesc>, u32, Vec<String>)>) -> QResult<()> {
        let starts = self.host.raft().timing().staggered_starts(placed.len());
        let results = self.host.block_on(async {
            let mut running = tokio::task::JoinSet::new();
            for ((space, part, replicas), start) in placed.into_iter().zip(starts) {
                let (host, transport, addr) = (self.host.clone(), self.transport.clone(), self.addr.clone());
                running.spawn(async move {
                    tokio::time::sleep(start).await;
                    let opened = open_replica(&host, transport, &addr, &space, part, &replicas).await;
                    (space, part, replicas.len(), opened)
                });
            }
            let mut results = Vec::new();
            while let Some(done) = running.join_next().await {
                results.push(done.map_err(|e| QError::storage(format!("opening a partition's replica: {e}"))));
            }
            results
        });
        let mut first_error = None;
        for result in results {
            match result {
                Ok((space, part, replicas, Ok(()))) => {
                    self.opened.lock().expect("lock poisoned").insert((space.id, part), ());
                    log::info!("opened part {part} of space {} ({replicas} replicas)", space.name);
                }
                Ok((_, _, _, Err(e))) | Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// Heartbeats every [`HEARTBEAT_EVERY`] on this thread, forever.
    pub fn run(self: &Arc<Self>) -> ! {
        loop {
            if let Err(e) = self.tick() {
                log::warn!("storage host {}: {e}", self.addr);
            }
            std::thread::sleep(HEARTBEAT_EVERY);
        }
    }
}

/// Opens `host`'s replica of a partition; the replica that takes its turn (partition N by replica N mod R) makes the
/// group: it usually wins the first election, so leaders spread over the hosts (NebulaGraph balances leaders the same
/// way).
async fn open_replica(
    host: &StorageHost,
    transport: Arc<TcpTransport>,
    addr: &str,
    space: &Arc<SpaceDesc>,
    part: u32,
    replicas: &[String],
) -> QResult<()> {
    let members: BTreeMap<NodeId, BasicNode> =
        replicas.iter().map(|a| Ok((node_id(a)?, BasicNode::new(a.clone())))).collect::<QResult<_>>()?;
    let first = replicas.get((part as usize - 1) % replicas.len().max(1)).map(String::as_str) == Some(addr);
    let replica = host.open_part(space.clone(), part, transport).await?;
    if first {
        // Once: a group that was made already (a restart) refuses, which is fine.
        if let Err(e) = replica.initialize(members).await {
            log::debug!("part {part} of space {}: {e}", space.id);
        }
    }
    Ok(())
}

/// What a cluster's graphd shows of its machines (SHOW HOSTS, SHOW PARTS, SHOW META LEADER, ADD/DROP HOSTS).
pub struct GraphdView {
    pub catalog: Arc<RemoteCatalog>,
    pub cluster: Arc<ProcessCluster>,
}

impl GraphdView {
    fn host_status(&self) -> QResult<Vec<(String, bool)>> {
        match self.catalog.client().call(&MetaRequest::Hosts)? {
            quiver_metad::service::MetaAnswer::Hosts(h) => Ok(h),
            other => Err(QError::execution(format!("the meta service answered {other:?}"))),
        }
    }

    /// Who leads each partition: of the online hosts, the one claiming it in the latest term.
    fn leaders(&self, hosts: &[(String, bool)]) -> BTreeMap<(u32, u32), (String, u64)> {
        let online: Vec<String> = hosts.iter().filter(|(_, online)| *online).map(|(a, _)| a.clone()).collect();
        self.cluster.claims(&online)
    }
}

impl quiver_api::ClusterView for GraphdView {
    fn storage_hosts(&self) -> QResult<Vec<quiver_api::StorageHostInfo>> {
        let hosts = self.host_status()?;
        let leaders = self.leaders(&hosts);
        let spaces = self.catalog.spaces();
        let name_of = |id: u32| spaces.iter().find(|s| s.id == id).map(|s| s.name.clone());
        Ok(hosts
            .into_iter()
            .map(|(addr, online)| {
                let mut info = quiver_api::StorageHostInfo {
                    addr: addr.clone(),
                    online,
                    leaders: BTreeMap::new(),
                    parts: BTreeMap::new(),
                };
                for ((space, _), _) in leaders.iter().filter(|(_, (a, _))| *a == addr) {
                    if let Some(name) = name_of(*space) {
                        *info.leaders.entry(name).or_default() += 1;
                    }
                }
                for space in &spaces {
                    let placed = self.catalog.parts_of(&space.name).unwrap_or_default();
                    let n = placed.iter().filter(|peers| peers.contains(&addr)).count() as u32;
                    if n > 0 {
                        info.parts.insert(space.name.clone(), n);
                    }
                }
                info
            })
            .collect())
    }

    fn parts(&self, space: &SpaceDesc) -> QResult<Vec<quiver_api::PartInfo>> {
        let hosts = self.host_status()?;
        let leaders = self.leaders(&hosts);
        let online: std::collections::BTreeSet<&String> = hosts.iter().filter(|h| h.1).map(|h| &h.0).collect();
        let placed = self.catalog.parts_of(&space.name)?;
        Ok(placed
            .into_iter()
            .enumerate()
            .map(|(i, peers)| {
                let id = i as u32 + 1;
                let leader = leaders.get(&(space.id, id)).map(|(addr, _)| addr.clone());
                let losts = peers.iter().filter(|p| !online.contains(p)).cloned().collect();
                quiver_api::PartInfo { id, leader, peers, losts }
            })
            .collect())
    }

    fn meta_leader(&self) -> QResult<String> {
        self.catalog.client().leader()
    }

    fn metas(&self) -> Vec<String> {
        self.catalog.client().metas().to_vec()
    }

    fn add_hosts(&self, hosts: &[String]) -> QResult<()> {
        self.catalog.client().call(&MetaRequest::AddHosts(hosts.to_vec()))?;
        self.catalog.refresh()
    }

    fn drop_hosts(&self, hosts: &[String]) -> QResult<()> {
        self.catalog.client().call(&MetaRequest::DropHosts(hosts.to_vec()))?;
        self.catalog.refresh()
    }
}
