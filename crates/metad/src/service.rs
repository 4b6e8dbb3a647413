//! The meta service between processes: what graphd and storaged ask a metad ([`MetaRequest`]), served by the meta
//! group's leader ([`MetaService`]), and the client side ([`MetaClient`]) that finds the leader among the metads.
//!
//! Requests travel on the Raft port's service frames (`quiver_raft::tcp`), encoded with postcard; a metad that
//! does not lead the meta group answers [`MetaRefusal::NotLeader`] with the leader's address, and the client asks
//! there (NebulaGraph's meta client does the same on `E_LEADER_CHANGED`).

use std::sync::Arc;
use std::time::Duration;

use quiver_api::*;
use quiver_common::{QError, QResult};
use quiver_raft::tcp::{Service, TcpTransport};
use quiver_raft::NodeId;
use serde::{Deserialize, Serialize};

use crate::{Liveness, MetaReplica};

/// How long a request to a metad waits for its answer.
pub const META_CALL_TIMEOUT: Duration = Duration::from_secs(15);

/// A process's node id from its address (`a.b.c.d:port`): the IPv4 address and the port, so a leader's id names
/// where it listens without a table. Hostnames are not resolved.
pub fn node_id(addr: &str) -> QResult<NodeId> {
    let parsed: std::net::SocketAddrV4 =
        addr.parse().map_err(|_| QError::execution(format!("`{addr}' is not an IPv4 address with a port")))?;
    Ok((u64::from(u32::from(*parsed.ip())) << 16) | u64::from(parsed.port()))
}

/// The address a [`node_id`] was made from.
pub fn node_addr(id: NodeId) -> String {
    let ip = std::net::Ipv4Addr::from((id >> 16) as u32);
    format!("{ip}:{}", id & 0xffff)
}

#[derive(Debug, Serialize, Deserialize)]
pub enum MetaRequest {
    /// The catalog's key-value pairs if the meta group has applied past `known` (a log index).
    Catalog {
        known: u64,
    },
    Call(CatalogCall),
    /// A storage host is alive.
    Heartbeat {
        host: String,
    },
    AddHosts(Vec<String>),
    DropHosts(Vec<String>),
    /// Every registered storage host and whether it is online.
    Hosts,
}

/// The catalog's writes, as the [`Catalog`] trait has them.
#[derive(Debug, Serialize, Deserialize)]
pub enum CatalogCall {
    CreateSpace {
        space: NewSpace,
        if_not_exists: bool,
    },
    DropSpace {
        name: String,
        if_exists: bool,
    },
    CreateSchema {
        space: SpaceDesc,
        kind: SchemaKind,
        name: String,
        props: Vec<PropDef>,
        ttl_duration: i64,
        ttl_col: String,
        comment: Option<String>,
        if_not_exists: bool,
    },
    AlterSchema {
        space: SpaceDesc,
        kind: SchemaKind,
        name: String,
        changes: Vec<SchemaChange>,
        options: SchemaOptionsChange,
    },
    DropSchema {
        space: SpaceDesc,
        kind: SchemaKind,
        name: String,
        if_exists: bool,
    },
    CreateIndex {
        space: SpaceDesc,
        index: IndexDesc,
        if_not_exists: bool,
    },
    DropIndex {
        space: SpaceDesc,
        kind: SchemaKind,
        name: String,
        if_exists: bool,
    },
    SetIndexState {
        space: SpaceDesc,
        id: i32,
        state: IndexState,
    },
    CreateUser {
        name: String,
        password_hash: String,
        if_not_exists: bool,
    },
    SetPassword {
        name: String,
        password_hash: String,
    },
    DropUser {
        name: String,
        if_exists: bool,
    },
    Grant {
        name: String,
        space: u32,
        role: Role,
    },
    Revoke {
        name: String,
        space: u32,
        role: Role,
    },
    AddJob {
        space_id: u32,
        job: NewJob,
    },
    /// Boxed: two records would make every request as large.
    SwapJob {
        seen: Box<JobRecord>,
        new: Box<JobRecord>,
    },
}

#[derive(Debug, Serialize, Deserialize)]
pub enum MetaAnswer {
    /// The meta group's applied index and, if it is past the one the asker knew, every catalog pair.
    Catalog {
        index: u64,
        pairs: Option<Vec<(Vec<u8>, Vec<u8>)>>,
    },
    Bool(bool),
    Space(Option<Arc<SpaceDesc>>),
    Schema(Option<SchemaRef>),
    Index(Option<IndexRef>),
    Done,
    Hosts(Vec<(String, bool)>),
    Job(JobRecord),
}

#[derive(Debug, Serialize, Deserialize)]
pub enum MetaRefusal {
    /// This metad does not lead the meta group; the leader's address if it knows one.
    NotLeader(Option<String>),
    Failed(QError),
}

pub type MetaReply = Result<MetaAnswer, MetaRefusal>;

/// A message between Quiver's processes, encoded (postcard over serde; the storage service's too).
pub fn encode<T: Serialize>(value: &T) -> Vec<u8> {
    postcard::to_allocvec(value).expect("an in-memory value encodes")
}

/// Decodes a whole message (`what`, for the error): why not if it does not decode or leaves bytes over.
pub fn decode_message<'a, T: Deserialize<'a>>(bytes: &'a [u8], what: &str) -> Result<T, String> {
    match postcard::take_from_bytes(bytes) {
        Ok((value, [])) => Ok(value),
        Ok((_, rest)) => Err(format!("a {what} with {} bytes after its end", rest.len())),
        Err(e) => Err(format!("a {what} that does not decode: {e}")),
    }
}

fn decode<'a, T: Deserialize<'a>>(bytes: &'a [u8], what: &str) -> QResult<T> {
    decode_message(bytes, what).map_err(QError::execution)
}

/// A metad's side: answers on the meta group's leader.
pub struct MetaService {
    pub meta: Arc<MetaReplica>,
    pub liveness: Arc<Liveness>,
    pub engine: Arc<dyn quiver_kv::KvEngine>,
    pub runtime: tokio::runtime::Handle,
}

impl Service for MetaService {
    fn serve(&self, request: &[u8]) -> Vec<u8> {
        let reply: MetaReply = match decode::<MetaRequest>(request, "meta request") {
            Ok(request) => self.answer(request),
            Err(e) => Err(MetaRefusal::Failed(e)),
        };
        encode(&reply)
    }
}

impl MetaService {
    fn not_leader(&self) -> MetaRefusal {
        MetaRefusal::NotLeader(self.meta.replica.leader().map(node_addr))
    }

    fn answer(&self, request: MetaRequest) -> MetaReply {
        // Only the leader answers, after confirming it leads and has applied everything committed before.
        let confirmed = self
            .runtime
            .block_on(async { tokio::time::timeout(crate::META_COMMIT_TIMEOUT, self.meta.replica.linearize()).await });
        match confirmed {
            Ok(Ok(())) => {}
            Ok(Err(quiver_raft::ReplicaError::NotLeader { .. })) => return Err(self.not_leader()),
            Ok(Err(e)) => return Err(MetaRefusal::Failed(QError::execution(format!("the meta service: {e}")))),
            Err(_) => return Err(MetaRefusal::NotLeader(None)),
        }
        let failed = MetaRefusal::Failed;
        let catalog = &self.meta.catalog;
        Ok(match request {
            MetaRequest::Catalog { known } => {
                let index = self.meta.replica.applied();
                if index <= known {
                    MetaAnswer::Catalog { index, pairs: None }
                } else {
                    let (start, end) = quiver_meta::meta_range();
                    let mut pairs = Vec::new();
                    self.engine
                        .scan_range(&start, &end, &mut |k, v| {
                            pairs.push((k.to_vec(), v.to_vec()));
                            true
                        })
                        .map_err(|e| failed(QError::execution(e.to_string())))?;
                    MetaAnswer::Catalog { index, pairs: Some(pairs) }
                }
            }
            MetaRequest::Heartbeat { host } => {
                self.meta.heartbeat(&self.liveness, &host).map_err(failed)?;
                MetaAnswer::Done
            }
            MetaRequest::AddHosts(hosts) => {
                // OFFLINE until each heartbeats, as in NebulaGraph.
                catalog.add_hosts(&hosts).map_err(failed)?;
                MetaAnswer::Done
            }
            MetaRequest::DropHosts(hosts) => {
                catalog.drop_hosts(&hosts).map_err(failed)?;
                MetaAnswer::Done
            }
            MetaRequest::Hosts => MetaAnswer::Hosts(self.meta.host_status(&self.liveness)),
            MetaRequest::Call(call) => self.call(call).map_err(failed)?,
        })
    }

    fn call(&self, call: CatalogCall) -> QResult<MetaAnswer> {
        let c = &self.meta.catalog;
        Ok(match call {
            CatalogCall::CreateSpace { space, if_not_exists } => {
                MetaAnswer::Bool(self.meta.create_space(&self.liveness, space, if_not_exists)?)
            }
            CatalogCall::DropSpace { name, if_exists } => MetaAnswer::Space(c.drop_space(&name, if_exists)?),
            CatalogCall::CreateSchema { space, kind, name, props, ttl_duration, ttl_col, comment, if_not_exists } => {
                MetaAnswer::Bool(c.create_schema(
                    &space,
                    kind,
                    &name,
                    props,
                    ttl_duration,
                    ttl_col,
                    comment,
                    if_not_exists,
                )?)
            }
            CatalogCall::AlterSchema { space, kind, name, changes, options } => {
                c.alter_schema(&space, kind, &name, changes, options)?;
                MetaAnswer::Done
            }
            CatalogCall::DropSchema { space, kind, name, if_exists } => {
                MetaAnswer::Schema(c.drop_schema(&space, kind, &name, if_exists)?)
            }
            CatalogCall::CreateIndex { space, index, if_not_exists } => {
                MetaAnswer::Index(c.create_index(&space, index, if_not_exists)?)
            }
            CatalogCall::DropIndex { space, kind, name, if_exists } => {
                MetaAnswer::Index(c.drop_index(&space, kind, &name, if_exists)?)
            }
            CatalogCall::SetIndexState { space, id, state } => {
                c.set_index_state(&space, id, state)?;
                MetaAnswer::Done
            }
            CatalogCall::CreateUser { name, password_hash, if_not_exists } => {
                MetaAnswer::Bool(c.create_user(&name, password_hash, if_not_exists)?)
            }
            CatalogCall::SetPassword { name, password_hash } => {
                c.set_password(&name, password_hash)?;
                MetaAnswer::Done
            }
            CatalogCall::DropUser { name, if_exists } => MetaAnswer::Bool(c.drop_user(&name, if_exists)?),
            CatalogCall::Grant { name, space, role } => {
                c.grant(&name, space, role)?;
                MetaAnswer::Done
            }
            CatalogCall::Revoke { name, space, role } => {
                c.revoke(&name, space, role)?;
                MetaAnswer::Done
            }
            CatalogCall::AddJob { space_id, job } => MetaAnswer::Job(c.add_job(space_id, job)?),
            CatalogCall::SwapJob { seen, new } => MetaAnswer::Bool(c.swap_job(&seen, *new)?),
        })
    }
}

/// The client side: asks the metads, following the leader.
pub struct MetaClient {
    metas: Vec<String>,
    leader: std::sync::Mutex<Option<String>>,
    transport: Arc<TcpTransport>,
    runtime: tokio::runtime::Handle,
}

impl MetaClient {
    pub fn new(metas: Vec<String>, transport: Arc<TcpTransport>, runtime: tokio::runtime::Handle) -> MetaClient {
        MetaClient { metas, leader: Default::default(), transport, runtime }
    }

    /// The metads' addresses.
    pub fn metas(&self) -> &[String] {
        &self.metas
    }

    /// The meta leader as last found, asking the metads if none is known.
    pub fn leader(&self) -> QResult<String> {
        if let Some(l) = self.leader.lock().expect("lock poisoned").clone() {
            return Ok(l);
        }
        self.call(&MetaRequest::Hosts)?;
        self.leader.lock().expect("lock poisoned").clone().ok_or_else(|| QError::execution("no meta leader"))
    }

    /// Sends `request` to the meta leader, looking for it among the metads until [`META_CALL_TIMEOUT`] has passed.
    /// Call from a thread outside the runtime.
    pub fn call(&self, request: &MetaRequest) -> QResult<MetaAnswer> {
        let bytes = encode(request);
        let started = std::time::Instant::now();
        let mut last;
        let mut turn = 0usize;
        loop {
            let addr = self.leader.lock().expect("lock poisoned").clone().unwrap_or_else(|| {
                turn += 1;
                self.metas[turn % self.metas.len()].clone()
            });
            let sent = self.runtime.block_on(self.transport.call_service(&addr, &bytes, META_CALL_TIMEOUT));
            match sent
                .map_err(|e| e.to_string())
                .and_then(|r| decode::<MetaReply>(&r, "meta reply").map_err(|e| e.message))
            {
                Ok(Ok(answer)) => {
                    *self.leader.lock().expect("lock poisoned") = Some(addr);
                    return Ok(answer);
                }
                Ok(Err(MetaRefusal::Failed(e))) => return Err(e),
                Ok(Err(MetaRefusal::NotLeader(hint))) => {
                    last = format!("{addr} does not lead the meta service");
                    *self.leader.lock().expect("lock poisoned") = hint;
                }
                Err(e) => {
                    last = e;
                    *self.leader.lock().expect("lock poisoned") = None;
                }
            }
            if started.elapsed() > META_CALL_TIMEOUT {
                return Err(QError::execution(format!("the meta service did not answer: {last}")));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}
