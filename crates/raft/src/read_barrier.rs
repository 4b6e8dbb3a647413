//! Coalesced leadership confirmation for linearizable reads, and a read lease after each confirmation.
//!
//! openraft 0.9 has no lease reads: a read is linearizable once the leader has confirmed, with a heartbeat round to
//! a quorum, that it still leads, and has applied up to the commit index of that moment
//! (`Raft::ensure_linearizable`). Readers that arrive while a confirmation is running wait for the next one, so
//! one round serves every read that arrived before it started, rather than one round per read.
//!
//! **Lease.** A confirmation that started at `S` got a quorum's answers to heartbeats sent after `S`. Each of those
//! followers refuses to vote for another candidate until openraft's leader lease (the election timeout's maximum)
//! has passed since it heard from this leader, and any new leader needs one of their votes. So no other leader can
//! exist before `S + election_max`, and until then this leader has applied every write acknowledged before a
//! read: its own writes are acknowledged only once applied here, and earlier leaders' were applied before the
//! confirmation returned. Reads that arrive before `S + lease` (half the election timeout's minimum, far inside that
//! bound, for clock rates and delays), while this replica still leads in the same term, are answered without a round.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

use crate::Raft;

pub struct ReadBarrier {
    /// Tickets handed to arriving readers, in arrival order.
    arrived: AtomicU64,
    /// Every reader whose ticket is at most this was covered by a confirmation that started after it arrived.
    served: AtomicU64,
    /// One confirmation at a time.
    running: tokio::sync::Mutex<()>,
    /// How long after a confirmation started reads are answered without another.
    lease: Duration,
    /// Until when, and in which term, the last confirmation lets reads through.
    leased: Mutex<Option<(Instant, u64)>>,
}

impl ReadBarrier {
    pub fn new(lease: Duration) -> ReadBarrier {
        ReadBarrier {
            arrived: AtomicU64::new(0),
            served: AtomicU64::new(0),
            running: tokio::sync::Mutex::new(()),
            lease,
            leased: Mutex::new(None),
        }
    }

    /// Returns once this replica is known to lead and to have applied every write acknowledged before this call:
    /// within the lease of an earlier confirmation, at once; else once a confirmation that started after this call
    /// has succeeded.
    pub async fn confirm(
        &self,
        raft: &Raft,
    ) -> Result<
        (),
        openraft::error::RaftError<crate::NodeId, openraft::error::CheckIsLeaderError<crate::NodeId, crate::BasicNode>>,
    > {
        if self.within_lease(raft) {
            return Ok(());
        }
        let ticket = self.arrived.fetch_add(1, Ordering::SeqCst) + 1;
        let _running = self.running.lock().await;
        if self.served.load(Ordering::SeqCst) >= ticket {
            return Ok(());
        }
        // Everyone holding a ticket up to here arrived before this confirmation starts.
        let covered = self.arrived.load(Ordering::SeqCst);
        let (started, term) = (Instant::now(), raft.metrics().borrow().current_term);
        raft.ensure_linearizable().await?;
        self.served.fetch_max(covered, Ordering::SeqCst);
        *self.leased.lock().expect("lock poisoned") = Some((started + self.lease, term));
        Ok(())
    }

    /// Whether the last confirmation's lease still runs, in the term it was taken in, and this replica leads: then
    /// [`ReadBarrier::confirm`] would return at once.
    pub fn within_lease(&self, raft: &Raft) -> bool {
        let Some((until, term)) = *self.leased.lock().expect("lock poisoned") else { return false };
        let m = raft.metrics();
        let m = m.borrow();
        Instant::now() < until && m.current_term == term && m.current_leader == Some(m.id)
    }
}
