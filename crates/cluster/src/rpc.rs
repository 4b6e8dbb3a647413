//! What graphd asks a storage host and what storage hosts ask each other (`docs/design/cluster.md` §2): the
//! requests as values ([`HostRequest`]), served by [`StorageHost::serve`], and their encoding between processes
//! ([`encode`], [`decode`]: postcard over serde, carried by the Raft port's service frames).
//!
//! The same values pass between a client and a host in one process ([`crate::SimCluster`] sends them through the
//! encoding too), so the conformance suite and the fault tests exercise exactly what crosses the network.
//!
//! Decoding is bounded: a frame is at most `RAFT_FRAME_BYTES_MAX` before it is read, postcard checks every claimed
//! length against the bytes left, and serde reserves at most a bounded capacity for a claimed element count.

use std::sync::Arc;

use quiver_api::*;
use quiver_common::budget::Budget;
use quiver_common::{QError, QResult, Value};
use quiver_kv::WriteBatch;
use quiver_raft::codec::{decode_batch, encode_batch, Reader};
use quiver_raft::{NodeId, ReplicaError};
use serde::{Deserialize, Serialize};

use crate::host::{HostError, StorageHost};

/// A request or reply between processes, with the meta group's applied index of the sender's catalog copy: a host
/// whose copy is older takes the catalog first (a write right after a DDL sees it, an index included), and so does
/// a client given a reply from a host whose copy is newer (the host changed an index's state).
#[derive(Debug, Serialize, Deserialize)]
pub struct Envelope<R> {
    pub catalog: u64,
    pub request: R,
}

/// A request to one storage host.
#[derive(Debug, Serialize, Deserialize)]
pub enum HostRequest {
    /// Runs `op` once this host confirmed it leads every partition of `lead` (graphd's reads and writes).
    Parts { space: SpaceDesc, lead: Vec<u32>, op: PartOp },
    /// Runs `op` over the whole space on this host, once it has caught up with every partition's leader.
    Whole { space: SpaceDesc, op: SpaceOp },
    /// An operation on this host's replica of a partition, which must lead its group (another host's chain or
    /// forwarded proposal).
    Replica { space: u32, part: u32, op: ReplicaOp },
    /// The read index of each of `parts` of `space`, whose replicas here lead them (another host catching up before
    /// a read of the whole space: one request per leader host, not one per partition).
    ReadIndexes { space: u32, parts: Vec<u32> },
    /// The partitions whose replica here believes it leads (SHOW HOSTS, SHOW PARTS).
    Leaders,
    /// A COMPACT or FLUSH of this host's own engine for `space` (every replica compacts itself, as in NebulaGraph),
    /// queued as this host's own job: answered with its id at once.
    EngineJob { space: SpaceDesc, kind: JobKind },
    /// Whether this host's engine job `id` of `space` is over.
    EngineJobDone { space: SpaceDesc, id: i64 },
    /// A fault test's network partition of this host's Raft traffic (on) or its end (off); served only by a
    /// storaged started with `--fault-injection`.
    CutOff(bool),
}

/// A read or write of partitions this host leads.
#[derive(Debug, Serialize, Deserialize)]
pub enum PartOp {
    GetVertices {
        vids: Vec<Value>,
        tags: Vec<SchemaRef>,
        props: PropSelection,
    },
    GetTagColumns {
        vids: Vec<Value>,
        tags: Vec<SchemaRef>,
        props: PropSelection,
    },
    GetEdges {
        schema: SchemaRef,
        keys: Vec<EdgeKeyVal>,
    },
    GetNeighbors(NeighborsRequest),
    /// Each partition's share of a statement: one write each, coordinated by that partition.
    Write(Vec<(u32, Vec<Mutation>)>),
    /// The edges of these vertices (both directions, vertex after vertex), to delete them with their edges.
    EdgesOf(Vec<Value>),
    /// One step of a GO walk from the frontier vertices of these partitions
    /// ([`quiver_storage::EmbeddedStorage::expand_step`]).
    ExpandStep {
        frontier: Vec<(Value, u64)>,
        edge_types: Vec<i32>,
        count_only: bool,
        budget: Budget,
    },
    /// `SHOW STATS` of these partitions.
    Stats,
    /// The vertices of each of these partitions (of a tag, or every vertex), at most `limit` each, by partition.
    ScanVertices {
        schema: Option<SchemaRef>,
        limit: u64,
    },
    /// CLEAR SPACE, coordinated by this partition (the range deletes of the others are a chain's remote parts).
    ClearSpace,
    /// An index's entries deleted, coordinated by this partition.
    DropIndexData(i32),
    /// The rows of a dropped tag or edge type in these partitions deleted.
    DropSchemaData(SchemaRef),
    /// The index hits in each of these partitions, per scan ([`quiver_storage::EmbeddedStorage::scan_index_in`]).
    ScanIndex {
        scans: Vec<IndexScan>,
        budget: Budget,
    },
    /// An index's entries for the rows of these partitions, written anew.
    BuildIndex(IndexRef),
    /// One chunk of an index's build in the one partition asked
    /// ([`quiver_storage::EmbeddedStorage::build_index_chunk`]): a REBUILD job's task, a request per chunk.
    BuildIndexChunk {
        index: IndexRef,
        from: Option<Vec<u8>>,
    },
    /// These partitions' `SHOW STATS` counters counted anew from their rows (a STATS job's task).
    Recount,
    /// One step of a read-modify-write of one row (see [`RmwStep`]).
    Rmw {
        target: RmwTarget,
        schema: SchemaRef,
        step: RmwStep,
    },
}

#[derive(Debug, Serialize, Deserialize)]
pub enum RmwTarget {
    Vertex(Value),
    Edge(EdgeKeyVal),
}

/// A read-modify-write crosses the network as a compare-and-set: the client reads the row, decides, and asks for
/// its decision to be written only if the row is still what it read; otherwise it decides again on the new row.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum RmwStep {
    Read,
    /// Writes `values` (or keeps the row, `None`) if the row is still `seen`.
    Write {
        seen: Option<Props>,
        values: Option<Vec<Value>>,
    },
}

/// What a read-modify-write step found.
#[derive(Debug, Serialize, Deserialize)]
pub enum RmwOutcome {
    /// The row as it is now ([`RmwStep::Read`]).
    Seen(Option<Props>),
    /// The decision was applied: the row as the write left it.
    Done(Option<Props>),
    /// The row changed since it was read: nothing was written; the row as it is now.
    Changed(Option<Props>),
}

/// A request over a whole space.
#[derive(Debug, Serialize, Deserialize)]
pub enum SpaceOp {
    Expand(ExpandRequest),
    FindPaths(PathSearchRequest),
    /// GET SUBGRAPH's rounds, with the query layer's answers so far to "which of these vertices may be expanded"
    /// (one per round from the second, with the vertices it was asked about): the host runs the rounds and either
    /// returns them or the next question ([`SubgraphAnswer::Decide`]).
    Subgraph {
        req: SubgraphRequest,
        decided: Vec<(Vec<Value>, Vec<bool>)>,
    },
    ScanVertices {
        schema: Option<SchemaRef>,
        limit: u64,
    },
    ClearSpace,
    DropSchemaData(SchemaRef),
    ScanIndex {
        scans: Vec<IndexScan>,
        budget: Budget,
    },
    DropIndexData(i32),
    Stats,
}

#[derive(Debug, Serialize, Deserialize)]
pub enum SubgraphAnswer {
    Rounds(Vec<SubgraphRound>),
    /// Round `round`'s question was not answered (or was answered about other vertices: the graph changed between
    /// two calls): which of `vertices` may be expanded.
    Decide {
        round: usize,
        vertices: Vec<Value>,
    },
}

/// What a partition's leader is asked by another host. Batches travel in the Raft log's own encoding.
#[derive(Debug, Serialize, Deserialize)]
pub enum ReplicaOp {
    Write(Vec<u8>),
    Fenced { fence: Vec<u8>, term: u64, batch: Vec<u8> },
    ReadIndex,
}

/// A served request's answer.
#[derive(Debug, Serialize, Deserialize)]
pub enum Answer {
    Vertices(Vec<Option<VertexData>>),
    TagColumns(Vec<TagColumns>),
    Edges(Vec<Option<Props>>),
    Neighbors(Vec<NeighborEdge>),
    /// Per partition asked, in order: its read index, or why its replica here gave none.
    ReadIndexes(Vec<Result<u64, ReplicaError>>),
    Done,
    EdgeKeys(Vec<EdgeKeyVal>),
    Rmw(RmwOutcome),
    Expand(ExpandResult),
    Paths(PathSearchResult),
    Subgraph(SubgraphAnswer),
    Vids(Vec<Value>),
    Hits(Vec<IndexHit>),
    Stats(SpaceStats),
    /// A replica's write was committed in this term.
    Term(u64),
    /// A fenced write was committed: whether it was applied (false: the fence held a newer term).
    Fenced(bool),
    ReadIndex(u64),
    JobId(i64),
    /// Whether an engine job is over ([`HostRequest::EngineJobDone`]).
    Finished(bool),
    /// Rows an index build's chunk indexed, and where the next starts ([`PartOp::BuildIndexChunk`]).
    Chunk {
        rows: u64,
        next: Option<Vec<u8>>,
    },
    /// Vertices by partition ([`PartOp::ScanVertices`]).
    PartVids(Vec<(u32, Vec<Value>)>),
    /// Index hits by partition, per scan ([`PartOp::ScanIndex`]).
    PartHits(Vec<(u32, Vec<Vec<IndexHit>>)>),
    /// `(space, part, term)` of each partition whose replica here believes it leads, in that term.
    Leaders(Vec<(u32, u32, u64)>),
}

/// Why a host did not answer a request, as it crosses the network.
#[derive(Debug, Serialize, Deserialize)]
pub enum Refusal {
    NotLeader {
        part: u32,
        leader: Option<NodeId>,
    },
    Failed(QError),
    /// The host does not carry every partition of the space (a [`HostRequest::Whole`]).
    NotCarried,
    Replica(ReplicaError),
    Behind(String),
}

pub type Reply = Result<Answer, Refusal>;

impl From<HostError> for Refusal {
    fn from(e: HostError) -> Refusal {
        match e {
            HostError::NotLeader { part, leader } => Refusal::NotLeader { part, leader },
            HostError::Failed(e) => Refusal::Failed(e),
            HostError::NotCarried => Refusal::NotCarried,
            HostError::Replica(e) => Refusal::Replica(e),
            HostError::Behind(e) => Refusal::Behind(e),
        }
    }
}

impl From<Refusal> for HostError {
    fn from(r: Refusal) -> HostError {
        match r {
            Refusal::NotLeader { part, leader } => HostError::NotLeader { part, leader },
            Refusal::Failed(e) => HostError::Failed(e),
            Refusal::NotCarried => HostError::NotCarried,
            Refusal::Replica(e) => HostError::Replica(e),
            Refusal::Behind(e) => HostError::Behind(e),
        }
    }
}

pub use quiver_metad::service::encode;

/// Decodes a whole message: a storage error if it does not decode or leaves bytes over.
pub fn decode<'a, T: Deserialize<'a>>(bytes: &'a [u8], what: &str) -> QResult<T> {
    quiver_metad::service::decode_message(bytes, what).map_err(QError::storage)
}

pub fn batch_bytes(batch: &WriteBatch) -> Vec<u8> {
    let mut out = Vec::new();
    encode_batch(&mut out, batch);
    out
}

pub fn bytes_batch(bytes: &[u8]) -> Result<WriteBatch, HostError> {
    let mut r = Reader::new(bytes);
    let batch = decode_batch(&mut r).map_err(|e| HostError::Failed(QError::storage(e.to_string())))?;
    if !r.is_empty() {
        return Err(HostError::Failed(QError::storage("a write batch with bytes after its end")));
    }
    Ok(batch)
}

/// A storage host as a client reaches it: in this process, or behind the network.
pub trait HostHandle: Send + Sync {
    fn id(&self) -> NodeId;
    fn call(&self, request: HostRequest) -> Result<Answer, HostError>;
}

/// A host in this process, reached through the encoding (what the simulated cluster hands its clients).
pub struct Encoded(pub Arc<StorageHost>);

impl HostHandle for Encoded {
    fn id(&self) -> NodeId {
        self.0.id()
    }

    fn call(&self, request: HostRequest) -> Result<Answer, HostError> {
        let bytes = encode(&request);
        let request: HostRequest = decode(&bytes, "storage request").map_err(HostError::Failed)?;
        let reply: Reply = self.0.serve(request).map_err(Refusal::from);
        let bytes = encode(&reply);
        let reply: Reply = decode(&bytes, "storage reply").map_err(HostError::Failed)?;
        reply.map_err(HostError::from)
    }
}

/// A reply that is not the answer its request has.
pub fn unexpected(answer: Answer) -> QError {
    QError::storage(format!("a storage host answered with an unexpected {answer:?}"))
}

impl StorageHost {
    /// Serves one request: the storage host's side of [`HostRequest`].
    pub fn serve(&self, request: HostRequest) -> Result<Answer, HostError> {
        match request {
            HostRequest::Parts { space, lead, op } => {
                self.lead(space.id, &lead)?;
                self.serve_parts(&space, &lead, op).map_err(HostError::Failed)
            }
            HostRequest::Whole { space, op } => {
                if !self.carries_all(&space) {
                    return Err(HostError::NotCarried);
                }
                self.catch_up(&space).map_err(|e| HostError::Behind(e.message))?;
                self.serve_space(&space, op).map_err(HostError::Failed)
            }
            HostRequest::Replica { space, part, op } => {
                let replica = self.replica(space, part).ok_or(HostError::NotLeader { part, leader: None })?;
                let answer = match op {
                    ReplicaOp::Write(batch) => {
                        let batch = bytes_batch(&batch)?;
                        self.block_on(replica.write(batch)).map(|id| Answer::Term(id.leader_id.term))
                    }
                    ReplicaOp::Fenced { fence, term, batch } => {
                        let batch = bytes_batch(&batch)?;
                        self.block_on(replica.write_fenced(fence, term, batch)).map(Answer::Fenced)
                    }
                    ReplicaOp::ReadIndex => self.block_on(replica.read_index()).map(Answer::ReadIndex),
                };
                answer.map_err(HostError::Replica)
            }
            HostRequest::ReadIndexes { space, parts } => Ok(Answer::ReadIndexes(self.read_indexes(space, &parts))),
            HostRequest::Leaders => Ok(Answer::Leaders(self.leading())),
            HostRequest::EngineJob { space, kind: kind @ (JobKind::Compact | JobKind::Flush) } => {
                let id = self.storage().submit_job(&space, NewJob::of(kind)).map_err(HostError::Failed)?;
                Ok(Answer::JobId(id))
            }
            HostRequest::EngineJobDone { space, id } => {
                let jobs = self.storage().jobs(&space).map_err(HostError::Failed)?;
                let job = jobs
                    .iter()
                    .find(|j| j.id == id)
                    .ok_or_else(|| HostError::Failed(QError::execution(format!("this host has no engine job {id}"))))?;
                Ok(Answer::Finished(job.status.is_done()))
            }
            HostRequest::EngineJob { kind, .. } => Err(HostError::Failed(QError::execution(format!(
                "a {} job is not a job of one host's engine",
                kind.name()
            )))),
            HostRequest::CutOff(_) => {
                Err(HostError::Failed(QError::execution("fault injection is off on this storage host")))
            }
        }
    }

    fn serve_parts(&self, space: &SpaceDesc, parts: &[u32], op: PartOp) -> QResult<Answer> {
        let storage = self.storage();
        Ok(match op {
            PartOp::GetVertices { vids, tags, props } => {
                Answer::Vertices(storage.get_vertices(space, &vids, &tags, &props)?)
            }
            PartOp::GetTagColumns { vids, tags, props } => {
                Answer::TagColumns(storage.get_tag_columns(space, &vids, &tags, &props)?)
            }
            PartOp::GetEdges { schema, keys } => Answer::Edges(storage.get_edges(space, &schema, &keys)?),
            PartOp::GetNeighbors(req) => Answer::Neighbors(storage.get_neighbors(space, &req)?),
            PartOp::Write(shares) => {
                for (part, mutations) in shares {
                    self.coordinate(part, || storage.write(space, mutations))?;
                }
                Answer::Done
            }
            PartOp::EdgesOf(vids) => {
                let mut keys = Vec::new();
                for vid in &vids {
                    keys.extend(storage.edges_of(space, vid)?);
                }
                Answer::EdgeKeys(keys)
            }
            PartOp::Stats => Answer::Stats(storage.stats_of_parts(space, parts)?),
            PartOp::ScanVertices { schema, limit } => {
                let limit = usize::try_from(limit).unwrap_or(usize::MAX);
                let mut by_part = Vec::with_capacity(parts.len());
                for &part in parts {
                    by_part.push((part, storage.scan_vertices_in(space, &[part], schema.as_ref(), limit)?));
                }
                Answer::PartVids(by_part)
            }
            PartOp::ClearSpace => {
                let part = parts.first().copied().unwrap_or(1);
                self.coordinate(part, || storage.clear_space(space))?;
                Answer::Done
            }
            PartOp::ScanIndex { scans, budget } => {
                Answer::PartHits(storage.scan_index_in(space, parts, &scans, &budget)?)
            }
            PartOp::DropSchemaData(schema) => {
                for &part in parts {
                    self.coordinate(part, || storage.drop_schema_data_in(space, &schema, &[part]))?;
                }
                Answer::Done
            }
            PartOp::BuildIndex(index) => {
                for &part in parts {
                    self.coordinate(part, || storage.build_index_in(space, &index, &[part]))?;
                }
                Answer::Done
            }
            PartOp::BuildIndexChunk { index, from } => {
                let &[part] = parts else {
                    return Err(QError::storage("an index build's chunk is asked of one partition"));
                };
                let (rows, next) =
                    self.coordinate(part, || storage.build_index_chunk(space, &index, part, from.as_deref()))?;
                Answer::Chunk { rows, next }
            }
            PartOp::Recount => {
                for &part in parts {
                    self.coordinate(part, || storage.recount_part(space, part))?;
                }
                Answer::Done
            }
            PartOp::DropIndexData(id) => {
                let part = parts.first().copied().unwrap_or(1);
                self.coordinate(part, || storage.drop_index_data(space, id))?;
                Answer::Done
            }
            PartOp::ExpandStep { frontier, edge_types, count_only, budget } => {
                Answer::Expand(storage.expand_step(space, &frontier, &edge_types, count_only, &budget)?)
            }
            PartOp::Rmw { target, schema, step } => {
                let part = match &target {
                    RmwTarget::Vertex(vid) => quiver_storage::keys::part_of(space, vid),
                    RmwTarget::Edge(key) => quiver_storage::keys::part_of(space, &key.src),
                };
                let mut changed = None;
                let mut decide = |now: Option<&Props>| -> QResult<RmwDecision> {
                    match &step {
                        RmwStep::Read => {
                            changed = Some(now.cloned());
                            Ok(RmwDecision::Keep)
                        }
                        RmwStep::Write { seen, .. } if seen.as_ref() != now => {
                            changed = Some(now.cloned());
                            Ok(RmwDecision::Keep)
                        }
                        RmwStep::Write { values: Some(values), .. } => Ok(RmwDecision::Write(values.clone())),
                        RmwStep::Write { values: None, .. } => Ok(RmwDecision::Keep),
                    }
                };
                let done = self.coordinate(part, || match &target {
                    RmwTarget::Vertex(vid) => storage.rmw_vertex(space, vid, &schema, &mut decide),
                    RmwTarget::Edge(key) => storage.rmw_edge(space, key, &schema, &mut decide),
                })?;
                Answer::Rmw(match (step, changed) {
                    (RmwStep::Read, now) => RmwOutcome::Seen(now.flatten()),
                    (RmwStep::Write { .. }, Some(now)) => RmwOutcome::Changed(now),
                    (RmwStep::Write { .. }, None) => RmwOutcome::Done(done),
                })
            }
        })
    }

    fn serve_space(&self, space: &SpaceDesc, op: SpaceOp) -> QResult<Answer> {
        let storage = self.storage();
        Ok(match op {
            SpaceOp::Expand(req) => Answer::Expand(storage.expand(space, &req)?),
            SpaceOp::FindPaths(req) => Answer::Paths(storage.find_paths(space, &req)?),
            SpaceOp::Subgraph { req, decided } => {
                let (mut round, mut question) = (0, None);
                let rounds = storage.subgraph(space, &req, &mut |vids: &[Value]| {
                    let i = round;
                    round += 1;
                    match decided.get(i) {
                        Some((asked, keep)) if asked.as_slice() == vids => Ok(keep.clone()),
                        _ => {
                            question = Some((i, vids.to_vec()));
                            Err(QError::execution("a subgraph round waits for the query layer's answer"))
                        }
                    }
                });
                Answer::Subgraph(match (rounds, question) {
                    (_, Some((round, vertices))) => SubgraphAnswer::Decide { round, vertices },
                    (rounds, None) => SubgraphAnswer::Rounds(rounds?),
                })
            }
            SpaceOp::ScanVertices { schema, limit } => {
                let limit = usize::try_from(limit).unwrap_or(usize::MAX);
                Answer::Vids(storage.scan_vertices(space, schema.as_ref(), limit)?)
            }
            SpaceOp::ClearSpace => {
                storage.clear_space(space)?;
                Answer::Done
            }
            SpaceOp::DropSchemaData(schema) => {
                storage.drop_schema_data(space, &schema)?;
                Answer::Done
            }
            SpaceOp::ScanIndex { scans, budget } => Answer::Hits(storage.scan_index(space, &scans, &budget)?),
            SpaceOp::DropIndexData(id) => {
                storage.drop_index_data(space, id)?;
                Answer::Done
            }
            SpaceOp::Stats => Answer::Stats(storage.stats(space)?),
        })
    }
}

impl HostHandle for StorageHost {
    fn id(&self) -> NodeId {
        StorageHost::id(self)
    }

    fn call(&self, request: HostRequest) -> Result<Answer, HostError> {
        self.serve(request)
    }
}
