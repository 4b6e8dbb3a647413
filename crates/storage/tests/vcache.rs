//! The vertex property cache against a model of what was written: random vertex inserts (with and without IF NOT
//! EXISTS), tag deletes and vertex deletes, before and after the tags become hot, must read back the same rows
//! (whole and projected) whether a tag is served from its columns or from the store; a newer schema version, a
//! TTL, `drop_schema_data` and `clear_space` take a tag out of the cache.

use quiver_api::*;
use quiver_common::rng::Rng;
use quiver_common::{PropType, Value};
use quiver_kv::MemEngine;
use quiver_storage::vcache::HOT_READS;
use quiver_storage::EmbeddedStorage;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

#[allow(dead_code, reason = "each test binary uses its own part of the shared module")]
mod support;
use support::prop;

fn tag(id: i32, name: &str, versions: Vec<Vec<PropDef>>, ttl: Option<(i64, &str)>) -> SchemaRef {
    support::schema(SchemaKind::Tag, id, name, versions, ttl)
}

fn person() -> SchemaRef {
    tag(3, "person", vec![vec![prop("name", PropType::String), prop("age", PropType::Int64)]], None)
}

fn team() -> SchemaRef {
    tag(4, "team", vec![vec![prop("title", PropType::String)]], None)
}

fn vid(space: &SpaceDesc, i: u64) -> Value {
    match space.vid_type {
        VidType::Int64 => Value::Int(i as i64 * 7 - 30),
        VidType::FixedString(_) => Value::str(format!("v{i}")),
    }
}

/// vid -> (tag id -> values), for the vertices that exist.
type Model = HashMap<Value, BTreeMap<i32, Vec<Value>>>;

fn read(
    s: &EmbeddedStorage,
    space: &SpaceDesc,
    vids: &[Value],
    tags: &[SchemaRef],
    props: &PropSelection,
) -> Vec<Option<Vec<(i32, Props)>>> {
    s.get_vertices(space, vids, tags, props)
        .unwrap()
        .into_iter()
        .map(|d| d.map(|d| d.tags.into_iter().map(|(t, p)| (t.id, p.to_map())).collect()))
        .collect()
}

fn expected(
    model: &Model,
    vids: &[Value],
    tags: &[SchemaRef],
    props: &PropSelection,
) -> Vec<Option<Vec<(i32, Props)>>> {
    vids.iter()
        .map(|v| {
            let rows = model.get(v)?;
            Some(
                tags.iter()
                    .filter_map(|t| {
                        let values = rows.get(&t.id)?;
                        let p: Props = t
                            .latest()
                            .props
                            .iter()
                            .zip(values)
                            .filter(|(p, _)| props.wants(&p.name))
                            .map(|(p, v)| (p.name.clone(), v.clone()))
                            .collect();
                        Some((t.id, p))
                    })
                    .collect(),
            )
        })
        .collect()
}

fn random_writes_agree(vid_type: VidType, seed: u64) {
    let space = SpaceDesc { id: 5, name: "g".into(), partition_num: 3, replica_factor: 1, vid_type, comment: None };
    let s = EmbeddedStorage::new(Arc::new(MemEngine::new()));
    let tags = vec![person(), team()];
    let n = 80u64;
    let all: Vec<Value> = (0..n).map(|i| vid(&space, i)).collect();
    let mut model: Model = HashMap::new();
    // Ballast: vertices never read or written below, with both tags, so that each tag has more rows than the reads
    // of rounds 0 and 1 (a tag is cached once its reads reach its rows): those rounds read from the store.
    let ballast: Vec<Value> = (n..n + HOT_READS).map(|i| vid(&space, i)).collect();
    let ballast_rows = [(person(), vec![Value::str("b"), Value::Int(0)]), (team(), vec![Value::str("b")])];
    for chunk in ballast.chunks(512) {
        let ms = chunk
            .iter()
            .map(|v| Mutation::InsertVertex { vid: v.clone(), tags: ballast_rows.to_vec(), if_not_exists: false })
            .collect();
        s.write(&space, ms).unwrap();
        for v in chunk {
            model.insert(v.clone(), ballast_rows.iter().map(|(t, vs)| (t.id, vs.clone())).collect());
        }
    }
    let mut rng = Rng(seed);
    let selections = [PropSelection::All, PropSelection::Only(vec!["name".into()]), PropSelection::None];
    for round in 0..6 {
        for _ in 0..300 {
            let i = rng.below(n);
            let v = vid(&space, i);
            let m = match rng.below(10) {
                0..=5 => {
                    let mut rows = Vec::new();
                    if rng.below(3) > 0 {
                        let name =
                            if rng.below(5) == 0 { Value::NULL } else { Value::str(format!("n{}", rng.below(1000))) };
                        rows.push((person(), vec![name, Value::Int(rng.below(100) as i64)]));
                    }
                    if rng.below(2) == 0 {
                        rows.push((team(), vec![Value::str(format!("t{}", rng.below(10)))]));
                    }
                    let if_not_exists = rng.below(3) == 0;
                    let entry = model.entry(v.clone()).or_default();
                    for (t, values) in &rows {
                        if !(if_not_exists && entry.contains_key(&t.id)) {
                            entry.insert(t.id, values.clone());
                        }
                    }
                    Mutation::InsertVertex { vid: v, tags: rows, if_not_exists }
                }
                6..=7 => {
                    let which = if rng.below(2) == 0 { None } else { Some(vec![tags[rng.below(2) as usize].clone()]) };
                    if let Some(rows) = model.get_mut(&v) {
                        match &which {
                            None => rows.clear(),
                            Some(ts) => {
                                rows.remove(&ts[0].id);
                            }
                        }
                    }
                    Mutation::DeleteTags { vid: v, tags: which }
                }
                _ => {
                    model.remove(&v);
                    Mutation::DeleteVertex { vid: v, with_edges: false }
                }
            };
            s.write(&space, vec![m]).unwrap();
        }
        for sel in &selections {
            assert_eq!(
                read(&s, &space, &all, &tags, sel),
                expected(&model, &all, &tags, sel),
                "seed {seed}, round {round}, {sel:?}"
            );
            // The columnar read (from the cache's columns once hot) equals the row read, transposed.
            let rows = s.get_vertices(&space, &all, &tags, sel).unwrap();
            let columns: Vec<TagColumns> = tags.iter().map(|t| TagColumns::from_vertices(t, sel, &rows)).collect();
            assert_eq!(
                s.get_tag_columns(&space, &all, &tags, sel).unwrap(),
                columns,
                "seed {seed}, round {round}, {sel:?}: columns"
            );
        }
        if round == 1 {
            // Enough reads for both tags to become hot: from here on they are served from their columns.
            assert!(s.vertex_cache_stats(&space).is_empty(), "cached before the tags were hot");
            for _ in 0..HOT_READS / n + 1 {
                read(&s, &space, &all, &tags, &PropSelection::All);
            }
            let stats = s.vertex_cache_stats(&space);
            assert_eq!(stats.iter().map(|(t, _, _)| *t).collect::<Vec<_>>(), vec![3, 4], "both tags cached: {stats:?}");
            let rows = |id: i32| model.values().filter(|r| r.contains_key(&id)).count();
            assert_eq!(stats.iter().map(|(_, r, _)| *r).collect::<Vec<_>>(), vec![rows(3), rows(4)]);
        }
    }
    assert_eq!(s.vertex_cache_stats(&space).len(), 2, "still cached after the writes");
}

#[test]
fn a_tag_with_fewer_rows_than_hot_reads_is_cached_once_its_reads_reach_them() {
    let space = support::int_space(9);
    let s = EmbeddedStorage::new(Arc::new(MemEngine::new()));
    let p = person();
    let vids: Vec<Value> = (0..100).map(Value::Int).collect();
    insert(&s, &space, &vids, &p, vec![Value::String("a".into()), Value::Int(1)]);
    // The count is compared with the rows each time it passes a power of two (64, 128, ...).
    read(&s, &space, &vids[..60], std::slice::from_ref(&p), &PropSelection::All);
    assert!(s.vertex_cache_stats(&space).is_empty(), "60 reads of a 100-row tag");
    read(&s, &space, &vids[..30], std::slice::from_ref(&p), &PropSelection::All);
    assert!(s.vertex_cache_stats(&space).is_empty(), "90 reads: 64 was passed with fewer reads than rows");
    read(&s, &space, &vids[..40], std::slice::from_ref(&p), &PropSelection::All);
    assert_eq!(s.vertex_cache_stats(&space).len(), 1, "130 reads: 128 passed, and 100 rows are no more");
    assert_eq!(
        read(&s, &space, &vids[99..], std::slice::from_ref(&p), &PropSelection::Only(vec!["name".into()])),
        vec![Some(vec![(3, [("name".to_string(), Value::String("a".into()))].into_iter().collect())])]
    );
}

#[test]
fn cached_tags_equal_the_store_after_random_writes_int_vids() {
    for seed in 1..=3 {
        random_writes_agree(VidType::Int64, seed * 7919);
    }
}

#[test]
fn cached_tags_equal_the_store_after_random_writes_string_vids() {
    for seed in 1..=3 {
        random_writes_agree(VidType::FixedString(8), seed * 104_729);
    }
}

fn hot(s: &EmbeddedStorage, space: &SpaceDesc, vids: &[Value], t: &SchemaRef) {
    for _ in 0..HOT_READS / vids.len() as u64 + 1 {
        read(s, space, vids, std::slice::from_ref(t), &PropSelection::All);
    }
}

fn insert(s: &EmbeddedStorage, space: &SpaceDesc, vids: &[Value], t: &SchemaRef, values: Vec<Value>) {
    let ms = vids
        .iter()
        .map(|v| Mutation::InsertVertex {
            vid: v.clone(),
            tags: vec![(t.clone(), values.clone())],
            if_not_exists: false,
        })
        .collect();
    s.write(space, ms).unwrap();
}

#[test]
fn a_newer_schema_version_drops_the_cache_and_reads_stay_right() {
    let space = support::int_space(6);
    let s = EmbeddedStorage::new(Arc::new(MemEngine::new()));
    let v0 = person();
    let vids: Vec<Value> = (0..50).map(Value::Int).collect();
    insert(&s, &space, &vids, &v0, vec![Value::String("a".into()), Value::Int(1)]);
    hot(&s, &space, &vids, &v0);
    assert_eq!(s.vertex_cache_stats(&space).len(), 1);
    // ALTER TAG person ADD (city string): rows of version 0 read with NULL city.
    let v1 = tag(
        3,
        "person",
        vec![v0.latest().props.clone(), [v0.latest().props.clone(), vec![prop("city", PropType::String)]].concat()],
        None,
    );
    let got = read(&s, &space, &vids[..1], std::slice::from_ref(&v1), &PropSelection::All);
    let row: Props = [("name", Value::String("a".into())), ("age", Value::Int(1)), ("city", Value::NULL)]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    assert_eq!(got, vec![Some(vec![(3, row)])]);
    assert!(s.vertex_cache_stats(&space).is_empty(), "the version-0 cache is gone");
    // Hot again under version 1, then a write of version 1 rows is mirrored.
    hot(&s, &space, &vids, &v1);
    assert_eq!(s.vertex_cache_stats(&space).len(), 1);
    insert(&s, &space, &vids[..1], &v1, vec![Value::String("b".into()), Value::Int(2), Value::String("x".into())]);
    let got = read(&s, &space, &vids[..1], std::slice::from_ref(&v1), &PropSelection::Only(vec!["city".into()]));
    assert_eq!(got, vec![Some(vec![(3, [("city".to_string(), Value::String("x".into()))].into_iter().collect())])]);
    // A reader planned before the ALTER reads the store (a row still of version 0), in its own version's shape,
    // and leaves the cache alone.
    let got = read(&s, &space, &vids[1..2], std::slice::from_ref(&v0), &PropSelection::All);
    let row: Props = [("name", Value::String("a".into())), ("age", Value::Int(1))]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    assert_eq!(got, vec![Some(vec![(3, row)])]);
    assert_eq!(s.vertex_cache_stats(&space).len(), 1);
}

#[test]
fn ttl_tags_are_never_cached_and_dropping_data_drops_the_cache() {
    let space = support::int_space(8);
    let s = EmbeddedStorage::new(Arc::new(MemEngine::new()));
    let ttl = tag(5, "session", vec![vec![prop("at", PropType::Int64)]], Some((100, "at")));
    let vids: Vec<Value> = (0..50).map(Value::Int).collect();
    // Written long ago: expired (its TTL column is read for the check though not selected), so invisible.
    insert(&s, &space, &vids, &ttl, vec![Value::Int(1)]);
    hot(&s, &space, &vids, &ttl);
    assert!(s.vertex_cache_stats(&space).is_empty());
    assert_eq!(
        read(&s, &space, &vids[..1], std::slice::from_ref(&ttl), &PropSelection::None),
        vec![None],
        "expired: the vertex is gone"
    );

    let p = person();
    insert(&s, &space, &vids, &p, vec![Value::String("a".into()), Value::Int(1)]);
    hot(&s, &space, &vids, &p);
    assert_eq!(s.vertex_cache_stats(&space).len(), 1);
    s.drop_schema_data(&space, &p).unwrap();
    assert!(s.vertex_cache_stats(&space).is_empty(), "DROP TAG's data removal drops the cache");
    assert_eq!(read(&s, &space, &vids[..1], std::slice::from_ref(&p), &PropSelection::All), vec![Some(vec![])]);

    insert(&s, &space, &vids, &p, vec![Value::String("a".into()), Value::Int(1)]);
    hot(&s, &space, &vids, &p);
    assert_eq!(s.vertex_cache_stats(&space).len(), 1);
    s.clear_space(&space).unwrap();
    assert!(s.vertex_cache_stats(&space).is_empty(), "CLEAR SPACE drops the cache");
    assert_eq!(read(&s, &space, &vids[..1], std::slice::from_ref(&p), &PropSelection::All), vec![None]);
}
