//! One test per query file in `tests/queries/`, and one per optimizer rule in `tests/queries/rules/` (named after
//! the rule).

use std::path::Path;

fn run(file: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("queries").join(format!("{file}.test"));
    let failures = quiver_tests::run_file(&path);
    assert!(failures.is_empty(), "{} failure(s):\n{}", failures.len(), failures.join("\n\n"));
}

macro_rules! query_files {
    ($($name:ident),* $(,)?) => {
        $(#[test] fn $name() { run(stringify!($name)); })*
        const QUERY_FILES: &[&str] = &[$(stringify!($name)),*];
    };
}

macro_rules! rule_files {
    ($($name:ident),* $(,)?) => {
        mod rules {
            $(#[test] fn $name() { super::run(&format!("rules/{}", stringify!($name))); })*
        }
        const RULE_FILES: &[&str] = &[$(stringify!($name)),*];
    };
}

query_files!(
    space,
    schema,
    insert,
    update,
    delete,
    fetch,
    validator,
    yield_expr,
    ngql_expressions,
    ngql_statements,
    ngql_functions,
    ngql_function_coverage,
    geo,
    errors,
    nba,
    nba_int_vid,
    student,
    go,
    group_order_limit,
    set_ops,
    explain,
    list_comprehension,
    match_syntax,
    match_basic,
    match_multi_hop,
    match_clauses,
    match_patterns,
    match_start,
    match_errors,
    match_shortest_path,
    find_path,
    get_subgraph,
    lookup,
    index,
    partitioned,
    stats_jobs,
    ttl,
    configs,
    queries,
    users,
    permissions,
    list_set_props
);

rule_files!(
    push_limit_into_find_path,
    remove_unused_columns,
    merge_projections,
    fuse_count_traversal,
    fuse_match_count,
    fuse_match_rows,
    prune_match_reads,
    prune_match_columns,
    push_filter_into_go,
    push_projection_into_go,
    sort_limit_to_topn,
    push_topn_into_go,
    push_topn_bound_below_append,
    push_limit_into_go
);

#[test]
fn every_query_file_has_a_test() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("queries");
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            continue;
        }
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        assert!(QUERY_FILES.contains(&name.as_str()), "query file {name}.test is not listed in queries.rs");
    }
    for entry in std::fs::read_dir(dir.join("rules")).unwrap() {
        let name = entry.unwrap().path().file_stem().unwrap().to_string_lossy().to_string();
        assert!(RULE_FILES.contains(&name.as_str()), "rule file rules/{name}.test is not listed in queries.rs");
    }
}

#[test]
fn every_optimizer_rule_has_a_test_of_its_name() {
    let mut rules = quiver_query::optimizer::rule_names();
    rules.sort();
    let mut files = RULE_FILES.to_vec();
    files.sort();
    assert_eq!(rules, files);
}
