//! The bulk-load path (`quiver import`): rows reach the engine as sorted runs ([`KvEngine::ingest_sorted`],
//! RocksDB table-file ingestion), without the per-row reads [`crate::write::Tx`] makes to keep the counters and
//! index entries exact. Instead a load is bracketed:
//!
//! - [`EmbeddedStorage::bulk_begin`] durably removes the space's counter records (no record means "count the
//!   partition" to [`EmbeddedStorage::load_counters`]), marks the space's indexes as building (never used) and
//!   drops the in-memory topology (rebuilt from the store on its next use);
//! - [`EmbeddedStorage::bulk_ingest`] writes one run: sorted, the last value of a key kept, atomic;
//! - [`EmbeddedStorage::bulk_finish`] recounts every partition, rebuilds the space's indexes from the rows and
//!   marks them ready.
//!
//! A crash between the two leaves whole rows (each run is atomic), counters that are recounted on first use, and
//! indexes that are not used until rebuilt, which re-running the load does. Overwriting a row with the same key is
//! what a re-run does, so a load can be repeated safely.

use crate::keys;
use crate::{kv_err, EmbeddedStorage, PartCounters};
use quiver_api::*;
use quiver_common::{QError, QResult, Value};

/// Rows of one space, encoded as key-value pairs, to be ingested together. Pairs live in one byte arena (a
/// run of millions of pairs makes no allocation per pair), each indexed by the first 32 bytes of its key as two
/// big-endian integers, so sorting compares integers and only reads the arena when those are equal.
#[derive(Default)]
pub struct BulkRun {
    arena: Vec<u8>,
    entries: Vec<Entry>,
    pub vertices: u64,
    pub edges: u64,
}

struct Entry {
    head: (u128, u128),
    /// Where the key starts in the arena; the value follows it. Increases with insertion order.
    off: usize,
    key_len: u32,
    value_len: u32,
}

fn head_of(key: &[u8]) -> (u128, u128) {
    let mut b = [0u8; 32];
    let n = key.len().min(32);
    b[..n].copy_from_slice(&key[..n]);
    (
        u128::from_be_bytes(b[..16].try_into().expect("16 bytes")),
        u128::from_be_bytes(b[16..].try_into().expect("16 bytes")),
    )
}

impl BulkRun {
    fn push(&mut self, key: &[u8], value: &[u8]) {
        let off = self.arena.len();
        self.arena.extend_from_slice(key);
        self.arena.extend_from_slice(value);
        self.entries.push(Entry { head: head_of(key), off, key_len: key.len() as u32, value_len: value.len() as u32 });
    }

    /// A vertex with its tag rows (`(tag id, encoded row)`).
    pub fn vertex(&mut self, space: &SpaceDesc, vid: &Value, tags: Vec<(i32, Vec<u8>)>) {
        self.push(&keys::vertex_key(space, vid), &[]);
        for (tag, row) in tags {
            self.push(&keys::tag_key(space, vid, tag), &row);
        }
        self.vertices += 1;
    }

    /// An edge: its out-key and its in-key, both with the row.
    pub fn edge(&mut self, space: &SpaceDesc, key: &EdgeKeyVal, row: Vec<u8>) {
        self.push(&keys::edge_key(space, &key.dst, -key.edge_type, key.rank, &key.src), &row);
        self.push(&keys::edge_key(space, &key.src, key.edge_type, key.rank, &key.dst), &row);
        self.edges += 1;
    }

    /// Key-value pairs so far.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn key(&self, e: &Entry) -> &[u8] {
        &self.arena[e.off..e.off + e.key_len as usize]
    }

    fn value(&self, e: &Entry) -> &[u8] {
        let start = e.off + e.key_len as usize;
        &self.arena[start..start + e.value_len as usize]
    }

    /// Sorts by key, equal keys in insertion order, and returns the entries that survive: of equal keys the one
    /// added last (a later CSV line wins, as with INSERT).
    fn sorted(&mut self) -> Vec<usize> {
        let mut entries = std::mem::take(&mut self.entries);
        entries.sort_unstable_by(|a, b| {
            a.head.cmp(&b.head).then_with(|| self.key(a).cmp(self.key(b))).then(a.off.cmp(&b.off))
        });
        let mut keep = Vec::with_capacity(entries.len());
        for i in 0..entries.len() {
            if i + 1 == entries.len()
                || entries[i].head != entries[i + 1].head
                || self.key(&entries[i]) != self.key(&entries[i + 1])
            {
                keep.push(i);
            }
        }
        self.entries = entries;
        keep
    }
}

impl EmbeddedStorage {
    /// Starts a bulk load of `space`: see the module comment.
    pub fn bulk_begin(&self, space: &SpaceDesc) -> QResult<()> {
        if self.is_replicated() {
            return Err(QError::not_supported("a bulk load into a cluster"));
        }
        let mut guard = self.lock_writers();
        let mut b = quiver_kv::WriteBatch::new();
        for part in 1..=space.partition_num {
            b.delete(crate::write::counters_key(space.id, part));
        }
        self.kv.write(b).map_err(kv_err)?;
        guard.counters.remove(&space.id);
        self.forget_mirrors(space.id);
        if let Some(catalog) = self.catalog() {
            for i in catalog.indexes(space) {
                catalog.set_index_state(space, i.id, IndexState::Building)?;
            }
        }
        Ok(())
    }

    /// Writes one run of rows, atomically. Returns how many key-value pairs it wrote.
    pub fn bulk_ingest(&self, _space: &SpaceDesc, mut run: BulkRun) -> QResult<usize> {
        let t = std::time::Instant::now();
        let keep = run.sorted();
        log::debug!("bulk: sorted {} pairs in {:.2} s", keep.len(), t.elapsed().as_secs_f64());
        let _guard = self.lock_writers();
        let mut pairs = keep.iter().map(|&i| (run.key(&run.entries[i]), run.value(&run.entries[i])));
        self.kv.ingest_sorted(&mut pairs).map_err(kv_err)?;
        Ok(keep.len())
    }

    /// Ends a bulk load: recounts every partition (durably), rebuilds the space's indexes and marks them ready, and
    /// drops the topology so its next use reads the loaded edges.
    pub fn bulk_finish(&self, space: &SpaceDesc) -> QResult<()> {
        let t = std::time::Instant::now();
        {
            let mut guard = self.lock_writers();
            // Partitions are counted on every core: this scan is most of a load's tail.
            let parts = space.all_parts();
            let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(parts.len()).max(1);
            let counted: Vec<QResult<Vec<(u32, PartCounters)>>> = std::thread::scope(|s| {
                let handles: Vec<_> = parts
                    .chunks(parts.len().div_ceil(threads))
                    .map(|chunk| {
                        s.spawn(move || {
                            chunk.iter().map(|&p| Ok((p, self.count_part(space, p)?))).collect::<QResult<Vec<_>>>()
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().unwrap_or_else(|_| Err(QError::storage("a counting thread panicked"))))
                    .collect()
            });
            let mut counters = Vec::with_capacity(parts.len());
            let mut b = quiver_kv::WriteBatch::new();
            for (part, c) in counted.into_iter().collect::<QResult<Vec<_>>>()?.into_iter().flatten() {
                crate::write::put_counters(&mut b, space.id, part, &c);
                counters.push(c);
            }
            self.kv.write(b).map_err(kv_err)?;
            guard.counters.insert(space.id, counters);
            self.forget_mirrors(space.id);
        }
        log::debug!("bulk: recounted in {:.2} s", t.elapsed().as_secs_f64());
        if let Some(catalog) = self.catalog() {
            for i in catalog.indexes(space) {
                self.build_index(space, &i, &space.all_parts(), None, &|_, _| {})?;
                catalog.set_index_state(space, i.id, IndexState::Ready)?;
            }
        }
        self.kv.flush().map_err(|e| QError::storage(format!("flush after a bulk load: {e}")))
    }
}
