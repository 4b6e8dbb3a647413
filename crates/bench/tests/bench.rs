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
/// none): the last edge of each.
fn match_reference(out: &HashMap<i64, Vec<i64>>, v: i64, steps: u32) -> Vec<(i64, i64)> {
    fn walk(out: &HashMap<i64, Vec<i64>>, path: &mut Vec<(i64, i64)>, at: i64, left: u32, ends: &mut Vec<(i64, i64)>) {
        if left == 0 {
            ends.push(*path.last().expect("a step"));
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
    let time: HashMap<(i64, i64), i64> =
        edges(&ds.dir.join("knows.csv")).into_iter().map(|(s, d, t)| ((s, d), t.parse().unwrap())).collect();
    let workloads = Workload::social();
    let sum = |values: &mut dyn Iterator<Item = i64>| {
        values.fold(0i64, |a, d| (a + d.rem_euclid(1_000_000_007)) % 1_000_000_007)
    };
    for &v in &ds.starts {
        for steps in 1..=3u32 {
            let last = match_reference(&out, v, steps);
            let w = workloads.iter().find(|w| w.name == format!("match{steps}-dst")).unwrap();
            assert_eq!(
                w.digest(&mut conn, v, v, 0).unwrap(),
                json!({ "rows": last.len(), "sum": sum(&mut last.iter().map(|(_, d)| *d)) }),
                "match{steps} from {v}"
            );
            // The last edge's property: per last edge, the paths that end with it (none that used it before).
            let w = workloads.iter().find(|w| w.name == format!("match{steps}-edge-prop")).unwrap();
            assert_eq!(
                w.digest(&mut conn, v, v, 0).unwrap(),
                json!({ "rows": last.len(), "sum": sum(&mut last.iter().map(|e| time[e])) }),
                "match{steps}-edge-prop from {v}"
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

/// The LDBC-style reads on persons and knows alone, on a dense graph (pairs with edges both ways): a person's
/// profile, friends either way (one row per edge), and friends of friends.
#[test]
fn person_reads_equal_a_reference() {
    let dir = tempfile::tempdir().unwrap();
    let ds = gen::social(&dir.path().join("social"), SocialScale { persons: 300, knows: 6_000 }, 9, 8).unwrap();
    let db = Database::in_memory();
    import(&db, &ds.mapping(), &ImportOptions::default()).unwrap();
    let mut conn = Embedded::new(Arc::new(db), &ds.space);
    let persons: HashMap<i64, Vec<String>> = std::fs::read_to_string(ds.dir.join("person.csv"))
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<String> = l.split(',').map(str::to_string).collect();
            (f[0].parse().unwrap(), f)
        })
        .collect();
    let knows = edges(&ds.dir.join("knows.csv"));
    let friends = |v: i64| -> Vec<(i64, i64)> {
        knows
            .iter()
            .filter_map(|(s, d, t)| {
                let t: i64 = t.parse().unwrap();
                (*s == v).then_some((*d, t)).or((*d == v).then_some((*s, t)))
            })
            .collect()
    };
    let rows = |mut rows: Vec<serde_json::Value>| {
        rows.sort_by_key(|r| r.to_string());
        json!({ "rows": rows })
    };
    let workloads = Workload::social();
    let find = |name: &str| workloads.iter().find(|w| w.name == name).unwrap();
    let mut both_ways = false;
    for &v in &ds.starts {
        let p = &persons[&v];
        let profile = json!([p[1], p[2], p[3], p[4].parse::<i64>().unwrap(), p[5].parse::<i64>().unwrap()]);
        assert_eq!(find("person-profile").digest(&mut conn, v, v, 0).unwrap(), rows(vec![profile]), "profile of {v}");
        let f = friends(v);
        let expect = f.iter().map(|(o, t)| json!([o, persons[o][1], persons[o][2], t])).collect();
        assert_eq!(find("person-friends").digest(&mut conn, v, v, 0).unwrap(), rows(expect), "friends of {v}");
        let direct: BTreeSet<i64> = f.iter().map(|(o, _)| *o).collect();
        both_ways |= direct.len() < f.len();
        let fof: BTreeSet<i64> = direct
            .iter()
            .flat_map(|&o| friends(o).into_iter().map(|(x, _)| x))
            .filter(|x| *x != v && !direct.contains(x))
            .collect();
        let sum = fof.iter().fold(0i64, |a, d| (a + d.rem_euclid(1_000_000_007)) % 1_000_000_007);
        assert_eq!(
            find("friends-of-friends").digest(&mut conn, v, v, 0).unwrap(),
            json!({ "rows": fof.len(), "sum": sum }),
            "friends of friends of {v}"
        );
    }
    assert!(both_ways, "no start has a friend joined both ways: the test would not tell one row per edge");
}

/// LDBC SNB Interactive v1's short reads IS1-IS7 on its complete test network, against the answers computed here
/// straight from the converted files (`gen::snb`): every start of both lists, and every message of one person.
#[test]
fn snb_short_reads_equal_a_reference() {
    let src =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/ldbc-snb-interactive-v1-testdata/vanilla");
    let dir = tempfile::tempdir().unwrap();
    let ds = gen::snb(&src, dir.path(), 11, 30).unwrap();
    let db = Database::in_memory();
    import(&db, &ds.mapping(), &ImportOptions::default()).unwrap();
    let mut conn = Embedded::new(Arc::new(db), &ds.space);
    let table = |name: &str| -> HashMap<i64, Vec<String>> {
        std::fs::read_to_string(dir.path().join(format!("{name}.csv")))
            .unwrap()
            .lines()
            .skip(1)
            .map(|l| {
                let f: Vec<String> = l.split('|').map(str::to_string).collect();
                (f[0].parse().unwrap(), f)
            })
            .collect()
    };
    let pairs = |name: &str| -> Vec<(i64, i64)> {
        std::fs::read_to_string(dir.path().join(format!("{name}.csv")))
            .unwrap()
            .lines()
            .skip(1)
            .map(|l| {
                let f: Vec<&str> = l.split('|').collect();
                (f[0].parse().unwrap(), f[1].parse().unwrap())
            })
            .collect()
    };
    let (persons, messages, forums) = (table("person"), table("message"), table("forum"));
    let int = |s: &str| s.parse::<i64>().unwrap();
    let one = |edges: &[(i64, i64)]| -> HashMap<i64, i64> { edges.iter().copied().collect() };
    let (creator, reply_of, located) =
        (one(&pairs("has_creator")), one(&pairs("reply_of")), one(&pairs("is_located_in")));
    let container: HashMap<i64, i64> = pairs("container_of").into_iter().map(|(f, p)| (p, f)).collect();
    let moderator = one(&pairs("has_moderator"));
    let knows: Vec<(i64, i64, i64)> = std::fs::read_to_string(dir.path().join("knows.csv"))
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split('|').collect();
            (int(f[0]), int(f[1]), int(f[2]))
        })
        .collect();
    let root = |mut m: i64| {
        while messages[&m][4] != "true" {
            m = reply_of[&m];
        }
        m
    };
    let name = |p: i64| (persons[&p][1].clone(), persons[&p][2].clone());
    let rows = |mut rows: Vec<serde_json::Value>| {
        rows.sort_by_key(|r| r.to_string());
        json!({ "rows": rows })
    };
    let expect = |n: u8, v: i64| -> serde_json::Value {
        match n {
            1 => {
                let p = &persons[&v];
                rows(vec![json!([p[1], p[2], int(&p[4]), p[6], p[7], located[&v], p[3], int(&p[5])])])
            }
            2 => {
                let mut mine: Vec<i64> = creator.iter().filter(|(_, p)| **p == v).map(|(m, _)| *m).collect();
                mine.sort_by_key(|m| std::cmp::Reverse((int(&messages[m][1]), *m)));
                mine.truncate(10);
                rows(
                    mine.iter()
                        .map(|m| {
                            let (r, c) = (root(*m), creator[&root(*m)]);
                            let (f, l) = name(c);
                            json!([m, messages[m][2], int(&messages[m][1]), r, c, f, l])
                        })
                        .collect(),
                )
            }
            3 => rows(
                knows
                    .iter()
                    .filter_map(|&(a, b, t)| (a == v).then_some((b, t)).or((b == v).then_some((a, t))))
                    .map(|(o, t)| {
                        let (f, l) = name(o);
                        json!([o, f, l, t])
                    })
                    .collect(),
            ),
            4 => rows(vec![json!([int(&messages[&v][1]), messages[&v][2]])]),
            5 => {
                let (f, l) = name(creator[&v]);
                rows(vec![json!([creator[&v], f, l])])
            }
            6 => {
                let f = container[&root(v)];
                let m = moderator[&f];
                let (first, last) = name(m);
                rows(vec![json!([f, forums[&f][1], m, first, last])])
            }
            _ => {
                let author = creator[&v];
                rows(
                    reply_of
                        .iter()
                        .filter(|(_, to)| **to == v)
                        .map(|(c, _)| {
                            let p = creator[c];
                            let (f, l) = name(p);
                            let knows = knows.iter().any(|&(a, b, _)| (a, b) == (p, author) || (b, a) == (p, author));
                            json!([c, messages[c][2], int(&messages[c][1]), p, f, l, knows])
                        })
                        .collect(),
                )
            }
        }
    };
    let reads = Workload::snb();
    let mut checked = [0usize; 7];
    for w in &reads {
        let quiver_bench::workloads::Kind::Snb(n) = w.kind else { unreachable!() };
        let mut starts = w.starts(&ds).to_vec();
        if n >= 4 {
            // Every message of the most prolific writer among the starts too: posts and comments, deep replies.
            starts.extend(creator.iter().filter(|(_, p)| **p == ds.starts[0]).map(|(m, _)| *m));
        }
        for v in starts {
            let want = expect(n, v);
            assert_eq!(w.digest(&mut conn, v, v, 0).unwrap(), want, "{} from {v}", w.name);
            if want["rows"].as_array().is_some_and(|r| !r.is_empty()) {
                checked[n as usize - 1] += 1;
            }
        }
    }
    // Every read compared non-empty answers from at least 25 starts (the message starts have replies, for IS7).
    assert!(checked.iter().all(|c| *c >= 25), "{checked:?}");
}
