//! The edge property cache against a model of what was written: random edge inserts (with and without IF NOT
//! EXISTS, overwrites included), edge deletes and vertex deletes with their edges, before and after the edge types
//! become hot, must read back the same neighbours with the same properties, in the same order, out and in,
//! whole, projected and filtered, whether served from the cache or from the store; a newer schema version, a TTL,
//! `DROP EDGE` and `CLEAR SPACE` take a type out of the cache.

use quiver_api::*;
use quiver_common::budget::Budget;
use quiver_common::expr::{BinaryOp, Expr};
use quiver_common::rng::Rng;
use quiver_common::{PropType, Value};
use quiver_kv::MemEngine;
use quiver_storage::ecache::HOT_READS;
use quiver_storage::EmbeddedStorage;
use std::collections::BTreeMap;
use std::sync::Arc;

mod support;
use support::prop;

fn edge_type(id: i32, name: &str, versions: Vec<Vec<PropDef>>, ttl: Option<(i64, &str)>) -> SchemaRef {
    support::schema(SchemaKind::Edge, id, name, versions, ttl)
}

fn knows() -> SchemaRef {
    edge_type(5, "knows", vec![vec![prop("w", PropType::Int64), prop("note", PropType::String)]], None)
}

fn likes() -> SchemaRef {
    edge_type(6, "likes", vec![vec![prop("score", PropType::Double)]], None)
}

fn vid(space: &SpaceDesc, i: u64) -> Value {
    match space.vid_type {
        VidType::Int64 => Value::Int(i as i64 * 3 - 40),
        VidType::FixedString(_) => Value::str(format!("v{i}")),
    }
}

/// (type, src, rank, dst) -> values.
type Model = BTreeMap<(i32, u64, i64, u64), Vec<Value>>;

/// A neighbour as compared: (from, signed type, rank, to, properties by name).
type Row = (Value, i32, i64, Value, Option<Props>);

fn request(vids: &[Value], types: &[(i32, SchemaRef)], props: PropSelection, filter: Option<Expr>) -> NeighborsRequest {
    NeighborsRequest { filter, ..support::neighbors(vids, types, props) }
}

fn read(s: &EmbeddedStorage, space: &SpaceDesc, req: &NeighborsRequest) -> Vec<Row> {
    let mut rows: Vec<Row> = s
        .get_neighbors(space, req)
        .unwrap()
        .into_iter()
        .map(|e| (e.from, e.edge_type, e.rank, e.to, e.props.map(|p| p.to_map())))
        .collect();
    rows.sort_by_key(|r| format!("{r:?}"));
    rows
}

fn expected(
    model: &Model,
    space: &SpaceDesc,
    vids: &[u64],
    types: &[(i32, SchemaRef)],
    props: &PropSelection,
    min_w: Option<i64>,
) -> Vec<Row> {
    let mut out = Vec::new();
    for &v in vids {
        for (et, schema) in types {
            for ((t, src, rank, dst), values) in model {
                let (from, to) = if *et > 0 { (*src, *dst) } else { (*dst, *src) };
                if *t != et.abs() || from != v {
                    continue;
                }
                let names: Vec<&String> = schema.latest().props.iter().map(|p| &p.name).collect();
                if let Some(m) = min_w {
                    // `knows.w > m`, as the pushed-down filter: EMPTY on other types, NULL not true.
                    let w = if schema.name == "knows" { values[0].clone() } else { Value::Empty };
                    if !matches!(w, Value::Int(x) if x > m) {
                        continue;
                    }
                }
                let p: Option<Props> = match props {
                    PropSelection::None => None,
                    sel => Some(
                        names
                            .iter()
                            .zip(values)
                            .filter(|(n, _)| sel.wants(n))
                            .map(|(n, v)| ((*n).clone(), v.clone()))
                            .collect(),
                    ),
                };
                out.push((vid(space, from), *et, *rank, vid(space, to), p));
            }
        }
    }
    out.sort_by_key(|r| format!("{r:?}"));
    out
}

fn w_above(m: i64) -> Expr {
    Expr::binary(BinaryOp::Gt, Expr::LabelProp { label: "knows".into(), prop: "w".into() }, Expr::Const(Value::Int(m)))
}

fn random_writes_agree(vid_type: VidType, seed: u64) {
    let space = SpaceDesc { id: 9, name: "g".into(), partition_num: 3, replica_factor: 1, vid_type, comment: None };
    let s = EmbeddedStorage::new(Arc::new(MemEngine::new()));
    let n = 60u64;
    let all: Vec<u64> = (0..n).collect();
    let all_vids: Vec<Value> = all.iter().map(|&i| vid(&space, i)).collect();
    let mut model: Model = BTreeMap::new();
    let mut rng = Rng(seed);
    let both = [(5, knows()), (-5, knows()), (6, likes()), (-6, likes())];
    for round in 0..6 {
        for _ in 0..300 {
            let (a, b) = (rng.below(n), rng.below(n));
            let rank = rng.below(3) as i64 - 1;
            let m = match rng.below(10) {
                0..=6 => {
                    let (schema, values) = if rng.below(3) > 0 {
                        let w = if rng.below(6) == 0 { Value::NULL } else { Value::Int(rng.below(100) as i64) };
                        (knows(), vec![w, Value::str(format!("n{}", rng.below(1000)))])
                    } else {
                        (likes(), vec![Value::Float(rng.below(50) as f64 / 4.0)])
                    };
                    let if_not_exists = rng.below(4) == 0;
                    let k = (schema.id, a, rank, b);
                    if !(if_not_exists && model.contains_key(&k)) {
                        model.insert(k, values.clone());
                    }
                    let key = EdgeKeyVal { src: vid(&space, a), edge_type: schema.id, rank, dst: vid(&space, b) };
                    Mutation::InsertEdge { key, schema, values, if_not_exists }
                }
                7..=8 => {
                    let et = if rng.below(2) == 0 { 5 } else { 6 };
                    model.remove(&(et, a, rank, b));
                    Mutation::DeleteEdge {
                        key: EdgeKeyVal { src: vid(&space, a), edge_type: et, rank, dst: vid(&space, b) },
                    }
                }
                _ => {
                    model.retain(|(_, src, _, dst), _| *src != a && *dst != a);
                    Mutation::DeleteVertex { vid: vid(&space, a), with_edges: true }
                }
            };
            s.write(&space, vec![m]).unwrap();
        }
        for sel in
            [PropSelection::All, PropSelection::Only(vec!["note".into()]), PropSelection::Only(vec!["score".into()])]
        {
            let got = read(&s, &space, &request(&all_vids, &both, sel.clone(), None));
            assert_eq!(got, expected(&model, &space, &all, &both, &sel, None), "seed {seed}, round {round}, {sel:?}");
            let got = read(&s, &space, &request(&all_vids, &both, sel.clone(), Some(w_above(40))));
            assert_eq!(
                got,
                expected(&model, &space, &all, &both, &sel, Some(40)),
                "seed {seed}, round {round}, {sel:?}, filtered"
            );
        }
        // The filter alone (no property returned) reads through the cache too.
        let got = read(&s, &space, &request(&all_vids, &both, PropSelection::None, Some(w_above(60))));
        assert_eq!(
            got,
            expected(&model, &space, &all, &both, &PropSelection::None, Some(60)),
            "seed {seed}, round {round}, filter only"
        );
        if round == 1 {
            assert!(s.edge_cache_stats(&space).is_empty(), "cached before the types were hot");
            for _ in 0..HOT_READS / n + 1 {
                s.get_neighbors(&space, &request(&all_vids, &both, PropSelection::All, None)).unwrap();
            }
            let stats = s.edge_cache_stats(&space);
            assert_eq!(
                stats.iter().map(|(t, _, _)| *t).collect::<Vec<_>>(),
                vec![5, 6],
                "both types cached: {stats:?}"
            );
            let edges = |et: i32| model.keys().filter(|k| k.0 == et).count();
            assert_eq!(stats.iter().map(|(_, r, _)| *r).collect::<Vec<_>>(), vec![edges(5), edges(6)]);
        }
    }
    let stats = s.edge_cache_stats(&space);
    assert_eq!(stats.len(), 2, "still cached after the writes");
    let edges = |et: i32| model.keys().filter(|k| k.0 == et).count();
    assert_eq!(
        stats.iter().map(|(_, r, _)| *r).collect::<Vec<_>>(),
        vec![edges(5), edges(6)],
        "the cache holds exactly the stored edges"
    );
}

#[test]
fn cached_edge_properties_equal_the_store_after_random_writes_int_vids() {
    for seed in [1, 2, 3] {
        random_writes_agree(VidType::Int64, seed);
    }
}

#[test]
fn cached_edge_properties_equal_the_store_after_random_writes_string_vids() {
    for seed in [4, 5] {
        random_writes_agree(VidType::FixedString(8), seed);
    }
}

fn make_hot(s: &EmbeddedStorage, space: &SpaceDesc, vids: &[Value], types: &[(i32, SchemaRef)]) {
    for _ in 0..HOT_READS / vids.len() as u64 + 1 {
        s.get_neighbors(space, &request(vids, types, PropSelection::All, None)).unwrap();
    }
}

fn insert(s: &EmbeddedStorage, space: &SpaceDesc, schema: &SchemaRef, a: &Value, b: &Value, values: Vec<Value>) {
    let key = EdgeKeyVal { src: a.clone(), edge_type: schema.id, rank: 0, dst: b.clone() };
    s.write(space, vec![Mutation::InsertEdge { key, schema: schema.clone(), values, if_not_exists: false }]).unwrap();
}

#[test]
fn a_newer_schema_version_drops_the_cache_and_reads_stay_right() {
    let space = support::int_space(9);
    let s = EmbeddedStorage::new(Arc::new(MemEngine::new()));
    let (a, b) = (Value::Int(1), Value::Int(2));
    insert(&s, &space, &knows(), &a, &b, vec![Value::Int(7), Value::String("x".into())]);
    make_hot(&s, &space, &[a.clone(), b.clone()], &[(5, knows())]);
    assert_eq!(s.edge_cache_stats(&space).len(), 1);
    // ALTER EDGE knows ADD (extra int): a write of the new version the cache cannot decode drops it...
    let v1 = edge_type(
        5,
        "knows",
        vec![
            vec![prop("w", PropType::Int64), prop("note", PropType::String)],
            vec![prop("w", PropType::Int64), prop("note", PropType::String), prop("extra", PropType::Int64)],
        ],
        None,
    );
    insert(&s, &space, &v1, &b, &a, vec![Value::Int(8), Value::String("y".into()), Value::Int(9)]);
    assert!(s.edge_cache_stats(&space).is_empty(), "a row of an unknown version drops the cache");
    // ... reads of the new version are right, from the store and, once hot again, from a rebuilt cache.
    let want = vec![(
        a.clone(),
        5,
        0,
        b.clone(),
        Some(Props::from([
            ("w".into(), Value::Int(7)),
            ("note".into(), Value::String("x".into())),
            ("extra".into(), Value::NULL),
        ])),
    )];
    assert_eq!(
        read(&s, &space, &request(std::slice::from_ref(&a), &[(5, v1.clone())], PropSelection::All, None)),
        want
    );
    make_hot(&s, &space, &[a.clone(), b.clone()], &[(5, v1.clone())]);
    assert_eq!(s.edge_cache_stats(&space).len(), 1, "rebuilt for the new version");
    assert_eq!(
        read(&s, &space, &request(std::slice::from_ref(&a), &[(5, v1.clone())], PropSelection::All, None)),
        want
    );
    // A reader still holding the old version reads the store, in its own shape, and leaves the cache.
    let old = vec![(
        a.clone(),
        5,
        0,
        b.clone(),
        Some(Props::from([("w".into(), Value::Int(7)), ("note".into(), Value::String("x".into()))])),
    )];
    assert_eq!(read(&s, &space, &request(std::slice::from_ref(&a), &[(5, knows())], PropSelection::All, None)), old);
    assert_eq!(s.edge_cache_stats(&space).len(), 1);
    // A reader of an even newer version drops it.
    let v2 = edge_type(
        5,
        "knows",
        vec![v1.versions[0].props.clone(), v1.versions[1].props.clone(), vec![prop("w", PropType::Int64)]],
        None,
    );
    let got = read(&s, &space, &request(std::slice::from_ref(&a), &[(5, v2)], PropSelection::All, None));
    assert_eq!(got, vec![(a.clone(), 5, 0, b.clone(), Some(Props::from([("w".into(), Value::Int(7))])))]);
    assert!(s.edge_cache_stats(&space).is_empty());
}

#[test]
fn ttl_types_are_never_cached_and_dropping_data_drops_the_cache() {
    let space = support::int_space(9);
    let s = EmbeddedStorage::new(Arc::new(MemEngine::new()));
    let (a, b) = (Value::Int(1), Value::Int(2));
    let timed = edge_type(7, "timed", vec![vec![prop("t", PropType::Int64)]], Some((1_000_000, "t")));
    insert(&s, &space, &timed, &a, &b, vec![Value::Int(4_102_444_800)]);
    make_hot(&s, &space, &[a.clone(), b.clone()], &[(7, timed.clone())]);
    assert!(s.edge_cache_stats(&space).is_empty(), "a TTL type is not cached");

    insert(&s, &space, &likes(), &a, &b, vec![Value::Float(1.5)]);
    make_hot(&s, &space, &[a.clone(), b.clone()], &[(6, likes())]);
    assert_eq!(s.edge_cache_stats(&space).iter().map(|(t, _, _)| *t).collect::<Vec<_>>(), vec![6]);
    s.drop_schema_data(&space, &likes()).unwrap();
    assert!(s.edge_cache_stats(&space).is_empty(), "DROP EDGE drops the cache");
    assert!(read(&s, &space, &request(std::slice::from_ref(&a), &[(6, likes())], PropSelection::All, None)).is_empty());

    insert(&s, &space, &likes(), &a, &b, vec![Value::Float(2.5)]);
    make_hot(&s, &space, &[a.clone(), b.clone()], &[(6, likes())]);
    assert_eq!(s.edge_cache_stats(&space).len(), 1);
    s.clear_space(&space).unwrap();
    assert!(s.edge_cache_stats(&space).is_empty(), "CLEAR SPACE drops the cache");
    assert!(read(&s, &space, &request(std::slice::from_ref(&a), &[(6, likes())], PropSelection::All, None)).is_empty());
}

/// MATCH's last edges with their properties (`expand` with `last_edge_props`) are the same read from the store as
/// from the cache once the type is hot, and equal what was written: every last edge of 2-hop paths over `knows`
/// both ways, with `w` and with every property.
#[test]
fn last_edge_properties_from_the_cache_equal_the_store() {
    let space = support::int_space(9);
    let s = EmbeddedStorage::new(Arc::new(MemEngine::new()));
    let tag = support::schema(SchemaKind::Tag, 3, "t", vec![vec![]], None);
    let n = 30u64;
    let vids: Vec<Value> = (0..n).map(|i| vid(&space, i)).collect();
    let insert_vertices = vids.iter().map(|v| Mutation::InsertVertex {
        vid: v.clone(),
        tags: vec![(tag.clone(), vec![])],
        if_not_exists: false,
    });
    s.write(&space, insert_vertices.collect()).unwrap();
    let mut model: Model = BTreeMap::new();
    let mut rng = Rng(17);
    for _ in 0..150 {
        let (a, b) = (rng.below(n), rng.below(n));
        let values = vec![Value::Int(rng.below(100) as i64), Value::str(format!("n{}", rng.below(1000)))];
        model.insert((5, a, 0, b), values.clone());
        insert(&s, &space, &knows(), &vid(&space, a), &vid(&space, b), values);
    }
    let hop = |types: Vec<i32>| ExpandHop { edge_types: types, distinct: false, times: 1 };
    let both = vec![(5, knows()), (-5, knows())];
    let read = |props: PropSelection| {
        let req = ExpandRequest {
            starts: vids[..6].to_vec(),
            hops: vec![hop(vec![5, -5]), hop(vec![5, -5])],
            output: ExpandOutput::LastEdges,
            paths: true,
            last_edge_props: Some(LastEdgeProps { types: both.clone(), props }),
            budget: Budget::unlimited(),
        };
        let mut got: Vec<(LastEdge, u64)> = s.expand(&space, &req).unwrap().last_edges;
        got.sort_by_key(|(e, _)| format!("{e:?}"));
        got
    };
    let check = |got: &[(LastEdge, u64)], names: &[&str], when: &str| {
        assert!(!got.is_empty(), "{when}: some last edges");
        for (e, _) in got {
            let (from, to) = (vid_index(&space, &e.from), vid_index(&space, &e.to));
            let (src, dst) = if e.edge_type > 0 { (from, to) } else { (to, from) };
            let stored = &model[&(5, src, e.rank, dst)];
            let props = e.props.as_ref().expect("properties asked for");
            let want: Vec<Value> =
                names.iter().map(|n| if *n == "w" { stored[0].clone() } else { stored[1].clone() }).collect();
            assert_eq!(
                (props.names.to_vec(), props.values.to_vec()),
                (names.iter().map(|n| n.to_string()).collect(), want),
                "{when}: {e:?}"
            );
        }
    };
    let cold_w = read(PropSelection::Only(vec!["w".into()]));
    let cold_all = read(PropSelection::All);
    check(&cold_w, &["w"], "from the store, w");
    check(&cold_all, &["w", "note"], "from the store, all");
    assert!(s.edge_cache_stats(&space).is_empty(), "not hot yet");
    make_hot(&s, &space, &vids, &both);
    assert_eq!(s.edge_cache_stats(&space).len(), 1, "knows is cached");
    assert_eq!(read(PropSelection::Only(vec!["w".into()])), cold_w, "from the cache, w");
    assert_eq!(read(PropSelection::All), cold_all, "from the cache, all");
}

fn vid_index(space: &SpaceDesc, v: &Value) -> u64 {
    (0..1000).find(|i| vid(space, *i) == *v).expect("a vertex of the test")
}
