//! Writes that reach several partitions, all or nothing (TOSS, `docs/design/cluster.md` §7).
//!
//! An edge's out-copy lives in its source's partition and its in-copy in its destination's, so one `INSERT EDGE`
//! can be two Raft groups' writes, on two hosts. A writer's batch that reaches several partitions runs as a
//! *chain*, coordinated by the partition `C` the write was routed by ([`StorageHost::coordinate`]: an edge's source
//! partition), which this host leads:
//!
//! 1. **Prime.** `C` commits a record of the whole batch (every part's operations) under [`keys::chain_key`]. From
//!    then on the write happens: whoever leads `C` finishes it. Nothing of the graph is visible yet.
//! 2. **Remote parts.** Every other partition `Q` commits its part as a [`quiver_raft::Fenced`] write: the fence is
//!    `Q`'s [`keys::fence_key`] for `C`, the term the one in which `C`'s leader committed the prime. A leader of
//!    `C` in a later term raises the fence, so a late retry of a deposed leader can no longer overwrite what the
//!    newer one's chains wrote.
//! 3. **Resolve.** `C` commits its own part and deletes the record, in one entry; then the writer is answered.
//!
//! A chain that stops part way (its host crashed, a message or a reply was lost, `C`'s leadership moved) leaves its
//! record. `C`'s leader **settles** the partition (commits each record again in its own term, then runs steps 2 and
//! 3 once more; parts already written are written again with the same bytes) before it proposes anything to `C` in
//! a new term, after a chain of its own failed, and otherwise within [`SWEEP_EVERY`].
//!
//! **Invariants.**
//! - Once quiet, every chain is resolved: each of its parts is written in its partition, and no record is left.
//! - Every chain that writes an edge's copies is coordinated by the edge's source partition: edge writes are routed
//!   by their source, and a vertex deleted with its edges has each edge deleted as DELETE EDGE would
//!   ([`crate::ClusterStorage`]), never by the vertex's own chain.
//! - While a chain of `C` is pending, `C`'s leader proposes nothing else to `C`: chains, settling and sweeps run
//!   under the storage's writers' lock, and every write settles the partitions it leads first. So a chain
//!   finishes before any later write of the same edge.
//! - A remote part is applied only at or above its fence's term, in log order on every replica alike.

use std::cell::Cell;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use quiver_api::SpaceDesc;
use quiver_common::{QError, QResult};
use quiver_kv::WriteBatch;
use quiver_raft::codec::{decode_batch, encode_batch, Reader};
use quiver_raft::{partition_group, GroupId, Replica, ReplicaError};
use quiver_storage::keys;

use crate::host::{all, commit_in, replica_error, Hosts, StorageHost, PART_TIMEOUT};

thread_local! {
    /// The partition the writer on this thread was routed by (see [`StorageHost::coordinate`]).
    static COORDINATOR: Cell<Option<u32>> = const { Cell::new(None) };
}

/// How long one attempt at a remote part waits before asking where the partition's leader is again.
const ATTEMPT_WITHIN: Duration = Duration::from_secs(2);

/// How often a host looks for partitions it leads whose pending chains nobody is finishing.
pub const SWEEP_EVERY: Duration = Duration::from_millis(500);

/// The version byte of a chain record.
const RECORD_FORMAT: u8 = 1;

/// Where a chain can be made to stop as if its host had crashed there (the fault tests' fail points).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChainStep {
    /// The prime is committed; no remote part is written.
    Primed,
    /// Every remote part is written; the coordinator's own part is not.
    RemoteWritten,
}

/// Decides, at each [`ChainStep`], whether the chain stops there.
pub type ChainFault = Arc<dyn Fn(ChainStep) -> bool + Send + Sync>;

/// A host's chain bookkeeping.
#[derive(Default)]
pub(crate) struct Chains {
    /// Per partition led here: the term in which every pending chain of it was last finished.
    settled: Mutex<HashMap<GroupId, u64>>,
    /// The last chain id handed out.
    last_id: AtomicU64,
    fault: RwLock<Option<ChainFault>>,
}

impl Chains {
    /// A new chain id: nanoseconds since the epoch, above every id handed out before (records sort by it).
    fn next_id(&self) -> u64 {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos().min(u64::MAX as u128) as u64);
        let prev = self.last_id.fetch_update(Ordering::AcqRel, Ordering::Acquire, |last| Some(now.max(last + 1)));
        now.max(prev.unwrap_or(0) + 1)
    }

    fn is_settled(&self, group: GroupId, term: u64) -> bool {
        self.settled.lock().expect("lock poisoned").get(&group) == Some(&term)
    }

    fn unsettle(&self, group: GroupId) {
        self.settled.lock().expect("lock poisoned").remove(&group);
    }

    fn stop_at(&self, step: ChainStep) -> QResult<()> {
        match self.fault.read().expect("lock poisoned").as_ref() {
            Some(f) if f(step) => Err(QError::storage(format!("a fail point stopped the chain ({step:?})"))),
            _ => Ok(()),
        }
    }

    pub(crate) fn set_fault(&self, fault: Option<ChainFault>) {
        *self.fault.write().expect("lock poisoned") = fault;
    }
}

/// An error's message without the "Storage Error: " its kind puts first (it is said once, by the outermost).
fn detail(e: &QError) -> &str {
    e.message.strip_prefix("Storage Error: ").unwrap_or(&e.message)
}

/// A chain record: every part of the batch, by partition.
fn encode_record(parts: &BTreeMap<u32, WriteBatch>) -> Vec<u8> {
    let mut out = vec![RECORD_FORMAT];
    out.extend_from_slice(&(parts.len() as u32).to_le_bytes());
    for (part, batch) in parts {
        out.extend_from_slice(&part.to_le_bytes());
        encode_batch(&mut out, batch);
    }
    out
}

fn decode_record(bytes: &[u8]) -> QResult<BTreeMap<u32, WriteBatch>> {
    let damaged = |e: quiver_raft::codec::DecodeError| QError::storage(format!("a damaged chain record: {}", e.0));
    let mut r = Reader::new(bytes);
    let format = r.u8("format").map_err(damaged)?;
    if format != RECORD_FORMAT {
        return Err(QError::storage(format!("a chain record of format {format}")));
    }
    let n = r.count(8, "parts").map_err(damaged)?;
    let mut parts = BTreeMap::new();
    for _ in 0..n {
        let part = r.u32("part").map_err(damaged)?;
        parts.insert(part, decode_batch(&mut r).map_err(damaged)?);
    }
    if !r.is_empty() {
        return Err(QError::storage("a damaged chain record: bytes after its parts"));
    }
    Ok(parts)
}

/// Step 2 for one remote part: retried on whichever replica leads it, until it is committed or [`PART_TIMEOUT`]
/// has passed (a repeat writes the same bytes, behind the same fence).
async fn write_remote(
    hosts: Arc<dyn Hosts>,
    space: u32,
    part: u32,
    coordinator: u32,
    term: u64,
    batch: WriteBatch,
) -> QResult<()> {
    let fence = keys::fence_key(space, part, coordinator);
    let deadline = Instant::now() + PART_TIMEOUT;
    let mut last = String::from("it has no leader");
    loop {
        if let Some(r) = hosts.part_leader(space, part) {
            // Each attempt is bounded: a leader cut off from its quorum never answers, and the next attempt may
            // find the new one.
            let left = deadline.saturating_duration_since(Instant::now()).min(ATTEMPT_WITHIN);
            match tokio::time::timeout(left, r.write_fenced(fence.clone(), term, batch.clone())).await {
                Ok(Ok(true)) => return Ok(()),
                Ok(Ok(false)) => {
                    return Err(QError::storage(format!(
                        "part {coordinator} has a newer leader, which finishes the write (part {part} refused term \
                         {term})"
                    )))
                }
                Ok(Err(e)) => last = e.to_string(),
                Err(_) => last = "timed out".into(),
            }
        }
        if Instant::now() >= deadline {
            return Err(QError::storage(format!("part {part} did not take its share of the write: {last}")));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

impl StorageHost {
    /// Runs `parts` (a writer's batch split by partition, several of them) as a chain coordinated by the partition
    /// the write was routed by ([`StorageHost::coordinate`]; else the first of them this host leads). Called under
    /// the writers' lock.
    pub(crate) async fn chain(
        &self,
        space: &SpaceDesc,
        parts: BTreeMap<u32, WriteBatch>,
        hosts: &Arc<dyn Hosts>,
    ) -> QResult<()> {
        let routed = COORDINATOR.get().filter(|p| parts.contains_key(p));
        let led = match routed {
            Some(p) => self.replica(space.id, p).filter(|r| r.is_leader()).map(|r| (p, r)),
            None => parts.keys().find_map(|&p| self.replica(space.id, p).filter(|r| r.is_leader()).map(|r| (p, r))),
        };
        let Some((coordinator, c)) = led else {
            // Nothing is written: the client asks the leader again.
            let part = parts.keys().next().copied().unwrap_or_default();
            return Err(replica_error(
                part,
                ReplicaError::NotLeader { group: partition_group(space.id, part), leader: None },
            ));
        };
        self.settle(space.id, coordinator, &c, hosts).await.map_err(|e| {
            QError::storage(format!(
                "the write was not applied: part {coordinator} has an earlier write to finish first ({})",
                detail(&e)
            ))
        })?;
        let key = keys::chain_key(space.id, coordinator, self.chains.next_id());
        let mut prime = WriteBatch::new();
        prime.put(key.clone(), encode_record(&parts));
        let term = match commit_in(c.as_ref(), coordinator, prime).await {
            Ok(term) => term,
            Err(e) => {
                // The prime may yet commit: the partition is settled again before its next write.
                self.chains.unsettle(partition_group(space.id, coordinator));
                return Err(e);
            }
        };
        self.finish(space.id, coordinator, &c, key, parts, term, hosts).await
    }

    /// Steps 2 and 3 of a primed chain, in `term`.
    #[allow(clippy::too_many_arguments, reason = "one chain's state, passed once from two callers")]
    async fn finish(
        &self,
        space: u32,
        coordinator: u32,
        c: &Replica,
        key: Vec<u8>,
        mut parts: BTreeMap<u32, WriteBatch>,
        term: u64,
        hosts: &Arc<dyn Hosts>,
    ) -> QResult<()> {
        let outcome = async {
            self.chains.stop_at(ChainStep::Primed)?;
            let mut own = parts.remove(&coordinator).unwrap_or_default();
            let remote: Vec<_> = parts
                .into_iter()
                .map(|(part, batch)| write_remote(hosts.clone(), space, part, coordinator, term, batch))
                .collect();
            all(remote, |e| QError::storage(format!("a part of the write panicked: {e}"))).await?;
            self.chains.stop_at(ChainStep::RemoteWritten)?;
            own.delete(key);
            commit_in(c, coordinator, own).await.map(|_| ())
        }
        .await;
        outcome.map_err(|e| {
            self.chains.unsettle(partition_group(space, coordinator));
            QError::storage(format!(
                "{}; the write is recorded in part {coordinator} and will be completed",
                detail(&e)
            ))
        })
    }

    /// Finishes every pending chain of partition `part` (led here by `c`) unless that was done in the current term
    /// since the last failure. Called under the writers' lock.
    pub(crate) async fn settle(&self, space: u32, part: u32, c: &Replica, hosts: &Arc<dyn Hosts>) -> QResult<()> {
        let group = partition_group(space, part);
        let term = c.term();
        if self.chains.is_settled(group, term) {
            return Ok(());
        }
        // Every committed prime is applied here once leadership is confirmed; a prime this leader proposed whose
        // outcome it did not learn is still in its log, so everything appended is waited for too.
        match tokio::time::timeout(PART_TIMEOUT, c.linearize()).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(replica_error(part, e)),
            Err(_) => return Err(QError::storage(format!("part {part}: leadership not confirmed"))),
        }
        let appended = c.raft().metrics().borrow().last_log_index.unwrap_or(0);
        c.wait_applied(appended, PART_TIMEOUT).await.map_err(|e| replica_error(part, e))?;
        let mut records = Vec::new();
        self.engine
            .scan_prefix(&keys::prefix(space, part, keys::KIND_CHAIN), &mut |k, v| {
                records.push((k.to_vec(), v.to_vec()));
                true
            })
            .map_err(|e| QError::storage(e.to_string()))?;
        for (key, record) in records {
            let parts = decode_record(&record)?;
            let mut again = WriteBatch::new();
            again.put(key.clone(), record);
            let term = commit_in(c, part, again).await?;
            log::info!("part {part} of space {space}: finishing a chain left pending, in term {term}");
            self.finish(space, part, c, key, parts, term, hosts).await?;
        }
        self.chains.settled.lock().expect("lock poisoned").insert(group, term);
        Ok(())
    }

    /// Settles every partition led here that is not settled in its current term (see the module doc).
    pub(crate) fn sweep(&self) {
        let Some(hosts) = self.hosts.upgrade() else { return };
        let due: Vec<(GroupId, Arc<Replica>)> = self
            .parts
            .read()
            .expect("lock poisoned")
            .iter()
            .filter(|(g, r)| r.is_leader() && !self.chains.is_settled(**g, r.term()))
            .map(|(g, r)| (*g, r.clone()))
            .collect();
        for (group, r) in due {
            let (space, part) = ((group >> 32) as u32, group as u32);
            let settled = self.storage.as_writer(|| self.block_on(self.settle(space, part, &r, &hosts)));
            if let Err(e) = settled {
                log::warn!("part {part} of space {space}: pending chains not finished yet: {}", detail(&e));
            }
        }
    }

    /// Runs `f` (a write to this host's storage) with its chains coordinated by partition `part`, the one the
    /// request was routed by. Every write of an edge is routed by its source's partition, so all chains that write
    /// an edge's copies are coordinated by one partition, whose leader runs them one at a time (module doc).
    pub fn coordinate<R>(&self, part: u32, f: impl FnOnce() -> R) -> R {
        let before = COORDINATOR.replace(Some(part));
        let out = f();
        COORDINATOR.set(before);
        out
    }

    /// Makes chains stop where `fault` says, as if this host had crashed there (fault tests); `None` removes it.
    pub fn set_chain_fault(&self, fault: Option<ChainFault>) {
        self.chains.set_fault(fault);
    }

    /// How many chains this host's engine holds pending, over every partition of `space` it carries.
    pub fn pending_chains(&self, space: &SpaceDesc) -> QResult<usize> {
        let mut n = 0;
        for part in 1..=space.partition_num {
            self.engine
                .scan_prefix(&keys::prefix(space.id, part, keys::KIND_CHAIN), &mut |_, _| {
                    n += 1;
                    true
                })
                .map_err(|e| QError::storage(e.to_string()))?;
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_damage_is_an_error() {
        let mut a = WriteBatch::new();
        a.put(b"k".to_vec(), b"v".to_vec());
        let mut b = WriteBatch::new();
        b.delete(b"x".to_vec());
        let parts = BTreeMap::from([(1, a), (4, b)]);
        let bytes = encode_record(&parts);
        assert_eq!(decode_record(&bytes).unwrap(), parts);
        for cut in 0..bytes.len() {
            assert!(decode_record(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut more = bytes.clone();
        more.push(0);
        assert!(decode_record(&more).unwrap_err().message.contains("bytes after"));
    }

    #[test]
    fn chain_ids_grow() {
        let chains = Chains::default();
        let ids: Vec<u64> = (0..1000).map(|_| chains.next_id()).collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]));
    }
}
