//! The in-memory topology of a space: who is joined to whom, without properties.
//!
//! Every VID that is an end of some edge or a stored vertex gets a dense `u32` id ([`VidDict`]), and a bit saying
//! whether the vertex exists. For each signed edge type (positive:
//! out-edges, negative: in-edges) the neighbours of the vertices are kept in pages of [`PAGE`] consecutive dense
//! ids. A page is a CSR base (offsets, far ends, ranks only when some rank is not 0) plus at most one delta: after
//! BG3's "one delta per page" rule, a write copies the touched vertex's neighbour list into the page's delta and
//! edits it there; once a delta holds [`DELTA_MERGE_EDGES`] edges the page is queued for a background merge that
//! folds it into a new base. A vertex's neighbours are therefore always one contiguous slice: the delta's copy if
//! it has one, else the base's.
//!
//! Neighbours are kept in key order (rank, then the far end's key bytes), the order a key-value scan of the same
//! edges returns, so both read paths give the same rows in the same order.
//!
//! **Invariant:** the topology changes only under the storage write lock, right after the batch it mirrors is
//! appended to the log, so it always equals the edges in the key-value store (see `docs/design/topology.md`).

use quiver_api::{SpaceDesc, VidType};
use quiver_common::fasthash::FastMap;
use quiver_common::{QError, QResult, Value};
use std::cmp::Ordering;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU8, Ordering as AtomicOrdering};

/// Vertices per page.
pub const PAGE: usize = 256;
/// A page's delta is merged into its base once it holds this many edges.
pub const DELTA_MERGE_EDGES: usize = 2048;

/// Dense ids for VIDs.
pub enum VidDict {
    Int { ids: FastMap<i64, u32>, vids: Vec<i64> },
    Str { ids: FastMap<Box<[u8]>, u32>, vids: Vec<Box<[u8]>> },
}

impl VidDict {
    pub(crate) fn new(vid_type: VidType) -> VidDict {
        match vid_type {
            VidType::Int64 => VidDict::Int { ids: FastMap::default(), vids: Vec::new() },
            VidType::FixedString(_) => VidDict::Str { ids: FastMap::default(), vids: Vec::new() },
        }
    }

    pub fn len(&self) -> usize {
        match self {
            VidDict::Int { vids, .. } => vids.len(),
            VidDict::Str { vids, .. } => vids.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The id of `vid`, if it is the end of any edge.
    pub fn get(&self, vid: &Value) -> Option<u32> {
        match (self, vid) {
            (VidDict::Int { ids, .. }, Value::Int(i)) => ids.get(i).copied(),
            (VidDict::Str { ids, .. }, Value::String(s)) => ids.get(s.as_bytes()).copied(),
            _ => None,
        }
    }

    /// The id of a VID given as its key bytes (zero-padded for strings), if it has one.
    pub(crate) fn get_key(&self, key: &[u8]) -> Option<u32> {
        match self {
            VidDict::Int { ids, .. } => ids.get(&i64::from_le_bytes(key.try_into().ok()?)).copied(),
            VidDict::Str { ids, .. } => {
                let end = key.iter().position(|b| *b == 0).unwrap_or(key.len());
                ids.get(&key[..end]).copied()
            }
        }
    }

    /// The id of a VID given as its key bytes (zero-padded for strings), assigning a new one if needed.
    pub(crate) fn intern_key(&mut self, key: &[u8]) -> QResult<u32> {
        match self {
            VidDict::Int { ids, vids } => {
                let v = i64::from_le_bytes(key.try_into().map_err(|_| QError::storage("bad VID length in key"))?);
                Ok(*ids.entry(v).or_insert_with(|| {
                    vids.push(v);
                    (vids.len() - 1) as u32
                }))
            }
            VidDict::Str { ids, vids } => {
                let end = key.iter().position(|b| *b == 0).unwrap_or(key.len());
                if let Some(id) = ids.get(&key[..end]) {
                    return Ok(*id);
                }
                let b: Box<[u8]> = key[..end].into();
                vids.push(b.clone());
                let id = (vids.len() - 1) as u32;
                ids.insert(b, id);
                Ok(id)
            }
        }
    }

    pub(crate) fn intern(&mut self, vid: &Value) -> u32 {
        match (&*self, vid) {
            (VidDict::Int { .. }, Value::Int(i)) => self.intern_key(&i.to_le_bytes()).expect("8 bytes"),
            (VidDict::Str { .. }, Value::String(s)) => self.intern_key(s.as_bytes()).expect("string key"),
            _ => panic!("VID {vid} does not match the space's VID type (validated by the query layer)"),
        }
    }

    pub fn value(&self, id: u32) -> Value {
        match self {
            VidDict::Int { vids, .. } => Value::Int(vids[id as usize]),
            VidDict::Str { vids, .. } => Value::str(String::from_utf8_lossy(&vids[id as usize]).into_owned()),
        }
    }

    /// Key order of two ids: little-endian bytes for INT64 VIDs, bytes for strings.
    fn key_cmp(&self, a: u32, b: u32) -> Ordering {
        match self {
            VidDict::Int { vids, .. } => vids[a as usize].to_le_bytes().cmp(&vids[b as usize].to_le_bytes()),
            VidDict::Str { vids, .. } => vids[a as usize].cmp(&vids[b as usize]),
        }
    }

    pub(crate) fn bytes(&self) -> usize {
        match self {
            // A hash-map slot (key, value, control byte) at the map's load factor, plus the reverse array.
            VidDict::Int { ids, vids } => ids.capacity() * (8 + 4 + 1) + vids.capacity() * 8,
            VidDict::Str { ids, vids } => {
                let strings: usize = vids.iter().map(|s| s.len()).sum();
                ids.capacity() * (16 + 4 + 1) + vids.capacity() * 16 + 2 * strings
            }
        }
    }
}

/// One neighbour: `(rank, far end)`.
pub type Neighbor = (i64, u32);

/// One vertex's neighbours, wherever they are kept.
enum Slot<'a> {
    Delta(&'a [Neighbor]),
    /// `ranks` is empty when every rank in the page is 0.
    Base {
        targets: &'a [u32],
        ranks: &'a [i64],
    },
}

impl Slot<'_> {
    fn len(&self) -> usize {
        match self {
            Slot::Delta(list) => list.len(),
            Slot::Base { targets, .. } => targets.len(),
        }
    }

    fn iter(&self) -> impl Iterator<Item = Neighbor> + '_ {
        (0..self.len()).map(move |i| self.get(i))
    }

    fn get(&self, i: usize) -> Neighbor {
        match self {
            Slot::Delta(list) => list[i],
            Slot::Base { targets, ranks } => (ranks.get(i).copied().unwrap_or(0), targets[i]),
        }
    }
}

#[derive(Default)]
struct Page {
    /// `PAGE + 1` offsets into `targets`.
    offsets: Vec<u32>,
    targets: Vec<u32>,
    /// Parallel to `targets`; empty when every rank in the page is 0 (the common case).
    ranks: Vec<i64>,
    delta: Option<Box<Delta>>,
}

#[derive(Default)]
struct Delta {
    /// Full replacement neighbour lists, by slot in the page.
    lists: HashMap<u16, Vec<Neighbor>>,
    edges: usize,
}

impl Page {
    fn empty() -> Page {
        Page { offsets: vec![0; PAGE + 1], ..Page::default() }
    }

    /// The slot's neighbours: its delta list if it has one, else its range of the base.
    fn slot(&self, slot: usize) -> Slot<'_> {
        if let Some(list) = self.delta.as_ref().and_then(|d| d.lists.get(&(slot as u16))) {
            return Slot::Delta(list);
        }
        let (s, e) = (self.offsets[slot] as usize, self.offsets[slot + 1] as usize);
        Slot::Base { targets: &self.targets[s..e], ranks: if self.ranks.is_empty() { &[] } else { &self.ranks[s..e] } }
    }

    /// The slot's list in the delta, copied from the base on first touch.
    fn delta_list(&mut self, slot: usize) -> &mut Vec<Neighbor> {
        let key = slot as u16;
        if !self.delta.as_ref().is_some_and(|d| d.lists.contains_key(&key)) {
            let base: Vec<Neighbor> = self.slot(slot).iter().collect();
            let delta = self.delta.get_or_insert_with(Box::default);
            delta.edges += base.len();
            delta.lists.insert(key, base);
        }
        self.delta.as_mut().and_then(|d| d.lists.get_mut(&key)).expect("inserted above")
    }

    /// Folds the delta into a new base.
    fn merge(&mut self) {
        let Some(delta) = self.delta.take() else { return };
        let mut offsets = Vec::with_capacity(PAGE + 1);
        let mut targets = Vec::new();
        let mut ranks = Vec::new();
        offsets.push(0u32);
        for slot in 0..PAGE {
            // The delta was taken off the page, so `self.slot` is the base.
            let neighbors = match delta.lists.get(&(slot as u16)) {
                Some(list) => Slot::Delta(list),
                None => self.slot(slot),
            };
            for (r, t) in neighbors.iter() {
                ranks.push(r);
                targets.push(t);
            }
            offsets.push(targets.len() as u32);
        }
        if ranks.iter().all(|r| *r == 0) {
            ranks = Vec::new();
        }
        ranks.shrink_to_fit();
        targets.shrink_to_fit();
        *self = Page { offsets, targets, ranks, delta: None };
    }

    fn bytes(&self) -> usize {
        let delta = self.delta.as_ref().map_or(0, |d| d.lists.values().map(|l| l.capacity() * 16 + 32).sum());
        self.offsets.capacity() * 4
            + self.targets.capacity() * 4
            + self.ranks.capacity() * 8
            + delta
            + std::mem::size_of::<Page>()
    }
}

/// The neighbours of every vertex over one signed edge type.
#[derive(Default)]
pub struct Adjacency {
    pages: Vec<Page>,
    edges: usize,
}

impl Adjacency {
    fn slot(&self, v: u32) -> Option<Slot<'_>> {
        self.pages.get(v as usize / PAGE).map(|page| page.slot(v as usize % PAGE))
    }

    pub fn degree(&self, v: u32) -> usize {
        self.slot(v).map_or(0, |s| s.len())
    }

    /// Calls `f` for each neighbour of `v`, in key order, until it returns `false`.
    pub fn for_each(&self, v: u32, f: &mut dyn FnMut(Neighbor) -> bool) {
        if let Some(slot) = self.slot(v) {
            for n in slot.iter() {
                if !f(n) {
                    return;
                }
            }
        }
    }

    /// Calls `f` with the far end of each neighbour of `v` (the hot loop of counting traversals: no ranks read).
    #[inline]
    pub fn for_each_target(&self, v: u32, mut f: impl FnMut(u32)) {
        match self.slot(v) {
            None => {}
            Some(Slot::Delta(list)) => list.iter().for_each(|&(_, t)| f(t)),
            Some(Slot::Base { targets, .. }) => targets.iter().for_each(|&t| f(t)),
        }
    }

    /// Calls `f(rank, far end)` for each neighbour of `v`, in key order (the hot loop of path counts, which need
    /// ranks to tell edges apart).
    #[inline]
    pub fn for_each_entry(&self, v: u32, mut f: impl FnMut(i64, u32)) {
        match self.slot(v) {
            None => {}
            Some(Slot::Delta(list)) => list.iter().for_each(|&(r, t)| f(r, t)),
            Some(Slot::Base { targets, ranks: [] }) => targets.iter().for_each(|&t| f(0, t)),
            Some(Slot::Base { targets, ranks }) => targets.iter().zip(ranks).for_each(|(&t, &r)| f(r, t)),
        }
    }

    /// The far ends of `v`'s neighbours in key order as one slice, where they are stored as one (not in a page's
    /// delta): for loops that must be tighter than a closure per neighbour.
    pub fn targets(&self, v: u32) -> Option<&[u32]> {
        match self.slot(v)? {
            Slot::Base { targets, .. } => Some(targets),
            Slot::Delta(_) => None,
        }
    }

    /// The `i`-th neighbour of `v` in key order (as the `i`-th call of [`Adjacency::for_each_target`] or
    /// [`Adjacency::for_each_entry`] sees it), or `None` past its last.
    pub fn entry(&self, v: u32, i: usize) -> Option<Neighbor> {
        self.slot(v).filter(|s| i < s.len()).map(|s| s.get(i))
    }

    pub fn edges(&self) -> usize {
        self.edges
    }

    /// Whether `from -> (rank, to)` is present: a binary search in the list's key order (rank, then the far end's
    /// key bytes), the order [`Adjacency::edit`] keeps.
    pub fn contains(&self, dict: &VidDict, from: u32, n: Neighbor) -> bool {
        let Some(slot) = self.slot(from) else { return false };
        let (mut lo, mut hi) = (0, slot.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let x = slot.get(mid);
            match x.0.cmp(&n.0).then_with(|| dict.key_cmp(x.1, n.1)) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return true,
            }
        }
        false
    }

    fn page_mut(&mut self, v: u32) -> (&mut Page, usize) {
        let p = v as usize / PAGE;
        while self.pages.len() <= p {
            self.pages.push(Page::empty());
        }
        (&mut self.pages[p], v as usize % PAGE)
    }

    /// Adds (`add`) or removes `from -> (rank, to)`; adding a present edge or removing an absent one changes
    /// nothing. Returns whether the page's delta is due for a merge.
    fn edit(&mut self, dict: &VidDict, from: u32, n: Neighbor, add: bool) -> bool {
        let (page, slot) = self.page_mut(from);
        let list = page.delta_list(slot);
        let found = list.binary_search_by(|x| x.0.cmp(&n.0).then_with(|| dict.key_cmp(x.1, n.1)));
        let changed: isize = match (found, add) {
            (Err(at), true) => {
                list.insert(at, n);
                1
            }
            (Ok(at), false) => {
                list.remove(at);
                -1
            }
            _ => 0,
        };
        let delta = page.delta.as_mut().expect("delta_list made it");
        delta.edges = delta.edges.saturating_add_signed(changed);
        let due = delta.edges >= DELTA_MERGE_EDGES;
        self.edges = self.edges.saturating_add_signed(changed);
        due
    }

    pub fn merge_page(&mut self, page: usize) {
        if let Some(p) = self.pages.get_mut(page) {
            p.merge();
        }
    }

    fn pages_with_delta(&self) -> usize {
        self.pages.iter().filter(|p| p.delta.is_some()).count()
    }

    fn bytes(&self) -> usize {
        self.pages.iter().map(Page::bytes).sum()
    }
}

/// One edge as the topology mirrors it: both its stored directions change together.
#[derive(Debug, Clone)]
pub struct TopoEdge {
    pub src: Value,
    pub edge_type: i32,
    pub rank: i64,
    pub dst: Value,
}

/// The topology of one space.
pub struct SpaceTopology {
    pub dict: VidDict,
    adjacency: HashMap<i32, Adjacency>,
    /// Cached properties of hot edge types, by the signed type of the copies held: see [`crate::ecache`].
    pub edge_props: HashMap<i32, crate::ecache::EdgeColumns>,
    /// Which ids are vertices that exist (have a vertex key; every tag row comes with one): a MATCH path reaches
    /// only existing vertices, while an edge may outlive its ends or precede them.
    present: Vec<u64>,
    /// Whether both ends of every edge exist: [`ENDS_UNKNOWN`], [`ENDS_EXIST`] or [`ENDS_DANGLING`]. Found on
    /// demand ([`Self::every_edge_end_exists`]) and forgotten by any change that can make it false.
    ends: AtomicU8,
}

const ENDS_UNKNOWN: u8 = 0;
const ENDS_EXIST: u8 = 1;
const ENDS_DANGLING: u8 = 2;

/// Numbers for `docs/design/topology.md` and SHOW-style reports.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TopologyStats {
    pub vertices: usize,
    /// Stored edge copies: every edge counts twice (its out- and in-direction).
    pub directed_edges: usize,
    pub bytes: usize,
    pub pages_with_delta: usize,
}

/// Takes one stored edge key: `(from key bytes, signed type, rank, to key bytes)`.
pub type EdgeKeyVisitor<'a> = dyn FnMut(&[u8], i32, i64, &[u8]) -> QResult<()> + 'a;

/// Takes the VID key bytes of one stored vertex key.
pub type VertexKeyVisitor<'a> = dyn FnMut(&[u8]) -> QResult<()> + 'a;

impl SpaceTopology {
    pub fn new(space: &SpaceDesc) -> SpaceTopology {
        SpaceTopology {
            dict: VidDict::new(space.vid_type),
            adjacency: HashMap::new(),
            edge_props: HashMap::new(),
            present: Vec::new(),
            ends: AtomicU8::new(ENDS_EXIST),
        }
    }

    /// Builds the topology from stored edge keys `(from key bytes, signed type, rank, to key bytes)`, given in key
    /// order (so each `from` vertex's edges of one type arrive together and sorted), and the VID key bytes of the
    /// stored vertex keys.
    pub fn build(
        space: &SpaceDesc,
        keys: &mut dyn FnMut(&mut EdgeKeyVisitor<'_>) -> QResult<()>,
        vertices: &mut dyn FnMut(&mut VertexKeyVisitor<'_>) -> QResult<()>,
    ) -> QResult<SpaceTopology> {
        let mut t = SpaceTopology::new(space);
        t.ends = AtomicU8::new(ENDS_UNKNOWN);
        let mut edges: HashMap<i32, Vec<(u32, i64, u32)>> = HashMap::new();
        keys(&mut |from, et, rank, to| {
            let f = t.dict.intern_key(from)?;
            let to = t.dict.intern_key(to)?;
            edges.entry(et).or_default().push((f, rank, to));
            Ok(())
        })?;
        let mut present = Vec::new();
        vertices(&mut |vid| {
            present.push(t.dict.intern_key(vid)?);
            Ok(())
        })?;
        for id in present {
            t.mark(id, true);
        }
        let n = t.dict.len();
        for (et, list) in edges {
            t.adjacency.insert(et, csr(n, list));
        }
        Ok(t)
    }

    pub fn adjacency(&self, edge_type: i32) -> Option<&Adjacency> {
        self.adjacency.get(&edge_type)
    }

    /// Applies one edge insert (a no-op if present); returns the pages whose delta is due for a merge.
    pub fn add_edge(&mut self, e: &TopoEdge, due: &mut Vec<(i32, usize)>) {
        self.ends.store(ENDS_UNKNOWN, AtomicOrdering::Relaxed);
        self.change(e, true, due)
    }

    /// Whether the edge is stored (its out-copy, as the store has it once its batch is appended).
    pub fn has_edge(&self, e: &TopoEdge) -> bool {
        let (Some(s), Some(d)) = (self.dict.get(&e.src), self.dict.get(&e.dst)) else { return false };
        self.adjacency(e.edge_type).is_some_and(|a| a.contains(&self.dict, s, (e.rank, d)))
    }

    /// Whether the vertex is stored (has its vertex key).
    pub fn has_vertex(&self, vid: &Value) -> bool {
        self.dict.get(vid).is_some_and(|id| self.vertex_exists(id))
    }

    /// Mirrors a vertex key written (`exists`) or deleted.
    pub fn set_vertex(&mut self, vid: &Value, exists: bool) {
        let id = match (exists, self.dict.get(vid)) {
            (_, Some(id)) => id,
            (false, None) => return,
            (true, None) => self.dict.intern(vid),
        };
        if !exists {
            self.ends.store(ENDS_UNKNOWN, AtomicOrdering::Relaxed);
        }
        self.mark(id, exists);
    }

    fn mark(&mut self, id: u32, exists: bool) {
        let (word, bit) = (id as usize / 64, id % 64);
        if word >= self.present.len() {
            self.present.resize(word + 1, 0);
        }
        if exists {
            self.present[word] |= 1 << bit;
        } else {
            self.present[word] &= !(1 << bit);
        }
    }

    /// Whether the vertex with this id exists (has a vertex key).
    #[inline]
    pub fn vertex_exists(&self, id: u32) -> bool {
        self.present.get(id as usize / 64).is_some_and(|w| w & (1 << (id % 64)) != 0)
    }

    /// Whether both ends of every edge exist, so a walk's count is also the count of paths that reach only
    /// existing vertices. Computed once (a pass over the ids) and kept until an edge insert or vertex delete.
    pub fn every_edge_end_exists(&self) -> bool {
        match self.ends.load(AtomicOrdering::Relaxed) {
            ENDS_EXIST => return true,
            ENDS_DANGLING => return false,
            _ => {}
        }
        let dangling = (0..self.dict.len() as u32)
            .any(|id| !self.vertex_exists(id) && self.adjacency.values().any(|a| a.degree(id) > 0));
        self.ends.store(if dangling { ENDS_DANGLING } else { ENDS_EXIST }, AtomicOrdering::Relaxed);
        !dangling
    }

    pub fn remove_edge(&mut self, e: &TopoEdge, due: &mut Vec<(i32, usize)>) {
        self.change(e, false, due)
    }

    fn change(&mut self, e: &TopoEdge, add: bool, due: &mut Vec<(i32, usize)>) {
        if !add && (self.dict.get(&e.src).is_none() || self.dict.get(&e.dst).is_none()) {
            return;
        }
        let (s, d) = (self.dict.intern(&e.src), self.dict.intern(&e.dst));
        for (et, from, to) in [(e.edge_type, s, d), (-e.edge_type, d, s)] {
            self.edit_list(et, from, e.rank, to, add, due);
        }
    }

    /// Mirrors one stored copy of an edge written (`add`) or deleted: `c.src` is the vertex it is stored under and
    /// `c.edge_type` its signed type (negative: the in-copy, whose `dst` is the edge's source).
    pub fn change_copy(&mut self, c: &TopoEdge, add: bool, due: &mut Vec<(i32, usize)>) {
        if add {
            self.ends.store(ENDS_UNKNOWN, AtomicOrdering::Relaxed);
        } else if self.dict.get(&c.src).is_none() || self.dict.get(&c.dst).is_none() {
            return;
        }
        let (from, to) = (self.dict.intern(&c.src), self.dict.intern(&c.dst));
        self.edit_list(c.edge_type, from, c.rank, to, add, due);
    }

    fn edit_list(&mut self, et: i32, from: u32, rank: i64, to: u32, add: bool, due: &mut Vec<(i32, usize)>) {
        let adj = self.adjacency.entry(et).or_default();
        if adj.edit(&self.dict, from, (rank, to), add) {
            due.push((et, from as usize / PAGE));
        }
    }

    pub fn drop_edge_type(&mut self, edge_type: i32) {
        self.adjacency.remove(&edge_type);
        self.adjacency.remove(&-edge_type);
        self.edge_props.remove(&edge_type.abs());
        self.edge_props.remove(&-edge_type.abs());
    }

    /// Mirrors an edge write (`Some`: the row written) or delete in the property caches of both its copies, where
    /// they exist; returns the keys of the caches that had to go (a row of a schema version they cannot decode).
    pub fn mirror_edge_row(&mut self, e: &TopoEdge, row: Option<&[u8]>) -> Vec<i32> {
        let mut dropped: Vec<i32> = self.mirror_copy_row(e, row).into_iter().collect();
        if self.edge_props.contains_key(&-e.edge_type) {
            let reverse = TopoEdge { src: e.dst.clone(), edge_type: -e.edge_type, rank: e.rank, dst: e.src.clone() };
            dropped.extend(self.mirror_copy_row(&reverse, row));
        }
        dropped
    }

    /// Mirrors the write or delete of one stored copy (`c.src` the vertex it is stored under, `c.edge_type` signed)
    /// in the cache of its signed type, if there is one; returns that cache's key when it had to go.
    pub fn mirror_copy_row(&mut self, c: &TopoEdge, row: Option<&[u8]>) -> Option<i32> {
        let cache = self.edge_props.get_mut(&c.edge_type)?;
        let (Some(near), Some(far)) = (self.dict.get(&c.src), self.dict.get(&c.dst)) else { return None };
        match row {
            None => cache.set(near, c.rank, far, None),
            Some(bytes) => {
                let all: Vec<usize> = (0..cache.schema.latest().props.len()).collect();
                match crate::codec::decode_indices(&cache.schema, bytes, &all) {
                    Ok(values) => cache.set(near, c.rank, far, Some(values)),
                    Err(_) => {
                        self.edge_props.remove(&c.edge_type);
                        return Some(c.edge_type);
                    }
                }
            }
        }
        None
    }

    pub fn merge_page(&mut self, edge_type: i32, page: usize) {
        if let Some(a) = self.adjacency.get_mut(&edge_type) {
            a.merge_page(page);
        }
    }

    pub fn stats(&self) -> TopologyStats {
        TopologyStats {
            vertices: self.dict.len(),
            directed_edges: self.adjacency.values().map(Adjacency::edges).sum(),
            bytes: self.dict.bytes()
                + self.adjacency.values().map(Adjacency::bytes).sum::<usize>()
                + self.present.len() * 8,
            pages_with_delta: self.adjacency.values().map(Adjacency::pages_with_delta).sum(),
        }
    }
}

/// A CSR over `n` vertices from edges grouped by `from` in key order within each group.
fn csr(n: usize, list: Vec<(u32, i64, u32)>) -> Adjacency {
    let pages = n.div_ceil(PAGE);
    let mut degree = vec![0u32; n];
    for (f, _, _) in &list {
        degree[*f as usize] += 1;
    }
    let mut out = Adjacency { pages: Vec::with_capacity(pages), edges: list.len() };
    // Each vertex's edges are contiguous in `list` but vertices are not in id order: place them by offset.
    let mut start = vec![0usize; n + 1];
    for v in 0..n {
        start[v + 1] = start[v] + degree[v] as usize;
    }
    let mut targets = vec![0u32; list.len()];
    let mut ranks = vec![0i64; list.len()];
    let mut next = start.clone();
    for (f, r, t) in list {
        let at = next[f as usize];
        targets[at] = t;
        ranks[at] = r;
        next[f as usize] += 1;
    }
    for p in 0..pages {
        let (lo, hi) = (p * PAGE, ((p + 1) * PAGE).min(n));
        let base = start[lo];
        let mut offsets: Vec<u32> = (lo..=hi).map(|v| (start[v] - base) as u32).collect();
        offsets.resize(PAGE + 1, *offsets.last().expect("at least one offset"));
        let t = targets[start[lo]..start[hi]].to_vec();
        let r = &ranks[start[lo]..start[hi]];
        let r = if r.iter().all(|x| *x == 0) { Vec::new() } else { r.to_vec() };
        out.pages.push(Page { offsets, targets: t, ranks: r, delta: None });
    }
    out
}
