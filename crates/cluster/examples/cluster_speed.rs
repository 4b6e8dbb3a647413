//! Measures, with three replicas, single-edge write latency, 1-hop neighbour reads at 16 clients, and the time from
//! losing a leader to the next acknowledged write (docs/design/cluster.md §9): three storage hosts in this process,
//! each over its own RocksDB in a temporary directory, Raft over loopback TCP with the cluster's default timing,
//! requests through graphd's `ClusterStorage` (in process: no graphd hop). Beside them, the same requests to one
//! embedded storage over RocksDB.
//!
//! `cargo run --release -p quiver-cluster --example cluster_speed -- [WRITES]`

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock, Weak};
use std::time::{Duration, Instant};

use quiver_api::*;
use quiver_cluster::{latest_leader, Cluster, ClusterStorage, HostHandle, Hosts, PartLeader, StorageHost};
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
    /// The spaces whose partitions run, by id.
    opened: RwLock<BTreeMap<u32, Arc<SpaceDesc>>>,
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
        let spaces: Vec<Arc<SpaceDesc>> = self.opened.read().unwrap().values().cloned().collect();
        self.runtime.block_on(async {
            for space in spaces {
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

impl TcpCluster {
    fn leader(&self, group: GroupId) -> Option<Arc<StorageHost>> {
        let (space, part) = ((group >> 32) as u32, group as u32);
        latest_leader(self.hosts.read().unwrap().values(), space, part)
    }
}

impl Hosts for TcpCluster {
    fn part_leader(&self, space: u32, part: u32) -> Option<Arc<dyn PartLeader>> {
        let replica = self.leader(partition_group(space, part))?.replica(space, part)?;
        Some(replica)
    }
}

impl Cluster for TcpCluster {
    fn host(&self, id: NodeId) -> Option<Arc<dyn HostHandle>> {
        self.hosts.read().unwrap().get(&id).cloned().map(|h| h as Arc<dyn HostHandle>)
    }

    fn hosts(&self) -> Vec<Arc<dyn HostHandle>> {
        self.hosts.read().unwrap().values().cloned().map(|h| h as Arc<dyn HostHandle>).collect()
    }

    fn leader_of(&self, space: u32, part: u32) -> Option<Arc<dyn HostHandle>> {
        self.leader(partition_group(space, part)).map(|h| h as Arc<dyn HostHandle>)
    }

    fn carried_whole(&self, _space: &SpaceDesc) -> bool {
        // Every host carries every partition.
        true
    }

    fn open_space(&self, space: &SpaceDesc) -> QResult<()> {
        if self.opened.read().unwrap().contains_key(&space.id) {
            return Ok(());
        }
        let desc = Arc::new(space.clone());
        let hosts: Vec<Arc<StorageHost>> = self.hosts.read().unwrap().values().cloned().collect();
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
        self.opened.write().unwrap().insert(space.id, desc);
        let started = Instant::now();
        for part in 1..=PARTS {
            while self.leader(partition_group(space.id, part)).is_none() {
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

/// Loads `n` edges `i -> (i * 7919 + 1) % vertices` in statements of 500 (the read workload's graph).
fn load(st: &dyn StorageClient, space: &SpaceDesc, edge: &SchemaRef, n: i64, vertices: i64) {
    let all: Vec<Mutation> = (0..n)
        .map(|i| {
            let (src, dst) = (i % vertices, (i * 7919 + 1) % vertices);
            let key = EdgeKeyVal { src: Value::Int(src), edge_type: edge.id, rank: i, dst: Value::Int(dst) };
            Mutation::InsertEdge { key, schema: edge.clone(), values: vec![Value::Int(i)], if_not_exists: false }
        })
        .collect();
    for chunk in all.chunks(500) {
        st.write(space, chunk.to_vec()).expect("a load");
    }
}

/// 1-hop neighbour reads (out-edges with their properties) of random vertices from `clients` threads for `secs`:
/// reads a second, and the mean edges per read.
fn one_hop(
    st: &(dyn StorageClient + Sync),
    space: &SpaceDesc,
    edge: &SchemaRef,
    vertices: i64,
    clients: u64,
    secs: u64,
) -> (f64, f64) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    let started = Instant::now();
    let (reads, edges): (Vec<u64>, Vec<u64>) = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..clients)
            .map(|c| {
                scope.spawn(move || {
                    let (mut reads, mut edges, mut x) = (0u64, 0u64, c * 2654435761 + 1);
                    while Instant::now() < deadline {
                        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                        let v = ((x >> 33) as i64) % vertices;
                        let req = NeighborsRequest {
                            vids: vec![Value::Int(v)],
                            edge_types: vec![(edge.id, edge.clone())],
                            props: PropSelection::All,
                            filter: None,
                            limit: None,
                            budget: quiver_common::budget::Budget::unlimited(),
                        };
                        edges += st.get_neighbors(space, &req).expect("a read").len() as u64;
                        reads += 1;
                    }
                    (reads, edges)
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).unzip()
    });
    let (reads, edges): (u64, u64) = (reads.iter().sum(), edges.iter().sum());
    (reads as f64 / started.elapsed().as_secs_f64(), edges as f64 / reads as f64)
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
    let st = ClusterStorage::new(cluster.clone(), catalog.clone());
    inserts(&st, &space, &edge, 100, true, 1_000_000);
    report("cluster, 3 replicas, both ends in one partition", inserts(&st, &space, &edge, n, false, 0));
    report("cluster, 3 replicas, ends in two partitions", inserts(&st, &space, &edge, n, true, 2_000_000));

    // 1-hop reads over the same graph in both: 10,000 vertices, 100,000 edges.
    let (vertices, edges) = (10_000, 100_000);
    let read_space = {
        let new = NewSpace {
            name: "r".into(),
            partition_num: PARTS,
            replica_factor: 3,
            vid_type: VidType::Int64,
            comment: None,
        };
        catalog.create_space(new, false).unwrap();
        catalog.space("r").unwrap()
    };
    let def = PropDef { name: "w".into(), ty: PropType::Int64, nullable: true, default: None, comment: None };
    catalog.create_schema(&read_space, SchemaKind::Edge, "e", vec![def], 0, String::new(), None, false).unwrap();
    let read_edge = catalog.schema(&read_space, SchemaKind::Edge, "e").unwrap();
    load(&embedded, &read_space, &read_edge, edges, vertices);
    let t = Instant::now();
    load(&st, &read_space, &read_edge, edges, vertices);
    println!("cluster: {edges} edges loaded in statements of 500 in {:.1} s", t.elapsed().as_secs_f64());
    let (embedded_rate, per) = one_hop(&embedded, &read_space, &read_edge, vertices, 16, 5);
    let (cluster_rate, _) = one_hop(&st, &read_space, &read_edge, vertices, 16, 5);
    println!(
        "1-hop reads, 16 clients, {per:.1} edges each: embedded {embedded_rate:.0}/s, cluster {cluster_rate:.0}/s \
         (cluster/embedded {:.2})",
        cluster_rate / embedded_rate
    );

    // Failover: the host leading partition 1 stops; writes to that partition go on until one is acknowledged.
    let victim = cluster.leader(partition_group(space.id, 1)).unwrap().id();
    cluster.crash(victim);
    let crashed = Instant::now();
    // When part 1 has a leader again, as its hosts see it.
    let elected = {
        let (c, group) = (cluster.clone(), partition_group(space.id, 1));
        std::thread::spawn(move || {
            while c.leader(group).is_none() {
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
