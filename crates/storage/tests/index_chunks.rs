//! An index build chunk by chunk (`EmbeddedStorage::build_index_chunk`, what a cluster's REBUILD job asks of each
//! partition's leader): the chunks together index every row, a partition of more than `BUILD_CHUNK` rows takes
//! more than one chunk, and a cursor outside the partition is refused.

use quiver_api::conformance::space_with_schema;
use quiver_api::*;
use quiver_common::budget::Budget;
use quiver_common::{PropType, Value};
use quiver_kv::{KvEngine, MemEngine};
use quiver_meta::MetaStore;
use quiver_storage::jobs::BUILD_CHUNK;
use quiver_storage::keys::{self, KIND_TAG};
use quiver_storage::EmbeddedStorage;
use std::sync::Arc;

#[test]
fn chunks_index_every_row_and_refuse_a_cursor_elsewhere() {
    let kv: Arc<dyn KvEngine> = Arc::new(MemEngine::new());
    let catalog = Arc::new(MetaStore::open(kv.clone()).unwrap());
    let storage = EmbeddedStorage::new(kv);
    storage.set_catalog(catalog.clone());
    let (space, tag) = space_with_schema(catalog.as_ref(), 2, 1, SchemaKind::Tag, "t", "x");
    let rows = 2 * BUILD_CHUNK as i64 + 500;
    let ms = (0..rows)
        .map(|v| Mutation::InsertVertex {
            vid: Value::Int(v),
            tags: vec![(tag.clone(), vec![Value::Int(v % 5)])],
            if_not_exists: false,
        })
        .collect();
    storage.write(&space, ms).unwrap();
    let desc = IndexDesc {
        id: 0,
        name: "t_x".into(),
        kind: SchemaKind::Tag,
        schema_id: tag.id,
        schema_name: tag.name.clone(),
        fields: vec![IndexField { name: "x".into(), ty: PropType::Int64, len: None }],
        comment: None,
        state: IndexState::Building,
        params: Default::default(),
    };
    let index = catalog.create_index(&space, desc, false).unwrap().unwrap();

    let mut indexed = 0;
    for part in 1..=2 {
        let (mut from, mut chunks) = (None, 0);
        loop {
            let (n, next) = storage.build_index_chunk(&space, &index, part, from.as_deref()).unwrap();
            indexed += n;
            chunks += 1;
            match next {
                Some(next) => from = Some(next),
                None => break,
            }
        }
        assert!(chunks > 1, "partition {part} of about {} rows in {chunks} chunk(s)", rows / 2);
    }
    assert_eq!(indexed, rows as u64);
    let scan = IndexScan { index: index.clone(), prefix: vec![Value::Int(3)], range: None };
    let hits = storage.scan_index(&space, &[scan], &Budget::unlimited()).unwrap();
    assert_eq!(hits.len() as i64, (0..rows).filter(|v| v % 5 == 3).count() as i64);

    let elsewhere = keys::prefix(space.id, 2, KIND_TAG);
    let e = storage.build_index_chunk(&space, &index, 1, Some(&elsewhere)).unwrap_err();
    assert_eq!(e.message, "Storage Error: an index build's cursor outside its partition");
}
