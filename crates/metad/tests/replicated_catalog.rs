//! The catalog replicated by the meta group of three metads in one process (simulated network): DDL on the
//! leader reaches every replica's catalog; a follower refuses to write; after the leader is lost a new one takes
//! DDL, with space ids still never reused; the old leader, restarted on its engine, catches up.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use quiver_api::{Catalog, NewSpace, Role, SchemaKind, VidType};
use quiver_kv::{KvEngine, MemEngine};
use quiver_metad::MetaReplica;
use quiver_raft::sim::SimNet;
use quiver_raft::{BasicNode, NodeId, RaftHost, Timing};

const NODES: [NodeId; 3] = [1, 2, 3];

fn timing() -> Timing {
    Timing {
        heartbeat: Duration::from_millis(50),
        election_min: Duration::from_millis(300),
        election_max: Duration::from_millis(600),
        snapshot_every: 8,
    }
}

fn space(name: &str) -> NewSpace {
    NewSpace { name: name.into(), partition_num: 3, replica_factor: 1, vid_type: VidType::Int64, comment: None }
}

struct Metads {
    rt: tokio::runtime::Runtime,
    net: Arc<SimNet>,
    engines: HashMap<NodeId, Arc<dyn KvEngine>>,
    hosts: HashMap<NodeId, Arc<RaftHost>>,
    metas: HashMap<NodeId, MetaReplica>,
}

impl Metads {
    fn start() -> Metads {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        let engines = NODES.iter().map(|&n| (n, Arc::new(MemEngine::new()) as Arc<dyn KvEngine>)).collect();
        let mut m = Metads { net: SimNet::new(7), rt, engines, hosts: HashMap::new(), metas: HashMap::new() };
        for n in NODES {
            m.boot(n);
        }
        let members: BTreeMap<NodeId, BasicNode> =
            NODES.iter().map(|&n| (n, BasicNode::new(format!("metad-{n}")))).collect();
        m.rt.block_on(m.metas[&1].replica.initialize(members)).unwrap();
        m
    }

    fn boot(&mut self, n: NodeId) {
        let (net, engine) = (self.net.clone(), self.engines[&n].clone());
        let (host, meta) = self.rt.block_on(async move {
            let host = RaftHost::new(n, engine.clone(), timing());
            let meta = MetaReplica::open(&host, engine, net.transport(n)).await.unwrap();
            (host, meta)
        });
        self.net.add_host(host.clone());
        self.hosts.insert(n, host);
        self.metas.insert(n, meta);
    }

    fn crash(&mut self, n: NodeId) {
        self.net.remove_host(n);
        self.metas.remove(&n);
        if let Some(h) = self.hosts.remove(&n) {
            self.rt.block_on(h.shutdown());
        }
    }

    /// The node that leads now, waiting up to 10 s for one.
    fn leader(&self) -> NodeId {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some((&n, _)) = self.metas.iter().find(|(_, m)| m.replica.is_leader()) {
                return n;
            }
            assert!(Instant::now() < deadline, "no meta leader");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits until `check` holds on node `n`'s catalog.
    fn eventually(&self, n: NodeId, what: &str, check: impl Fn(&dyn Catalog) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !check(self.metas[&n].catalog.as_ref()) {
            assert!(Instant::now() < deadline, "node {n}: {what} never held");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

#[test]
fn ddl_reaches_every_replica_and_survives_losing_the_leader() {
    let mut m = Metads::start();
    let l = m.leader();
    let leader = m.metas[&l].catalog.clone();
    leader.ensure_root().unwrap();
    assert!(leader.create_space(space("s1"), false).unwrap());
    let s1 = leader.space("s1").unwrap().id;
    leader.create_user("alice", "hash-a".into(), false).unwrap();
    leader.grant("alice", s1, Role::Dba).unwrap();

    for n in NODES {
        m.eventually(n, "s1 and alice's role", |c| {
            c.space("s1").is_ok_and(|s| s.id == s1)
                && c.user("alice").is_some_and(|u| u.roles.get(&s1) == Some(&Role::Dba))
        });
        assert!(m.metas[&n].catalog.user("root").is_some());
    }

    // A follower does not write.
    let f = *NODES.iter().find(|&&n| n != l).unwrap();
    let err = m.metas[&f].catalog.create_space(space("nope"), false).unwrap_err();
    assert!(err.message.starts_with("Leader changed!"), "{err}");
    assert!(m.metas[&l].catalog.space("nope").is_err());
    // ... and a refused schema change leaves nothing behind on it.
    let s1_desc = m.metas[&f].catalog.space("s1").unwrap();
    let err = m.metas[&f]
        .catalog
        .create_schema(&s1_desc, SchemaKind::Tag, "ghost", Vec::new(), 0, String::new(), None, false)
        .unwrap_err();
    assert!(err.message.starts_with("Leader changed!"), "{err}");
    assert!(m.metas[&f].catalog.schemas(&s1_desc, SchemaKind::Tag).is_empty());

    // Lose the leader: another takes DDL, and ids go on from where they were.
    m.crash(l);
    let lost_at = Instant::now();
    let l2 = m.leader();
    assert_ne!(l2, l);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match m.metas[&l2].catalog.create_space(space("s2"), false) {
            Ok(_) => break,
            Err(e) => {
                assert!(Instant::now() < deadline, "the new leader never took DDL: {e}");
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }
    eprintln!("DDL on the new meta leader {:?} after losing the old one", lost_at.elapsed());
    let s2 = m.metas[&l2].catalog.space("s2").unwrap().id;
    assert_eq!(s2, s1 + 1, "space ids are never reused");
    m.metas[&l2].catalog.drop_space("s1", false).unwrap();
    // More writes than a snapshot's interval, so the old leader may catch up by snapshot.
    for i in 0..12 {
        m.metas[&l2].catalog.create_user(&format!("u{i}"), "h".into(), false).unwrap();
    }

    // The old leader comes back on its engine and catches up.
    m.boot(l);
    m.eventually(l, "the new leader's DDL", |c| {
        c.space("s2").is_ok_and(|s| s.id == s2) && c.space("s1").is_err() && c.user("u11").is_some()
    });
    // alice's role went with s1.
    m.eventually(l, "roles of dropped spaces gone", |c| c.user("alice").is_some_and(|u| u.roles.is_empty()));
    for n in NODES {
        m.crash(n);
    }
}

/// Storage hosts join with ADD HOSTS, heartbeat to the leader, and CREATE SPACE places partitions only on the
/// online ones, evenly; every replica sees the placement; a host carrying partitions cannot be dropped.
#[test]
fn hosts_heartbeats_and_partition_placement() {
    let mut m = Metads::start();
    let l = m.leader();
    let meta = &m.metas[&l];
    let hosts: Vec<String> = (1..=4).map(|i| format!("127.0.0.{i}:9779")).collect();
    meta.catalog.add_hosts(&hosts[..3]).unwrap();
    assert_eq!(meta.catalog.add_hosts(&hosts[..1]).unwrap_err().message, "Existed!");
    assert_eq!(meta.catalog.add_hosts(&[hosts[3].clone(), hosts[3].clone()]).unwrap_err().message, "Invalid param!");
    meta.catalog.add_hosts(&hosts[3..]).unwrap();

    let live = quiver_metad::Liveness::new(Duration::from_millis(500));
    assert_eq!(meta.heartbeat(&live, "10.0.0.1:9779").unwrap_err().message, "Machine not existed!");
    for h in &hosts[..3] {
        meta.heartbeat(&live, h).unwrap();
    }
    let status = meta.host_status(&live);
    assert_eq!(status.iter().filter(|(_, up)| *up).count(), 3, "{status:?}");

    // Four replicas need four online hosts.
    let mut wide = space("wide");
    wide.replica_factor = 4;
    assert_eq!(meta.create_space(&live, wide, false).unwrap_err().message, "Host not enough!");
    let mut sp = space("placed");
    sp.partition_num = 6;
    sp.replica_factor = 2;
    assert!(meta.create_space(&live, sp, false).unwrap());
    let parts = meta.catalog.parts_of("placed").unwrap();
    assert_eq!(parts.len(), 6);
    let mut per_host: BTreeMap<&String, usize> = BTreeMap::new();
    for p in &parts {
        assert_eq!(p.len(), 2);
        assert!(!p.contains(&hosts[3]), "an offline host got a replica: {parts:?}");
        for h in p {
            *per_host.entry(h).or_default() += 1;
        }
    }
    assert_eq!(per_host.values().copied().collect::<Vec<_>>(), vec![4, 4, 4]);
    for n in NODES {
        m.eventually(n, "the placement", |_| m.metas[&n].catalog.parts_of("placed").is_ok_and(|p| p == parts));
    }

    // Hosts go OFFLINE without heartbeats.
    std::thread::sleep(Duration::from_millis(600));
    meta.heartbeat(&live, &hosts[0]).unwrap();
    let online: Vec<_> = meta.host_status(&live).into_iter().filter(|(_, up)| *up).map(|(h, _)| h).collect();
    assert_eq!(online, vec![hosts[0].clone()]);

    assert_eq!(meta.catalog.drop_hosts(&hosts[..1]).unwrap_err().message, "There are still space on the host");
    assert_eq!(meta.catalog.drop_hosts(&["10.9.9.9:1".to_string()]).unwrap_err().message, "No hosts!");
    meta.catalog.drop_hosts(&hosts[3..]).unwrap();
    assert_eq!(meta.catalog.hosts(), hosts[..3].to_vec());
    for n in NODES {
        m.crash(n);
    }
}
