//! The storage-client trait: batched reads, writes and scans.

use crate::index::{IndexHit, IndexRef, IndexScan, JobInfo, NewJob, SpaceStats};
use crate::schema::{SchemaRef, SpaceDesc};
use quiver_common::budget::Budget;
use quiver_common::expr::Expr;
use quiver_common::{QError, QResult, Value};
use std::collections::BTreeMap;

pub type Props = BTreeMap<String, Value>;

/// Properties of one row read in bulk: values in the order of a name list that every row of the response shares,
/// so a row costs one small allocation instead of a map with a key per property.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PropRow {
    pub names: std::sync::Arc<[String]>,
    pub values: PropValues,
}

/// A row's values: one or two (the common case for edges) without an allocation of their own.
pub type PropValues = smallvec::SmallVec<[Value; 2]>;

impl PropRow {
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.names.iter().position(|n| n == name).map(|i| &self.values[i])
    }

    pub fn to_map(&self) -> Props {
        self.names.iter().cloned().zip(self.values.iter().cloned()).collect()
    }
}

/// One tag's selected properties for a batch of vertices, by position in the request.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TagColumns {
    pub schema: SchemaRef,
    /// Whether each vertex has the tag.
    pub present: Vec<bool>,
    /// The selected properties of the tag's latest version, in schema order.
    pub names: std::sync::Arc<[String]>,
    /// One column per name, one value per vertex (EMPTY where the vertex lacks the tag).
    pub columns: Vec<Vec<Value>>,
}

impl TagColumns {
    /// The properties of `schema`'s latest version that `props` selects, in schema order (their indices and names).
    pub fn selected(schema: &SchemaRef, props: &PropSelection) -> (Vec<usize>, std::sync::Arc<[String]>) {
        let latest = schema.latest();
        let picked: Vec<usize> = (0..latest.props.len()).filter(|&i| props.wants(&latest.props[i].name)).collect();
        let names = picked.iter().map(|&i| latest.props[i].name.clone()).collect();
        (picked, names)
    }

    /// The columns of `schema` out of `get_vertices` rows.
    pub fn from_vertices(schema: &SchemaRef, props: &PropSelection, rows: &[Option<VertexData>]) -> TagColumns {
        let (_, names) = TagColumns::selected(schema, props);
        let mut out = TagColumns {
            schema: schema.clone(),
            present: Vec::with_capacity(rows.len()),
            columns: vec![Vec::with_capacity(rows.len()); names.len()],
            names,
        };
        for row in rows {
            let tag = row.as_ref().and_then(|v| v.tags.iter().find(|(s, _)| s.id == schema.id)).map(|(_, r)| r);
            out.present.push(tag.is_some());
            for (name, col) in out.names.iter().zip(&mut out.columns) {
                col.push(tag.and_then(|r| r.get(name)).cloned().unwrap_or(Value::Empty));
            }
        }
        out
    }

    /// The value of property `name` of the vertex at `pos` (EMPTY: no such property, or the vertex lacks the tag).
    pub fn value(&self, pos: usize, name: &str) -> Value {
        match self.names.iter().position(|n| n == name) {
            Some(i) if self.present[pos] => self.columns[i][pos].clone(),
            _ => Value::Empty,
        }
    }
}

/// The identity of an edge in its stored (out) direction.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct EdgeKeyVal {
    pub src: Value,
    pub edge_type: i32,
    pub rank: i64,
    pub dst: Value,
}

/// A vertex's tags with their properties, in the order the request asked for tags.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct VertexData {
    pub vid: Value,
    pub tags: Vec<(SchemaRef, PropRow)>,
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub enum Mutation {
    /// `values` follow the latest schema's property order, already coerced.
    InsertVertex {
        vid: Value,
        tags: Vec<(SchemaRef, Vec<Value>)>,
        if_not_exists: bool,
    },
    InsertEdge {
        key: EdgeKeyVal,
        schema: SchemaRef,
        values: Vec<Value>,
        if_not_exists: bool,
    },
    DeleteVertex {
        vid: Value,
        with_edges: bool,
    },
    /// `tags: None` deletes every tag of the vertex.
    DeleteTags {
        vid: Value,
        tags: Option<Vec<SchemaRef>>,
    },
    DeleteEdge {
        key: EdgeKeyVal,
    },
}

/// Which properties a read returns (projection push-down: the rest are never decoded).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum PropSelection {
    None,
    All,
    /// These names, for each tag or edge type that has them.
    Only(Vec<String>),
}

impl PropSelection {
    pub fn wants(&self, name: &str) -> bool {
        match self {
            PropSelection::None => false,
            PropSelection::All => true,
            PropSelection::Only(names) => names.iter().any(|n| n == name),
        }
    }
}

/// Neighbours of a batch of vertices.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct NeighborsRequest {
    pub vids: Vec<Value>,
    /// Signed edge types: positive follows out-edges, negative follows in-edges.
    pub edge_types: Vec<(i32, SchemaRef)>,
    pub props: PropSelection,
    /// Filter push-down: only edges for which this is `true` are returned (NULL and EMPTY count as false). It may
    /// use `e.prop` and `e._src/_dst/_rank/_type` for the edge types of the request, where `e.prop` of another
    /// request type than the row's is EMPTY, and constants; anything else (`$^`, `$$`, `$-`, variables) is an
    /// error, so the planner pushes down only what storage can evaluate. `_src` is the vertex the edge was
    /// reached from and `_dst` the far end, as in a GO.
    pub filter: Option<Expr>,
    /// Stop after this many edges in total (after the filter).
    pub limit: Option<usize>,
    /// The query's deadline and memory bound, checked every [`quiver_common::budget::TICKS_PER_CHECK`] edges
    /// collected, so one super vertex cannot run a query past its bounds.
    pub budget: Budget,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct NeighborEdge {
    /// The vertex the edge was reached from.
    pub from: Value,
    /// Signed type as in the request.
    pub edge_type: i32,
    pub rank: i64,
    /// The far end.
    pub to: Value,
    pub props: Option<PropRow>,
}

/// One hop of a storage-side expansion ([`StorageClient::expand`]).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ExpandHop {
    /// Signed edge types followed (positive: out-edges, negative: in-edges).
    pub edge_types: Vec<i32>,
    /// Whether the vertices entering this hop are de-duplicated first, as between the steps of one GO: each is
    /// expanded once. Otherwise every path reaching a vertex continues from it (a GO fed by a pipe).
    pub distinct: bool,
    /// How many times this hop repeats (the steps after the first of `GO N STEPS`): a statement's step count is
    /// never spelled out one entry per step.
    pub times: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum ExpandOutput {
    /// Only the number of paths (the rows of the last hop): the last hop reads degrees, not edges.
    Count,
    /// The far ends of the last hop, each with the number of paths reaching it, in first-reached order.
    Ends,
    /// The edges of the last hop, each as walked with the number of paths that end with it (MATCH's paths only:
    /// [`ExpandRequest::paths`]). A path's own earlier edges are never its last, so an edge's count is the paths
    /// reaching its near end less those that already used it.
    LastEdges,
}

/// An edge of a path's last hop as it was walked: `edge_type` signed (positive: out from `from`, negative: in), so
/// the stored edge is `from -> to` for a positive type and `to -> from` for a negative one.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LastEdge {
    pub edge_type: i32,
    pub from: Value,
    pub to: Value,
    pub rank: i64,
    /// The properties [`ExpandRequest::last_edge_props`] asks for (`None` when it asks for none).
    pub props: Option<PropRow>,
}

/// The properties of the last edges to read with [`ExpandOutput::LastEdges`]: per type of the last hop its schema
/// (signed as in the hop), and which properties.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct LastEdgeProps {
    pub types: Vec<(i32, SchemaRef)>,
    pub props: PropSelection,
}

/// A multi-hop traversal run where the topology lives: whole frontiers per hop, multiplicities instead of rows.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct ExpandRequest {
    /// Start vertices, duplicates counting as separate paths.
    pub starts: Vec<Value>,
    pub hops: Vec<ExpandHop>,
    pub output: ExpandOutput,
    /// Count MATCH's paths instead of GO's walks: no edge is used twice within one path and every vertex a path
    /// reaches (its start included) exists; every hop is then walked from each path (`distinct` is not allowed).
    /// Counted without listing the paths: only the paths one hop short of the end are enumerated, and the last hop
    /// is counted from degrees, less the path's own edges that reappear in it.
    pub paths: bool,
    /// With [`ExpandOutput::LastEdges`]: each last edge's properties, read in the same pass (from the edge
    /// property cache where it is hot).
    pub last_edge_props: Option<LastEdgeProps>,
    /// Checked between batches of frontier vertices: a query past its deadline or memory bound stops there.
    pub budget: Budget,
}

#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ExpandResult {
    /// Paths through every hop (with [`ExpandOutput::Ends`], the sum of the ends' counts).
    pub paths: u64,
    pub ends: Vec<(Value, u64)>,
    /// With [`ExpandOutput::LastEdges`], each last edge once with the number of paths ending with it.
    pub last_edges: Vec<(LastEdge, u64)>,
    /// Edges read, for PROFILE.
    pub edges_read: u64,
}

/// Which paths a [`StorageClient::find_paths`] search returns (NebulaGraph's `FIND ... PATH`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum PathKind {
    /// Per (source, target) pair, every path of the smallest length found (at least one step; a source that is
    /// also the target gets its shortest cycles). Paths walk no edge twice.
    Shortest,
    /// The same search, one path per pair.
    SingleShortest,
    /// Every path of one to `max_steps` steps that walks no edge twice (vertices may repeat).
    All,
    /// Every path of one to `max_steps` steps that meets no vertex twice.
    NoLoop,
}

/// A path search between two sets of vertices, run where the topology lives.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct PathSearchRequest {
    pub sources: Vec<Value>,
    pub targets: Vec<Value>,
    /// Signed edge types a path follows from its source towards its target (positive: out-edges, negative:
    /// in-edges; both for BIDIRECT).
    pub edge_types: Vec<(i32, SchemaRef)>,
    /// Only edges for which this holds are walked, evaluated during the search: as [`NeighborsRequest::filter`].
    pub filter: Option<Expr>,
    pub max_steps: u32,
    pub kind: PathKind,
    /// Stop once this many paths are found (which ones is unspecified).
    pub limit: Option<usize>,
    /// Checked per edge read and per path built: a search past its deadline or memory bound stops with the
    /// budget's error.
    pub budget: Budget,
}

/// One step of a [`FoundPath`]: the signed type walked (negative against the stored direction), the edge's rank and
/// the vertex reached.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FoundStep {
    pub edge_type: i32,
    pub rank: i64,
    pub dst: Value,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FoundPath {
    pub src: Value,
    pub steps: Vec<FoundStep>,
}

#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PathSearchResult {
    pub paths: Vec<FoundPath>,
    /// Edges read, for PROFILE.
    pub edges_read: u64,
}

/// GET SUBGRAPH's rounds ([`StorageClient::subgraph`]).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct SubgraphRequest {
    /// The vertices of the first round, each once; a VID no edge ends at is listed and expands to nothing.
    pub starts: Vec<Value>,
    /// Signed edge types walked from each round's vertices.
    pub edge_types: Vec<(i32, SchemaRef)>,
    /// The signed types walked both ways: an edge found again from its other end is listed once (NebulaGraph's
    /// `biDirectEdgeTypes` rule: its reverse copy, or an edge back to a vertex expanded in the round before, is
    /// dropped).
    pub bidirect: Vec<i32>,
    /// Only edges for which this holds are walked: as [`NeighborsRequest::filter`].
    pub filter: Option<Expr>,
    /// Rounds after the first; the last one (`steps + 1`) lists only edges between vertices met before.
    pub steps: u32,
    pub budget: Budget,
}

/// One round of a subgraph: the vertices expanded and the edges kept (`props` is `None`).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SubgraphRound {
    pub vertices: Vec<Value>,
    pub edges: Vec<NeighborEdge>,
}

/// What a read-modify-write decides for one row.
pub enum RmwDecision {
    /// Write these values (latest schema order).
    Write(Vec<Value>),
    /// Leave the row as it is.
    Keep,
}

pub trait StorageClient: Send + Sync {
    /// Properties of a batch of vertices for the given tags, only those `props` selects (projection push-down; a
    /// tag the vertex has is returned even when none of its properties is selected). The result has one entry per
    /// input VID; `None` where the vertex does not exist (no vertex key and none of the tags).
    fn get_vertices(
        &self,
        space: &SpaceDesc,
        vids: &[Value],
        tags: &[SchemaRef],
        props: &PropSelection,
    ) -> QResult<Vec<Option<VertexData>>>;

    /// The same properties as [`get_vertices`](Self::get_vertices), one [`TagColumns`] per tag, column by column:
    /// for reads of many vertices that need their property values rather than whole vertices (GO's `$^`/`$$`).
    /// The default transposes `get_vertices`; a storage that keeps properties in columns answers from them.
    fn get_tag_columns(
        &self,
        space: &SpaceDesc,
        vids: &[Value],
        tags: &[SchemaRef],
        props: &PropSelection,
    ) -> QResult<Vec<TagColumns>> {
        let rows = self.get_vertices(space, vids, tags, props)?;
        Ok(tags.iter().map(|t| TagColumns::from_vertices(t, props, &rows)).collect())
    }

    /// Properties of a batch of edges of one type; `None` where the edge does not exist.
    fn get_edges(&self, space: &SpaceDesc, schema: &SchemaRef, keys: &[EdgeKeyVal]) -> QResult<Vec<Option<Props>>>;

    fn get_neighbors(&self, space: &SpaceDesc, req: &NeighborsRequest) -> QResult<Vec<NeighborEdge>>;

    /// Multi-hop expansion over whole frontiers, counting paths instead of producing rows.
    fn expand(&self, space: &SpaceDesc, req: &ExpandRequest) -> QResult<ExpandResult>;

    /// Whether [`expand`](Self::expand) counts MATCH's paths (`ExpandRequest::paths`) in `space`: the optimizer
    /// fuses a MATCH count into one only where it does (a cluster's storage does not when no host carries the whole
    /// space), and the MATCH is walked row by row otherwise.
    fn counts_paths(&self, _space: &SpaceDesc) -> bool {
        true
    }

    /// Paths from any of `sources` to any of `targets` (every pair answered by one search), as `kind` asks.
    fn find_paths(&self, space: &SpaceDesc, req: &PathSearchRequest) -> QResult<PathSearchResult>;

    /// GET SUBGRAPH's rounds, NebulaGraph's `SubgraphExecutor` rule by rule: round `i` expands the vertices first
    /// met in round `i - 1`, which `expandable` may refuse (a vertex filter, never asked about the starts; the edges
    /// of the round before to a refused vertex are dropped, and at the end so are the last round's). A round is
    /// listed once it has vertices; rounds stop early once one meets no new vertex.
    fn subgraph(
        &self,
        space: &SpaceDesc,
        req: &SubgraphRequest,
        expandable: &mut dyn FnMut(&[Value]) -> QResult<Vec<bool>>,
    ) -> QResult<Vec<SubgraphRound>>;

    /// Applies all mutations in one atomic, durable batch: all of them or none (counts included). Readers are not
    /// isolated from a write in progress: a read that runs while a batch is applied may see part of it (each row
    /// whole), as NebulaGraph's storage readers may; once `write` returns, every read sees all of it.
    fn write(&self, space: &SpaceDesc, mutations: Vec<Mutation>) -> QResult<()>;

    /// Reads one vertex tag row (`None` if absent), lets `decide` compute the new row, and writes it, with no
    /// other write to the space in between. Returns the props after the decision.
    fn rmw_vertex(
        &self,
        space: &SpaceDesc,
        vid: &Value,
        schema: &SchemaRef,
        decide: &mut dyn FnMut(Option<&Props>) -> QResult<RmwDecision>,
    ) -> QResult<Option<Props>>;

    /// The same for one edge; the reverse copy is written in the same batch.
    fn rmw_edge(
        &self,
        space: &SpaceDesc,
        key: &EdgeKeyVal,
        schema: &SchemaRef,
        decide: &mut dyn FnMut(Option<&Props>) -> QResult<RmwDecision>,
    ) -> QResult<Option<Props>>;

    /// VIDs of vertices that have `schema` (every vertex when `None`, one whose tags were all deleted included), at
    /// most `limit`.
    fn scan_vertices(&self, space: &SpaceDesc, schema: Option<&SchemaRef>, limit: usize) -> QResult<Vec<Value>>;

    /// Removes all data of a space (CLEAR SPACE, DROP SPACE).
    fn clear_space(&self, space: &SpaceDesc) -> QResult<()>;

    /// Removes all rows of a tag or edge type (after DROP TAG|EDGE).
    fn drop_schema_data(&self, space: &SpaceDesc, schema: &SchemaRef) -> QResult<()>;

    /// The targets of the entries in the given ranges of one index, each once; the ranges are read one after
    /// another, each partition by partition, in index order within a partition. Reads check `budget` every `TICKS_PER_CHECK` entries.
    fn scan_index(&self, space: &SpaceDesc, scans: &[IndexScan], budget: &Budget) -> QResult<Vec<IndexHit>>;

    /// Fills a newly created index from the rows written before it (rows written from now on maintain it): inline
    /// when its tag or edge type has few rows, marking it ready (`None`), else as a background job that marks it
    /// ready when done (`Some(job id)`).
    fn index_created(&self, space: &SpaceDesc, index: &IndexRef) -> QResult<Option<i64>>;

    /// Removes every entry of a dropped index.
    fn drop_index_data(&self, space: &SpaceDesc, index_id: i32) -> QResult<()>;

    /// Queues an admin job. Returns the job id.
    fn submit_job(&self, space: &SpaceDesc, job: NewJob) -> QResult<i64>;

    /// Jobs of `space`, newest first.
    fn jobs(&self, space: &SpaceDesc) -> QResult<Vec<JobInfo>>;

    fn stop_job(&self, space: &SpaceDesc, id: i64) -> QResult<()>;

    /// Queues the failed and stopped jobs of `space` again (only those of `only`, unless it is empty; other ids
    /// are passed over); returns how many.
    fn recover_jobs(&self, space: &SpaceDesc, only: &[i64]) -> QResult<usize>;

    /// Exact counts of rows per tag and edge type, vertices and edges, as of the last acknowledged write.
    fn stats(&self, space: &SpaceDesc) -> QResult<SpaceStats>;

    /// CREATE SNAPSHOT: a consistent copy of everything stored, as of now, under `name` (a plain name): a data
    /// directory of its own, which a server can be started on. A storage that keeps nothing on disk refuses.
    fn create_snapshot(&self, name: &str) -> QResult<()> {
        let _ = name;
        Err(QError::not_supported("`CREATE SNAPSHOT' of a storage that keeps no files"))
    }

    /// The snapshots there are, by name, in ascending order.
    fn snapshots(&self) -> QResult<Vec<String>> {
        Ok(Vec::new())
    }

    /// Removes a snapshot; `false` if there was none of that name.
    fn drop_snapshot(&self, name: &str) -> QResult<bool> {
        let _ = name;
        Ok(false)
    }
}
