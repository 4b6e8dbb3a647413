//! Simulated clusters: three hosts in one process, each with its own in-memory engine, carrying two groups over
//! the simulated network, while a nemesis drops, delays and duplicates messages, partitions hosts and crashes and
//! restarts them. Every client operation is recorded; each key's history must be linearizable (stateright's
//! `LinearizabilityTester`, a register per key), and once the cluster is quiet every replica holds the same data.
//!
//! Time is tokio's paused clock: timers fire as soon as every task waits, so a run covering minutes of simulated
//! time takes seconds. A failing run prints its seed.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use quiver_common::rng::Rng;
use quiver_kv::{KvEngine, MemEngine, WriteBatch};
use quiver_raft::sim::{Faults, SimNet};
use quiver_raft::{BasicNode, DataRange, GroupId, NodeId, RaftHost, Replica, ReplicaError, Timing};
use stateright::semantics::register::{Register, RegisterOp, RegisterRet};
use stateright::semantics::{ConsistencyTester, LinearizabilityTester};

const NODES: [NodeId; 3] = [1, 2, 3];
const GROUPS: [GroupId; 2] = [(1 << 32) | 1, (1 << 32) | 2];
const KEYS_PER_GROUP: u64 = 3;
const CLIENTS: u64 = 4;
const OPS_PER_CLIENT: u64 = 150;
const OP_TIMEOUT: Duration = Duration::from_secs(3);

fn timing() -> Timing {
    Timing {
        heartbeat: Duration::from_millis(50),
        election_min: Duration::from_millis(300),
        election_max: Duration::from_millis(600),
        // Small, so runs take snapshots, purge logs, and send snapshots to replicas that fell behind.
        snapshot_every: 16,
    }
}

fn range(group: GroupId) -> DataRange {
    let start = group.to_be_bytes().to_vec();
    let end = (group + 1).to_be_bytes().to_vec();
    DataRange { start, end }
}

/// Key `k` (0-based, across groups): its group and its bytes.
fn key(k: u64) -> (GroupId, Vec<u8>) {
    let group = GROUPS[(k / KEYS_PER_GROUP) as usize];
    let mut bytes = group.to_be_bytes().to_vec();
    bytes.extend_from_slice(format!("key-{k}").as_bytes());
    (group, bytes)
}

/// The hosts of a simulated cluster; a crashed host is absent until it restarts on its engine.
struct Cluster {
    net: Arc<SimNet>,
    engines: HashMap<NodeId, Arc<dyn KvEngine>>,
    hosts: Mutex<HashMap<NodeId, Arc<RaftHost>>>,
}

impl Cluster {
    async fn start(seed: u64) -> Arc<Cluster> {
        let net = SimNet::new(seed);
        let engines = NODES.iter().map(|&n| (n, Arc::new(MemEngine::new()) as Arc<dyn KvEngine>)).collect();
        let cluster = Arc::new(Cluster { net, engines, hosts: Mutex::new(HashMap::new()) });
        for n in NODES {
            cluster.boot(n).await;
        }
        let members: BTreeMap<NodeId, BasicNode> =
            NODES.iter().map(|&n| (n, BasicNode::new(format!("sim-{n}")))).collect();
        for g in GROUPS {
            cluster.replica(NODES[0], g).unwrap().initialize(members.clone()).await.unwrap();
        }
        cluster
    }

    /// Starts (or restarts) a host on its engine, with every group, and connects it.
    async fn boot(&self, node: NodeId) {
        let host = RaftHost::new(node, self.engines[&node].clone(), timing());
        for g in GROUPS {
            host.open_group(g, range(g), self.net.transport(node)).await.unwrap();
        }
        self.hosts.lock().unwrap().insert(node, host.clone());
        self.net.add_host(host);
    }

    async fn crash(&self, node: NodeId) {
        self.net.remove_host(node);
        let host = self.hosts.lock().unwrap().remove(&node);
        if let Some(host) = host {
            host.shutdown().await;
        }
    }

    fn replica(&self, node: NodeId, group: GroupId) -> Option<Arc<Replica>> {
        self.hosts.lock().unwrap().get(&node)?.replica(group)
    }
}

#[derive(Debug, Clone)]
enum Event {
    Invoke {
        process: u64,
        key: u64,
        op: RegisterOp<u64>,
    },
    Return {
        process: u64,
        key: u64,
        ret: RegisterRet<u64>,
    },
    /// The operation certainly did not happen (refused before it was proposed, or a read that failed).
    Failed {
        process: u64,
    },
}

#[derive(Default)]
struct Counts {
    writes_ok: u64,
    reads_ok: u64,
    unknown: u64,
    failed: u64,
    /// Replicas holding a snapshot at the end.
    snapshots: usize,
}

enum Outcome {
    Done(RegisterRet<u64>),
    Failed,
    Unknown,
}

/// Runs one operation against the group's leader, following "not the leader" hints; an attempt that times out or
/// loses its replica while waiting leaves a write's outcome unknown.
async fn run_op(cluster: &Cluster, rng: &Mutex<Rng>, group: GroupId, key: &[u8], op: &RegisterOp<u64>) -> Outcome {
    let mut target = NODES[rng.lock().unwrap().below(3) as usize];
    for _attempt in 0..12 {
        let Some(replica) = cluster.replica(target, group) else {
            target = NODES[rng.lock().unwrap().below(3) as usize];
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        let result = match op {
            RegisterOp::Write(v) => {
                let mut batch = WriteBatch::new();
                batch.put(key.to_vec(), v.to_le_bytes().to_vec());
                tokio::time::timeout(OP_TIMEOUT, async { replica.write(batch).await.map(|_| RegisterRet::WriteOk) })
                    .await
            }
            RegisterOp::Read => {
                tokio::time::timeout(OP_TIMEOUT, async {
                    let v = replica.read(key).await?;
                    Ok(RegisterRet::ReadOk(v.map_or(0, |b| u64::from_le_bytes(b.try_into().unwrap()))))
                })
                .await
            }
        };
        let is_write = matches!(op, RegisterOp::Write(_));
        match result {
            Ok(Ok(ret)) => return Outcome::Done(ret),
            Ok(Err(ReplicaError::NotLeader { leader, .. })) => {
                target = leader.unwrap_or(NODES[rng.lock().unwrap().below(3) as usize]);
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Ok(Err(ReplicaError::Unavailable { .. })) if !is_write => {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Ok(Err(ReplicaError::OutOfRange { .. })) => panic!("key out of its group's range"),
            // A write that may have been proposed: its outcome is unknown, and retrying could apply it twice.
            Ok(Err(_)) | Err(_) if is_write => return Outcome::Unknown,
            Ok(Err(_)) | Err(_) => {
                target = NODES[rng.lock().unwrap().below(3) as usize];
            }
        }
    }
    Outcome::Failed
}

async fn client(
    cluster: Arc<Cluster>,
    id: u64,
    seed: u64,
    history: Arc<Mutex<Vec<Event>>>,
    counts: Arc<Mutex<Counts>>,
) {
    let rng = Mutex::new(Rng(seed.wrapping_mul(31).wrapping_add(id) | 1));
    // A process that saw an unknown outcome never completes that operation: the client continues as a new process.
    let mut incarnation = 0;
    for i in 0..OPS_PER_CLIENT {
        let process = id * 1000 + incarnation;
        let k = rng.lock().unwrap().below(KEYS_PER_GROUP * GROUPS.len() as u64);
        let (group, key_bytes) = key(k);
        // Values are unique across the run, so a read names the write it saw.
        let op = if rng.lock().unwrap().below(2) == 0 {
            RegisterOp::Write(id * 1_000_000 + i + 1)
        } else {
            RegisterOp::Read
        };
        history.lock().unwrap().push(Event::Invoke { process, key: k, op: op.clone() });
        let outcome = run_op(&cluster, &rng, group, &key_bytes, &op).await;
        {
            let mut c = counts.lock().unwrap();
            let mut h = history.lock().unwrap();
            match outcome {
                Outcome::Done(ret) => {
                    match ret {
                        RegisterRet::WriteOk => c.writes_ok += 1,
                        RegisterRet::ReadOk(_) => c.reads_ok += 1,
                    }
                    h.push(Event::Return { process, key: k, ret });
                }
                Outcome::Failed => {
                    c.failed += 1;
                    h.push(Event::Failed { process });
                }
                Outcome::Unknown => {
                    c.unknown += 1;
                    incarnation += 1;
                }
            }
        }
        let pause = rng.lock().unwrap().below(40);
        tokio::time::sleep(Duration::from_millis(pause)).await;
    }
}

/// Faults while the clients run: lossy links, a partitioned host, a crashed and restarted host, calm.
async fn nemesis(cluster: Arc<Cluster>, seed: u64, done: Arc<std::sync::atomic::AtomicBool>) -> Vec<String> {
    let mut rng = Rng(seed ^ 0x9e37_79b9_7f4a_7c15);
    let mut log = Vec::new();
    let mut crashed: Option<NodeId> = None;
    while !done.load(std::sync::atomic::Ordering::SeqCst) {
        tokio::time::sleep(Duration::from_millis(100 + rng.below(600))).await;
        if let Some(n) = crashed.take() {
            cluster.boot(n).await;
            log.push(format!("restart {n}"));
            continue;
        }
        match rng.below(5) {
            0 => {
                let n = NODES[rng.below(3) as usize];
                cluster.net.partition(&[n], &NODES);
                log.push(format!("isolate {n}"));
            }
            1 => {
                cluster.net.heal();
                log.push("heal".into());
            }
            2 => {
                let n = NODES[rng.below(3) as usize];
                cluster.crash(n).await;
                crashed = Some(n);
                log.push(format!("crash {n}"));
            }
            3 => {
                cluster.net.set_faults(Faults {
                    drop_request_per_mille: 50,
                    drop_reply_per_mille: 50,
                    duplicate_per_mille: 50,
                    max_delay: Duration::from_millis(30),
                });
                log.push("lossy".into());
            }
            _ => {
                cluster.net.set_faults(Faults::default());
                log.push("calm".into());
            }
        }
    }
    if let Some(n) = crashed {
        cluster.boot(n).await;
        log.push(format!("restart {n}"));
    }
    cluster.net.heal();
    cluster.net.set_faults(Faults::default());
    log
}

/// Feeds each key's history, in the order it happened, to a tester of its own.
///
/// An operation that certainly did not happen is left out. So is a write whose outcome is unknown and whose value
/// no read returned: a register history with such a pending write is linearizable exactly when it is without it
/// (including the write can only constrain later reads), and leaving it out keeps the checker's search small.
fn check_linearizable(history: &[Event], seed: u64) {
    // An operation is its process and its position among that process's operations.
    let mut position: HashMap<u64, usize> = HashMap::new();
    let mut ops = Vec::with_capacity(history.len());
    for e in history {
        let process = match e {
            Event::Invoke { process, .. } | Event::Return { process, .. } | Event::Failed { process } => *process,
        };
        if matches!(e, Event::Invoke { .. }) {
            *position.entry(process).or_default() += 1;
        }
        ops.push((process, position[&process]));
    }
    let ended: std::collections::HashSet<(u64, usize)> =
        history.iter().zip(&ops).filter(|(e, _)| !matches!(e, Event::Invoke { .. })).map(|(_, op)| *op).collect();
    let failed: std::collections::HashSet<(u64, usize)> =
        history.iter().zip(&ops).filter(|(e, _)| matches!(e, Event::Failed { .. })).map(|(_, op)| *op).collect();
    let observed: std::collections::HashSet<u64> = history
        .iter()
        .filter_map(|e| match e {
            Event::Return { ret: RegisterRet::ReadOk(v), .. } => Some(*v),
            _ => None,
        })
        .collect();
    let mut testers: BTreeMap<u64, LinearizabilityTester<u64, Register<u64>>> = BTreeMap::new();
    for (e, op) in history.iter().zip(&ops) {
        match e {
            Event::Invoke { process, key, op: invoked } => {
                let unobserved_unknown_write =
                    !ended.contains(op) && matches!(invoked, RegisterOp::Write(v) if !observed.contains(v));
                if !failed.contains(op) && !unobserved_unknown_write {
                    let t = testers.entry(*key).or_insert_with(|| LinearizabilityTester::new(Register(0)));
                    t.on_invoke(*process, invoked.clone()).unwrap();
                }
            }
            Event::Return { process, key, ret } => {
                testers.get_mut(key).unwrap().on_return(*process, ret.clone()).unwrap();
            }
            Event::Failed { .. } => {}
        }
    }
    for (key, tester) in &testers {
        assert!(
            tester.is_consistent(),
            "seed {seed}: the history of key {key} is not linearizable:\n{:#?}",
            history
                .iter()
                .filter(|e| matches!(e, Event::Invoke { key: k, .. } | Event::Return { key: k, .. } if k == key))
                .collect::<Vec<_>>()
        );
    }
}

/// Waits until every replica of every group has applied the same last log id, then compares their data.
async fn check_converged(cluster: &Cluster, seed: u64) {
    for g in GROUPS {
        let mut agreed = false;
        for _ in 0..200 {
            let applied: Vec<_> =
                NODES.iter().map(|&n| cluster.replica(n, g).unwrap().raft().metrics().borrow().last_applied).collect();
            let leader = cluster.replica(NODES[0], g).unwrap().leader();
            if leader.is_some() && applied.iter().all(|a| a.is_some() && *a == applied[0]) {
                agreed = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(agreed, "seed {seed}: the replicas of group {g} did not converge");
        let r = range(g);
        let dump = |n: NodeId| {
            let mut pairs = Vec::new();
            cluster.engines[&n]
                .scan_range(&r.start, &r.end, &mut |k, v| {
                    pairs.push((k.to_vec(), v.to_vec()));
                    true
                })
                .unwrap();
            pairs
        };
        let first = dump(NODES[0]);
        for &n in &NODES[1..] {
            assert_eq!(dump(n), first, "seed {seed}: node {n} holds other data than node {} in group {g}", NODES[0]);
        }
    }
}

async fn run(seed: u64) -> (Counts, Vec<String>) {
    let cluster = Cluster::start(seed).await;
    let history = Arc::new(Mutex::new(Vec::new()));
    let counts = Arc::new(Mutex::new(Counts::default()));
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let nemesis = tokio::spawn(nemesis(cluster.clone(), seed, done.clone()));
    let clients: Vec<_> = (1..=CLIENTS)
        .map(|id| tokio::spawn(client(cluster.clone(), id, seed, history.clone(), counts.clone())))
        .collect();
    for c in clients {
        c.await.unwrap();
    }
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    let faults = nemesis.await.unwrap();
    // Once healed, one more read of every key: a write whose outcome was unknown is then seen, or not, for good.
    let rng = Mutex::new(Rng(seed | 1));
    for k in 0..KEYS_PER_GROUP * GROUPS.len() as u64 {
        let (group, key_bytes) = key(k);
        let process = 999_000 + k;
        history.lock().unwrap().push(Event::Invoke { process, key: k, op: RegisterOp::Read });
        // The healed cluster may still be electing leaders: a minute of simulated time to answer.
        let mut answered = false;
        for _ in 0..60 {
            if let Outcome::Done(ret) = run_op(&cluster, &rng, group, &key_bytes, &RegisterOp::Read).await {
                history.lock().unwrap().push(Event::Return { process, key: k, ret });
                answered = true;
                break;
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
        assert!(answered, "seed {seed}: key {k} cannot be read once the cluster is healed");
    }
    let history = history.lock().unwrap().clone();
    check_linearizable(&history, seed);
    check_converged(&cluster, seed).await;
    let snapshots = NODES
        .iter()
        .flat_map(|&n| GROUPS.map(|g| cluster.replica(n, g).unwrap().raft().metrics().borrow().snapshot))
        .filter(Option::is_some)
        .count();
    for n in NODES {
        cluster.crash(n).await;
    }
    let mut counts = Arc::try_unwrap(counts).ok().unwrap().into_inner().unwrap();
    counts.snapshots = snapshots;
    (counts, faults)
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn groups_stay_linearizable_through_faults() {
    // QUIVER_SIM_SEED=N replays one run (then the checks of what the default runs exercise are skipped).
    let one = std::env::var("QUIVER_SIM_SEED").ok().map(|s| s.parse::<u64>().expect("QUIVER_SIM_SEED is a number"));
    let seeds: Vec<u64> = match one {
        Some(s) => vec![s],
        None => (1..=8).collect(),
    };
    let (mut writes, mut unknown, mut crashes, mut snapshots_seen) = (0, 0, 0, 0);
    for seed in seeds {
        let (counts, faults) = run(seed).await;
        eprintln!(
            "seed {seed}: {} writes, {} reads acknowledged, {} unknown, {} failed, {} replicas with a snapshot; faults: {}",
            counts.writes_ok,
            counts.reads_ok,
            counts.unknown,
            counts.failed,
            counts.snapshots,
            faults.join(", ")
        );
        writes += counts.writes_ok;
        unknown += counts.unknown;
        crashes += faults.iter().filter(|f| f.starts_with("crash")).count();
        snapshots_seen += counts.snapshots;
    }
    if one.is_some() {
        return;
    }
    // The runs must have exercised what they claim to: acknowledged writes, unknown outcomes, crashes, snapshots.
    assert!(writes > 100, "only {writes} writes were acknowledged");
    assert!(crashes > 0, "no run crashed a host");
    assert!(unknown > 0, "no write had an unknown outcome");
    assert!(snapshots_seen > 0, "no replica took a snapshot");
}
