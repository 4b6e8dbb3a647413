//! Raft replication of Quiver's partitions, on openraft 0.9 (`storage-v2`).
//!
//! A *group* is one replicated state machine: one (space, partition) on the storage hosts, or the meta service. A
//! [`RaftHost`] runs every group one process carries, over **one** [`KvEngine`]: each group's log, vote and applied
//! state live under the reserved key range of [`keys`], its data in the key range it was opened with. Log appends of
//! every group share one sync of the engine's log ([`syncer`]: group commit), and a group's applied rows and its
//! applied log id are written in one atomic batch, so a crash never leaves the data ahead of, or behind, the applied
//! id.
//!
//! Entries are *physical*: a [`Command::Write`] carries the keys and values the leader computed, so a follower
//! applies bytes and never re-evaluates a schema or an expression.
//!
//! The network is the [`Transport`] trait: [`sim::SimNet`] delivers in process and can drop, delay, duplicate and
//! partition messages (the fault tests); the TCP transport of the cluster's processes implements the same trait.
//!
//! **Architecture invariant:** only this crate knows openraft. It knows nothing of graphs, schemas or queries: it
//! replicates key-value batches within a key range.

#![allow(
    clippy::result_large_err,
    reason = "openraft's StorageError and RPCError, the error types its traits require, are large"
)]

pub mod codec;
mod host;
pub mod keys;
mod log_store;
pub mod message;
mod read_barrier;
pub mod sim;
mod state_machine;
mod syncer;
pub mod tcp;

use std::future::Future;
use std::time::Duration;

pub use host::{RaftHost, Replica, ReplicaError};
pub use openraft::BasicNode;
use quiver_kv::WriteBatch;

/// A node (one storage or meta process) in every group it belongs to.
pub type NodeId = u64;

/// A replicated group: `space_id << 32 | part_id` for a partition, [`META_GROUP`] for the meta service.
pub type GroupId = u64;

/// The meta service's group.
pub const META_GROUP: GroupId = 0;

/// The group of a partition.
pub fn partition_group(space: u32, part: u32) -> GroupId {
    (u64::from(space) << 32) | u64::from(part)
}

/// What a log entry asks the state machine to do.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// Apply these key-value operations atomically; every key lies in the group's data range.
    Write(WriteBatch),
    /// Apply `batch` only if the fence does not hold a newer term than `term`; see [`Fenced`].
    Fenced(Fenced),
}

/// A write guarded by a monotonic fence: the state machine applies `batch` and records `term` in the `fence` key
/// unless that key already holds a larger term, in which case nothing is written and the answer says so
/// ([`Applied::fenced_out`]). The check runs at apply, in log order, so every replica decides the same.
///
/// What it is for: a writer that may be superseded by a newer one (a chain's coordinator, after its partition
/// elected a new leader in a later term) names its term; once the newer writer's term is recorded, a late message of
/// the old one can no longer overwrite what the newer one wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct Fenced {
    /// A key of the group's range holding the last accepted term (`u64` little-endian).
    pub fence: Vec<u8>,
    pub term: u64,
    pub batch: WriteBatch,
}

/// The state machine's answer to an applied entry.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Applied {
    /// A [`Command::Fenced`] whose fence held a newer term: nothing of it was written.
    pub fenced_out: bool,
}

openraft::declare_raft_types!(
    /// openraft's types for Quiver's groups.
    pub TypeConfig:
        D = Command,
        R = Applied,
        NodeId = NodeId,
        Node = BasicNode,
        Entry = openraft::Entry<TypeConfig>,
        SnapshotData = std::io::Cursor<Vec<u8>>,
        AsyncRuntime = openraft::TokioRuntime,
);

pub type LogId = openraft::LogId<NodeId>;
pub type Raft = openraft::Raft<TypeConfig>;
pub type RpcError<E = openraft::error::Infallible> = openraft::error::RPCError<NodeId, BasicNode, E>;
pub type RaftError<E = openraft::error::Infallible> = openraft::error::RaftError<NodeId, E>;
pub type AppendEntriesRequest = openraft::raft::AppendEntriesRequest<TypeConfig>;
pub type AppendEntriesResponse = openraft::raft::AppendEntriesResponse<NodeId>;
pub type VoteRequest = openraft::raft::VoteRequest<NodeId>;
pub type VoteResponse = openraft::raft::VoteResponse<NodeId>;
pub type InstallSnapshotRequest = openraft::raft::InstallSnapshotRequest<TypeConfig>;
pub type InstallSnapshotResponse = openraft::raft::InstallSnapshotResponse<NodeId>;
pub type InstallSnapshotError = openraft::error::InstallSnapshotError;

/// Called on the state machine's task after each applied batch of entries (and after a snapshot is installed), once
/// the engine holds them: what keeps a cache of the group's data (the catalog's, a partition's topology) current.
/// It must not block on the group.
pub type ApplyHook = std::sync::Arc<dyn Fn(ApplyEvent<'_>) + Send + Sync>;

/// What the engine just took from a group's log, as an [`ApplyHook`] is told it.
#[derive(Debug, Clone, Copy)]
pub enum ApplyEvent<'a> {
    /// The data operations of a batch of applied entries, in log order (without the applied-state record).
    Batch(&'a WriteBatch),
    /// A snapshot replaced the group's whole range.
    Snapshot,
}

/// The key range `[start, end)` a group's state machine owns (a partition's keys).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataRange {
    pub start: Vec<u8>,
    pub end: Vec<u8>,
}

impl DataRange {
    pub fn contains(&self, key: &[u8]) -> bool {
        self.start.as_slice() <= key && key < self.end.as_slice()
    }

    /// Whether every key `command` writes stays inside the range.
    pub fn covers_command(&self, command: &Command) -> bool {
        match command {
            Command::Write(b) => self.covers(b),
            Command::Fenced(f) => self.contains(&f.fence) && self.covers(&f.batch),
        }
    }

    /// Whether every operation of `batch` stays inside the range.
    pub fn covers(&self, batch: &WriteBatch) -> bool {
        batch.ops.iter().all(|op| match op {
            quiver_kv::WriteOp::Put(k, _) | quiver_kv::WriteOp::Delete(k) => self.contains(k),
            quiver_kv::WriteOp::DeleteRange(s, e) => {
                self.start.as_slice() <= s.as_slice() && e.as_slice() <= self.end.as_slice()
            }
        })
    }
}

/// A message's destination: the node and the address its membership records for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub id: NodeId,
    pub addr: String,
}

/// Sends a group's Raft messages from one node to another. Implementations route by `(to, group)`; the receiving
/// side hands the message to [`RaftHost::append_entries`], [`RaftHost::vote`] or [`RaftHost::install_snapshot`].
pub trait Transport: Send + Sync + 'static {
    fn append_entries(
        &self,
        to: &Target,
        group: GroupId,
        req: AppendEntriesRequest,
        timeout: Duration,
    ) -> impl Future<Output = Result<AppendEntriesResponse, RpcError<RaftError>>> + Send;

    fn vote(
        &self,
        to: &Target,
        group: GroupId,
        req: VoteRequest,
        timeout: Duration,
    ) -> impl Future<Output = Result<VoteResponse, RpcError<RaftError>>> + Send;

    fn install_snapshot(
        &self,
        to: &Target,
        group: GroupId,
        req: InstallSnapshotRequest,
        timeout: Duration,
    ) -> impl Future<Output = Result<InstallSnapshotResponse, RpcError<RaftError<InstallSnapshotError>>>> + Send;
}

/// Timing of every group a host runs. Defaults are the cluster's (docs/design/cluster.md, "Timing"); tests shorten
/// them.
#[derive(Debug, Clone)]
pub struct Timing {
    pub heartbeat: Duration,
    pub election_min: Duration,
    pub election_max: Duration,
    /// A snapshot is built once this many entries were applied since the last one; the log before it is purged.
    pub snapshot_every: u64,
}

impl Default for Timing {
    fn default() -> Self {
        Timing {
            heartbeat: Duration::from_millis(300),
            election_min: Duration::from_millis(1000),
            election_max: Duration::from_millis(2000),
            snapshot_every: 20_000,
        }
    }
}

impl Timing {
    /// For runs that exercise no failover (tests, mostly): elections long next to the heartbeat, so that a busy
    /// machine running many clusters at once does not make a follower give up on its leader (a group's first
    /// election is immediate, `initialize`), and a snapshot every 1,000 entries.
    pub fn steady() -> Timing {
        Timing {
            heartbeat: Duration::from_millis(100),
            election_min: Duration::from_millis(1500),
            election_max: Duration::from_millis(3000),
            snapshot_every: 1000,
        }
    }

    /// How often each group's openraft core ticks (its `heartbeat_interval × 3 / 2`): on a tick a leader sends the
    /// heartbeats that are due and a follower checks its election timeout. A group's ticks keep the phase of its
    /// start.
    pub fn tick_interval(&self) -> Duration {
        self.heartbeat * 3 / 2
    }

    /// When each of `n` groups started together should start so their ticks are spread evenly over one tick
    /// interval, not all on one instant (a host opening its partitions, a space's partitions created).
    pub fn staggered_starts(&self, n: usize) -> Vec<Duration> {
        let interval = self.tick_interval();
        (0..n).map(|i| interval * i as u32 / n.max(1) as u32).collect()
    }

    fn config(&self, group: GroupId) -> Result<openraft::Config, String> {
        let ms = |d: Duration| d.as_millis() as u64;
        let config = openraft::Config {
            cluster_name: format!("group-{group}"),
            heartbeat_interval: ms(self.heartbeat),
            election_timeout_min: ms(self.election_min),
            election_timeout_max: ms(self.election_max),
            // openraft's 200 ms default can resend a large snapshot's first chunk forever (research notes, §1).
            install_snapshot_timeout: 10_000,
            snapshot_policy: openraft::SnapshotPolicy::LogsSinceLast(self.snapshot_every),
            max_in_snapshot_log_to_keep: self.snapshot_every.min(1000),
            snapshot_max_chunk_size: codec::SNAPSHOT_CHUNK_BYTES,
            ..Default::default()
        };
        config.validate().map_err(|e| e.to_string())
    }
}

/// openraft's own storage conformance suite, run on the log store and state machine over the in-memory engine.
#[cfg(test)]
mod store_suite {
    use std::sync::Arc;

    use openraft::testing::{StoreBuilder, Suite};
    use openraft::StorageError;
    use quiver_kv::MemEngine;

    use crate::log_store::LogStore;
    use crate::state_machine::StateMachine;
    use crate::syncer::LogSyncer;
    use crate::{DataRange, NodeId, TypeConfig};

    struct Builder;

    impl StoreBuilder<TypeConfig, LogStore, StateMachine> for Builder {
        async fn build(&self) -> Result<((), LogStore, StateMachine), StorageError<NodeId>> {
            let engine: Arc<dyn quiver_kv::KvEngine> = Arc::new(MemEngine::new());
            let syncer = Arc::new(LogSyncer::start(engine.clone()));
            let log = LogStore::open(engine.clone(), 7, syncer)?;
            let sm = StateMachine::open(engine, 7, DataRange { start: b"a".to_vec(), end: b"b".to_vec() }, None)?;
            Ok(((), log, sm))
        }
    }

    #[test]
    fn openraft_storage_suite() {
        Suite::test_all(Builder).unwrap();
    }
}

#[cfg(test)]
mod timing_tests {
    use std::time::Duration;

    use super::Timing;

    #[test]
    fn tick_interval_is_openraft_s() {
        let t = Timing { heartbeat: Duration::from_millis(300), ..Timing::default() };
        assert_eq!(t.tick_interval(), Duration::from_millis(450));
    }

    #[test]
    fn groups_started_together_spread_over_one_tick() {
        let t = Timing::default();
        assert!(t.staggered_starts(0).is_empty());
        assert_eq!(t.staggered_starts(1), vec![Duration::ZERO]);
        for n in [2, 3, 7, 1000] {
            let starts = t.staggered_starts(n);
            assert_eq!(starts.len(), n);
            assert_eq!(starts[0], Duration::ZERO);
            assert!(*starts.last().unwrap() < t.tick_interval());
            let step = t.tick_interval() / n as u32;
            for w in starts.windows(2) {
                let gap = w[1] - w[0];
                assert!(gap.abs_diff(step) <= Duration::from_nanos(1), "n = {n}: gap {gap:?}, step {step:?}");
            }
        }
    }
}
