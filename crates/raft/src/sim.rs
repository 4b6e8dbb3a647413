//! An in-process network for simulated clusters: every host's messages are delivered by calling the receiving
//! [`RaftHost`] directly, through faults chosen by a seeded generator — dropped requests, lost replies, duplicated
//! deliveries, delays, and cut links (a partition is a set of cut links).

use std::collections::{BTreeSet, HashMap};
use std::future::Future;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use quiver_common::rng::Rng;

use crate::host::{network_error, unreachable};
use crate::{
    AppendEntriesRequest, AppendEntriesResponse, GroupId, InstallSnapshotError, InstallSnapshotRequest,
    InstallSnapshotResponse, NodeId, RaftError, RaftHost, RpcError, Target, Transport, VoteRequest, VoteResponse,
};

/// The faults applied to each message, decided independently per message.
#[derive(Debug, Clone, Default)]
pub struct Faults {
    /// Requests lost before delivery, per thousand.
    pub drop_request_per_mille: u64,
    /// Replies lost after delivery (the sender cannot tell whether it happened), per thousand.
    pub drop_reply_per_mille: u64,
    /// Requests delivered twice, per thousand.
    pub duplicate_per_mille: u64,
    /// Each message waits a uniformly random time up to this before delivery.
    pub max_delay: Duration,
}

/// What happened to messages so far.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NetStats {
    pub delivered: u64,
    pub dropped: u64,
    pub duplicated: u64,
    pub cut: u64,
}

struct State {
    faults: Faults,
    /// Directed links that deliver nothing.
    cut: BTreeSet<(NodeId, NodeId)>,
    rng: Rng,
    stats: NetStats,
}

pub struct SimNet {
    hosts: RwLock<HashMap<NodeId, Arc<RaftHost>>>,
    state: Mutex<State>,
}

struct Plan {
    delay: Duration,
    drop_request: bool,
    drop_reply: bool,
    duplicate: bool,
}

impl SimNet {
    pub fn new(seed: u64) -> Arc<SimNet> {
        Arc::new(SimNet {
            hosts: RwLock::new(HashMap::new()),
            state: Mutex::new(State {
                faults: Faults::default(),
                cut: BTreeSet::new(),
                rng: Rng(seed.max(1)),
                stats: NetStats::default(),
            }),
        })
    }

    /// Makes `host` reachable (again, after a restart).
    pub fn add_host(&self, host: Arc<RaftHost>) {
        self.hosts.write().expect("hosts lock").insert(host.id(), host);
    }

    /// Makes a host unreachable, as if its process died.
    pub fn remove_host(&self, id: NodeId) -> Option<Arc<RaftHost>> {
        self.hosts.write().expect("hosts lock").remove(&id)
    }

    pub fn transport(self: &Arc<Self>, from: NodeId) -> Arc<SimTransport> {
        Arc::new(SimTransport { net: self.clone(), from })
    }

    pub fn set_faults(&self, faults: Faults) {
        self.state.lock().expect("net lock").faults = faults;
    }

    /// Cuts every link between `side` and the other nodes, both ways.
    pub fn partition(&self, side: &[NodeId], all: &[NodeId]) {
        let mut s = self.state.lock().expect("net lock");
        for &a in side {
            for &b in all.iter().filter(|b| !side.contains(b)) {
                s.cut.insert((a, b));
                s.cut.insert((b, a));
            }
        }
    }

    /// Restores every link.
    pub fn heal(&self) {
        self.state.lock().expect("net lock").cut.clear();
    }

    pub fn stats(&self) -> NetStats {
        self.state.lock().expect("net lock").stats.clone()
    }

    fn is_cut(&self, from: NodeId, to: NodeId) -> bool {
        self.state.lock().expect("net lock").cut.contains(&(from, to))
    }

    fn plan(&self, from: NodeId, to: NodeId) -> Option<Plan> {
        let mut s = self.state.lock().expect("net lock");
        if s.cut.contains(&(from, to)) {
            s.stats.cut += 1;
            return None;
        }
        let f = s.faults.clone();
        let mut per_mille = |p: u64| p > 0 && s.rng.below(1000) < p;
        let drop_request = per_mille(f.drop_request_per_mille);
        let drop_reply = per_mille(f.drop_reply_per_mille);
        let duplicate = per_mille(f.duplicate_per_mille);
        let max = f.max_delay.as_micros() as u64;
        let delay = Duration::from_micros(if max == 0 { 0 } else { s.rng.below(max + 1) });
        if drop_request || drop_reply {
            s.stats.dropped += 1;
        } else {
            s.stats.delivered += 1;
        }
        if duplicate {
            s.stats.duplicated += 1;
        }
        Some(Plan { delay, drop_request, drop_reply, duplicate })
    }

    async fn deliver<Req, Resp, E, F, Fut>(
        &self,
        from: NodeId,
        to: NodeId,
        req: Req,
        timeout: Duration,
        call: F,
    ) -> Result<Resp, RpcError<E>>
    where
        Req: Clone,
        E: std::error::Error,
        F: Fn(Arc<RaftHost>, Req) -> Fut,
        Fut: Future<Output = Result<Resp, RpcError<E>>>,
    {
        let Some(plan) = self.plan(from, to) else {
            return Err(unreachable(&format!("link {from} -> {to} is cut")));
        };
        if !plan.delay.is_zero() {
            tokio::time::sleep(plan.delay.min(timeout)).await;
        }
        if plan.drop_request || plan.delay >= timeout {
            return Err(network_error(&format!("message {from} -> {to} lost")));
        }
        let Some(host) = self.hosts.read().expect("hosts lock").get(&to).cloned() else {
            return Err(unreachable(&format!("node {to} is down")));
        };
        if plan.duplicate {
            let _ = call(host.clone(), req.clone()).await;
        }
        let reply = match tokio::time::timeout(timeout - plan.delay, call(host, req)).await {
            Ok(reply) => reply,
            Err(_) => return Err(network_error(&format!("message {from} -> {to} timed out"))),
        };
        // A link cut while the message was in flight loses the reply.
        if plan.drop_reply || self.is_cut(to, from) {
            return Err(network_error(&format!("reply {to} -> {from} lost")));
        }
        reply
    }
}

/// One node's side of the simulated network.
pub struct SimTransport {
    net: Arc<SimNet>,
    from: NodeId,
}

impl Transport for SimTransport {
    async fn append_entries(
        &self,
        to: &Target,
        group: GroupId,
        req: AppendEntriesRequest,
        timeout: Duration,
    ) -> Result<AppendEntriesResponse, RpcError<RaftError>> {
        self.net.deliver(self.from, to.id, req, timeout, |h, r| async move { h.append_entries(group, r).await }).await
    }

    async fn vote(
        &self,
        to: &Target,
        group: GroupId,
        req: VoteRequest,
        timeout: Duration,
    ) -> Result<VoteResponse, RpcError<RaftError>> {
        self.net.deliver(self.from, to.id, req, timeout, |h, r| async move { h.vote(group, r).await }).await
    }

    async fn install_snapshot(
        &self,
        to: &Target,
        group: GroupId,
        req: InstallSnapshotRequest,
        timeout: Duration,
    ) -> Result<InstallSnapshotResponse, RpcError<RaftError<InstallSnapshotError>>> {
        self.net.deliver(self.from, to.id, req, timeout, |h, r| async move { h.install_snapshot(group, r).await }).await
    }
}
