//! Index properties that query files cannot express: after random writes every LOOKUP equals a scan of a reference
//! model (and SHOW STATS equals its counts), and an index built in the background while writers change its rows
//! ends up exact.

use quiver_common::rng::Rng;
use quiver_common::Value;
use quiver_query::{Params, Session};
use quiver_server::Database;
use std::collections::BTreeMap;

fn exec(db: &Database, s: &mut Session, stmt: &str) -> Vec<Vec<Value>> {
    match db.execute(s, stmt, &Params::new()) {
        Ok(ds) => ds.into_rows(),
        Err(e) => panic!("`{stmt}` failed: {}", e.message),
    }
}

fn ids(rows: Vec<Vec<Value>>) -> Vec<i64> {
    let mut v: Vec<i64> =
        rows.into_iter().map(|r| if let Value::Int(i) = r[0] { i } else { panic!("{r:?}") }).collect();
    v.sort();
    v
}

/// A tag row of the model: `a int, b double, c string`, each possibly NULL.
#[derive(Clone, Debug)]
struct Row {
    a: Option<i64>,
    b: Option<f64>,
    c: Option<String>,
}

fn lit<T: std::fmt::Display>(v: &Option<T>) -> String {
    v.as_ref().map(|x| x.to_string()).unwrap_or_else(|| "NULL".into())
}

fn random_row(r: &mut Rng) -> Row {
    let a = (r.below(8) != 0).then(|| r.below(41) as i64 - 20);
    let b = (r.below(8) != 0).then(|| (r.below(81) as f64 - 40.0) / 4.0);
    let words = ["", "a", "ab", "abc", "abd", "abcdef", "abcdeg", "b", "zz"];
    let c = (r.below(8) != 0).then(|| words[r.below(words.len() as u64) as usize].to_string());
    Row { a, b, c }
}

#[test]
fn lookups_match_a_reference_model_after_random_writes() {
    for seed in [7u64, 99, 4242] {
        let db = Database::in_memory();
        let mut s = Session::default();
        exec(&db, &mut s, "CREATE SPACE p(partition_num=5, vid_type=INT64); USE p; CREATE TAG t(a int, b double, c string); CREATE EDGE e(w int)");
        // Three indexes, one composite with a string prefix shorter than some values.
        exec(&db, &mut s, "CREATE TAG INDEX ia ON t(a); CREATE TAG INDEX ib ON t(b); CREATE TAG INDEX iac ON t(a, c(4)); CREATE EDGE INDEX ew ON e(w)");
        let mut r = Rng(seed);
        let mut model: BTreeMap<i64, Row> = BTreeMap::new();
        let mut edges: BTreeMap<(i64, i64), i64> = BTreeMap::new();
        for round in 0..30 {
            for _ in 0..15 {
                let vid = r.below(60) as i64;
                match r.below(7) {
                    0..=2 => {
                        let row = random_row(&mut r);
                        exec(
                            &db,
                            &mut s,
                            &format!(
                                "INSERT VERTEX t(a, b, c) VALUES {vid}:({}, {}, {})",
                                lit(&row.a),
                                lit(&row.b),
                                row.c.as_ref().map(|c| format!("{c:?}")).unwrap_or("NULL".into())
                            ),
                        );
                        model.insert(vid, row);
                    }
                    3 => {
                        let a = r.below(41) as i64 - 20;
                        exec(&db, &mut s, &format!("UPSERT VERTEX ON t {vid} SET a = {a}"));
                        model.entry(vid).or_insert(Row { a: None, b: None, c: None }).a = Some(a);
                    }
                    4 => {
                        exec(&db, &mut s, &format!("DELETE TAG t FROM {vid}"));
                        model.remove(&vid);
                    }
                    5 => {
                        exec(&db, &mut s, &format!("DELETE VERTEX {vid} WITH EDGE"));
                        model.remove(&vid);
                        edges.retain(|(x, y), _| *x != vid && *y != vid);
                    }
                    _ => {
                        let (dst, w) = (r.below(60) as i64, r.below(11) as i64 - 5);
                        if r.below(3) == 0 {
                            exec(&db, &mut s, &format!("DELETE EDGE e {vid}->{dst}"));
                            edges.remove(&(vid, dst));
                        } else {
                            exec(&db, &mut s, &format!("INSERT EDGE e(w) VALUES {vid}->{dst}:({w})"));
                            edges.insert((vid, dst), w);
                        }
                    }
                }
            }
            // Random predicates, each checked against a scan of the model.
            for _ in 0..6 {
                let k = r.below(41) as i64 - 20;
                let m = k + r.below(15) as i64;
                let x = (r.below(81) as f64 - 40.0) / 4.0;
                let words = ["a", "ab", "abc", "abcd", "abcde", "abcdef", "b"];
                let w = words[r.below(words.len() as u64) as usize];
                type Pred = Box<dyn Fn(&Row) -> bool>;
                let cases: Vec<(String, Pred)> = vec![
                    (format!("t.a == {k}"), Box::new(move |row: &Row| row.a == Some(k))),
                    (format!("t.a > {k}"), Box::new(move |row: &Row| row.a.is_some_and(|a| a > k))),
                    (
                        format!("t.a >= {k} AND t.a < {m}"),
                        Box::new(move |row: &Row| row.a.is_some_and(|a| a >= k && a < m)),
                    ),
                    (format!("t.b < {x:?}"), Box::new(move |row: &Row| row.b.is_some_and(|b| b < x))),
                    (
                        format!("t.b >= {x:?} OR t.a == {k}"),
                        Box::new(move |row: &Row| row.b.is_some_and(|b| b >= x) || row.a == Some(k)),
                    ),
                    (
                        format!("t.a == {k} AND t.c == {w:?}"),
                        Box::new(move |row: &Row| row.a == Some(k) && row.c.as_deref() == Some(w)),
                    ),
                    (
                        format!("t.a == {k} AND t.c STARTS WITH {w:?}"),
                        Box::new(move |row: &Row| {
                            row.a == Some(k) && row.c.as_deref().is_some_and(|c| c.starts_with(w))
                        }),
                    ),
                    (
                        format!("t.a IN [{k}, {m}] AND t.b != {x:?}"),
                        Box::new(move |row: &Row| {
                            (row.a == Some(k) || row.a == Some(m)) && row.b.is_some_and(|b| b != x)
                        }),
                    ),
                    (format!("t.a != {k}"), Box::new(move |row: &Row| row.a.is_some_and(|a| a != k))),
                ];
                for (cond, pred) in cases {
                    let got = ids(exec(&db, &mut s, &format!("LOOKUP ON t WHERE {cond} YIELD id(vertex)")));
                    let want: Vec<i64> = model.iter().filter(|(_, row)| pred(row)).map(|(v, _)| *v).collect();
                    assert_eq!(got, want, "seed {seed} round {round}: LOOKUP ON t WHERE {cond}");
                }
                let got = exec(&db, &mut s, &format!("LOOKUP ON e WHERE e.w <= {} YIELD src(edge), dst(edge)", k / 4));
                let mut got: Vec<(i64, i64)> = got
                    .into_iter()
                    .map(|r| match (&r[0], &r[1]) {
                        (Value::Int(a), Value::Int(b)) => (*a, *b),
                        _ => panic!("{r:?}"),
                    })
                    .collect();
                got.sort();
                let want: Vec<(i64, i64)> = edges.iter().filter(|(_, w)| **w <= k / 4).map(|(e, _)| *e).collect();
                assert_eq!(got, want, "seed {seed} round {round}: edge LOOKUP");
            }
            // Every row is in every index, NULLs included.
            assert_eq!(
                ids(exec(&db, &mut s, "LOOKUP ON t YIELD id(vertex)")),
                model.keys().copied().collect::<Vec<_>>()
            );
        }
        let stats = exec(&db, &mut s, "SHOW STATS");
        let count =
            |name: &str| stats.iter().find(|r| r[1] == Value::String(name.into())).map(|r| r[2].clone()).unwrap();
        assert_eq!(count("t"), Value::Int(model.len() as i64), "seed {seed}: tag rows");
        assert_eq!(count("e"), Value::Int(edges.len() as i64), "seed {seed}: edges");
        // A STATS job recounts and agrees.
        exec(&db, &mut s, "SUBMIT JOB STATS");
        quiver_tests::wait_jobs(&db, &mut s).unwrap();
        assert_eq!(
            exec(&db, &mut s, "SHOW STATS"),
            stats,
            "seed {seed}: the STATS job disagrees with the live counters"
        );
    }
}

#[test]
fn an_index_built_in_the_background_is_exact_despite_concurrent_writers() {
    let db = Database::in_memory();
    let mut s = Session::default();
    exec(&db, &mut s, "CREATE SPACE bg(partition_num=4, vid_type=INT64); USE bg; CREATE TAG t(a int)");
    const N: i64 = 30_000;
    for chunk in (0..N).collect::<Vec<_>>().chunks(2_000) {
        let values: Vec<String> = chunk.iter().map(|i| format!("{i}:({})", i % 100)).collect();
        exec(&db, &mut s, &format!("INSERT VERTEX t(a) VALUES {}", values.join(", ")));
    }
    // More rows than CREATE INDEX fills inline: a background job fills the index.
    exec(&db, &mut s, "CREATE TAG INDEX ia ON t(a)");
    let jobs = exec(&db, &mut s, "SHOW JOBS");
    assert_eq!(jobs.len(), 1, "{jobs:?}");
    assert_eq!(jobs[0][1], Value::String("REBUILD_TAG_INDEX".into()));
    // While it runs, writers move rows between values; the index must end up with exactly the final values.
    std::thread::scope(|scope| {
        for w in 0..2i64 {
            let db = &db;
            scope.spawn(move || {
                let mut s = Session { space: Some("bg".into()), ..Session::default() };
                for k in 0..300i64 {
                    let vid = (k * 97 + w * 13_331) % N;
                    let stmt = if k % 10 == 9 {
                        format!("DELETE VERTEX {vid}")
                    } else {
                        format!("UPDATE VERTEX ON t {vid} SET a = {}", 1000 + w)
                    };
                    // A row deleted by the other writer cannot be updated; that error is fine.
                    let _ = db.execute(&mut s, &stmt, &Params::new());
                }
            });
        }
        // A LOOKUP during the build either fails (the index is not ready) or, once ready, is complete.
        let r = db.execute(&mut s, "LOOKUP ON t WHERE t.a == 5 YIELD id(vertex)", &Params::new());
        if let Err(e) = r {
            assert!(e.message.contains("not finished building"), "{}", e.message);
        }
    });
    quiver_tests::wait_jobs(&db, &mut s).unwrap();
    let status = exec(&db, &mut s, "SHOW JOBS");
    assert_eq!(status[0][2], Value::String("FINISHED".into()), "{status:?}");
    // The reference: every row read by FETCH.
    let all: Vec<String> = (0..N).map(|i| i.to_string()).collect();
    let rows = exec(&db, &mut s, &format!("FETCH PROP ON t {} YIELD id(vertex), t.a", all.join(",")));
    let mut by_value: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
    for r in &rows {
        if let (Value::Int(v), Value::Int(a)) = (&r[0], &r[1]) {
            by_value.entry(*a).or_default().push(*v);
        }
    }
    assert!(by_value.contains_key(&1000) && by_value.contains_key(&1001), "the writers ran");
    for (a, mut vids) in by_value {
        vids.sort();
        assert_eq!(
            ids(exec(&db, &mut s, &format!("LOOKUP ON t WHERE t.a == {a} YIELD id(vertex)"))),
            vids,
            "value {a}"
        );
    }
    let total = ids(exec(&db, &mut s, "LOOKUP ON t YIELD id(vertex)"));
    assert_eq!(total.len(), rows.len());
}

#[test]
fn rows_vanish_the_second_they_expire_and_a_compact_job_removes_them_from_rocksdb() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path()).unwrap();
    let mut s = Session::default();
    exec(&db, &mut s, "CREATE SPACE t(partition_num=2, vid_type=INT64); USE t; CREATE TAG a(ts int, v int) TTL_DURATION = 2, TTL_COL = \"ts\"; CREATE TAG INDEX av ON a(v)");
    let values: Vec<String> = (0..500).map(|i| format!("{i}:(timestamp(), {i})")).collect();
    exec(&db, &mut s, &format!("INSERT VERTEX a(ts, v) VALUES {}", values.join(", ")));
    exec(&db, &mut s, "INSERT VERTEX a(ts, v) VALUES 1000:(NULL, 1000)");
    let count = |db: &Database, s: &mut Session, q: &str| exec(db, s, q).len();
    assert_eq!(count(&db, &mut s, "LOOKUP ON a YIELD id(vertex)"), 501);
    // Expiry is `ts + 2 < now`: three seconds later every row with a timestamp has expired.
    std::thread::sleep(std::time::Duration::from_millis(3_100));
    assert_eq!(count(&db, &mut s, "LOOKUP ON a YIELD id(vertex)"), 1, "only the row whose TTL column is NULL is left");
    assert_eq!(count(&db, &mut s, "FETCH PROP ON a 1, 2, 3, 1000 YIELD id(vertex)"), 1);
    let stored = |db: &Database, s: &mut Session| {
        exec(db, s, "SHOW STATS").into_iter().find(|r| r[1] == Value::String("a".into())).map(|r| r[2].clone()).unwrap()
    };
    assert_eq!(stored(&db, &mut s), Value::Int(501), "stored until compaction");
    exec(&db, &mut s, "SUBMIT JOB COMPACT");
    quiver_tests::wait_jobs(&db, &mut s).unwrap();
    assert_eq!(stored(&db, &mut s), Value::Int(1), "the compaction filter dropped the expired rows");
    // Gone from the engine, not only hidden: turning the TTL off shows nothing of them.
    // (A tag's TTL changes only while it has no index, as in NebulaGraph.)
    exec(&db, &mut s, "DROP TAG INDEX av; ALTER TAG a TTL_DURATION = 0");
    assert_eq!(count(&db, &mut s, "FETCH PROP ON a 1, 2, 3, 1000 YIELD id(vertex)"), 1);
    drop(db);
    let db = Database::open(dir.path()).unwrap();
    let mut s = Session { space: Some("t".into()), ..Session::default() };
    assert_eq!(stored(&db, &mut s), Value::Int(1), "the recount is durable");
}

#[test]
fn a_stopped_rebuild_leaves_the_index_unused_until_recovered() {
    let db = Database::in_memory();
    let mut s = Session::default();
    exec(
        &db,
        &mut s,
        "CREATE SPACE sj(partition_num=2, vid_type=INT64); USE sj; CREATE TAG t(a int); CREATE TAG INDEX ia ON t(a)",
    );
    for chunk in (0..40_000i64).collect::<Vec<_>>().chunks(4_000) {
        let values: Vec<String> = chunk.iter().map(|i| format!("{i}:({})", i % 10)).collect();
        exec(&db, &mut s, &format!("INSERT VERTEX t(a) VALUES {}", values.join(", ")));
    }
    let id = exec(&db, &mut s, "REBUILD TAG INDEX ia")[0][0].clone();
    exec(&db, &mut s, &format!("STOP JOB {id}"));
    quiver_tests::wait_jobs(&db, &mut s).unwrap();
    let status = exec(&db, &mut s, "SHOW JOBS")[0][2].clone();
    if status == Value::String("STOPPED".into()) {
        let e = db.execute(&mut s, "LOOKUP ON t WHERE t.a == 3 YIELD id(vertex)", &Params::new()).unwrap_err();
        assert!(e.message.contains("ia not finished building"), "{}", e.message);
        // Ids that are not among the failed and stopped jobs are passed over, as NebulaGraph's JobManager does.
        let Value::Int(n) = id else { panic!("a job id: {id:?}") };
        let other = n + 1;
        assert_eq!(exec(&db, &mut s, &format!("RECOVER JOB {other}")), vec![vec![Value::Int(0)]]);
        assert_eq!(exec(&db, &mut s, &format!("RECOVER JOB {other}, {id}")), vec![vec![Value::Int(1)]]);
        quiver_tests::wait_jobs(&db, &mut s).unwrap();
    }
    assert_eq!(exec(&db, &mut s, "SHOW JOBS")[0][2], Value::String("FINISHED".into()));
    assert_eq!(exec(&db, &mut s, "LOOKUP ON t WHERE t.a == 3 YIELD id(vertex)").len(), 4_000);
}

#[test]
fn dropping_an_index_removes_its_entries() {
    let kv = std::sync::Arc::new(quiver_kv::MemEngine::new());
    let db = Database::with_engine(kv.clone()).unwrap();
    let mut s = Session::default();
    exec(&db, &mut s, "CREATE SPACE d(partition_num=3, vid_type=INT64); USE d; CREATE TAG t(a int); CREATE TAG INDEX ia ON t(a); CREATE TAG INDEX ia2 ON t()");
    exec(&db, &mut s, "INSERT VERTEX t(a) VALUES 1:(1), 2:(2), 3:(3)");
    let entries = || {
        let mut n = 0;
        // Index entries: kind 0x03 after `space_id | part` (space 1 is the first space of a fresh database).
        for part in 1..=3u32 {
            let mut p = 1u32.to_be_bytes().to_vec();
            p.extend_from_slice(&part.to_be_bytes());
            p.push(0x03);
            quiver_kv::KvEngine::scan_prefix(kv.as_ref(), &p, &mut |_, _| {
                n += 1;
                true
            })
            .unwrap();
        }
        n
    };
    assert_eq!(entries(), 6);
    exec(&db, &mut s, "DROP TAG INDEX ia");
    assert_eq!(entries(), 3);
    exec(&db, &mut s, "DROP TAG INDEX ia2");
    assert_eq!(entries(), 0);
}

#[test]
fn a_snapshot_is_a_data_directory_of_its_moment() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path()).unwrap();
    let mut s = Session::default();
    exec(&db, &mut s, "CREATE SPACE snap(vid_type=INT64); USE snap; CREATE TAG t(v int); CREATE TAG INDEX tv ON t(v)");
    exec(&db, &mut s, "INSERT VERTEX t(v) VALUES 1:(10), 2:(20)");
    assert!(exec(&db, &mut s, "SHOW SNAPSHOTS").is_empty());
    exec(&db, &mut s, "CREATE SNAPSHOT");
    exec(&db, &mut s, "INSERT VERTEX t(v) VALUES 3:(30); CREATE TAG later()");
    let shown = exec(&db, &mut s, "SHOW SNAPSHOTS");
    assert_eq!(shown.len(), 1);
    let Value::String(name) = &shown[0][0] else { panic!("{shown:?}") };
    assert!(name.starts_with("SNAPSHOT_") && name.len() == "SNAPSHOT_2026_11_24_10_00_00".len(), "{name}");
    assert_eq!(shown[0][1], Value::String("VALID".into()));
    // Restoring is starting a server on the snapshot as a data directory's `kv`.
    let restored = tempfile::tempdir().unwrap();
    let copy = dir.path().join("snapshots").join(name.as_str());
    std::fs::rename(&copy, restored.path().join("kv")).unwrap();
    {
        let old = Database::open(restored.path()).unwrap();
        let mut s = Session { space: Some("snap".into()), ..Session::default() };
        assert_eq!(exec(&old, &mut s, "LOOKUP ON t YIELD id(vertex) AS id | ORDER BY $-.id").len(), 2);
        assert_eq!(exec(&old, &mut s, "SHOW TAGS"), vec![vec![Value::String("t".into())]], "the catalog of its moment");
    }
    // The snapshot moved away is no longer listed, and dropping an unknown one is NebulaGraph's error.
    assert!(exec(&db, &mut s, "SHOW SNAPSHOTS").is_empty());
    let err = db.execute(&mut s, &format!("DROP SNAPSHOT {name}"), &quiver_query::Params::new()).unwrap_err();
    assert_eq!(err.message, "Snapshot not found!");
    exec(&db, &mut s, "CREATE SNAPSHOT");
    let name = exec(&db, &mut s, "SHOW SNAPSHOTS")[0][0].clone();
    let Value::String(name) = name else { panic!() };
    exec(&db, &mut s, &format!("DROP SNAPSHOT {name}"));
    assert!(exec(&db, &mut s, "SHOW SNAPSHOTS").is_empty());
    assert_eq!(exec(&db, &mut s, "LOOKUP ON t YIELD id(vertex)").len(), 3, "the database itself is untouched");
}
