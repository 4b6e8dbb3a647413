//! A group's state machine (openraft's `RaftStateMachine`): applies entries to the group's data range of the
//! host's engine, each batch of entries together with the applied log id in one atomic write.

use std::collections::HashMap;
use std::io::Cursor;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use openraft::storage::RaftStateMachine;
use openraft::{
    AnyError, EntryPayload, OptionalSend, RaftSnapshotBuilder, Snapshot, SnapshotMeta, StorageError, StorageIOError,
    StoredMembership,
};
use quiver_kv::{KvEngine, WriteBatch, WriteOp};

use crate::codec::{self, Entry};
use crate::keys;
use crate::{Applied, BasicNode, Command, DataRange, GroupId, LogId, NodeId, TypeConfig};

type StorageResult<T> = Result<T, StorageError<NodeId>>;

fn sm_read(e: impl std::error::Error + 'static) -> StorageError<NodeId> {
    StorageError::IO { source: StorageIOError::read_state_machine(AnyError::new(&e)) }
}

fn sm_write(e: impl std::error::Error + 'static) -> StorageError<NodeId> {
    StorageError::IO { source: StorageIOError::write_state_machine(AnyError::new(&e)) }
}

pub struct StateMachine {
    engine: Arc<dyn KvEngine>,
    group: GroupId,
    range: DataRange,
    applied: Option<LogId>,
    membership: StoredMembership<NodeId, BasicNode>,
    /// The last snapshot built or installed (rebuilt from the data after a restart when asked for).
    snapshot: Option<(SnapshotMeta<NodeId, BasicNode>, Vec<u8>)>,
    snapshots_built: u64,
    /// Told after every applied batch and installed snapshot (the caches above the data follow it).
    on_apply: Option<crate::ApplyHook>,
    /// The index applied here, set once a batch is in the engine and its hook told, before openraft answers the
    /// batch's writers; openraft's metrics report it later (see [`crate::Replica::read_index`]).
    applied_index: Arc<AtomicU64>,
}

impl StateMachine {
    pub fn open(
        engine: Arc<dyn KvEngine>,
        group: GroupId,
        range: DataRange,
        on_apply: Option<crate::ApplyHook>,
    ) -> StorageResult<StateMachine> {
        let (applied, membership) = match engine.get(&keys::state_key(keys::APPLIED, group)).map_err(sm_read)? {
            None => (None, StoredMembership::default()),
            Some(v) => codec::decode_applied(&v).map_err(sm_read)?,
        };
        let applied_index = Arc::new(AtomicU64::new(applied.map_or(0, |id| id.index)));
        Ok(StateMachine {
            engine,
            group,
            range,
            applied,
            membership,
            snapshot: None,
            snapshots_built: 0,
            on_apply,
            applied_index,
        })
    }

    /// The index this state machine has applied, shared (see the field).
    pub fn applied_index(&self) -> Arc<AtomicU64> {
        self.applied_index.clone()
    }

    /// Makes what this state machine has applied visible to [`crate::Replica::applied`]: once a batch or snapshot
    /// is in the engine and its hook told, before openraft answers the writers.
    fn publish_applied(&self) {
        self.applied_index.store(self.applied.map_or(0, |id| id.index), Ordering::SeqCst);
    }

    fn applied_record(&self) -> (Vec<u8>, Vec<u8>) {
        (keys::state_key(keys::APPLIED, self.group), codec::encode_applied(&self.applied, &self.membership))
    }

    /// A copy of the group's data and applied state as of now. Taken on the state machine's task, between applies,
    /// so it is consistent.
    fn copy(&mut self) -> StorageResult<(SnapshotMeta<NodeId, BasicNode>, Vec<u8>)> {
        let mut data = Vec::new();
        self.engine
            .scan_range(&self.range.start, &self.range.end, &mut |k, v| {
                codec::encode_pair(&mut data, k, v);
                true
            })
            .map_err(sm_read)?;
        self.snapshots_built += 1;
        let snapshot_id = match &self.applied {
            Some(id) => format!("{}-{}-{}-{}", self.group, id.leader_id.term, id.index, self.snapshots_built),
            None => format!("{}-0-0-{}", self.group, self.snapshots_built),
        };
        let meta = SnapshotMeta { last_log_id: self.applied, last_membership: self.membership.clone(), snapshot_id };
        Ok((meta, data))
    }
}

/// The term a fence key holds; a damaged value (never written by [`Command::Fenced`]) counts as the largest, so the
/// fence refuses rather than lets an old writer through.
fn fence_term(value: &[u8]) -> u64 {
    value.try_into().map_or(u64::MAX, u64::from_le_bytes)
}

/// Builds a snapshot from a copy already taken.
pub struct SnapshotBuilder {
    copy: StorageResult<(SnapshotMeta<NodeId, BasicNode>, Vec<u8>)>,
}

impl RaftSnapshotBuilder<TypeConfig> for SnapshotBuilder {
    async fn build_snapshot(&mut self) -> StorageResult<Snapshot<TypeConfig>> {
        let (meta, data) = std::mem::replace(&mut self.copy, Err(sm_read(std::io::Error::other("built twice"))))?;
        Ok(Snapshot { meta, snapshot: Box::new(Cursor::new(data)) })
    }
}

impl RaftStateMachine<TypeConfig> for StateMachine {
    type SnapshotBuilder = SnapshotBuilder;

    async fn applied_state(&mut self) -> StorageResult<(Option<LogId>, StoredMembership<NodeId, BasicNode>)> {
        Ok((self.applied, self.membership.clone()))
    }

    async fn apply<I>(&mut self, entries: I) -> StorageResult<Vec<Applied>>
    where
        I: IntoIterator<Item = Entry> + OptionalSend,
        I::IntoIter: OptionalSend,
    {
        let mut batch = WriteBatch::new();
        let mut replies = Vec::new();
        // Fences written by earlier entries of this call, not yet in the engine.
        let mut fences: HashMap<Vec<u8>, u64> = HashMap::new();
        for entry in entries {
            let mut reply = Applied::default();
            match entry.payload {
                EntryPayload::Blank => {}
                EntryPayload::Normal(command) => {
                    // The leader refused out-of-range batches before proposing them; an entry that still holds one
                    // comes from a damaged log, and applying it would write outside this group.
                    if !self.range.covers_command(&command) {
                        return Err(StorageError::IO {
                            source: StorageIOError::apply(
                                entry.log_id,
                                AnyError::error(format!("group {}: a write outside its key range", self.group)),
                            ),
                        });
                    }
                    match command {
                        Command::Write(b) => batch.ops.extend(b.ops),
                        Command::Fenced(f) => {
                            let held = match fences.get(&f.fence) {
                                Some(&term) => Some(term),
                                None => self.engine.get(&f.fence).map_err(sm_read)?.map(|v| fence_term(&v)),
                            };
                            if held.is_some_and(|held| held > f.term) {
                                reply.fenced_out = true;
                            } else {
                                batch.ops.extend(f.batch.ops);
                                batch.put(f.fence.clone(), f.term.to_le_bytes().to_vec());
                                fences.insert(f.fence, f.term);
                            }
                        }
                    }
                }
                EntryPayload::Membership(m) => self.membership = StoredMembership::new(Some(entry.log_id), m),
            }
            self.applied = Some(entry.log_id);
            replies.push(reply);
        }
        // The hook is told the data operations alone; the copy is made only for a group that has one.
        let data = self.on_apply.as_ref().map(|_| batch.clone());
        let (k, v) = self.applied_record();
        batch.ops.push(WriteOp::Put(k, v));
        // Not synced: the entries are durable in the log, and after a crash they are applied again from the
        // applied id this same batch records.
        self.engine.write_buffered(batch).map_err(sm_write)?;
        if let (Some(hook), Some(data)) = (&self.on_apply, &data) {
            hook(crate::ApplyEvent::Batch(data));
        }
        self.publish_applied();
        Ok(replies)
    }

    async fn get_snapshot_builder(&mut self) -> SnapshotBuilder {
        let copy = self.copy();
        if let Ok((meta, data)) = &copy {
            self.snapshot = Some((meta.clone(), data.clone()));
        }
        SnapshotBuilder { copy }
    }

    async fn begin_receiving_snapshot(&mut self) -> StorageResult<Box<Cursor<Vec<u8>>>> {
        Ok(Box::new(Cursor::new(Vec::new())))
    }

    async fn install_snapshot(
        &mut self,
        meta: &SnapshotMeta<NodeId, BasicNode>,
        snapshot: Box<Cursor<Vec<u8>>>,
    ) -> StorageResult<()> {
        let data = snapshot.into_inner();
        let snapshot_err = |e: codec::DecodeError| StorageError::IO {
            source: StorageIOError::read_snapshot(Some(meta.signature()), AnyError::new(&e)),
        };
        let pairs = codec::decode_pairs(&data).map_err(snapshot_err)?;
        let mut batch = WriteBatch::new();
        batch.delete_range(self.range.start.clone(), self.range.end.clone());
        for (k, v) in pairs {
            if !self.range.contains(&k) {
                return Err(snapshot_err(codec::DecodeError(format!("group {}: a key outside its range", self.group))));
            }
            batch.put(k, v);
        }
        self.applied = meta.last_log_id;
        self.membership = meta.last_membership.clone();
        let (k, v) = self.applied_record();
        batch.put(k, v);
        crate::log_store::write_synced(&self.engine, batch).await.map_err(sm_write)?;
        self.snapshot = Some((meta.clone(), data));
        if let Some(hook) = &self.on_apply {
            hook(crate::ApplyEvent::Snapshot);
        }
        self.publish_applied();
        Ok(())
    }

    async fn get_current_snapshot(&mut self) -> StorageResult<Option<Snapshot<TypeConfig>>> {
        if self.snapshot.is_none() && self.applied.is_some() {
            let copy = self.copy()?;
            self.snapshot = Some(copy);
        }
        Ok(self
            .snapshot
            .as_ref()
            .map(|(meta, data)| Snapshot { meta: meta.clone(), snapshot: Box::new(Cursor::new(data.clone())) }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Fenced;
    use openraft::{CommittedLeaderId, EntryPayload};
    use quiver_kv::MemEngine;

    fn fenced(index: u64, term: u64, key: &[u8], value: &[u8]) -> Entry {
        let mut batch = WriteBatch::new();
        batch.put(key.to_vec(), value.to_vec());
        let command = Command::Fenced(Fenced { fence: b"af".to_vec(), term, batch });
        Entry { log_id: LogId::new(CommittedLeaderId::new(1, 1), index), payload: EntryPayload::Normal(command) }
    }

    /// A fenced write applies at its fence's term or a newer one, and is refused (nothing written) below it, whether
    /// the newer term came in the same apply call or an earlier one.
    #[tokio::test]
    async fn a_fence_refuses_older_terms() {
        let engine: Arc<dyn KvEngine> = Arc::new(MemEngine::new());
        let range = DataRange { start: b"a".to_vec(), end: b"b".to_vec() };
        let mut sm = StateMachine::open(engine.clone(), 7, range, None).unwrap();
        let replies = sm.apply([fenced(1, 3, b"ak", b"t3"), fenced(2, 2, b"ak", b"t2")]).await.unwrap();
        assert_eq!(replies.iter().map(|r| r.fenced_out).collect::<Vec<_>>(), [false, true]);
        assert_eq!(engine.get(b"ak").unwrap().as_deref(), Some(&b"t3"[..]));
        let replies = sm.apply([fenced(3, 1, b"ak", b"t1"), fenced(4, 3, b"ak", b"t3b")]).await.unwrap();
        assert_eq!(replies.iter().map(|r| r.fenced_out).collect::<Vec<_>>(), [true, false]);
        assert_eq!(engine.get(b"ak").unwrap().as_deref(), Some(&b"t3b"[..]));
        assert_eq!(engine.get(b"af").unwrap(), Some(3u64.to_le_bytes().to_vec()));
        // A fence outside the range is a damaged entry, refused whole.
        let mut outside = fenced(5, 4, b"ak", b"x");
        if let EntryPayload::Normal(Command::Fenced(f)) = &mut outside.payload {
            f.fence = b"zz".to_vec();
        }
        assert!(sm.apply([outside]).await.is_err());
    }
}
