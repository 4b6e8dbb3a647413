//! Secondary indexes, jobs and statistics: the descriptions the catalog keeps and the shapes storage answers in.

use crate::schema::SchemaKind;
use quiver_common::{PropType, Value};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// One column of an index.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexField {
    pub name: String,
    pub ty: PropType,
    /// Bytes of a string column kept in the key (`name(len)`, or N of a `FIXED_STRING(N)`); `None` otherwise.
    pub len: Option<u32>,
}

impl IndexField {
    /// Whether a value read back from the key equals the stored one (strings may be cut to `len`).
    pub fn exact(&self) -> bool {
        !matches!(self.ty, PropType::String | PropType::FixedString(_))
    }
}

/// Whether an index may serve queries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum IndexState {
    /// Entries of rows written before the index existed are still being added: queries must not use it.
    Building,
    Ready,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexDesc {
    /// Unique within the space.
    pub id: i32,
    pub name: String,
    pub kind: SchemaKind,
    pub schema_id: i32,
    pub schema_name: String,
    /// In key order; empty for an index of the tag or edge type itself.
    pub fields: Vec<IndexField>,
    pub comment: Option<String>,
    pub state: IndexState,
    /// `WITH (s2_max_level = n, s2_max_cells = n)` of a geo index, as given.
    #[serde(default)]
    pub params: IndexParams,
}

/// The options of a geo index; unset ones take NebulaGraph's defaults (`s2_max_level` 30, `s2_max_cells` 8).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexParams {
    pub s2_max_level: Option<u8>,
    pub s2_max_cells: Option<u8>,
}

impl IndexDesc {
    /// Whether this is a geo index: one field, of type geography, whose entries are S2 cells.
    pub fn is_geo(&self) -> bool {
        matches!(self.fields.as_slice(), [f] if matches!(f.ty, PropType::Geography(_)))
    }

    /// Whether a geo index holds only points (its column is `geography(point)`), which are filed under leaf cells.
    pub fn points_only(&self) -> bool {
        matches!(self.fields.as_slice(), [f] if f.ty == PropType::Geography(Some(quiver_common::geo::GeoShape::Point)))
    }

    /// The covering a geo index files values under and is searched with.
    pub fn cover_params(&self) -> quiver_common::geo::cells::CoverParams {
        let d = quiver_common::geo::cells::CoverParams::default();
        quiver_common::geo::cells::CoverParams {
            min_level: d.min_level,
            max_level: self.params.s2_max_level.unwrap_or(d.max_level),
            max_cells: self.params.s2_max_cells.map_or(d.max_cells, usize::from),
        }
    }
}

pub type IndexRef = Arc<IndexDesc>;

/// A range of one index to scan: `prefix` fixes the leading fields by equality; `range` bounds the next field.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct IndexScan {
    pub index: IndexRef,
    /// Values of the first `prefix.len()` fields.
    pub prefix: Vec<Value>,
    /// Bounds on field `prefix.len()`, each `(value, inclusive)`.
    pub range: Option<IndexRange>,
}

#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct IndexRange {
    pub lower: Option<(Value, bool)>,
    pub upper: Option<(Value, bool)>,
    /// `STARTS WITH`: the field's key bytes start with this string's bytes.
    pub starts_with: Option<String>,
    /// A geo index: the S2 cell-id ranges (inclusive) to read; an entry in any of them is a hit, to be re-checked
    /// against the predicate (cells only approximate a shape).
    pub cells: Vec<(u64, u64)>,
}

/// What an index entry points to.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum IndexHit {
    Vertex(Value),
    /// `(src, rank, dst)` of an out-edge of the index's edge type.
    Edge(Value, i64, Value),
}

/// A long-running admin task, as `SHOW JOBS` lists it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum JobKind {
    Compact,
    Flush,
    Stats,
    /// Fill the entries of these indexes from the rows written before they existed.
    RebuildIndex(SchemaKind),
}

impl JobKind {
    /// NebulaGraph's `JobType` name.
    pub fn name(self) -> &'static str {
        match self {
            JobKind::Compact => "COMPACT",
            JobKind::Flush => "FLUSH",
            JobKind::Stats => "STATS",
            JobKind::RebuildIndex(SchemaKind::Tag) => "REBUILD_TAG_INDEX",
            JobKind::RebuildIndex(SchemaKind::Edge) => "REBUILD_EDGE_INDEX",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum JobStatus {
    Queue,
    Running,
    Finished,
    Failed,
    Stopped,
}

impl JobStatus {
    pub fn name(self) -> &'static str {
        match self {
            JobStatus::Queue => "QUEUE",
            JobStatus::Running => "RUNNING",
            JobStatus::Finished => "FINISHED",
            JobStatus::Failed => "FAILED",
            JobStatus::Stopped => "STOPPED",
        }
    }

    pub fn is_done(self) -> bool {
        matches!(self, JobStatus::Finished | JobStatus::Failed | JobStatus::Stopped)
    }
}

/// A job as it is submitted: what it does, the index ids a rebuild fills, and the names the statement gave
/// (NebulaGraph's job `paras`: a rebuild's index names as written, which `SHOW TAG INDEX STATUS` lists even after an
/// index is dropped).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewJob {
    pub kind: JobKind,
    pub indexes: Vec<i32>,
    pub paras: Vec<String>,
}

impl NewJob {
    /// A job with no indexes and no parameters (compaction, flush, stats).
    pub fn of(kind: JobKind) -> NewJob {
        NewJob { kind, indexes: Vec::new(), paras: Vec::new() }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobInfo {
    pub id: i64,
    pub space_id: u32,
    pub kind: JobKind,
    /// Index ids of a rebuild.
    pub indexes: Vec<i32>,
    /// See [`NewJob::paras`] (absent from records written before they were kept).
    #[serde(default)]
    pub paras: Vec<String>,
    pub status: JobStatus,
    /// Seconds since the Unix epoch; 0 until started / stopped.
    pub start_secs: i64,
    pub stop_secs: i64,
    /// Rows done so far (rebuilds and stats), for progress.
    pub done: u64,
    /// Rows to do, as far as known when the job started (0 when unknown).
    pub total: u64,
    pub error: Option<String>,
}

impl JobInfo {
    /// A job just submitted: QUEUE, not started.
    pub fn queued(id: i64, space_id: u32, job: NewJob) -> JobInfo {
        JobInfo {
            id,
            space_id,
            kind: job.kind,
            indexes: job.indexes,
            paras: job.paras,
            status: JobStatus::Queue,
            start_secs: 0,
            stop_secs: 0,
            done: 0,
            total: 0,
            error: None,
        }
    }
}

/// Counts `SHOW STATS` shows, kept exact on every write.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SpaceStats {
    /// Rows per tag id.
    pub tags: Vec<(i32, i64)>,
    /// Out-edges per edge type.
    pub edges: Vec<(i32, i64)>,
    pub vertices: i64,
    pub total_edges: i64,
}

impl SpaceStats {
    /// Rows of the tag (`kind` Tag) or out-edges of the edge type `id`; 0 when none are counted.
    pub fn rows(&self, kind: SchemaKind, id: i32) -> i64 {
        let counts = if kind == SchemaKind::Tag { &self.tags } else { &self.edges };
        counts.iter().find(|(i, _)| *i == id).map_or(0, |(_, n)| *n)
    }
}
