//! Faults in the simulated cluster: a partition leader's host crashes in the middle of writes. Writes keep
//! being acknowledged once a new leader is elected; every acknowledged write reads back; the crashed host, started
//! again on what its engine kept, catches up and then carries a quorum of its own.

use quiver_api::conformance::space_with_schema;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use quiver_api::*;
use quiver_cluster::{ClusterStorage, SimCluster};
use quiver_common::Value;
use quiver_kv::MemEngine;
use quiver_meta::MetaStore;
use quiver_raft::Timing;

fn timing() -> Timing {
    Timing {
        heartbeat: Duration::from_millis(50),
        election_min: Duration::from_millis(200),
        election_max: Duration::from_millis(400),
        snapshot_every: 50,
    }
}

struct Setup {
    sim: Arc<SimCluster>,
    storage: ClusterStorage,
    space: Arc<SpaceDesc>,
    tag: SchemaRef,
}

fn setup() -> Setup {
    let catalog = Arc::new(MetaStore::open(Arc::new(MemEngine::new())).expect("an empty catalog opens"));
    let (space, tag) = space_with_schema(catalog.as_ref(), 6, 3, SchemaKind::Tag, "t", "n");
    let sim = SimCluster::start(3, 3, catalog.clone(), timing(), 11);
    let storage = ClusterStorage::new(sim.clone(), catalog.clone());
    Setup { sim, storage, space, tag }
}

impl Setup {
    fn insert(&self, i: i64) -> QResultUnit {
        let m = Mutation::InsertVertex {
            vid: Value::Int(i),
            tags: vec![(self.tag.clone(), vec![Value::Int(i * 10)])],
            if_not_exists: false,
        };
        self.storage.write(&self.space, vec![m]).map_err(|e| e.message)
    }

    /// The value each of `vids` reads back with (None: no row).
    fn read(&self, vids: &[i64]) -> BTreeMap<i64, Option<Value>> {
        let vs: Vec<Value> = vids.iter().map(|&i| Value::Int(i)).collect();
        let rows = self
            .storage
            .get_vertices(&self.space, &vs, std::slice::from_ref(&self.tag), &PropSelection::All)
            .expect("a read");
        vids.iter()
            .zip(rows)
            .map(|(&i, r)| (i, r.and_then(|v| v.tags.first().and_then(|(_, p)| p.get("n").cloned()))))
            .collect()
    }
}

type QResultUnit = Result<(), String>;

#[test]
fn a_leader_crash_loses_no_acknowledged_write() {
    let s = setup();
    let mut acked = Vec::new();
    let mut failed = Vec::new();
    for i in 0..60 {
        s.insert(i).expect("writes before any fault");
        acked.push(i);
    }
    // Part 1 holds the VIDs that are multiples of 6.
    let victim = s.sim.leader_id(s.space.id, 1).expect("part 1 has a leader");
    s.sim.crash(victim);
    let crashed = Instant::now();
    let mut first_after: Option<Duration> = None;
    for i in 60..240 {
        match s.insert(i) {
            Ok(()) => {
                if i % 6 == 0 && first_after.is_none() {
                    first_after = Some(crashed.elapsed());
                }
                acked.push(i);
            }
            Err(e) => failed.push((i, e)),
        }
    }
    let first_after = first_after.expect("part 1 took a write after its leader crashed");
    println!("first write to the crashed leader's partition acknowledged {first_after:?} after the crash");
    assert!(first_after < Duration::from_secs(5), "failover took {first_after:?}");
    assert!(failed.is_empty(), "writes failed while a majority was up: {failed:?}");
    assert_ne!(s.sim.leader_id(s.space.id, 1), Some(victim));

    // Back on what its engine kept: it catches up (by log or snapshot) on the writes it missed.
    s.sim.restart(victim);
    for i in 240..300 {
        s.insert(i).expect("writes after the restart");
        acked.push(i);
    }
    // Each other host in turn goes down: every partition's quorum then needs the restarted host.
    for other in (1..=3).filter(|&h| h != victim) {
        s.sim.crash(other);
        let read = s.read(&acked);
        let lost: Vec<i64> = acked.iter().copied().filter(|i| read[i] != Some(Value::Int(i * 10))).collect();
        assert!(lost.is_empty(), "acknowledged writes not read back with host {other} down: {lost:?}");
        s.sim.restart(other);
    }
    let stats = s.storage.stats(&s.space).expect("stats");
    assert_eq!(stats.vertices, acked.len() as i64, "SHOW STATS counts every acknowledged vertex once");
}

/// What a host catching up before a read of the whole space asks another host for, one request per host: the read
/// index of each partition named. A host answers each partition it leads with an index that covers every write
/// acknowledged before the request (at least its replica's applied index before it), and each one it does not
/// lead as not led, in the order asked; the answer survives the request encoding.
#[test]
fn a_host_answers_the_read_indexes_of_the_partitions_it_leads_in_one_request() {
    use quiver_cluster::rpc::{decode, encode, Answer, HostRequest};
    let s = setup();
    for i in 0..60 {
        s.insert(i).expect("a write");
    }
    let parts: Vec<u32> = (1..=6).chain([99]).collect();
    let mut led_somewhere = 0;
    for host in s.sim.storage_hosts() {
        let before: Vec<Option<u64>> =
            parts.iter().map(|&p| host.replica(s.space.id, p).filter(|r| r.is_leader()).map(|r| r.applied())).collect();
        let answer = host.serve(HostRequest::ReadIndexes { space: s.space.id, parts: parts.clone() });
        let bytes = encode(&answer.expect("served"));
        let Answer::ReadIndexes(indexes) = decode::<Answer>(&bytes, "answer").expect("decodes") else {
            panic!("not an answer of read indexes")
        };
        assert_eq!(indexes.len(), parts.len(), "one answer per partition asked");
        for ((part, led), index) in parts.iter().zip(before).zip(indexes) {
            match (led, index) {
                (Some(applied), Ok(index)) => {
                    assert!(index >= applied, "part {part}: read index {index} below applied {applied}");
                    led_somewhere += 1;
                }
                (None, Err(quiver_raft::ReplicaError::NotLeader { .. })) => {}
                // An election between the two looks (none is expected on the quiet simulated network).
                (Some(_), Err(quiver_raft::ReplicaError::NotLeader { .. }))
                    if !host.replica(s.space.id, *part).is_some_and(|r| r.is_leader()) =>
                {
                    led_somewhere += 1
                }
                (led, index) => panic!("part {part} on host {}: led {led:?}, answered {index:?}", host.id()),
            }
        }
    }
    assert_eq!(led_somewhere, 6, "every partition answered by the host leading it");
}
