//! The workloads: NebulaGraph's GO cases 1-4 for 1-3 steps and the paper's 2-hop count (social graph), RageDB's
//! 3-hop count and recommendation (likes graph), the openCypher MATCH form of each of those, BG3's follow and
//! recommendation mixes, and writes. Each read workload also has a digest of its answer for one start vertex, which
//! the peers compute the same way (`bench/peers.py`), so the systems are checked to agree.
//!
//! A MATCH form answers on MATCH's semantics, not GO's: it returns one row per path, never uses an edge twice
//! within one path, and does not de-duplicate the vertices reached between steps (a `GO N STEPS` walks on from the
//! distinct vertices of the step before). Its answers therefore differ from the GO form's, and every peer computes
//! them on MATCH's semantics.

use crate::drive::{Conn, Request};
use crate::gen::Dataset;
use quiver_common::rng::Rng;
use quiver_common::Value;
use serde_json::{json, Value as Json};
use std::fmt::Write as _;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    /// NebulaGraph's case 1-4 of `GO {steps} STEPS FROM v OVER knows`.
    Go { steps: u32, case: u32 },
    /// `GO 2 STEPS FROM v OVER * YIELD dst(edge) | YIELD COUNT(*)`.
    Count2,
    /// out LIKES, in LIKES, out LIKES, counted.
    RageCount3,
    /// The same walk, grouped by item, without the items the person likes, top 25.
    RageRecommend,
    /// The MATCH form of [`Kind::Go`]: a path of `steps` knows edges, no edge twice, no de-duplication between steps.
    Match { steps: u32, case: u32 },
    /// The MATCH form of [`Kind::RageCount3`]: paths, no edge twice.
    MatchRageCount3,
    /// The MATCH form of [`Kind::RageRecommend`].
    MatchRageRecommend,
    /// `FIND SINGLE SHORTEST PATH` between a start and its partner ([`partner`]) over knows both ways, up to
    /// [`PATH_STEPS`] steps: the length found.
    ShortestPath,
    /// `FIND SHORTEST PATH` (every shortest path) between the same pairs: the length and how many paths.
    AllShortestPaths,
    /// `GET SUBGRAPH 2 STEPS` from a start over knows both ways: how many vertices and edges it lists.
    Subgraph2,
    /// LDBC's short read IS1 on persons alone (the social graphs): a person's properties.
    PersonProfile,
    /// LDBC's IS3 on persons and knows alone: a person's friends (knows either way) with the friendship's time,
    /// newest first.
    PersonFriends,
    /// The distinct persons two knows edges away (either way), neither the person nor a friend.
    FriendsOfFriends,
    /// LDBC SNB Interactive v1 short read IS`n` (1-7) on the complete test network ([`snb`]).
    Snb(u8),
    /// BG3: 99% one-hop reads, 1% single-edge inserts.
    FollowMix,
    /// BG3: 70% 1-hop, 20% 2-hop, 10% 3-hop reads.
    RecommendMix,
    /// One `INSERT EDGE` of one edge per request.
    InsertEdge,
    /// One `INSERT EDGE` of [`BATCH_EDGES`] edges per request.
    InsertBatch,
}

pub const BATCH_EDGES: u64 = 1000;
/// The longest path the path searches look for (LDBC's complex read 13 has no bound; six hops cover the graphs).
pub const PATH_STEPS: u32 = 6;
/// Items the recommendation returns.
pub const TOP_ITEMS: usize = 25;
const MODULUS: i64 = 1_000_000_007;
/// `knows.time` of inserted edges starts here (2013-01-01, after every generated edge).
const TIME_BASE: u64 = 20130101000000000;

#[derive(Debug, Clone)]
pub struct Workload {
    pub name: String,
    pub kind: Kind,
}

impl Workload {
    /// Whether the workload reads only (cross-checked with the peers).
    pub fn reads(&self) -> bool {
        !matches!(self.kind, Kind::FollowMix | Kind::InsertEdge | Kind::InsertBatch)
    }

    /// Whether the workload searches paths between two persons.
    pub fn is_path(&self) -> bool {
        matches!(self.kind, Kind::ShortestPath | Kind::AllShortestPaths | Kind::Subgraph2)
    }

    /// Whether the workload is the openCypher MATCH form of another.
    pub fn is_match(&self) -> bool {
        matches!(self.kind, Kind::Match { .. } | Kind::MatchRageCount3 | Kind::MatchRageRecommend)
    }

    pub fn social() -> Vec<Workload> {
        let mut w = Vec::new();
        for steps in 1..=3 {
            for (case, what) in [(1, "dst"), (2, "edge-prop"), (3, "dst-prop"), (4, "distinct-order-limit")] {
                w.push(Workload { name: format!("go{steps}-{what}"), kind: Kind::Go { steps, case } });
            }
        }
        w.push(Workload { name: "go2-count-over-all".into(), kind: Kind::Count2 });
        for steps in 1..=3 {
            for (case, what) in [(1, "dst"), (2, "edge-prop"), (3, "dst-prop"), (4, "distinct-order-limit")] {
                w.push(Workload { name: format!("match{steps}-{what}"), kind: Kind::Match { steps, case } });
            }
        }
        w.push(Workload { name: "shortest-path".into(), kind: Kind::ShortestPath });
        w.push(Workload { name: "all-shortest-paths".into(), kind: Kind::AllShortestPaths });
        w.push(Workload { name: "subgraph-2-steps".into(), kind: Kind::Subgraph2 });
        w.push(Workload { name: "person-profile".into(), kind: Kind::PersonProfile });
        w.push(Workload { name: "person-friends".into(), kind: Kind::PersonFriends });
        w.push(Workload { name: "friends-of-friends".into(), kind: Kind::FriendsOfFriends });
        w
    }

    /// LDBC's short reads IS1-IS7 on the SNB test network ([`crate::gen::snb`]).
    pub fn snb() -> Vec<Workload> {
        SNB_NAMES.iter().zip(1..).map(|(name, n)| Workload { name: (*name).into(), kind: Kind::Snb(n) }).collect()
    }

    /// The vertices the workload starts from: messages for IS4-IS7, persons otherwise.
    pub fn starts<'a>(&self, ds: &'a Dataset) -> &'a [i64] {
        match self.kind {
            Kind::Snb(4..) => &ds.message_starts,
            _ => &ds.starts,
        }
    }

    pub fn social_mixes() -> Vec<Workload> {
        vec![
            Workload { name: "bg3-recommend-mix".into(), kind: Kind::RecommendMix },
            Workload { name: "bg3-follow-mix".into(), kind: Kind::FollowMix },
            Workload { name: "insert-edge".into(), kind: Kind::InsertEdge },
            Workload { name: "insert-batch-1000".into(), kind: Kind::InsertBatch },
        ]
    }

    pub fn rage() -> Vec<Workload> {
        vec![
            Workload { name: "rage-3hop-count".into(), kind: Kind::RageCount3 },
            Workload { name: "rage-recommend".into(), kind: Kind::RageRecommend },
            Workload { name: "match-rage-3hop-count".into(), kind: Kind::MatchRageCount3 },
            Workload { name: "match-rage-recommend".into(), kind: Kind::MatchRageRecommend },
        ]
    }

    /// The statement of a read workload from `v` (to `u`, for the path searches).
    fn statement(&self, v: i64, u: i64, likes: u64) -> String {
        match self.kind {
            Kind::ShortestPath => format!(
                "FIND SINGLE SHORTEST PATH FROM {v} TO {u} OVER knows BIDIRECT UPTO {PATH_STEPS} STEPS YIELD path AS p \
                 | YIELD length($-.p) AS l"
            ),
            Kind::AllShortestPaths => format!(
                "FIND SHORTEST PATH FROM {v} TO {u} OVER knows BIDIRECT UPTO {PATH_STEPS} STEPS YIELD path AS p \
                 | YIELD length($-.p) AS l"
            ),
            Kind::Subgraph2 => format!("GET SUBGRAPH 2 STEPS FROM {v} BOTH knows YIELD VERTICES AS n, EDGES AS r"),
            Kind::Go { steps, case } => go(steps, case, v),
            Kind::Count2 => format!("GO 2 STEPS FROM {v} OVER * YIELD dst(edge) | YIELD COUNT(*)"),
            Kind::RageCount3 => format!("{} | YIELD COUNT(*)", rage_walk(v)),
            Kind::RageRecommend => format!(
                "{} | GROUP BY $-.j YIELD $-.j AS j, COUNT(*) AS c | ORDER BY $-.c DESC, $-.j | LIMIT {}",
                rage_walk(v),
                TOP_ITEMS as u64 + likes
            ),
            Kind::Match { steps, case } => match_go(steps, case, v),
            Kind::PersonProfile => format!(
                "MATCH (n:person) WHERE id(n) == {v} RETURN n.person.first_name AS firstName, \
                 n.person.last_name AS lastName, n.person.gender AS gender, n.person.birthday AS birthday, \
                 n.person.creation_date AS creationDate"
            ),
            Kind::PersonFriends => format!(
                "MATCH (n:person)-[k:knows]-(f:person) WHERE id(n) == {v} RETURN id(f) AS personId, \
                 f.person.first_name AS firstName, f.person.last_name AS lastName, k.time AS friendshipTime \
                 ORDER BY friendshipTime DESC, personId"
            ),
            Kind::FriendsOfFriends => format!(
                "MATCH (n:person)-[:knows]-(:person)-[:knows]-(o:person) WHERE id(n) == {v} AND id(o) <> {v} \
                 AND NOT (n)-[:knows]-(o) RETURN DISTINCT id(o)"
            ),
            Kind::Snb(n) => snb_read(n, v),
            Kind::MatchRageCount3 => format!("{} RETURN count(*)", match_rage_walk(v)),
            Kind::MatchRageRecommend => format!(
                "{} RETURN id(r) AS j, count(*) AS c ORDER BY c DESC, j LIMIT {}",
                match_rage_walk(v),
                TOP_ITEMS as u64 + likes
            ),
            _ => unreachable!("not a read workload"),
        }
    }

    /// Runs the workload once from `v` (to `u`) and returns its digest.
    pub fn digest(&self, conn: &mut dyn Conn, v: i64, u: i64, likes: u64) -> Result<Json, String> {
        let (rows, _) = conn.run(&self.statement(v, u, likes))?;
        Ok(match self.kind {
            Kind::ShortestPath => json!({ "length": rows.first().map_or(-1, |r| int(&r[0])) }),
            Kind::AllShortestPaths => {
                json!({ "length": rows.first().map_or(-1, |r| int(&r[0])), "paths": rows.len() })
            }
            Kind::Subgraph2 => {
                // Every vertex and edge listed, each once: the vertices within two steps, and the edges between them.
                let mut vertices = std::collections::HashSet::new();
                let mut edges = std::collections::HashSet::new();
                for r in &rows {
                    for v in list(&r[0]) {
                        if let Value::Vertex(v) = v {
                            vertices.insert(int(&v.vid));
                        }
                    }
                    for e in list(&r[1]) {
                        if let Value::Edge(e) = e {
                            let (src, dst) = if e.edge_type > 0 { (&e.src, &e.dst) } else { (&e.dst, &e.src) };
                            edges.insert((int(src), int(dst), e.ranking));
                        }
                    }
                }
                json!({ "vertices": vertices.len(), "edges": edges.len() })
            }
            Kind::Go { case: 4, .. }
            | Kind::Match { case: 4, .. }
            | Kind::PersonProfile
            | Kind::PersonFriends
            | Kind::Snb(_) => {
                let mut rows: Vec<Json> = rows.iter().map(|r| Json::Array(r.iter().map(json_of).collect())).collect();
                // Each row's key made once, as the peers' `sorted(key=...)` does (`sort_by_key` would serialise two
                // rows per comparison, timed as Quiver's latency).
                rows.sort_by_cached_key(|r| r.to_string());
                json!({ "rows": rows })
            }
            Kind::Go { .. } | Kind::Match { .. } | Kind::FriendsOfFriends => {
                let sum = rows.iter().fold(0i64, |acc, r| (acc + digest_value(&r[0])) % MODULUS);
                json!({ "rows": rows.len(), "sum": sum })
            }
            Kind::Count2 | Kind::RageCount3 | Kind::MatchRageCount3 => json!({ "count": int(&rows[0][0]) }),
            Kind::RageRecommend | Kind::MatchRageRecommend => {
                let liked = if self.kind == Kind::RageRecommend { liked(conn, v)? } else { liked_match(conn, v)? };
                let top: Vec<Json> = rows
                    .iter()
                    .filter(|r| !liked.contains(&int(&r[0])))
                    .take(TOP_ITEMS)
                    .map(|r| json!([int(&r[0]), int(&r[1])]))
                    .collect();
                json!({ "top": top })
            }
            _ => unreachable!("not a read workload"),
        })
    }

    /// Request generator for client `c` of a ladder.
    pub fn request(&self, ds: &Dataset, c: usize, likes: u64) -> Request {
        let w = self.clone();
        // Start vertices are persons with out-edges; inserts draw their other ends from them too.
        let starts = ds.starts.clone();
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ ((c as u64 + 1) * 0x1000_0000_01b3));
        // Inserted edges get ranks no generated edge has, distinct per client and request.
        let rank_base = 1_000_000_000 * (c as i64 + 1);
        Box::new(move |conn: &mut dyn Conn, i: u64| -> Result<u64, String> {
            let at = (c * 7919 + i as usize) % starts.len();
            let v = starts[at];
            match w.kind {
                Kind::Go { .. }
                | Kind::Count2
                | Kind::RageCount3
                | Kind::Match { .. }
                | Kind::MatchRageCount3
                | Kind::ShortestPath
                | Kind::AllShortestPaths
                | Kind::Subgraph2
                | Kind::PersonProfile
                | Kind::PersonFriends
                | Kind::FriendsOfFriends
                | Kind::Snb(_) => conn.run(&w.statement(v, partner(&starts, at), likes)).map(|_| 0),
                Kind::RageRecommend => {
                    liked(conn, v)?;
                    conn.run(&w.statement(v, v, likes)).map(|_| 0)
                }
                Kind::MatchRageRecommend => {
                    liked_match(conn, v)?;
                    conn.run(&w.statement(v, v, likes)).map(|_| 0)
                }
                Kind::RecommendMix => {
                    let steps = match rng.below(10) {
                        0..=6 => 1,
                        7..=8 => 2,
                        _ => 3,
                    };
                    conn.run(&go(steps, 1, v)).map(|_| 0)
                }
                Kind::FollowMix => {
                    if rng.below(100) == 0 {
                        insert_one(conn, &mut rng, &starts, v, rank_base, i)
                    } else {
                        conn.run(&go(1, 1, v)).map(|_| 0)
                    }
                }
                Kind::InsertEdge => insert_one(conn, &mut rng, &starts, v, rank_base, i),
                Kind::InsertBatch => {
                    let mut stmt = String::from("INSERT EDGE knows(time) VALUES ");
                    for k in 0..BATCH_EDGES {
                        let src = pick(&mut rng, &starts);
                        let dst = pick(&mut rng, &starts);
                        let rank = rank_base + 500_000_000 + (i * BATCH_EDGES + k) as i64;
                        if k > 0 {
                            stmt.push(',');
                        }
                        stmt.push_str(&format!("{src}->{dst}@{rank}:({})", TIME_BASE + k));
                    }
                    conn.run(&stmt).map(|_| BATCH_EDGES)
                }
            }
        })
    }
}

/// The other end of the path searches from the `i`-th start: the next start in the list that is another vertex
/// (`bench/peers.py` pairs them the same way).
pub fn partner(starts: &[i64], i: usize) -> i64 {
    (1..starts.len()).map(|k| starts[(i + k) % starts.len()]).find(|&u| u != starts[i]).unwrap_or(starts[i])
}

fn pick(rng: &mut Rng, vids: &[i64]) -> i64 {
    vids[rng.below(vids.len() as u64) as usize]
}

/// One `knows` edge from `v` to a random person, with a rank no generated edge has. Returns the rows written.
/// `i` numbers the client's requests.
fn insert_one(
    conn: &mut dyn Conn,
    rng: &mut Rng,
    persons: &[i64],
    v: i64,
    rank_base: i64,
    i: u64,
) -> Result<u64, String> {
    let dst = pick(rng, persons);
    conn.run(&format!("INSERT EDGE knows(time) VALUES {v}->{dst}@{}:({})", rank_base + i as i64, TIME_BASE + i))
        .map(|_| 1)
}

/// NebulaGraph's performance test statements (`../shared/seeds/001_*.txt`).
fn go(steps: u32, case: u32, v: i64) -> String {
    let head = format!("GO {steps} STEPS FROM {v} OVER knows");
    match case {
        1 => format!("{head} YIELD dst(edge)"),
        2 => format!("{head} YIELD knows.time"),
        3 => format!("{head} YIELD $$.person.first_name"),
        _ => format!(
            "{head} YIELD DISTINCT knows.time AS t, $$.person.first_name, $$.person.last_name, $$.person.birthday AS birth \
             | ORDER BY $-.t, $-.birth | LIMIT 10"
        ),
    }
}

/// The names of LDBC's short reads IS1-IS7, in order.
pub const SNB_NAMES: [&str; 7] = [
    "is1-profile",
    "is2-recent-messages",
    "is3-friends",
    "is4-message-content",
    "is5-message-creator",
    "is6-message-forum",
    "is7-message-replies",
];

/// LDBC SNB Interactive v1 short read IS`n` from `v` (a person for IS1-IS3, a message for IS4-IS7) as a MATCH in
/// NebulaGraph's dialect, returning the specification's columns. A post carries the tags `message` and `post`; a
/// message's root post is the end of its `reply_of` chain (`*0..`: a post is its own root).
fn snb_read(n: u8, v: i64) -> String {
    const PERSON: &str = "p.person.first_name AS firstName, p.person.last_name AS lastName";
    match n {
        1 => format!(
            "MATCH (n:person)-[:is_located_in]->(c:place) WHERE id(n) == {v} RETURN n.person.first_name AS firstName, \
             n.person.last_name AS lastName, n.person.birthday AS birthday, n.person.location_ip AS locationIP, \
             n.person.browser_used AS browserUsed, id(c) AS cityId, n.person.gender AS gender, \
             n.person.creation_date AS creationDate"
        ),
        2 => format!(
            "MATCH (n:person)<-[:has_creator]-(m:message) WHERE id(n) == {v} \
             WITH m, m.message.creation_date AS created, id(m) AS messageId ORDER BY created DESC, messageId DESC LIMIT 10 \
             MATCH (m)-[:reply_of*0..]->(o:post)-[:has_creator]->(p:person) \
             RETURN messageId, m.message.content AS messageContent, created AS messageCreationDate, \
             id(o) AS originalPostId, id(p) AS originalPostAuthorId, p.person.first_name AS originalPostAuthorFirstName, \
             p.person.last_name AS originalPostAuthorLastName ORDER BY messageCreationDate DESC, messageId DESC"
        ),
        3 => format!(
            "MATCH (n:person)-[k:knows]-(p:person) WHERE id(n) == {v} RETURN id(p) AS personId, {PERSON}, \
             k.creation_date AS friendshipCreationDate ORDER BY friendshipCreationDate DESC, personId"
        ),
        4 => format!(
            "MATCH (m:message) WHERE id(m) == {v} \
             RETURN m.message.creation_date AS messageCreationDate, m.message.content AS messageContent"
        ),
        5 => format!("MATCH (m:message)-[:has_creator]->(p:person) WHERE id(m) == {v} RETURN id(p) AS personId, {PERSON}"),
        6 => format!(
            "MATCH (m:message)-[:reply_of*0..]->(:post)<-[:container_of]-(f:forum)-[:has_moderator]->(p:person) \
             WHERE id(m) == {v} RETURN id(f) AS forumId, f.forum.title AS forumTitle, id(p) AS moderatorId, \
             p.person.first_name AS moderatorFirstName, p.person.last_name AS moderatorLastName"
        ),
        _ => format!(
            "MATCH (m:message)<-[:reply_of]-(c:message)-[:has_creator]->(p:person) WHERE id(m) == {v} \
             OPTIONAL MATCH (m)-[:has_creator]->(:person)-[k:knows]-(p) \
             RETURN id(c) AS commentId, c.message.content AS commentContent, \
             c.message.creation_date AS commentCreationDate, id(p) AS replyAuthorId, \
             p.person.first_name AS replyAuthorFirstName, p.person.last_name AS replyAuthorLastName, \
             k IS NOT NULL AS replyAuthorKnowsOriginalMessageAuthor ORDER BY commentCreationDate DESC, replyAuthorId"
        ),
    }
}

/// Out LIKES, in LIKES, out LIKES from `v`, one row per walk, the last item as `j`.
fn rage_walk(v: i64) -> String {
    format!(
        "GO FROM {v} OVER likes YIELD likes._dst AS i | GO FROM $-.i OVER likes REVERSELY YIELD likes._dst AS q \
         | GO FROM $-.q OVER likes YIELD likes._dst AS j"
    )
}

/// The MATCH form of [`go`]: the path of `steps` knows edges from `v`, the last edge `e` to `d`, returning what
/// case 1-4 yields. For example case 1 at 2 steps:
/// `MATCH (v:person)-[:knows]->()-[:knows]->(d) WHERE id(v) == {v} RETURN id(d)`.
fn match_go(steps: u32, case: u32, v: i64) -> String {
    let mut q = String::from("MATCH (v:person)");
    for _ in 1..steps {
        q.push_str("-[:knows]->()");
    }
    let ret = match case {
        1 => "id(d)",
        2 => "e.time",
        3 => "d.person.first_name",
        _ => {
            "DISTINCT e.time AS t, d.person.first_name, d.person.last_name, d.person.birthday AS birth \
             ORDER BY t, birth LIMIT 10"
        }
    };
    let edge = if case == 1 { "[:knows]" } else { "[e:knows]" };
    let _ = write!(q, "-{edge}->(d) WHERE id(v) == {v} RETURN {ret}");
    q
}

/// The MATCH form of [`rage_walk`]: out LIKES, in LIKES, out LIKES from `v`, one row per path (the person `o` is
/// never `p` and the item `r` never `i`: no edge twice), the last item `r`.
fn match_rage_walk(v: i64) -> String {
    format!("MATCH (p:person)-[:likes]->(i)<-[:likes]-(o)-[:likes]->(r) WHERE id(p) == {v}")
}

fn liked(conn: &mut dyn Conn, v: i64) -> Result<std::collections::HashSet<i64>, String> {
    let (rows, _) = conn.run(&format!("GO FROM {v} OVER likes YIELD likes._dst"))?;
    Ok(rows.iter().map(|r| int(&r[0])).collect())
}

/// The items `v` likes, asked with MATCH (the liked items of [`Kind::MatchRageRecommend`]).
fn liked_match(conn: &mut dyn Conn, v: i64) -> Result<std::collections::HashSet<i64>, String> {
    let (rows, _) = conn.run(&format!("MATCH (p:person)-[:likes]->(i) WHERE id(p) == {v} RETURN id(i)"))?;
    Ok(rows.iter().map(|r| int(&r[0])).collect())
}

fn list(v: &Value) -> &[Value] {
    match v {
        Value::List(items) => items,
        _ => &[],
    }
}

fn int(v: &Value) -> i64 {
    match v {
        Value::Int(i) => *i,
        _ => i64::MIN,
    }
}

/// A row's contribution to a digest sum: ids and times as numbers, names by their length.
fn digest_value(v: &Value) -> i64 {
    match v {
        Value::Int(i) => i.rem_euclid(MODULUS),
        Value::String(s) => s.chars().count() as i64,
        _ => 0,
    }
}

fn json_of(v: &Value) -> Json {
    match v {
        Value::Int(i) => json!(i),
        Value::String(s) => json!(&**s),
        Value::Float(f) => json!(f),
        Value::Bool(b) => json!(b),
        other => json!(other.to_string()),
    }
}
