//! Edge property caches on storage hosts that each carry only some of a space's partitions (three hosts, one replica
//! per partition, so an in-copy's out-copy is often on another host): reads with properties in both directions turn
//! each direction's cache hot on every host, later writes reach the caches through Raft apply, and every read
//! answers as an embedded storage given the same writes.

use quiver_api::conformance::space_with_schema;
use std::sync::Arc;

use quiver_api::*;
use quiver_cluster::{ClusterStorage, SimCluster};
use quiver_common::budget::Budget;
use quiver_common::rng::Rng;
use quiver_common::Value;
use quiver_kv::MemEngine;
use quiver_meta::MetaStore;
use quiver_raft::Timing;
use quiver_storage::EmbeddedStorage;

const VERTICES: u64 = 40;

fn random_writes(rng: &mut Rng, schema: &SchemaRef, n: usize) -> Vec<Mutation> {
    (0..n)
        .map(|_| {
            let key = EdgeKeyVal {
                src: Value::Int(rng.below(VERTICES) as i64),
                edge_type: schema.id,
                rank: rng.below(2) as i64,
                dst: Value::Int(rng.below(VERTICES) as i64),
            };
            if rng.below(5) == 0 {
                Mutation::DeleteEdge { key }
            } else {
                let values = vec![Value::Int(rng.below(1000) as i64)];
                Mutation::InsertEdge { key, schema: schema.clone(), values, if_not_exists: false }
            }
        })
        .collect()
}

/// Every vertex's edges of the type in both directions with their properties, as text, sorted.
fn reads(s: &dyn StorageClient, space: &SpaceDesc, schema: &SchemaRef) -> Vec<String> {
    let req = NeighborsRequest {
        vids: (0..VERTICES as i64).map(Value::Int).collect(),
        edge_types: vec![(schema.id, schema.clone()), (-schema.id, schema.clone())],
        props: PropSelection::All,
        filter: None,
        limit: None,
        budget: Budget::unlimited(),
    };
    let mut rows: Vec<String> = s.get_neighbors(space, &req).unwrap().iter().map(|e| format!("{e:?}")).collect();
    rows.sort();
    rows
}

#[test]
fn hosts_with_some_partitions_cache_each_edge_direction() {
    let catalog = Arc::new(MetaStore::open(Arc::new(MemEngine::new())).expect("an empty catalog opens"));
    let (space, schema) = space_with_schema(catalog.as_ref(), 6, 1, SchemaKind::Edge, "e", "w");
    let sim = SimCluster::start(3, 1, catalog.clone(), Timing::steady(), 11);
    let cluster = ClusterStorage::new(sim.clone(), catalog.clone());
    let reference = EmbeddedStorage::new(Arc::new(MemEngine::new()));
    let mut rng = Rng(5);
    let write = |ms: Vec<Mutation>| {
        cluster.write(&space, ms.clone()).unwrap();
        reference.write(&space, ms).unwrap();
    };
    for _ in 0..20 {
        write(random_writes(&mut rng, &schema, 10));
    }
    let cached = |h: &quiver_cluster::StorageHost| -> Vec<i32> {
        h.storage().edge_cache_stats(&space).iter().map(|(t, _, _)| *t).collect()
    };
    let both = vec![-schema.id, schema.id];
    let mut rounds = 0;
    while !sim.storage_hosts().iter().all(|h| cached(h) == both) {
        assert_eq!(reads(&cluster, &space, &schema), reads(&reference, &space, &schema), "before round {rounds}");
        rounds += 1;
        assert!(
            rounds < 2000,
            "the caches never turned hot: {:?}",
            sim.storage_hosts().iter().map(|h| cached(h)).collect::<Vec<_>>()
        );
    }
    // From here on, writes reach the hot caches through Raft apply.
    for round in 0..10 {
        write(random_writes(&mut rng, &schema, 10));
        assert_eq!(reads(&cluster, &space, &schema), reads(&reference, &space, &schema), "round {round}");
    }
    for h in sim.storage_hosts() {
        assert_eq!(cached(&h), both, "mirrored, not dropped");
    }
}
