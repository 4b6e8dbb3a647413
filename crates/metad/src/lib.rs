//! The meta service's state: the catalog of `crates/meta` (spaces, schemas, indexes, users and roles), replicated
//! by the meta Raft group (group 0) of every metad. Each replica keeps the catalog in memory over its own engine:
//! the leader's DDL commits its write batch through the group and returns once a majority has it and it is applied
//! here; every replica reloads its in-memory catalog when the group applies a batch, so a new leader serves at once.
//!
//! Not yet here: the thrift service graphd and storaged call, heartbeats, and the hosts and partition allocation
//! (docs/design/cluster.md §6).

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

impl MetaLog for GroupLog {
    fn commit(&self, batch: WriteBatch) -> QResult<()> {
        // The timer is made inside the runtime: this thread is not one of its own.
        let write = async { tokio::time::timeout(META_COMMIT_TIMEOUT, self.replica.write(batch)).await };
        match self.runtime.block_on(write) {
            Ok(Ok(_)) => Ok(()),
            // NebulaGraph's meta client answers E_LEADER_CHANGED; its caller retries on the new leader.
            Ok(Err(ReplicaError::NotLeader { leader, .. })) => Err(QError::execution(match leader {
                Some(l) => format!("Leader changed! The meta service's leader is node {l}"),
                None => "Leader changed! The meta service has no leader now".to_string(),
            })),
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
        let hook: quiver_raft::ApplyHook = Arc::new(move || {
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
