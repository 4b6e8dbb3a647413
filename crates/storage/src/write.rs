//! One statement's batch, built under the writers' lock: the rows it writes, the index entries and counters that
//! follow from them, and what it has already written (so a later mutation of the same statement reads it).
//!
//! **Invariant:** every row put or deleted goes through [`Tx`], so a tag row, an edge's two keys, their index
//! entries and the `SHOW STATS` counters of their partition are always in the same atomic batch.

use crate::keys::{self, KIND_STATS};
use crate::topology::SpaceTopology;
use crate::{codec, index, kv_err, Batch, EmbeddedStorage, TopoOp, WriterState};
use quiver_api::*;
use quiver_common::{QError, QResult, Value};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, RwLock};

/// Exact counts of one partition, as a STATS job would find them: tag rows per tag, out-edges per edge type,
/// vertex keys.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PartCounters {
    pub tags: BTreeMap<i32, i64>,
    pub edges: BTreeMap<i32, i64>,
    pub vertices: i64,
}

/// The counters of each partition of a space (index `part - 1`).
pub type SpaceCounters = Vec<PartCounters>;

pub(crate) fn counters_key(space_id: u32, part: u32) -> Vec<u8> {
    keys::prefix(space_id, part, KIND_STATS)
}

/// Puts back the counters of the partitions in `saved` (a batch that failed).
pub(crate) fn restore_counters(w: &mut WriterState, space_id: u32, saved: BTreeMap<u32, PartCounters>) {
    if let Some(c) = w.counters.get_mut(&space_id) {
        for (part, before) in saved {
            c[part as usize - 1] = before;
        }
    }
}

/// Puts a partition's counters record into `b`.
pub(crate) fn put_counters(b: &mut quiver_kv::WriteBatch, space_id: u32, part: u32, c: &PartCounters) {
    b.put(counters_key(space_id, part), serde_json::to_vec(c).expect("counters serialize"));
}

/// Makes the index entries' keys (one, or one per cell of a geo index) from an index and a row's values of its fields.
type EntryFn<'a> = dyn Fn(&IndexDesc, &[Value]) -> QResult<Vec<Vec<u8>>> + 'a;

pub(crate) struct Tx<'s> {
    pub st: &'s EmbeddedStorage,
    pub space: &'s SpaceDesc,
    pub b: Batch,
    written: HashMap<Vec<u8>, Option<Vec<u8>>>,
    indexes: Vec<IndexRef>,
    /// The counters of each partition this batch changed, as they were before it: restored if the batch fails.
    saved: BTreeMap<u32, PartCounters>,
    /// The space's topology where it answers "is this key stored?" exactly: embedded (a replicated host's
    /// topology follows its group's applies, not this batch's lock) and built. It holds every appended batch,
    /// since batches are appended and mirrored under the writers' lock this batch holds.
    topology: Option<Arc<RwLock<SpaceTopology>>>,
}

impl<'s> Tx<'s> {
    /// Starts a batch; `w` is the writers' state, held by the caller for the whole batch.
    pub fn new(st: &'s EmbeddedStorage, space: &'s SpaceDesc, w: &mut WriterState) -> QResult<Tx<'s>> {
        st.load_counters(space, w)?;
        let indexes = st.catalog().map(|c| c.indexes(space)).unwrap_or_default();
        let topology = if st.is_replicated() {
            None
        } else {
            st.topologies.read().expect("lock poisoned").get(&space.id).cloned()
        };
        Ok(Tx { st, space, b: Batch::default(), written: HashMap::new(), indexes, saved: BTreeMap::new(), topology })
    }

    /// Whether `key` is stored as this batch leaves it so far, where only that matters (not the old row): from
    /// the batch, else from the topology (`in_topology`) when it is exact, else from the store.
    fn stored(&self, key: &[u8], in_topology: impl FnOnce(&SpaceTopology) -> bool) -> QResult<bool> {
        if let Some(v) = self.written.get(key) {
            return Ok(v.is_some());
        }
        match &self.topology {
            Some(t) => Ok(in_topology(&t.read().expect("lock poisoned"))),
            None => Ok(self.st.kv.get(key).map_err(kv_err)?.is_some()),
        }
    }

    /// The value of `key` as this batch leaves it so far.
    pub fn current(&self, key: &[u8]) -> QResult<Option<Vec<u8>>> {
        match self.written.get(key) {
            Some(v) => Ok(v.clone()),
            None => self.st.kv.get(key).map_err(kv_err),
        }
    }

    /// Whether the row at `key` exists and has not expired (what IF NOT EXISTS asks).
    pub fn visible(&self, key: &[u8], schema: &SchemaDesc) -> QResult<bool> {
        match self.current(key)? {
            None => Ok(false),
            Some(row) => Ok(!crate::ttl::row_expired(schema, &row, crate::now_secs())?),
        }
    }

    fn put(&mut self, key: Vec<u8>, value: Vec<u8>) {
        self.b.kv.put(key.clone(), value.clone());
        self.written.insert(key, Some(value));
    }

    /// Puts a key no later mutation of this batch reads back (an edge's in-copy, an index entry: only vertex keys,
    /// tag rows and out-copies are asked for), so it is not kept in `written`.
    fn put_unread(&mut self, key: Vec<u8>, value: Vec<u8>) {
        self.b.kv.put(key, value);
    }

    fn delete(&mut self, key: Vec<u8>) {
        self.b.kv.delete(key.clone());
        self.written.insert(key, None);
    }

    fn count(&mut self, w: &mut WriterState, part: u32, f: impl FnOnce(&mut PartCounters)) {
        let c = &mut w.counters.get_mut(&self.space.id).expect("counters loaded by Tx::new")[part as usize - 1];
        self.saved.entry(part).or_insert_with(|| c.clone());
        f(c);
    }

    /// Abandons the batch: the counters it changed go back to what they were, so a statement that fails writes
    /// nothing, its counts included.
    pub fn rollback(self, w: &mut WriterState) {
        restore_counters(w, self.space.id, self.saved);
    }

    pub fn put_vertex(&mut self, w: &mut WriterState, vid: &Value) -> QResult<()> {
        let key = keys::vertex_key(self.space, vid);
        if !self.stored(&key, |t| t.has_vertex(vid))? {
            self.count(w, keys::part_of(self.space, vid), |c| c.vertices += 1);
            self.b.topo.push(TopoOp::Vertex { vid: vid.clone(), exists: true });
        }
        self.put(key, Vec::new());
        Ok(())
    }

    pub fn delete_vertex(&mut self, w: &mut WriterState, vid: &Value) -> QResult<()> {
        let key = keys::vertex_key(self.space, vid);
        if self.current(&key)?.is_some() {
            self.count(w, keys::part_of(self.space, vid), |c| c.vertices -= 1);
            self.b.topo.push(TopoOp::Vertex { vid: vid.clone(), exists: false });
            self.delete(key);
        }
        Ok(())
    }

    fn schema_indexes(&self, kind: SchemaKind, id: i32) -> Vec<IndexRef> {
        self.indexes.iter().filter(|i| i.kind == kind && i.schema_id == id).cloned().collect()
    }

    fn schema_of(&self, kind: SchemaKind, id: i32) -> Option<SchemaRef> {
        self.st.catalog().and_then(|c| c.schema_by_id(self.space, kind, id))
    }

    /// Moves one row's entries in the indexes of tag or edge type `id`: those of `old` go, those of `new` come.
    fn reindex(
        &mut self,
        kind: SchemaKind,
        id: i32,
        old: Option<&[u8]>,
        new: Option<&[u8]>,
        entry: &EntryFn<'_>,
    ) -> QResult<()> {
        let indexes = self.schema_indexes(kind, id);
        if indexes.is_empty() {
            return Ok(());
        }
        // The catalog's latest version reads every row, also one written after the caller's schema was taken.
        let schema = self
            .schema_of(kind, id)
            .ok_or_else(|| QError::storage(format!("{kind:?} {id} has indexes but no schema")))?;
        let old = old.map(|r| codec::decode(&schema, r)).transpose()?;
        let new = new.map(|r| codec::decode(&schema, r)).transpose()?;
        for i in &indexes {
            if let Some(old) = &old {
                for k in entry(i, &index::field_values(i, old))? {
                    self.delete(k);
                }
            }
            if let Some(new) = &new {
                for k in entry(i, &index::field_values(i, new))? {
                    self.put_unread(k, Vec::new());
                }
            }
        }
        Ok(())
    }

    /// Writes a tag row (and the vertex key), replacing any row it had, with the index entries of both.
    pub fn put_tag(&mut self, w: &mut WriterState, vid: &Value, schema: &SchemaRef, row: Vec<u8>) -> QResult<()> {
        self.put_vertex(w, vid)?;
        let key = keys::tag_key(self.space, vid, schema.id);
        let old = self.current(&key)?;
        if old.is_none() {
            self.count(w, keys::part_of(self.space, vid), |c| *c.tags.entry(schema.id).or_default() += 1);
        }
        let space = self.space;
        self.reindex(SchemaKind::Tag, schema.id, old.as_deref(), Some(&row), &|i, v| {
            index::vertex_entries(space, i, vid, v)
        })?;
        // Exact: a cache is built under the writers' lock, which this batch holds.
        if self.st.vcache.is_cached(self.space.id, schema.id) {
            self.b.topo.push(TopoOp::Tag { vid: vid.clone(), tag: schema.id, row: Some(row.clone()) });
        }
        self.put(key, row);
        Ok(())
    }

    /// Deletes the row of tag `tag_id` of `vid` if there is one, with its index entries.
    pub fn delete_tag(&mut self, w: &mut WriterState, vid: &Value, tag_id: i32) -> QResult<()> {
        let key = keys::tag_key(self.space, vid, tag_id);
        let Some(old) = self.current(&key)? else { return Ok(()) };
        self.count(w, keys::part_of(self.space, vid), |c| *c.tags.entry(tag_id).or_default() -= 1);
        let space = self.space;
        self.reindex(SchemaKind::Tag, tag_id, Some(&old), None, &|i, v| index::vertex_entries(space, i, vid, v))?;
        if self.st.vcache.is_cached(self.space.id, tag_id) {
            self.b.topo.push(TopoOp::Tag { vid: vid.clone(), tag: tag_id, row: None });
        }
        self.delete(key);
        Ok(())
    }

    /// Deletes every tag row of `vid`.
    pub fn delete_all_tags(&mut self, w: &mut WriterState, vid: &Value) -> QResult<()> {
        for k in self.st.keys_with_prefix(&keys::tag_prefix(self.space, vid))? {
            self.delete_tag(w, vid, keys::tag_id_of_key(self.space, &k))?;
        }
        Ok(())
    }

    /// Writes an edge (both copies), replacing the row it had, with its index entries.
    pub fn put_edge(&mut self, w: &mut WriterState, key: &EdgeKeyVal, schema: &SchemaRef, row: Vec<u8>) -> QResult<()> {
        let out_key = keys::edge_key(self.space, &key.src, key.edge_type, key.rank, &key.dst);
        let edge = crate::topo_edge(key);
        // The old row is read only to take its index entries out; without indexes, whether the edge is stored is
        // enough (for the counters), and the topology answers that without a read of the store.
        // (A TTL edge type's expired edges leave the store when compacted; the old row is read for those too.)
        let needs_row = !self.schema_indexes(SchemaKind::Edge, schema.id).is_empty() || crate::ttl::has_ttl(schema);
        let exists = if needs_row {
            let old = self.current(&out_key)?;
            let space = self.space;
            self.reindex(SchemaKind::Edge, schema.id, old.as_deref(), Some(&row), &|i, v| {
                index::edge_entries(space, i, &key.src, key.rank, &key.dst, v)
            })?;
            old.is_some()
        } else {
            self.stored(&out_key, |t| t.has_edge(&edge))?
        };
        if !exists {
            self.count(w, keys::part_of(self.space, &key.src), |c| *c.edges.entry(key.edge_type).or_default() += 1);
        }
        self.put_unread(keys::edge_key(self.space, &key.dst, -key.edge_type, key.rank, &key.src), row.clone());
        self.put(out_key, row.clone());
        self.b.topo.push(TopoOp::Add(edge, row));
        Ok(())
    }

    /// Deletes an edge (both copies) if it exists, with its index entries.
    pub fn delete_edge(&mut self, w: &mut WriterState, key: &EdgeKeyVal) -> QResult<()> {
        let out_key = keys::edge_key(self.space, &key.src, key.edge_type, key.rank, &key.dst);
        let Some(old) = self.current(&out_key)? else { return Ok(()) };
        self.count(w, keys::part_of(self.space, &key.src), |c| *c.edges.entry(key.edge_type).or_default() -= 1);
        let space = self.space;
        self.reindex(SchemaKind::Edge, key.edge_type, Some(&old), None, &|i, v| {
            index::edge_entries(space, i, &key.src, key.rank, &key.dst, v)
        })?;
        self.delete(keys::edge_key(self.space, &key.dst, -key.edge_type, key.rank, &key.src));
        self.delete(out_key);
        self.b.topo.push(TopoOp::Remove(crate::topo_edge(key)));
        Ok(())
    }

    /// Deletes every edge stored under `vid`, in both directions.
    pub fn delete_edges_of(&mut self, w: &mut WriterState, vid: &Value) -> QResult<()> {
        for key in self.st.edges_of(self.space, vid)? {
            self.delete_edge(w, &key)?;
        }
        Ok(())
    }

    /// Adds the counters of every partition this batch changed, and returns the batch (with the counters as they
    /// were, for the commit to put back if the append fails).
    pub fn finish(mut self, w: &WriterState) -> Batch {
        let c = w.counters.get(&self.space.id).expect("counters loaded by Tx::new");
        for &part in self.saved.keys() {
            put_counters(&mut self.b.kv, self.space.id, part, &c[part as usize - 1]);
        }
        self.b.counters_before = std::mem::take(&mut self.saved);
        self.b
    }
}

impl EmbeddedStorage {
    /// Loads a space's counters into the writers' state: from their records, or (for data written before counters
    /// existed) by counting. Called under the writers' lock.
    pub(crate) fn load_counters(&self, space: &SpaceDesc, w: &mut WriterState) -> QResult<()> {
        if self.stale_counters.lock().unwrap_or_else(|p| p.into_inner()).remove(&space.id) {
            w.counters.remove(&space.id);
        }
        if w.counters.contains_key(&space.id) {
            return Ok(());
        }
        let mut all = Vec::with_capacity(space.partition_num as usize);
        for part in 1..=space.partition_num {
            let c = match self.kv.get(&counters_key(space.id, part)).map_err(kv_err)? {
                Some(bytes) => serde_json::from_slice(&bytes)
                    .map_err(|e| QError::storage(format!("corrupt counters of part {part}: {e}")))?,
                None => self.count_part(space, part)?,
            };
            all.push(c);
        }
        w.counters.insert(space.id, all);
        Ok(())
    }

    /// Counts one partition's rows by scanning it (what a STATS job does).
    pub(crate) fn count_part(&self, space: &SpaceDesc, part: u32) -> QResult<PartCounters> {
        let mut c = PartCounters::default();
        self.kv
            .scan_prefix(&keys::prefix(space.id, part, keys::KIND_VERTEX), &mut |_, _| {
                c.vertices += 1;
                true
            })
            .map_err(kv_err)?;
        self.kv
            .scan_prefix(&keys::prefix(space.id, part, keys::KIND_TAG), &mut |k, _| {
                *c.tags.entry(keys::tag_id_of_key(space, k)).or_default() += 1;
                true
            })
            .map_err(kv_err)?;
        let mut bad = None;
        self.kv
            .scan_prefix(&keys::prefix(space.id, part, keys::KIND_EDGE), &mut |k, _| match keys::parse_edge_key_raw(
                space, k,
            ) {
                Ok((et, _, _)) => {
                    if et > 0 {
                        *c.edges.entry(et).or_default() += 1;
                    }
                    true
                }
                Err(e) => {
                    bad = Some(e);
                    false
                }
            })
            .map_err(kv_err)?;
        match bad {
            Some(e) => Err(e),
            None => Ok(c),
        }
    }
}
