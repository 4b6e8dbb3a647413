//! One storage host (a `storaged`'s core): one engine, the [`EmbeddedStorage`] over it, and a Raft group per
//! partition replica it carries, all groups over that one engine.
//!
//! Writes: the host's storage runs in cluster mode ([`EmbeddedStorage::replicate_through`]): a writer's batch is
//! split by partition and each part proposed to its group, here when this host leads it, else on the host that
//! does ([`Hosts::part_leader`]); the writer is answered once every part is committed and applied. Each group writes
//! what it applies to the engine and hands the batch to [`EmbeddedStorage::mirror_applied`], so the topology and
//! caches follow the log on every replica, leader or not.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, RwLock, Weak};
use std::time::Duration;

use quiver_api::SpaceDesc;
use quiver_common::{QError, QResult};
use quiver_kv::{KvEngine, WriteBatch, WriteOp};
use quiver_raft::{
    partition_group, ApplyEvent, DataRange, GroupId, NodeId, RaftHost, Replica, ReplicaError, Transport,
};
use quiver_storage::{keys, EmbeddedStorage};

use crate::chain::{Chains, SWEEP_EVERY};

/// How long a write waits for its partitions' groups to commit it, and a read for its read index.
pub const PART_TIMEOUT: Duration = Duration::from_secs(10);

/// The hosts a storage host can reach: where it forwards a part of a batch whose partition another host leads.
pub trait Hosts: Send + Sync {
    /// The leader of `space`'s partition `part`, as far as the hosts carrying it know: a replica here or a
    /// handle on another host's.
    fn part_leader(&self, space: u32, part: u32) -> Option<Arc<dyn PartLeader>>;
}

/// A boxed future of a [`PartLeader`]'s answer.
pub type LeaderFuture<'a, T> =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<T, ReplicaError>> + Send + 'a>>;

/// What a host asks of a partition's leader, here or on another host.
pub trait PartLeader: Send + Sync {
    /// Commits `batch`; the term it was committed in.
    fn write(&self, batch: WriteBatch) -> LeaderFuture<'_, u64>;
    /// [`Replica::write_fenced`].
    fn write_fenced(&self, fence: Vec<u8>, term: u64, batch: WriteBatch) -> LeaderFuture<'_, bool>;
    /// [`Replica::read_index`].
    fn read_index(&self) -> LeaderFuture<'_, u64>;
    /// The host this leader runs on, when that is another one (asking it crosses the network).
    fn on_other_host(&self) -> Option<&dyn LeaderHost> {
        None
    }
}

/// Another storage host, as a partition leader's handle reaches it: what a catching-up host asks of it for several
/// partitions at once.
pub trait LeaderHost: Send + Sync {
    /// Where the host is (the handles of partitions led on one host share it).
    fn addr(&self) -> &str;
    /// [`StorageHost::read_indexes`] of that host, for `parts` of this leader's space, in one request.
    fn read_indexes(&self, parts: Vec<u32>) -> LeaderFuture<'_, Vec<Result<u64, ReplicaError>>>;
}

impl PartLeader for Replica {
    fn write(&self, batch: WriteBatch) -> LeaderFuture<'_, u64> {
        Box::pin(async move { Replica::write(self, batch).await.map(|id| id.leader_id.term) })
    }

    fn write_fenced(&self, fence: Vec<u8>, term: u64, batch: WriteBatch) -> LeaderFuture<'_, bool> {
        Box::pin(Replica::write_fenced(self, fence, term, batch))
    }

    fn read_index(&self) -> LeaderFuture<'_, u64> {
        Box::pin(Replica::read_index(self))
    }
}

/// Why a host did not serve a request.
#[derive(Debug, Clone, PartialEq)]
pub enum HostError {
    /// This host does not lead the partition (or does not carry it); the client retries on `leader`.
    NotLeader { part: u32, leader: Option<NodeId> },
    /// The request failed; said to the user as is.
    Failed(QError),
    /// A request over a whole space sent to a host that does not carry all of it: the client asks another.
    NotCarried,
    /// A partition's replica did not do what another host asked of it.
    Replica(ReplicaError),
    /// The host could not catch up with a partition's leader for a request over a whole space; try again.
    Behind(String),
}

/// The user-facing error of a partition's group that did not do what was asked.
pub fn replica_error(part: u32, e: ReplicaError) -> QError {
    match e {
        ReplicaError::NotLeader { .. } => {
            QError::storage(format!("The leader of part {part} has changed. Try again later"))
        }
        ReplicaError::Unknown { reason, .. } => QError::storage(format!(
            "part {part} did not confirm the write ({reason}); it may or may not have been applied"
        )),
        other => QError::storage(format!("part {part}: {other}")),
    }
}

/// A partition's key range, as its group owns it.
fn part_range(space: u32, part: u32) -> DataRange {
    let (start, end) = keys::part_range(space, part);
    DataRange { start, end }
}

/// The replica that leads `space`'s partition `part`, wherever it runs; while its group is electing one, waits up
/// to [`PART_TIMEOUT`] (nothing has been proposed yet when this is asked).
fn leader_replica(hosts: &dyn Hosts, space: u32, part: u32) -> QResult<Arc<dyn PartLeader>> {
    let started = std::time::Instant::now();
    loop {
        if let Some(r) = hosts.part_leader(space, part) {
            return Ok(r);
        }
        if started.elapsed() > PART_TIMEOUT {
            return Err(QError::storage(format!("part {part} has no leader now. Try again later")));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Of `hosts`, the one whose replica of `space`'s partition `part` believes it leads in the latest term (a leader
/// cut off from its quorum believes it until it hears of a newer term): what a [`Hosts::part_leader`] answers.
pub fn latest_leader<'a>(
    hosts: impl IntoIterator<Item = &'a Arc<StorageHost>>,
    space: u32,
    part: u32,
) -> Option<Arc<StorageHost>> {
    hosts
        .into_iter()
        .filter_map(|h| h.replica(space, part).filter(|r| r.is_leader()).map(|r| (r.term(), h)))
        .max_by_key(|(term, _)| *term)
        .map(|(_, h)| h.clone())
}

/// Commits `batch` in `replica` (its group's leader) within [`PART_TIMEOUT`]; the term it was committed in.
/// While a write waits to commit, its leader confirms every this often that it still reaches its quorum: one cut off
/// from it (it accepted the write under its lease, then lost the others) never commits, and its writer is told so
/// within a confirmation, not at [`PART_TIMEOUT`].
const QUORUM_CHECK_EVERY: Duration = Duration::from_secs(1);

pub(crate) async fn commit_in(replica: &dyn PartLeader, part: u32, batch: WriteBatch) -> QResult<u64> {
    let started = std::time::Instant::now();
    let write = replica.write(batch);
    tokio::pin!(write);
    loop {
        tokio::select! {
            done = &mut write => return done.map_err(|e| replica_error(part, e)),
            _ = tokio::time::sleep(QUORUM_CHECK_EVERY) => {
                if started.elapsed() >= PART_TIMEOUT {
                    return Err(QError::storage(format!(
                        "part {part} did not commit within {} s; the write may still be applied",
                        PART_TIMEOUT.as_secs()
                    )));
                }
                if let Err(e) = replica.read_index().await {
                    return Err(QError::storage(format!(
                        "part {part} lost its leader's quorum ({e}); the write may or may not be applied"
                    )));
                }
            }
        }
    }
}

/// Runs `tasks` on the runtime, all at once, each to its end; answers the first error among them.
pub(crate) async fn all<E: Send + 'static>(
    tasks: Vec<impl std::future::Future<Output = Result<(), E>> + Send + 'static>,
    panicked: impl Fn(tokio::task::JoinError) -> E,
) -> Result<(), E> {
    let mut waits = tokio::task::JoinSet::new();
    for task in tasks {
        waits.spawn(task);
    }
    let mut first = Ok(());
    while let Some(done) = waits.join_next().await {
        let outcome = done.unwrap_or_else(|e| Err(panicked(e)));
        if first.is_ok() {
            first = outcome;
        }
    }
    first
}

/// Another host's address, a leader there, and the partitions led there with their replicas here (what a catch-up
/// asks of that host).
type LedElsewhere = (String, Arc<dyn PartLeader>, Vec<(u32, Arc<Replica>)>);

pub struct StorageHost {
    id: NodeId,
    pub(crate) engine: Arc<dyn KvEngine>,
    pub(crate) storage: Arc<EmbeddedStorage>,
    raft: Arc<RaftHost>,
    runtime: tokio::runtime::Handle,
    /// Every partition replica opened here, by group.
    pub(crate) parts: RwLock<HashMap<GroupId, Arc<Replica>>>,
    /// The cluster's other hosts (the leaders of the partitions this host's writes reach).
    pub(crate) hosts: Weak<dyn Hosts>,
    pub(crate) chains: Chains,
}

impl StorageHost {
    /// A host over `engine`, its writes proposed through its groups and forwarded through `hosts`. Call inside the
    /// runtime that runs the groups.
    pub fn start(
        id: NodeId,
        engine: Arc<dyn KvEngine>,
        storage: Arc<EmbeddedStorage>,
        timing: quiver_raft::Timing,
        hosts: Weak<dyn Hosts>,
    ) -> Arc<StorageHost> {
        let raft = RaftHost::new(id, engine.clone(), timing);
        let host = Arc::new(StorageHost {
            id,
            engine,
            storage,
            raft,
            runtime: tokio::runtime::Handle::current(),
            parts: RwLock::new(HashMap::new()),
            hosts,
            chains: Chains::default(),
        });
        let me = Arc::downgrade(&host);
        host.storage.replicate_through(Arc::new(move |space: &SpaceDesc, batch: WriteBatch| {
            let host = me.upgrade().ok_or_else(|| QError::storage("the storage host has stopped"))?;
            host.propose(space, batch)
        }));
        // Jobs this host is asked to run (it serves their spaces whole), and those a restart interrupted.
        if let Err(e) = host.storage.start_jobs() {
            log::error!("storage host {id}: jobs not started: {e}");
        }
        // Finishes chains left pending by a crash or a lost message, while the host runs.
        let me = Arc::downgrade(&host);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(SWEEP_EVERY).await;
                let Some(host) = me.upgrade() else { return };
                if tokio::task::spawn_blocking(move || host.sweep()).await.is_err() {
                    log::error!("a sweep of pending chains panicked");
                }
            }
        });
        host
    }

    pub fn id(&self) -> NodeId {
        self.id
    }

    /// The engine every partition replica here keeps its log and data in.
    pub fn engine(&self) -> &Arc<dyn KvEngine> {
        &self.engine
    }

    pub fn storage(&self) -> &Arc<EmbeddedStorage> {
        &self.storage
    }

    pub fn raft(&self) -> &Arc<RaftHost> {
        &self.raft
    }

    /// Opens this host's replica of `space`'s partition `part` (from what the engine holds of it); its applies
    /// keep the storage's mirrors current.
    pub async fn open_part<T: Transport>(
        &self,
        space: Arc<SpaceDesc>,
        part: u32,
        transport: Arc<T>,
    ) -> QResult<Arc<Replica>> {
        let group = partition_group(space.id, part);
        let storage = self.storage.clone();
        let mirrored = space.clone();
        let hook: quiver_raft::ApplyHook = Arc::new(move |event| match event {
            ApplyEvent::Batch(batch) => {
                if let Err(e) = storage.mirror_applied(&mirrored, batch) {
                    // The engine has the batch; mirrors that missed it are dropped and rebuilt from the engine.
                    log::error!("part {part} of space {}: mirroring an applied batch failed: {e}", mirrored.id);
                    storage.mirror_snapshot(&mirrored);
                }
            }
            ApplyEvent::Snapshot => storage.mirror_snapshot(&mirrored),
        });
        let replica = self
            .raft
            .open_group_observed(group, part_range(space.id, part), transport, Some(hook))
            .await
            .map_err(|e| QError::storage(e.to_string()))?;
        self.parts.write().expect("lock poisoned").insert(group, replica.clone());
        Ok(replica)
    }

    /// Stops this host's replica of `space`'s partition `part` for good and deletes its log and data (its space was
    /// dropped). Whether its replica was running here (what one that was not left is deleted too).
    pub fn close_part(&self, space: u32, part: u32) -> QResult<bool> {
        let group = partition_group(space, part);
        self.parts.write().expect("lock poisoned").remove(&group);
        self.block_on(self.raft.close_group(group, &part_range(space, part)))
            .map_err(|e| QError::storage(format!("part {part} of space {space}: {e}")))
    }

    /// This host's replica of a partition, if it carries one.
    pub fn replica(&self, space: u32, part: u32) -> Option<Arc<Replica>> {
        self.parts.read().expect("lock poisoned").get(&partition_group(space, part)).cloned()
    }

    /// `(space, part, term)` of every partition whose replica here believes it leads (a leader cut off from its
    /// quorum believes it until it hears of a newer term: the latest term's claimant is the leader).
    pub fn leading(&self) -> Vec<(u32, u32, u64)> {
        let parts = self.parts.read().expect("lock poisoned");
        let mut led: Vec<(u32, u32, u64)> =
            parts.iter().filter(|(_, r)| r.is_leader()).map(|(g, r)| ((g >> 32) as u32, *g as u32, r.term())).collect();
        led.sort_unstable();
        led
    }

    /// Whether this host carries a replica of every partition of `space`.
    pub fn carries_all(&self, space: &SpaceDesc) -> bool {
        let parts = self.parts.read().expect("lock poisoned");
        (1..=space.partition_num).all(|p| parts.contains_key(&partition_group(space.id, p)))
    }

    /// Runs `f` on the runtime from a thread outside it (the request threads) and waits for it.
    pub fn block_on<F: std::future::Future>(&self, f: F) -> F::Output {
        self.runtime.block_on(f)
    }

    /// Confirms this host leads every partition of `parts` and has applied everything acknowledged before the call
    /// (the partitions' writers and readers may then use the local storage).
    pub fn lead(&self, space: u32, parts: &[u32]) -> Result<(), HostError> {
        let mut replicas = Vec::with_capacity(parts.len());
        for &part in parts {
            match self.replica(space, part) {
                Some(r) => replicas.push((part, r)),
                None => return Err(HostError::NotLeader { part, leader: None }),
            }
        }
        let check = |part: u32, r: Arc<Replica>| async move {
            match tokio::time::timeout(PART_TIMEOUT, r.linearize()).await {
                Ok(Ok(())) => Ok(()),
                Ok(Err(ReplicaError::NotLeader { leader, .. })) => Err(HostError::NotLeader { part, leader }),
                // A leader cut off from its quorum (a newer one may lead on the other side): nothing was done,
                // and the client looks for the leader again.
                Ok(Err(ReplicaError::Unavailable { .. })) => Err(HostError::NotLeader { part, leader: None }),
                Ok(Err(e)) => Err(HostError::Failed(replica_error(part, e))),
                Err(_) => Err(HostError::Failed(QError::storage(format!(
                    "part {part}: leadership not confirmed within {} s",
                    PART_TIMEOUT.as_secs()
                )))),
            }
        };
        if replicas.iter().all(|(_, r)| r.linearized_by_lease()) {
            return Ok(());
        }
        if let [(part, r)] = replicas.as_slice() {
            // One partition (most requests): checked on this thread, no task spawned.
            return self.block_on(check(*part, r.clone()));
        }
        let checks: Vec<_> = replicas.into_iter().map(|(part, r)| check(part, r)).collect();
        self.block_on(all(checks, |e| HostError::Failed(QError::storage(format!("a leadership check failed: {e}")))))
    }

    /// Brings this host's replica of every partition of `space` up to date with its leader (a follower read: the
    /// leader's read index, then waiting to apply up to it), so reads of the whole space here are linearizable as
    /// of the call. Refused unless this host carries every partition.
    pub fn catch_up(&self, space: &SpaceDesc) -> QResult<()> {
        let hosts = self.hosts.upgrade().ok_or_else(|| QError::storage("the cluster has stopped"))?;
        let hosts = hosts.as_ref();
        let mut work: Vec<std::pin::Pin<Box<dyn std::future::Future<Output = QResult<()>> + Send>>> = Vec::new();
        // Partitions led on other hosts: one request per host for all of its partitions' read indexes (a space of
        // NebulaGraph's default 100 partitions on 3 hosts would otherwise cost about 67 requests per read).
        let mut elsewhere: Vec<LedElsewhere> = Vec::new();
        for part in 1..=space.partition_num {
            let local = self.replica(space.id, part).ok_or_else(|| {
                QError::not_supported("a read of a whole space on a host that does not carry all its partitions")
            })?;
            let leader = leader_replica(hosts, space.id, part)?;
            let Some(addr) = leader.on_other_host().map(|h| h.addr().to_string()) else {
                work.push(Box::pin(async move {
                    let index = leader.read_index().await.map_err(|e| replica_error(part, e))?;
                    local.wait_applied(index, PART_TIMEOUT).await.map_err(|e| replica_error(part, e))
                }));
                continue;
            };
            match elsewhere.iter_mut().find(|(at, _, _)| *at == addr) {
                Some((_, _, parts)) => parts.push((part, local)),
                None => elsewhere.push((addr, leader, vec![(part, local)])),
            }
        }
        for (_, leader, parts) in elsewhere {
            work.push(Box::pin(async move {
                let host = leader.on_other_host().expect("a leader on another host");
                let asked: Vec<u32> = parts.iter().map(|(part, _)| *part).collect();
                let indexes = host.read_indexes(asked).await.map_err(|e| replica_error(parts[0].0, e))?;
                if indexes.len() != parts.len() {
                    return Err(QError::storage(format!(
                        "storage host {} gave {} read indexes for {} partitions",
                        host.addr(),
                        indexes.len(),
                        parts.len()
                    )));
                }
                for ((part, local), index) in parts.into_iter().zip(indexes) {
                    let index = index.map_err(|e| replica_error(part, e))?;
                    local.wait_applied(index, PART_TIMEOUT).await.map_err(|e| replica_error(part, e))?;
                }
                Ok(())
            }));
        }
        self.block_on(all(work, |e| QError::storage(format!("a catch-up failed: {e}"))))
    }

    /// The read index of each of `parts` of `space` ([`Replica::read_index`], all asked at once), for another host
    /// catching up with the partitions led here; a partition not carried here is answered as not led.
    pub fn read_indexes(&self, space: u32, parts: &[u32]) -> Vec<Result<u64, ReplicaError>> {
        let replicas: Vec<(u32, Option<Arc<Replica>>)> = parts.iter().map(|&p| (p, self.replica(space, p))).collect();
        self.block_on(async move {
            let mut asked = tokio::task::JoinSet::new();
            let mut out: Vec<Result<u64, ReplicaError>> = Vec::with_capacity(replicas.len());
            for (i, (part, replica)) in replicas.into_iter().enumerate() {
                let group = quiver_raft::partition_group(space, part);
                out.push(Err(ReplicaError::NotLeader { group, leader: None }));
                if let Some(r) = replica {
                    asked.spawn(async move { (i, r.read_index().await) });
                }
            }
            while let Some(done) = asked.join_next().await {
                if let Ok((i, index)) = done {
                    out[i] = index;
                }
            }
            out
        })
    }

    /// The proposer of this host's storage: `batch` split by partition; a batch of several partitions runs as a
    /// chain ([`crate::chain`]), one of a single partition is proposed to its group's leader (this host's replica,
    /// or the leader's host). Either way the partitions led here are settled first.
    fn propose(&self, space: &SpaceDesc, batch: WriteBatch) -> QResult<()> {
        let parts = split_by_part(space, batch)?;
        let hosts = self.hosts.upgrade().ok_or_else(|| QError::storage("the cluster has stopped"))?;
        if parts.len() > 1 {
            return self.block_on(self.chain(space, parts, &hosts));
        }
        let Some((part, sub)) = parts.into_iter().next() else { return Ok(()) };
        let replica: Arc<dyn PartLeader> = match self.replica(space.id, part).filter(|r| r.is_leader()) {
            Some(r) => {
                self.block_on(self.settle(space.id, part, &r, &hosts))?;
                r
            }
            None => leader_replica(hosts.as_ref(), space.id, part)?,
        };
        self.block_on(commit_in(replica.as_ref(), part, sub)).map(|_| ())
    }
}

/// A batch's operations grouped by the partition their keys lie in (`[space][part]…`), in order within each; a
/// range delete over the whole space becomes one per partition.
pub fn split_by_part(space: &SpaceDesc, batch: WriteBatch) -> QResult<BTreeMap<u32, WriteBatch>> {
    let outside = || QError::storage(format!("a write of space {} reaches outside its partitions", space.id));
    let part_of = |key: &[u8]| -> QResult<u32> {
        keys::part_of_key(space.id, key).filter(|p| (1..=space.partition_num).contains(p)).ok_or_else(outside)
    };
    let mut parts: BTreeMap<u32, WriteBatch> = BTreeMap::new();
    for op in batch.ops {
        match op {
            WriteOp::Put(ref k, _) | WriteOp::Delete(ref k) => {
                let part = part_of(k)?;
                parts.entry(part).or_default().ops.push(op);
            }
            WriteOp::DeleteRange(start, end) => {
                let (space_start, space_end) = keys::space_range(space.id);
                if start < space_start || end > space_end {
                    return Err(outside());
                }
                for part in 1..=space.partition_num {
                    let range = part_range(space.id, part);
                    let (s, e) = (start.clone().max(range.start), end.clone().min(range.end));
                    if s < e {
                        parts.entry(part).or_default().ops.push(WriteOp::DeleteRange(s, e));
                    }
                }
            }
        }
    }
    Ok(parts)
}
