//! One test per query file in `tests/queries/`.

use std::path::Path;

fn run(name: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("queries").join(format!("{name}.test"));
    let failures = quiver_tests::run_file(&path);
    assert!(failures.is_empty(), "{} failure(s):\n{}", failures.len(), failures.join("\n\n"));
}

macro_rules! query_files {
    ($($name:ident),* $(,)?) => {
        $(#[test] fn $name() { run(stringify!($name)); })*
    };
}

query_files!(space, schema, insert, update, delete, fetch, yield_expr, errors, nba, nba_int_vid, student, go, group_order_limit);

#[test]
fn every_query_file_has_a_test() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("queries");
    let listed = ["space", "schema", "insert", "update", "delete", "fetch", "yield_expr", "errors", "nba", "nba_int_vid", "student", "go", "group_order_limit"];
    for entry in std::fs::read_dir(dir).unwrap() {
        let name = entry.unwrap().path().file_stem().unwrap().to_string_lossy().to_string();
        assert!(listed.contains(&name.as_str()), "query file {name}.test is not listed in queries.rs");
    }
}
