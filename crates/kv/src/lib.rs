//! The key-value engine boundary. Storage talks to a [`KvEngine`]; engines implement it.
//!
//! **Architecture invariant:** this crate depends on no storage engine. `kv-rocks` is the only crate that links
//! RocksDB; [`MemEngine`] here proves the trait stands alone, and [`conformance`] is run against every engine.

pub mod conformance;
mod memory;

pub use memory::MemEngine;

#[derive(Debug, thiserror::Error, Clone, PartialEq)]
pub enum KvError {
    #[error("io error: {0}")]
    Io(String),
    #[error("corruption: {0}")]
    Corruption(String),
}

pub type KvResult<T> = Result<T, KvError>;

#[derive(Debug, Clone, PartialEq)]
pub enum WriteOp {
    Put(Vec<u8>, Vec<u8>),
    Delete(Vec<u8>),
    /// Deletes every key in `[start, end)`.
    DeleteRange(Vec<u8>, Vec<u8>),
}

/// An atomic group of writes: after a crash either all of them are visible or none.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WriteBatch {
    pub ops: Vec<WriteOp>,
}

impl WriteBatch {
    pub fn new() -> WriteBatch {
        WriteBatch::default()
    }

    pub fn put(&mut self, key: Vec<u8>, value: Vec<u8>) {
        self.ops.push(WriteOp::Put(key, value));
    }

    pub fn delete(&mut self, key: Vec<u8>) {
        self.ops.push(WriteOp::Delete(key));
    }

    pub fn delete_range(&mut self, start: Vec<u8>, end: Vec<u8>) {
        // An empty or inverted range deletes nothing (RocksDB would refuse the whole batch for it).
        if start < end {
            self.ops.push(WriteOp::DeleteRange(start, end));
        }
    }

    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    pub fn len(&self) -> usize {
        self.ops.len()
    }
}

/// A visitor over scanned pairs; returns `false` to stop the scan.
pub type ScanFn<'a> = dyn FnMut(&[u8], &[u8]) -> bool + 'a;
/// A visitor of several prefixes' pairs: gets the prefix's position, the key and the value; returns false to stop.
pub type PrefixesFn<'a> = dyn FnMut(usize, &[u8], &[u8]) -> bool + 'a;

/// Key-value pairs in strictly ascending key order, for [`KvEngine::ingest_sorted`].
pub type SortedPairs<'a> = dyn Iterator<Item = (&'a [u8], &'a [u8])> + 'a;

/// Decides, during compaction, whether a pair is dropped (`true`). Called from the engine's compaction threads.
pub type CompactionFilter = std::sync::Arc<dyn Fn(&[u8], &[u8]) -> bool + Send + Sync>;

pub trait KvEngine: Send + Sync + 'static {
    fn get(&self, key: &[u8]) -> KvResult<Option<Vec<u8>>>;

    fn multi_get(&self, keys: &[Vec<u8>]) -> KvResult<Vec<Option<Vec<u8>>>> {
        keys.iter().map(|k| self.get(k)).collect()
    }

    /// Applies `batch` atomically and makes it visible to readers. It is in the engine's log, in order, but not yet
    /// durable: a crash may lose it (entirely; never partly) until a later [`KvEngine::sync`] returns.
    fn write_buffered(&self, batch: WriteBatch) -> KvResult<()>;

    /// Makes every batch written by [`KvEngine::write_buffered`] before this call durable. One call covers any
    /// number of batches: this is what group commit is built on.
    fn sync(&self) -> KvResult<()>;

    /// Applies `batch` atomically and durably: when it returns `Ok`, the batch survives a crash of the process
    /// (and, for a durable engine, of the machine).
    fn write(&self, batch: WriteBatch) -> KvResult<()> {
        self.write_buffered(batch)?;
        self.sync()
    }

    /// Writes `pairs` (strictly ascending keys) durably, each replacing its key's value: the bulk-load path.
    /// Engines may write them straight into their on-disk format (RocksDB ingests a sorted table file), skipping
    /// the log and the memtable. Atomic as a whole: after a crash either all pairs are there or none.
    fn ingest_sorted(&self, pairs: &mut SortedPairs<'_>) -> KvResult<()> {
        let mut b = WriteBatch::new();
        for (k, v) in pairs {
            debug_assert!(
                b.ops.last().is_none_or(|op| matches!(op, WriteOp::Put(last, _) if last.as_slice() < k)),
                "ingest_sorted needs strictly ascending keys"
            );
            b.put(k.to_vec(), v.to_vec());
        }
        self.write(b)
    }

    /// Visits keys in `[start, end)` in ascending byte order; a range whose start is not below its end is empty.
    fn scan_range(&self, start: &[u8], end: &[u8], f: &mut ScanFn<'_>) -> KvResult<()>;

    /// Visits every key that starts with `prefix`, in ascending byte order.
    fn scan_prefix(&self, prefix: &[u8], f: &mut ScanFn<'_>) -> KvResult<()> {
        match prefix_end(prefix) {
            Some(end) => self.scan_range(prefix, &end, f),
            None => self.scan_range(prefix, &[0xff; 64], f),
        }
    }

    /// Visits the keys under each of `prefixes` in turn, each prefix's in ascending byte order, telling `f` the
    /// prefix's position; `f` returning false ends the whole visit. Engines may serve every prefix with one cursor
    /// (a neighbour read of many vertices opens one RocksDB iterator, not one per vertex); ascending prefixes read
    /// best.
    fn scan_prefixes(&self, prefixes: &[Vec<u8>], f: &mut PrefixesFn<'_>) -> KvResult<()> {
        for (i, p) in prefixes.iter().enumerate() {
            let mut go_on = true;
            self.scan_prefix(p, &mut |k, v| {
                go_on = f(i, k, v);
                go_on
            })?;
            if !go_on {
                break;
            }
        }
        Ok(())
    }

    /// The engine's own figures for monitoring, as `(Prometheus name, help, value)`; none by default.
    fn properties(&self) -> Vec<(String, String, f64)> {
        Vec::new()
    }

    /// Flushes in-memory state to disk (a no-op where there is none).
    fn flush(&self) -> KvResult<()> {
        Ok(())
    }

    /// Whether the engine keeps its pairs in files (and so can make checkpoints of them).
    fn keeps_files(&self) -> bool {
        false
    }

    /// Writes a consistent copy of every pair, as of now, under `name` beside the engine's own files: a copy the
    /// engine can be opened on (a backup). Engines without files refuse.
    fn create_checkpoint(&self, name: &str) -> KvResult<()> {
        Err(KvError::Io(format!("checkpoint `{name}': this engine keeps no files")))
    }

    /// The names of the checkpoints there are, in ascending order.
    fn checkpoints(&self) -> KvResult<Vec<String>> {
        Ok(Vec::new())
    }

    /// Removes a checkpoint; `false` if there was none of that name.
    fn drop_checkpoint(&self, name: &str) -> KvResult<bool> {
        let _ = name;
        Ok(false)
    }

    /// Compacts the keys in `[start, end)`: rewrites them without deleted versions, and without the pairs the
    /// compaction filter drops. Engines may compact more than the range (RocksDB rewrites whole files), so a
    /// filter must decide by the key itself, never by the range it was armed for.
    fn compact_range(&self, start: &[u8], end: &[u8]) -> KvResult<()>;

    /// Installs (or with `None` removes) the filter every compaction from now on consults, the engine's own
    /// background compactions included.
    fn set_compaction_filter(&self, filter: Option<CompactionFilter>);

    /// A short name for logs and errors.
    fn name(&self) -> &'static str;
}

/// The smallest key greater than every key starting with `prefix`, or `None` if the prefix is all `0xff`.
pub fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}
