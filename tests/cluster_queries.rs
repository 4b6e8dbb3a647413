//! Query files run against a cluster: the query engine over [`ClusterStorage`], three storage hosts in one process
//! over the simulated network, every partition a Raft group of three replicas (so every write goes through a
//! group's log and every read through a confirmed leader or a host caught up with every leader). Expected rows
//! and errors are the embedded runs' own: the same files, unchanged.
//!
//! The files left out, and why, are listed in `NOT_ON_A_CLUSTER`; every file is one or the other.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use quiver_cluster::{ClusterStorage, SimCluster};
use quiver_kv::MemEngine;
use quiver_meta::MetaStore;
use quiver_query::QueryEngine;

fn run(file: &str) {
    run_with(file, 3);
}

/// A file on a cluster whose every partition has `replicas` replicas: with one, no host of the three carries a whole
/// space, and what reads or writes a whole space is each partition leader's.
fn run_with(file: &str, replicas: u32) {
    let catalog = Arc::new(MetaStore::open(Arc::new(MemEngine::new())).expect("an empty catalog opens"));
    let timing = quiver_raft::Timing {
        // Long next to the heartbeat: these runs test no failover, and a busy machine running many clusters at once
        // must not make a follower give up on its leader (a first election is immediate, `initialize`).
        heartbeat: Duration::from_millis(100),
        election_min: Duration::from_millis(1500),
        election_max: Duration::from_millis(3000),
        snapshot_every: 1000,
    };
    let sim = SimCluster::start(3, replicas, catalog.clone(), timing, 5);
    let storage = Arc::new(ClusterStorage::new(sim.clone(), catalog.clone()));
    storage.start_jobs("sim-client".into()).expect("the job worker starts");
    let mut engine = QueryEngine::new(catalog, storage);
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("queries").join(format!("{file}.test"));
    let failures = quiver_tests::run_file_on(&path, &mut engine);
    assert!(failures.is_empty(), "{} failure(s):\n{}", failures.len(), failures.join("\n\n"));
    // The file's writes and reads went through the groups: their messages crossed the network (a group of one
    // replica sends none; the engine has no storage but the cluster's).
    let sent = sim.net().stats().delivered;
    println!("{file}: {sent} raft messages delivered");
    assert!(sent > 0 || replicas == 1, "no raft message was sent: the cluster was not used");
}

/// `partitioned.test` on one replica per partition: its index builds, scans and maintenance run on each partition's
/// leader (with three replicas every host carries the space whole and serves it alone).
#[test]
fn partitioned_one_replica() {
    run_with("partitioned", 1);
}

/// Jobs, and indexes built by jobs, on one replica per partition: the meta service keeps the jobs and their tasks
/// run on each partition's leader.
#[test]
fn stats_jobs_one_replica() {
    run_with("stats_jobs", 1);
}

#[test]
fn index_one_replica() {
    run_with("index", 1);
}

macro_rules! on_a_cluster {
    ($($name:ident),* $(,)?) => {
        $(#[test] fn $name() { run(stringify!($name)); })*
        const ON_A_CLUSTER: &[&str] = &[$(stringify!($name)),*];
    };
}

on_a_cluster!(
    delete,
    explain,
    fetch,
    find_path,
    geo,
    get_subgraph,
    go,
    group_order_limit,
    index,
    insert,
    list_comprehension,
    lookup,
    match_basic,
    match_clauses,
    match_errors,
    match_multi_hop,
    match_patterns,
    match_start,
    match_shortest_path,
    match_syntax,
    nba,
    nba_int_vid,
    ngql_expressions,
    ngql_function_coverage,
    ngql_functions,
    ngql_statements,
    list_set_props,
    partitioned,
    permissions,
    schema,
    space,
    stats_jobs,
    student,
    ttl,
    update,
    users,
    validator,
);

/// Query files not run on a cluster, each with its reason.
const NOT_ON_A_CLUSTER: &[(&str, &str)] = &[
    // These never reach storage: running them on a cluster tests nothing more.
    ("configs", "no storage call"),
    ("errors", "no storage call"),
    ("queries", "no storage call"),
    ("set_ops", "no storage call"),
    ("yield_expr", "no storage call"),
];

/// Every query file is either run on a cluster or listed with the reason it is not.
#[test]
fn every_query_file_is_decided() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("queries");
    for entry in std::fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().to_string();
        let Some(name) = name.strip_suffix(".test") else { continue };
        let run = ON_A_CLUSTER.contains(&name);
        let left_out = NOT_ON_A_CLUSTER.iter().any(|(n, _)| *n == name);
        assert!(run != left_out, "{name}.test: run it on a cluster or say in NOT_ON_A_CLUSTER why not");
    }
}
