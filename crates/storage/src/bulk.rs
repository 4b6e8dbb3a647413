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
use crate::{kv_err, EmbeddedStorage};
use quiver_api::*;
use quiver_common::{QError, QResult, Value};

/// Rows of one space, encoded as key-value pairs, to be ingested together.
#[derive(Default)]
pub struct BulkRun {
    pairs: Vec<(Vec<u8>, Vec<u8>)>,
    pub vertices: u64,
    pub edges: u64,
}

impl BulkRun {
    /// A vertex with its tag rows (`(tag id, encoded row)`).
    pub fn vertex(&mut self, space: &SpaceDesc, vid: &Value, tags: Vec<(i32, Vec<u8>)>) {
        self.pairs.push((keys::vertex_key(space, vid), Vec::new()));
        for (tag, row) in tags {
            self.pairs.push((keys::tag_key(space, vid, tag), row));
        }
        self.vertices += 1;
    }

    /// An edge: its out-key and its in-key, both with the row.
    pub fn edge(&mut self, space: &SpaceDesc, key: &EdgeKeyVal, row: Vec<u8>) {
        self.pairs.push((keys::edge_key(space, &key.dst, -key.edge_type, key.rank, &key.src), row.clone()));
        self.pairs.push((keys::edge_key(space, &key.src, key.edge_type, key.rank, &key.dst), row));
        self.edges += 1;
    }

    /// Key-value pairs so far.
    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// Sorts by key and keeps, of equal keys, the one added last (a later CSV line wins, as with INSERT).
    fn into_sorted(self) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut pairs = self.pairs;
        // Stable, so equal keys stay in insertion order and the last of each group is the latest.
        pairs.sort_by(|a, b| a.0.cmp(&b.0));
        let mut out: Vec<(Vec<u8>, Vec<u8>)> = Vec::with_capacity(pairs.len());
        for p in pairs {
            match out.last_mut() {
                Some(last) if last.0 == p.0 => *last = p,
                _ => out.push(p),
            }
        }
        out
    }
}

impl EmbeddedStorage {
    /// Starts a bulk load of `space`: see the module comment.
    pub fn bulk_begin(&self, space: &SpaceDesc) -> QResult<()> {
        let mut guard = self.lock_writers();
        let mut b = quiver_kv::WriteBatch::new();
        for part in 1..=space.partition_num {
            b.delete(crate::write::counters_key(space.id, part));
        }
        self.kv.write(b).map_err(kv_err)?;
        guard.counters.remove(&space.id);
        self.topologies.write().expect("lock poisoned").remove(&space.id);
        if let Some(catalog) = self.catalog() {
            for i in catalog.indexes(space) {
                catalog.set_index_state(space, i.id, IndexState::Building)?;
            }
        }
        Ok(())
    }

    /// Writes one run of rows, atomically. Returns how many key-value pairs it wrote.
    pub fn bulk_ingest(&self, _space: &SpaceDesc, run: BulkRun) -> QResult<usize> {
        let pairs = run.into_sorted();
        let _guard = self.lock_writers();
        self.kv.ingest_sorted(&pairs).map_err(kv_err)?;
        Ok(pairs.len())
    }

    /// Ends a bulk load: recounts every partition (durably), rebuilds the space's indexes and marks them ready, and
    /// drops the topology so its next use reads the loaded edges.
    pub fn bulk_finish(&self, space: &SpaceDesc) -> QResult<()> {
        {
            let mut guard = self.lock_writers();
            let mut counters = Vec::with_capacity(space.partition_num as usize);
            let mut b = quiver_kv::WriteBatch::new();
            for part in 1..=space.partition_num {
                let c = self.count_part(space, part)?;
                crate::write::put_counters(&mut b, space.id, part, &c);
                counters.push(c);
            }
            self.kv.write(b).map_err(kv_err)?;
            guard.counters.insert(space.id, counters);
            self.topologies.write().expect("lock poisoned").remove(&space.id);
        }
        if let Some(catalog) = self.catalog() {
            for i in catalog.indexes(space) {
                self.build_index(space, &i, None, &|_, _| {})?;
                catalog.set_index_state(space, i.id, IndexState::Ready)?;
            }
        }
        self.kv.flush().map_err(|e| QError::storage(format!("flush after a bulk load: {e}")))
    }
}
