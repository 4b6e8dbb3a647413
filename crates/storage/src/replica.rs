//! Replicated writes: how a partition replica applies the batches its Raft group committed.
//!
//! In cluster mode a statement's batch is computed once, by the leader's [`crate::write::Tx`], and every replica
//! applies the same bytes (`docs/design/cluster.md`, §3 and §5). A replica must then keep its in-memory mirrors of
//! the store (the topology, the vertex and edge property caches, the `SHOW STATS` counters) equal to its store
//! without the leader's logical operations: [`EmbeddedStorage::apply_replicated`] derives them from the batch's
//! keys and values alone.
//!
//! [`EmbeddedStorage::observe_commits`] is the other end: it hands every batch this storage commits, in commit
//! order, to an observer (what a leader will propose; what the tests replay into a second storage).
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
