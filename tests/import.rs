//! `quiver import` (the bulk path) against the nGQL loader (INSERT statements): the same mapping gives the same
//! answers to every kind of read, indexes and counters included; running it again changes nothing; bad rows are
//! reported with file and line and skipped, and too many stop the import with what was written consistent.

use quiver_query::{Params, Session};
use quiver_server::import::{import, ImportOptions, ImportReport};
use quiver_server::Database;
use quiver_tests::datasets_dir;
use std::path::Path;

const READS: &[&str] = &[
    "SHOW STATS",
    "LOOKUP ON player YIELD id(vertex) AS v, player.name, player.age",
    "LOOKUP ON player WHERE player.age > 40 YIELD id(vertex) AS v",
    "LOOKUP ON team YIELD id(vertex) AS v, team.name",
    "LOOKUP ON bachelor YIELD id(vertex) AS v, properties(vertex)",
    "LOOKUP ON serve YIELD src(edge) AS s, dst(edge) AS d, rank(edge) AS r, serve.start_year, serve.end_year",
    "LOOKUP ON like WHERE like.likeness >= 90 YIELD src(edge) AS s, dst(edge) AS d",
    "FETCH PROP ON * {Tim Duncan}, {Tony Parker}, {Spurs}, {Null1} YIELD vertex AS v",
    "GO 2 STEPS FROM {Tim Duncan} OVER * YIELD dst(edge) AS d, type(edge) AS t, rank(edge) AS r",
    "GO FROM {Tony Parker} OVER like REVERSELY YIELD src(edge) AS s, like.likeness AS l, $$.player.name AS n",
    "GO FROM {Spurs} OVER serve REVERSELY YIELD src(edge) AS s, serve.start_year AS y",
    "GO 3 STEPS FROM {Tim Duncan} OVER like, teammate BIDIRECT YIELD dst(edge) AS d | YIELD COUNT(*)",
];

/// Runs [`READS`], with `{name}` as the VID of `name` in the space (`hash("name")` for INT64 VIDs).
fn answers(db: &Database, space: &str) -> Vec<Vec<String>> {
    let mut s = Session::default();
    db.execute(&mut s, &format!("USE {space}"), &Params::new()).unwrap();
    let vid = vid_substitution(space.ends_with("int_vid"));
    READS
        .iter()
        .map(|q| {
            let q = &vid(q);
            let ds = db.execute(&mut s, q, &Params::new()).unwrap_or_else(|e| panic!("`{q}`: {}", e.message));
            let mut rows: Vec<String> = ds.rows().map(|r| format!("{r:?}")).collect();
            rows.sort();
            rows
        })
        .collect()
}

fn vid_substitution(int_vid: bool) -> impl Fn(&str) -> String {
    move |q: &str| {
        let mut out = String::new();
        let mut rest = q;
        while let Some(open) = rest.find('{') {
            let close = open + rest[open..].find('}').expect("closed");
            out.push_str(&rest[..open]);
            let name = &rest[open + 1..close];
            out.push_str(&if int_vid { format!("hash(\"{name}\")") } else { format!("\"{name}\"") });
            rest = &rest[close + 1..];
        }
        out.push_str(rest);
        out
    }
}

fn import_dir(db: &Database, dir: &Path, run_pairs: usize) -> ImportReport {
    let opts = ImportOptions { run_pairs, ..Default::default() };
    import(db, &dir.join("config.yaml"), &opts).unwrap_or_else(|e| panic!("import failed: {}", e.message))
}

fn same_as_loader(dataset: &str, space: &str) {
    let dir = datasets_dir().join(dataset);
    let loaded = Database::in_memory();
    quiver_server::loader::load(&loaded, &dir).unwrap();
    let expected = answers(&loaded, space);
    assert!(expected[1].len() > 50, "the reads see the data");

    for run_pairs in [4 << 20, 16] {
        let tmp = tempfile::tempdir().unwrap();
        let db = Database::open(tmp.path()).unwrap();
        let r = import_dir(&db, &dir, run_pairs);
        assert_eq!((r.bad_rows, r.edges), (0, 244), "{dataset} with runs of {run_pairs} pairs");
        assert_eq!(answers(&db, space), expected, "{dataset} imported in runs of {run_pairs} pairs");
        // Again, into the same data: nothing changes (same keys), the counters included.
        import_dir(&db, &dir, run_pairs);
        assert_eq!(answers(&db, space), expected, "{dataset} imported twice");
        drop(db);
        let db = Database::open(tmp.path()).unwrap();
        assert_eq!(answers(&db, space), expected, "{dataset} after reopening");
    }
    // The in-memory engine (the trait's default ingestion) too.
    let db = Database::in_memory();
    import_dir(&db, &dir, 64);
    assert_eq!(answers(&db, space), expected, "{dataset} into the in-memory engine");
}

#[test]
fn import_equals_insert_nba() {
    same_as_loader("nba", "nba");
}

#[test]
fn import_equals_insert_nba_int_vid() {
    same_as_loader("nba_int_vid", "nba_int_vid");
}

const BAD_MAPPING: &str = r#"
space:
  name: imp
  partitionNum: 3
  replicaFactor: 1
  vidType: FIXED_STRING(8)
schema: |
  CREATE TAG IF NOT EXISTS p(name string, age int8, born date, score double DEFAULT 1.5);
  CREATE EDGE IF NOT EXISTS e(w int NOT NULL);
  CREATE TAG INDEX IF NOT EXISTS p_age ON p(age);
files:
  - path: ./p.csv
    withHeader: true
    delimiter: "|"
    vertex:
      vid: { index: 0, type: string }
      tags:
        - name: p
          props:
            - { name: name, type: string, index: 1 }
            - { name: age, type: int, index: 2 }
            - { name: born, type: date, index: 3 }
  - path: ./e.csv
    edge:
      name: e
      srcVID: { index: 0, type: string }
      dstVID: { index: 1, type: string }
      rank: { index: 2 }
      props:
        - { name: w, type: int, index: 3 }
"#;

const PEOPLE: &str = "id|name|age|born
a|Ann|30|1990-01-02
b|Bob|thirty|1990-01-02
c|Cy|300|1990-01-02
toolongvid|Dee|20|1990-01-02
d|Di|20|1990-13-45
e|Ed|20
f|Fay|__NULL__|2000-02-29
a|Ann2|31|1990-01-02
";

const EDGES: &str = "a,b,0,1
a,c,x,1
a,f,0,
b,a,1,__NULL__
f,a,2,7
";

fn write_bad_dataset(dir: &Path) {
    std::fs::write(dir.join("config.yaml"), BAD_MAPPING).unwrap();
    std::fs::write(dir.join("p.csv"), PEOPLE).unwrap();
    std::fs::write(dir.join("e.csv"), EDGES).unwrap();
}

fn rows(db: &Database, stmt: &str) -> Vec<String> {
    let mut s = Session::default();
    let ds = db
        .execute(&mut s, &format!("USE imp; {stmt}"), &Params::new())
        .unwrap_or_else(|e| panic!("`{stmt}`: {}", e.message));
    let mut rows: Vec<String> = ds.rows().map(|r| format!("{r:?}")).collect();
    rows.sort();
    rows
}

#[test]
fn bad_rows_are_reported_with_file_and_line_and_skipped() {
    let tmp = tempfile::tempdir().unwrap();
    write_bad_dataset(tmp.path());
    let db = Database::open(&tmp.path().join("data")).unwrap();
    let r = import_dir(&db, tmp.path(), 1 << 20);
    assert_eq!(
        r.bad_examples,
        vec![
            "./p.csv:3: `thirty' is not an int",
            "./p.csv:4: Storage Error: Out of range value.",
            "./p.csv:5: VID `toolongvid': Storage Error: The VID must be a 64-bit integer or a string fitting space vertex id length limit.",
            "./p.csv:6: `1990-13-45' is not a date",
            "./p.csv:7: no column 3 (the line has 3)",
            "./e.csv:2: rank `x' is not an int",
            "./e.csv:3: `' is not an int",
            "./e.csv:4: Storage Error: The not null field cannot be null.",
        ]
    );
    // Vertex rows read (`a` twice), edges, bad rows.
    assert_eq!((r.vertices, r.edges, r.bad_rows), (3, 2, 8));
    // The later line of a repeated VID wins, as with INSERT; defaults fill unmapped properties.
    assert_eq!(
        rows(&db, "FETCH PROP ON p \"a\", \"f\" YIELD id(vertex), p.name, p.age, p.born, p.score"),
        vec![
            r#"[String("a"), String("Ann2"), Int(31), Date(Date { year: 1990, month: 1, day: 2 }), Float(1.5)]"#,
            r#"[String("f"), String("Fay"), Null(Null), Date(Date { year: 2000, month: 2, day: 29 }), Float(1.5)]"#,
        ]
    );
    assert_eq!(rows(&db, "LOOKUP ON p WHERE p.age == 31 YIELD id(vertex)"), vec![r#"[String("a")]"#]);
    assert_eq!(
        rows(&db, "GO FROM \"f\" OVER e YIELD dst(edge), rank(edge), e.w"),
        vec![r#"[String("a"), Int(2), Int(7)]"#]
    );
    assert_eq!(rows(&db, "SHOW STATS").join(" "), rows(&db, "SUBMIT JOB STATS; SHOW STATS").join(" "));
}

#[test]
fn too_many_bad_rows_stop_the_import_consistently() {
    let tmp = tempfile::tempdir().unwrap();
    write_bad_dataset(tmp.path());
    let db = Database::open(&tmp.path().join("data")).unwrap();
    let opts = ImportOptions { max_bad_rows: 2, ..Default::default() };
    let e = import(&db, &tmp.path().join("config.yaml"), &opts).unwrap_err();
    assert_eq!(e.message, "import error: more than 2 bad rows; the last: ./p.csv:5: VID `toolongvid': Storage Error: The VID must be a 64-bit integer or a string fitting space vertex id length limit.");
    // Nothing of the stopped run was sent, and the load was finished: counts and indexes agree with the rows.
    assert_eq!(rows(&db, "LOOKUP ON p YIELD id(vertex)"), Vec::<String>::new());
    assert!(rows(&db, "SHOW STATS").contains(&r#"[String("Space"), String("vertices"), Int(0)]"#.to_string()));
    let missing = tmp.path().join("missing.yaml");
    let e = import(&db, &missing, &opts).unwrap_err();
    assert!(e.message.starts_with("load error: ") && e.message.contains("missing.yaml"), "{}", e.message);
}

/// A mapping that asks for what the importer does not do fails before anything is written, naming it.
#[test]
fn unsupported_column_types_and_vid_functions_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    write_bad_dataset(tmp.path());
    let db = Database::open(&tmp.path().join("data")).unwrap();
    let cases = [
        (
            "{ name: age, type: int, index: 2 }",
            "{ name: age, type: blob, index: 2 }",
            "load error: unsupported column type `blob'",
        ),
        (
            "vid: { index: 0, type: string }",
            "vid: { index: 0, type: string, function: md5 }",
            "load error: unsupported VID function `md5'",
        ),
    ];
    for (from, to, message) in cases {
        std::fs::write(tmp.path().join("config.yaml"), BAD_MAPPING.replacen(from, to, 1)).unwrap();
        let e = import(&db, &tmp.path().join("config.yaml"), &ImportOptions::default()).unwrap_err();
        assert_eq!(e.message, message);
        assert_eq!(rows(&db, "LOOKUP ON p YIELD id(vertex)"), Vec::<String>::new(), "nothing written");
    }
}
