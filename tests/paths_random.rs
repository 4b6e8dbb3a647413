//! FIND PATH, MATCH's `shortestPath`/`allShortestPaths` and GET SUBGRAPH against a naive reference search on random
//! graphs.
//!
//! For many seeds: a small graph (2 to 12 vertices with INT64 VIDs, some of them edge ends only, never inserted;
//! edge types `r(w int)` and `s(w int)` with parallel edges of different ranks, reverse edges and self-loops), then
//! random statements: `FIND {SHORTEST | SINGLE SHORTEST | ALL | NOLOOP} PATH FROM <1-3 vids> TO <1-3 vids> OVER
//! <r | s | r, s | *> [REVERSELY | BIDIRECT] [WHERE <type>.w > k] UPTO <0-4> STEPS`, and `GET SUBGRAPH <0-3> STEPS
//! FROM <1-2 vids> [IN | OUT | BOTH <types>] YIELD VERTICES AS v, EDGES AS e`, and `MATCH p = {shortestPath |
//! allShortestPaths}((a)-[e:<types>*..<1-5>]->(b)) WHERE id(a) IN [..] AND id(b) IN [..] RETURN p` (every direction),
//! their rows compared with the reference's as multisets.
//!
//! The reference enumerates every walk of up to `UPTO` steps from each source that walks no edge twice (an edge
//! being its type, source, destination and rank, whichever way it is walked), by backtracking over the edge list:
//! ALL keeps those that end at a target; NOLOOP those that also meet no vertex twice; SHORTEST, per (source,
//! target) pair, those of the smallest length (pairs of a vertex with itself are left out: Quiver answers them with
//! the cycles closed by the first breadth-first level that closes one, see docs/design/paths.md); SINGLE SHORTEST
//! must return, per pair, exactly one of SHORTEST's paths. The MATCH forms answer the same as SHORTEST and SINGLE
//! SHORTEST between the vertices that exist (a node pattern matches only those), with whole vertices and edges in
//! the paths. GET SUBGRAPH's reference is NebulaGraph's
//! `SubgraphExecutor::process`, written over the edge list.

use quiver_common::rng::Rng;
use quiver_common::Value;
use quiver_query::{Params, Session};
use quiver_server::Database;
use std::collections::{BTreeMap, HashMap, HashSet};

const GRAPHS: u64 = 300;
const STATEMENTS: usize = 25;

#[derive(Clone, Copy)]
struct Ed {
    ty: usize,
    src: i64,
    dst: i64,
    rank: i64,
    w: i64,
}

const TYPES: [&str; 2] = ["r", "s"];

struct Graph {
    n: i64,
    /// Vertices inserted (the rest are edge ends only).
    real: Vec<bool>,
    edges: Vec<Ed>,
}

impl Graph {
    fn random(rng: &mut Rng) -> Graph {
        let n = 2 + rng.below(11) as i64;
        let real = (0..n).map(|_| rng.below(6) != 0).collect();
        let m = rng.below(3 * n as u64 + 1);
        let mut edges = Vec::new();
        for _ in 0..m {
            let src = rng.below(n as u64) as i64;
            let dst = if rng.below(8) == 0 { src } else { rng.below(n as u64) as i64 };
            edges.push(Ed { ty: rng.below(2) as usize, src, dst, rank: rng.below(2) as i64, w: rng.below(10) as i64 });
        }
        // One edge per key: the last insert wins in storage, so keep the reference the same.
        let mut seen = HashSet::new();
        edges.reverse();
        edges.retain(|e| seen.insert((e.ty, e.src, e.dst, e.rank)));
        Graph { n, real, edges }
    }

    fn setup(&self) -> Vec<String> {
        let mut out = vec![
            "CREATE SPACE g(vid_type = INT64)".to_string(),
            "USE g".into(),
            "CREATE TAG t(x int)".into(),
            "CREATE EDGE r(w int)".into(),
            "CREATE EDGE s(w int)".into(),
        ];
        for v in 0..self.n {
            if self.real[v as usize] {
                out.push(format!("INSERT VERTEX t(x) VALUES {v}:({v})"));
            }
        }
        for e in &self.edges {
            out.push(format!("INSERT EDGE {}(w) VALUES {}->{}@{}:({})", TYPES[e.ty], e.src, e.dst, e.rank, e.w));
        }
        out
    }
}

/// A step of a walk: the edge (index into the edge list), whether it was walked in its stored direction, and the
/// vertex reached.
type Walk = (i64, Vec<(usize, bool, i64)>);

/// The edges a statement may walk from `at`: `(edge, forward, far end)`.
fn steps_from(g: &Graph, at: i64, types: &[usize], dir: &str, min_w: Option<(usize, i64)>) -> Vec<(usize, bool, i64)> {
    let mut out = Vec::new();
    for (i, e) in g.edges.iter().enumerate() {
        if !types.contains(&e.ty) {
            continue;
        }
        if let Some((ty, k)) = min_w {
            // `ty.w > k`: EMPTY (another type) and a smaller weight fail.
            if e.ty != ty || e.w <= k {
                continue;
            }
        }
        if dir != "REVERSELY" && e.src == at {
            out.push((i, true, e.dst));
        }
        if !dir.is_empty() && e.dst == at {
            out.push((i, false, e.src));
        }
    }
    out
}

/// A MATCH path: vertices with their tag (`t` has `x`, the VID), edges with `w`.
fn render_whole(g: &Graph, w: &Walk) -> String {
    let vertex =
        |v: i64| if g.real.get(v as usize) == Some(&true) { format!("({v} :t{{x: {v}}})") } else { format!("({v})") };
    let mut s = format!("<{}", vertex(w.0));
    for &(i, fwd, to) in &w.1 {
        let e = &g.edges[i];
        let (open, close) = if fwd { ("-[", "]->") } else { ("<-[", "]-") };
        s += &format!("{open}:{}@{} {{w: {}}}{close}{}", TYPES[e.ty], e.rank, e.w, vertex(to));
    }
    s + ">"
}

/// `props`: the steps carry `w` (ALL and NOLOOP with a WHERE read it while searching, as NebulaGraph's do).
fn render_walk(g: &Graph, w: &Walk, props: bool) -> String {
    let mut s = format!("<({})", w.0);
    for &(i, fwd, to) in &w.1 {
        let e = &g.edges[i];
        let (open, close) = if fwd { ("-[", "]->") } else { ("<-[", "]-") };
        let p = if props { format!("{{w: {}}}", e.w) } else { "{}".to_string() };
        s += &format!("{open}:{}@{} {p}{close}({to})", TYPES[e.ty], e.rank);
    }
    s + ">"
}

/// SINGLE SHORTEST's reference: per (source, target) pair, the paths its one row may be.
type PerPair = BTreeMap<(i64, i64), HashSet<String>>;

struct Find {
    kind: &'static str,
    from: Vec<i64>,
    to: Vec<i64>,
    types: Vec<usize>,
    star: bool,
    dir: &'static str,
    min_w: Option<(usize, i64)>,
    upto: u32,
    /// Asked as MATCH's `shortestPath` / `allShortestPaths` (no WHERE on edges; vertices and edges whole).
    matched: bool,
}

impl Find {
    fn text(&self) -> String {
        let list = |v: &[i64]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", ");
        if self.matched {
            let f = if self.kind == "SHORTEST" { "allShortestPaths" } else { "shortestPath" };
            let types = if self.star {
                String::new()
            } else {
                format!(":{}", self.types.iter().map(|t| TYPES[*t]).collect::<Vec<_>>().join("|"))
            };
            let (l, r) = match self.dir {
                "" => ("-", "->"),
                "REVERSELY" => ("<-", "-"),
                _ => ("-", "-"),
            };
            return format!(
                "MATCH p = {f}((a){l}[e{types}*..{}]{r}(b)) WHERE id(a) IN [{}] AND id(b) IN [{}] RETURN p",
                self.upto,
                list(&self.from),
                list(&self.to)
            );
        }
        let over = if self.star {
            "*".to_string()
        } else {
            self.types.iter().map(|t| TYPES[*t]).collect::<Vec<_>>().join(", ")
        };
        let filter = self.min_w.map(|(t, k)| format!(" WHERE {}.w > {k}", TYPES[t])).unwrap_or_default();
        format!(
            "FIND {} PATH FROM {} TO {} OVER {over} {}{filter} UPTO {} STEPS YIELD path AS p",
            self.kind,
            list(&self.from),
            list(&self.to),
            self.dir,
            self.upto
        )
    }

    /// Every walk from `s` of 1 to `upto` steps that walks no edge twice, ending anywhere.
    fn trails(&self, g: &Graph, s: i64) -> Vec<Walk> {
        let mut out = Vec::new();
        let mut path = Vec::new();
        self.extend(g, s, s, &mut path, &mut out);
        out
    }

    fn extend(&self, g: &Graph, s: i64, at: i64, path: &mut Vec<(usize, bool, i64)>, out: &mut Vec<Walk>) {
        if path.len() as u32 == self.upto {
            return;
        }
        for st in steps_from(g, at, &self.types, self.dir, self.min_w) {
            if path.iter().any(|p| p.0 == st.0) {
                continue;
            }
            path.push(st);
            out.push((s, path.clone()));
            self.extend(g, s, st.2, path, out);
            path.pop();
        }
    }

    /// The reference's rows, and for SINGLE SHORTEST the set each pair's one path must come from.
    fn reference(&self, g: &Graph) -> (Vec<String>, Option<PerPair>) {
        let dedup = |v: &[i64]| {
            let mut seen = HashSet::new();
            v.iter().copied().filter(|x| seen.insert(*x)).collect::<Vec<_>>()
        };
        let (mut from, mut to) = (dedup(&self.from), dedup(&self.to));
        if self.matched {
            // A node pattern matches vertices that exist.
            from.retain(|v| g.real.get(*v as usize) == Some(&true));
            to.retain(|v| g.real.get(*v as usize) == Some(&true));
        }
        let mut rows = Vec::new();
        let mut per_pair: BTreeMap<(i64, i64), HashSet<String>> = BTreeMap::new();
        for &s in &from {
            let trails = self.trails(g, s);
            for &t in &to {
                let props = self.min_w.is_some() && matches!(self.kind, "ALL" | "NOLOOP");
                let render = |w: &Walk| if self.matched { render_whole(g, w) } else { render_walk(g, w, props) };
                let ending: Vec<&Walk> = trails.iter().filter(|w| w.1.last().map(|x| x.2) == Some(t)).collect();
                match self.kind {
                    "ALL" => rows.extend(ending.iter().map(|w| render(w))),
                    "NOLOOP" => rows.extend(
                        ending
                            .iter()
                            .filter(|w| {
                                let mut seen = HashSet::from([w.0]);
                                w.1.iter().all(|x| seen.insert(x.2))
                            })
                            .map(|w| render(w)),
                    ),
                    _ => {
                        if s == t {
                            continue;
                        }
                        let Some(min) = ending.iter().map(|w| w.1.len()).min() else { continue };
                        let shortest: Vec<String> =
                            ending.iter().filter(|w| w.1.len() == min).map(|w| render(w)).collect();
                        if self.kind == "SHORTEST" {
                            rows.extend(shortest);
                        } else {
                            per_pair.insert((s, t), shortest.into_iter().collect());
                        }
                    }
                }
            }
        }
        rows.sort();
        (rows, (self.kind == "SINGLE SHORTEST").then_some(per_pair))
    }
}

struct Subgraph {
    steps: u32,
    from: Vec<i64>,
    /// `(IN|OUT|BOTH, types)`, or none: every type both ways.
    dir: Option<(&'static str, Vec<usize>)>,
}

impl Subgraph {
    fn text(&self) -> String {
        let list = self.from.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", ");
        let dir = match &self.dir {
            None => String::new(),
            Some((d, types)) => format!(" {d} {}", types.iter().map(|t| TYPES[*t]).collect::<Vec<_>>().join(", ")),
        };
        format!("GET SUBGRAPH {} STEPS FROM {list}{dir} YIELD VERTICES AS v, EDGES AS e", self.steps)
    }

    /// NebulaGraph's rounds over the edge list: per round, the vertices expanded and the edges kept.
    fn reference(&self, g: &Graph) -> Vec<String> {
        let mut seen = HashSet::new();
        let starts: Vec<i64> = self.from.iter().copied().filter(|v| seen.insert(*v)).collect();
        let vertex =
            |v: i64| if g.real.get(v as usize) == Some(&true) { format!("({v} :t{{}})") } else { format!("({v})") };
        // Signed walks: (type, sign); bidirect types by signed type.
        let (walks, bidirect): (Vec<(usize, i32)>, bool) = match &self.dir {
            None => ((0..2).flat_map(|t| [(t, 1), (t, -1)]).collect(), true),
            Some(("IN", ts)) => (ts.iter().map(|t| (*t, -1)).collect(), false),
            Some(("OUT", ts)) => (ts.iter().map(|t| (*t, 1)).collect(), false),
            Some((_, ts)) => (ts.iter().flat_map(|t| [(*t, 1), (*t, -1)]).collect(), true),
        };
        let total = self.steps + 1;
        let mut history: HashMap<i64, u32> = HashMap::new();
        let mut frontier = starts.clone();
        let mut rows = Vec::new();
        for step in 1..=total {
            let mut current: HashMap<i64, u32> = HashMap::new();
            if step == 1 {
                current.extend(frontier.iter().map(|v| (*v, 0)));
            }
            let mut next = Vec::new();
            let mut kept: Vec<(i64, usize, i64, i64)> = Vec::new();
            for &v in &frontier {
                for &(ty, sign) in &walks {
                    for e in g.edges.iter().filter(|e| e.ty == ty) {
                        let far = if sign > 0 && e.src == v {
                            e.dst
                        } else if sign < 0 && e.dst == v {
                            e.src
                        } else {
                            continue;
                        };
                        if let Some(&found) = history.get(&far) {
                            if bidirect && (sign < 0 || found + 2 == step) {
                                continue;
                            }
                        } else {
                            if step == total {
                                continue;
                            }
                            if let std::collections::hash_map::Entry::Vacant(slot) = current.entry(far) {
                                slot.insert(step);
                                next.push(far);
                            }
                        }
                        kept.push((e.src, ty, e.rank, e.dst));
                    }
                }
            }
            let mut vs = frontier.clone();
            vs.sort();
            kept.sort_by(|a, b| (a.0, TYPES[a.1], a.2, a.3).cmp(&(b.0, TYPES[b.1], b.2, b.3)));
            let vs: Vec<String> = vs.into_iter().map(vertex).collect();
            let es: Vec<String> =
                kept.iter().map(|(s, t, r, d)| format!("[:{} {s}->{d} @{r} {{}}]", TYPES[*t])).collect();
            rows.push(format!("[{}] | [{}]", vs.join(", "), es.join(", ")));
            history.extend(current);
            if next.is_empty() {
                break;
            }
            frontier = next;
        }
        rows
    }
}

fn exec(db: &Database, s: &mut Session, stmt: &str) -> Result<Vec<Vec<Value>>, String> {
    db.execute(s, stmt, &Params::new())
        .map(|ds| ds.into_rows())
        .map_err(|e| format!("[{}] {}", e.code.as_i32(), e.message))
}

fn row_text(r: &[Value]) -> String {
    r.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(" | ")
}

fn vids(rng: &mut Rng, g: &Graph, max: u64) -> Vec<i64> {
    (0..1 + rng.below(max)).map(|_| rng.below(g.n as u64 + 1) as i64).collect()
}

#[test]
fn find_path_and_subgraph_agree_with_a_reference_search_on_random_graphs() {
    let seed_base: u64 = std::env::var("PATHS_RANDOM_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(1);
    let mut failures = Vec::new();
    let (mut statements, mut rows_total) = (0, 0);
    for seed in seed_base..seed_base + GRAPHS {
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let g = Graph::random(&mut rng);
        let db = Database::in_memory();
        let mut session = Session::default();
        for stmt in g.setup() {
            exec(&db, &mut session, &stmt).unwrap_or_else(|e| panic!("seed {seed}: `{stmt}`: {e}"));
        }
        for _ in 0..STATEMENTS {
            statements += 1;
            let (text, want, single) = if rng.below(4) == 0 {
                let s = Subgraph {
                    steps: 1 + rng.below(3) as u32,
                    from: vids(&mut rng, &g, 2),
                    dir: match rng.below(4) {
                        0 => None,
                        d => {
                            let types = if rng.below(2) == 0 { vec![rng.below(2) as usize] } else { vec![0, 1] };
                            Some((["IN", "OUT", "BOTH"][d as usize - 1], types))
                        }
                    },
                };
                (s.text(), s.reference(&g), None)
            } else {
                let star = rng.below(4) == 0;
                let types = if star || rng.below(3) == 0 { vec![0, 1] } else { vec![rng.below(2) as usize] };
                let matched = rng.below(4) == 0;
                let f = Find {
                    kind: if matched {
                        ["SHORTEST", "SINGLE SHORTEST"][rng.below(2) as usize]
                    } else {
                        ["SHORTEST", "SINGLE SHORTEST", "ALL", "NOLOOP"][rng.below(4) as usize]
                    },
                    matched,
                    from: vids(&mut rng, &g, 3),
                    to: vids(&mut rng, &g, 3),
                    min_w: (!matched && rng.below(4) == 0)
                        .then(|| (types[rng.below(types.len() as u64) as usize], rng.below(8) as i64)),
                    types,
                    star,
                    dir: ["", "REVERSELY", "BIDIRECT"][rng.below(3) as usize],
                    upto: rng.below(5) as u32 + u32::from(matched),
                };
                let (rows, single) = f.reference(&g);
                (f.text(), rows, single)
            };
            let got = match exec(&db, &mut session, &text) {
                Ok(rows) => rows
                    .iter()
                    // Shortest paths of a vertex to itself are left out of the comparison (see the top).
                    .filter(|r| match (&r[0], text.contains("SHORTEST") || text.contains("hortest")) {
                        (Value::Path(p), true) => p.src.vid != p.end().vid,
                        _ => true,
                    })
                    .map(|r| row_text(r))
                    .collect::<Vec<_>>(),
                Err(e) => {
                    failures.push(format!("seed {seed}: {text}\n  error: {e}"));
                    continue;
                }
            };
            rows_total += got.len();
            let ok = match &single {
                None => {
                    let mut got_sorted = got.clone();
                    let mut want_sorted = want.clone();
                    if !text.starts_with("GET") {
                        got_sorted.sort();
                        want_sorted.sort();
                    }
                    got_sorted == want_sorted
                }
                Some(per_pair) => {
                    // One path per pair, each among the pair's shortest.
                    got.len() == per_pair.len()
                        && got.iter().all(|p| per_pair.values().any(|set| set.contains(p)))
                        && per_pair.values().all(|set| got.iter().filter(|p| set.contains(*p)).count() == 1)
                }
            };
            if !ok {
                let want_text = match &single {
                    None => want.join("\n    "),
                    Some(p) => format!("{p:?}"),
                };
                failures.push(format!(
                    "seed {seed}: {text}\n  got:\n    {}\n  want:\n    {want_text}\n  graph: {}",
                    got.join("\n    "),
                    g.setup()[5..].join("; ")
                ));
            }
        }
    }
    println!("{statements} statements, {rows_total} rows");
    assert!(
        failures.is_empty(),
        "{} failure(s):\n{}",
        failures.len(),
        failures.iter().take(10).cloned().collect::<Vec<_>>().join("\n\n")
    );
}
