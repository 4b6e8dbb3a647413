//! The RocksDB engine: the only crate that links RocksDB (Debian's `librocksdb`, through `rocksdb` 0.20.1).
//!
//! Durability: `write_buffered` appends the batch to RocksDB's write-ahead log and memtable without an fsync;
//! `sync` fsyncs the log (`FlushWAL(sync = true)`), which makes every batch appended before it durable. Storage's
//! commit queue calls `sync` once for a whole group of writers.

use quiver_kv::{CompactionFilter, KvEngine, KvError, KvResult, ScanFn, SortedPairs, WriteBatch, WriteOp};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

/// RocksDB's block cache: the property cache of every read path (vertex and edge rows, index and filter blocks).
pub const BLOCK_CACHE_BYTES: usize = 256 << 20;

/// RocksDB's row cache: point reads (`Get`, `MultiGet`) of keys read before skip the index, filter and data blocks.
/// A 1-hop MATCH reading 29 far ends' `person` rows (before their tag is hot in the vertex property cache) went from
/// 0.147 to 0.061 ms in process (`examples/prof`, social sf10). Keys are cached with their table file, so
/// compactions and ingestions never serve a stale row.
pub const ROW_CACHE_BYTES: usize = 64 << 20;

/// Keys per table file a bulk ingestion writes.
const INGEST_FILE_PAIRS: usize = 500_000;

pub struct RocksEngine {
    db: rocksdb::DB,
    /// The options the database was opened with; ingested table files are written with them.
    opts: rocksdb::Options,
    dir: PathBuf,
    ingested: AtomicU64,
    /// The filter RocksDB's compactions consult, swappable after open (RocksDB takes its filter at open).
    filter: Arc<RwLock<Option<CompactionFilter>>>,
}

fn err(e: rocksdb::Error) -> KvError {
    KvError::Io(e.into_string())
}

impl RocksEngine {
    pub fn open(path: &Path) -> KvResult<RocksEngine> {
        RocksEngine::open_with(path, false)
    }

    /// Opens with RocksDB's statistics on or off: with them, [`KvEngine::properties`] adds RocksDB's tickers
    /// (block cache hits and misses, compaction bytes). Off by default: Debian's RocksDB 7.8 C API cannot lower the
    /// statistics level below `kExceptDetailedTimers`, which times operations.
    pub fn open_with(path: &Path, statistics: bool) -> KvResult<RocksEngine> {
        let mut opts = rocksdb::Options::default();
        if statistics {
            opts.enable_statistics();
        }
        opts.create_if_missing(true);
        opts.set_max_background_jobs(2);
        opts.set_bytes_per_sync(1 << 20);
        // Rows are read by key (FETCH, `$^`/`$$` properties) and by prefix (edges of a vertex): bloom filters skip
        // files without the key; index and filter blocks live in the same bounded cache as the data.
        let cache = rocksdb::Cache::new_lru_cache(BLOCK_CACHE_BYTES).map_err(err)?;
        let mut table = rocksdb::BlockBasedOptions::default();
        table.set_block_cache(&cache);
        table.set_bloom_filter(10.0, false);
        table.set_cache_index_and_filter_blocks(true);
        // Partitioned index and filters: a table's filter is cached in blocks of about 4 KiB, never as one block.
        // A whole-file filter of a large table (a 72 MB compaction output has a 4.8 MB one) does not fit one of the
        // cache's 64 shards, so it was read from disk on every point read.
        table.set_index_type(rocksdb::BlockBasedIndexType::TwoLevelIndexSearch);
        table.set_partition_filters(true);
        table.set_metadata_block_size(4096);
        table.set_pin_top_level_index_and_filter(true);
        opts.set_block_based_table_factory(&table);
        let rows = rocksdb::Cache::new_lru_cache(ROW_CACHE_BYTES).map_err(err)?;
        opts.set_row_cache(&rows);
        let filter: Arc<RwLock<Option<CompactionFilter>>> = Arc::default();
        let slot = filter.clone();
        opts.set_compaction_filter("quiver", move |_level: u32, key: &[u8], value: &[u8]| {
            let f = slot.read().expect("lock poisoned").clone();
            match f {
                Some(f) if f(key, value) => rocksdb::CompactionDecision::Remove,
                _ => rocksdb::CompactionDecision::Keep,
            }
        });
        // RocksDB writes an informational `LOG` per open and keeps the old ones as `LOG.old.*`: keep ten.
        opts.set_keep_log_file_num(10);
        let db = rocksdb::DB::open(&opts, path).map_err(err)?;
        remove_empty_old_wals(path);
        Ok(RocksEngine { db, opts, dir: path.to_path_buf(), filter, ingested: AtomicU64::new(0) })
    }
}

/// Deletes the empty write-ahead logs earlier opens left behind. Every open starts a new log, and RocksDB before 8.3
/// keeps an older one until a memtable flush, which a process that writes nothing never does: each open of an idle
/// database left one more empty `NNNNNN.log` (RocksDB's issue 11313, fixed by its pull request 11409). RocksDB's
/// maintainers call deleting them safe with `track_and_verify_wals_in_manifest` off (the default, kept here). Runs
/// right after the open, holding the database's lock, and spares the newest log (the one this open writes to);
/// an empty log holds no record, so nothing it would recover is lost. Failures are only logged.
fn remove_empty_old_wals(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut logs: Vec<(u64, PathBuf, u64)> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let number: u64 = name.strip_suffix(".log")?.parse().ok()?;
            Some((number, e.path(), e.metadata().ok()?.len()))
        })
        .collect();
    logs.sort_unstable_by_key(|(number, _, _)| *number);
    logs.pop();
    for (_, path, len) in logs {
        if len == 0 {
            if let Err(e) = std::fs::remove_file(&path) {
                log::warn!("cannot remove the empty write-ahead log {}: {e}", path.display());
            }
        }
    }
}

impl RocksEngine {
    /// Where checkpoints go: `snapshots/` beside the engine's directory (a data directory's `kv/`).
    fn checkpoint_root(&self) -> PathBuf {
        self.dir.parent().unwrap_or(&self.dir).join("snapshots")
    }

    /// The directory of checkpoint `name`, which must be a plain file name.
    fn checkpoint_dir(&self, name: &str) -> KvResult<PathBuf> {
        let plain = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !plain {
            return Err(KvError::Io(format!("checkpoint name `{name}' is not a plain name")));
        }
        Ok(self.checkpoint_root().join(name))
    }
}

impl KvEngine for RocksEngine {
    fn get(&self, key: &[u8]) -> KvResult<Option<Vec<u8>>> {
        self.db.get(key).map_err(err)
    }

    fn multi_get(&self, keys: &[Vec<u8>]) -> KvResult<Vec<Option<Vec<u8>>>> {
        self.db.multi_get(keys).into_iter().map(|r| r.map_err(err)).collect()
    }

    fn write_buffered(&self, batch: WriteBatch) -> KvResult<()> {
        let mut wb = rocksdb::WriteBatch::default();
        for op in batch.ops {
            match op {
                WriteOp::Put(k, v) => wb.put(k, v),
                WriteOp::Delete(k) => wb.delete(k),
                WriteOp::DeleteRange(s, e) => wb.delete_range(s, e),
            }
        }
        let mut wo = rocksdb::WriteOptions::default();
        wo.set_sync(false);
        self.db.write_opt(wb, &wo).map_err(err)
    }

    fn sync(&self) -> KvResult<()> {
        self.db.flush_wal(true).map_err(err)
    }

    /// Writes the pairs into one sorted table file and ingests it: no log, no memtable. RocksDB places the file
    /// at the lowest level it fits (L0 when it overlaps newer data) with a sequence number above every existing
    /// write, so it shadows older values; the manifest update makes it durable.
    fn ingest_sorted(&self, pairs: &mut SortedPairs<'_>) -> KvResult<()> {
        let mut pairs = pairs.peekable();
        if pairs.peek().is_none() {
            return Ok(());
        }
        // Files of at most INGEST_FILE_PAIRS keys (bounded temporary files). One sorted run's files do not
        // overlap, so they are ingested together, atomically.
        let mut paths = Vec::new();
        let written = (|| {
            while pairs.peek().is_some() {
                let n = self.ingested.fetch_add(1, Ordering::Relaxed);
                let path = self.dir.join(format!("ingest-{}-{n}.sst", std::process::id()));
                paths.push(path.clone());
                let mut w = rocksdb::SstFileWriter::create(&self.opts);
                w.open(&path)?;
                for (k, v) in pairs.by_ref().take(INGEST_FILE_PAIRS) {
                    w.put(k, v)?;
                }
                w.finish()?;
            }
            let mut io = rocksdb::IngestExternalFileOptions::default();
            io.set_move_files(true);
            self.db.ingest_external_file_opts(&io, paths.iter().collect())
        })();
        if written.is_err() {
            for p in &paths {
                let _ = std::fs::remove_file(p);
            }
        }
        written.map_err(err)
    }

    fn scan_range(&self, start: &[u8], end: &[u8], f: &mut ScanFn<'_>) -> KvResult<()> {
        let mut ro = rocksdb::ReadOptions::default();
        ro.set_iterate_upper_bound(end.to_vec());
        let mut it = self.db.raw_iterator_opt(ro);
        it.seek(start);
        while it.valid() {
            let (Some(k), Some(v)) = (it.key(), it.value()) else { break };
            if k >= end || !f(k, v) {
                break;
            }
            it.next();
        }
        it.status().map_err(err)
    }

    fn scan_prefixes(&self, prefixes: &[Vec<u8>], f: &mut quiver_kv::PrefixesFn<'_>) -> KvResult<()> {
        // One iterator, sought to each prefix: creating one (a merging iterator over the memtable and every table
        // file) was 2.9 % of the profile of a 2-hop MATCH that reads 29 vertices' edges with their properties.
        let mut it = self.db.raw_iterator();
        for (i, prefix) in prefixes.iter().enumerate() {
            it.seek(prefix);
            while it.valid() {
                let (Some(k), Some(v)) = (it.key(), it.value()) else { break };
                if !k.starts_with(prefix) {
                    break;
                }
                if !f(i, k, v) {
                    return it.status().map_err(err);
                }
                it.next();
            }
            it.status().map_err(err)?;
        }
        Ok(())
    }

    fn flush(&self) -> KvResult<()> {
        self.db.flush().map_err(err)
    }

    fn keeps_files(&self) -> bool {
        true
    }

    fn create_checkpoint(&self, name: &str) -> KvResult<()> {
        let dir = self.checkpoint_dir(name)?;
        if dir.exists() {
            return Err(KvError::Io(format!("checkpoint `{name}' exists")));
        }
        std::fs::create_dir_all(dir.parent().expect("a checkpoint has a parent"))
            .map_err(|e| KvError::Io(e.to_string()))?;
        // RocksDB's checkpoint: the table files hard-linked, the rest copied, the memtable flushed first.
        rocksdb::checkpoint::Checkpoint::new(&self.db).and_then(|c| c.create_checkpoint(&dir)).map_err(err)
    }

    fn checkpoints(&self) -> KvResult<Vec<String>> {
        let root = self.checkpoint_root();
        let entries = match std::fs::read_dir(&root) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(KvError::Io(e.to_string())),
        };
        let mut names = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| KvError::Io(e.to_string()))?;
            if entry.path().join("CURRENT").exists() {
                names.push(entry.file_name().to_string_lossy().into_owned());
            }
        }
        names.sort();
        Ok(names)
    }

    fn drop_checkpoint(&self, name: &str) -> KvResult<bool> {
        let dir = self.checkpoint_dir(name)?;
        if !dir.join("CURRENT").exists() {
            return Ok(false);
        }
        std::fs::remove_dir_all(&dir).map_err(|e| KvError::Io(e.to_string()))?;
        Ok(true)
    }

    fn compact_range(&self, start: &[u8], end: &[u8]) -> KvResult<()> {
        // The filter sees only what is in SST files: flush the memtable first.
        self.db.flush().map_err(err)?;
        self.db.compact_range(Some(start), Some(end));
        Ok(())
    }

    fn set_compaction_filter(&self, filter: Option<CompactionFilter>) {
        *self.filter.write().expect("lock poisoned") = filter;
    }

    fn properties(&self) -> Vec<(String, String, f64)> {
        // RocksDB's integer properties; statistics (block cache hits and misses) are not enabled: they cost every
        // read.
        const PROPERTIES: [(&str, &str, &str); 9] = [
            ("rocksdb.block-cache-usage", "rocksdb_block_cache_usage_bytes", "bytes in the block cache"),
            ("rocksdb.block-cache-capacity", "rocksdb_block_cache_capacity_bytes", "the block cache's capacity"),
            ("rocksdb.cur-size-all-mem-tables", "rocksdb_memtable_bytes", "bytes in memtables"),
            ("rocksdb.estimate-num-keys", "rocksdb_estimated_keys", "keys, estimated"),
            ("rocksdb.total-sst-files-size", "rocksdb_sst_files_bytes", "bytes in table files"),
            ("rocksdb.num-running-compactions", "rocksdb_running_compactions", "compactions running"),
            ("rocksdb.num-running-flushes", "rocksdb_running_flushes", "memtable flushes running"),
            (
                "rocksdb.estimate-pending-compaction-bytes",
                "rocksdb_pending_compaction_bytes",
                "bytes compactions have yet to rewrite, estimated",
            ),
            ("rocksdb.background-errors", "rocksdb_background_errors", "background errors since open"),
        ];
        let mut figures: Vec<(String, String, f64)> = PROPERTIES
            .iter()
            .filter_map(|(property, name, help)| {
                let v = self.db.property_int_value(*property).ok()??;
                Some((name.to_string(), help.to_string(), v as f64))
            })
            .collect();
        // With statistics on: some of RocksDB's tickers, totals since open.
        const TICKERS: [(&str, &str, &str); 6] = [
            ("rocksdb.block.cache.hit", "rocksdb_block_cache_hits_total", "block cache hits"),
            ("rocksdb.block.cache.miss", "rocksdb_block_cache_misses_total", "block cache misses"),
            ("rocksdb.bytes.read", "rocksdb_read_bytes_total", "bytes read by point reads"),
            ("rocksdb.bytes.written", "rocksdb_written_bytes_total", "bytes written"),
            ("rocksdb.compact.read.bytes", "rocksdb_compaction_read_bytes_total", "bytes compactions read"),
            ("rocksdb.compact.write.bytes", "rocksdb_compaction_written_bytes_total", "bytes compactions wrote"),
        ];
        if let Some(stats) = self.opts.get_statistics() {
            for (ticker, name, help) in TICKERS {
                // Lines read `rocksdb.block.cache.hit COUNT : 1234`.
                let v = stats.lines().find_map(|l| {
                    let rest = l.strip_prefix(ticker)?.strip_prefix(" COUNT : ")?;
                    rest.trim().parse::<u64>().ok()
                });
                if let Some(v) = v {
                    figures.push((name.to_string(), help.to_string(), v as f64));
                }
            }
        }
        figures
    }

    fn name(&self) -> &'static str {
        "rocksdb"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conformance() {
        let dirs = std::sync::Mutex::new(Vec::new());
        quiver_kv::conformance::run_all(&|| {
            let dir = tempfile::tempdir().unwrap();
            let e = RocksEngine::open(dir.path()).unwrap();
            dirs.lock().unwrap().push(dir);
            Box::new(e)
        });
    }

    #[test]
    fn a_checkpoint_is_a_database_of_its_moment() {
        let data = tempfile::tempdir().unwrap();
        let e = RocksEngine::open(&data.path().join("kv")).unwrap();
        let mut b = WriteBatch::new();
        b.put(b"before".to_vec(), b"1".to_vec());
        e.write_buffered(b).unwrap();
        e.create_checkpoint("SNAPSHOT_A").unwrap();
        let mut b = WriteBatch::new();
        b.put(b"after".to_vec(), b"2".to_vec());
        e.write(b).unwrap();
        assert!(e.create_checkpoint("SNAPSHOT_A").is_err(), "a name is used once");
        assert!(e.create_checkpoint("../escape").is_err(), "a name is a plain name");
        assert_eq!(e.checkpoints().unwrap(), vec!["SNAPSHOT_A".to_string()]);
        {
            let copy = RocksEngine::open(&data.path().join("snapshots").join("SNAPSHOT_A")).unwrap();
            assert_eq!(copy.get(b"before").unwrap(), Some(b"1".to_vec()));
            assert_eq!(copy.get(b"after").unwrap(), None);
        }
        assert!(e.drop_checkpoint("SNAPSHOT_A").unwrap());
        assert!(!e.drop_checkpoint("SNAPSHOT_A").unwrap());
        assert!(e.checkpoints().unwrap().is_empty());
        assert_eq!(e.get(b"after").unwrap(), Some(b"2".to_vec()));
    }

    #[test]
    fn survives_reopen() {
        let dir = tempfile::tempdir().unwrap();
        {
            let e = RocksEngine::open(dir.path()).unwrap();
            let mut b = WriteBatch::new();
            b.put(b"durable".to_vec(), b"yes".to_vec());
            e.write(b).unwrap();
        }
        let e = RocksEngine::open(dir.path()).unwrap();
        assert_eq!(e.get(b"durable").unwrap(), Some(b"yes".to_vec()));
    }

    /// Each open of an idle database used to leave one more empty write-ahead log behind (RocksDB before 8.3).
    #[test]
    fn reopening_leaves_no_empty_logs_behind() {
        let dir = tempfile::tempdir().unwrap();
        let logs = || {
            let mut names: Vec<String> = std::fs::read_dir(dir.path())
                .unwrap()
                .flatten()
                .map(|e| e.file_name().into_string().unwrap())
                .filter(|n| n.ends_with(".log"))
                .collect();
            names.sort();
            names
        };
        for round in 0..6u8 {
            let e = RocksEngine::open(dir.path()).unwrap();
            for written in (0..round).step_by(2) {
                assert_eq!(e.get(&[written]).unwrap(), Some(vec![written]), "round {round}");
            }
            // Every other round writes (unflushed, recovered by the next open), the others only read.
            if round % 2 == 0 {
                let mut b = WriteBatch::new();
                b.put(vec![round], vec![round]);
                e.write(b).unwrap();
            }
            assert!(logs().len() <= 2, "round {round}: {:?}", logs());
        }
        let e = RocksEngine::open(dir.path()).unwrap();
        assert_eq!(e.get(&[4]).unwrap(), Some(vec![4]));
        assert_eq!(logs().len(), 1, "{:?}", logs());
    }

    #[test]
    fn one_sync_covers_every_buffered_batch() {
        let dir = tempfile::tempdir().unwrap();
        {
            let e = RocksEngine::open(dir.path()).unwrap();
            for i in 0..10u8 {
                let mut b = WriteBatch::new();
                b.put(vec![b'g', i], vec![i]);
                e.write_buffered(b).unwrap();
            }
            e.sync().unwrap();
        }
        let e = RocksEngine::open(dir.path()).unwrap();
        for i in 0..10u8 {
            assert_eq!(e.get(&[b'g', i]).unwrap(), Some(vec![i]));
        }
    }
}
