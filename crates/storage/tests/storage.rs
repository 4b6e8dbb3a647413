//! Storage behaviour the query layer relies on: group commit and the pushed-down neighbours scan.

use quiver_api::*;
use quiver_common::expr::{BinaryOp, EdgeMeta, Expr};
use quiver_common::{PropType, Value};
use quiver_kv::{KvEngine, KvResult, MemEngine, ScanFn, WriteBatch, WriteOp};
use quiver_storage::EmbeddedStorage;
use std::collections::HashSet;
use std::sync::{Arc, Mutex};

/// An engine whose `sync` is slow and which remembers which keys a `sync` has made durable.
#[derive(Default)]
struct SlowSync {
    inner: MemEngine,
    buffered: Mutex<Vec<Vec<u8>>>,
    durable: Mutex<HashSet<Vec<u8>>>,
}

impl KvEngine for SlowSync {
    fn get(&self, key: &[u8]) -> KvResult<Option<Vec<u8>>> {
        self.inner.get(key)
    }
    fn write_buffered(&self, batch: WriteBatch) -> KvResult<()> {
        let keys: Vec<Vec<u8>> = batch
            .ops
            .iter()
            .filter_map(|op| if let WriteOp::Put(k, _) = op { Some(k.clone()) } else { None })
            .collect();
        // Appending to the log and recording it happen together, as in a real engine's log.
        let mut buffered = self.buffered.lock().unwrap();
        self.inner.write_buffered(batch)?;
        buffered.extend(keys);
        Ok(())
    }
    fn sync(&self) -> KvResult<()> {
        let covered: Vec<Vec<u8>> = std::mem::take(&mut *self.buffered.lock().unwrap());
        std::thread::sleep(std::time::Duration::from_millis(3));
        self.durable.lock().unwrap().extend(covered);
        Ok(())
    }
    fn scan_range(&self, start: &[u8], end: &[u8], f: &mut ScanFn<'_>) -> KvResult<()> {
        self.inner.scan_range(start, end, f)
    }
    fn compact_range(&self, start: &[u8], end: &[u8]) -> KvResult<()> {
        self.inner.compact_range(start, end)
    }
    fn set_compaction_filter(&self, filter: Option<quiver_kv::CompactionFilter>) {
        self.inner.set_compaction_filter(filter)
    }
    fn name(&self) -> &'static str {
        "slow-sync"
    }
}

fn space() -> SpaceDesc {
    SpaceDesc { id: 1, name: "s".into(), partition_num: 3, replica_factor: 1, vid_type: VidType::Int64, comment: None }
}

fn prop(name: &str, ty: PropType) -> PropDef {
    PropDef { name: name.into(), ty, nullable: true, default: None, comment: None }
}

fn schema(kind: SchemaKind, id: i32, name: &str, props: Vec<PropDef>) -> SchemaRef {
    Arc::new(SchemaDesc {
        kind,
        id,
        name: name.into(),
        versions: vec![SchemaVersion { version: 0, props }],
        ttl_duration: 0,
        ttl_col: String::new(),
        comment: None,
    })
}

#[test]
fn group_commit_acknowledges_only_durable_writes_and_shares_fsyncs() {
    let engine = Arc::new(SlowSync::default());
    let storage = Arc::new(EmbeddedStorage::new(engine.clone()));
    let sp = space();
    let tag = schema(SchemaKind::Tag, 1, "t", vec![prop("x", PropType::Int64)]);
    let threads = 8;
    let per_thread = 40;
    std::thread::scope(|s| {
        for t in 0..threads {
            let (storage, engine, sp, tag) = (storage.clone(), engine.clone(), sp.clone(), tag.clone());
            s.spawn(move || {
                for i in 0..per_thread {
                    let vid = Value::Int(t * 1000 + i);
                    let m = Mutation::InsertVertex {
                        vid: vid.clone(),
                        tags: vec![(tag.clone(), vec![Value::Int(i)])],
                        if_not_exists: false,
                    };
                    storage.write(&sp, vec![m]).unwrap();
                    let key = quiver_storage::keys::tag_key(&sp, &vid, tag.id);
                    assert!(engine.durable.lock().unwrap().contains(&key), "a write was acknowledged before its fsync");
                }
            });
        }
    });
    let writes = (threads * per_thread) as u64;
    let syncs = storage.sync_count();
    assert!(syncs < writes, "{syncs} fsyncs for {writes} concurrent writes: no grouping");
    assert_eq!(storage.scan_vertices(&sp, Some(&tag), usize::MAX).unwrap().len() as u64, writes);
}

#[test]
fn a_write_with_nothing_to_write_costs_no_fsync() {
    let engine = Arc::new(SlowSync::default());
    let storage = EmbeddedStorage::new(engine.clone());
    let sp = space();
    let like = schema(SchemaKind::Edge, 2, "like", vec![prop("likeness", PropType::Int64)]);
    let insert = |if_not_exists| Mutation::InsertEdge {
        key: EdgeKeyVal { src: Value::Int(1), edge_type: 2, rank: 0, dst: Value::Int(2) },
        schema: like.clone(),
        values: vec![Value::Int(1)],
        if_not_exists,
    };
    storage.write(&sp, vec![insert(false)]).unwrap();
    assert_eq!(storage.sync_count(), 1);
    // The edge exists, so IF NOT EXISTS writes nothing; everything it read is already durable.
    storage.write(&sp, vec![insert(true)]).unwrap();
    assert_eq!(storage.sync_count(), 1);
}

/// Vertex 1 has `like` edges to 2, 3, 4 (likeness 10, 50, 90) and a `serve` edge to 100; vertex 5 likes 1.
fn graph() -> (EmbeddedStorage, SpaceDesc, SchemaRef, SchemaRef) {
    let storage = EmbeddedStorage::new(Arc::new(MemEngine::new()));
    let sp = space();
    let like =
        schema(SchemaKind::Edge, 2, "like", vec![prop("likeness", PropType::Int64), prop("note", PropType::String)]);
    let serve = schema(SchemaKind::Edge, 3, "serve", vec![prop("start_year", PropType::Int64)]);
    let mut ms = Vec::new();
    let mut edge = |src: i64, dst: i64, schema: &SchemaRef, values: Vec<Value>| {
        ms.push(Mutation::InsertEdge {
            key: EdgeKeyVal { src: Value::Int(src), edge_type: schema.id, rank: 0, dst: Value::Int(dst) },
            schema: schema.clone(),
            values,
            if_not_exists: false,
        })
    };
    for (dst, l) in [(2, 10), (3, 50), (4, 90)] {
        edge(1, dst, &like, vec![Value::Int(l), Value::str(format!("n{dst}"))]);
    }
    edge(1, 100, &serve, vec![Value::Int(1997)]);
    edge(5, 1, &like, vec![Value::Int(70), Value::NULL]);
    storage.write(&sp, ms).unwrap();
    (storage, sp, like, serve)
}

fn request(types: Vec<(i32, SchemaRef)>, props: PropSelection, filter: Option<Expr>) -> NeighborsRequest {
    NeighborsRequest {
        vids: vec![Value::Int(1)],
        edge_types: types,
        props,
        filter,
        limit: None,
        budget: quiver_common::budget::Budget::unlimited(),
    }
}

fn prop_ref(label: &str, prop: &str) -> Expr {
    Expr::LabelProp { label: label.into(), prop: prop.into() }
}

#[test]
fn neighbors_project_only_the_requested_properties() {
    let (st, sp, like, _) = graph();
    let all = st.get_neighbors(&sp, &request(vec![(2, like.clone())], PropSelection::All, None)).unwrap();
    assert_eq!(all.len(), 3);
    assert_eq!(&*all[0].props.as_ref().unwrap().names, &["likeness".to_string(), "note".to_string()]);
    let only = st
        .get_neighbors(&sp, &request(vec![(2, like.clone())], PropSelection::Only(vec!["likeness".into()]), None))
        .unwrap();
    assert_eq!(&*only[2].props.as_ref().unwrap().names, &["likeness".to_string()]);
    let none = st.get_neighbors(&sp, &request(vec![(2, like)], PropSelection::None, None)).unwrap();
    assert!(none.iter().all(|e| e.props.is_none()));
    assert_eq!(
        none.iter().map(|e| e.to.clone()).collect::<Vec<_>>(),
        vec![Value::Int(2), Value::Int(3), Value::Int(4)]
    );
}

#[test]
fn neighbors_filter_is_evaluated_in_storage() {
    let (st, sp, like, serve) = graph();
    let gt = |v| Expr::binary(BinaryOp::Gt, prop_ref("like", "likeness"), Expr::Const(Value::Int(v)));
    // The filter reads a property that is not returned.
    let got = st.get_neighbors(&sp, &request(vec![(2, like.clone())], PropSelection::None, Some(gt(40)))).unwrap();
    assert_eq!(got.iter().map(|e| e.to.clone()).collect::<Vec<_>>(), vec![Value::Int(3), Value::Int(4)]);
    assert!(got.iter().all(|e| e.props.is_none()));
    // ... or while returning another one: only that one comes back.
    let note = st
        .get_neighbors(&sp, &request(vec![(2, like.clone())], PropSelection::Only(vec!["note".into()]), Some(gt(40))))
        .unwrap();
    let rows: Vec<_> =
        note.iter().map(|e| e.props.as_ref().unwrap().to_map().into_iter().collect::<Vec<_>>()).collect();
    assert_eq!(
        rows,
        vec![
            vec![("note".to_string(), Value::String("n3".into()))],
            vec![("note".to_string(), Value::String("n4".into()))]
        ]
    );
    // On a `serve` row, `like.likeness` is EMPTY, so the condition is not true and the row is dropped.
    let both = st
        .get_neighbors(&sp, &request(vec![(2, like.clone()), (3, serve.clone())], PropSelection::All, Some(gt(40))))
        .unwrap();
    assert_eq!(both.len(), 2);
    let empty = Expr::unary(quiver_common::expr::UnaryOp::IsEmpty, prop_ref("like", "likeness"));
    let serves = st
        .get_neighbors(&sp, &request(vec![(2, like.clone()), (3, serve.clone())], PropSelection::All, Some(empty)))
        .unwrap();
    assert_eq!(serves.iter().map(|e| e.edge_type).collect::<Vec<_>>(), vec![3]);
    // `_dst` is the far end; the limit counts rows after the filter.
    let dst = Expr::binary(
        BinaryOp::Ne,
        Expr::EdgeMetaProp { edge: "like".into(), meta: EdgeMeta::Dst },
        Expr::Const(Value::Int(2)),
    );
    let mut req = request(vec![(2, like.clone())], PropSelection::None, Some(dst));
    req.limit = Some(1);
    assert_eq!(
        st.get_neighbors(&sp, &req).unwrap().iter().map(|e| e.to.clone()).collect::<Vec<_>>(),
        vec![Value::Int(3)]
    );
    // Reverse: in-edges of 1 come from 5, and `_dst` is 5.
    let rev = Expr::binary(
        BinaryOp::Eq,
        Expr::EdgeMetaProp { edge: "like".into(), meta: EdgeMeta::Dst },
        Expr::Const(Value::Int(5)),
    );
    let got = st.get_neighbors(&sp, &request(vec![(-2, like)], PropSelection::All, Some(rev))).unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].props.as_ref().unwrap().get("note"), Some(&Value::NULL));
}

#[test]
fn neighbors_filter_refuses_what_storage_cannot_evaluate() {
    let (st, sp, like, _) = graph();
    let src = Expr::SrcProp { tag: "player".into(), prop: "age".into() };
    let err = st.get_neighbors(&sp, &request(vec![(2, like.clone())], PropSelection::None, Some(src))).unwrap_err();
    assert!(err.to_string().contains("$^"), "{err}");
    let other = prop_ref("teammate", "x");
    let err = st.get_neighbors(&sp, &request(vec![(2, like)], PropSelection::None, Some(other))).unwrap_err();
    assert_eq!(err.to_string(), "SemanticError: Invalid label identifiers: teammate");
}

#[test]
fn corrupt_rows_are_errors_not_panics() {
    use quiver_storage::codec;
    let s = schema(SchemaKind::Tag, 1, "t", vec![prop("x", PropType::Int64), prop("s", PropType::String)]);
    let good = codec::encode(s.latest(), &[Value::Int(1), Value::String("abc".into())]);
    assert_eq!(codec::decode(&s, &good).unwrap().get("s"), Some(&Value::String("abc".into())));
    let err = |row: &[u8]| codec::decode(&s, row).unwrap_err().to_string();
    assert!(err(b"").contains("corrupt row: unknown format"));
    assert!(err(&good[..good.len() - 2]).contains("corrupt row: string out of bounds"));
    assert!(err(&good[..8]).contains("corrupt row: too short"));
    let mut bad_version = good.clone();
    bad_version[1] = 9;
    assert!(err(&bad_version).contains("corrupt row: unknown schema version"));
    // Every truncation and every single-byte corruption decodes or fails cleanly.
    for n in 0..good.len() {
        let _ = codec::decode(&s, &good[..n]);
        for b in [0u8, 0x7f, 0xff] {
            let mut row = good.clone();
            row[n] = b;
            let _ = codec::decode(&s, &row);
        }
    }
}
