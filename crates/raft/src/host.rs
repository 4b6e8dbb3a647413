//! The groups one process runs, their network adapter, and a replica's client-facing calls.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, RwLock};

use openraft::error::{
    CheckIsLeaderError, ClientWriteError, InstallSnapshotError, NetworkError, RemoteError, Unreachable,
};
use openraft::network::{RPCOption, RaftNetwork, RaftNetworkFactory};
use quiver_kv::{KvEngine, WriteBatch};

use crate::log_store::LogStore;
use crate::read_barrier::ReadBarrier;
use crate::state_machine::StateMachine;
use crate::syncer::LogSyncer;
use crate::{
    AppendEntriesRequest, AppendEntriesResponse, BasicNode, Command, DataRange, GroupId, InstallSnapshotRequest,
    InstallSnapshotResponse, LogId, NodeId, Raft, RaftError, RpcError, Timing, Transport, TypeConfig, VoteRequest,
    VoteResponse,
};

/// How long a linearizable read waits for its leader to confirm itself and apply: a leader that cannot reach its
/// quorum for this long answers `Unavailable`, and its clients look for the new leader (one is elected within about
/// the follower lease plus an election timeout, 2-4 s with the default timing).
pub const READ_BARRIER_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

/// Why a replica did not do what it was asked.
#[derive(Debug, Clone, PartialEq, thiserror::Error, serde::Serialize, serde::Deserialize)]
pub enum ReplicaError {
    /// This replica does not lead its group; nothing was done. `leader` is the leader it knows of.
    #[error("not the leader of group {group}; the leader is {leader:?}")]
    NotLeader { group: GroupId, leader: Option<NodeId> },
    /// The leader could not reach a quorum in time; nothing was done (a read), or see [`ReplicaError::Unknown`].
    #[error("group {group} cannot reach a quorum: {reason}")]
    Unavailable { group: GroupId, reason: String },
    /// A write whose outcome is not known: it may or may not be committed.
    #[error("the outcome of the write to group {group} is unknown: {reason}")]
    Unknown { group: GroupId, reason: String },
    /// A write with a key outside the group's range; refused before proposing.
    #[error("a write to group {group} has a key outside the group's range")]
    OutOfRange { group: GroupId },
    /// A write whose log entry would not fit in one message between hosts; refused before proposing.
    #[error("a write to group {group} of {bytes} bytes is larger than a raft message may be ({max} bytes)")]
    TooLarge { group: GroupId, bytes: usize, max: usize },
    /// No such group on this host, or it has stopped.
    #[error("group {group} is not running here: {reason}")]
    Stopped { group: GroupId, reason: String },
}

/// Every group one process carries, over one engine.
pub struct RaftHost {
    id: NodeId,
    engine: Arc<dyn KvEngine>,
    syncer: Arc<LogSyncer>,
    timing: Timing,
    groups: RwLock<HashMap<GroupId, Arc<Replica>>>,
}

impl RaftHost {
    /// A host with no group running. Must be called inside a tokio runtime (it starts the log syncer there).
    pub fn new(id: NodeId, engine: Arc<dyn KvEngine>, timing: Timing) -> Arc<RaftHost> {
        let syncer = Arc::new(LogSyncer::start(engine.clone()));
        Arc::new(RaftHost { id, engine, syncer, timing, groups: RwLock::new(HashMap::new()) })
    }

    pub fn id(&self) -> NodeId {
        self.id
    }

    /// The timing every group here runs with.
    pub fn timing(&self) -> &Timing {
        &self.timing
    }

    /// Starts a group's replica from what the engine holds of it (nothing for a new group; then
    /// [`Replica::initialize`] on one replica, or membership changes, make it part of a cluster).
    pub async fn open_group<T: Transport>(
        &self,
        group: GroupId,
        range: DataRange,
        transport: Arc<T>,
    ) -> Result<Arc<Replica>, ReplicaError> {
        self.open_group_observed(group, range, transport, None).await
    }

    /// [`RaftHost::open_group`], with `on_apply` told of every batch the group applies here.
    pub async fn open_group_observed<T: Transport>(
        &self,
        group: GroupId,
        range: DataRange,
        transport: Arc<T>,
        on_apply: Option<crate::ApplyHook>,
    ) -> Result<Arc<Replica>, ReplicaError> {
        let stopped = |reason: String| ReplicaError::Stopped { group, reason };
        // Two Raft instances over one group's log and vote could vote twice in a term: the running one stops first.
        let running = self.groups.write().expect("groups lock").remove(&group);
        if let Some(old) = running {
            let _ = old.raft.shutdown().await;
        }
        let config = Arc::new(self.timing.config(group).map_err(stopped)?);
        let log =
            LogStore::open(self.engine.clone(), group, self.syncer.clone()).map_err(|e| stopped(e.to_string()))?;
        let sm = StateMachine::open(self.engine.clone(), group, range.clone(), on_apply)
            .map_err(|e| stopped(e.to_string()))?;
        let applied_index = sm.applied_index();
        let network = Network { group, transport };
        let raft = Raft::new(self.id, config, network, log, sm).await.map_err(|e| stopped(e.to_string()))?;
        let replica = Arc::new(Replica {
            group,
            node: self.id,
            raft,
            engine: self.engine.clone(),
            range,
            barrier: ReadBarrier::new(self.timing.election_min / 2),
            applied_index,
        });
        self.groups.write().expect("groups lock").insert(group, replica.clone());
        Ok(replica)
    }

    pub fn replica(&self, group: GroupId) -> Option<Arc<Replica>> {
        self.groups.read().expect("groups lock").get(&group).cloned()
    }

    /// Stops this host's replica of `group` for good and deletes its Raft state (log, vote, applied id) and the data
    /// in `data` (the group's range): what a dropped space's partitions leave. Whether it was running here (the
    /// state of one that was not, left by a host down when its space was dropped, is deleted too).
    pub async fn close_group(&self, group: GroupId, data: &DataRange) -> Result<bool, ReplicaError> {
        let replica = self.groups.write().expect("groups lock").remove(&group);
        let running = replica.is_some();
        if let Some(replica) = replica {
            let _ = replica.raft.shutdown().await;
        }
        let mut batch = WriteBatch::new();
        let log = crate::keys::state_key(crate::keys::LOG, group);
        batch.delete_range(log.clone(), quiver_kv::prefix_end(&log).expect("a log prefix ends"));
        for kind in [crate::keys::VOTE, crate::keys::COMMITTED, crate::keys::PURGED, crate::keys::APPLIED] {
            batch.delete(crate::keys::state_key(kind, group));
        }
        batch.delete_range(data.start.clone(), data.end.clone());
        self.engine
            .write(batch)
            .map_err(|e| ReplicaError::Stopped { group, reason: format!("its state was not deleted: {e}") })?;
        Ok(running)
    }

    /// Every group whose state this host's engine holds (running or not): those that ever voted or applied here.
    pub fn stored_groups(&self) -> Result<Vec<GroupId>, String> {
        let mut groups = std::collections::BTreeSet::new();
        for kind in [crate::keys::VOTE, crate::keys::APPLIED] {
            let mut prefix = crate::keys::RAFT_PREFIX.to_vec();
            prefix.push(kind);
            self.engine
                .scan_prefix(&prefix, &mut |k, _| {
                    if let Some(id) = k.get(5..13).and_then(|b| b.try_into().ok()) {
                        groups.insert(GroupId::from_be_bytes(id));
                    }
                    true
                })
                .map_err(|e| e.to_string())?;
        }
        Ok(groups.into_iter().collect())
    }

    /// Stops every group (their state stays in the engine; [`RaftHost::open_group`] resumes it).
    pub async fn shutdown(&self) {
        let groups: Vec<_> = self.groups.write().expect("groups lock").drain().map(|(_, r)| r).collect();
        for r in groups {
            let _ = r.raft.shutdown().await;
        }
    }

    fn target<E: std::error::Error>(&self, group: GroupId) -> Result<Arc<Replica>, RpcError<E>> {
        self.replica(group).ok_or_else(|| {
            RpcError::Unreachable(Unreachable::new(&std::io::Error::other(format!(
                "group {group} is not running on node {}",
                self.id
            ))))
        })
    }

    fn remote<E: std::error::Error>(&self, e: E) -> RpcError<E> {
        RpcError::RemoteError(RemoteError::new(self.id, e))
    }

    /// A message of `group` arriving from the network.
    pub async fn append_entries(
        &self,
        group: GroupId,
        req: AppendEntriesRequest,
    ) -> Result<AppendEntriesResponse, RpcError<RaftError>> {
        self.target(group)?.raft.append_entries(req).await.map_err(|e| self.remote(e))
    }

    pub async fn vote(&self, group: GroupId, req: VoteRequest) -> Result<VoteResponse, RpcError<RaftError>> {
        self.target(group)?.raft.vote(req).await.map_err(|e| self.remote(e))
    }

    pub async fn install_snapshot(
        &self,
        group: GroupId,
        req: InstallSnapshotRequest,
    ) -> Result<InstallSnapshotResponse, RpcError<RaftError<InstallSnapshotError>>> {
        self.target(group)?.raft.install_snapshot(req).await.map_err(|e| self.remote(e))
    }
}

/// One group's replica on this host.
pub struct Replica {
    group: GroupId,
    node: NodeId,
    raft: Raft,
    engine: Arc<dyn KvEngine>,
    range: DataRange,
    barrier: ReadBarrier,
    /// The index the state machine has applied (ahead of openraft's metrics, which report it after the writers of
    /// the applied entries may already have their answers).
    applied_index: Arc<std::sync::atomic::AtomicU64>,
}

impl Replica {
    pub fn group(&self) -> GroupId {
        self.group
    }

    pub fn raft(&self) -> &Raft {
        &self.raft
    }

    /// The leader this replica knows of.
    pub fn leader(&self) -> Option<NodeId> {
        self.raft.metrics().borrow().current_leader
    }

    pub fn is_leader(&self) -> bool {
        self.leader() == Some(self.node)
    }

    /// The latest term this replica knows of.
    pub fn term(&self) -> u64 {
        self.raft.metrics().borrow().current_term
    }

    /// Makes a new group of `members` (call on one replica, once, with every member's replica opened).
    pub async fn initialize(&self, members: BTreeMap<NodeId, BasicNode>) -> Result<(), ReplicaError> {
        self.raft
            .initialize(members)
            .await
            .map_err(|e| ReplicaError::Stopped { group: self.group, reason: e.to_string() })
    }

    /// Replicates `batch` and applies it; returns once a majority has it and this leader applied it.
    pub async fn write(&self, batch: WriteBatch) -> Result<LogId, ReplicaError> {
        self.propose(Command::Write(batch)).await.map(|(id, _)| id)
    }

    /// Replicates a [`Command::Fenced`] write and applies it: `Ok(true)` once it is committed and was written,
    /// `Ok(false)` if it is committed but the fence held a newer term, so nothing of it was written.
    pub async fn write_fenced(&self, fence: Vec<u8>, term: u64, batch: WriteBatch) -> Result<bool, ReplicaError> {
        let (_, applied) = self.propose(Command::Fenced(crate::Fenced { fence, term, batch })).await?;
        Ok(!applied.fenced_out)
    }

    async fn propose(&self, command: Command) -> Result<(LogId, crate::Applied), ReplicaError> {
        let group = self.group;
        if !self.range.covers_command(&command) {
            return Err(ReplicaError::OutOfRange { group });
        }
        let bytes = crate::codec::command_bytes(&command);
        let max = quiver_common::limits::RAFT_FRAME_BYTES_MAX - 1024;
        if bytes > max {
            return Err(ReplicaError::TooLarge { group, bytes, max });
        }
        match self.raft.client_write(command).await {
            Ok(r) => Ok((r.log_id, r.data)),
            // openraft answers ForwardToLeader for a write refused up front, or one whose entry was truncated
            // (replaced by a new leader's): either way it is not and will not be committed.
            Err(RaftError::APIError(ClientWriteError::ForwardToLeader(f))) => {
                Err(ReplicaError::NotLeader { group, leader: f.leader_id })
            }
            Err(e) => Err(ReplicaError::Unknown { group, reason: e.to_string() }),
        }
    }

    /// Returns once every write acknowledged before this call is applied here and this replica still leads.
    pub async fn linearize(&self) -> Result<(), ReplicaError> {
        let group = self.group;
        // A leader that confirmed itself and then lost its quorum before applying its first entry would wait
        // forever for that apply; the wait is bounded, and its end is `Unavailable` (nothing was read).
        let confirmed = match tokio::time::timeout(READ_BARRIER_TIMEOUT, self.barrier.confirm(&self.raft)).await {
            Ok(c) => c,
            Err(_) => {
                return Err(ReplicaError::Unavailable {
                    group,
                    reason: format!("leadership not confirmed within {READ_BARRIER_TIMEOUT:?}"),
                })
            }
        };
        confirmed.map_err(|e| match e {
            RaftError::APIError(CheckIsLeaderError::ForwardToLeader(f)) => {
                ReplicaError::NotLeader { group, leader: f.leader_id }
            }
            RaftError::APIError(CheckIsLeaderError::QuorumNotEnough(q)) => {
                ReplicaError::Unavailable { group, reason: q.to_string() }
            }
            RaftError::Fatal(f) => ReplicaError::Stopped { group, reason: f.to_string() },
        })
    }

    /// Whether [`Replica::linearize`] would return at once, within the read lease of an earlier confirmation:
    /// checked without a runtime or a timer, as most reads to a busy leader are.
    pub fn linearized_by_lease(&self) -> bool {
        self.barrier.within_lease(&self.raft)
    }

    /// A read index for a follower read: once confirmed as leader (see [`Replica::linearize`]), the index this
    /// replica has applied, which covers every write acknowledged before the call. A replica that has applied up
    /// to it ([`Replica::wait_applied`]) may answer reads that are linearizable as of this call.
    pub async fn read_index(&self) -> Result<u64, ReplicaError> {
        self.linearize().await?;
        Ok(self.applied())
    }

    /// The index applied here. The state machine's own count, not openraft's metrics alone: a write is answered
    /// once applied, and the metrics report that apply only later, so an index taken from them could miss a write
    /// already acknowledged (a follower catching up to it, or a catalog copy compared with it, would then lack
    /// that write).
    pub fn applied(&self) -> u64 {
        let metrics = self.raft.metrics().borrow().last_applied.map_or(0, |id| id.index);
        metrics.max(self.applied_index.load(std::sync::atomic::Ordering::SeqCst))
    }

    /// Returns once this replica has applied up to `index` (from the leader's [`Replica::read_index`]), or
    /// `Unavailable` after `timeout`.
    pub async fn wait_applied(&self, index: u64, timeout: std::time::Duration) -> Result<(), ReplicaError> {
        let group = self.group;
        if self.raft.metrics().borrow().last_applied.is_some_and(|id| id.index >= index) {
            return Ok(());
        }
        self.raft
            .wait(Some(timeout))
            .applied_index_at_least(Some(index), "read index")
            .await
            .map(|_| ())
            .map_err(|e| ReplicaError::Unavailable { group, reason: format!("not applied up to index {index}: {e}") })
    }

    /// A linearizable read of one key of the group's range.
    pub async fn read(&self, key: &[u8]) -> Result<Option<Vec<u8>>, ReplicaError> {
        self.linearize().await?;
        self.engine.get(key).map_err(|e| ReplicaError::Stopped { group: self.group, reason: e.to_string() })
    }
}

/// openraft's network for one group: every message goes through the host's transport, tagged with the group.
struct Network<T> {
    group: GroupId,
    transport: Arc<T>,
}

struct Client<T> {
    to: crate::Target,
    group: GroupId,
    transport: Arc<T>,
}

impl<T: Transport> RaftNetworkFactory<TypeConfig> for Network<T> {
    type Network = Client<T>;

    async fn new_client(&mut self, target: NodeId, node: &BasicNode) -> Client<T> {
        let to = crate::Target { id: target, addr: node.addr.clone() };
        Client { to, group: self.group, transport: self.transport.clone() }
    }
}

impl<T: Transport> RaftNetwork<TypeConfig> for Client<T> {
    async fn append_entries(
        &mut self,
        rpc: AppendEntriesRequest,
        option: RPCOption,
    ) -> Result<AppendEntriesResponse, RpcError<RaftError>> {
        self.transport.append_entries(&self.to, self.group, rpc, option.hard_ttl()).await
    }

    async fn install_snapshot(
        &mut self,
        rpc: InstallSnapshotRequest,
        option: RPCOption,
    ) -> Result<InstallSnapshotResponse, RpcError<RaftError<InstallSnapshotError>>> {
        self.transport.install_snapshot(&self.to, self.group, rpc, option.hard_ttl()).await
    }

    async fn vote(&mut self, rpc: VoteRequest, option: RPCOption) -> Result<VoteResponse, RpcError<RaftError>> {
        self.transport.vote(&self.to, self.group, rpc, option.hard_ttl()).await
    }
}

/// The error a transport reports for a message it could not deliver (or whose reply it lost).
pub fn unreachable<E: std::error::Error>(why: &str) -> RpcError<E> {
    RpcError::Unreachable(Unreachable::new(&std::io::Error::other(why.to_string())))
}

/// The error a transport reports for a message that may or may not have been delivered.
pub fn network_error<E: std::error::Error>(why: &str) -> RpcError<E> {
    RpcError::Network(NetworkError::new(&std::io::Error::other(why.to_string())))
}
