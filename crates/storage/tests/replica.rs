//! Replicated writes: a second storage fed only the batches the first one commits (`observe_commits` →
//! `apply_replicated`, as a Raft follower is fed) must answer every read as the first does, with its topology and
//! property caches built before the batches arrive (so they are mirrored from the batches' keys) and hot: random
//! vertex, tag and edge inserts, overwrites, deletes (vertices with their edges), and a CLEAR SPACE.

use quiver_api::*;
use quiver_common::rng::Rng;
use quiver_common::{PropType, Value};
use quiver_kv::{MemEngine, WriteBatch, WriteOp};
use quiver_storage::EmbeddedStorage;
use std::sync::{Arc, Mutex};

mod support;
use support::prop;

fn person() -> SchemaRef {
    support::schema(
        SchemaKind::Tag,
        1,
        "person",
        vec![vec![prop("name", PropType::String), prop("age", PropType::Int64)]],
        None,
    )
}

fn team() -> SchemaRef {
    support::schema(SchemaKind::Tag, 2, "team", vec![vec![prop("name", PropType::String)]], None)
}

fn knows() -> SchemaRef {
    support::schema(SchemaKind::Edge, 5, "knows", vec![vec![prop("w", PropType::Int64)]], None)
}

fn likes() -> SchemaRef {
    support::schema(SchemaKind::Edge, 6, "likes", vec![vec![prop("score", PropType::Double)]], None)
}

fn vid(space: &SpaceDesc, i: u64) -> Value {
    match space.vid_type {
        VidType::Int64 => Value::Int(i as i64 * 7 - 30),
        VidType::FixedString(_) => Value::str(format!("v{i}")),
    }
}

fn random_mutation(rng: &mut Rng, space: &SpaceDesc, n: u64) -> Mutation {
    let (a, b) = (vid(space, rng.below(n)), vid(space, rng.below(n)));
    match rng.below(12) {
        0..=2 => {
            let mut tags =
                vec![(person(), vec![Value::str(format!("p{}", rng.below(100))), Value::Int(rng.below(90) as i64)])];
            if rng.below(3) == 0 {
                tags.push((team(), vec![Value::str(format!("t{}", rng.below(9)))]));
            }
            Mutation::InsertVertex { vid: a, tags, if_not_exists: rng.below(4) == 0 }
        }
        3..=7 => {
            let (schema, values) = if rng.below(3) > 0 {
                (knows(), vec![Value::Int(rng.below(100) as i64)])
            } else {
                (likes(), vec![Value::Float(rng.below(40) as f64 / 8.0)])
            };
            let key = EdgeKeyVal { src: a, edge_type: schema.id, rank: rng.below(2) as i64, dst: b };
            Mutation::InsertEdge { key, schema, values, if_not_exists: rng.below(4) == 0 }
        }
        8..=9 => {
            let et = if rng.below(2) == 0 { 5 } else { 6 };
            Mutation::DeleteEdge { key: EdgeKeyVal { src: a, edge_type: et, rank: rng.below(2) as i64, dst: b } }
        }
        10 => Mutation::DeleteTags { vid: a, tags: Some(vec![person()]) },
        _ => Mutation::DeleteVertex { vid: a, with_edges: rng.below(3) > 0 },
    }
}

/// Everything both storages are compared on, as text.
fn reads(s: &EmbeddedStorage, space: &SpaceDesc, vids: &[Value]) -> Vec<String> {
    let types = [(5, knows()), (-5, knows()), (6, likes()), (-6, likes())];
    let mut out = Vec::new();
    for props in [PropSelection::All, PropSelection::None] {
        let req = support::neighbors(vids, &types, props);
        let mut rows: Vec<String> = s.get_neighbors(space, &req).unwrap().iter().map(|e| format!("{e:?}")).collect();
        rows.sort();
        out.extend(rows);
    }
    let tags = [person(), team()];
    out.extend(s.get_vertices(space, vids, &tags, &PropSelection::All).unwrap().iter().map(|v| format!("{v:?}")));
    out.extend(s.get_vertices(space, vids, &[], &PropSelection::None).unwrap().iter().map(|v| format!("{v:?}")));
    for c in s.get_tag_columns(space, vids, &tags, &PropSelection::All).unwrap() {
        out.push(format!("{:?} {:?} {:?}", c.present, c.names, c.columns));
    }
    out.push(format!("{:?}", s.stats(space).unwrap()));
    out
}

/// Reads until every tag and edge type is cached (their read counts pass the thresholds).
fn make_hot(s: &EmbeddedStorage, space: &SpaceDesc, vids: &[Value]) {
    for _ in 0..quiver_storage::vcache::HOT_READS / vids.len() as u64 + 2 {
        reads(s, space, vids);
    }
}

/// Vertices the random writes touch.
const VERTICES: u64 = 40;

/// Six rounds of 250 random writes to `leader` (a CLEAR SPACE before the fifth), each round's batches shipped to
/// the replica; after the second and the fifth, `hot` (from there on the batches are mirrored into a built
/// topology and hot caches); after every round, `check` with its number.
fn rounds(
    leader: &EmbeddedStorage,
    space: &SpaceDesc,
    seed: u64,
    ship: &dyn Fn(),
    hot: &dyn Fn(),
    check: &dyn Fn(u32),
) {
    let mut rng = Rng(seed);
    for round in 0..6 {
        if round == 4 {
            leader.clear_space(space).unwrap();
        }
        for _ in 0..250 {
            leader.write(space, vec![random_mutation(&mut rng, space, VERTICES)]).unwrap();
        }
        ship();
        if round == 1 || round == 4 {
            hot();
        }
        check(round);
    }
}

fn replica_agrees(vid_type: VidType, seed: u64) {
    let space = SpaceDesc { id: 4, name: "g".into(), partition_num: 3, replica_factor: 1, vid_type, comment: None };
    let leader = EmbeddedStorage::new(Arc::new(MemEngine::new()));
    let follower = EmbeddedStorage::new(Arc::new(MemEngine::new()));
    let log: Arc<Mutex<Vec<(u32, WriteBatch)>>> = Arc::default();
    let sink = log.clone();
    leader.observe_commits(Arc::new(move |space, batch| sink.lock().unwrap().push((space.id, batch.clone()))));
    let vids: Vec<Value> = (0..VERTICES).map(|i| vid(&space, i)).collect();
    let ship = || {
        for (space_id, batch) in log.lock().unwrap().drain(..) {
            assert_eq!(space_id, space.id);
            follower.apply_replicated(&space, batch).unwrap();
        }
    };
    let hot = || {
        make_hot(&follower, &space, &vids);
        assert_eq!(follower.edge_cache_stats(&space).len(), 2, "seed {seed}: both edge types cached");
        assert_eq!(follower.vertex_cache_stats(&space).len(), 2, "seed {seed}: both tags cached");
    };
    let check = |round| {
        assert_eq!(reads(&follower, &space, &vids), reads(&leader, &space, &vids), "seed {seed}, round {round}");
    };
    rounds(&leader, &space, seed, &ship, &hot, &check);
    assert!(!follower.edge_cache_stats(&space).is_empty(), "seed {seed}: the caches were mirrored, not dropped");
}

#[test]
fn a_replica_fed_the_committed_batches_answers_as_the_leader() {
    for seed in 1..=3 {
        replica_agrees(VidType::Int64, seed);
        replica_agrees(VidType::FixedString(8), seed + 100);
    }
}

/// A cluster host carries only some of a space's partitions, so an in-copy stored there may have its out-copy on
/// another host. Fed only its partitions' keys, keeping each direction's edge property cache apart
/// (`keep_edge_directions_apart`), with every cache built and hot before the batches arrive, it answers every read
/// of its own vertices (both directions of both edge types, with and without properties; their tags) as the whole
/// storage does.
fn partial_replica_agrees(vid_type: VidType, seed: u64) {
    let space = SpaceDesc { id: 4, name: "g".into(), partition_num: 3, replica_factor: 1, vid_type, comment: None };
    let held = [1u32, 3];
    let leader = EmbeddedStorage::new(Arc::new(MemEngine::new()));
    let host = EmbeddedStorage::new(Arc::new(MemEngine::new()));
    host.keep_edge_directions_apart();
    let log: Arc<Mutex<Vec<WriteBatch>>> = Arc::default();
    let sink = log.clone();
    leader.observe_commits(Arc::new(move |_, batch| sink.lock().unwrap().push(batch.clone())));
    let vids: Vec<Value> = (0..VERTICES).map(|i| vid(&space, i)).collect();
    let local: Vec<Value> =
        vids.iter().filter(|v| held.contains(&quiver_storage::keys::part_of(&space, v))).cloned().collect();
    assert!(local.len() > 5 && local.len() < vids.len(), "seed {seed}: some vertices are elsewhere");
    let ship = || {
        for batch in log.lock().unwrap().drain(..) {
            let mut mine = WriteBatch::new();
            for op in batch.ops {
                let key = match &op {
                    WriteOp::Put(k, _) | WriteOp::Delete(k) => k,
                    // A range delete of other partitions finds nothing here.
                    WriteOp::DeleteRange(..) => {
                        mine.ops.push(op);
                        continue;
                    }
                };
                if held.contains(&quiver_storage::keys::part_of_key(space.id, key).unwrap()) {
                    mine.ops.push(op);
                }
            }
            host.apply_replicated(&space, mine).unwrap();
        }
    };
    let local_reads = |s: &EmbeddedStorage| {
        let types = [(5, knows()), (-5, knows()), (6, likes()), (-6, likes())];
        let mut out = Vec::new();
        for props in [PropSelection::All, PropSelection::None] {
            let req = support::neighbors(&local, &types, props);
            let mut rows: Vec<String> =
                s.get_neighbors(&space, &req).unwrap().iter().map(|e| format!("{e:?}")).collect();
            rows.sort();
            out.extend(rows);
        }
        let tags = [person(), team()];
        let found = s.get_vertices(&space, &local, &tags, &PropSelection::All).unwrap();
        out.extend(found.iter().map(|v| format!("{v:?}")));
        out
    };
    let hot = || {
        for _ in 0..quiver_storage::ecache::HOT_READS / local.len() as u64 + 2 {
            local_reads(&host);
        }
        let cached: Vec<i32> = host.edge_cache_stats(&space).iter().map(|(t, _, _)| *t).collect();
        assert_eq!(cached, vec![-6, -5, 5, 6], "seed {seed}: each direction cached apart");
    };
    let check = |round| assert_eq!(local_reads(&host), local_reads(&leader), "seed {seed}, round {round}");
    rounds(&leader, &space, seed, &ship, &hot, &check);
    assert_eq!(host.edge_cache_stats(&space).len(), 4, "seed {seed}: the caches were mirrored, not dropped");
}

#[test]
fn a_host_with_some_partitions_caches_each_edge_direction_apart() {
    for seed in 1..=3 {
        partial_replica_agrees(VidType::Int64, seed);
        partial_replica_agrees(VidType::FixedString(8), seed + 100);
    }
}

#[test]
fn a_batch_outside_its_space_is_refused_whole() {
    let space = support::int_space(4);
    let s = EmbeddedStorage::new(Arc::new(MemEngine::new()));
    let mut b = WriteBatch::new();
    let inside = [&4u32.to_be_bytes()[..], &1u32.to_be_bytes(), &[0x07], &5i64.to_le_bytes()].concat();
    b.put(inside.clone(), Vec::new());
    b.put([&5u32.to_be_bytes()[..], &1u32.to_be_bytes(), &[0x07]].concat(), Vec::new());
    let e = s.apply_replicated(&space, b).unwrap_err();
    assert_eq!(e.message, "Storage Error: a replicated batch of space 4 writes outside its range");
    assert_eq!(s.get_vertices(&space, &[Value::Int(5)], &[], &PropSelection::None).unwrap(), vec![None]);
    let mut b = WriteBatch::new();
    b.put([&4u32.to_be_bytes()[..], &1u32.to_be_bytes(), &[0x07], &[1, 2]].concat(), Vec::new());
    let e = s.apply_replicated(&space, b).unwrap_err();
    assert_eq!(e.message, "Storage Error: a replicated batch holds a key too short for its kind");
}
