//! Edges across partitions are written all or nothing (TOSS, `docs/design/cluster.md` §7): chains stopped part
//! way, by fail points, crashed leaders and a lossy network, are finished; once the cluster is quiet every edge has
//! both copies with the same row or neither, no chain is left pending, and no acknowledged write is lost. Meanwhile
//! every edge, read through its out-copy, is a linearizable register (stateright's `LinearizabilityTester`).

use quiver_api::conformance::space_with_schema;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use quiver_api::*;
use quiver_cluster::{ChainStep, ClusterStorage, SimCluster};
use quiver_common::Value;
use quiver_kv::MemEngine;
use quiver_meta::MetaStore;
use quiver_raft::sim::Faults;
use quiver_raft::Timing;
use quiver_storage::keys;
use stateright::semantics::register::{Register, RegisterOp, RegisterRet};
use stateright::semantics::{ConsistencyTester, LinearizabilityTester};

const PARTS: u32 = 6;

fn timing() -> Timing {
    Timing {
        heartbeat: Duration::from_millis(50),
        election_min: Duration::from_millis(200),
        election_max: Duration::from_millis(400),
        snapshot_every: 200,
    }
}

struct Setup {
    sim: Arc<SimCluster>,
    storage: Arc<ClusterStorage>,
    space: Arc<SpaceDesc>,
    edge: SchemaRef,
}

fn setup(seed: u64) -> Setup {
    let catalog = Arc::new(MetaStore::open(Arc::new(MemEngine::new())).expect("an empty catalog opens"));
    let (space, edge) = space_with_schema(catalog.as_ref(), PARTS, 3, SchemaKind::Edge, "e", "w");
    let sim = SimCluster::start(3, 3, catalog.clone(), timing(), seed);
    let storage = Arc::new(ClusterStorage::new(sim.clone(), catalog.clone()));
    Setup { sim, storage, space, edge }
}

/// An edge `src -> dst` (rank 0): its two copies lie in partitions `src % 6 + 1` and `dst % 6 + 1`.
type Edge = (i64, i64);

impl Setup {
    fn key(&self, (src, dst): Edge) -> EdgeKeyVal {
        EdgeKeyVal { src: Value::Int(src), edge_type: self.edge.id, rank: 0, dst: Value::Int(dst) }
    }

    fn insert(&self, e: Edge, w: i64) -> Result<(), String> {
        let m = Mutation::InsertEdge {
            key: self.key(e),
            schema: self.edge.clone(),
            values: vec![Value::Int(w)],
            if_not_exists: false,
        };
        self.storage.write(&self.space, vec![m]).map_err(|e| e.message)
    }

    fn delete(&self, e: Edge) -> Result<(), String> {
        self.storage.write(&self.space, vec![Mutation::DeleteEdge { key: self.key(e) }]).map_err(|e| e.message)
    }

    /// Waits until no host holds a pending chain (the sweeps finish them); panics after `within`.
    fn wait_settled(&self, within: Duration) {
        let started = Instant::now();
        loop {
            let pending: usize = self.sim.storage_hosts().iter().map(|h| h.pending_chains(&self.space).unwrap()).sum();
            if pending == 0 {
                return;
            }
            assert!(started.elapsed() < within, "{pending} chains still pending after {within:?}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Every edge's copies as each partition's leader holds them (after confirming it leads and has applied every
    /// acknowledged write): out-copies and in-copies, each keyed `(src, dst)` with its stored row.
    fn copies(&self) -> (BTreeMap<Edge, Vec<u8>>, BTreeMap<Edge, Vec<u8>>) {
        let (mut outs, mut ins) = (BTreeMap::new(), BTreeMap::new());
        for part in 1..=PARTS {
            let started = Instant::now();
            let host = loop {
                let leader = self.sim.leader_id(self.space.id, part).and_then(|id| self.sim.storage_host(id));
                if let Some(h) = leader.filter(|h| h.lead(self.space.id, &[part]).is_ok()) {
                    break h;
                }
                assert!(started.elapsed() < Duration::from_secs(20), "part {part} has no leader");
                std::thread::sleep(Duration::from_millis(20));
            };
            let vid = |b: &[u8]| match keys::decode_vid(&self.space, b).unwrap() {
                Value::Int(i) => i,
                other => panic!("an INT64 VID, not {other}"),
            };
            host.engine()
                .scan_prefix(&keys::prefix(self.space.id, part, keys::KIND_EDGE), &mut |k, v| {
                    let near = vid(&k[keys::PREFIX_LEN..keys::PREFIX_LEN + 8]);
                    let (et, _, far) = keys::parse_edge_key(&self.space, k).unwrap();
                    let Value::Int(far) = far else { panic!("an INT64 VID") };
                    if et > 0 {
                        outs.insert((near, far), v.to_vec());
                    } else {
                        ins.insert((far, near), v.to_vec());
                    }
                    true
                })
                .unwrap();
        }
        (outs, ins)
    }

    /// The TOSS invariant: every edge has both copies with the same row, or neither.
    fn assert_both_copies_or_neither(&self) -> BTreeSet<Edge> {
        let (outs, ins) = self.copies();
        let only_out: Vec<&Edge> = outs.keys().filter(|e| !ins.contains_key(e)).collect();
        let only_in: Vec<&Edge> = ins.keys().filter(|e| !outs.contains_key(e)).collect();
        assert!(only_out.is_empty() && only_in.is_empty(), "half edges: out only {only_out:?}, in only {only_in:?}");
        let differ: Vec<&Edge> = outs.iter().filter(|(e, row)| ins[e] != **row).map(|(e, _)| e).collect();
        assert!(differ.is_empty(), "copies with different rows: {differ:?}");
        outs.keys().copied().collect()
    }

    /// The `w` one edge holds (None: no edge), read through the storage client.
    fn weight(&self, e: Edge) -> Result<Option<i64>, String> {
        let rows = self.storage.get_edges(&self.space, &self.edge, &[self.key(e)]).map_err(|e| e.message)?;
        Ok(rows.into_iter().next().flatten().map(|p| match p.get("w") {
            Some(Value::Int(w)) => *w,
            other => panic!("edge {e:?} has w {other:?}"),
        }))
    }

    /// The `w` each existing edge holds, read through the storage client.
    fn weights(&self, edges: &[Edge]) -> BTreeMap<Edge, Option<i64>> {
        let keys: Vec<EdgeKeyVal> = edges.iter().map(|&e| self.key(e)).collect();
        let rows = self.storage.get_edges(&self.space, &self.edge, &keys).expect("a read");
        edges
            .iter()
            .zip(rows)
            .map(|(&e, row)| {
                let w = row.map(|p| match p.get("w") {
                    Some(Value::Int(w)) => *w,
                    other => panic!("edge {e:?} has w {other:?}"),
                });
                (e, w)
            })
            .collect()
    }
}

/// Edges whose two copies lie in different partitions.
fn cross_edges(n: i64) -> Vec<Edge> {
    (0..n).map(|i| (i, i + 1 + i % 4)).filter(|(s, d)| s % 6 != d % 6).collect()
}

/// Chains stopped after their prime, and after their remote part, are finished by the sweep: the writes that
/// reported an error appear whole, with both copies.
#[test]
fn chains_stopped_part_way_are_finished() {
    let s = setup(3);
    let edges = cross_edges(24);
    let chains = Arc::new(AtomicU64::new(0));
    for host in s.sim.storage_hosts() {
        let chains = chains.clone();
        // The first six chains stop, alternately after their prime and after their remote part; their sources lie
        // in six different partitions, so no partition has a second chain to run before it is settled.
        host.set_chain_fault(Some(Arc::new(move |step| match step {
            ChainStep::Primed => {
                let n = chains.fetch_add(1, Ordering::Relaxed);
                n < 6 && n.is_multiple_of(2)
            }
            ChainStep::RemoteWritten => {
                let n = chains.load(Ordering::Relaxed) - 1;
                n < 6 && !n.is_multiple_of(2)
            }
        })));
    }
    assert_eq!(edges[..6].iter().map(|e| e.0 % 6).collect::<BTreeSet<_>>().len(), 6);
    let (mut begun, mut refused) = (0, 0);
    let mut expected = BTreeMap::new();
    for (i, &e) in edges.iter().enumerate() {
        match s.insert(e, i as i64) {
            Ok(()) => {
                expected.insert(e, i as i64);
            }
            // Stopped after its prime: the write happens.
            Err(msg) if msg.ends_with("will be completed") => {
                expected.insert(e, i as i64);
                begun += 1;
            }
            // The coordinator's partition could not finish an earlier chain first (stopped again): not begun.
            Err(msg) if msg.starts_with("Storage Error: the write was not applied: part ") => refused += 1,
            Err(msg) => panic!("{msg}"),
        }
    }
    // (A sweep that finishes a stopped chain while the first six run takes a turn of the fail point.)
    assert!(begun >= 4, "only {begun} of {} chains were stopped part way ({refused} refused)", edges.len());
    for host in s.sim.storage_hosts() {
        host.set_chain_fault(None);
    }
    s.wait_settled(Duration::from_secs(20));
    let present = s.assert_both_copies_or_neither();
    assert_eq!(present, expected.keys().copied().collect(), "every begun write is completed ({refused} refused)");
    let weights = s.weights(&edges);
    for e in &edges {
        assert_eq!(weights[e], expected.get(e).copied(), "edge {e:?}");
    }
    // Deletes run the same chain.
    let stops2 = Arc::new(AtomicU64::new(0));
    for host in s.sim.storage_hosts() {
        let stops = stops2.clone();
        host.set_chain_fault(Some(Arc::new(move |step| {
            step == ChainStep::RemoteWritten && stops.fetch_add(1, Ordering::Relaxed).is_multiple_of(2)
        })));
    }
    let mut kept = BTreeSet::new();
    for &e in &edges {
        match s.delete(e) {
            Ok(()) => {}
            Err(msg) if msg.ends_with("will be completed") => {}
            Err(msg) if msg.starts_with("Storage Error: the write was not applied: part ") => {
                kept.insert(e);
            }
            Err(msg) => panic!("{msg}"),
        }
    }
    assert!(kept.len() < edges.len() / 2, "{} of {} deletes were refused", kept.len(), edges.len());
    for host in s.sim.storage_hosts() {
        host.set_chain_fault(None);
    }
    s.wait_settled(Duration::from_secs(20));
    let kept: BTreeSet<Edge> = kept.into_iter().filter(|e| expected.contains_key(e)).collect();
    assert_eq!(s.assert_both_copies_or_neither(), kept, "every begun delete is completed");
}

/// The seeds a randomized test runs: `QUIVER_TOSS_SEED=N` runs seed N alone.
fn seeds(default: &[u64]) -> Vec<u64> {
    match std::env::var("QUIVER_TOSS_SEED") {
        Ok(s) => vec![s.parse().expect("QUIVER_TOSS_SEED is a number")],
        Err(_) => default.to_vec(),
    }
}

/// A small deterministic generator (splitmix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Chains stop at random (4 % of their steps) on every running host; Raft messages are lost (2 % of requests and of
/// replies), duplicated (2 %) and delayed (up to 5 ms).
fn faults_on(s: &Setup, rng: &Arc<Mutex<Rng>>) {
    for host in s.sim.storage_hosts() {
        let rng = rng.clone();
        host.set_chain_fault(Some(Arc::new(move |_| rng.lock().unwrap().below(100) < 4)));
    }
    s.sim.net().set_faults(Faults {
        drop_request_per_mille: 20,
        drop_reply_per_mille: 20,
        duplicate_per_mille: 20,
        max_delay: Duration::from_millis(5),
    });
}

/// Every fault off; returns once the sweeps finished every pending chain.
fn faults_off(s: &Setup) {
    s.sim.net().set_faults(Faults::default());
    for host in s.sim.storage_hosts() {
        host.set_chain_fault(None);
    }
    s.wait_settled(Duration::from_secs(30));
}

/// Until `deadline`: now and then a partition's leader crashes and comes back, or is cut off from the other hosts'
/// Raft messages (still reachable by clients, still believing it leads for a while) and then healed.
fn nemesis(s: &Setup, seed: u64, deadline: Instant, faults: &Arc<Mutex<Rng>>) {
    let mut rng = Rng(seed ^ 0xc0ffee);
    while Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(600 + rng.below(400)));
        let part = 1 + rng.below(PARTS as u64) as u32;
        if let Some(victim) = s.sim.leader_id(s.space.id, part) {
            let pause = Duration::from_millis(300 + rng.below(300));
            if rng.below(2) == 0 {
                s.sim.crash(victim);
                std::thread::sleep(pause);
                s.sim.restart(victim);
                faults_on(s, faults);
            } else {
                s.sim.net().partition(&[victim], &[1, 2, 3]);
                std::thread::sleep(pause);
                s.sim.net().heal();
            }
        }
    }
}

/// What an edge may hold once quiet: the state its last acknowledged write left, or the state of any write that
/// failed (its outcome is unknown: a begun chain is completed, possibly after later writes).
#[derive(Default)]
struct EdgeHistory {
    last_acked: Option<i64>,
    failed: BTreeSet<Option<i64>>,
    acked: usize,
    refused: usize,
}

/// One event of the run's history: edge `key`'s register holds 0 for "no edge", else its `w`.
#[derive(Debug, Clone)]
enum Event {
    Invoke {
        process: u64,
        key: Edge,
        op: RegisterOp<u64>,
    },
    Return {
        process: u64,
        key: Edge,
        ret: RegisterRet<u64>,
    },
    /// The operation certainly did not happen (a refused write, a failed read).
    Failed {
        process: u64,
    },
}

type History = Arc<Mutex<Vec<Event>>>;

fn register(state: Option<i64>) -> u64 {
    state.map_or(0, |w| w as u64)
}

/// Checks each edge's history with stateright's linearizability tester. A write whose outcome is unknown is an
/// invocation that never returns (it may take effect at any later point); a failed operation is left out.
/// The most writes of unknown outcome an edge's history may keep and still be searched.
const PENDING_SEARCHED_MAX: usize = 3;

fn check_linearizable(history: &[Event], seed: u64) {
    let mut open: BTreeMap<u64, usize> = BTreeMap::new();
    let mut left_out = BTreeSet::new();
    let mut ended = BTreeSet::new();
    for (i, e) in history.iter().enumerate() {
        match e {
            Event::Invoke { process, .. } => {
                open.insert(*process, i);
            }
            Event::Failed { process } => {
                left_out.insert(open[process]);
            }
            Event::Return { process, .. } => {
                ended.insert(open[process]);
            }
        }
    }
    // A write of unknown outcome whose value no read returned is left out too: a register history with it is
    // linearizable exactly when it is without it (it can take effect after everything else), and each one kept
    // multiplies the checker's search (as in crates/raft/tests/sim_cluster.rs). Deletes (0) are always kept.
    let observed: BTreeSet<u64> = history
        .iter()
        .filter_map(|e| match e {
            Event::Return { ret: RegisterRet::ReadOk(v), .. } => Some(*v),
            _ => None,
        })
        .collect();
    for (i, e) in history.iter().enumerate() {
        if let Event::Invoke { op: RegisterOp::Write(v), .. } = e {
            if *v != 0 && !ended.contains(&i) && !left_out.contains(&i) && !observed.contains(v) {
                left_out.insert(i);
            }
        }
    }
    let failed = left_out;
    // The search grows with the writes that never return; an edge with more than a few kept is not searched (its
    // final state is still checked by the caller), so a run cannot stall on one unlucky edge.
    let mut pending: BTreeMap<Edge, usize> = BTreeMap::new();
    for (i, e) in history.iter().enumerate() {
        if let Event::Invoke { key, .. } = e {
            if !ended.contains(&i) && !failed.contains(&i) {
                *pending.entry(*key).or_default() += 1;
            }
        }
    }
    let skipped: BTreeSet<Edge> =
        pending.into_iter().filter(|(_, n)| *n > PENDING_SEARCHED_MAX).map(|(e, _)| e).collect();
    let mut testers: BTreeMap<Edge, LinearizabilityTester<u64, Register<u64>>> = BTreeMap::new();
    let mut checked = 0;
    for (i, e) in history.iter().enumerate() {
        match e {
            Event::Invoke { key, .. } | Event::Return { key, .. } if skipped.contains(key) => {}
            Event::Invoke { process, key, op } if !failed.contains(&i) => {
                let t = testers.entry(*key).or_insert_with(|| LinearizabilityTester::new(Register(0)));
                t.on_invoke(*process, op.clone()).unwrap();
                checked += 1;
            }
            Event::Return { process, key, ret } => {
                testers.get_mut(key).unwrap().on_return(*process, ret.clone()).unwrap();
            }
            _ => {}
        }
    }
    for (key, tester) in &testers {
        assert!(tester.is_consistent(), "seed {seed}: the history of edge {key:?} is not linearizable:\n{:#?}", {
            history
                .iter()
                .filter(|e| matches!(e, Event::Invoke { key: k, .. } | Event::Return { key: k, .. } if k == key))
                .collect::<Vec<_>>()
        });
    }
    println!(
        "seed {seed}: {checked} operations on {} edges checked for linearizability ({} edges with more than \
         {PENDING_SEARCHED_MAX} writes of unknown outcome not searched)",
        testers.len(),
        skipped.len()
    );
    assert!(testers.len() >= 20, "seed {seed}: only {} edges searched", testers.len());
}

fn random_run(seed: u64) {
    let s = Arc::new(setup(seed));
    let edges = cross_edges(30);
    let writers = 3;
    let readers = 2;
    let history: History = Arc::default();
    let histories: Arc<Mutex<BTreeMap<Edge, EdgeHistory>>> =
        Arc::new(Mutex::new(edges.iter().map(|&e| (e, EdgeHistory::default())).collect()));
    let next_w = Arc::new(AtomicU64::new(1));
    let faults = Arc::new(Mutex::new(Rng(seed ^ 0xfa11)));
    faults_on(&s, &faults);
    let deadline = Instant::now() + Duration::from_secs(4);
    let mut workers: Vec<_> = (0..writers)
        .map(|w| {
            let (s, histories, next_w, history) = (s.clone(), histories.clone(), next_w.clone(), history.clone());
            // Each writer owns its edges, so each edge's writes are sequential.
            let mine: Vec<Edge> = edges.iter().copied().skip(w).step_by(writers).collect();
            std::thread::spawn(move || {
                let mut rng = Rng(seed * 31 + w as u64);
                // Random edges until the deadline, then each edge once more: its last write meets the faults too.
                let mut last_round = mine.clone().into_iter();
                // A write whose outcome is unknown never returns: the writer goes on as a new process.
                let mut process = w as u64 * 1_000_000;
                loop {
                    let e = if Instant::now() < deadline {
                        mine[rng.below(mine.len() as u64) as usize]
                    } else {
                        match last_round.next() {
                            Some(e) => e,
                            None => break,
                        }
                    };
                    let state =
                        if rng.below(4) == 0 { None } else { Some(next_w.fetch_add(1, Ordering::Relaxed) as i64) };
                    let op = RegisterOp::Write(register(state));
                    history.lock().unwrap().push(Event::Invoke { process, key: e, op });
                    let outcome = match state {
                        None => s.delete(e),
                        Some(v) => s.insert(e, v),
                    };
                    let refused =
                        matches!(&outcome, Err(msg) if msg.starts_with("Storage Error: the write was not applied: "));
                    match &outcome {
                        Ok(()) => {
                            history.lock().unwrap().push(Event::Return { process, key: e, ret: RegisterRet::WriteOk })
                        }
                        // Refused before it began: certainly not applied.
                        Err(_) if refused => history.lock().unwrap().push(Event::Failed { process }),
                        // Any other failure: the outcome is unknown (it never returns).
                        Err(msg) => {
                            if std::env::var_os("QUIVER_TOSS_ERRORS").is_some() {
                                eprintln!("{msg}");
                            }
                            process += 1
                        }
                    }
                    let mut h = histories.lock().unwrap();
                    let h = h.get_mut(&e).unwrap();
                    match outcome {
                        Ok(()) => {
                            h.last_acked = state;
                            h.acked += 1;
                        }
                        Err(_) if refused => h.refused += 1,
                        Err(_) => {
                            h.failed.insert(state);
                        }
                    }
                }
            })
        })
        .collect();
    for r in 0..readers {
        let (s, history, edges) = (s.clone(), history.clone(), edges.clone());
        workers.push(std::thread::spawn(move || {
            let mut rng = Rng(seed * 77 + r);
            let process = u64::MAX - r;
            while Instant::now() < deadline {
                let e = edges[rng.below(edges.len() as u64) as usize];
                history.lock().unwrap().push(Event::Invoke { process, key: e, op: RegisterOp::Read });
                let event = match s.weight(e) {
                    Ok(w) => Event::Return { process, key: e, ret: RegisterRet::ReadOk(register(w)) },
                    Err(_) => Event::Failed { process },
                };
                history.lock().unwrap().push(event);
                // Reads answered within a leader's lease take microseconds: paced, so each edge's history stays
                // small enough to search.
                std::thread::sleep(Duration::from_millis(2));
            }
        }));
    }
    nemesis(&s, seed, deadline, &faults);
    for w in workers {
        w.join().expect("a writer panicked");
    }
    faults_off(&s);
    s.assert_both_copies_or_neither();
    let weights = s.weights(&edges);
    let histories = histories.lock().unwrap();
    let (mut writes_failed, mut writes_acked, mut writes_refused) = (0, 0, 0);
    for (e, h) in histories.iter() {
        writes_failed += h.failed.len();
        writes_acked += h.acked;
        writes_refused += h.refused;
        let now = weights[e];
        assert!(
            now == h.last_acked || h.failed.contains(&now),
            "seed {seed}: edge {e:?} holds {now:?}; its last acknowledged write left {:?}, failed ones {:?}",
            h.last_acked,
            h.failed
        );
    }
    println!(
        "seed {seed}: {writes_acked} writes acknowledged, {writes_failed} of unknown outcome, {writes_refused} refused"
    );
    // The checker's search recurses once per operation of a history: on a thread with a stack to match.
    let history = std::mem::take(&mut *history.lock().unwrap());
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || check_linearizable(&history, seed))
        .unwrap()
        .join()
        .expect("the history is linearizable");
}

#[test]
fn random_edge_writes_under_faults_keep_both_copies() {
    for seed in seeds(&[1, 2]) {
        random_run(seed);
    }
}

/// Edge inserts and deletes and vertex deletes with their edges, from three writers over the same few vertices, under
/// the faults above: once quiet, every edge has both copies or neither. (A vertex deleted with its edges has each
/// edge deleted as DELETE EDGE would, routed by its source, so every chain writing an edge's copies is coordinated by
/// one partition.)
#[test]
fn vertex_deletes_with_edges_keep_both_copies() {
    for seed in seeds(&[5, 6]) {
        let s = Arc::new(setup(seed));
        let faults = Arc::new(Mutex::new(Rng(seed ^ 0xfa11)));
        faults_on(&s, &faults);
        let deadline = Instant::now() + Duration::from_secs(4);
        let deletes = Arc::new(AtomicU64::new(0));
        let workers: Vec<_> = (0..3u64)
            .map(|w| {
                let (s, deletes) = (s.clone(), deletes.clone());
                std::thread::spawn(move || {
                    let mut rng = Rng(seed * 17 + w);
                    while Instant::now() < deadline {
                        let (a, b) = (rng.below(12) as i64, rng.below(12) as i64);
                        let _ = match rng.below(6) {
                            0 => {
                                let m = Mutation::DeleteVertex { vid: Value::Int(a), with_edges: true };
                                let done = s.storage.write(&s.space, vec![m]).map_err(|e| e.message);
                                if done.is_ok() {
                                    deletes.fetch_add(1, Ordering::Relaxed);
                                }
                                done
                            }
                            1 => s.delete((a, b)),
                            _ => s.insert((a, b), rng.below(1000) as i64 + 1),
                        };
                    }
                })
            })
            .collect();
        nemesis(&s, seed, deadline, &faults);
        for w in workers {
            w.join().expect("a writer panicked");
        }
        faults_off(&s);
        let left = s.assert_both_copies_or_neither();
        println!(
            "seed {seed}: {} vertex deletes acknowledged, {} edges left",
            deletes.load(Ordering::Relaxed),
            left.len()
        );
    }
}
