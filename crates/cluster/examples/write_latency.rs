//! Measures single-edge write latency with three replicas and the time from losing a leader to the next
//! acknowledged write (docs/design/cluster.md §9): three storage hosts in this process, each over its own RocksDB in
//! a temporary directory, Raft over loopback TCP with the cluster's default timing, writes through graphd's
//! `ClusterStorage` (in process: no graphd hop). Beside them, the same writes to one embedded storage over RocksDB.
//!
//! `cargo run --release -p quiver-cluster --example write_latency -- [WRITES]`

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock, Weak};
use std::time::{Duration, Instant};

use quiver_api::*;
use quiver_cluster::{Cluster, ClusterStorage, Hosts, StorageHost};
use quiver_common::{PropType, QError, QResult, Value};
use quiver_kv::KvEngine;
use quiver_kv_rocks::RocksEngine;
use quiver_meta::MetaStore;
use quiver_raft::tcp::{serve, TcpTransport};
use quiver_raft::{partition_group, BasicNode, GroupId, NodeId, Timing};
use quiver_storage::keys::part_of;
use quiver_storage::EmbeddedStorage;

const PARTS: u32 = 12;

/// Three hosts on loopback TCP; every partition on all three.
struct TcpCluster {
    runtime: tokio::runtime::Runtime,
    dir: tempfile::TempDir,
    catalog: Arc<dyn Catalog>,
    addrs: BTreeMap<NodeId, String>,
    listeners: RwLock<BTreeMap<NodeId, tokio::task::JoinHandle<()>>>,
    hosts: RwLock<BTreeMap<NodeId, Arc<StorageHost>>>,
    transports: BTreeMap<NodeId, Arc<TcpTransport>>,
    opened: RwLock<Option<Arc<SpaceDesc>>>,
    me: Weak<TcpCluster>,
}

impl TcpCluster {
    fn start(catalog: Arc<dyn Catalog>) -> Arc<TcpCluster> {
        let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
        let mut addrs = BTreeMap::new();
        for id in 1..=3u64 {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            addrs.insert(id, l.local_addr().unwrap().to_string());
        }
        let transports = (1..=3u64).map(|id| (id, TcpTransport::new())).collect();
        let cluster = Arc::new_cyclic(|me| TcpCluster {
            runtime,
            dir: tempfile::tempdir().unwrap(),
            catalog,
            addrs,
            listeners: RwLock::default(),
            hosts: RwLock::default(),
            transports,
            opened: RwLock::default(),
            me: me.clone(),
        });
        for id in 1..=3 {
            cluster.boot(id);
        }
        cluster
    }

    fn boot(&self, id: NodeId) {
        let engine: Arc<dyn KvEngine> = Arc::new(RocksEngine::open(&self.dir.path().join(id.to_string())).unwrap());
        let storage = Arc::new(EmbeddedStorage::new(engine.clone()));
        storage.set_catalog(self.catalog.clone());
        let _in = self.runtime.enter();
        let hosts: Weak<dyn Hosts> = self.me.clone();
        let host = StorageHost::start(id, engine, storage, Timing::default(), hosts);
        let space = self.opened.read().unwrap().clone();
        self.runtime.block_on(async {
            if let Some(space) = space {
                for part in 1..=PARTS {
                    host.open_part(space.clone(), part, self.transports[&id].clone()).await.unwrap();
                }
            }
            let l = tokio::net::TcpListener::bind(&self.addrs[&id]).await.unwrap();
            self.listeners.write().unwrap().insert(id, tokio::spawn(serve(l, host.raft().clone())));
        });
        self.hosts.write().unwrap().insert(id, host);
    }

    /// As kill -9 would: the host stops answering and its groups stop; its RocksDB keeps what it synced.
    fn crash(&self, id: NodeId) {
        let host = self.hosts.write().unwrap().remove(&id).unwrap();
        self.listeners.write().unwrap().remove(&id).unwrap().abort();
        self.runtime.block_on(host.raft().shutdown());
    }
}

impl Hosts for TcpCluster {
    fn leader_of(&self, group: GroupId) -> Option<Arc<StorageHost>> {
        let (space, part) = ((group >> 32) as u32, group as u32);
        let hosts = self.hosts.read().unwrap();
        let leaders =
            hosts.values().filter_map(|h| h.replica(space, part).filter(|r| r.is_leader()).map(|r| (r.term(), h)));
        leaders.max_by_key(|(term, _)| *term).map(|(_, h)| h.clone())
    }
}

impl Cluster for TcpCluster {
    fn host(&self, id: NodeId) -> Option<Arc<StorageHost>> {
        self.hosts.read().unwrap().get(&id).cloned()
    }

    fn hosts(&self) -> Vec<Arc<StorageHost>> {
        self.hosts.read().unwrap().values().cloned().collect()
    }

    fn open_space(&self, space: &SpaceDesc) -> QResult<()> {
        if self.opened.read().unwrap().is_some() {
            return Ok(());
        }
        let desc = Arc::new(space.clone());
        let hosts = self.hosts();
        let members: BTreeMap<NodeId, BasicNode> =
            self.addrs.iter().map(|(id, a)| (*id, BasicNode::new(a.clone()))).collect();
        self.runtime.block_on(async {
            for part in 1..=PARTS {
                let mut replicas = Vec::new();
                for h in &hosts {
                    replicas.push(h.open_part(desc.clone(), part, self.transports[&h.id()].clone()).await?);
                }
                replicas[part as usize % 3]
                    .initialize(members.clone())
                    .await
                    .map_err(|e| QError::storage(e.to_string()))?;
            }
            QResult::Ok(())
        })?;
        *self.opened.write().unwrap() = Some(desc);
        let started = Instant::now();
        for part in 1..=PARTS {
            while self.leader_of(partition_group(space.id, part)).is_none() {
                assert!(started.elapsed() < Duration::from_secs(30), "no leader elected");
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        Ok(())
    }
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    sorted[((sorted.len() as f64 * p) as usize).min(sorted.len() - 1)].as_secs_f64() * 1000.0
}

fn report(what: &str, mut times: Vec<Duration>) {
    times.sort();
    let mean = times.iter().sum::<Duration>().as_secs_f64() * 1000.0 / times.len() as f64;
    println!(
        "{what:<46} {:>5} writes: p50 {:.2} ms, p99 {:.2} ms, mean {mean:.2} ms",
        times.len(),
        percentile(&times, 0.5),
        percentile(&times, 0.99)
    );
}

/// `n` single-edge inserts, each `src -> dst` with both ends in one partition (`cross` false) or two; the time of
/// each.
fn inserts(
    st: &dyn StorageClient,
    space: &SpaceDesc,
    edge: &SchemaRef,
    n: i64,
    cross: bool,
    from: i64,
) -> Vec<Duration> {
    let mut times = Vec::new();
    let mut src = from;
    while times.len() < n as usize {
        src += 1;
        let dst = src + PARTS as i64 * 1000 + i64::from(cross);
        let (s, d) = (Value::Int(src), Value::Int(dst));
        assert_eq!(part_of(space, &s) == part_of(space, &d), !cross);
        let key = EdgeKeyVal { src: s, edge_type: edge.id, rank: 0, dst: d };
        let m = Mutation::InsertEdge { key, schema: edge.clone(), values: vec![Value::Int(src)], if_not_exists: false };
        let t = Instant::now();
        st.write(space, vec![m]).expect("a write");
        times.push(t.elapsed());
    }
    times
}

fn main() {
    let n: i64 = std::env::args().nth(1).map_or(2000, |a| a.parse().expect("WRITES is a number"));
    let catalog = Arc::new(MetaStore::open(Arc::new(quiver_kv::MemEngine::new())).unwrap());
    let new =
        NewSpace { name: "s".into(), partition_num: PARTS, replica_factor: 3, vid_type: VidType::Int64, comment: None };
    catalog.create_space(new, false).unwrap();
    let space = catalog.space("s").unwrap();
    let def = PropDef { name: "w".into(), ty: PropType::Int64, nullable: true, default: None, comment: None };
    catalog.create_schema(&space, SchemaKind::Edge, "e", vec![def], 0, String::new(), None, false).unwrap();
    let edge = catalog.schema(&space, SchemaKind::Edge, "e").unwrap();

    let dir = tempfile::tempdir().unwrap();
    let embedded = EmbeddedStorage::new(Arc::new(RocksEngine::open(dir.path()).unwrap()));
    embedded.set_catalog(catalog.clone());
    inserts(&embedded, &space, &edge, 100, false, 1_000_000);
    report("embedded, one RocksDB", inserts(&embedded, &space, &edge, n, true, 0));

    let cluster = TcpCluster::start(catalog.clone());
    let st = ClusterStorage::new(cluster.clone());
    inserts(&st, &space, &edge, 100, true, 1_000_000);
    report("cluster, 3 replicas, both ends in one partition", inserts(&st, &space, &edge, n, false, 0));
    report("cluster, 3 replicas, ends in two partitions", inserts(&st, &space, &edge, n, true, 2_000_000));

    // Failover: the host leading partition 1 stops; writes to that partition go on until one is acknowledged.
    let victim = cluster.leader_of(partition_group(space.id, 1)).unwrap().id();
    cluster.crash(victim);
    let crashed = Instant::now();
    // When part 1 has a leader again, as its hosts see it.
    let elected = {
        let (c, group) = (cluster.clone(), partition_group(space.id, 1));
        std::thread::spawn(move || {
            while c.leader_of(group).is_none() {
                std::thread::sleep(Duration::from_millis(5));
            }
            crashed.elapsed()
        })
    };
    let mut src = 3_000_000 - 3_000_000 % PARTS as i64 - PARTS as i64;
    let mut failed = 0;
    loop {
        src += PARTS as i64;
        let key = EdgeKeyVal { src: Value::Int(src), edge_type: edge.id, rank: 0, dst: Value::Int(src + 1) };
        let m = Mutation::InsertEdge { key, schema: edge.clone(), values: vec![Value::Int(0)], if_not_exists: false };
        assert_eq!(part_of(&space, &Value::Int(src)), 1);
        match st.write(&space, vec![m]) {
            Ok(()) => break,
            Err(_) => failed += 1,
        }
    }
    let acked = crashed.elapsed();
    println!(
        "leader of part 1 (host {victim}) stopped: part 1 led again after {:.2} s, the next write to it acknowledged \
         after {:.2} s ({failed} failed before; election timeout {:?}-{:?})",
        elected.join().unwrap().as_secs_f64(),
        acked.as_secs_f64(),
        Timing::default().election_min,
        Timing::default().election_max
    );
    report("cluster, 2 of 3 replicas up, ends in two parts", inserts(&st, &space, &edge, n / 4, true, 4_000_000));
}
