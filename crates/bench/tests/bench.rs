//! The benchmark's own correctness: generated data is deterministic and has the promised shape, and each
//! workload's answer (the digest the peers are checked against) equals a reference computed from the CSV files.

use quiver_bench::drive::{Embedded, Percentiles};
use quiver_bench::gen::{self, RageScale, SocialScale};
use quiver_bench::workloads::Workload;
use quiver_server::import::{import, ImportOptions};
use quiver_server::Database;
use serde_json::json;
use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::sync::Arc;

fn edges(path: &Path) -> Vec<(i64, i64, String)> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[0].parse().unwrap(), f[1].parse().unwrap(), f[2].to_string())
        })
        .collect()
}

#[test]
fn generation_is_deterministic_and_shaped() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let scale = SocialScale { persons: 2_000, knows: 30_000 };
    let da = gen::social(a.path(), scale, 7, 10).unwrap();
    let db = gen::social(b.path(), scale, 7, 10).unwrap();
    for f in ["person.csv", "knows.csv", "config.yaml"] {
        assert_eq!(std::fs::read(a.path().join(f)).unwrap(), std::fs::read(b.path().join(f)).unwrap(), "{f} differs");
    }
    assert_eq!(da.starts, db.starts);
    let knows = edges(&a.path().join("knows.csv"));
    assert_eq!(knows.len(), 30_000);
    let distinct: BTreeSet<(i64, i64)> = knows.iter().map(|(s, d, _)| (*s, *d)).collect();
    assert_eq!(distinct.len(), knows.len(), "no repeated edge");
    let mut degree: HashMap<i64, usize> = HashMap::new();
    for (s, _, _) in &knows {
        *degree.entry(*s).or_default() += 1;
    }
    let max = *degree.values().max().unwrap();
    assert!(max > 10 * 15, "skewed degrees: the largest is {max}, the mean 15");
    let rage = tempfile::tempdir().unwrap();
    gen::ragedb(rage.path(), RageScale { persons: 300, items: 50, likes_per_person: 20 }, 7, 10).unwrap();
    let likes = edges(&rage.path().join("likes.csv"));
    assert_eq!(likes.len(), 300 * 20);
    let distinct: BTreeSet<(i64, i64)> = likes.iter().map(|(s, d, _)| (*s, *d)).collect();
    assert_eq!(distinct.len(), likes.len(), "a person likes an item once");
}

#[test]
fn percentiles_are_nearest_rank() {
    let p = Percentiles::of_us((1..=100).map(|i| i * 1000).collect());
    assert_eq!((p.p50, p.p90, p.p95, p.p99, p.max), (50.0, 90.0, 95.0, 99.0, 100.0));
    assert_eq!(p.mean, 50.5);
}

/// NebulaGraph's `GO n STEPS`: the edges of step n, from the distinct vertices step n-1 reached.
fn go_reference(out: &HashMap<i64, Vec<i64>>, v: i64, steps: u32) -> Vec<i64> {
    let mut frontier: BTreeSet<i64> = [v].into();
    let mut last = Vec::new();
    for _ in 0..steps {
        last = frontier.iter().flat_map(|f| out.get(f).cloned().unwrap_or_default()).collect();
        frontier = last.iter().copied().collect();
    }
    last
}

/// MATCH's paths of `steps` edges from `v`, no edge twice (an edge is its (src, dst): the generated graphs repeat
/// none): the last vertex of each.
fn match_reference(out: &HashMap<i64, Vec<i64>>, v: i64, steps: u32) -> Vec<i64> {
    fn walk(out: &HashMap<i64, Vec<i64>>, path: &mut Vec<(i64, i64)>, at: i64, left: u32, ends: &mut Vec<i64>) {
        if left == 0 {
            ends.push(at);
            return;
        }
        for &d in out.get(&at).map_or(&[][..], |n| &n[..]) {
            if !path.contains(&(at, d)) {
                path.push((at, d));
                walk(out, path, d, left - 1, ends);
                path.pop();
            }
        }
    }
    let mut ends = Vec::new();
    walk(out, &mut Vec::new(), v, steps, &mut ends);
    ends
}

fn top_items(per_item: HashMap<i64, i64>, liked: &BTreeSet<i64>) -> serde_json::Value {
    let mut top: Vec<(i64, i64)> = per_item.into_iter().filter(|(j, _)| !liked.contains(j)).collect();
    top.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    top.truncate(25);
    json!({ "top": top.into_iter().map(|(j, c)| json!([j, c])).collect::<Vec<_>>() })
}

/// The length of the shortest paths from `v` to `u` (at most `max` steps; -1 for none) and how many there are.
fn shortest_reference(adj: &HashMap<i64, Vec<i64>>, v: i64, u: i64, max: u32) -> (i64, usize) {
    let mut level: HashMap<i64, usize> = HashMap::from([(v, 1)]);
    let mut seen: std::collections::HashSet<i64> = std::collections::HashSet::from([v]);
    for depth in 1..=max as i64 {
        let mut next: HashMap<i64, usize> = HashMap::new();
        for (x, n) in &level {
            for y in adj.get(x).into_iter().flatten() {
                if !seen.contains(y) {
                    *next.entry(*y).or_default() += n;
                }
            }
        }
        if let Some(n) = next.get(&u) {
            return (depth, *n);
        }
        seen.extend(next.keys());
        level = next;
    }
    (-1, 0)
}

#[test]
fn workload_answers_equal_a_reference_traversal() {
    let dir = tempfile::tempdir().unwrap();
    let ds = gen::social(&dir.path().join("social"), SocialScale { persons: 1_500, knows: 12_000 }, 3, 8).unwrap();
    let db = Database::in_memory();
    import(&db, &ds.mapping(), &ImportOptions::default()).unwrap();
    let db = Arc::new(db);
    let mut conn = Embedded::new(db.clone(), &ds.space);
    let mut out: HashMap<i64, Vec<i64>> = HashMap::new();
    for (s, d, _) in edges(&ds.dir.join("knows.csv")) {
        out.entry(s).or_default().push(d);
    }
    let workloads = Workload::social();
    for &v in &ds.starts {
        for steps in 1..=3u32 {
            let expect = go_reference(&out, v, steps);
            let sum = expect.iter().fold(0i64, |a, d| (a + d.rem_euclid(1_000_000_007)) % 1_000_000_007);
            let w = workloads.iter().find(|w| w.name == format!("go{steps}-dst")).unwrap();
            assert_eq!(
                w.digest(&mut conn, v, v, 0).unwrap(),
                json!({ "rows": expect.len(), "sum": sum }),
                "go{steps} from {v}"
            );
        }
        let count = workloads.iter().find(|w| w.name == "go2-count-over-all").unwrap();
        assert_eq!(count.digest(&mut conn, v, v, 0).unwrap(), json!({ "count": go_reference(&out, v, 2).len() }));
    }
    // The path searches: knows both ways, from each start to its partner, against breadth-first levels with path
    // counts (an edge in each direction between two persons is two edges).
    let mut both: HashMap<i64, Vec<i64>> = HashMap::new();
    for (s, d, _) in edges(&ds.dir.join("knows.csv")) {
        both.entry(s).or_default().push(d);
        both.entry(d).or_default().push(s);
    }
    let shortest = workloads.iter().find(|w| w.name == "shortest-path").unwrap();
    let all = workloads.iter().find(|w| w.name == "all-shortest-paths").unwrap();
    for (i, &v) in ds.starts.iter().enumerate() {
        let u = quiver_bench::workloads::partner(&ds.starts, i);
        let (length, paths) = shortest_reference(&both, v, u, quiver_bench::workloads::PATH_STEPS);
        assert_eq!(shortest.digest(&mut conn, v, u, 0).unwrap(), json!({ "length": length }), "{v} to {u}");
        assert_eq!(all.digest(&mut conn, v, u, 0).unwrap(), json!({ "length": length, "paths": paths }), "{v} to {u}");
    }
    // GET SUBGRAPH 2 STEPS: the vertices within two steps both ways, and the edges between them.
    let subgraph = workloads.iter().find(|w| w.name == "subgraph-2-steps").unwrap();
    let knows = edges(&ds.dir.join("knows.csv"));
    for &v in &ds.starts {
        let mut ball: std::collections::HashSet<i64> = std::collections::HashSet::from([v]);
        let first: Vec<i64> = both.get(&v).cloned().unwrap_or_default();
        for x in &first {
            ball.insert(*x);
            ball.extend(both.get(x).into_iter().flatten());
        }
        let inside = knows.iter().filter(|(s, d, _)| ball.contains(s) && ball.contains(d)).count();
        assert_eq!(
            subgraph.digest(&mut conn, v, v, 0).unwrap(),
            json!({ "vertices": ball.len(), "edges": inside }),
            "subgraph from {v}"
        );
    }

    let ds = gen::ragedb(&dir.path().join("rage"), RageScale { persons: 400, items: 60, likes_per_person: 12 }, 3, 8)
        .unwrap();
    import(&db, &ds.mapping(), &ImportOptions::default()).unwrap();
    let mut conn = Embedded::new(db.clone(), &ds.space);
    let (mut out, mut inn): (HashMap<i64, Vec<i64>>, HashMap<i64, Vec<i64>>) = Default::default();
    for (s, d, _) in edges(&ds.dir.join("likes.csv")) {
        out.entry(s).or_default().push(d);
        inn.entry(d).or_default().push(s);
    }
    let rage = Workload::rage();
    for &v in &ds.starts {
        // Every walk out, in, out (an edge may repeat), counted per last item.
        let mut per_item: HashMap<i64, i64> = HashMap::new();
        for i in &out[&v] {
            for q in &inn[i] {
                for j in &out[q] {
                    *per_item.entry(*j).or_default() += 1;
                }
            }
        }
        let total: i64 = per_item.values().sum();
        assert_eq!(rage[0].digest(&mut conn, v, v, 12).unwrap(), json!({ "count": total }));
        let liked: BTreeSet<i64> = out[&v].iter().copied().collect();
        assert_eq!(
            rage[1].digest(&mut conn, v, v, 12).unwrap(),
            top_items(per_item, &liked),
            "recommendation from {v}"
        );
        // MATCH's paths: no edge twice, so the other person is never `v` and the last item never the first.
        let mut per_item: HashMap<i64, i64> = HashMap::new();
        for i in &out[&v] {
            for q in inn[i].iter().filter(|q| **q != v) {
                for j in out[q].iter().filter(|j| *j != i) {
                    *per_item.entry(*j).or_default() += 1;
                }
            }
        }
        let total: i64 = per_item.values().sum();
        let (count, recommend) = (&rage[2], &rage[3]);
        assert_eq!((count.name.as_str(), recommend.name.as_str()), ("match-rage-3hop-count", "match-rage-recommend"));
        assert_eq!(count.digest(&mut conn, v, v, 12).unwrap(), json!({ "count": total }), "MATCH count from {v}");
        assert_eq!(recommend.digest(&mut conn, v, v, 12).unwrap(), top_items(per_item, &liked), "MATCH recommendation");
    }
}

/// The MATCH forms on a dense graph (many 2-cycles): MATCH's paths, no edge twice.
#[test]
fn match_answers_equal_a_reference_path_enumeration() {
    let dir = tempfile::tempdir().unwrap();
    let ds = gen::social(&dir.path().join("social"), SocialScale { persons: 300, knows: 6_000 }, 5, 8).unwrap();
    let db = Database::in_memory();
    import(&db, &ds.mapping(), &ImportOptions::default()).unwrap();
    let mut conn = Embedded::new(Arc::new(db), &ds.space);
    let mut out: HashMap<i64, Vec<i64>> = HashMap::new();
    for (s, d, _) in edges(&ds.dir.join("knows.csv")) {
        out.entry(s).or_default().push(d);
    }
    let workloads = Workload::social();
    for &v in &ds.starts {
        for steps in 1..=3u32 {
            let expect = match_reference(&out, v, steps);
            let sum = expect.iter().fold(0i64, |a, d| (a + d.rem_euclid(1_000_000_007)) % 1_000_000_007);
            let w = workloads.iter().find(|w| w.name == format!("match{steps}-dst")).unwrap();
            assert_eq!(
                w.digest(&mut conn, v, v, 0).unwrap(),
                json!({ "rows": expect.len(), "sum": sum }),
                "match{steps} from {v}"
            );
        }
    }
    // Over a 2-cycle `v->a->v->a` a walk uses `v->a` twice, a MATCH path never: some start must meet one, or the
    // check above would not tell paths from walks.
    let walks = |v: i64| {
        let mut n: HashMap<i64, usize> = [(v, 1)].into();
        for _ in 0..3 {
            let mut next = HashMap::new();
            for (at, k) in n {
                for d in out.get(&at).map_or(&[][..], |x| &x[..]) {
                    *next.entry(*d).or_default() += k;
                }
            }
            n = next;
        }
        n.values().sum::<usize>()
    };
    assert!(ds.starts.iter().any(|&v| walks(v) != match_reference(&out, v, 3).len()), "no start meets a 2-cycle");
}
