//! The in-memory topology against the key-value store it mirrors: random writes (inserts, re-inserts, deletes,
//! vertex deletes with edges, ranks, string and integer VIDs) must leave both read paths returning the same edges
//! in the same order, through delta merges, and expansion counts must match a reference traversal.

use quiver_api::*;
use quiver_common::budget::{Budget, Limits, TICKS_PER_CHECK};
use quiver_common::rng::Rng;
use quiver_common::{PropType, Value};
use quiver_kv::MemEngine;
use quiver_storage::topology::DELTA_MERGE_EDGES;
use quiver_storage::EmbeddedStorage;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

#[allow(dead_code, reason = "each test binary uses its own part of the shared module")]
mod support;

fn edge_schema(id: i32, name: &str) -> SchemaRef {
    Arc::new(SchemaDesc {
        kind: SchemaKind::Edge,
        id,
        name: name.into(),
        versions: vec![SchemaVersion {
            version: 0,
            props: vec![PropDef {
                name: "w".into(),
                ty: PropType::Int64,
                nullable: true,
                default: None,
                comment: None,
            }],
        }],
        ttl_duration: 0,
        ttl_col: String::new(),
        comment: None,
    })
}

fn vid(space: &SpaceDesc, i: u64) -> Value {
    match space.vid_type {
        VidType::Int64 => Value::Int(i as i64 - 20),
        VidType::FixedString(_) => Value::str(format!("v{i}")),
    }
}

fn neighbors(
    s: &EmbeddedStorage,
    space: &SpaceDesc,
    vids: &[Value],
    types: &[(i32, SchemaRef)],
    props: PropSelection,
) -> Vec<(Value, i32, i64, Value)> {
    let req = support::neighbors(vids, types, props);
    s.get_neighbors(space, &req).unwrap().into_iter().map(|e| (e.from, e.edge_type, e.rank, e.to)).collect()
}

/// Applies `ops` random writes over `n` vertices and checks both read paths agree after every `check_every`.
fn random_writes_agree(vid_type: VidType, seed: u64, n: u64, ops: usize) {
    let space = SpaceDesc { id: 7, name: "g".into(), partition_num: 4, replica_factor: 1, vid_type, comment: None };
    let s = EmbeddedStorage::new(Arc::new(MemEngine::new()));
    let (a, b) = (edge_schema(3, "a"), edge_schema(4, "b"));
    let types: Vec<(i32, SchemaRef)> = vec![(3, a.clone()), (-3, a.clone()), (4, b.clone()), (-4, b.clone())];
    let all: Vec<Value> = (0..n).map(|i| vid(&space, i)).collect();
    let mut rng = Rng(seed);
    // Half the edges exist before the topology is built, half arrive after (when the writers ask the topology,
    // not the store, whether an edge or vertex is already stored). A batch of several mutations may write the
    // same key twice.
    for round in 0..2 {
        let mut written = 0;
        while written < ops / 2 {
            let mut batch = Vec::new();
            for _ in 0..1 + rng.below(4) {
                let (x, y) = (vid(&space, rng.below(n)), vid(&space, rng.below(n)));
                let schema = if rng.below(3) == 0 { b.clone() } else { a.clone() };
                let rank = if rng.below(5) == 0 { rng.below(3) as i64 - 1 } else { 0 };
                let key = EdgeKeyVal { src: x.clone(), edge_type: schema.id, rank, dst: y };
                batch.push(match rng.below(12) {
                    0..=5 => Mutation::InsertEdge {
                        key,
                        schema,
                        values: vec![Value::Int(1)],
                        if_not_exists: rng.below(2) == 0,
                    },
                    6..=8 => Mutation::DeleteEdge { key },
                    9 | 10 => Mutation::InsertVertex { vid: x, tags: Vec::new(), if_not_exists: rng.below(2) == 0 },
                    _ => Mutation::DeleteVertex { vid: x, with_edges: true },
                });
            }
            written += batch.len();
            s.write(&space, batch).unwrap();
        }
        // The counters kept on every write are what a recount finds.
        let parts: Vec<u32> = (1..=space.partition_num).collect();
        let kept = s.stats_of_parts(&space, &parts).unwrap();
        for &part in &parts {
            s.recount_part(&space, part).unwrap();
        }
        assert_eq!(kept, s.stats_of_parts(&space, &parts).unwrap(), "seed {seed}, round {round}");
        if round == 0 {
            // Builds the topology from what is stored so far.
            neighbors(&s, &space, &all, &types, PropSelection::None);
        }
        let from_kv = neighbors(&s, &space, &all, &types, PropSelection::All);
        let from_topology = neighbors(&s, &space, &all, &types, PropSelection::None);
        assert_eq!(from_topology, from_kv, "seed {seed}, round {round}");
        let stats = s.topology_stats(&space).unwrap();
        assert_eq!(stats.directed_edges, from_kv.len(), "every edge counted in both directions");
    }
}

#[test]
fn topology_equals_the_store_after_random_writes_int_vids() {
    for seed in 1..=4 {
        random_writes_agree(VidType::Int64, seed * 7919, 60, 3000);
    }
}

#[test]
fn topology_equals_the_store_after_random_writes_string_vids() {
    for seed in 1..=4 {
        random_writes_agree(VidType::FixedString(8), seed * 104729, 60, 3000);
    }
}

#[test]
fn deltas_are_merged_in_the_background() {
    let space = SpaceDesc {
        id: 9,
        name: "m".into(),
        partition_num: 2,
        replica_factor: 1,
        vid_type: VidType::Int64,
        comment: None,
    };
    let s = EmbeddedStorage::new(Arc::new(MemEngine::new()));
    let e = edge_schema(3, "a");
    assert_eq!(s.topology_stats(&space).unwrap().directed_edges, 0);
    // One hub gets enough edges for its page's delta to pass the merge threshold.
    let mutations = (0..DELTA_MERGE_EDGES as i64 + 10)
        .map(|i| Mutation::InsertEdge {
            key: EdgeKeyVal { src: Value::Int(0), edge_type: 3, rank: 0, dst: Value::Int(i + 1) },
            schema: e.clone(),
            values: vec![Value::NULL],
            if_not_exists: false,
        })
        .collect();
    s.write(&space, mutations).unwrap();
    // Ten pages got a delta: the hub's out-edge page, and nine pages of in-edges (one per 256 far ends), each
    // below the threshold. Only the hub's is due for a merge.
    let mut merged = false;
    for _ in 0..200 {
        let st = s.topology_stats(&space).unwrap();
        if st.pages_with_delta == 9 {
            merged = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(merged, "the hub's page delta was not merged: {:?}", s.topology_stats(&space).unwrap());
    let out = neighbors(&s, &space, &[Value::Int(0)], &[(3, e.clone())], PropSelection::None);
    assert_eq!(out.len(), DELTA_MERGE_EDGES + 10);
}

/// Paths through `hops` (whether distinct, how many times) by brute force over an edge list.
fn reference_paths(edges: &[(u64, u64)], starts: &[u64], hops: &[(bool, u32)]) -> (u64, HashMap<u64, u64>) {
    let mut frontier: HashMap<u64, u64> = HashMap::new();
    for s in starts {
        *frontier.entry(*s).or_default() += 1;
    }
    for distinct in hops.iter().flat_map(|(d, times)| std::iter::repeat_n(d, *times as usize)) {
        if *distinct {
            frontier.values_mut().for_each(|m| *m = 1);
        }
        let mut next: HashMap<u64, u64> = HashMap::new();
        for (v, m) in &frontier {
            for (x, y) in edges {
                if x == v {
                    *next.entry(*y).or_default() += m;
                }
            }
        }
        frontier = next;
    }
    (frontier.values().sum(), frontier)
}

#[test]
fn expansion_counts_match_a_reference_traversal() {
    let space = SpaceDesc {
        id: 11,
        name: "x".into(),
        partition_num: 3,
        replica_factor: 1,
        vid_type: VidType::Int64,
        comment: None,
    };
    let s = EmbeddedStorage::new(Arc::new(MemEngine::new()));
    let e = edge_schema(5, "e");
    let mut rng = Rng(42);
    let mut edges = Vec::new();
    let mut mutations = Vec::new();
    for _ in 0..600 {
        let (x, y) = (rng.below(80), rng.below(80));
        if edges.contains(&(x, y)) {
            continue;
        }
        edges.push((x, y));
        mutations.push(Mutation::InsertEdge {
            key: EdgeKeyVal { src: Value::Int(x as i64), edge_type: 5, rank: 0, dst: Value::Int(y as i64) },
            schema: e.clone(),
            values: vec![Value::NULL],
            if_not_exists: false,
        });
    }
    // A vertex with in-edges only: walks from it end after one step.
    edges.push((0, 999));
    mutations.push(Mutation::InsertEdge {
        key: EdgeKeyVal { src: Value::Int(0), edge_type: 5, rank: 0, dst: Value::Int(999) },
        schema: e.clone(),
        values: vec![Value::NULL],
        if_not_exists: false,
    });
    s.write(&space, mutations).unwrap();
    let starts = [3u64, 3, 17];
    let cases: [&[(bool, u32)]; 6] = [
        &[(false, 1)],
        &[(false, 1), (true, 1)],
        &[(false, 3)],
        &[(false, 1), (true, 1), (false, 1), (true, 1)],
        &[(false, 1), (true, 3)],
        &[(false, 2), (true, 2), (false, 1)],
    ];
    for hops in cases {
        let (paths, ends) = reference_paths(&edges, &starts, hops);
        let req = |output| ExpandRequest {
            last_edge_props: None,
            paths: false,
            starts: starts.iter().map(|v| Value::Int(*v as i64)).collect(),
            hops: hops.iter().map(|&(distinct, times)| ExpandHop { edge_types: vec![5], distinct, times }).collect(),
            output,
            budget: Budget::unlimited(),
        };
        assert_eq!(s.expand(&space, &req(ExpandOutput::Count)).unwrap().paths, paths, "hops {hops:?}");
        let got = s.expand(&space, &req(ExpandOutput::Ends)).unwrap();
        assert_eq!(got.paths, paths);
        let got: HashMap<u64, u64> = got
            .ends
            .into_iter()
            .map(|(v, m)| {
                (
                    match v {
                        Value::Int(i) => i as u64,
                        other => panic!("{other}"),
                    },
                    m,
                )
            })
            .collect();
        assert_eq!(got, ends, "hops {hops:?}");
    }
    // Billions of steps: over nothing they end at once; around a cycle they stop at the deadline.
    let sink = 999;
    let many = |start: u64, budget: Budget| ExpandRequest {
        last_edge_props: None,
        paths: false,
        starts: vec![Value::Int(start as i64)],
        hops: vec![
            ExpandHop { edge_types: vec![5], distinct: false, times: 1 },
            ExpandHop { edge_types: vec![5], distinct: true, times: u32::MAX },
        ],
        output: ExpandOutput::Count,
        budget,
    };
    assert_eq!(s.expand(&space, &many(sink, Budget::unlimited())).unwrap().paths, 0);
    let short = Budget::new(Limits { timeout: Duration::from_millis(200), memory_bytes: usize::MAX });
    let err = s.expand(&space, &many(3, short)).unwrap_err();
    assert!(err.message.starts_with("Execution had been killed"), "{}", err.message);
    // Reversed hops follow in-edges.
    let rev = ExpandRequest {
        last_edge_props: None,
        paths: false,
        starts: vec![Value::Int(3)],
        hops: vec![ExpandHop { edge_types: vec![-5], distinct: false, times: 1 }],
        output: ExpandOutput::Count,
        budget: Budget::unlimited(),
    };
    assert_eq!(s.expand(&space, &rev).unwrap().paths, edges.iter().filter(|(_, y)| *y == 3).count() as u64);
    // A query past its deadline stops with a clear error.
    let late = ExpandRequest {
        last_edge_props: None,
        paths: false,
        budget: Budget::new(Limits { timeout: Duration::ZERO, memory_bytes: 1 << 30 }),
        ..rev
    };
    assert!(s.expand(&space, &late).unwrap_err().message.starts_with("Execution had been killed"));
}

/// The memory figure `docs/design/topology.md` quotes: 20,000 persons each liking 50 of 2,000 items (1M edges,
/// stored in both directions), ranks all 0, INT64 VIDs, after every delta is merged.
#[test]
fn topology_bytes_per_edge() {
    let space = SpaceDesc {
        id: 12,
        name: "likes".into(),
        partition_num: 8,
        replica_factor: 1,
        vid_type: VidType::Int64,
        comment: None,
    };
    let kv = Arc::new(MemEngine::new());
    let e = edge_schema(5, "likes");
    let mut rng = Rng(7);
    {
        // Loaded before the topology exists, as at start-up: the topology is built in one pass.
        let s = EmbeddedStorage::new(kv.clone());
        for p in 0..20_000i64 {
            let mutations = (0..50)
                .map(|_| Mutation::InsertEdge {
                    key: EdgeKeyVal {
                        src: Value::Int(p),
                        edge_type: 5,
                        rank: 0,
                        dst: Value::Int(1_000_000 + rng.below(2000) as i64),
                    },
                    schema: e.clone(),
                    values: vec![Value::NULL],
                    if_not_exists: false,
                })
                .collect();
            s.write(&space, mutations).unwrap();
        }
    }
    let s = EmbeddedStorage::new(kv);
    let st = s.topology_stats(&space).unwrap();
    let edges = st.directed_edges / 2;
    let per_edge = st.bytes as f64 / edges as f64;
    println!(
        "topology: {} vertices, {edges} edges, {} bytes, {per_edge:.2} bytes per edge (both directions)",
        st.vertices, st.bytes
    );
    assert!(edges > 950_000, "random duplicates removed only a few edges: {edges}");
    // Reported, not asserted (speed is the benchmark's business): the RageDB-shaped 3-hop count from one person.
    let req = ExpandRequest {
        last_edge_props: None,
        paths: false,
        starts: vec![Value::Int(0)],
        hops: [5, -5, 5].iter().map(|t| ExpandHop { edge_types: vec![*t], distinct: false, times: 1 }).collect(),
        output: ExpandOutput::Count,
        budget: Budget::unlimited(),
    };
    let t = std::time::Instant::now();
    let r = s.expand(&space, &req).unwrap();
    println!("3-hop count: {} paths, {} edges read, {:?}", r.paths, r.edges_read, t.elapsed());
    assert!(per_edge < 12.0, "{per_edge:.2} bytes per edge");
}

/// One vertex with 200,000 edges: both read paths (topology without properties, key-value with them) check the
/// request's budget every `TICKS_PER_CHECK` edges, so a small memory bound stops the read soon after the reader
/// holds more than it, instead of after the whole vertex.
#[test]
fn a_super_vertex_is_read_under_the_budget() {
    let space = SpaceDesc {
        id: 9,
        name: "g".into(),
        partition_num: 1,
        replica_factor: 1,
        vid_type: VidType::Int64,
        comment: None,
    };
    let s = EmbeddedStorage::new(Arc::new(MemEngine::new()));
    let like = edge_schema(3, "like");
    let n = 200_000;
    for chunk in (0..n).collect::<Vec<i64>>().chunks(50_000) {
        let muts = chunk
            .iter()
            .map(|&i| Mutation::InsertEdge {
                key: EdgeKeyVal { src: Value::Int(0), edge_type: 3, rank: 0, dst: Value::Int(i + 1) },
                schema: like.clone(),
                values: vec![Value::Int(i)],
                if_not_exists: false,
            })
            .collect();
        s.write(&space, muts).unwrap();
    }
    let edge = std::mem::size_of::<NeighborEdge>();
    for props in [PropSelection::None, PropSelection::All] {
        // Unbounded: every edge.
        let req = NeighborsRequest {
            vids: vec![Value::Int(0)],
            edge_types: vec![(3, like.clone())],
            props: props.clone(),
            filter: None,
            limit: None,
            budget: Budget::unlimited(),
        };
        assert_eq!(s.get_neighbors(&space, &req).unwrap().len(), n as usize);
        // A bound of 20,000 edges' worth fails within a check interval (and a doubling of the edge list) of it.
        let bound = 20_000 * edge;
        let budget = Budget::new(Limits { timeout: Duration::from_secs(60), memory_bytes: bound });
        let req = NeighborsRequest { budget: budget.clone(), ..req };
        let scope = budget.enter();
        let e = s.get_neighbors(&space, &req).unwrap_err();
        let held = budget.peak_bytes();
        drop(scope);
        assert!(e.message.starts_with("GraphMemoryExceeded"), "{props:?}: {}", e.message);
        assert!(held < 2 * bound + TICKS_PER_CHECK as usize * edge, "{props:?}: {held} bytes held at the failure");
        // A killed query stops at the next check too.
        let budget = Budget::unlimited();
        budget.kill();
        let e = s.get_neighbors(&space, &NeighborsRequest { budget, ..req }).unwrap_err();
        assert!(e.message.starts_with("Execution had been killed"), "{props:?}: {}", e.message);
    }
}

/// Whether a vertex none of whose read tags is there exists is answered by the topology's bits once it is built,
/// as the store answers before: a vertex with the tag, one whose tags were deleted (its vertex key stays), one
/// deleted, and an edge's end never inserted.
#[test]
fn vertex_existence_is_the_same_from_the_topology() {
    let space = support::int_space(9);
    let s = EmbeddedStorage::new(Arc::new(MemEngine::new()));
    let tag = support::schema(SchemaKind::Tag, 2, "t", vec![vec![support::prop("x", PropType::Int64)]], None);
    let like = edge_schema(3, "like");
    let insert = |v: i64| Mutation::InsertVertex {
        vid: Value::Int(v),
        tags: vec![(tag.clone(), vec![Value::Int(v)])],
        if_not_exists: false,
    };
    let edge = |a: i64, b: i64| Mutation::InsertEdge {
        key: EdgeKeyVal { src: Value::Int(a), edge_type: 3, rank: 0, dst: Value::Int(b) },
        schema: like.clone(),
        values: vec![Value::Int(1)],
        if_not_exists: false,
    };
    s.write(&space, vec![insert(1), insert(2), insert(3), edge(1, 2), edge(1, 3), edge(1, 4)]).unwrap();
    s.write(&space, vec![Mutation::DeleteTags { vid: Value::Int(2), tags: None }]).unwrap();
    s.write(&space, vec![Mutation::DeleteVertex { vid: Value::Int(3), with_edges: false }]).unwrap();
    let vids: Vec<Value> = (1..=5).map(Value::Int).collect();
    let exists = |s: &EmbeddedStorage| -> Vec<bool> {
        let got = s.get_vertices(&space, &vids, std::slice::from_ref(&tag), &PropSelection::All).unwrap();
        got.iter().map(Option::is_some).collect()
    };
    let from_store = exists(&s);
    assert_eq!(from_store, vec![true, true, false, false, false]);
    // Once the topology is built, the same reads answer from its bits.
    s.topology_stats(&space).unwrap();
    assert_eq!(exists(&s), from_store);
    // Writes after the build are mirrored in the bits.
    s.write(&space, vec![insert(4), Mutation::DeleteVertex { vid: Value::Int(1), with_edges: true }]).unwrap();
    assert_eq!(exists(&s), vec![false, true, false, true, false]);
}
