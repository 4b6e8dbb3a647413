//! Replicated writes: how a partition replica applies the batches its Raft group committed.
//!
//! In cluster mode a statement's batch is computed once, by the leader's [`crate::write::Tx`], and every replica
//! applies the same bytes (`docs/design/cluster.md`, §3 and §5). A replica must then keep its in-memory mirrors of
//! the store (the topology, the vertex and edge property caches, the `SHOW STATS` counters) equal to its store
//! without the leader's logical operations: [`EmbeddedStorage::apply_replicated`] derives them from the batch's
//! keys and values alone.
//!
//! [`EmbeddedStorage::observe_commits`] is the other end: it hands every batch this storage commits, in commit
//! order, to an observer (what the tests replay into a second storage).
//!
//! **Cluster mode.** [`EmbeddedStorage::replicate_through`] makes a storage host's writers hand their batches to
//! a [`Proposer`] (the partitions' Raft groups) instead of writing them: a writer keeps the writers' lock until
//! its batch is committed and applied here, so the next writer reads it. The groups write what they apply to the
//! engine themselves and tell the storage with [`EmbeddedStorage::mirror_applied`] (or
//! [`EmbeddedStorage::mirror_snapshot`]), which keeps the mirrors without taking the writers' lock (the writer
//! waiting for that apply holds it).
//!
//! **Invariants.**
//! - Applying the batches a storage committed, in its commit order, to another storage over an engine with the same
//!   starting pairs leaves both with the same pairs, and both answer every read the same, whether their topology
//!   and caches were built before the batches arrived or are built after.
//! - The mirrors are derived per stored key: an edge's out-copy and in-copy are two keys, each mirrored in the one
//!   adjacency list it belongs to, so a host that holds only one of an edge's partitions mirrors only that copy.
//! - A range delete drops the space's topology and caches (they are rebuilt from the store on the next read).

use crate::keys::{self, KIND_EDGE, KIND_STATS, KIND_TAG, KIND_VERTEX, PREFIX_LEN};
use crate::topology::TopoEdge;
use crate::{kv_err, EmbeddedStorage, TopoOp};
use quiver_api::SpaceDesc;
use quiver_common::{QError, QResult};
use quiver_kv::{WriteBatch, WriteOp};
use std::sync::Arc;

/// Takes a writer's batch of `space` to the partitions' Raft groups; returns once it is committed and applied
/// here (or with the error that stopped it: then some of its partitions may have it, see the cluster design, §4).
/// Called under the writers' lock.
pub type Proposer = Arc<dyn Fn(&SpaceDesc, WriteBatch) -> QResult<()> + Send + Sync>;

/// Receives every batch a storage commits, with its space, in commit order; called under the writers' lock, so it
/// must not call back into the storage.
pub type CommitObserver = Arc<dyn Fn(&SpaceDesc, &WriteBatch) + Send + Sync>;

impl EmbeddedStorage {
    /// Hands every batch committed from now on to `observer` (see [`CommitObserver`]); replaces any earlier one.
    pub fn observe_commits(&self, observer: CommitObserver) {
        *self.observer.write().expect("lock poisoned") = Some(observer);
    }

    /// Applies a batch another replica of `space` committed: writes it (unsynced: a Raft entry is durable in the
    /// group's log before it is applied) and mirrors it in the topology, the caches and the counters. Every key must
    /// lie in `space`'s range; a batch with one outside it is refused whole, before anything is written.
    pub fn apply_replicated(&self, space: &SpaceDesc, batch: WriteBatch) -> QResult<()> {
        let mut guard = self.lock_writers();
        let (ops, counted) = mirror_ops(space, &batch)?;
        if batch.is_empty() {
            return Ok(());
        }
        self.kv.write_buffered(batch).map_err(kv_err)?;
        if counted {
            // Reloaded from the records the batch wrote, on the next write or STATS read.
            guard.counters.remove(&space.id);
        }
        self.apply_topology(space, ops);
        Ok(())
    }

    /// Makes this storage a cluster host's, once and for good: every writer's batch goes to `proposer` instead of
    /// the engine (see the module doc). From then on the edge property caches keep each direction apart
    /// ([`Self::keep_edge_directions_apart`]).
    pub fn replicate_through(&self, proposer: Proposer) {
        self.keep_edge_directions_apart();
        assert!(self.proposer.set(proposer).is_ok(), "a storage joins a cluster once");
    }

    /// Caches each direction of an edge type apart, from the copies stored here (see [`crate::ecache`]), as a
    /// storage that holds only some of a space's partitions must: an in-copy's out-copy may be stored elsewhere.
    /// Called before any read, once.
    pub fn keep_edge_directions_apart(&self) {
        self.hot_edges.keep_directions_apart();
    }

    /// Runs `f` as a writer: holding the writers' lock, so no writer of this storage computes or proposes a batch
    /// meanwhile (what a cluster host finishing a write it found half done must not interleave with).
    pub fn as_writer<R>(&self, f: impl FnOnce() -> R) -> R {
        let _writing = self.lock_writers();
        f()
    }

    /// Every edge `vid` is an end of, in either direction, as its out-edge key (`src`, positive type, rank, `dst`),
    /// each once, from this storage's copy of `vid`'s partition: what a vertex deleted with its edges deletes (in a
    /// cluster edge by edge, each routed by its source).
    pub fn edges_of(&self, space: &SpaceDesc, vid: &quiver_common::Value) -> QResult<Vec<quiver_api::EdgeKeyVal>> {
        let mut edges = Vec::new();
        for k in self.keys_with_prefix(&keys::edge_prefix(space, vid))? {
            let (et, rank, other) = keys::parse_edge_key(space, &k)?;
            let (src, dst, edge_type) = if et > 0 { (vid.clone(), other, et) } else { (other, vid.clone(), -et) };
            let key = quiver_api::EdgeKeyVal { src, edge_type, rank, dst };
            // A loop's two copies are both keyed by `vid`.
            if !edges.contains(&key) {
                edges.push(key);
            }
        }
        Ok(edges)
    }

    /// Whether writers' batches go to a [`Proposer`] (cluster mode).
    pub fn is_replicated(&self) -> bool {
        self.proposer.get().is_some()
    }

    /// Mirrors a batch of `space` that a partition's group has just written to the engine (see the module doc):
    /// the topology, the caches, and the counters (marked to be reloaded). Runs without the writers' lock.
    pub fn mirror_applied(&self, space: &SpaceDesc, batch: &WriteBatch) -> QResult<()> {
        let (ops, counted) = mirror_ops(space, batch)?;
        let _mirroring = self.mirror_lock.lock().unwrap_or_else(|p| p.into_inner());
        if counted {
            self.stale_counters.lock().unwrap_or_else(|p| p.into_inner()).insert(space.id);
        }
        self.apply_topology(space, ops);
        Ok(())
    }

    /// A snapshot replaced one of `space`'s partitions here: its mirrors are dropped, to be rebuilt from the store.
    pub fn mirror_snapshot(&self, space: &SpaceDesc) {
        let _mirroring = self.mirror_lock.lock().unwrap_or_else(|p| p.into_inner());
        self.stale_counters.lock().unwrap_or_else(|p| p.into_inner()).insert(space.id);
        self.apply_topology(space, vec![TopoOp::Clear]);
    }

    /// `commit` in cluster mode: hands the batch to the proposer and keeps the writers' lock until it returns, so
    /// the next writer reads what this one wrote. The mirrors follow the apply ([`Self::mirror_applied`]).
    pub(crate) fn propose(
        &self,
        mut guard: std::sync::MutexGuard<'_, crate::WriterState>,
        proposer: &Proposer,
        space: &SpaceDesc,
        b: crate::Batch,
    ) -> QResult<()> {
        if b.kv.is_empty() {
            return Ok(());
        }
        let outcome = proposer(space, b.kv);
        if outcome.is_err() {
            // Some partitions may have the batch and others not: the counters are reloaded from the store.
            guard.counters.remove(&space.id);
        }
        drop(guard);
        outcome
    }

    /// The observer `commit` hands each appended batch to (under the writers' lock), if one is set.
    pub(crate) fn commit_observer(&self) -> Option<CommitObserver> {
        self.observer.read().expect("lock poisoned").clone()
    }
}

/// The mirror operations of a replicated batch of `space`, and whether it writes a partition's counters.
fn mirror_ops(space: &SpaceDesc, batch: &WriteBatch) -> QResult<(Vec<TopoOp>, bool)> {
    let (start, end) = keys::space_range(space.id);
    let outside = || QError::storage(format!("a replicated batch of space {} writes outside its range", space.id));
    let vl = space.vid_type.key_len();
    let mut ops = Vec::new();
    let mut counted = false;
    for op in &batch.ops {
        let (key, row) = match op {
            WriteOp::Put(k, v) => (k, Some(v)),
            WriteOp::Delete(k) => (k, None),
            WriteOp::DeleteRange(s, e) => {
                if s.as_slice() < start.as_slice() || e.as_slice() > end.as_slice() {
                    return Err(outside());
                }
                ops.push(TopoOp::Clear);
                counted = true;
                continue;
            }
        };
        if key.len() < PREFIX_LEN || key[..4] != start[..] {
            return Err(outside());
        }
        let vid = || keys::decode_vid(space, key.get(PREFIX_LEN..PREFIX_LEN + vl).ok_or_else(short_key)?);
        match key[PREFIX_LEN - 1] {
            KIND_VERTEX => ops.push(TopoOp::Vertex { vid: vid()?, exists: row.is_some() }),
            KIND_TAG => {
                if key.len() != PREFIX_LEN + vl + 4 {
                    return Err(short_key());
                }
                ops.push(TopoOp::Tag { vid: vid()?, tag: keys::tag_id_of_key(space, key), row: row.cloned() });
            }
            KIND_EDGE => {
                let (edge_type, rank, to) = keys::parse_edge_key(space, key)?;
                let copy = TopoEdge { src: vid()?, edge_type, rank, dst: to };
                ops.push(TopoOp::Copy(copy, row.cloned()));
            }
            KIND_STATS => counted = true,
            // Index entries and anything else are not mirrored in memory.
            _ => {}
        }
    }
    Ok((ops, counted))
}

fn short_key() -> QError {
    QError::storage("a replicated batch holds a key too short for its kind")
}
