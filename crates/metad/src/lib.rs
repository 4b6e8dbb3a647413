//! The meta service's state: the catalog of `crates/meta` (spaces, schemas, indexes, users and roles), replicated
//! by the meta Raft group (group 0) of every metad. Each replica keeps the catalog in memory over its own engine:
//! the leader's DDL commits its write batch through the group and returns once a majority has it and it is applied
//! here; every replica reloads its in-memory catalog when the group applies a batch, so a new leader serves at once.
//!
//! Between processes, [`service`] carries what graphd and storaged ask the meta leader (the catalog, its changes,
//! storage hosts' heartbeats) and [`remote::RemoteCatalog`] is the catalog they see.

pub mod remote;
pub mod service;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use quiver_common::{QError, QResult};
use quiver_kv::{KvEngine, WriteBatch};
use quiver_meta::{MetaLog, MetaStore};
use quiver_raft::{DataRange, RaftHost, Replica, ReplicaError, Transport, META_GROUP};

/// How long a DDL waits for the meta group to commit it.
pub const META_COMMIT_TIMEOUT: Duration = Duration::from_secs(10);

/// The catalog's log through the meta group. `commit` blocks the calling thread on the group, so it must be
/// called off the runtime's worker threads (the query engine runs requests on the blocking pool).
struct GroupLog {
    replica: Arc<Replica>,
    runtime: tokio::runtime::Handle,
}

fn leader_changed(leader: Option<quiver_raft::NodeId>) -> QError {
    QError::execution(match leader {
        Some(l) => format!("Leader changed! The meta service's leader is node {l}"),
        None => "Leader changed! The meta service has no leader now".to_string(),
    })
}

impl MetaLog for GroupLog {
    /// A new leader may hold committed entries of earlier terms it has not applied yet; confirming leadership
    /// (openraft's `ensure_linearizable`) waits until they are applied, so DDL never reads a catalog behind them.
    fn barrier(&self) -> QResult<()> {
        let confirm = async { tokio::time::timeout(META_COMMIT_TIMEOUT, self.replica.linearize()).await };
        match self.runtime.block_on(confirm) {
            Ok(Ok(())) => Ok(()),
            Ok(Err(ReplicaError::NotLeader { leader, .. })) => Err(leader_changed(leader)),
            Ok(Err(e)) => Err(QError::execution(format!("the meta service is not available: {e}"))),
            Err(_) => Err(QError::execution("the meta service did not confirm its leader in time")),
        }
    }

    fn commit(&self, batch: WriteBatch) -> QResult<()> {
        // The timer is made inside the runtime: this thread is not one of its own.
        let write = async { tokio::time::timeout(META_COMMIT_TIMEOUT, self.replica.write(batch)).await };
        match self.runtime.block_on(write) {
            Ok(Ok(_)) => Ok(()),
            // NebulaGraph's meta client answers E_LEADER_CHANGED; its caller retries on the new leader.
            Ok(Err(ReplicaError::NotLeader { leader, .. })) => Err(leader_changed(leader)),
            Ok(Err(e)) => Err(QError::execution(format!("the meta service did not commit: {e}"))),
            Err(_) => Err(QError::execution(format!(
                "the meta service did not commit within {} s; the change may still be applied",
                META_COMMIT_TIMEOUT.as_secs()
            ))),
        }
    }
}

/// One metad's replica of the catalog.
pub struct MetaReplica {
    pub catalog: Arc<MetaStore>,
    pub replica: Arc<Replica>,
}

impl MetaReplica {
    /// Opens the meta group on `host` over `engine` (the host's engine) and the catalog above it.
    pub async fn open<T: Transport>(
        host: &RaftHost,
        engine: Arc<dyn KvEngine>,
        transport: Arc<T>,
    ) -> QResult<MetaReplica> {
        let applied = Arc::new(AtomicU64::new(0));
        let bump = applied.clone();
        let hook: quiver_raft::ApplyHook = Arc::new(move |_| {
            bump.fetch_add(1, Ordering::SeqCst);
        });
        let (start, end) = quiver_meta::meta_range();
        let replica = host
            .open_group_observed(META_GROUP, DataRange { start, end }, transport, Some(hook))
            .await
            .map_err(|e| QError::execution(e.to_string()))?;
        let log = Arc::new(GroupLog { replica: replica.clone(), runtime: tokio::runtime::Handle::current() });
        let catalog = Arc::new(MetaStore::open_with_log(engine, log, applied)?);
        Ok(MetaReplica { catalog, replica })
    }
}

/// Places `parts` partitions of `replicas` replicas each on `hosts`, as NebulaGraph's CreateSpaceProcessor picks
/// its least loaded zones (one zone per host by default): each partition in turn takes the `replicas` hosts with
/// the fewest replicas so far (`load` counts those of existing spaces), ties broken by address, never one host
/// twice. NebulaGraph's `Host not enough!` when fewer hosts than replicas are online.
pub fn place(
    parts: u32,
    replicas: u32,
    hosts: &[String],
    load: &std::collections::BTreeMap<String, usize>,
) -> QResult<Vec<Vec<String>>> {
    if replicas == 0 || (replicas as usize) > hosts.len() {
        return Err(QError::execution("Host not enough!"));
    }
    let mut load: Vec<(usize, String)> = hosts.iter().map(|h| (load.get(h).copied().unwrap_or(0), h.clone())).collect();
    let mut placed = Vec::with_capacity(parts as usize);
    for _ in 0..parts {
        load.sort();
        let picked: Vec<String> = load.iter().take(replicas as usize).map(|(_, h)| h.clone()).collect();
        for (n, _) in load.iter_mut().take(replicas as usize) {
            *n += 1;
        }
        placed.push(picked);
    }
    Ok(placed)
}

/// Which storage hosts are alive: each heartbeats to the meta leader; a host not heard from for `offline_after`
/// is OFFLINE (NebulaGraph: 10 s heartbeats, offline after 5 missed). Kept in the leader's memory: after a leader
/// change every host is OFFLINE until its next heartbeat.
pub struct Liveness {
    offline_after: Duration,
    last_seen: std::sync::Mutex<std::collections::HashMap<String, std::time::Instant>>,
}

impl Liveness {
    pub fn new(offline_after: Duration) -> Liveness {
        Liveness { offline_after, last_seen: Default::default() }
    }

    pub fn heard_from(&self, host: &str) {
        self.last_seen.lock().unwrap_or_else(|p| p.into_inner()).insert(host.to_string(), std::time::Instant::now());
    }

    pub fn is_online(&self, host: &str) -> bool {
        let seen = self.last_seen.lock().unwrap_or_else(|p| p.into_inner());
        seen.get(host).is_some_and(|t| t.elapsed() < self.offline_after)
    }
}

impl MetaReplica {
    /// A storage host's heartbeat: refused from a host that was not added (`ADD HOSTS` first, as in NebulaGraph 3).
    pub fn heartbeat(&self, liveness: &Liveness, host: &str) -> QResult<()> {
        if !self.catalog.hosts().iter().any(|h| h == host) {
            return Err(QError::execution("Machine not existed!"));
        }
        liveness.heard_from(host);
        Ok(())
    }

    /// `SHOW HOSTS`' status of each registered host: `(address, online)`.
    pub fn host_status(&self, liveness: &Liveness) -> Vec<(String, bool)> {
        self.catalog.hosts().into_iter().map(|h| (h.clone(), liveness.is_online(&h))).collect()
    }

    /// CREATE SPACE in the cluster: its partitions placed on the online hosts.
    pub fn create_space(&self, liveness: &Liveness, space: quiver_api::NewSpace, if_not_exists: bool) -> QResult<bool> {
        if if_not_exists && self.catalog.parts_of(&space.name).is_ok() {
            return Ok(false);
        }
        let online: Vec<String> = self.catalog.hosts().into_iter().filter(|h| liveness.is_online(h)).collect();
        let parts = place(space.partition_num, space.replica_factor, &online, &self.catalog.part_load())?;
        self.catalog.create_space_placed(space, parts, if_not_exists)
    }
}

/// A metad process's parts, once started ([`start`]).
pub struct Metad {
    pub meta: Arc<MetaReplica>,
    pub host: Arc<RaftHost>,
}

/// Starts a metad at `addr` (one of `metas`, the addresses of every metad) over `engine`: the meta group's
/// replica, served with the meta service on a listener bound to `addr`. The first metad of `metas` makes the group
/// on its first start; the leader creates the root user once. Call from outside `runtime`.
pub fn start(
    addr: &str,
    engine: Arc<dyn KvEngine>,
    metas: &[String],
    runtime: &tokio::runtime::Runtime,
) -> QResult<Metad> {
    use service::{node_id, MetaService};
    let id = node_id(addr)?;
    let members: std::collections::BTreeMap<quiver_raft::NodeId, quiver_raft::BasicNode> =
        metas.iter().map(|a| Ok((node_id(a)?, quiver_raft::BasicNode::new(a.clone())))).collect::<QResult<_>>()?;
    if !members.contains_key(&id) {
        return Err(QError::execution(format!("--addr {addr} is not one of --meta-addrs")));
    }
    let host = {
        let _enter = runtime.enter();
        RaftHost::new(id, engine.clone(), quiver_raft::Timing::default())
    };
    let transport = quiver_raft::tcp::TcpTransport::new();
    let meta = Arc::new(runtime.block_on(MetaReplica::open(&host, engine.clone(), transport))?);
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind(addr))
        .map_err(|e| QError::execution(format!("cannot listen on {addr}: {e}")))?;
    let service: Arc<dyn quiver_raft::tcp::Service> = Arc::new(MetaService {
        meta: meta.clone(),
        liveness: Arc::new(Liveness::new(HOST_OFFLINE_AFTER)),
        engine,
        runtime: runtime.handle().clone(),
    });
    runtime.spawn(quiver_raft::tcp::serve_with(listener, host.clone(), Some(service), Default::default()));
    if metas.first().map(String::as_str) == Some(addr) {
        // A group made before (a restart) refuses, which is fine.
        if let Err(e) = runtime.block_on(meta.replica.initialize(members)) {
            log::debug!("the meta group: {e}");
        }
    }
    let leader = meta.clone();
    std::thread::spawn(move || loop {
        std::thread::sleep(Duration::from_millis(200));
        if leader.replica.is_leader() {
            match leader.catalog.ensure_root() {
                Ok(()) => return,
                Err(e) => log::debug!("root not created yet: {e}"),
            }
        }
    });
    Ok(Metad { meta, host })
}

/// A storage host that has not heartbeated for this long is OFFLINE (NebulaGraph: 5 missed heartbeats).
pub const HOST_OFFLINE_AFTER: Duration = Duration::from_secs(5);

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn hosts(n: usize) -> Vec<String> {
        (1..=n).map(|i| format!("127.0.0.{i}:9779")).collect()
    }

    #[test]
    fn placement_is_even_and_never_repeats_a_host() {
        for (parts, replicas, n) in [(12, 3, 3), (12, 3, 4), (10, 1, 3), (7, 2, 5), (100, 3, 7)] {
            let placed = place(parts, replicas, &hosts(n), &BTreeMap::new()).unwrap();
            assert_eq!(placed.len(), parts as usize);
            let mut count: BTreeMap<&String, usize> = BTreeMap::new();
            for p in &placed {
                assert_eq!(p.len(), replicas as usize);
                let distinct: std::collections::BTreeSet<_> = p.iter().collect();
                assert_eq!(distinct.len(), p.len(), "a host twice in one partition: {p:?}");
                for h in p {
                    *count.entry(h).or_default() += 1;
                }
            }
            let (min, max) = (count.values().min().unwrap(), count.values().max().unwrap());
            assert!(max - min <= 1, "{parts}x{replicas} on {n}: {count:?}");
        }
    }

    #[test]
    fn placement_evens_out_existing_load_and_needs_enough_hosts() {
        let h = hosts(3);
        let load = BTreeMap::from([(h[0].clone(), 4), (h[1].clone(), 0), (h[2].clone(), 0)]);
        let placed = place(4, 1, &h, &load).unwrap();
        assert!(placed.iter().all(|p| p[0] != h[0]), "{placed:?}");
        assert_eq!(place(1, 4, &h, &BTreeMap::new()).unwrap_err().message, "Host not enough!");
        assert_eq!(place(1, 1, &[], &BTreeMap::new()).unwrap_err().message, "Host not enough!");
    }
}
