//! Coalesced leadership confirmation for linearizable reads.
//!
//! openraft 0.9 has no lease reads: a read is linearizable once the leader has confirmed, with a heartbeat round to
//! a quorum, that it still leads, and has applied up to the commit index of that moment
//! (`Raft::ensure_linearizable`). Readers that arrive while a confirmation is running wait for the next one, so
//! one round serves every read that arrived before it started, rather than one round per read.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::Raft;

#[derive(Default)]
pub struct ReadBarrier {
    /// Tickets handed to arriving readers, in arrival order.
    arrived: AtomicU64,
    /// Every reader whose ticket is at most this was covered by a confirmation that started after it arrived.
    served: AtomicU64,
    /// One confirmation at a time.
    running: tokio::sync::Mutex<()>,
}

impl ReadBarrier {
    /// Returns once a confirmation that started after this call has succeeded; after it, the state machine has
    /// applied every write acknowledged before this call.
    pub async fn confirm(
        &self,
        raft: &Raft,
    ) -> Result<
        (),
        openraft::error::RaftError<crate::NodeId, openraft::error::CheckIsLeaderError<crate::NodeId, crate::BasicNode>>,
    > {
        let ticket = self.arrived.fetch_add(1, Ordering::SeqCst) + 1;
        let _running = self.running.lock().await;
        if self.served.load(Ordering::SeqCst) >= ticket {
            return Ok(());
        }
        // Everyone holding a ticket up to here arrived before this confirmation starts.
        let covered = self.arrived.load(Ordering::SeqCst);
        raft.ensure_linearizable().await?;
        self.served.fetch_max(covered, Ordering::SeqCst);
        Ok(())
    }
}
