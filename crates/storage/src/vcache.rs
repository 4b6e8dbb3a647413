//! The vertex property cache: the rows of frequently read tags, decoded once and kept in columns.
//!
//! A GO that yields destination properties reads one tag row per destination vertex; from the key-value store that
//! is a point read (bloom filter, index and data block) and a decode each, about 3 µs. Once a tag has been read
//! [`HOT_READS`] times, its rows are loaded into a [`TagCache`]: a dense slot per vertex that has the tag, and one
//! vector of decoded values per property of the tag's latest schema version (every row decodes to that shape,
//! whatever version it was written with). Reads of cached tags then touch no key-value state. A tag with fewer rows
//! than that is cached once its reads reach its row count (checked each time the count passes a power of two): a
//! scan of its rows then costs no more than the point reads already spent on it.
//!
//! **Invariants.**
//! - A cache is built under the writers' lock (so no write falls between its scan and it going live) and changed
//!   only under that lock, right after the batch it mirrors is appended (as the topology is); it therefore always
//!   equals the tag's rows in the store.
//! - A cache is for one schema version: a read or write that brings a newer version (after `ALTER TAG`) drops it,
//!   and it is built again from the store once the tag is hot again.
//! - Tags with a TTL are never cached (whether a row is visible depends on the clock), nor tags with more than
//!   [`VCACHE_ROWS_MAX`] rows.
//! - `CLEAR SPACE`, `DROP TAG` and bulk loads drop the caches they affect.

use crate::topology::VidDict;
use quiver_api::{PropRow, Props, SchemaRef, SpaceDesc};
use quiver_common::{QResult, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

/// Vertex reads of a tag after which its rows are cached.
pub const HOT_READS: u64 = 4096;

/// The decoded rows of one tag, by column.
pub struct TagCache {
    /// The schema the rows were decoded with (its latest version is the columns' shape).
    pub schema: SchemaRef,
    slots: VidDict,
    /// Whether the slot's vertex has the tag now (a deleted row keeps its slot).
    present: Vec<bool>,
    /// `columns[p][slot]`: property `p` of the latest schema version.
    columns: Vec<Vec<Value>>,
}

impl TagCache {
    pub fn new(space: &SpaceDesc, schema: SchemaRef) -> TagCache {
        let props = schema.latest().props.len();
        TagCache { schema, slots: VidDict::new(space.vid_type), present: Vec::new(), columns: vec![Vec::new(); props] }
    }

    fn version(&self) -> u32 {
        self.schema.latest().version
    }

    /// Sets the row of the vertex whose key bytes are `vid_key` (as in a tag key): used while building.
    pub fn set_key(&mut self, vid_key: &[u8], props: Props) -> QResult<()> {
        let slot = self.slots.intern_key(vid_key)? as usize;
        self.fill(slot, Some(props));
        Ok(())
    }

    /// Sets (`Some`) or removes (`None`) the row of `vid`.
    pub fn set(&mut self, vid: &Value, props: Option<Props>) {
        let slot = match (&props, self.slots.get(vid)) {
            (_, Some(s)) => s as usize,
            (None, None) => return,
            (Some(_), None) => self.slots.intern(vid) as usize,
        };
        self.fill(slot, props);
    }

    fn fill(&mut self, slot: usize, props: Option<Props>) {
        if slot == self.present.len() {
            self.present.push(false);
            for c in &mut self.columns {
                c.push(Value::Empty);
            }
        }
        self.present[slot] = props.is_some();
        let latest = self.schema.latest();
        for (p, col) in latest.props.iter().zip(&mut self.columns) {
            col[slot] = props.as_ref().and_then(|r| r.get(&p.name).cloned()).unwrap_or(Value::Empty);
        }
    }

    /// The properties at `picked` (indices into the cached version's properties, named `names`) of the row of
    /// `vid`, as the store would decode them (`None`: the vertex does not have the tag).
    pub fn get(&self, vid: &Value, picked: &[usize], names: &Arc<[String]>) -> Option<PropRow> {
        let slot = self.slot_with_tag(vid)?;
        Some(PropRow { names: names.clone(), values: picked.iter().map(|&i| self.columns[i][slot].clone()).collect() })
    }

    /// The slot of `vid` if it has the tag now.
    fn slot_with_tag(&self, vid: &Value) -> Option<usize> {
        self.slots.get(vid).map(|s| s as usize).filter(|&s| self.present[s])
    }

    /// For each of `vids`: whether it has the tag, and the properties at `picked` (EMPTY where it does not).
    pub fn gather(&self, vids: &[Value], picked: &[usize]) -> (Vec<bool>, Vec<Vec<Value>>) {
        let mut present = Vec::with_capacity(vids.len());
        let mut columns: Vec<Vec<Value>> = picked.iter().map(|_| Vec::with_capacity(vids.len())).collect();
        for vid in vids {
            let slot = self.slot_with_tag(vid);
            present.push(slot.is_some());
            for (&i, col) in picked.iter().zip(&mut columns) {
                col.push(slot.map_or(Value::Empty, |s| self.columns[i][s].clone()));
            }
        }
        (present, columns)
    }

    pub fn rows(&self) -> usize {
        self.present.iter().filter(|p| **p).count()
    }

    /// Memory held, in bytes (slots, presence, values and their heap parts, estimated).
    pub fn bytes(&self) -> usize {
        let values: usize = self.columns.iter().flatten().map(value_bytes).sum();
        self.slots.bytes() + self.present.capacity() + values
    }
}

pub(crate) fn value_bytes(v: &Value) -> usize {
    std::mem::size_of::<Value>()
        + match v {
            Value::String(s) if s.is_heap_allocated() => 2 * std::mem::size_of::<usize>() + s.len(),
            _ => 0,
        }
}

/// Read counts per (space, tag or edge type): what decides when a tag's or an edge type's rows are cached (here
/// and in [`crate::ecache`]).
#[derive(Default)]
pub struct ReadCounts {
    reads: RwLock<HashMap<(u32, i32), Arc<AtomicU64>>>,
}

impl ReadCounts {
    /// Counts `n` reads; true when they have just reached `hot`.
    pub fn count(&self, space: u32, id: i32, n: u64, hot: u64) -> bool {
        let (before, after) = self.add(space, id, n);
        before < hot && after >= hot
    }

    /// Counts `n` reads; the count before and after them.
    pub fn add(&self, space: u32, id: i32, n: u64) -> (u64, u64) {
        let counter = self.reads.read().expect("lock poisoned").get(&(space, id)).cloned();
        let counter = match counter {
            Some(c) => c,
            None => self.reads.write().expect("lock poisoned").entry((space, id)).or_default().clone(),
        };
        let before = counter.fetch_add(n, Ordering::Relaxed);
        (before, before + n)
    }

    /// Forgets a count, so it has to reach the threshold again.
    pub fn cool(&self, space: u32, id: i32) {
        self.reads.write().expect("lock poisoned").remove(&(space, id));
    }

    pub fn forget_space(&self, space: u32) {
        self.reads.write().expect("lock poisoned").retain(|(s, _), _| *s != space);
    }
}

/// One tag's cache, shared by readers and the writers that mirror their writes into it.
pub type SharedColumns = Arc<RwLock<TagCache>>;

/// The caches of every space, with the read counts that decide when a tag is hot.
#[derive(Default)]
pub struct VertexCache {
    /// By `(space, tag)`.
    tags: RwLock<HashMap<(u32, i32), SharedColumns>>,
    reads: ReadCounts,
}

impl VertexCache {
    /// The cache of a tag, if it is built for `schema`'s latest version. A reader with a newer version drops it
    /// (the tag was altered); one with an older version (planned before the ALTER) reads the store instead.
    pub fn get(&self, space: u32, schema: &SchemaRef) -> Option<Arc<RwLock<TagCache>>> {
        let c = self.get_any(space, schema.id)?;
        let cached = c.read().expect("lock poisoned").version();
        let reader = schema.latest().version;
        if reader > cached {
            self.drop_tag(space, schema.id);
        }
        (reader == cached).then_some(c)
    }

    /// The cache of a tag whatever version it serves (for writers, which check the version themselves).
    pub fn get_any(&self, space: u32, tag: i32) -> Option<Arc<RwLock<TagCache>>> {
        self.tags.read().expect("lock poisoned").get(&(space, tag)).cloned()
    }

    /// Counts `n` vertex reads of a tag; true when the tag has just become hot: its reads reached [`HOT_READS`], or
    /// reached its rows (`rows`, asked only when the count passes a power of two below `HOT_READS`).
    pub fn count_reads(&self, space: u32, tag: i32, n: u64, rows: &mut dyn FnMut() -> QResult<i64>) -> QResult<bool> {
        let (before, after) = self.reads.add(space, tag, n);
        if before >= HOT_READS {
            return Ok(false);
        }
        if after >= HOT_READS {
            return Ok(true);
        }
        let passed_power_of_two = before == 0 || before.ilog2() != after.ilog2();
        Ok(passed_power_of_two && rows()? as u64 <= after)
    }

    /// Forgets a tag's read count, so it has to become hot again before it is cached.
    pub fn cool(&self, space: u32, tag: i32) {
        self.reads.cool(space, tag);
    }

    pub fn insert(&self, space: u32, c: TagCache) -> Arc<RwLock<TagCache>> {
        let key = (space, c.schema.id);
        let c = Arc::new(RwLock::new(c));
        self.tags.write().expect("lock poisoned").insert(key, c.clone());
        c
    }

    pub fn is_cached(&self, space: u32, tag: i32) -> bool {
        self.tags.read().expect("lock poisoned").contains_key(&(space, tag))
    }

    pub fn drop_tag(&self, space: u32, tag: i32) {
        self.tags.write().expect("lock poisoned").remove(&(space, tag));
        self.cool(space, tag);
    }

    pub fn drop_space(&self, space: u32) {
        self.tags.write().expect("lock poisoned").retain(|(s, _), _| *s != space);
        self.reads.forget_space(space);
    }

    /// Drops every cached tag (they are rebuilt on demand).
    pub fn clear(&self) {
        self.tags.write().unwrap_or_else(|p| p.into_inner()).clear();
    }

    /// Rows and bytes of every cached tag of every space.
    pub fn totals(&self) -> (usize, usize) {
        let tags = self.tags.read().expect("lock poisoned");
        tags.values().fold((0, 0), |(r, b), c| {
            let c = c.read().expect("lock poisoned");
            (r + c.rows(), b + c.bytes())
        })
    }

    /// Rows and bytes of each cached tag of `space`: `(tag id, rows, bytes)`.
    pub fn stats(&self, space: u32) -> Vec<(i32, usize, usize)> {
        let tags = self.tags.read().expect("lock poisoned");
        let mut out: Vec<_> = tags
            .iter()
            .filter(|((s, _), _)| *s == space)
            .map(|((_, t), c)| {
                let c = c.read().expect("lock poisoned");
                (*t, c.rows(), c.bytes())
            })
            .collect();
        out.sort_unstable();
        out
    }
}
