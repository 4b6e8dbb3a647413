//! A group's Raft log and vote in the host's engine (openraft's `RaftLogStorage`).

use std::fmt::Debug;
use std::ops::{Bound, RangeBounds};
use std::sync::Arc;

use openraft::storage::{LogFlushed, RaftLogStorage};
use openraft::{AnyError, LogState, OptionalSend, RaftLogReader, StorageError, StorageIOError, Vote};
use quiver_kv::{KvEngine, WriteBatch};

use crate::codec::{self, Entry};
use crate::keys::{self, log_key};
use crate::syncer::LogSyncer;
use crate::{GroupId, LogId, NodeId, TypeConfig};

type StorageResult<T> = Result<T, StorageError<NodeId>>;

fn io(e: impl std::error::Error + 'static) -> AnyError {
    AnyError::new(&e)
}

fn read_err(e: impl std::error::Error + 'static) -> StorageError<NodeId> {
    StorageError::IO { source: StorageIOError::read_logs(io(e)) }
}

fn write_err(e: impl std::error::Error + 'static) -> StorageError<NodeId> {
    StorageError::IO { source: StorageIOError::write_logs(io(e)) }
}

/// A synced write, off the runtime's worker threads (it waits for the disk).
pub(crate) async fn write_synced(engine: &Arc<dyn KvEngine>, batch: WriteBatch) -> quiver_kv::KvResult<()> {
    let engine = engine.clone();
    tokio::task::spawn_blocking(move || engine.write(batch))
        .await
        .unwrap_or_else(|e| Err(quiver_kv::KvError::Io(format!("a synced write did not finish: {e}"))))
}

/// Reads a group's entries; cheap to clone (openraft's replication tasks each hold one).
#[derive(Clone)]
pub struct LogReader {
    engine: Arc<dyn KvEngine>,
    group: GroupId,
}

impl LogReader {
    fn entries(&self, start: u64, end: u64) -> StorageResult<Vec<Entry>> {
        let mut out = Vec::new();
        let mut failure = None;
        let (from, to) = (log_key(self.group, start), log_key(self.group, end));
        self.engine
            .scan_range(&from, &to, &mut |k, v| {
                let decoded = keys::log_index(k)
                    .ok_or_else(|| codec::DecodeError("log key".into()))
                    .and_then(|index| codec::decode_entry(index, v));
                match decoded {
                    Ok(e) => {
                        out.push(e);
                        true
                    }
                    Err(e) => {
                        failure = Some(e);
                        false
                    }
                }
            })
            .map_err(read_err)?;
        match failure {
            Some(e) => Err(read_err(e)),
            None => Ok(out),
        }
    }
}

fn bounds(range: &impl RangeBounds<u64>) -> (u64, u64) {
    let start = match range.start_bound() {
        Bound::Included(&s) => s,
        Bound::Excluded(&s) => s.saturating_add(1),
        Bound::Unbounded => 0,
    };
    let end = match range.end_bound() {
        Bound::Included(&e) => e.saturating_add(1),
        Bound::Excluded(&e) => e,
        Bound::Unbounded => u64::MAX,
    };
    (start, end)
}

impl RaftLogReader<TypeConfig> for LogReader {
    async fn try_get_log_entries<RB: RangeBounds<u64> + Clone + Debug + OptionalSend>(
        &mut self,
        range: RB,
    ) -> StorageResult<Vec<Entry>> {
        let (start, end) = bounds(&range);
        self.entries(start, end)
    }
}

/// A group's log store. openraft calls it from the group's core task only, so the cached last log id needs no lock.
pub struct LogStore {
    reader: LogReader,
    syncer: Arc<LogSyncer>,
    last_purged: Option<LogId>,
    last_log: Option<LogId>,
}

impl LogStore {
    /// Opens a group's log as the engine holds it (empty for a new group).
    pub fn open(engine: Arc<dyn KvEngine>, group: GroupId, syncer: Arc<LogSyncer>) -> StorageResult<LogStore> {
        let read_id = |kind| -> StorageResult<Option<LogId>> {
            match engine.get(&keys::state_key(kind, group)).map_err(read_err)? {
                None => Ok(None),
                Some(v) => codec::decode_opt_log_id_value(&v).map_err(read_err),
            }
        };
        let last_purged = read_id(keys::PURGED)?;
        let reader = LogReader { engine: engine.clone(), group };
        // The last entry: the log holds at most the entries since the last snapshot, so one scan at start-up.
        let mut last_index = None;
        engine
            .scan_range(&log_key(group, 0), &log_key(group, u64::MAX), &mut |k, _| {
                last_index = keys::log_index(k);
                true
            })
            .map_err(read_err)?;
        let last_log = match last_index {
            Some(i) => reader.entries(i, i + 1)?.pop().map(|e| e.log_id),
            None => None,
        };
        Ok(LogStore { reader, syncer, last_purged, last_log: last_log.or(last_purged) })
    }

    fn engine(&self) -> &Arc<dyn KvEngine> {
        &self.reader.engine
    }

    fn group(&self) -> GroupId {
        self.reader.group
    }
}

impl RaftLogReader<TypeConfig> for LogStore {
    async fn try_get_log_entries<RB: RangeBounds<u64> + Clone + Debug + OptionalSend>(
        &mut self,
        range: RB,
    ) -> StorageResult<Vec<Entry>> {
        self.reader.try_get_log_entries(range).await
    }
}

impl RaftLogStorage<TypeConfig> for LogStore {
    type LogReader = LogReader;

    async fn get_log_state(&mut self) -> StorageResult<LogState<TypeConfig>> {
        Ok(LogState { last_purged_log_id: self.last_purged, last_log_id: self.last_log })
    }

    async fn get_log_reader(&mut self) -> LogReader {
        self.reader.clone()
    }

    async fn save_vote(&mut self, vote: &Vote<NodeId>) -> StorageResult<()> {
        let mut b = WriteBatch::new();
        b.put(keys::state_key(keys::VOTE, self.group()), codec::encode_vote(vote));
        self.engine().write(b).map_err(|e| StorageError::IO { source: StorageIOError::write_vote(io(e)) })
    }

    async fn read_vote(&mut self) -> StorageResult<Option<Vote<NodeId>>> {
        let read = |e| StorageError::IO { source: StorageIOError::read_vote(e) };
        match self.engine().get(&keys::state_key(keys::VOTE, self.group())).map_err(|e| read(io(e)))? {
            None => Ok(None),
            Some(v) => codec::decode_vote(&v).map(Some).map_err(|e| read(io(e))),
        }
    }

    async fn save_committed(&mut self, committed: Option<LogId>) -> StorageResult<()> {
        let mut b = WriteBatch::new();
        b.put(keys::state_key(keys::COMMITTED, self.group()), codec::encode_opt_log_id_value(&committed));
        // Not synced: a lost commit mark is only a hint lost (openraft re-learns it from the leader).
        self.engine().write_buffered(b).map_err(write_err)
    }

    async fn read_committed(&mut self) -> StorageResult<Option<LogId>> {
        match self.engine().get(&keys::state_key(keys::COMMITTED, self.group())).map_err(read_err)? {
            None => Ok(None),
            Some(v) => codec::decode_opt_log_id_value(&v).map_err(read_err),
        }
    }

    async fn append<I>(&mut self, entries: I, callback: LogFlushed<TypeConfig>) -> StorageResult<()>
    where
        I: IntoIterator<Item = Entry> + OptionalSend,
        I::IntoIter: OptionalSend,
    {
        let mut b = WriteBatch::new();
        let mut last = None;
        for e in entries {
            b.put(log_key(self.group(), e.log_id.index), codec::encode_entry(&e));
            last = Some(e.log_id);
        }
        self.engine().write_buffered(b).map_err(write_err)?;
        if last.is_some() {
            self.last_log = last;
        }
        self.syncer.after_sync(callback).map_err(write_err)
    }

    async fn truncate(&mut self, log_id: LogId) -> StorageResult<()> {
        let mut b = WriteBatch::new();
        b.delete_range(log_key(self.group(), log_id.index), log_key(self.group(), u64::MAX));
        write_synced(self.engine(), b).await.map_err(write_err)?;
        // The entry before the truncated one is the last; none left means the last purged one is.
        let before = match log_id.index.checked_sub(1) {
            Some(i) => self.reader.entries(i, i + 1)?.pop().map(|e| e.log_id),
            None => None,
        };
        self.last_log = before.or(self.last_purged);
        Ok(())
    }

    async fn purge(&mut self, log_id: LogId) -> StorageResult<()> {
        let mut b = WriteBatch::new();
        b.put(keys::state_key(keys::PURGED, self.group()), codec::encode_opt_log_id_value(&Some(log_id)));
        b.delete_range(log_key(self.group(), 0), log_key(self.group(), log_id.index + 1));
        // Synced: it also makes durable every apply written before it, which the purged entries can no longer redo.
        write_synced(self.engine(), b).await.map_err(write_err)?;
        self.last_purged = Some(log_id);
        if self.last_log.is_none_or(|l| l.index < log_id.index) {
            self.last_log = Some(log_id);
        }
        Ok(())
    }
}
