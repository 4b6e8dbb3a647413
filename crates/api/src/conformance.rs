//! One conformance suite for every [`StorageClient`] (the embedded storage over each key-value engine, and any
//! storage reached over the network), written only against the [`StorageClient`] and [`Catalog`] traits: what the
//! query layer may rely on, whatever answers it.
//!
//! An implementation's test builds a [`Fixture`] (a fresh, empty storage and the catalog it reads schemas and
//! indexes from) per check and calls [`run_all`]. Each check states its rule in its doc comment and asserts only
//! what the traits' documentation promises. [`run`] takes the names of checks an implementation is known to fail
//! (each with its reason next to the call), so a known disagreement is written down instead of hidden.

use crate::*;
use quiver_common::budget::{Budget, TICKS_PER_CHECK};
use quiver_common::expr::{BinaryOp, EdgeMeta, Expr, UnaryOp};
use quiver_common::rng::Rng;
use quiver_common::{PropType, QError, Value};
use std::cmp::Ordering as CmpOrdering;
use std::collections::{BTreeMap, BTreeSet, HashMap};

use std::sync::Arc;
use std::time::{Duration, Instant};

/// A fresh storage with no space in it, and the catalog it reads schemas and indexes from (and marks built
/// indexes ready in). Checks create their spaces, schemas and indexes through the catalog, as the query layer
/// does, and tell storage what [`StorageClient`] expects to be told (`index_created`, `drop_schema_data`, ...).
pub struct Fixture {
    pub storage: Arc<dyn StorageClient>,
    pub catalog: Arc<dyn Catalog>,
}

pub type Factory<'a> = &'a dyn Fn() -> Fixture;

/// One check: panics when the storage breaks its rule.
pub type Check = fn(&Fixture);

/// Every check, by name.
pub const CHECKS: &[(&str, Check)] = &[
    ("vertex_writes_read_back", vertex_writes_read_back),
    ("multi_tag_vertices", multi_tag_vertices),
    ("tag_columns_equal_get_vertices", tag_columns_equal_get_vertices),
    ("edge_writes_read_back", edge_writes_read_back),
    ("if_not_exists_never_overwrites", if_not_exists_never_overwrites),
    ("inserts_overwrite", inserts_overwrite),
    ("delete_tags", delete_tags),
    ("delete_vertex_with_and_without_edges", delete_vertex_with_and_without_edges),
    ("delete_edge_removes_both_copies", delete_edge_removes_both_copies),
    ("a_failed_write_applies_nothing", a_failed_write_applies_nothing),
    ("reads_after_warm_reads_see_writes", reads_after_warm_reads_see_writes),
    ("neighbors_in_both_directions", neighbors_in_both_directions),
    ("neighbors_property_selection", neighbors_property_selection),
    ("neighbors_filter", neighbors_filter),
    ("neighbors_filter_errors", neighbors_filter_errors),
    ("neighbors_limit", neighbors_limit),
    ("expand_counts_paths", expand_counts_paths),
    ("expand_counts_match_paths", expand_counts_match_paths),
    ("find_paths_by_kind", find_paths_by_kind),
    ("subgraph_rounds", subgraph_rounds),
    ("vertices_without_tags_say_which_exist", vertices_without_tags_say_which_exist),
    ("rmw_vertex", rmw_vertex),
    ("rmw_edge", rmw_edge),
    ("rmw_serializes_concurrent_updates", rmw_serializes_concurrent_updates),
    ("scan_vertices", scan_vertices),
    ("scan_vertices_limit_zero", scan_vertices_limit_zero),
    ("scan_vertices_without_schema_lists_every_vertex", scan_vertices_without_schema_lists_every_vertex),
    ("clear_space", clear_space),
    ("drop_schema_data", drop_schema_data),
    ("stats_agree_with_reads", stats_agree_with_reads),
    ("snapshots_are_listed_and_dropped", snapshots_are_listed_and_dropped),
    ("index_maintenance_and_ranges", index_maintenance_and_ranges),
    ("index_scan_is_in_index_order_per_range_and_partition", index_scan_is_in_index_order_per_range_and_partition),
    ("index_rebuild_job", index_rebuild_job),
    ("jobs_run_and_are_listed_newest_first", jobs_run_and_are_listed_newest_first),
    ("a_killed_budget_stops_long_reads", a_killed_budget_stops_long_reads),
    ("string_vids", string_vids),
    ("rows_of_older_schema_versions", rows_of_older_schema_versions),
];

/// Runs every check, each on a fresh fixture.
pub fn run_all(make: Factory<'_>) {
    run(make, &[]);
}

/// Runs every check but those in `known_failures`, each on a fresh fixture, and fails naming every check that
/// failed (one failure does not hide the others).
pub fn run(make: Factory<'_>, known_failures: &[&str]) {
    for name in known_failures {
        assert!(CHECKS.iter().any(|(n, _)| n == name), "no conformance check is called {name}");
    }
    let mut failed = Vec::new();
    for (name, check) in CHECKS {
        if known_failures.contains(name) {
            println!("conformance {name}: skipped (known failure)");
            continue;
        }
        let fx = make();
        let t = Instant::now();
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(&fx)));
        println!("conformance {name}: {} in {:?}", if outcome.is_ok() { "ok" } else { "FAILED" }, t.elapsed());
        if outcome.is_err() {
            failed.push(*name);
        }
    }
    assert!(failed.is_empty(), "conformance checks failed: {failed:?}");
}

/// Runs one check by name on a fresh fixture (to look at a known failure).
pub fn run_one(make: Factory<'_>, name: &str) {
    let (_, check) = CHECKS.iter().find(|(n, _)| *n == name).unwrap_or_else(|| panic!("no check called {name}"));
    check(&make());
}

// ---------------------------------------------------------------------------------------------------------------
// Helpers: a space and its schemas, mutations, reads.

/// An edge as a neighbours read returns it: `(from, signed type, rank, to)`.
type EdgeT = (Value, i32, i64, Value);

/// An edge of a test graph with INT VIDs: `(src, edge type, rank, dst)`.
type EdgeRow = (i64, i32, i64, i64);

fn iv(i: i64) -> Value {
    Value::Int(i)
}

fn sv(s: &str) -> Value {
    Value::str(s)
}

fn as_int(v: &Value) -> i64 {
    match v {
        Value::Int(i) => *i,
        other => panic!("expected an INT, got {other:?}"),
    }
}

fn props(pairs: &[(&str, Value)]) -> Props {
    pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
}

fn cmp_edges(a: &EdgeT, b: &EdgeT) -> CmpOrdering {
    a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)).then(a.3.total_cmp(&b.3))
}

fn sorted_edges(mut v: Vec<EdgeT>) -> Vec<EdgeT> {
    v.sort_by(cmp_edges);
    v
}

fn sorted_values(mut v: Vec<Value>) -> Vec<Value> {
    v.sort_by(|a, b| a.total_cmp(b));
    v
}

fn edge_t(e: &NeighborEdge) -> EdgeT {
    (e.from.clone(), e.edge_type, e.rank, e.to.clone())
}

/// The properties a neighbours row returned, as a map (none returned: empty).
fn row_map(e: &NeighborEdge) -> Props {
    e.props.as_ref().map(PropRow::to_map).unwrap_or_default()
}

fn ekey(src: Value, schema: &SchemaRef, rank: i64, dst: Value) -> EdgeKeyVal {
    EdgeKeyVal { src, edge_type: schema.id, rank, dst }
}

fn ins_v(vid: Value, tags: Vec<(&SchemaRef, Vec<Value>)>) -> Mutation {
    Mutation::InsertVertex { vid, tags: tags.into_iter().map(|(s, v)| (s.clone(), v)).collect(), if_not_exists: false }
}

fn ins_v_ine(vid: Value, tags: Vec<(&SchemaRef, Vec<Value>)>) -> Mutation {
    Mutation::InsertVertex { vid, tags: tags.into_iter().map(|(s, v)| (s.clone(), v)).collect(), if_not_exists: true }
}

fn ins_e(src: Value, schema: &SchemaRef, rank: i64, dst: Value, values: Vec<Value>) -> Mutation {
    Mutation::InsertEdge { key: ekey(src, schema, rank, dst), schema: schema.clone(), values, if_not_exists: false }
}

fn ins_e_ine(src: Value, schema: &SchemaRef, rank: i64, dst: Value, values: Vec<Value>) -> Mutation {
    Mutation::InsertEdge { key: ekey(src, schema, rank, dst), schema: schema.clone(), values, if_not_exists: true }
}

fn del_e(src: Value, schema: &SchemaRef, rank: i64, dst: Value) -> Mutation {
    Mutation::DeleteEdge { key: ekey(src, schema, rank, dst) }
}

fn nreq(vids: Vec<Value>, types: &[(i32, &SchemaRef)], props: PropSelection) -> NeighborsRequest {
    NeighborsRequest {
        vids,
        edge_types: types.iter().map(|(t, s)| (*t, (*s).clone())).collect(),
        props,
        filter: None,
        limit: None,
        budget: Budget::unlimited(),
    }
}

fn killed() -> Budget {
    let b = Budget::unlimited();
    b.kill();
    b
}

fn prop_ref(label: &str, prop: &str) -> Expr {
    Expr::LabelProp { label: label.into(), prop: prop.into() }
}

fn meta(edge: &str, meta: EdgeMeta) -> Expr {
    Expr::EdgeMetaProp { edge: edge.into(), meta }
}

fn cmp(op: BinaryOp, lhs: Expr, v: Value) -> Expr {
    Expr::binary(op, lhs, Expr::Const(v))
}

/// One space of the fixture, with helpers over both traits.
struct Space<'a> {
    st: &'a dyn StorageClient,
    cat: &'a dyn Catalog,
    sp: Arc<SpaceDesc>,
}

fn space<'a>(fx: &'a Fixture, name: &str, vid_type: VidType) -> Space<'a> {
    let new = NewSpace { name: name.into(), partition_num: 3, replica_factor: 1, vid_type, comment: None };
    assert!(fx.catalog.create_space(new, false).expect("create space"));
    let sp = fx.catalog.space(name).expect("the space just created");
    Space { st: fx.storage.as_ref(), cat: fx.catalog.as_ref(), sp }
}

fn int_space(fx: &Fixture) -> Space<'_> {
    space(fx, "s", VidType::Int64)
}

/// Creates a schema of nullable properties without defaults in `space` and returns it.
fn new_schema(
    cat: &dyn Catalog,
    space: &SpaceDesc,
    kind: SchemaKind,
    name: &str,
    props: &[(&str, PropType)],
) -> SchemaRef {
    let defs = props
        .iter()
        .map(|(n, ty)| PropDef { name: n.to_string(), ty: *ty, nullable: true, default: None, comment: None })
        .collect();
    assert!(cat.create_schema(space, kind, name, defs, 0, String::new(), None, false).unwrap());
    cat.schema(space, kind, name).unwrap()
}

/// For other suites' set-ups: creates space `s` (INT64 VIDs) with `partition_num` partitions of `replica_factor`
/// replicas, and in it one schema `name` of `kind` with one nullable INT64 property `prop`.
pub fn space_with_schema(
    cat: &dyn Catalog,
    partition_num: u32,
    replica_factor: u32,
    kind: SchemaKind,
    name: &str,
    prop: &str,
) -> (Arc<SpaceDesc>, SchemaRef) {
    let new = NewSpace { name: "s".into(), partition_num, replica_factor, vid_type: VidType::Int64, comment: None };
    assert!(cat.create_space(new, false).expect("create space"));
    let space = cat.space("s").expect("the space just created");
    let schema = new_schema(cat, &space, kind, name, &[(prop, PropType::Int64)]);
    (space, schema)
}

impl Space<'_> {
    fn schema(&self, kind: SchemaKind, name: &str, props: &[(&str, PropType)]) -> SchemaRef {
        new_schema(self.cat, &self.sp, kind, name, props)
    }

    fn tag(&self, name: &str, props: &[(&str, PropType)]) -> SchemaRef {
        self.schema(SchemaKind::Tag, name, props)
    }

    fn edge(&self, name: &str, props: &[(&str, PropType)]) -> SchemaRef {
        self.schema(SchemaKind::Edge, name, props)
    }

    fn write(&self, mutations: Vec<Mutation>) {
        self.st.write(&self.sp, mutations).expect("write");
    }

    fn vertices(&self, vids: &[Value], tags: &[&SchemaRef], props: PropSelection) -> Vec<Option<VertexData>> {
        let tags: Vec<SchemaRef> = tags.iter().map(|t| (*t).clone()).collect();
        let got = self.st.get_vertices(&self.sp, vids, &tags, &props).expect("get_vertices");
        assert_eq!(got.len(), vids.len(), "get_vertices answers one entry per VID");
        for (row, vid) in got.iter().zip(vids) {
            if let Some(row) = row {
                assert_eq!(&row.vid, vid, "get_vertices answers in the order of the request");
            }
        }
        got
    }

    /// All properties of one tag row of `vid`, `None` if the vertex lacks it.
    fn tag_row(&self, vid: &Value, tag: &SchemaRef) -> Option<Props> {
        let got = self.vertices(std::slice::from_ref(vid), &[tag], PropSelection::All).remove(0)?;
        got.tags.iter().find(|(s, _)| s.id == tag.id).map(|(_, r)| r.to_map())
    }

    /// Whether `vid` exists (read with no tag).
    fn exists(&self, vid: &Value) -> bool {
        self.vertices(std::slice::from_ref(vid), &[], PropSelection::None)[0].is_some()
    }

    fn edge_row(&self, schema: &SchemaRef, src: Value, rank: i64, dst: Value) -> Option<Props> {
        let got = self.st.get_edges(&self.sp, schema, &[ekey(src, schema, rank, dst)]).expect("get_edges");
        assert_eq!(got.len(), 1);
        got.into_iter().next().unwrap()
    }

    fn neighbors(&self, req: &NeighborsRequest) -> Vec<NeighborEdge> {
        self.st.get_neighbors(&self.sp, req).expect("get_neighbors")
    }

    /// The edges of `vids` along `types`, without properties, sorted.
    fn ends(&self, vids: &[Value], types: &[(i32, &SchemaRef)]) -> Vec<EdgeT> {
        sorted_edges(self.neighbors(&nreq(vids.to_vec(), types, PropSelection::None)).iter().map(edge_t).collect())
    }

    /// The same edges read with every property (another read path in some storages), sorted.
    fn ends_with_props(&self, vids: &[Value], types: &[(i32, &SchemaRef)]) -> Vec<EdgeT> {
        sorted_edges(self.neighbors(&nreq(vids.to_vec(), types, PropSelection::All)).iter().map(edge_t).collect())
    }

    /// Per tag id and per edge type, the non-zero counts, with the totals.
    fn stats(&self) -> (BTreeMap<i32, i64>, BTreeMap<i32, i64>, i64, i64) {
        let s = self.st.stats(&self.sp).expect("stats");
        let nz = |v: Vec<(i32, i64)>| v.into_iter().filter(|(_, n)| *n != 0).collect::<BTreeMap<_, _>>();
        (nz(s.tags), nz(s.edges), s.vertices, s.total_edges)
    }

    /// Creates an index through the catalog, tells storage, waits for a build job if storage started one, and
    /// returns the index as the catalog has it, checked ready.
    fn index(&self, name: &str, schema: &SchemaRef, fields: &[(&str, Option<u32>)]) -> IndexRef {
        let created = self.new_index(name, schema, fields);
        if let Some(job) = self.st.index_created(&self.sp, &created).expect("index_created") {
            let done = self.wait_job(job);
            assert_eq!(done.status, JobStatus::Finished, "the build of index {name} ended {:?}", done);
        }
        self.catalog_index(name, IndexState::Ready)
    }

    /// An index in the catalog only (storage not told).
    fn new_index(&self, name: &str, schema: &SchemaRef, fields: &[(&str, Option<u32>)]) -> IndexRef {
        let fields = fields
            .iter()
            .map(|(n, len)| {
                let p = schema.latest().props.iter().find(|p| p.name == *n).expect("indexed property");
                IndexField { name: n.to_string(), ty: p.ty, len: *len }
            })
            .collect();
        let desc = IndexDesc {
            id: 0,
            name: name.into(),
            kind: schema.kind,
            schema_id: schema.id,
            schema_name: schema.name.clone(),
            fields,
            comment: None,
            state: IndexState::Building,
            params: Default::default(),
        };
        self.cat.create_index(&self.sp, desc, false).expect("create index").expect("a new index")
    }

    fn catalog_index(&self, name: &str, state: IndexState) -> IndexRef {
        let i = self.cat.indexes(&self.sp).into_iter().find(|i| i.name == name).expect("index in the catalog");
        assert_eq!(i.state, state, "state of index {name}");
        i
    }

    /// Waits until job `id` is done (30 s at most) and returns it.
    fn wait_job(&self, id: i64) -> JobInfo {
        let start = Instant::now();
        loop {
            let jobs = self.st.jobs(&self.sp).expect("jobs");
            let job = jobs.iter().find(|j| j.id == id).unwrap_or_else(|| panic!("job {id} is not listed: {jobs:?}"));
            if job.status.is_done() {
                return job.clone();
            }
            assert!(start.elapsed() < Duration::from_secs(30), "job {id} not done after 30 s: {job:?}");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    fn scan(&self, scans: &[IndexScan]) -> Vec<IndexHit> {
        self.st.scan_index(&self.sp, scans, &Budget::unlimited()).expect("scan_index")
    }
}

fn whole(index: &IndexRef) -> IndexScan {
    IndexScan { index: index.clone(), prefix: Vec::new(), range: None }
}

fn ranged(
    index: &IndexRef,
    prefix: Vec<Value>,
    lower: Option<(Value, bool)>,
    upper: Option<(Value, bool)>,
) -> IndexScan {
    IndexScan {
        index: index.clone(),
        prefix,
        range: Some(IndexRange { lower, upper, starts_with: None, cells: Vec::new() }),
    }
}

fn hit_vid(h: &IndexHit) -> i64 {
    match h {
        IndexHit::Vertex(v) => as_int(v),
        other => panic!("a tag index hit an edge: {other:?}"),
    }
}

/// The VIDs of tag-index hits, checked distinct, sorted.
fn hit_set(hits: &[IndexHit]) -> Vec<i64> {
    let set: BTreeSet<i64> = hits.iter().map(hit_vid).collect();
    assert_eq!(set.len(), hits.len(), "an index scan returns each target once: {hits:?}");
    set.into_iter().collect()
}

/// Reads many VIDs of `tags` (with properties) and their neighbours along `edges` (with and without properties),
/// twice: reads a storage may answer differently once they are frequent (caches, in-memory mirrors).
fn warm_reads(s: &Space<'_>, tags: &[&SchemaRef], edges: &[(i32, &SchemaRef)]) {
    let many: Vec<Value> = (0..5000).map(iv).collect();
    for _ in 0..2 {
        if !tags.is_empty() {
            s.vertices(&many, tags, PropSelection::All);
            let tags: Vec<SchemaRef> = tags.iter().map(|t| (*t).clone()).collect();
            s.st.get_tag_columns(&s.sp, &many, &tags, &PropSelection::All).unwrap();
        }
        if !edges.is_empty() {
            s.neighbors(&nreq(many.clone(), edges, PropSelection::All));
            s.neighbors(&nreq(many.clone(), edges, PropSelection::None));
        }
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Vertices and edges.

/// `get_vertices` answers one entry per requested VID, in request order: `None` for a vertex that does not exist,
/// otherwise the requested tags it has with the properties `props` selects (all, some by name, or none: a tag the
/// vertex has is returned even when none of its properties is selected). Only vertex inserts make vertices: an
/// edge does not make its ends exist.
fn vertex_writes_read_back(fx: &Fixture) {
    let s = int_space(fx);
    let person = s.tag("person", &[("name", PropType::String), ("age", PropType::Int64), ("score", PropType::Double)]);
    s.write(vec![
        ins_v(iv(1), vec![(&person, vec![sv("Tim"), iv(42), Value::Float(1.5)])]),
        ins_v(iv(2), vec![(&person, vec![sv("Ann"), Value::NULL, Value::NULL])]),
        ins_v(iv(-7), vec![(&person, vec![sv(""), iv(i64::MIN), Value::Float(-0.25)])]),
    ]);
    assert_eq!(
        s.tag_row(&iv(1), &person),
        Some(props(&[("name", sv("Tim")), ("age", iv(42)), ("score", Value::Float(1.5))]))
    );
    assert_eq!(
        s.tag_row(&iv(2), &person),
        Some(props(&[("name", sv("Ann")), ("age", Value::NULL), ("score", Value::NULL)]))
    );
    assert_eq!(
        s.tag_row(&iv(-7), &person),
        Some(props(&[("name", sv("")), ("age", iv(i64::MIN)), ("score", Value::Float(-0.25))]))
    );
    // One entry per VID, in order, missing ones None.
    let vids = [iv(3), iv(2), iv(1), iv(3), iv(-7)];
    let got = s.vertices(&vids, &[&person], PropSelection::All);
    assert_eq!(got.iter().map(Option::is_some).collect::<Vec<_>>(), vec![false, true, true, false, true]);
    assert_eq!(got[2].as_ref().unwrap().tags[0].0.id, person.id);
    assert_eq!(got[2].as_ref().unwrap().tags[0].1.get("age"), Some(&iv(42)));
    // Some properties by name; a name the tag lacks selects nothing.
    let only = s.vertices(&[iv(1)], &[&person], PropSelection::Only(vec!["age".into(), "nope".into()]));
    assert_eq!(only[0].as_ref().unwrap().tags[0].1.to_map(), props(&[("age", iv(42))]));
    // No properties: the tag is still there.
    let none = s.vertices(&[iv(1), iv(9)], &[&person], PropSelection::None);
    let row = none[0].as_ref().expect("vertex 1 exists");
    assert_eq!(row.tags.len(), 1, "a tag the vertex has is returned without properties");
    assert!(row.tags[0].1.to_map().is_empty());
    assert!(none[1].is_none());
    // No tags asked: existence only.
    assert!(s.exists(&iv(1)));
    assert!(!s.exists(&iv(3)));
    // An edge alone does not make its ends exist.
    let e = s.edge("e", &[]);
    s.write(vec![ins_e(iv(10), &e, 0, iv(11), vec![])]);
    assert!(!s.exists(&iv(10)) && !s.exists(&iv(11)), "an edge's ends are not vertices");
}

/// A vertex may have several tags, written together or one at a time: an insert of some tags leaves the others
/// as they were, a read returns the requested tags the vertex has in the order the request lists them, and a
/// vertex asked for a tag it lacks exists with no tags.
fn multi_tag_vertices(fx: &Fixture) {
    let s = int_space(fx);
    let a = s.tag("a", &[("x", PropType::Int64)]);
    let b = s.tag("b", &[("y", PropType::String), ("z", PropType::Bool)]);
    let c = s.tag("c", &[("w", PropType::Int64)]);
    s.write(vec![
        ins_v(iv(1), vec![(&a, vec![iv(1)]), (&b, vec![sv("one"), Value::Bool(true)])]),
        ins_v(iv(2), vec![(&a, vec![iv(2)])]),
    ]);
    let got = s.vertices(&[iv(1)], &[&b, &c, &a], PropSelection::All);
    let tags: Vec<i32> = got[0].as_ref().unwrap().tags.iter().map(|(s, _)| s.id).collect();
    assert_eq!(tags, vec![b.id, a.id], "tags in the order of the request, only those the vertex has");
    // Adding a tag later keeps the others.
    s.write(vec![ins_v(iv(2), vec![(&c, vec![iv(20)])])]);
    assert_eq!(s.tag_row(&iv(2), &a), Some(props(&[("x", iv(2))])));
    assert_eq!(s.tag_row(&iv(2), &c), Some(props(&[("w", iv(20))])));
    // Overwriting one tag keeps the others.
    s.write(vec![ins_v(iv(1), vec![(&a, vec![iv(100)])])]);
    assert_eq!(s.tag_row(&iv(1), &a), Some(props(&[("x", iv(100))])));
    assert_eq!(s.tag_row(&iv(1), &b), Some(props(&[("y", sv("one")), ("z", Value::Bool(true))])));
    // A vertex without the requested tag exists, with no tags.
    let got = s.vertices(&[iv(1)], &[&c], PropSelection::All);
    assert!(got[0].as_ref().expect("vertex 1 exists").tags.is_empty());
    // Only(names) selects per tag the names it has.
    let got = s.vertices(&[iv(1)], &[&a, &b], PropSelection::Only(vec!["x".into(), "z".into()]));
    let maps: Vec<Props> = got[0].as_ref().unwrap().tags.iter().map(|(_, r)| r.to_map()).collect();
    assert_eq!(maps, vec![props(&[("x", iv(100))]), props(&[("z", Value::Bool(true))])]);
}

/// `get_tag_columns` answers what `get_vertices` answers, column by column: per tag, whether each requested vertex
/// has it, the selected properties' names in schema order, and one value per vertex (EMPTY where it lacks the tag);
/// also after many reads and after writes that follow them.
fn tag_columns_equal_get_vertices(fx: &Fixture) {
    let s = int_space(fx);
    let a = s.tag("a", &[("x", PropType::Int64), ("s", PropType::String), ("f", PropType::Double)]);
    let b = s.tag("b", &[("y", PropType::Int64)]);
    let mut ms = Vec::new();
    for i in 0..40 {
        let mut tags = vec![];
        if i % 3 != 0 {
            tags.push((
                &a,
                vec![iv(i), if i % 4 == 0 { Value::NULL } else { sv(&format!("s{i}")) }, Value::Float(i as f64)],
            ));
        }
        if i % 2 == 0 {
            tags.push((&b, vec![iv(-i)]));
        }
        if !tags.is_empty() {
            ms.push(ins_v(iv(i), tags));
        }
    }
    s.write(ms);
    let selections = [
        PropSelection::All,
        PropSelection::None,
        PropSelection::Only(vec!["f".into(), "x".into(), "y".into()]),
        PropSelection::Only(vec!["nope".into()]),
    ];
    let vids: Vec<Value> = [5, 0, 3, 99, 5, 7, 12, -1, 38].into_iter().map(iv).collect();
    let compare = |when: &str| {
        for props in &selections {
            let tags = vec![a.clone(), b.clone()];
            let rows = s.st.get_vertices(&s.sp, &vids, &tags, props).unwrap();
            let expected: Vec<TagColumns> = tags.iter().map(|t| TagColumns::from_vertices(t, props, &rows)).collect();
            let got = s.st.get_tag_columns(&s.sp, &vids, &tags, props).unwrap();
            assert_eq!(got, expected, "{when}, {props:?}");
            let (_, names) = TagColumns::selected(&a, props);
            assert_eq!(got[0].names, names, "names in schema order");
        }
    };
    compare("cold");
    warm_reads(&s, &[&a, &b], &[]);
    compare("after many reads");
    s.write(vec![
        ins_v(iv(5), vec![(&a, vec![iv(500), sv("new"), Value::NULL])]),
        Mutation::DeleteTags { vid: iv(7), tags: Some(vec![a.clone()]) },
        ins_v(iv(3), vec![(&a, vec![iv(3), Value::NULL, Value::NULL])]),
        Mutation::DeleteVertex { vid: iv(12), with_edges: false },
        ins_v(iv(99), vec![(&b, vec![iv(99)])]),
    ]);
    compare("after writes");
    let cols =
        s.st.get_tag_columns(&s.sp, &[iv(5), iv(7), iv(99)], std::slice::from_ref(&a), &PropSelection::All).unwrap();
    assert_eq!(cols[0].present, vec![true, false, false]);
    assert_eq!(cols[0].value(0, "x"), iv(500));
    assert_eq!(cols[0].columns[0][1], Value::Empty, "EMPTY where the vertex lacks the tag");
}

/// `get_edges` answers one entry per key, in order: the edge's properties, `None` where no edge has that source,
/// type, rank and destination; edges differing only in rank are different edges. Every edge is also readable
/// from its destination as an in-edge (negative type) with the same properties.
fn edge_writes_read_back(fx: &Fixture) {
    let s = int_space(fx);
    let like = s.edge("like", &[("likeness", PropType::Int64), ("note", PropType::String)]);
    let serve = s.edge("serve", &[("start", PropType::Int64)]);
    s.write(vec![
        ins_e(iv(1), &like, 0, iv(2), vec![iv(90), sv("a")]),
        ins_e(iv(1), &like, 1, iv(2), vec![iv(80), Value::NULL]),
        ins_e(iv(1), &like, -5, iv(3), vec![Value::NULL, sv("c")]),
        ins_e(iv(1), &serve, 0, iv(2), vec![iv(1997)]),
        ins_e(iv(4), &like, i64::MAX, iv(4), vec![iv(1), sv("self")]),
    ]);
    let keys = vec![
        ekey(iv(1), &like, 1, iv(2)),
        ekey(iv(1), &like, 2, iv(2)),
        ekey(iv(1), &like, 0, iv(2)),
        ekey(iv(2), &like, 0, iv(1)),
        ekey(iv(1), &like, -5, iv(3)),
        ekey(iv(4), &like, i64::MAX, iv(4)),
    ];
    let got = s.st.get_edges(&s.sp, &like, &keys).unwrap();
    assert_eq!(
        got,
        vec![
            Some(props(&[("likeness", iv(80)), ("note", Value::NULL)])),
            None,
            Some(props(&[("likeness", iv(90)), ("note", sv("a"))])),
            None,
            Some(props(&[("likeness", Value::NULL), ("note", sv("c"))])),
            Some(props(&[("likeness", iv(1)), ("note", sv("self"))])),
        ]
    );
    assert_eq!(s.edge_row(&serve, iv(1), 0, iv(2)), Some(props(&[("start", iv(1997))])));
    assert_eq!(s.edge_row(&serve, iv(1), 0, iv(3)), None);
    // In-edges carry the same properties.
    let rev = s.neighbors(&nreq(vec![iv(2)], &[(-like.id, &like)], PropSelection::All));
    let mut rows: Vec<(i64, Props)> = rev.iter().map(|e| (e.rank, row_map(e))).collect();
    rows.sort_by_key(|(r, _)| *r);
    assert_eq!(
        rows,
        vec![
            (0, props(&[("likeness", iv(90)), ("note", sv("a"))])),
            (1, props(&[("likeness", iv(80)), ("note", Value::NULL)]))
        ]
    );
    assert!(rev.iter().all(|e| e.from == iv(2) && e.to == iv(1) && e.edge_type == -like.id));
}

/// An insert with IF NOT EXISTS writes only rows that do not exist: an existing tag row or edge keeps its values
/// (and the counts stay), a missing one is written, also next to an existing one in the same insert.
fn if_not_exists_never_overwrites(fx: &Fixture) {
    let s = int_space(fx);
    let a = s.tag("a", &[("x", PropType::Int64)]);
    let b = s.tag("b", &[("y", PropType::Int64)]);
    let e = s.edge("e", &[("w", PropType::Int64)]);
    s.write(vec![ins_v(iv(1), vec![(&a, vec![iv(1)])]), ins_e(iv(1), &e, 0, iv(2), vec![iv(10)])]);
    let before = s.stats();
    s.write(vec![ins_v_ine(iv(1), vec![(&a, vec![iv(99)])]), ins_e_ine(iv(1), &e, 0, iv(2), vec![iv(99)])]);
    assert_eq!(s.tag_row(&iv(1), &a), Some(props(&[("x", iv(1))])), "IF NOT EXISTS kept the tag row");
    assert_eq!(s.edge_row(&e, iv(1), 0, iv(2)), Some(props(&[("w", iv(10))])), "IF NOT EXISTS kept the edge");
    let rev = s.neighbors(&nreq(vec![iv(2)], &[(-e.id, &e)], PropSelection::All));
    assert_eq!(rev.iter().map(row_map).collect::<Vec<_>>(), vec![props(&[("w", iv(10))])], "and its in-edge copy");
    assert_eq!(s.stats(), before, "nothing new was counted");
    // A missing tag next to an existing one, a missing edge next to an existing one.
    s.write(vec![
        ins_v_ine(iv(1), vec![(&a, vec![iv(50)]), (&b, vec![iv(51)])]),
        ins_v_ine(iv(3), vec![(&a, vec![iv(3)])]),
        ins_e_ine(iv(1), &e, 1, iv(2), vec![iv(11)]),
        ins_e_ine(iv(1), &e, 0, iv(2), vec![iv(12)]),
    ]);
    assert_eq!(s.tag_row(&iv(1), &a), Some(props(&[("x", iv(1))])));
    assert_eq!(s.tag_row(&iv(1), &b), Some(props(&[("y", iv(51))])));
    assert_eq!(s.tag_row(&iv(3), &a), Some(props(&[("x", iv(3))])));
    assert_eq!(s.edge_row(&e, iv(1), 1, iv(2)), Some(props(&[("w", iv(11))])));
    assert_eq!(s.edge_row(&e, iv(1), 0, iv(2)), Some(props(&[("w", iv(10))])));
}

/// An insert without IF NOT EXISTS replaces the row: every read path (tag rows, edge rows, in-edge copies,
/// neighbours with and without properties) answers the new values, and the counts do not grow.
fn inserts_overwrite(fx: &Fixture) {
    let s = int_space(fx);
    let a = s.tag("a", &[("x", PropType::Int64), ("s", PropType::String)]);
    let e = s.edge("e", &[("w", PropType::Int64)]);
    s.write(vec![ins_v(iv(1), vec![(&a, vec![iv(1), sv("one")])]), ins_e(iv(1), &e, 0, iv(2), vec![iv(10)])]);
    let before = s.stats();
    s.write(vec![ins_v(iv(1), vec![(&a, vec![iv(2), Value::NULL])]), ins_e(iv(1), &e, 0, iv(2), vec![iv(20)])]);
    assert_eq!(s.tag_row(&iv(1), &a), Some(props(&[("x", iv(2)), ("s", Value::NULL)])));
    assert_eq!(s.edge_row(&e, iv(1), 0, iv(2)), Some(props(&[("w", iv(20))])));
    let out = s.neighbors(&nreq(vec![iv(1)], &[(e.id, &e)], PropSelection::All));
    assert_eq!(out.iter().map(row_map).collect::<Vec<_>>(), vec![props(&[("w", iv(20))])]);
    let rev = s.neighbors(&nreq(vec![iv(2)], &[(-e.id, &e)], PropSelection::All));
    assert_eq!(rev.iter().map(row_map).collect::<Vec<_>>(), vec![props(&[("w", iv(20))])]);
    assert_eq!(s.ends(&[iv(1)], &[(e.id, &e)]).len(), 1, "an overwritten edge is one edge");
    assert_eq!(s.stats(), before, "an overwrite counts nothing new");
    // In one batch, twice: one row.
    s.write(vec![ins_e(iv(5), &e, 0, iv(6), vec![iv(1)]), ins_e(iv(5), &e, 0, iv(6), vec![iv(1)])]);
    assert_eq!(s.ends(&[iv(5)], &[(e.id, &e)]).len(), 1);
}

/// `DeleteTags` with a list removes those tag rows only; with `None` every tag row of the vertex. The vertex itself
/// stays (it exists with no tags), and so do its edges.
fn delete_tags(fx: &Fixture) {
    let s = int_space(fx);
    let a = s.tag("a", &[("x", PropType::Int64)]);
    let b = s.tag("b", &[("y", PropType::Int64)]);
    let e = s.edge("e", &[]);
    s.write(vec![
        ins_v(iv(1), vec![(&a, vec![iv(1)]), (&b, vec![iv(2)])]),
        ins_v(iv(2), vec![(&a, vec![iv(3)]), (&b, vec![iv(4)])]),
        ins_e(iv(1), &e, 0, iv(2), vec![]),
    ]);
    s.write(vec![Mutation::DeleteTags { vid: iv(1), tags: Some(vec![a.clone()]) }]);
    assert_eq!(s.tag_row(&iv(1), &a), None);
    assert_eq!(s.tag_row(&iv(1), &b), Some(props(&[("y", iv(2))])));
    s.write(vec![Mutation::DeleteTags { vid: iv(2), tags: None }]);
    assert_eq!(s.tag_row(&iv(2), &a), None);
    assert_eq!(s.tag_row(&iv(2), &b), None);
    let got = s.vertices(&[iv(2)], &[&a, &b], PropSelection::All);
    assert!(got[0].as_ref().expect("a vertex without tags still exists").tags.is_empty());
    assert!(s.exists(&iv(2)));
    assert_eq!(s.ends(&[iv(1)], &[(e.id, &e)]).len(), 1, "edges stay");
    assert_eq!(s.st.scan_vertices(&s.sp, Some(&a), usize::MAX).unwrap(), Vec::<Value>::new());
    // Deleting what is not there is no error.
    s.write(vec![
        Mutation::DeleteTags { vid: iv(9), tags: None },
        Mutation::DeleteTags { vid: iv(1), tags: Some(vec![a.clone()]) },
    ]);
}

/// `DeleteVertex` removes the vertex and all its tag rows; with `with_edges` also every edge it is the source or
/// destination of (both copies, so the other ends no longer see them), without it the edges stay.
fn delete_vertex_with_and_without_edges(fx: &Fixture) {
    let s = int_space(fx);
    let a = s.tag("a", &[("x", PropType::Int64)]);
    let e = s.edge("e", &[("w", PropType::Int64)]);
    let f = s.edge("f", &[]);
    let mut ms = Vec::new();
    for v in 1..=4 {
        ms.push(ins_v(iv(v), vec![(&a, vec![iv(v)])]));
    }
    ms.extend([
        ins_e(iv(1), &e, 0, iv(2), vec![iv(12)]),
        ins_e(iv(3), &e, 0, iv(1), vec![iv(31)]),
        ins_e(iv(1), &f, 7, iv(4), vec![]),
        ins_e(iv(1), &e, 0, iv(1), vec![iv(11)]),
        ins_e(iv(2), &e, 0, iv(3), vec![iv(23)]),
    ]);
    s.write(ms);
    let types = [(e.id, &e), (-e.id, &e), (f.id, &f), (-f.id, &f)];
    // Without its edges.
    s.write(vec![Mutation::DeleteVertex { vid: iv(1), with_edges: false }]);
    assert!(!s.exists(&iv(1)));
    assert_eq!(s.tag_row(&iv(1), &a), None);
    assert_eq!(s.ends(&[iv(1)], &types).len(), 5, "edges stay when deleted without them");
    assert_eq!(s.edge_row(&e, iv(1), 0, iv(2)), Some(props(&[("w", iv(12))])));
    // With its edges (the vertex is gone already; its edges go now).
    s.write(vec![Mutation::DeleteVertex { vid: iv(1), with_edges: true }]);
    assert_eq!(s.ends(&[iv(1)], &types), Vec::<EdgeT>::new());
    assert_eq!(s.ends_with_props(&[iv(1)], &types), Vec::<EdgeT>::new());
    let others = [iv(2), iv(3), iv(4)];
    assert_eq!(
        s.ends(&others, &types),
        sorted_edges(vec![(iv(2), e.id, 0, iv(3)), (iv(3), -e.id, 0, iv(2))]),
        "the other ends lost their copies"
    );
    assert_eq!(s.ends_with_props(&others, &types), s.ends(&others, &types));
    assert_eq!(s.edge_row(&e, iv(1), 0, iv(2)), None);
    assert_eq!(s.edge_row(&e, iv(3), 0, iv(1)), None);
    assert_eq!(s.edge_row(&f, iv(1), 7, iv(4)), None);
    // A vertex and its edges at once.
    s.write(vec![Mutation::DeleteVertex { vid: iv(3), with_edges: true }]);
    assert!(!s.exists(&iv(3)));
    assert_eq!(s.ends(&others, &types), Vec::<EdgeT>::new());
    let (tags, edges, vertices, total) = s.stats();
    assert_eq!((tags.get(&a.id).copied(), edges.len(), vertices, total), (Some(2), 0, 2, 0));
}

/// `DeleteEdge` removes the edge in both directions and only that edge (other ranks stay), whether or not the
/// edges were read before; deleting an edge that does not exist is no error.
fn delete_edge_removes_both_copies(fx: &Fixture) {
    let s = int_space(fx);
    let e = s.edge("e", &[("w", PropType::Int64)]);
    let types = [(e.id, &e), (-e.id, &e)];
    s.write(vec![
        ins_e(iv(1), &e, 0, iv(2), vec![iv(1)]),
        ins_e(iv(1), &e, 1, iv(2), vec![iv(2)]),
        ins_e(iv(3), &e, 0, iv(4), vec![iv(3)]),
        ins_e(iv(3), &e, 1, iv(4), vec![iv(4)]),
    ]);
    let check = |src: i64, dst: i64, w: i64| {
        let vids = [iv(src), iv(dst)];
        let left = sorted_edges(vec![(iv(src), e.id, 1, iv(dst)), (iv(dst), -e.id, 1, iv(src))]);
        assert_eq!(s.ends(&vids, &types), left, "{src} -> {dst}");
        assert_eq!(s.ends_with_props(&vids, &types), left, "{src} -> {dst}, read with properties");
        assert_eq!(s.edge_row(&e, iv(src), 0, iv(dst)), None);
        assert_eq!(s.edge_row(&e, iv(src), 1, iv(dst)), Some(props(&[("w", iv(w))])));
    };
    // Before any read.
    s.write(vec![del_e(iv(1), &e, 0, iv(2)), del_e(iv(1), &e, 5, iv(2))]);
    check(1, 2, 2);
    // After many.
    warm_reads(&s, &[], &types);
    s.write(vec![del_e(iv(3), &e, 0, iv(4))]);
    check(3, 4, 4);
    check(1, 2, 2);
    let (_, edges, _, total) = s.stats();
    assert_eq!((edges.get(&e.id).copied(), total), (Some(2), 2));
}

/// `write` applies all its mutations or none: when it fails, no read (rows, edges, neighbours, index entries,
/// counts) shows any of them, and later writes count from the state before it. The failing batch here inserts a
/// row of a schema version the catalog does not know (a stale schema) into a tag that has an index; a storage that
/// accepts it must then have applied the whole batch.
fn a_failed_write_applies_nothing(fx: &Fixture) {
    let s = int_space(fx);
    let person = s.tag("person", &[("age", PropType::Int64)]);
    let e = s.edge("e", &[("w", PropType::Int64)]);
    let by_age = s.index("by_age", &person, &[("age", None)]);
    s.write(vec![ins_v(iv(1), vec![(&person, vec![iv(10)])]), ins_e(iv(1), &e, 0, iv(2), vec![iv(1)])]);
    let stats = s.stats();
    let mut unknown = (*person).clone();
    let mut defs = unknown.latest().props.clone();
    defs.push(PropDef { name: "extra".into(), ty: PropType::Int64, nullable: true, default: None, comment: None });
    unknown.versions.push(SchemaVersion { version: unknown.latest().version + 1, props: defs });
    let unknown = Arc::new(unknown);
    let batch = vec![
        ins_v(iv(3), vec![(&person, vec![iv(30)])]),
        ins_e(iv(1), &e, 0, iv(3), vec![iv(2)]),
        Mutation::DeleteEdge { key: ekey(iv(1), &e, 0, iv(2)) },
        Mutation::DeleteVertex { vid: iv(1), with_edges: true },
        ins_v(iv(4), vec![(&unknown, vec![iv(40), iv(41)])]),
    ];
    let types = [(e.id, &e), (-e.id, &e)];
    match s.st.write(&s.sp, batch) {
        Ok(()) => {
            assert!(s.exists(&iv(3)) && s.exists(&iv(4)) && !s.exists(&iv(1)), "an accepted batch applies whole");
            return;
        }
        Err(err) => println!("conformance a_failed_write_applies_nothing: the batch failed as intended: {err}"),
    }
    assert!(s.exists(&iv(1)) && !s.exists(&iv(3)) && !s.exists(&iv(4)), "a failed batch wrote rows");
    assert_eq!(s.tag_row(&iv(1), &person), Some(props(&[("age", iv(10))])));
    assert_eq!(
        s.ends(&[iv(1), iv(2), iv(3)], &types),
        sorted_edges(vec![(iv(1), e.id, 0, iv(2)), (iv(2), -e.id, 0, iv(1))])
    );
    assert_eq!(s.edge_row(&e, iv(1), 0, iv(3)), None);
    assert_eq!(hit_set(&s.scan(&[whole(&by_age)])), vec![1], "a failed batch left index entries");
    assert_eq!(s.stats(), stats, "a failed batch changed the counts");
    // The next write counts from the state before the failed one.
    s.write(vec![ins_v(iv(5), vec![(&person, vec![iv(50)])])]);
    let (tags, _, vertices, _) = s.stats();
    assert_eq!((tags.get(&person.id).copied(), vertices), (Some(2), 2), "counts after a failed batch");
}

/// An acknowledged write is visible to every later read, also after reads frequent enough for a storage to
/// answer them from a cache or an in-memory mirror: tag rows, columns, edge rows, neighbours with and without
/// properties and with a filter, and expansions.
fn reads_after_warm_reads_see_writes(fx: &Fixture) {
    let s = int_space(fx);
    let a = s.tag("a", &[("x", PropType::Int64)]);
    let e = s.edge("e", &[("w", PropType::Int64)]);
    let mut ms = Vec::new();
    for v in 0..50 {
        ms.push(ins_v(iv(v), vec![(&a, vec![iv(v)])]));
        ms.push(ins_e(iv(v), &e, 0, iv((v + 1) % 50), vec![iv(v)]));
    }
    s.write(ms);
    let types = [(e.id, &e), (-e.id, &e)];
    warm_reads(&s, &[&a], &types);
    s.write(vec![
        ins_v(iv(1), vec![(&a, vec![iv(1000)])]),
        Mutation::DeleteTags { vid: iv(2), tags: None },
        ins_v(iv(60), vec![(&a, vec![iv(60)])]),
        ins_e(iv(1), &e, 0, iv(2), vec![iv(1000)]),
        del_e(iv(3), &e, 0, iv(4)),
        ins_e(iv(60), &e, 0, iv(1), vec![iv(60)]),
    ]);
    assert_eq!(s.tag_row(&iv(1), &a), Some(props(&[("x", iv(1000))])));
    assert_eq!(s.tag_row(&iv(2), &a), None);
    assert_eq!(s.tag_row(&iv(60), &a), Some(props(&[("x", iv(60))])));
    let cols =
        s.st.get_tag_columns(&s.sp, &[iv(1), iv(2), iv(60)], std::slice::from_ref(&a), &PropSelection::All).unwrap();
    assert_eq!(cols[0].present, vec![true, false, true]);
    assert_eq!((cols[0].value(0, "x"), cols[0].value(2, "x")), (iv(1000), iv(60)));
    assert_eq!(s.edge_row(&e, iv(1), 0, iv(2)), Some(props(&[("w", iv(1000))])));
    let out = s.neighbors(&nreq(vec![iv(1)], &[(e.id, &e)], PropSelection::All));
    assert_eq!(out.iter().map(row_map).collect::<Vec<_>>(), vec![props(&[("w", iv(1000))])]);
    let mut req = nreq(vec![iv(1), iv(60)], &[(-e.id, &e)], PropSelection::All);
    req.filter = Some(cmp(BinaryOp::Ge, prop_ref("e", "w"), iv(0)));
    assert_eq!(
        sorted_edges(s.neighbors(&req).iter().map(edge_t).collect()),
        sorted_edges(vec![(iv(1), -e.id, 0, iv(0)), (iv(1), -e.id, 0, iv(60))])
    );
    assert_eq!(s.ends(&[iv(3), iv(4)], &types), sorted_edges(vec![(iv(3), -e.id, 0, iv(2)), (iv(4), e.id, 0, iv(5))]));
    assert_eq!(s.ends_with_props(&[iv(3), iv(4)], &types), s.ends(&[iv(3), iv(4)], &types));
    assert_eq!(s.ends(&[iv(60)], &types), vec![(iv(60), e.id, 0, iv(1))]);
    let expand = |times: u32| ExpandRequest {
        last_edge_props: None,
        paths: false,
        starts: vec![iv(60)],
        hops: vec![ExpandHop { edge_types: vec![e.id], distinct: false, times }],
        output: ExpandOutput::Ends,
        budget: Budget::unlimited(),
    };
    assert_eq!(s.st.expand(&s.sp, &expand(3)).unwrap().ends, vec![(iv(3), 1)], "60 -> 1 -> 2 -> 3");
    assert_eq!(s.st.expand(&s.sp, &expand(4)).unwrap().paths, 0, "3 -> 4 is gone");
}

// ---------------------------------------------------------------------------------------------------------------
// Neighbours.

/// Edges `(src, edge, rank, dst)` of a small graph with two edge types, ranks, a self-loop and parallel edges.
fn small_graph(s: &Space<'_>) -> (SchemaRef, SchemaRef, Vec<EdgeRow>) {
    let like = s.edge("like", &[("likeness", PropType::Int64), ("note", PropType::String)]);
    let serve = s.edge("serve", &[("start_year", PropType::Int64)]);
    let edges = vec![
        (1, like.id, 0, 2),
        (1, like.id, 0, 3),
        (1, like.id, 0, 4),
        (1, like.id, 7, 2),
        (5, like.id, 0, 1),
        (2, like.id, 0, 1),
        (6, like.id, 0, 6),
        (1, serve.id, 0, 100),
        (2, serve.id, 3, 100),
        (100, serve.id, -1, 1),
    ];
    let ms = edges
        .iter()
        .map(|&(src, t, rank, dst)| {
            if t == like.id {
                let note = if src == 5 { Value::NULL } else { sv(&format!("n{dst}")) };
                ins_e(iv(src), &like, rank, iv(dst), vec![iv(10 * dst + rank), note])
            } else {
                ins_e(iv(src), &serve, rank, iv(dst), vec![iv(1990 + src)])
            }
        })
        .collect();
    s.write(ms);
    (like, serve, edges)
}

/// A neighbours read follows out-edges for a positive type and in-edges for a negative one: each edge comes back
/// once per requested (vertex, signed type), with `from` the vertex it was reached from, the signed type as
/// requested, its rank and `to` the far end. A vertex without such edges, or that does not exist, adds nothing.
/// (Order is not promised: compared as sets.)
fn neighbors_in_both_directions(fx: &Fixture) {
    let s = int_space(fx);
    let (like, serve, edges) = small_graph(&s);
    let vids: Vec<Value> = [1, 2, 6, 100, 999].into_iter().map(iv).collect();
    let types = [(like.id, &like), (-like.id, &like), (serve.id, &serve), (-serve.id, &serve)];
    let mut expected = Vec::new();
    for v in &vids {
        for (t, _) in &types {
            for &(src, et, rank, dst) in &edges {
                if *t == et && iv(src) == *v {
                    expected.push((v.clone(), *t, rank, iv(dst)));
                }
                if *t == -et && iv(dst) == *v {
                    expected.push((v.clone(), *t, rank, iv(src)));
                }
            }
        }
    }
    let expected = sorted_edges(expected);
    assert_eq!(s.ends(&vids, &types), expected);
    assert_eq!(s.ends_with_props(&vids, &types), expected);
    warm_reads(&s, &[], &types);
    assert_eq!(s.ends(&vids, &types), expected, "after many reads");
    assert_eq!(s.ends_with_props(&vids, &types), expected, "after many reads");
    // One direction, one type.
    assert_eq!(
        s.ends(&[iv(1)], &[(-like.id, &like)]),
        sorted_edges(vec![(iv(1), -like.id, 0, iv(2)), (iv(1), -like.id, 0, iv(5))])
    );
    assert_eq!(s.ends(&[iv(100)], &[(serve.id, &serve)]), vec![(iv(100), serve.id, -1, iv(1))]);
    assert_eq!(s.ends(&[iv(999)], &types), Vec::<EdgeT>::new());
    // A self-loop is an out-edge and an in-edge of its vertex.
    assert_eq!(s.ends(&[iv(6)], &types), sorted_edges(vec![(iv(6), like.id, 0, iv(6)), (iv(6), -like.id, 0, iv(6))]));
}

/// Property selection on neighbours: `All` returns every property of the edge's type, `Only(names)` those of the
/// names the type has (per type), `None` none; in both directions.
fn neighbors_property_selection(fx: &Fixture) {
    let s = int_space(fx);
    let (like, serve, _) = small_graph(&s);
    let both = [(like.id, &like), (serve.id, &serve), (-like.id, &like)];
    let by_edge = |sel: PropSelection| -> BTreeMap<(i32, i64, i64), Props> {
        s.neighbors(&nreq(vec![iv(1)], &both, sel))
            .iter()
            .map(|e| ((e.edge_type, e.rank, as_int(&e.to)), row_map(e)))
            .collect()
    };
    let all = by_edge(PropSelection::All);
    assert_eq!(all.len(), 7);
    assert_eq!(all[&(like.id, 7, 2)], props(&[("likeness", iv(27)), ("note", sv("n2"))]));
    assert_eq!(all[&(serve.id, 0, 100)], props(&[("start_year", iv(1991))]));
    assert_eq!(all[&(-like.id, 0, 5)], props(&[("likeness", iv(10)), ("note", Value::NULL)]));
    let only = by_edge(PropSelection::Only(vec!["start_year".into(), "likeness".into()]));
    assert_eq!(only[&(like.id, 0, 3)], props(&[("likeness", iv(30))]));
    assert_eq!(only[&(serve.id, 0, 100)], props(&[("start_year", iv(1991))]));
    assert_eq!(only[&(-like.id, 0, 2)], props(&[("likeness", iv(10))]));
    assert!(by_edge(PropSelection::None).values().all(Props::is_empty));
    assert!(by_edge(PropSelection::Only(vec!["nope".into()])).values().all(Props::is_empty));
    assert_eq!(by_edge(PropSelection::None).len(), 7);
}

/// A filter keeps only the edges for which it is true (NULL and EMPTY count as false). It may read properties of
/// the request's edge types (another type's property is EMPTY on a row), also ones not returned, and
/// `_src` (the vertex the edge was reached from), `_dst` (the far end) and `_rank`.
fn neighbors_filter(fx: &Fixture) {
    let s = int_space(fx);
    let (like, serve, _) = small_graph(&s);
    let run = |types: &[(i32, &SchemaRef)], sel: PropSelection, filter: Expr| -> Vec<NeighborEdge> {
        let mut req = nreq(vec![iv(1)], types, sel);
        req.filter = Some(filter);
        s.neighbors(&req)
    };
    let tos = |es: &[NeighborEdge]| sorted_values(es.iter().map(|e| e.to.clone()).collect());
    let gt = |v: i64| cmp(BinaryOp::Gt, prop_ref("like", "likeness"), iv(v));
    // A property that is not returned.
    let got = run(&[(like.id, &like)], PropSelection::None, gt(25));
    assert_eq!(tos(&got), vec![iv(2), iv(3), iv(4)]);
    assert!(got.iter().all(|e| row_map(e).is_empty()), "the filter's properties are not returned");
    let got = run(&[(like.id, &like)], PropSelection::Only(vec!["note".into()]), gt(35));
    assert_eq!(got.iter().map(row_map).collect::<Vec<_>>(), vec![props(&[("note", sv("n4"))])]);
    // Another type's property is EMPTY: not true, and IS EMPTY.
    let both = [(like.id, &like), (serve.id, &serve)];
    assert_eq!(run(&both, PropSelection::All, gt(25)).len(), 3);
    let empty = Expr::unary(UnaryOp::IsEmpty, prop_ref("like", "likeness"));
    assert_eq!(run(&both, PropSelection::All, empty).iter().map(|e| e.edge_type).collect::<Vec<_>>(), vec![serve.id]);
    // NULL is not true.
    let rev = [(-like.id, &like)];
    assert_eq!(tos(&run(&rev, PropSelection::None, cmp(BinaryOp::Ne, prop_ref("like", "note"), sv("x")))), vec![iv(2)]);
    let is_null = Expr::unary(UnaryOp::IsNull, prop_ref("like", "note"));
    assert_eq!(tos(&run(&rev, PropSelection::All, is_null)), vec![iv(5)]);
    // _src, _dst and _rank, in both directions.
    assert_eq!(
        tos(&run(&rev, PropSelection::None, cmp(BinaryOp::Eq, meta("like", EdgeMeta::Dst), iv(5)))),
        vec![iv(5)]
    );
    assert_eq!(run(&rev, PropSelection::None, cmp(BinaryOp::Eq, meta("like", EdgeMeta::Src), iv(1))).len(), 2);
    assert_eq!(run(&rev, PropSelection::None, cmp(BinaryOp::Eq, meta("like", EdgeMeta::Src), iv(5))).len(), 0);
    let ranked = run(&[(like.id, &like)], PropSelection::None, cmp(BinaryOp::Eq, meta("like", EdgeMeta::Rank), iv(7)));
    assert_eq!(ranked.iter().map(edge_t).collect::<Vec<_>>(), vec![(iv(1), like.id, 7, iv(2))]);
    // Another request type's meta property is EMPTY on a row: only serve rows have serve._src.
    let serves = run(&both, PropSelection::None, cmp(BinaryOp::Eq, meta("serve", EdgeMeta::Src), iv(1)));
    assert_eq!(serves.iter().map(edge_t).collect::<Vec<_>>(), vec![(iv(1), serve.id, 0, iv(100))]);
    // Constants only.
    assert_eq!(run(&both, PropSelection::None, Expr::Const(Value::Bool(false))).len(), 0);
    assert_eq!(run(&both, PropSelection::None, Expr::Const(Value::NULL)).len(), 0);
    assert_eq!(run(&both, PropSelection::None, Expr::Const(Value::Bool(true))).len(), 5);
}

/// A filter that reads what storage cannot evaluate (`$^`, `$$`, `$-`, a variable, a label that is none of the
/// request's edge types) is an error, not a silently wrong answer.
fn neighbors_filter_errors(fx: &Fixture) {
    let s = int_space(fx);
    let (like, _, _) = small_graph(&s);
    let bad = [
        Expr::SrcProp { tag: "player".into(), prop: "age".into() },
        Expr::DstProp { tag: "player".into(), prop: "age".into() },
        Expr::InputProp("c".into()),
        Expr::VarProp { var: "v".into(), prop: "c".into() },
        prop_ref("teammate", "x"),
        meta("teammate", EdgeMeta::Dst),
    ];
    for props in [PropSelection::None, PropSelection::All] {
        for f in &bad {
            let filter = cmp(BinaryOp::Eq, f.clone(), iv(1));
            let mut req = nreq(vec![iv(1)], &[(like.id, &like), (-like.id, &like)], props.clone());
            req.filter = Some(filter);
            let got = s.st.get_neighbors(&s.sp, &req);
            assert!(got.is_err(), "filter {f:?} ({props:?}) was accepted: {got:?}");
        }
    }
}

/// A limit bounds the edges returned in total, over all requested vertices and types, counted after the filter:
/// `min(limit, edges matching)` edges, each one that matches.
fn neighbors_limit(fx: &Fixture) {
    let s = int_space(fx);
    let e = s.edge("e", &[("w", PropType::Int64)]);
    let f = s.edge("f", &[]);
    let mut ms = Vec::new();
    for i in 0..10 {
        ms.push(ins_e(iv(1), &e, 0, iv(100 + i), vec![iv(i)]));
        ms.push(ins_e(iv(2), &e, 0, iv(100 + i), vec![iv(i)]));
    }
    ms.push(ins_e(iv(1), &f, 0, iv(3), vec![]));
    s.write(ms);
    let types = [(e.id, &e), (f.id, &f)];
    let all = s.ends(&[iv(1), iv(2)], &types);
    assert_eq!(all.len(), 21);
    for sel in [PropSelection::None, PropSelection::All] {
        for limit in [0, 1, 3, 11, 21, 50] {
            let mut req = nreq(vec![iv(1), iv(2)], &types, sel.clone());
            req.limit = Some(limit);
            let got: Vec<EdgeT> = s.neighbors(&req).iter().map(edge_t).collect();
            assert_eq!(got.len(), limit.min(21), "limit {limit}, {sel:?}");
            assert!(got.iter().all(|g| all.contains(g)));
            // After the filter.
            req.filter = Some(cmp(BinaryOp::Ge, prop_ref("e", "w"), iv(7)));
            let got = s.neighbors(&req);
            assert_eq!(got.len(), limit.min(6), "limit {limit} with a filter, {sel:?}");
            assert!(got.iter().all(|g| g.edge_type == e.id && as_int(&g.to) >= 107));
        }
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Expansion.

/// Paths through `hops` over `edges` `(src, type, rank, dst)` by brute force: the end vertices with their counts.
fn reference_expand(edges: &[EdgeRow], starts: &[i64], hops: &[ExpandHop]) -> BTreeMap<i64, u64> {
    let mut frontier: BTreeMap<i64, u64> = BTreeMap::new();
    for s in starts {
        *frontier.entry(*s).or_default() += 1;
    }
    for hop in hops.iter().flat_map(|h| std::iter::repeat_n(h, h.times as usize)) {
        if hop.distinct {
            frontier.values_mut().for_each(|m| *m = 1);
        }
        let mut next: BTreeMap<i64, u64> = BTreeMap::new();
        for (v, m) in &frontier {
            for t in &hop.edge_types {
                for &(src, et, _, dst) in edges {
                    if *t == et && src == *v {
                        *next.entry(dst).or_default() += m;
                    }
                    if *t == -et && dst == *v {
                        *next.entry(src).or_default() += m;
                    }
                }
            }
        }
        frontier = next;
    }
    frontier
}

/// Checks `expand` from `starts` over `hops` (walks, or with `paths` MATCH's paths) against the expected far ends
/// and their counts: `Count` gives their sum, `Ends` each end once with its count.
fn check_expand(s: &Space<'_>, starts: &[i64], hops: &[ExpandHop], paths: bool, ends: &BTreeMap<i64, u64>, when: &str) {
    let total: u64 = ends.values().sum();
    let req = |output| ExpandRequest {
        last_edge_props: None,
        paths,
        starts: starts.iter().map(|v| iv(*v)).collect(),
        hops: hops.to_vec(),
        output,
        budget: Budget::unlimited(),
    };
    let count = s.st.expand(&s.sp, &req(ExpandOutput::Count)).unwrap();
    assert_eq!(count.paths, total, "{when}: Count, hops {hops:?}");
    let got = s.st.expand(&s.sp, &req(ExpandOutput::Ends)).unwrap();
    assert_eq!(got.paths, total, "{when}: Ends, hops {hops:?}");
    let mut got_ends = BTreeMap::new();
    for (v, m) in &got.ends {
        assert!(got_ends.insert(as_int(v), *m).is_none(), "{when}: end {v} listed twice");
    }
    assert_eq!(&got_ends, ends, "{when}: hops {hops:?}");
}

/// `expand` counts paths: with `Count`, the number of paths through every hop; with `Ends`, each far end of the
/// last hop once with the number of paths reaching it (their sum is `paths`). Start duplicates are separate paths,
/// a `distinct` hop expands each entering vertex once, `times` repeats a hop, negative types follow in-edges, edges
/// of different ranks are different paths. Checked against a brute-force count on a random graph, also after
/// deletes.
/// `find_paths`: SHORTEST gives every path of the smallest length per pair (parallel edges apart), SINGLE SHORTEST
/// one of them, ALL every path of 1..=max steps with no edge twice, NOLOOP those with no vertex twice (none from a
/// vertex to itself); steps carry their signed type (negative against the stored direction) and rank; a filter
/// is applied to each edge walked (another type's property is EMPTY); a limit caps the paths; the budget stops it.
fn find_paths_by_kind(fx: &Fixture) {
    let s = int_space(fx);
    let a = s.edge("a", &[]);
    let b = s.edge("b", &[("w", PropType::Int64)]);
    s.write(vec![
        ins_e(iv(1), &a, 0, iv(2), vec![]),
        ins_e(iv(2), &a, 0, iv(3), vec![]),
        ins_e(iv(3), &a, 0, iv(4), vec![]),
        ins_e(iv(1), &a, 0, iv(5), vec![]),
        ins_e(iv(5), &a, 0, iv(4), vec![]),
        ins_e(iv(5), &a, 1, iv(4), vec![]),
        ins_e(iv(4), &a, 0, iv(1), vec![]),
        ins_e(iv(1), &b, 0, iv(4), vec![iv(9)]),
    ]);
    let search = |from: &[i64], to: &[i64], types: &[(i32, &SchemaRef)], kind: PathKind, max: u32| PathSearchRequest {
        sources: from.iter().map(|v| iv(*v)).collect(),
        targets: to.iter().map(|v| iv(*v)).collect(),
        edge_types: types.iter().map(|(t, s)| (*t, (*s).clone())).collect(),
        filter: None,
        max_steps: max,
        kind,
        limit: None,
        budget: Budget::unlimited(),
    };
    // Paths as `src (type rank dst)*`, sorted.
    let run = |req: &PathSearchRequest| -> Vec<String> {
        let mut out: Vec<String> =
            s.st.find_paths(&s.sp, req)
                .expect("find_paths")
                .paths
                .iter()
                .map(|p| {
                    let mut t = format!("{}", p.src);
                    for st in &p.steps {
                        t += &format!(" {}@{}>{}", st.edge_type, st.rank, st.dst);
                    }
                    t
                })
                .collect();
        out.sort();
        out
    };
    let (x, y) = (a.id, b.id);
    let shortest = run(&search(&[1], &[4], &[(x, &a)], PathKind::Shortest, 5));
    assert_eq!(shortest, vec![format!("1 {x}@0>5 {x}@0>4"), format!("1 {x}@0>5 {x}@1>4")]);
    // Several sources and targets: every pair, one search.
    let pairs = run(&search(&[1, 2], &[4, 3], &[(x, &a)], PathKind::Shortest, 5));
    assert_eq!(
        pairs,
        vec![
            format!("1 {x}@0>2 {x}@0>3"),
            format!("1 {x}@0>5 {x}@0>4"),
            format!("1 {x}@0>5 {x}@1>4"),
            format!("2 {x}@0>3"),
            format!("2 {x}@0>3 {x}@0>4"),
        ]
    );
    let reversed = run(&search(&[4], &[1], &[(-x, &a)], PathKind::Shortest, 5));
    assert_eq!(reversed, vec![format!("4 {}@0>5 {}@0>1", -x, -x), format!("4 {}@1>5 {}@0>1", -x, -x)]);
    assert!(run(&search(&[1], &[4], &[(x, &a)], PathKind::Shortest, 1)).is_empty());
    let single = run(&search(&[1], &[4], &[(x, &a)], PathKind::SingleShortest, 5));
    assert!(single.len() == 1 && shortest.contains(&single[0]), "{single:?}");
    let all = run(&search(&[1], &[4], &[(x, &a)], PathKind::All, 3));
    assert_eq!(
        all,
        vec![format!("1 {x}@0>2 {x}@0>3 {x}@0>4"), format!("1 {x}@0>5 {x}@0>4"), format!("1 {x}@0>5 {x}@1>4")]
    );
    let cycles = run(&search(&[1], &[1], &[(x, &a)], PathKind::All, 3));
    assert_eq!(cycles, vec![format!("1 {x}@0>5 {x}@0>4 {x}@0>1"), format!("1 {x}@0>5 {x}@1>4 {x}@0>1")]);
    assert!(run(&search(&[1], &[1], &[(x, &a)], PathKind::NoLoop, 3)).is_empty());
    // Both ways: an edge is not walked twice, a vertex may repeat under ALL but not under NOLOOP.
    let both = [(x, &a), (-x, &a)];
    let all_both = run(&search(&[2], &[4], &both, PathKind::All, 5));
    let noloop_both = run(&search(&[2], &[4], &both, PathKind::NoLoop, 5));
    let revisit = format!("2 {x}@0>3 {x}@0>4 {x}@0>1 {x}@0>5 {x}@0>4");
    assert!(all_both.contains(&revisit) && !noloop_both.contains(&revisit), "{all_both:?} {noloop_both:?}");
    assert!(noloop_both.contains(&format!("2 {x}@0>3 {x}@0>4")), "{noloop_both:?}");
    let mut limited = search(&[1], &[4], &[(x, &a)], PathKind::All, 3);
    limited.limit = Some(2);
    assert_eq!(run(&limited).len(), 2);
    // A filter over the edges walked: `b.w > 5` keeps the b edge (w 9) and no a edge (b.w is EMPTY there).
    let mut filtered = search(&[1], &[4], &[(x, &a), (y, &b)], PathKind::Shortest, 5);
    filtered.filter = Some(cmp(BinaryOp::Gt, prop_ref("b", "w"), iv(5)));
    assert_eq!(run(&filtered), vec![format!("1 {y}@0>4")]);
    filtered.filter = Some(cmp(BinaryOp::Gt, prop_ref("b", "w"), iv(10)));
    assert!(run(&filtered).is_empty());
    let mut stopped = search(&[1], &[4], &[(x, &a)], PathKind::All, 3);
    stopped.budget = killed();
    assert!(s.st.find_paths(&s.sp, &stopped).is_err());
}

/// `subgraph`: round `i` expands the vertices first met in round `i - 1`; the last round keeps only edges between
/// vertices met before; an edge type walked both ways lists an edge once; a vertex `expandable` refuses is not
/// expanded, and the edges to it go; a start no edge ends at is still a vertex of the first round.
fn subgraph_rounds(fx: &Fixture) {
    let s = int_space(fx);
    let a = s.edge("a", &[]);
    s.write(vec![
        ins_e(iv(1), &a, 0, iv(2), vec![]),
        ins_e(iv(1), &a, 1, iv(2), vec![]),
        ins_e(iv(2), &a, 0, iv(3), vec![]),
        ins_e(iv(3), &a, 0, iv(1), vec![]),
        ins_e(iv(2), &a, 0, iv(4), vec![]),
    ]);
    let x = a.id;
    // Per round: its vertices and its edges `(from, signed type, rank, to)`, sorted.
    type Rounds = Vec<(Vec<i64>, Vec<(i64, i32, i64, i64)>)>;
    let run = |types: &[i32], bidirect: bool, steps: u32, refuse: Option<i64>| -> Rounds {
        let req = SubgraphRequest {
            starts: vec![iv(1), iv(99), iv(1)],
            edge_types: types.iter().map(|t| (*t, a.clone())).collect(),
            bidirect: if bidirect { types.to_vec() } else { Vec::new() },
            filter: None,
            steps,
            budget: Budget::unlimited(),
        };
        let mut expandable = |vids: &[Value]| Ok(vids.iter().map(|v| Some(as_int(v)) != refuse).collect());
        s.st.subgraph(&s.sp, &req, &mut expandable)
            .expect("subgraph")
            .into_iter()
            .map(|r| {
                let mut vs: Vec<i64> = r.vertices.iter().map(as_int).collect();
                vs.sort();
                let mut es: Vec<(i64, i32, i64, i64)> =
                    r.edges.iter().map(|e| (as_int(&e.from), e.edge_type, e.rank, as_int(&e.to))).collect();
                es.sort();
                (vs, es)
            })
            .collect()
    };
    let both = run(&[x, -x], true, 1, None);
    assert_eq!(
        both,
        vec![(vec![1, 99], vec![(1, -x, 0, 3), (1, x, 0, 2), (1, x, 1, 2)]), (vec![2, 3], vec![(2, x, 0, 3)])],
        "{both:?}"
    );
    let refused = run(&[x, -x], true, 1, Some(3));
    assert_eq!(refused, vec![(vec![1, 99], vec![(1, x, 0, 2), (1, x, 1, 2)]), (vec![2], vec![])], "{refused:?}");
    let out = run(&[x], false, 2, None);
    assert_eq!(
        out,
        vec![
            (vec![1, 99], vec![(1, x, 0, 2), (1, x, 1, 2)]),
            (vec![2], vec![(2, x, 0, 3), (2, x, 0, 4)]),
            (vec![3, 4], vec![(3, x, 0, 1)]),
        ],
        "{out:?}"
    );
}

fn expand_counts_paths(fx: &Fixture) {
    let s = int_space(fx);
    let a = s.edge("a", &[]);
    let b = s.edge("b", &[("w", PropType::Int64)]);
    let mut rng = Rng(0x5eed);
    let mut edges: Vec<EdgeRow> = Vec::new();
    while edges.len() < 160 {
        let t = if rng.below(3) == 0 { b.id } else { a.id };
        let e = (rng.below(30) as i64, t, rng.below(2) as i64, rng.below(30) as i64);
        if !edges.contains(&e) {
            edges.push(e);
        }
    }
    let write = |edges: &[EdgeRow]| {
        s.write(
            edges
                .iter()
                .map(|&(x, t, r, y)| {
                    if t == a.id {
                        ins_e(iv(x), &a, r, iv(y), vec![])
                    } else {
                        ins_e(iv(x), &b, r, iv(y), vec![iv(1)])
                    }
                })
                .collect(),
        )
    };
    write(&edges);
    let hop = |types: Vec<i32>, distinct: bool, times: u32| ExpandHop { edge_types: types, distinct, times };
    let cases: Vec<Vec<ExpandHop>> = vec![
        vec![hop(vec![a.id], false, 1)],
        vec![hop(vec![a.id], false, 1), hop(vec![a.id], true, 1)],
        vec![hop(vec![a.id], false, 3)],
        vec![hop(vec![a.id, b.id], false, 2)],
        vec![hop(vec![-a.id], false, 2)],
        vec![hop(vec![a.id, -b.id], true, 1), hop(vec![b.id], false, 2)],
        vec![hop(vec![b.id], false, 1), hop(vec![-a.id, a.id], true, 2)],
        vec![hop(vec![a.id], true, 4)],
    ];
    let starts = [3i64, 3, 17, 29, 1000];
    let check = |edges: &[EdgeRow], when: &str| {
        for hops in &cases {
            check_expand(&s, &starts, hops, false, &reference_expand(edges, &starts, hops), when);
        }
    };
    check(&edges, "cold");
    warm_reads(&s, &[], &[(a.id, &a), (-a.id, &a), (b.id, &b), (-b.id, &b)]);
    check(&edges, "after many reads");
    // Deletes and new edges.
    let gone: Vec<EdgeRow> = edges.iter().copied().step_by(4).collect();
    s.write(
        gone.iter()
            .map(|&(x, t, r, y)| Mutation::DeleteEdge {
                key: EdgeKeyVal { src: iv(x), edge_type: t, rank: r, dst: iv(y) },
            })
            .collect(),
    );
    edges.retain(|e| !gone.contains(e));
    let new: Vec<EdgeRow> =
        [(3, a.id, 5, 17), (17, b.id, 0, 3), (29, a.id, 0, 29)].into_iter().filter(|e| !edges.contains(e)).collect();
    write(&new);
    edges.extend(new);
    check(&edges, "after deletes");
    // Nothing to start from, nothing reached.
    let none = ExpandRequest {
        last_edge_props: None,
        paths: false,
        starts: vec![iv(5000)],
        hops: vec![hop(vec![a.id], false, 3)],
        output: ExpandOutput::Ends,
        budget: Budget::unlimited(),
    };
    assert_eq!(s.st.expand(&s.sp, &none).unwrap().paths, 0);
}

/// `get_vertices` with no tags says only which vertices exist (an empty tag list for those that do), the same
/// before and after traversals (which may build in-memory state), after a vertex delete and after a vertex insert;
/// an edge end that was never inserted does not exist.
fn vertices_without_tags_say_which_exist(fx: &Fixture) {
    let s = int_space(fx);
    let t = s.tag("t", &[("x", PropType::Int64)]);
    let e = s.edge("e", &[]);
    s.write(vec![ins_v(iv(1), vec![(&t, vec![iv(1)])]), ins_v(iv(2), vec![(&t, vec![iv(2)])])]);
    s.write(vec![ins_e(iv(1), &e, 0, iv(2), vec![]), ins_e(iv(2), &e, 0, iv(3), vec![])]);
    let vids = [iv(1), iv(2), iv(3), iv(4)];
    let exists = |when: &str, want: [bool; 4]| {
        let got = s.st.get_vertices(&s.sp, &vids, &[], &PropSelection::All).unwrap();
        let got: Vec<bool> = got.iter().map(|v| v.as_ref().is_some_and(|d| d.tags.is_empty())).collect();
        let none: Vec<bool> =
            s.st.get_vertices(&s.sp, &vids, &[], &PropSelection::All).unwrap().iter().map(|v| v.is_none()).collect();
        assert_eq!(got, want, "{when}");
        assert_eq!(none, want.map(|w| !w), "{when}");
    };
    exists("cold", [true, true, false, false]);
    let req = nreq(vec![iv(1), iv(2)], &[(e.id, &e)], PropSelection::None);
    assert_eq!(s.st.get_neighbors(&s.sp, &req).unwrap().len(), 2);
    exists("after a traversal", [true, true, false, false]);
    s.write(vec![Mutation::DeleteVertex { vid: iv(2), with_edges: false }]);
    exists("after a delete", [true, false, false, false]);
    s.write(vec![ins_v(iv(3), vec![(&t, vec![iv(3)])])]);
    exists("after an insert", [true, false, true, false]);
}

/// The far ends of MATCH's paths ([`reference_last_edges`]), each with its number of paths.
fn reference_paths(
    edges: &[EdgeRow],
    exists: &BTreeSet<i64>,
    starts: &[i64],
    hops: &[ExpandHop],
) -> BTreeMap<i64, u64> {
    let mut ends = BTreeMap::new();
    for ((_, _, to, _), n) in reference_last_edges(edges, exists, starts, hops) {
        *ends.entry(to).or_default() += n;
    }
    ends
}

/// MATCH's paths from `starts` over `hops` (each hop once per `times`), enumerated one by one, per last edge as
/// walked: `(signed type, near end, far end, rank)` -> paths. No edge twice within a path, every vertex reached (the
/// start included) in `exists`. An edge is found once per list it is in: a self-loop twice when a hop walks both
/// directions.
fn reference_last_edges(
    edges: &[EdgeRow],
    exists: &BTreeSet<i64>,
    starts: &[i64],
    hops: &[ExpandHop],
) -> BTreeMap<(i32, i64, i64, i64), u64> {
    type Last = (i32, i64, i64, i64);
    fn walk(
        edges: &[EdgeRow],
        exists: &BTreeSet<i64>,
        steps: &[&Vec<i32>],
        v: i64,
        used: &mut Vec<EdgeRow>,
        last: Option<Last>,
        out: &mut BTreeMap<Last, u64>,
    ) {
        let Some((types, rest)) = steps.split_first() else {
            *out.entry(last.expect("at least one hop")).or_default() += 1;
            return;
        };
        for t in types.iter() {
            for &e in edges {
                let (src, et, rank, dst) = e;
                let to = if *t == et && src == v {
                    dst
                } else if *t == -et && dst == v {
                    src
                } else {
                    continue;
                };
                if used.contains(&e) || !exists.contains(&to) {
                    continue;
                }
                used.push(e);
                walk(edges, exists, rest, to, used, Some((*t, v, to, rank)), out);
                used.pop();
            }
        }
    }
    let steps: Vec<&Vec<i32>> =
        hops.iter().flat_map(|h| std::iter::repeat_n(&h.edge_types, h.times as usize)).collect();
    let mut out = BTreeMap::new();
    for s in starts.iter().filter(|s| exists.contains(s)) {
        walk(edges, exists, &steps, *s, &mut Vec::new(), None, &mut out);
    }
    out
}

/// The `w` property [`expand_counts_match_paths`] gives an edge: its key, spelled out.
fn key_weight(t: i32, x: i64, r: i64, y: i64) -> i64 {
    i64::from(t) * 1_000_000 + x * 1000 + y * 10 + r
}

/// Checks `expand` of MATCH's paths with [`ExpandOutput::LastEdges`]: each last edge once, with its count, and
/// asked for them, its properties as stored (`w`, see [`key_weight`]).
fn check_last_edges(
    s: &Space<'_>,
    starts: &[i64],
    hops: &[ExpandHop],
    schemas: &[&SchemaRef],
    want: &BTreeMap<(i32, i64, i64, i64), u64>,
    when: &str,
) {
    let last = &hops.last().expect("hops").edge_types;
    let types: Vec<(i32, SchemaRef)> = last
        .iter()
        .map(|t| (*t, (*schemas.iter().find(|s| s.id == t.abs()).expect("a schema per type")).clone()))
        .collect();
    let with_props = ExpandRequest {
        last_edge_props: Some(LastEdgeProps { types, props: PropSelection::Only(vec!["w".into()]) }),
        paths: true,
        starts: starts.iter().map(|v| iv(*v)).collect(),
        hops: hops.to_vec(),
        output: ExpandOutput::LastEdges,
        budget: Budget::unlimited(),
    };
    let got = s.st.expand(&s.sp, &with_props).unwrap();
    let mut by_edge = BTreeMap::new();
    for (e, n) in &got.last_edges {
        let (from, to) = (as_int(&e.from), as_int(&e.to));
        let (src, dst) = if e.edge_type > 0 { (from, to) } else { (to, from) };
        let w = key_weight(e.edge_type.abs(), src, e.rank, dst);
        let props = e.props.as_ref().map(|p| (p.names.to_vec(), p.values.to_vec()));
        assert_eq!(props, Some((vec!["w".to_string()], vec![iv(w)])), "{when}: properties of last edge {e:?}");
        by_edge.insert((e.edge_type, from, to, e.rank), *n);
    }
    assert_eq!(&by_edge, want, "{when}: last edges with properties, hops {hops:?}");
    let req = ExpandRequest {
        last_edge_props: None,
        paths: true,
        starts: starts.iter().map(|v| iv(*v)).collect(),
        hops: hops.to_vec(),
        output: ExpandOutput::LastEdges,
        budget: Budget::unlimited(),
    };
    let got = s.st.expand(&s.sp, &req).unwrap();
    let mut by_edge = BTreeMap::new();
    for (e, n) in &got.last_edges {
        let key = (e.edge_type, as_int(&e.from), as_int(&e.to), e.rank);
        assert!(by_edge.insert(key, *n).is_none(), "{when}: last edge {e:?} listed twice");
    }
    assert_eq!(&by_edge, want, "{when}: last edges, hops {hops:?}");
    assert_eq!(got.paths, want.values().sum::<u64>(), "{when}: LastEdges total, hops {hops:?}");
}

/// `expand` with `paths` counts MATCH's paths, not walks: no edge twice within one path (parallel edges of
/// different ranks are different edges; a self-loop walked both ways is found twice but used once), only existing
/// vertices reached, start duplicates separate paths. Checked against enumeration on a random graph with self-loops,
/// parallel edges and edges whose ends do not exist, also after a vertex delete and new edges; a `distinct` hop is
/// refused. With `LastEdges`, each last edge as walked once with the paths that end with it (a path's own earlier
/// edge is never its last one).
fn expand_counts_match_paths(fx: &Fixture) {
    let s = int_space(fx);
    let tag = s.tag("t", &[]);
    let a = s.edge("a", &[("w", PropType::Int64)]);
    let b = s.edge("b", &[("w", PropType::Int64)]);
    let mut rng = Rng(0xa7e5);
    let mut edges: Vec<EdgeRow> = Vec::new();
    while edges.len() < 120 {
        let t = if rng.below(3) == 0 { b.id } else { a.id };
        let x = rng.below(24) as i64;
        let y = if rng.below(8) == 0 { x } else { rng.below(24) as i64 };
        let e = (x, t, rng.below(2) as i64, y);
        if !edges.contains(&e) {
            edges.push(e);
        }
    }
    // A hub with an out-list and in-lists longer than a path count scans at once (16), where the entries that lead
    // back into a path sit past the first such chunk.
    for y in (0..24).rev() {
        for e in [(2, a.id, 0, y), (y, a.id, 1, 2)] {
            if !edges.contains(&e) {
                edges.push(e);
            }
        }
    }
    // Vertices 20..24 are never inserted: edges to them dangle.
    let mut exists: BTreeSet<i64> = (0..20).collect();
    s.write(exists.iter().map(|v| ins_v(iv(*v), vec![(&tag, vec![])])).collect());
    let write = |edges: &[EdgeRow]| {
        s.write(
            edges
                .iter()
                .map(|&(x, t, r, y)| {
                    ins_e(iv(x), if t == a.id { &a } else { &b }, r, iv(y), vec![iv(key_weight(t, x, r, y))])
                })
                .collect(),
        )
    };
    write(&edges);
    let hop = |types: Vec<i32>, times: u32| ExpandHop { edge_types: types, distinct: false, times };
    let cases: Vec<Vec<ExpandHop>> = vec![
        vec![hop(vec![a.id], 1)],
        vec![hop(vec![a.id, -a.id], 1)],
        vec![hop(vec![a.id], 2)],
        vec![hop(vec![a.id], 1), hop(vec![-a.id], 1)],
        vec![hop(vec![a.id], 1), hop(vec![-a.id], 1), hop(vec![a.id], 1)],
        vec![hop(vec![a.id, -a.id, b.id], 3)],
        vec![hop(vec![-b.id, b.id], 2), hop(vec![a.id], 1)],
        vec![hop(vec![a.id, -a.id], 4)],
    ];
    let starts = [3i64, 3, 5, 11, 19, 21, 2, 1000];
    let check = |edges: &[EdgeRow], exists: &BTreeSet<i64>, when: &str| {
        for hops in &cases {
            check_expand(&s, &starts, hops, true, &reference_paths(edges, exists, &starts, hops), when);
            check_last_edges(&s, &starts, hops, &[&a, &b], &reference_last_edges(edges, exists, &starts, hops), when);
        }
    };
    check(&edges, &exists, "dangling edges");
    // Every end exists once 20..24 are inserted: the last hop is counted from degrees.
    s.write((20..24).map(|v| ins_v(iv(v), vec![(&tag, vec![])])).collect());
    exists.extend(20..24);
    check(&edges, &exists, "every end exists");
    // A vertex deleted without its edges, and new edges to a vertex that does not exist.
    s.write(vec![Mutation::DeleteVertex { vid: iv(7), with_edges: false }]);
    exists.remove(&7);
    let new: Vec<EdgeRow> = [(3, a.id, 4, 30), (30, a.id, 0, 3)].into_iter().filter(|e| !edges.contains(e)).collect();
    write(&new);
    edges.extend(new);
    check(&edges, &exists, "after a vertex delete");
    let distinct = ExpandRequest {
        last_edge_props: None,
        paths: true,
        starts: vec![iv(3)],
        hops: vec![ExpandHop { edge_types: vec![a.id], distinct: true, times: 2 }],
        output: ExpandOutput::Count,
        budget: Budget::unlimited(),
    };
    assert!(s.st.expand(&s.sp, &distinct).is_err(), "a distinct hop in a path count is refused");
}

// ---------------------------------------------------------------------------------------------------------------
// Read-modify-write.

/// `rmw_vertex` shows `decide` the tag row (`None` if absent) and applies its decision: `Keep` writes nothing and
/// returns the row as it was (`None` stays absent: no vertex appears); `Write` replaces the row, or inserts it (an
/// upsert, the vertex then exists), and returns the written properties; an error from `decide` is returned and
/// writes nothing. Other tags of the vertex are untouched.
fn rmw_vertex(fx: &Fixture) {
    let s = int_space(fx);
    let a = s.tag("a", &[("x", PropType::Int64), ("s", PropType::String)]);
    let b = s.tag("b", &[("y", PropType::Int64)]);
    s.write(vec![ins_v(iv(1), vec![(&a, vec![iv(1), sv("one")]), (&b, vec![iv(10)])])]);
    let mut saw = Vec::new();
    let got = s.st.rmw_vertex(&s.sp, &iv(1), &a, &mut |cur| {
        saw.push(cur.cloned());
        Ok(RmwDecision::Keep)
    });
    assert_eq!(saw, vec![Some(props(&[("x", iv(1)), ("s", sv("one"))]))]);
    assert_eq!(got.unwrap(), Some(props(&[("x", iv(1)), ("s", sv("one"))])), "Keep returns the row as it is");
    let got = s.st.rmw_vertex(&s.sp, &iv(1), &a, &mut |cur| {
        let x = as_int(&cur.expect("the row exists")["x"]);
        Ok(RmwDecision::Write(vec![iv(x + 1), Value::NULL]))
    });
    assert_eq!(got.unwrap(), Some(props(&[("x", iv(2)), ("s", Value::NULL)])), "Write returns the new row");
    assert_eq!(s.tag_row(&iv(1), &a), Some(props(&[("x", iv(2)), ("s", Value::NULL)])));
    assert_eq!(s.tag_row(&iv(1), &b), Some(props(&[("y", iv(10))])), "other tags untouched");
    // Absent: Keep leaves it absent.
    let mut saw = Vec::new();
    let got = s.st.rmw_vertex(&s.sp, &iv(2), &a, &mut |cur| {
        saw.push(cur.cloned());
        Ok(RmwDecision::Keep)
    });
    assert_eq!(saw, vec![None]);
    assert_eq!(got.unwrap(), None);
    assert!(!s.exists(&iv(2)), "Keep on an absent row creates nothing");
    // Upsert.
    let got = s.st.rmw_vertex(&s.sp, &iv(2), &a, &mut |cur| {
        assert!(cur.is_none());
        Ok(RmwDecision::Write(vec![iv(20), sv("new")]))
    });
    assert_eq!(got.unwrap(), Some(props(&[("x", iv(20)), ("s", sv("new"))])));
    assert!(s.exists(&iv(2)));
    assert_eq!(s.tag_row(&iv(2), &a), Some(props(&[("x", iv(20)), ("s", sv("new"))])));
    // A failing decision writes nothing and is the answer.
    let before = s.stats();
    let got = s.st.rmw_vertex(&s.sp, &iv(3), &a, &mut |_| Err(QError::execution("no")));
    assert_eq!(got.unwrap_err().message, "no");
    assert!(!s.exists(&iv(3)));
    let got = s.st.rmw_vertex(&s.sp, &iv(1), &a, &mut |_| Err(QError::execution("no")));
    assert!(got.is_err());
    assert_eq!(s.tag_row(&iv(1), &a), Some(props(&[("x", iv(2)), ("s", Value::NULL)])));
    assert_eq!(s.stats(), before);
    let (tags, _, vertices, _) = s.stats();
    assert_eq!((tags.get(&a.id).copied(), tags.get(&b.id).copied(), vertices), (Some(2), Some(1), 2));
}

/// `rmw_edge` is the same for one edge, and writes the in-edge copy in the same batch: the edge reads the same
/// from both ends afterwards.
fn rmw_edge(fx: &Fixture) {
    let s = int_space(fx);
    let e = s.edge("e", &[("w", PropType::Int64)]);
    s.write(vec![ins_e(iv(1), &e, 0, iv(2), vec![iv(5)])]);
    let key = ekey(iv(1), &e, 0, iv(2));
    let got = s.st.rmw_edge(&s.sp, &key, &e, &mut |cur| {
        assert_eq!(cur, Some(&props(&[("w", iv(5))])));
        Ok(RmwDecision::Keep)
    });
    assert_eq!(got.unwrap(), Some(props(&[("w", iv(5))])));
    let got =
        s.st.rmw_edge(&s.sp, &key, &e, &mut |cur| Ok(RmwDecision::Write(vec![iv(as_int(&cur.unwrap()["w"]) * 10)])));
    assert_eq!(got.unwrap(), Some(props(&[("w", iv(50))])));
    assert_eq!(s.edge_row(&e, iv(1), 0, iv(2)), Some(props(&[("w", iv(50))])));
    let rev = s.neighbors(&nreq(vec![iv(2)], &[(-e.id, &e)], PropSelection::All));
    assert_eq!(rev.iter().map(row_map).collect::<Vec<_>>(), vec![props(&[("w", iv(50))])]);
    // Absent: Keep creates nothing, Write inserts both copies.
    let absent = ekey(iv(3), &e, 2, iv(4));
    assert_eq!(s.st.rmw_edge(&s.sp, &absent, &e, &mut |_| Ok(RmwDecision::Keep)).unwrap(), None);
    assert_eq!(s.ends(&[iv(3), iv(4)], &[(e.id, &e), (-e.id, &e)]), Vec::<EdgeT>::new());
    let got = s.st.rmw_edge(&s.sp, &absent, &e, &mut |cur| {
        assert!(cur.is_none());
        Ok(RmwDecision::Write(vec![iv(34)]))
    });
    assert_eq!(got.unwrap(), Some(props(&[("w", iv(34))])));
    assert_eq!(
        s.ends(&[iv(3), iv(4)], &[(e.id, &e), (-e.id, &e)]),
        sorted_edges(vec![(iv(3), e.id, 2, iv(4)), (iv(4), -e.id, 2, iv(3))])
    );
    let rev = s.neighbors(&nreq(vec![iv(4)], &[(-e.id, &e)], PropSelection::All));
    assert_eq!(rev.iter().map(row_map).collect::<Vec<_>>(), vec![props(&[("w", iv(34))])]);
    let before = s.stats();
    assert!(s.st.rmw_edge(&s.sp, &ekey(iv(5), &e, 0, iv(6)), &e, &mut |_| Err(QError::execution("no"))).is_err());
    assert_eq!(s.edge_row(&e, iv(5), 0, iv(6)), None);
    assert_eq!(s.stats(), before);
    let (_, edges, _, total) = before;
    assert_eq!((edges.get(&e.id).copied(), total), (Some(2), 2));
}

/// No other write to the space comes between a read-modify-write's read and its write: concurrent increments
/// through `rmw_vertex` and `rmw_edge` lose none.
fn rmw_serializes_concurrent_updates(fx: &Fixture) {
    let s = int_space(fx);
    let a = s.tag("a", &[("n", PropType::Int64)]);
    let e = s.edge("e", &[("n", PropType::Int64)]);
    const THREADS: i64 = 4;
    const EACH: i64 = 60;
    let inc = |cur: Option<&Props>| -> quiver_common::QResult<RmwDecision> {
        let n = cur.map_or(0, |p| as_int(&p["n"]));
        Ok(RmwDecision::Write(vec![iv(n + 1)]))
    };
    let key = ekey(iv(1), &e, 0, iv(2));
    std::thread::scope(|scope| {
        for t in 0..THREADS {
            let (s, a, e, key) = (&s, &a, &e, &key);
            scope.spawn(move || {
                for i in 0..EACH {
                    if (i + t) % 2 == 0 {
                        s.st.rmw_vertex(&s.sp, &iv(1), a, &mut |c| inc(c)).unwrap();
                    } else {
                        s.st.rmw_edge(&s.sp, key, e, &mut |c| inc(c)).unwrap();
                    }
                    // Plain writes in between, to other rows.
                    s.write(vec![ins_v(iv(100 + t), vec![(a, vec![iv(i)])])]);
                }
            });
        }
    });
    let total = THREADS * EACH / 2;
    assert_eq!(s.tag_row(&iv(1), &a), Some(props(&[("n", iv(total))])), "vertex increments lost");
    assert_eq!(s.edge_row(&e, iv(1), 0, iv(2)), Some(props(&[("n", iv(total))])), "edge increments lost");
    let rev = s.neighbors(&nreq(vec![iv(2)], &[(-e.id, &e)], PropSelection::All));
    assert_eq!(rev.iter().map(row_map).collect::<Vec<_>>(), vec![props(&[("n", iv(total))])]);
}

// ---------------------------------------------------------------------------------------------------------------
// Scans, clearing, dropping, counts.

/// `scan_vertices` lists the vertices that have the tag (or any tag when `None`), each once, at most `limit`.
fn scan_vertices(fx: &Fixture) {
    let s = int_space(fx);
    let a = s.tag("a", &[("x", PropType::Int64)]);
    let b = s.tag("b", &[]);
    let e = s.edge("e", &[]);
    let mut ms = Vec::new();
    for v in 1..=10 {
        ms.push(ins_v(iv(v), vec![(&a, vec![iv(v)])]));
    }
    for v in 5..=12 {
        ms.push(ins_v(iv(v), vec![(&b, vec![])]));
    }
    ms.push(ins_e(iv(20), &e, 0, iv(21), vec![]));
    s.write(ms);
    let scan = |schema: Option<&SchemaRef>, limit: usize| -> Vec<i64> {
        let got: Vec<i64> = s.st.scan_vertices(&s.sp, schema, limit).unwrap().iter().map(as_int).collect();
        let set: BTreeSet<i64> = got.iter().copied().collect();
        assert_eq!(set.len(), got.len(), "each vertex once: {got:?}");
        assert!(got.len() <= limit, "at most the limit");
        set.into_iter().collect()
    };
    assert_eq!(scan(Some(&a), usize::MAX), (1..=10).collect::<Vec<_>>());
    assert_eq!(scan(Some(&b), usize::MAX), (5..=12).collect::<Vec<_>>());
    assert_eq!(scan(None, usize::MAX), (1..=12).collect::<Vec<_>>(), "any tag; an edge's ends are no vertices");
    for limit in [1, 3, 10] {
        let got = scan(Some(&a), limit);
        assert_eq!(got.len(), limit);
        assert!(got.iter().all(|v| (1..=10).contains(v)));
    }
    assert_eq!(scan(None, 4).len(), 4);
    s.write(vec![
        Mutation::DeleteVertex { vid: iv(1), with_edges: true },
        Mutation::DeleteTags { vid: iv(5), tags: Some(vec![a.clone()]) },
    ]);
    assert_eq!(scan(Some(&a), usize::MAX), (2..=10).filter(|v| *v != 5).collect::<Vec<_>>());
    assert_eq!(scan(Some(&b), usize::MAX), (5..=12).collect::<Vec<_>>());
    assert_eq!(scan(None, usize::MAX), (2..=12).collect::<Vec<_>>());
}

/// `scan_vertices` with a limit of 0 lists no vertex (at most `limit`).
fn scan_vertices_limit_zero(fx: &Fixture) {
    let s = int_space(fx);
    let a = s.tag("a", &[]);
    s.write((0..5).map(|v| ins_v(iv(v), vec![(&a, vec![])])).collect());
    assert_eq!(s.st.scan_vertices(&s.sp, Some(&a), 0).unwrap(), Vec::<Value>::new(), "by tag");
    assert_eq!(s.st.scan_vertices(&s.sp, None, 0).unwrap(), Vec::<Value>::new(), "any tag");
}

/// `scan_vertices(None, ..)` lists every vertex, a vertex whose tags were all deleted (which `get_vertices` still
/// finds, with no tags) included; by tag, only the vertices that have it.
fn scan_vertices_without_schema_lists_every_vertex(fx: &Fixture) {
    let s = int_space(fx);
    let a = s.tag("a", &[]);
    s.write(vec![ins_v(iv(1), vec![(&a, vec![])]), ins_v(iv(2), vec![(&a, vec![])])]);
    s.write(vec![Mutation::DeleteTags { vid: iv(1), tags: None }]);
    assert!(s.exists(&iv(1)));
    assert_eq!(s.st.scan_vertices(&s.sp, None, usize::MAX).unwrap(), vec![iv(1), iv(2)]);
    assert_eq!(s.st.scan_vertices(&s.sp, Some(&a), usize::MAX).unwrap(), vec![iv(2)]);
}

/// `clear_space` removes every row, edge, index entry and count of the space, and only of that space; the space
/// takes writes again afterwards.
fn clear_space(fx: &Fixture) {
    let s1 = int_space(fx);
    let s2 = space(fx, "other", VidType::Int64);
    let mut parts = Vec::new();
    for s in [&s1, &s2] {
        let t = s.tag("t", &[("x", PropType::Int64)]);
        let e = s.edge("e", &[("w", PropType::Int64)]);
        let i = s.index("t_x", &t, &[("x", None)]);
        let mut ms = Vec::new();
        for v in 0..20 {
            ms.push(ins_v(iv(v), vec![(&t, vec![iv(v)])]));
            ms.push(ins_e(iv(v), &e, 0, iv((v + 1) % 20), vec![iv(v)]));
        }
        s.write(ms);
        warm_reads(s, &[&t], &[(e.id, &e)]);
        parts.push((t, e, i));
    }
    let vids: Vec<Value> = (0..20).map(iv).collect();
    s1.st.clear_space(&s1.sp).unwrap();
    for (s, (t, e, i), cleared) in [(&s1, &parts[0], true), (&s2, &parts[1], false)] {
        let n = if cleared { 0 } else { 20 };
        let types = [(e.id, e), (-e.id, e)];
        assert_eq!(s.vertices(&vids, &[t], PropSelection::All).iter().flatten().count(), n, "{}", s.sp.name);
        assert_eq!(s.vertices(&vids, &[], PropSelection::None).iter().flatten().count(), n);
        let cols = s.st.get_tag_columns(&s.sp, &vids, std::slice::from_ref(t), &PropSelection::All).unwrap();
        assert_eq!(cols[0].present.iter().filter(|p| **p).count(), n);
        assert_eq!(s.ends(&vids, &types).len(), 2 * n);
        assert_eq!(s.ends_with_props(&vids, &types).len(), 2 * n);
        assert_eq!(s.st.get_edges(&s.sp, e, &[ekey(iv(0), e, 0, iv(1))]).unwrap()[0].is_some(), !cleared);
        assert_eq!(s.st.scan_vertices(&s.sp, None, usize::MAX).unwrap().len(), n);
        assert_eq!(s.scan(&[whole(i)]).len(), n);
        let expand = ExpandRequest {
            last_edge_props: None,
            paths: false,
            starts: vec![iv(0)],
            hops: vec![ExpandHop { edge_types: vec![e.id], distinct: false, times: 5 }],
            output: ExpandOutput::Count,
            budget: Budget::unlimited(),
        };
        assert_eq!(s.st.expand(&s.sp, &expand).unwrap().paths, if cleared { 0 } else { 1 });
        let (tags, edges, vertices, total) = s.stats();
        let m = n as i64;
        assert_eq!((tags.get(&t.id).copied().unwrap_or(0), edges.get(&e.id).copied().unwrap_or(0)), (m, m));
        assert_eq!((vertices, total), (m, m));
    }
    let (t, e, i) = &parts[0];
    s1.write(vec![ins_v(iv(7), vec![(t, vec![iv(70)])]), ins_e(iv(7), e, 0, iv(8), vec![iv(1)])]);
    assert_eq!(s1.tag_row(&iv(7), t), Some(props(&[("x", iv(70))])));
    assert_eq!(s1.ends(&vids, &[(e.id, e), (-e.id, e)]).len(), 2);
    assert_eq!(hit_set(&s1.scan(&[whole(i)])), vec![7]);
    let (tags, edges, vertices, total) = s1.stats();
    assert_eq!((tags.get(&t.id).copied(), edges.get(&e.id).copied(), vertices, total), (Some(1), Some(1), 1, 1));
}

/// `drop_schema_data` (after the catalog dropped the tag or edge type) removes every row of that type and its
/// counts, in both directions for an edge type, and nothing else: the vertices and their other tags and edges stay.
fn drop_schema_data(fx: &Fixture) {
    let s = int_space(fx);
    let a = s.tag("a", &[("x", PropType::Int64)]);
    let b = s.tag("b", &[("y", PropType::Int64)]);
    let e = s.edge("e", &[("w", PropType::Int64)]);
    let f = s.edge("f", &[("w", PropType::Int64)]);
    let mut ms = Vec::new();
    for v in 0..10 {
        ms.push(ins_v(iv(v), vec![(&a, vec![iv(v)]), (&b, vec![iv(-v)])]));
        ms.push(ins_e(iv(v), &e, 0, iv((v + 1) % 10), vec![iv(v)]));
        ms.push(ins_e(iv(v), &f, 0, iv((v + 2) % 10), vec![iv(v)]));
    }
    s.write(ms);
    let vids: Vec<Value> = (0..10).map(iv).collect();
    let all_types = [(e.id, &e), (-e.id, &e), (f.id, &f), (-f.id, &f)];
    warm_reads(&s, &[&a, &b], &all_types);
    assert!(s.cat.drop_schema(&s.sp, SchemaKind::Tag, "a", false).unwrap().is_some());
    s.st.drop_schema_data(&s.sp, &a).unwrap();
    assert_eq!(s.vertices(&vids, &[&a], PropSelection::All).iter().flatten().filter(|v| !v.tags.is_empty()).count(), 0);
    assert_eq!(
        s.vertices(&vids, &[&b], PropSelection::All).iter().flatten().filter(|v| !v.tags.is_empty()).count(),
        10
    );
    assert!(vids.iter().all(|v| s.exists(v)), "the vertices stay");
    assert_eq!(s.st.scan_vertices(&s.sp, Some(&a), usize::MAX).unwrap(), Vec::<Value>::new());
    let cols = s.st.get_tag_columns(&s.sp, &vids, &[a.clone(), b.clone()], &PropSelection::All).unwrap();
    assert!(cols[0].present.iter().all(|p| !p) && cols[1].present.iter().all(|p| *p));
    assert!(s.cat.drop_schema(&s.sp, SchemaKind::Edge, "e", false).unwrap().is_some());
    s.st.drop_schema_data(&s.sp, &e).unwrap();
    assert_eq!(s.ends(&vids, &all_types).len(), 20, "only f's edges, both directions");
    assert!(s.ends(&vids, &all_types).iter().all(|(_, t, _, _)| t.abs() == f.id));
    assert_eq!(s.ends_with_props(&vids, &all_types), s.ends(&vids, &all_types));
    assert_eq!(s.edge_row(&e, iv(0), 0, iv(1)), None);
    assert_eq!(s.edge_row(&f, iv(0), 0, iv(2)), Some(props(&[("w", iv(0))])));
    let expand = |t: i32| ExpandRequest {
        last_edge_props: None,
        paths: false,
        starts: vec![iv(0)],
        hops: vec![ExpandHop { edge_types: vec![t], distinct: false, times: 2 }],
        output: ExpandOutput::Count,
        budget: Budget::unlimited(),
    };
    assert_eq!(s.st.expand(&s.sp, &expand(e.id)).unwrap().paths, 0);
    assert_eq!(s.st.expand(&s.sp, &expand(f.id)).unwrap().paths, 1);
    let (tags, edges, vertices, total) = s.stats();
    assert_eq!(tags, BTreeMap::from([(b.id, 10)]));
    assert_eq!(edges, BTreeMap::from([(f.id, 10)]));
    assert_eq!((vertices, total), (10, 10));
}

/// `stats` counts exactly what reads see, after every acknowledged write: vertices (those `get_vertices` finds),
/// rows per tag (those `scan_vertices` lists), out-edges per edge type and in total (those neighbours reads
/// return). Checked through random inserts, re-inserts, IF NOT EXISTS, upserts and deletes.
/// A snapshot is created (or refused as not supported, by a storage without files), then listed by its name until
/// dropped; dropping an unknown name says so; the data is untouched throughout.
fn snapshots_are_listed_and_dropped(fx: &Fixture) {
    let s = int_space(fx);
    let t = s.tag("t", &[("x", PropType::Int64)]);
    s.st.write(&s.sp, vec![ins_v(iv(1), vec![(&t, vec![iv(7)])])]).unwrap();
    let before = fx.storage.snapshots().unwrap();
    assert!(!fx.storage.drop_snapshot("SNAPSHOT_NEVER_MADE").unwrap());
    match fx.storage.create_snapshot("SNAPSHOT_CONFORMANCE") {
        Ok(()) => {
            let listed = fx.storage.snapshots().unwrap();
            assert!(listed.contains(&"SNAPSHOT_CONFORMANCE".to_string()), "{listed:?}");
            assert!(fx.storage.create_snapshot("SNAPSHOT_CONFORMANCE").is_err(), "a name is used once");
            assert!(fx.storage.drop_snapshot("SNAPSHOT_CONFORMANCE").unwrap());
            assert_eq!(fx.storage.snapshots().unwrap(), before);
        }
        Err(e) => assert!(e.message.contains("not supported"), "{}", e.message),
    }
    let props = s.st.get_vertices(&s.sp, &[iv(1)], std::slice::from_ref(&t), &PropSelection::All).unwrap();
    assert!(props[0].is_some(), "the data is untouched");
}

fn stats_agree_with_reads(fx: &Fixture) {
    let s = int_space(fx);
    let tags = [s.tag("a", &[("x", PropType::Int64)]), s.tag("b", &[])];
    let types = [s.edge("e", &[("w", PropType::Int64)]), s.edge("f", &[])];
    let n = 25i64;
    let vids: Vec<Value> = (0..n).map(iv).collect();
    let check = |round: usize| {
        let (tag_counts, edge_counts, vertices, total) = s.stats();
        let exist = s.vertices(&vids, &[], PropSelection::None).iter().flatten().count() as i64;
        assert_eq!(vertices, exist, "round {round}: vertices");
        for t in &tags {
            let rows = s.st.scan_vertices(&s.sp, Some(t), usize::MAX).unwrap().len() as i64;
            assert_eq!(tag_counts.get(&t.id).copied().unwrap_or(0), rows, "round {round}: rows of tag {}", t.name);
        }
        let mut sum = 0;
        for e in &types {
            let out = s.ends(&vids, &[(e.id, e)]).len() as i64;
            assert_eq!(edge_counts.get(&e.id).copied().unwrap_or(0), out, "round {round}: edges of {}", e.name);
            sum += out;
        }
        assert_eq!(total, sum, "round {round}: total edges");
    };
    let mut rng = Rng(77);
    for round in 0..60 {
        let mut ms = Vec::new();
        for _ in 0..1 + rng.below(4) {
            let v = iv(rng.below(n as u64) as i64);
            let w = iv(rng.below(n as u64) as i64);
            let t = &tags[rng.below(2) as usize];
            let e = &types[rng.below(2) as usize];
            let tag_values = if t.latest().props.is_empty() { vec![] } else { vec![iv(1)] };
            let edge_values = if e.latest().props.is_empty() { vec![] } else { vec![iv(1)] };
            let rank = rng.below(2) as i64;
            let m = match rng.below(10) {
                0 => ins_v(v, vec![(t, tag_values)]),
                1 => ins_v_ine(v, vec![(t, tag_values)]),
                2 | 3 => Mutation::InsertEdge {
                    key: ekey(v, e, rank, w),
                    schema: e.clone(),
                    values: edge_values,
                    if_not_exists: rng.below(2) == 0,
                },
                4 => Mutation::DeleteEdge { key: ekey(v, e, rank, w) },
                5 => Mutation::DeleteTags { vid: v, tags: Some(vec![t.clone()]) },
                6 => Mutation::DeleteTags { vid: v, tags: None },
                7 => Mutation::DeleteVertex { vid: v, with_edges: rng.below(2) == 0 },
                _ => {
                    // An upsert through read-modify-write, between batches.
                    if !ms.is_empty() {
                        s.write(std::mem::take(&mut ms));
                    }
                    if rng.below(2) == 0 {
                        s.st.rmw_vertex(&s.sp, &v, t, &mut |_| Ok(RmwDecision::Write(tag_values.clone()))).unwrap();
                    } else {
                        s.st.rmw_edge(&s.sp, &ekey(v, e, rank, w), e, &mut |_| {
                            Ok(RmwDecision::Write(edge_values.clone()))
                        })
                        .unwrap();
                    }
                    continue;
                }
            };
            ms.push(m);
        }
        if !ms.is_empty() {
            s.write(ms);
        }
        if round % 6 == 5 {
            check(round);
        }
    }
    check(60);
}

// ---------------------------------------------------------------------------------------------------------------
// Indexes.

/// An index created over existing rows holds an entry for each (`index_created` fills it, inline or by a job, and
/// the index is then ready), and every later write keeps it exact: inserts, overwrites (the old value's entry
/// goes), IF NOT EXISTS that writes nothing, tag and vertex deletes, edge deletes, read-modify-writes. A scan
/// returns each target of the entries in its ranges once: a prefix fixes leading fields, a range bounds the next
/// (inclusive or not, open at either end, never matching NULL), `starts_with` matches a string prefix; the whole
/// index (no range) includes NULL values. Several scans together return each target once.
fn index_maintenance_and_ranges(fx: &Fixture) {
    let s = int_space(fx);
    let person = s.tag("person", &[("name", PropType::String), ("age", PropType::Int64)]);
    let e = s.edge("e", &[("w", PropType::Int64)]);
    // vid -> (name, age); None: NULL.
    let mut model: BTreeMap<i64, (Option<String>, Option<i64>)> = BTreeMap::new();
    let mut ms = Vec::new();
    for v in 1..=30i64 {
        let name = format!("p{}", v % 4);
        let age = if v % 10 == 0 { None } else { Some(v % 7 - 3) };
        ms.push(ins_v(iv(v), vec![(&person, vec![sv(&name), age.map_or(Value::NULL, iv)])]));
        model.insert(v, (Some(name), age));
    }
    // Edges (src, rank, dst) -> w.
    let mut emodel: BTreeMap<(i64, i64, i64), i64> = BTreeMap::new();
    for v in 1..=20i64 {
        ms.push(ins_e(iv(v), &e, v % 2, iv(v + 1), vec![iv(v)]));
        emodel.insert((v, v % 2, v + 1), v);
    }
    s.write(ms);
    let by_age = s.index("by_age", &person, &[("age", None)]);
    let by_name_age = s.index("by_name_age", &person, &[("name", Some(4)), ("age", None)]);
    let of_person = s.index("of_person", &person, &[]);
    let by_w = s.index("by_w", &e, &[("w", None)]);
    let check = |model: &BTreeMap<i64, (Option<String>, Option<i64>)>,
                 emodel: &BTreeMap<(i64, i64, i64), i64>,
                 when: &str| {
        let pick = |f: &dyn Fn(&Option<String>, Option<i64>) -> bool| -> Vec<i64> {
            model.iter().filter(|(_, (n, a))| f(n, *a)).map(|(v, _)| *v).collect()
        };
        let age_in = |lo: Option<(i64, bool)>, hi: Option<(i64, bool)>| {
            let lo2 = lo;
            pick(&move |_, a| {
                let Some(a) = a else { return false };
                lo2.is_none_or(|(l, inc)| if inc { a >= l } else { a > l })
                    && hi.is_none_or(|(h, inc)| if inc { a <= h } else { a < h })
            })
        };
        let b = |v: Option<(i64, bool)>| v.map(|(x, inc)| (iv(x), inc));
        assert_eq!(hit_set(&s.scan(&[whole(&by_age)])), pick(&|_, _| true), "{when}: whole index");
        assert_eq!(hit_set(&s.scan(&[whole(&of_person)])), pick(&|_, _| true), "{when}: index of the tag itself");
        let eq = IndexScan { index: by_age.clone(), prefix: vec![iv(2)], range: None };
        assert_eq!(hit_set(&s.scan(&[eq])), pick(&|_, a| a == Some(2)), "{when}: age == 2");
        for (lo, hi) in [
            (Some((-1, true)), Some((2, false))),
            (Some((-1, false)), Some((2, true))),
            (Some((1, true)), None),
            (None, Some((0, false))),
            (None, None),
            (Some((3, false)), Some((-3, true))),
            (Some((150, true)), Some((250, true))),
        ] {
            let got = s.scan(&[ranged(&by_age, vec![], b(lo), b(hi))]);
            assert_eq!(hit_set(&got), age_in(lo, hi), "{when}: age in {lo:?}..{hi:?}");
        }
        // A prefix and a range on the next field.
        let got = s.scan(&[ranged(&by_name_age, vec![sv("p1")], Some((iv(0), true)), None)]);
        assert_eq!(hit_set(&got), pick(&|n, a| n.as_deref() == Some("p1") && a.is_some_and(|a| a >= 0)), "{when}");
        let got = s.scan(&[IndexScan {
            index: by_name_age.clone(),
            prefix: vec![],
            range: Some(IndexRange { starts_with: Some("p2".into()), ..Default::default() }),
        }]);
        assert_eq!(hit_set(&got), pick(&|n, _| n.as_deref() == Some("p2")), "{when}: starts with p2");
        // Overlapping ranges: each target once.
        let got = s.scan(&[
            ranged(&by_age, vec![], Some((iv(-3), true)), Some((iv(0), true))),
            ranged(&by_age, vec![], Some((iv(-1), true)), Some((iv(2), true))),
        ]);
        assert_eq!(hit_set(&got), age_in(Some((-3, true)), Some((2, true))), "{when}: overlapping ranges");
        // The edge index.
        let got = s.scan(&[ranged(&by_w, vec![], Some((iv(5), true)), Some((iv(12), false)))]);
        let mut got: Vec<(i64, i64, i64)> = got
            .iter()
            .map(|h| match h {
                IndexHit::Edge(src, rank, dst) => (as_int(src), *rank, as_int(dst)),
                other => panic!("an edge index hit a vertex: {other:?}"),
            })
            .collect();
        got.sort();
        let want: Vec<(i64, i64, i64)> = emodel.iter().filter(|(_, w)| (5..12).contains(*w)).map(|(k, _)| *k).collect();
        assert_eq!(got, want, "{when}: w in [5, 12)");
        assert_eq!(s.scan(&[whole(&by_w)]).len(), emodel.len(), "{when}: whole edge index");
    };
    check(&model, &emodel, "after the build");
    let name = |v: i64| sv(&format!("p{}", v % 4));
    s.write(vec![
        ins_v(iv(1), vec![(&person, vec![name(1), iv(200)])]),
        Mutation::DeleteTags { vid: iv(2), tags: Some(vec![person.clone()]) },
        Mutation::DeleteVertex { vid: iv(3), with_edges: true },
        ins_v(iv(50), vec![(&person, vec![sv("p2"), iv(0)])]),
        ins_v_ine(iv(5), vec![(&person, vec![name(5), iv(999)])]),
        Mutation::DeleteTags { vid: iv(6), tags: None },
        ins_v(iv(7), vec![(&person, vec![Value::NULL, Value::NULL])]),
        ins_e(iv(10), &e, 0, iv(11), vec![iv(100)]),
        del_e(iv(12), &e, 0, iv(13)),
        ins_e_ine(iv(14), &e, 0, iv(15), vec![iv(0)]),
    ]);
    model.insert(1, (Some("p1".into()), Some(200)));
    model.remove(&2);
    model.remove(&3);
    model.insert(50, (Some("p2".into()), Some(0)));
    model.remove(&6);
    model.insert(7, (None, None));
    emodel.remove(&(2, 0, 3));
    emodel.remove(&(3, 1, 4));
    emodel.insert((10, 0, 11), 100);
    emodel.remove(&(12, 0, 13));
    s.st.rmw_vertex(&s.sp, &iv(4), &person, &mut |_| Ok(RmwDecision::Write(vec![sv("p0"), iv(150)]))).unwrap();
    model.insert(4, (Some("p0".into()), Some(150)));
    s.st.rmw_vertex(&s.sp, &iv(60), &person, &mut |_| Ok(RmwDecision::Write(vec![sv("p1"), iv(1)]))).unwrap();
    model.insert(60, (Some("p1".into()), Some(1)));
    s.st.rmw_edge(&s.sp, &ekey(iv(16), &e, 0, iv(17)), &e, &mut |_| Ok(RmwDecision::Write(vec![iv(7)]))).unwrap();
    emodel.insert((16, 0, 17), 7);
    s.st.rmw_edge(&s.sp, &ekey(iv(8), &e, 0, iv(9)), &e, &mut |_| Ok(RmwDecision::Write(vec![iv(-8)]))).unwrap();
    emodel.insert((8, 0, 9), -8);
    check(&model, &emodel, "after writes");
    // A dropped index has no entries left.
    assert!(s.cat.drop_index(&s.sp, SchemaKind::Tag, "by_age", false).unwrap().is_some());
    s.st.drop_index_data(&s.sp, by_age.id).unwrap();
    assert_eq!(s.scan(&[whole(&by_age)]), Vec::<IndexHit>::new());
    assert_eq!(s.scan(&[whole(&of_person)]).len(), model.len(), "other indexes keep theirs");
}

/// A scan returns the targets of each range, the ranges one after another, each range in index order (by the values
/// of the index's fields) within each partition.
fn index_scan_is_in_index_order_per_range_and_partition(fx: &Fixture) {
    let s = int_space(fx);
    let t = s.tag("t", &[("x", PropType::Int64)]);
    let mut rng = Rng(99);
    let mut x_of = HashMap::new();
    let mut ms = Vec::new();
    for v in 0..60i64 {
        let x = rng.below(100) as i64 - 50;
        x_of.insert(v, x);
        ms.push(ins_v(iv(v), vec![(&t, vec![iv(x)])]));
    }
    s.write(ms);
    let i = s.index("t_x", &t, &[("x", None)]);
    let first = ranged(&i, vec![], Some((iv(10), true)), Some((iv(40), true)));
    let second = ranged(&i, vec![], Some((iv(-40), true)), Some((iv(-10), true)));
    let got: Vec<i64> = s.scan(&[first, second]).iter().map(|h| x_of[&hit_vid(h)]).collect();
    let split = got.iter().position(|x| *x < 0).unwrap_or(got.len());
    assert!(got[split..].iter().all(|x| *x < 0), "the second range's targets come after the first's: {got:?}");
    let mut first: Vec<i64> = got[..split].to_vec();
    let mut second: Vec<i64> = got[split..].to_vec();
    first.sort_unstable();
    second.sort_unstable();
    let want = |lo: i64, hi: i64| {
        let mut w: Vec<i64> = x_of.values().copied().filter(|x| (lo..=hi).contains(x)).collect();
        w.sort_unstable();
        w
    };
    assert_eq!((first, second), (want(10, 40), want(-40, -10)), "each range's targets, each once: {got:?}");
    // Within a partition a range is in index order: the targets of each partition form ascending runs, so a
    // range has at most as many descents as the space has partitions.
    let descents = |r: &[i64]| r.windows(2).filter(|w| w[0] > w[1]).count();
    let parts = s.sp.partition_num as usize;
    assert!(
        descents(&got[..split]) < parts && descents(&got[split..]) < parts,
        "not in index order per partition: {got:?}"
    );
}

/// A rebuild job fills an index (created in the catalog, building) from every row of its tag or edge type, and
/// marks it ready when it finishes.
fn index_rebuild_job(fx: &Fixture) {
    let s = int_space(fx);
    let t = s.tag("t", &[("x", PropType::Int64)]);
    let e = s.edge("e", &[("w", PropType::Int64)]);
    let mut ms = Vec::new();
    for v in 0..300i64 {
        ms.push(ins_v(iv(v), vec![(&t, vec![iv(v % 11)])]));
        ms.push(ins_e(iv(v), &e, 0, iv(v + 1), vec![iv(v % 13)]));
    }
    s.write(ms);
    let ti = s.new_index("t_x", &t, &[("x", None)]);
    let ei = s.new_index("e_w", &e, &[("w", None)]);
    assert_eq!(s.catalog_index("t_x", IndexState::Building).id, ti.id);
    let tj = s
        .st
        .submit_job(&s.sp, NewJob { kind: JobKind::RebuildIndex(SchemaKind::Tag), indexes: vec![ti.id], paras: vec![] })
        .unwrap();
    let ej =
        s.st.submit_job(
            &s.sp,
            NewJob { kind: JobKind::RebuildIndex(SchemaKind::Edge), indexes: vec![ei.id], paras: vec![] },
        )
        .unwrap();
    for id in [tj, ej] {
        let job = s.wait_job(id);
        assert_eq!(job.status, JobStatus::Finished, "{job:?}");
    }
    let ti = s.catalog_index("t_x", IndexState::Ready);
    let ei = s.catalog_index("e_w", IndexState::Ready);
    assert_eq!(hit_set(&s.scan(&[whole(&ti)])), (0..300).collect::<Vec<_>>());
    let got = s.scan(&[ranged(&ti, vec![], Some((iv(3), true)), Some((iv(3), true)))]);
    assert_eq!(hit_set(&got), (0..300).filter(|v| v % 11 == 3).collect::<Vec<_>>());
    let got = s.scan(&[IndexScan { index: ei.clone(), prefix: vec![iv(5)], range: None }]);
    let mut srcs: Vec<i64> = got
        .iter()
        .map(|h| match h {
            IndexHit::Edge(src, 0, dst) if as_int(dst) == as_int(src) + 1 => as_int(src),
            other => panic!("unexpected hit {other:?}"),
        })
        .collect();
    srcs.sort();
    assert_eq!(srcs, (0..300).filter(|v| v % 13 == 5).collect::<Vec<_>>());
}

// ---------------------------------------------------------------------------------------------------------------
// Jobs and budgets.

/// Submitted jobs run to FINISHED; `jobs` lists the space's jobs (no other space's), newest first; a stats job
/// leaves the counts exact and compaction and flush leave the data as it was; with nothing failed or stopped,
/// `recover_jobs` queues none.
fn jobs_run_and_are_listed_newest_first(fx: &Fixture) {
    let s = int_space(fx);
    let other = space(fx, "other", VidType::Int64);
    let t = s.tag("t", &[("x", PropType::Int64)]);
    let e = s.edge("e", &[]);
    let mut ms = Vec::new();
    for v in 0..50 {
        ms.push(ins_v(iv(v), vec![(&t, vec![iv(v)])]));
        ms.push(ins_e(iv(v), &e, 0, iv(v / 2), vec![]));
    }
    s.write(ms);
    s.write((0..10).map(|v| Mutation::DeleteVertex { vid: iv(v), with_edges: true }).collect());
    let stats = s.stats();
    let vids: Vec<Value> = (0..50).map(iv).collect();
    let rows = s.vertices(&vids, &[&t], PropSelection::All);
    let edges = s.ends_with_props(&vids, &[(e.id, &e), (-e.id, &e)]);
    let other_job = other.st.submit_job(&other.sp, NewJob::of(JobKind::Stats)).unwrap();
    let mut ids = Vec::new();
    for kind in [JobKind::Stats, JobKind::Compact, JobKind::Flush] {
        let id = s.st.submit_job(&s.sp, NewJob::of(kind)).unwrap();
        let job = s.wait_job(id);
        assert_eq!((job.status, job.kind, job.space_id), (JobStatus::Finished, kind, s.sp.id), "{job:?}");
        ids.push(id);
    }
    assert_eq!(s.stats(), stats, "a stats job keeps the counts exact");
    assert_eq!(s.vertices(&vids, &[&t], PropSelection::All), rows, "jobs do not change rows");
    assert_eq!(s.ends_with_props(&vids, &[(e.id, &e), (-e.id, &e)]), edges, "jobs do not change edges");
    let listed = s.st.jobs(&s.sp).unwrap();
    assert!(listed.iter().all(|j| j.space_id == s.sp.id), "another space's job is listed: {listed:?}");
    assert!(!listed.iter().any(|j| j.id == other_job));
    assert!(listed.windows(2).all(|w| w[0].id > w[1].id), "jobs are listed newest first: {listed:?}");
    for id in &ids {
        assert!(listed.iter().any(|j| j.id == *id));
    }
    assert_eq!(other.wait_job(other_job).status, JobStatus::Finished);
    assert_eq!(s.st.recover_jobs(&s.sp, &[]).unwrap(), 0);
}

/// A read of many edges or index entries checks its budget as it goes: a killed query's neighbours read (with or
/// without properties or a filter, in either direction), expansion and index scan fail instead of running to the
/// end; the same reads with a live budget succeed.
fn a_killed_budget_stops_long_reads(fx: &Fixture) {
    let s = int_space(fx);
    let e = s.edge("e", &[("w", PropType::Int64)]);
    let i = s.index("e_all", &e, &[]);
    let n = 3 * TICKS_PER_CHECK as i64;
    // Vertex 0 has n out-edges and n in-edges.
    let mut ms = Vec::new();
    for k in 1..=n {
        ms.push(ins_e(iv(0), &e, 0, iv(k), vec![iv(k)]));
        ms.push(ins_e(iv(-k), &e, 0, iv(0), vec![iv(k)]));
    }
    s.write(ms);
    for t in [e.id, -e.id] {
        for props in [PropSelection::None, PropSelection::All] {
            for filter in [None, Some(cmp(BinaryOp::Ge, prop_ref("e", "w"), iv(0)))] {
                let mut req = nreq(vec![iv(0)], &[(t, &e)], props.clone());
                req.filter = filter.clone();
                assert_eq!(s.neighbors(&req).len() as i64, n);
                req.budget = killed();
                let got = s.st.get_neighbors(&s.sp, &req);
                assert!(
                    got.is_err(),
                    "a killed read of {n} edges ({t}, {props:?}, {filter:?}) returned {:?}",
                    got.map(|v| v.len())
                );
            }
        }
    }
    let expand = |budget: Budget| ExpandRequest {
        last_edge_props: None,
        paths: false,
        starts: vec![iv(0)],
        hops: vec![
            ExpandHop { edge_types: vec![e.id], distinct: false, times: 1 },
            ExpandHop { edge_types: vec![-e.id], distinct: false, times: 1 },
        ],
        output: ExpandOutput::Count,
        budget,
    };
    assert_eq!(s.st.expand(&s.sp, &expand(Budget::unlimited())).unwrap().paths, n as u64);
    assert!(s.st.expand(&s.sp, &expand(killed())).is_err(), "a killed expansion ran to the end");
    assert_eq!(s.scan(&[whole(&i)]).len() as i64, 2 * n);
    assert!(s.st.scan_index(&s.sp, &[whole(&i)], &killed()).is_err(), "a killed index scan ran to the end");
}

// ---------------------------------------------------------------------------------------------------------------
// VID types and schema versions.

/// In a FIXED_STRING space, VIDs of any length up to the space's (multi-byte characters included) read back
/// exactly as written from every read: vertices, edges, neighbours, expansion ends, vertex scans and index hits.
fn string_vids(fx: &Fixture) {
    let s = space(fx, "strings", VidType::FixedString(8));
    let t = s.tag("t", &[("x", PropType::Int64)]);
    let e = s.edge("e", &[]);
    let i = s.index("t_x", &t, &[("x", None)]);
    let names = ["a", "ab", "abcdefgh", "zé", "A"];
    let vids: Vec<Value> = names.iter().map(|n| sv(n)).collect();
    let mut ms = Vec::new();
    for (k, v) in vids.iter().enumerate() {
        ms.push(ins_v(v.clone(), vec![(&t, vec![iv(k as i64)])]));
        ms.push(ins_e(v.clone(), &e, 0, vids[(k + 1) % vids.len()].clone(), vec![]));
    }
    s.write(ms);
    for (k, v) in vids.iter().enumerate() {
        assert_eq!(s.tag_row(v, &t), Some(props(&[("x", iv(k as i64))])), "{v}");
    }
    assert!(!s.exists(&sv("abc")));
    let got = s.vertices(&vids, &[&t], PropSelection::None);
    assert_eq!(got.iter().map(|r| r.as_ref().unwrap().vid.clone()).collect::<Vec<_>>(), vids);
    let mut expected = Vec::new();
    for (k, v) in vids.iter().enumerate() {
        let next = vids[(k + 1) % vids.len()].clone();
        let prev = vids[(k + vids.len() - 1) % vids.len()].clone();
        expected.push((v.clone(), e.id, 0, next));
        expected.push((v.clone(), -e.id, 0, prev));
    }
    let expected = sorted_edges(expected);
    let types = [(e.id, &e), (-e.id, &e)];
    assert_eq!(s.ends(&vids, &types), expected);
    assert_eq!(s.ends_with_props(&vids, &types), expected);
    assert_eq!(s.st.get_edges(&s.sp, &e, &[ekey(sv("zé"), &e, 0, sv("A"))]).unwrap(), vec![Some(Props::new())]);
    let expand = ExpandRequest {
        last_edge_props: None,
        paths: false,
        starts: vec![sv("a")],
        hops: vec![ExpandHop { edge_types: vec![e.id], distinct: true, times: 3 }],
        output: ExpandOutput::Ends,
        budget: Budget::unlimited(),
    };
    assert_eq!(s.st.expand(&s.sp, &expand).unwrap().ends, vec![(sv("zé"), 1)]);
    let scanned = s.st.scan_vertices(&s.sp, Some(&t), usize::MAX).unwrap();
    assert_eq!(sorted_values(scanned), sorted_values(vids.clone()));
    let hits: Vec<Value> = s
        .scan(&[whole(&i)])
        .into_iter()
        .map(|h| match h {
            IndexHit::Vertex(v) => v,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(sorted_values(hits), sorted_values(vids.clone()));
}

/// Rows record the schema version they were written with and read in the shape of the schema they are read
/// with: after the catalog adds a property (nullable, no default) and drops one, older rows read the new
/// property as NULL and no longer show the dropped one, next to rows written with the new version; also when the
/// old rows had been read many times before the change.
fn rows_of_older_schema_versions(fx: &Fixture) {
    let s = int_space(fx);
    let t = s.tag("t", &[("x", PropType::Int64), ("s", PropType::String)]);
    let e = s.edge("e", &[("w", PropType::Int64), ("s", PropType::String)]);
    let mut ms = Vec::new();
    for v in 0..10 {
        ms.push(ins_v(iv(v), vec![(&t, vec![iv(v), sv("old")])]));
        ms.push(ins_e(iv(v), &e, 0, iv(v + 1), vec![iv(v), sv("old")]));
    }
    s.write(ms);
    warm_reads(&s, &[&t], &[(e.id, &e)]);
    let y = PropDef { name: "y".into(), ty: PropType::Int64, nullable: true, default: None, comment: None };
    for (kind, name) in [(SchemaKind::Tag, "t"), (SchemaKind::Edge, "e")] {
        let changes = vec![SchemaChange::Add(vec![y.clone()]), SchemaChange::Drop(vec!["s".into()])];
        s.cat.alter_schema(&s.sp, kind, name, changes, SchemaOptionsChange::default()).unwrap();
    }
    let t2 = s.cat.schema(&s.sp, SchemaKind::Tag, "t").unwrap();
    let e2 = s.cat.schema(&s.sp, SchemaKind::Edge, "e").unwrap();
    assert_eq!(t2.latest().props.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(), vec!["x", "y"]);
    s.write(vec![
        ins_v(iv(100), vec![(&t2, vec![iv(100), iv(7)])]),
        ins_e(iv(100), &e2, 0, iv(0), vec![iv(100), iv(7)]),
    ]);
    assert_eq!(s.tag_row(&iv(3), &t2), Some(props(&[("x", iv(3)), ("y", Value::NULL)])));
    assert_eq!(s.tag_row(&iv(100), &t2), Some(props(&[("x", iv(100)), ("y", iv(7))])));
    let cols = s.st.get_tag_columns(&s.sp, &[iv(3), iv(100)], std::slice::from_ref(&t2), &PropSelection::All).unwrap();
    assert_eq!(&*cols[0].names, &["x".to_string(), "y".to_string()]);
    assert_eq!(cols[0].columns, vec![vec![iv(3), iv(100)], vec![Value::NULL, iv(7)]]);
    assert_eq!(s.edge_row(&e2, iv(3), 0, iv(4)), Some(props(&[("w", iv(3)), ("y", Value::NULL)])));
    assert_eq!(s.edge_row(&e2, iv(100), 0, iv(0)), Some(props(&[("w", iv(100)), ("y", iv(7))])));
    let rev = s.neighbors(&nreq(vec![iv(0)], &[(-e2.id, &e2)], PropSelection::All));
    assert_eq!(rev.iter().map(row_map).collect::<Vec<_>>(), vec![props(&[("w", iv(100)), ("y", iv(7))])]);
    let out = s.neighbors(&nreq(vec![iv(3)], &[(e2.id, &e2)], PropSelection::All));
    assert_eq!(out.iter().map(row_map).collect::<Vec<_>>(), vec![props(&[("w", iv(3)), ("y", Value::NULL)])]);
}
