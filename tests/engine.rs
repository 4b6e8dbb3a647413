//! Engine properties that query files cannot express: multi-hop GO against a reference traversal on random
//! graphs (with every optimizer rule on and off), and the per-query time and memory bounds.

use quiver_common::budget::Limits;
use quiver_common::rng::Rng;
use quiver_common::Value;
use quiver_query::{Params, Session};
use quiver_server::Database;
use std::collections::{HashMap, HashSet};
use std::time::Duration;

fn exec(db: &Database, s: &mut Session, stmt: &str) -> Vec<Vec<Value>> {
    match db.execute(s, stmt, &Params::new()) {
        Ok(ds) => ds.into_rows(),
        Err(e) => panic!("`{stmt}` failed: {}", e.message),
    }
}

/// Edges `(type, src, rank, dst)`, unique by all four.
type Edges = Vec<(usize, i64, i64, i64)>;

/// NebulaGraph's GO: from the start vertices given (the caller makes FROM's a set), each next frontier the distinct
/// far ends, the last step's edges.
fn reference_go(edges: &Edges, starts: &[i64], steps: u32, types: &[usize], dir: &str) -> Vec<i64> {
    let walk = |v: i64| -> Vec<i64> {
        let mut out = Vec::new();
        for &(t, s, _, d) in edges {
            if !types.contains(&t) {
                continue;
            }
            if dir != "REVERSELY" && s == v {
                out.push(d);
            }
            if !dir.is_empty() && d == v {
                out.push(s);
            }
        }
        out
    };
    let mut frontier: Vec<i64> = starts.to_vec();
    for step in 1..=steps {
        let reached: Vec<i64> = frontier.iter().flat_map(|v| walk(*v)).collect();
        if step == steps {
            return reached;
        }
        let mut seen = std::collections::HashSet::new();
        frontier = reached.into_iter().filter(|v| seen.insert(*v)).collect();
    }
    Vec::new()
}

fn sorted_ints(rows: Vec<Vec<Value>>) -> Vec<i64> {
    let mut v: Vec<i64> =
        rows.into_iter().map(|r| if let Value::Int(i) = r[0] { i } else { panic!("{:?}", r) }).collect();
    v.sort();
    v
}

#[test]
fn multi_hop_go_matches_a_reference_traversal_on_random_graphs() {
    for seed in [3u64, 17, 2024] {
        let db = Database::in_memory();
        let mut s = Session::default();
        exec(
            &db,
            &mut s,
            "CREATE SPACE g(vid_type = INT64, partition_num = 3); USE g; CREATE EDGE e0(w int); CREATE EDGE e1(w int)",
        );
        let mut rng = Rng(seed);
        let n = 30;
        let mut edges: Edges = Vec::new();
        for _ in 0..120 {
            let e = (rng.below(2) as usize, rng.below(n) as i64, rng.below(2) as i64, rng.below(n) as i64);
            if !edges.contains(&e) {
                edges.push(e);
            }
        }
        for (t, src, rank, dst) in &edges {
            exec(&db, &mut s, &format!("INSERT EDGE e{t}(w) VALUES {src}->{dst}@{rank}:({})", src + dst));
        }
        for case in 0..25 {
            let steps = 1 + rng.below(3) as u32;
            let starts: Vec<i64> = (0..1 + rng.below(3)).map(|_| rng.below(n) as i64).collect();
            let (types, over) = match rng.below(3) {
                0 => (vec![0], "e0"),
                1 => (vec![1], "e1"),
                _ => (vec![0, 1], "e0, e1"),
            };
            let dir = ["", "REVERSELY", "BIDIRECT"][rng.below(3) as usize];
            let from = starts.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(", ");
            // The starts written in FROM are a set (a repeated one walks once); rows piped in are walked each.
            let starts: Vec<i64> = {
                let mut seen = std::collections::HashSet::new();
                starts.into_iter().filter(|v| seen.insert(*v)).collect()
            };
            let go = format!("GO {steps} STEPS FROM {from} OVER {over} {dir} YIELD id($$) AS d");
            let want = {
                let mut w = reference_go(&edges, &starts, steps, &types, dir);
                w.sort();
                w
            };
            let piped = format!(
                "GO FROM {from} OVER {over} {dir} YIELD id($$) AS d | GO FROM $-.d OVER {over} {dir} YIELD id($$) AS d"
            );
            let want_piped = {
                let first = reference_go(&edges, &starts, 1, &types, dir);
                let mut w = reference_go(&edges, &first, 1, &types, dir);
                w.sort();
                w
            };
            for rules in [vec![], quiver_query::optimizer::rule_names().iter().map(|r| r.to_string()).collect()] {
                s.disabled_rules = rules;
                let ctx = format!("seed {seed} case {case}: {go} (rules off: {:?})", s.disabled_rules);
                assert_eq!(sorted_ints(exec(&db, &mut s, &go)), want, "{ctx}");
                let count = exec(&db, &mut s, &format!("{go} | YIELD COUNT(*)"));
                assert_eq!(count, vec![vec![Value::Int(want.len() as i64)]], "{ctx} | YIELD COUNT(*)");
                assert_eq!(sorted_ints(exec(&db, &mut s, &piped)), want_piped, "{ctx}; {piped}");
                let count = exec(&db, &mut s, &format!("{piped} | YIELD COUNT(*)"));
                assert_eq!(count, vec![vec![Value::Int(want_piped.len() as i64)]], "{ctx}; {piped} | YIELD COUNT(*)");
                let grouped = exec(&db, &mut s, &format!("{piped} | GROUP BY $-.d YIELD $-.d AS d, COUNT(*) AS n"));
                let got: HashMap<i64, i64> = grouped
                    .iter()
                    .map(|r| match (&r[0], &r[1]) {
                        (Value::Int(d), Value::Int(c)) => (*d, *c),
                        other => panic!("{other:?}"),
                    })
                    .collect();
                let mut expect: HashMap<i64, i64> = HashMap::new();
                want_piped.iter().for_each(|d| *expect.entry(*d).or_default() += 1);
                assert_eq!(got, expect, "{ctx}; grouped");
                // ORDER BY ... LIMIT over the GO (kept inside the GO by `push_topn_into_go`): the same rows, in
                // the same order, as a TopN over every row; the keys those of a sort of the reference.
                for (distinct, desc) in [("", ""), ("DISTINCT", "DESC"), ("DISTINCT", ""), ("", "DESC")] {
                    let (offset, count) = (rng.below(3), 1 + rng.below(6));
                    let top = format!("GO {steps} STEPS FROM {from} OVER {over} {dir} YIELD {distinct} id($$) % 4 AS k, id($$) AS d | ORDER BY $-.k {desc} | LIMIT {offset}, {count}");
                    let got = exec(&db, &mut s, &top);
                    let rules = std::mem::replace(&mut s.disabled_rules, vec!["push_topn_into_go".into()]);
                    assert_eq!(got, exec(&db, &mut s, &top), "{ctx}; {top}");
                    s.disabled_rules = rules;
                    let mut ds = want.clone();
                    if !distinct.is_empty() {
                        ds.dedup();
                    }
                    let mut keys: Vec<i64> = ds.iter().map(|d| d % 4).collect();
                    keys.sort_by(|a, b| if desc.is_empty() { a.cmp(b) } else { b.cmp(a) });
                    let keys: Vec<i64> = keys.into_iter().skip(offset as usize).take(count as usize).collect();
                    let got_keys: Vec<i64> =
                        got.iter().map(|r| if let Value::Int(k) = r[0] { k } else { panic!("{r:?}") }).collect();
                    assert_eq!(got_keys, keys, "{ctx}; {top}");
                }
            }
            s.disabled_rules.clear();
        }
    }
}

fn nba() -> Database {
    let db = Database::in_memory();
    quiver_server::loader::load(&db, &quiver_tests::datasets_dir().join("nba")).expect("nba loads");
    db
}

#[test]
fn a_query_past_its_memory_bound_fails_alone() {
    let db = nba();
    db.engine.set_limits(Limits { timeout: Duration::from_secs(60), memory_bytes: 4096 });
    let mut s = Session { space: Some("nba".into()), ..Session::default() };
    let e = db
        .execute(
            &mut s,
            "GO 3 STEPS FROM \"Tim Duncan\" OVER like, serve BIDIRECT YIELD $$.player.name AS n",
            &Params::new(),
        )
        .unwrap_err();
    assert_eq!(e.message, "GraphMemoryExceeded: (-2600) the query needed more than its memory bound of 4096 bytes");
    assert_eq!(e.code.as_i32(), -2600);
    // The next query has its own budget.
    assert_eq!(exec(&db, &mut s, "YIELD 1 AS one"), vec![vec![Value::Int(1)]]);
}

#[test]
fn a_query_past_its_deadline_fails_alone() {
    let db = nba();
    db.engine.set_limits(Limits { timeout: Duration::ZERO, memory_bytes: 1 << 30 });
    let mut s = Session { space: Some("nba".into()), ..Session::default() };
    let e = db.execute(&mut s, "GO FROM \"Tim Duncan\" OVER like YIELD like._dst", &Params::new()).unwrap_err();
    assert_eq!(e.message, "Execution had been killed: the query ran longer than its timeout of 0 ms");
    db.engine.set_limits(Limits::default());
    assert_eq!(
        exec(&db, &mut s, "GO FROM \"Tim Duncan\" OVER serve YIELD serve._dst"),
        vec![vec![Value::String("Spurs".into())]]
    );
}

/// Billions of steps: a walk that runs out of vertices ends at once; one around a cycle (Tim Duncan and Tony Parker
/// like each other) stops at the deadline, fused into a count or not.
#[test]
fn billions_of_steps_end_or_stop_at_the_deadline() {
    let db = nba();
    db.engine.set_limits(Limits { timeout: Duration::from_millis(300), memory_bytes: 1 << 30 });
    let mut s = Session { space: Some("nba".into()), ..Session::default() };
    let count = "GO 4000000000 STEPS FROM \"Spurs\" OVER serve YIELD serve._dst | YIELD COUNT(*) AS n";
    let rows = "GO 4000000000 STEPS FROM \"Spurs\" OVER serve YIELD serve._dst AS d";
    for rules in [vec![], vec!["fuse_count_traversal".to_string()]] {
        s.disabled_rules = rules;
        let started = std::time::Instant::now();
        assert_eq!(exec(&db, &mut s, count), vec![vec![Value::Int(0)]]);
        assert_eq!(exec(&db, &mut s, rows), Vec::<Vec<Value>>::new());
        let e = db
            .execute(
                &mut s,
                "GO 4000000000 STEPS FROM \"Tim Duncan\" OVER like YIELD like._dst | YIELD COUNT(*) AS n",
                &Params::new(),
            )
            .unwrap_err();
        assert_eq!(e.message, "Execution had been killed: the query ran longer than its timeout of 300 ms");
        assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    }
}

/// An expression whose loop takes quadratic time (each `reduce()` step copies the list built so far) stops at the
/// query's deadline, not when it is done.
#[test]
fn a_quadratic_reduce_stops_at_the_deadline() {
    let db = Database::in_memory();
    db.engine.set_limits(Limits { timeout: Duration::from_millis(300), memory_bytes: 1 << 30 });
    let mut s = Session::default();
    let started = std::time::Instant::now();
    let e = db
        .execute(&mut s, "YIELD size(reduce(acc = [], x IN range(1, 1000000) | acc + [x])) AS n", &Params::new())
        .unwrap_err();
    assert_eq!(e.message, "Execution had been killed: the query ran longer than its timeout of 300 ms");
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    db.engine.set_limits(Limits::default());
    assert_eq!(
        exec(&db, &mut s, "YIELD size(reduce(acc = [], x IN range(1, 100) | acc + [x])) AS n"),
        vec![vec![Value::Int(100)]]
    );
}

#[test]
fn profile_counts_rows_per_operator() {
    let db = nba();
    let mut s = Session { space: Some("nba".into()), ..Session::default() };
    let ds = db
        .execute(&mut s, "PROFILE GO FROM \"Tony Parker\" OVER like YIELD like._dst AS d | LIMIT 1", &Params::new())
        .unwrap();
    assert_eq!(ds.rows().collect::<Vec<_>>(), vec![vec![Value::str("LaMarcus Aldridge")]]);
    let plan = ds.plan.expect("PROFILE returns the plan");
    let rows: Vec<(String, u64)> =
        plan.nodes.iter().map(|n| (n.name.clone(), n.profile.expect("profiled").rows)).collect();
    // The limit is pushed into the GO: storage returns one edge of Tony Parker's three.
    assert_eq!(rows, vec![("Limit".to_string(), 1), ("Go".to_string(), 1)]);
    s.disabled_rules = vec!["push_limit_into_go".into()];
    let ds = db
        .execute(&mut s, "PROFILE GO FROM \"Tony Parker\" OVER like YIELD like._dst AS d | LIMIT 1", &Params::new())
        .unwrap();
    let rows: Vec<u64> = ds.plan.unwrap().nodes.iter().map(|n| n.profile.unwrap().rows).collect();
    assert_eq!(rows, vec![1, 3]);
}

/// A fan-out of 5,000: vertex 0 points at 1..=5000, each of those at itself + 100,000.
fn fan_out() -> (Database, Session) {
    let db = Database::in_memory();
    let mut s = Session::default();
    exec(&db, &mut s, "CREATE SPACE fan(vid_type = INT64); USE fan; CREATE EDGE e(w int)");
    let first: Vec<String> = (1..=5000).map(|i| format!("0->{i}:({i})")).collect();
    let second: Vec<String> = (1..=5000).map(|i| format!("{i}->{}:({i})", i + 100_000)).collect();
    exec(&db, &mut s, &format!("INSERT EDGE e(w) VALUES {}", first.join(", ")));
    exec(&db, &mut s, &format!("INSERT EDGE e(w) VALUES {}", second.join(", ")));
    (db, s)
}

fn profile_rows(db: &Database, s: &mut Session, stmt: &str) -> (Vec<Vec<Value>>, Vec<(String, u64)>) {
    let mut ds = db.execute(s, &format!("PROFILE {stmt}"), &Params::new()).unwrap();
    let plan = ds.plan.take().expect("PROFILE returns the plan");
    (ds.rows().collect(), plan.nodes.iter().map(|n| (n.name.clone(), n.profile.expect("profiled").rows)).collect())
}

#[test]
fn limit_stops_the_operators_below_it() {
    let (db, mut s) = fan_out();
    let stmt =
        "GO FROM 0 OVER e YIELD dst(edge) AS d | GO FROM $-.d OVER e YIELD dst(edge) AS x | YIELD $-.x AS x | LIMIT 3";
    let (rows, ops) = profile_rows(&db, &mut s, stmt);
    assert_eq!(rows.len(), 3);
    assert!(rows.iter().all(|r| matches!(r[0], Value::Int(x) if (100_001..=105_000).contains(&x))), "{rows:?}");
    // Only the first batch of 1,024 of the first GO's 5,000 rows was pulled, so the second GO expanded 1,024 starts
    // instead of 5,000 and the projection saw 1,024 rows.
    let want: Vec<(String, u64)> = [("Limit", 3), ("Project", 1024), ("Go", 1024), ("Go", 1024)]
        .iter()
        .map(|(n, r)| (n.to_string(), *r))
        .collect();
    assert_eq!(ops, want);
    // Without the LIMIT every row flows through, across batch boundaries, and nothing is lost or repeated.
    let all = exec(
        &db,
        &mut s,
        "GO FROM 0 OVER e YIELD dst(edge) AS d | GO FROM $-.d OVER e YIELD dst(edge) AS x | YIELD $-.x - 100000 AS i",
    );
    assert_eq!(sorted_ints(all), (1..=5000).collect::<Vec<i64>>());
}

/// A MATCH that ends in a count holds no more rows than it returns (issue 19): the count runs in storage, so the
/// operators under it see only the start vertex.
#[test]
fn a_counted_match_holds_no_more_rows_than_it_returns() {
    let (db, mut s) = fan_out();
    let vids: Vec<String> = (0..=5000).chain(100_001..=105_000).map(|i| format!("{i}:()")).collect();
    exec(&db, &mut s, &format!("CREATE TAG t(); INSERT VERTEX t() VALUES {}", vids.join(", ")));
    let count = "MATCH (a:t)-[:e]->(b)-[:e]->(c) WHERE id(a) == 0 RETURN count(*) AS n";
    let (rows, ops) = profile_rows(&db, &mut s, count);
    assert_eq!(rows, vec![vec![Value::Int(5000)]]);
    let named = |ops: &[(&str, u64)]| ops.iter().map(|(n, r)| (n.to_string(), *r)).collect::<Vec<_>>();
    assert_eq!(ops, named(&[("PathCount", 1), ("GetVertices", 1), ("Argument", 1)]));
    let grouped = "MATCH (a:t)-[:e]->(b)-[:e]->(c) WHERE id(a) == 0 RETURN id(c) AS c, count(*) AS n";
    let (rows, ops) = profile_rows(&db, &mut s, grouped);
    assert_eq!(rows.len(), 5000);
    assert!(rows.iter().all(|r| r[1] == Value::Int(1)), "{rows:?}");
    assert_eq!(ops, named(&[("PathGroupCount", 5000), ("GetVertices", 1), ("Argument", 1)]));
    // Every walk out, back over the same edge and out again reuses an edge: no path, and none is enumerated.
    let back = "MATCH (a:t)-[:e]->(b)<-[:e]-(x)-[:e]->(y) WHERE id(a) == 0 RETURN count(*) AS n";
    let (rows, ops) = profile_rows(&db, &mut s, back);
    assert_eq!(rows, vec![vec![Value::Int(0)]]);
    assert_eq!(ops, named(&[("PathCount", 1), ("GetVertices", 1), ("Argument", 1)]));
    // Without the rule the paths are rows.
    s.disabled_rules = vec!["fuse_match_count".into()];
    let (rows, ops) = profile_rows(&db, &mut s, count);
    assert_eq!(rows, vec![vec![Value::Int(5000)]]);
    assert_eq!(ops.iter().map(|(_, r)| *r).max(), Some(5000), "{ops:?}");
}

/// A MATCH whose rows read only the last node computes them once per far end (`fuse_match_rows`): 5,000 paths that
/// all end at one vertex are one row until `Repeat` copies it, and the far end is read once.
#[test]
fn match_rows_of_the_last_node_are_computed_once_per_far_end() {
    let (db, mut s) = fan_out();
    let converge: Vec<String> = (100_001..=105_000).map(|i| format!("{i}->7:({i})")).collect();
    let vids: Vec<String> = (0..=5000).chain(100_001..=105_000).chain([7]).map(|i| format!("{i}:({i}0)")).collect();
    exec(&db, &mut s, &format!("CREATE TAG t(x int); INSERT VERTEX t(x) VALUES {}", vids.join(", ")));
    exec(&db, &mut s, &format!("INSERT EDGE e(w) VALUES {}", converge.join(", ")));
    let stmt = "MATCH (a)-[:e]->(b)-[:e]->(c)-[:e]->(d) WHERE id(a) == 0 RETURN id(d) AS d, d.t.x AS x";
    let (rows, ops) = profile_rows(&db, &mut s, stmt);
    assert_eq!(rows.len(), 5000);
    assert!(rows.iter().all(|r| r == &vec![Value::Int(7), Value::Int(70)]), "{rows:?}");
    let named = |ops: &[(&str, u64)]| ops.iter().map(|(n, r)| (n.to_string(), *r)).collect::<Vec<_>>();
    let want = [("Repeat", 5000), ("Project", 1), ("AppendVertices", 1), ("PathGroupCount", 1), ("GetVertices", 1)];
    assert_eq!(ops[..5], named(&want)[..], "{ops:?}");
    // Without the rule every path is a row through every operator above the walk.
    s.disabled_rules = vec!["fuse_match_rows".into()];
    let (again, ops) = profile_rows(&db, &mut s, stmt);
    assert_eq!(again, rows);
    assert_eq!(ops.iter().find(|(n, _)| n == "Project").map(|(_, r)| *r), Some(5000), "{ops:?}");
}

#[test]
fn a_step_reads_its_frontier_in_batches_and_a_storage_limit_spans_them() {
    let (db, mut s) = fan_out();
    // The second step's frontier (5,000 vertices) is read in two batches; `e.w + 0` keeps the GO unfused.
    let all =
        exec(&db, &mut s, "GO 2 STEPS FROM 0 OVER e YIELD dst(edge) AS x, e.w + 0 AS w | YIELD $-.x - 100000 AS i");
    assert_eq!(sorted_ints(all), (1..=5000).collect::<Vec<i64>>());
    // A limit pushed into storage counts across the batches.
    let (rows, ops) =
        profile_rows(&db, &mut s, "GO 2 STEPS FROM 0 OVER e YIELD dst(edge) AS x, e.w + 0 AS w | LIMIT 4500");
    assert_eq!(rows.len(), 4500);
    assert_eq!(ops, vec![("Limit".to_string(), 4500), ("Go".to_string(), 4500)]);
}

#[test]
fn top_n_reads_in_batches_and_keeps_input_order_among_ties() {
    let (db, mut s) = fan_out();
    // Keys tie in thirds (w % 3); the first rows of the top group in input order win.
    let stmt = "GO FROM 0 OVER e YIELD dst(edge) AS d, e.w % 3 AS k | ORDER BY $-.k DESC | LIMIT 2, 3";
    let streamed = exec(&db, &mut s, stmt);
    s.disabled_rules = vec!["sort_limit_to_topn".into()];
    let sorted = exec(&db, &mut s, stmt);
    assert_eq!(streamed, sorted);
    assert_eq!(streamed.len(), 3);
    assert!(streamed.iter().all(|r| r[1] == Value::Int(2)), "{streamed:?}");
}

/// `SAMPLE [..]` draws a step's edges at random (every edge turns up over repeated runs), `LIMIT [..]` keeps the
/// same first ones every time.
#[test]
fn sample_draws_edges_at_random_and_limit_keeps_the_first() {
    let db = Database::in_memory();
    let mut s = Session::default();
    for stmt in [
        "CREATE SPACE t(vid_type=INT64)",
        "USE t",
        "CREATE EDGE e(w int)",
        "INSERT EDGE e(w) VALUES 1->10:(1), 1->11:(1), 1->12:(1)",
    ] {
        db.execute(&mut s, stmt, &Params::new()).unwrap();
    }
    let drawn = |q: &str, s: &mut Session| -> HashSet<Vec<Vec<Value>>> { (0..60).map(|_| exec(&db, s, q)).collect() };
    let sampled = drawn("GO FROM 1 OVER e YIELD dst(edge) AS d SAMPLE [1]", &mut s);
    assert_eq!(
        sampled,
        [10, 11, 12].into_iter().map(|d| vec![vec![Value::Int(d)]]).collect(),
        "60 draws of 1 edge in 3 give each"
    );
    let limited = drawn("GO FROM 1 OVER e YIELD dst(edge) AS d LIMIT [1]", &mut s);
    assert_eq!(limited.len(), 1);
}

/// FIND ALL PATH on a dense graph (400 vertices, each linked to the next 20) has more paths than any bound holds: it
/// stops at the per-query memory bound with NebulaGraph's error while another session keeps answering, and the same
/// search under `| LIMIT` ends once it has its paths.
#[test]
fn find_all_path_on_a_dense_graph_stops_at_the_memory_bound() {
    let db = Database::in_memory();
    let mut s = Session::default();
    exec(&db, &mut s, "CREATE SPACE dense(vid_type = INT64); USE dense; CREATE EDGE e()");
    let edges: Vec<String> =
        (0..400).flat_map(|v| (1..=20).map(move |k| format!("{v}->{}:()", (v + k) % 400))).collect();
    for chunk in edges.chunks(2000) {
        exec(&db, &mut s, &format!("INSERT EDGE e() VALUES {}", chunk.join(", ")));
    }
    db.engine.set_limits(Limits { timeout: Duration::from_secs(120), memory_bytes: 64 << 20 });
    let db = std::sync::Arc::new(db);
    let worker = {
        let db = db.clone();
        let mut s = s.clone();
        std::thread::Builder::new()
            .stack_size(quiver_common::limits::QUERY_THREAD_STACK_BYTES)
            .spawn(move || {
                db.execute(
                    &mut s,
                    "FIND ALL PATH FROM 0 TO 1 OVER e BIDIRECT UPTO 12 STEPS YIELD path AS p",
                    &Params::new(),
                )
                .map(|d| d.len())
            })
            .unwrap()
    };
    let mut other = Session { space: Some("dense".into()), ..Session::default() };
    while !worker.is_finished() {
        assert_eq!(
            exec(&db, &mut other, "GO FROM 0 OVER e YIELD dst(edge) AS d | YIELD count(*) AS n"),
            vec![vec![Value::Int(20)]]
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let e = worker.join().unwrap().unwrap_err();
    assert!(e.message.starts_with("GraphMemoryExceeded: (-2600)"), "{}", e.message);
    assert_eq!(e.code.as_i32(), -2600);
    let rows =
        exec(&db, &mut s, "FIND ALL PATH FROM 0 TO 1 OVER e BIDIRECT UPTO 12 STEPS YIELD path AS p | LIMIT 1000");
    assert_eq!(rows.len(), 1000);
}

/// A shortest path 20,000 steps long (a chain) comes back whole: building it takes no stack per step.
#[test]
fn a_very_long_shortest_path_is_built_without_recursion() {
    let db = Database::in_memory();
    let mut s = Session::default();
    exec(&db, &mut s, "CREATE SPACE chain(vid_type = INT64); USE chain; CREATE EDGE e()");
    let edges: Vec<String> = (0..20_000).map(|v| format!("{v}->{}:()", v + 1)).collect();
    for chunk in edges.chunks(2000) {
        exec(&db, &mut s, &format!("INSERT EDGE e() VALUES {}", chunk.join(", ")));
    }
    for kind in ["SHORTEST", "ALL"] {
        let rows = exec(
            &db,
            &mut s,
            &format!(
                "FIND {kind} PATH FROM 0 TO 20000 OVER e UPTO 30000 STEPS YIELD path AS p | YIELD length($-.p) AS n"
            ),
        );
        assert_eq!(rows, vec![vec![Value::Int(20_000)]], "{kind}");
    }
}
