#!/usr/bin/env python3
"""The peers of `quiver bench`: loads a dataset's CSV files into DuckDB, Kuzu, ladybug and Neo4j, and runs the
read workloads from the same start vertices, reporting load figures, per-query latencies and a digest of each
answer computed exactly as Quiver's (crates/bench/src/workloads.rs). Each system runs in its own process (Kuzu and
ladybug cannot be imported into one); Neo4j runs in a JVM (bench/neo4j/NeoPeer.java, built by bench/setup.sh).
A system stops taking start vertices for a workload once it has spent `budget_s` seconds on it (at least one
start is always run), so a slow peer is compared on the first starts only.

Semantics, as NebulaGraph's GO: `GO N STEPS` returns the edges of the N-th step, walked from the de-duplicated
set of vertices the previous step reached; the RageDB walk (out, in, out) counts every walk (an edge may be
reused, as `(p)-[:likes]->(i)<-[:likes]-(p)`), in every system.

The `match*` workloads are the openCypher MATCH forms of those, on MATCH's semantics: one row per path, no
de-duplication between steps, and no relationship twice within one path (relationship isomorphism, as Neo4j and
NebulaGraph). Neo4j runs the Cypher statement as it is; Kuzu and ladybug match fixed-length patterns as walks (a
relationship may repeat, and `recursive_pattern_semantic` applies to variable-length patterns only), so their
statement adds `id(e_i) <> id(e_j)` for every pair of the path's relationships; DuckDB's SQL joins one `knows` or
`likes` row per relationship with the same pairwise inequalities (an edge is its (src, dst): rank 0, no duplicate
rows in the files).

The `snb` kind is the LDBC SNB Interactive v1 test network (crates/bench/src/gen.rs's `snb`) and its workloads
LDBC's short reads IS1-IS7: IS1-IS3 start from persons (`starts`), IS4-IS7 from messages (`message_starts`).

Usage: peers.py SPEC.json            (SPEC is written by `quiver bench`)
"""
import json, os, shutil, subprocess, sys, time

MOD = 1_000_000_007


def rss_bytes():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def dir_bytes(path):
    if os.path.isfile(path):
        return os.path.getsize(path)
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            try:
                total += os.path.getsize(os.path.join(root, f))
            except OSError:
                pass
    return total


# ---------------------------------------------------------------- digests (as workloads.rs computes them)

def digest_value(v):
    if isinstance(v, bool):
        return 0
    if isinstance(v, int):
        return v % MOD
    if isinstance(v, str):
        return len(v)
    return 0


# LDBC's short reads, in order (workloads.rs's SNB_NAMES); IS4-IS7 start from messages.
SNB_READS = ["is1-profile", "is2-recent-messages", "is3-friends", "is4-message-content", "is5-message-creator",
             "is6-message-forum", "is7-message-replies"]
MESSAGE_READS = SNB_READS[3:]


def digest_kind(workload):
    """How a workload's answer is digested: `rows` (the rows as a set), `sum` (row count and checksum of the first
    column), `count` (one count), `top` (the recommendation without the liked items), `length` (a shortest path's
    length, -1 for none) or `shortest` (the length and the number of shortest paths, from one row of both)."""
    if workload == "shortest-path":
        return "length"
    if workload == "all-shortest-paths":
        return "shortest"
    if workload == "subgraph-2-steps":
        return "subgraph"
    if workload.endswith("distinct-order-limit") or workload in ["person-profile", "person-friends"] + SNB_READS:
        return "rows"
    if workload == "friends-of-friends":
        return "sum"
    if workload in ("go2-count-over-all", "rage-3hop-count", "match-rage-3hop-count"):
        return "count"
    if workload in ("rage-recommend", "match-rage-recommend"):
        return "top"
    if workload.startswith("go") or workload.startswith("match"):
        return "sum"
    raise ValueError(workload)


def digest_rows(workload, rows, liked=None, top=25):
    kind = digest_kind(workload)
    if kind == "rows":
        out = [list(r) for r in rows]
        out.sort(key=lambda r: json.dumps(r, separators=(",", ":"), ensure_ascii=False))
        return {"rows": out}
    if kind == "sum":
        s = 0
        for r in rows:
            s = (s + digest_value(r[0])) % MOD
        return {"rows": len(rows), "sum": s}
    if kind == "count":
        return {"count": int(rows[0][0])}
    if kind == "subgraph":
        return {"vertices": int(rows[0][0]), "edges": int(rows[0][1])}
    if kind == "length":
        return {"length": int(rows[0][0]) if rows else -1}
    if kind == "shortest":
        return {"length": int(rows[0][0]), "paths": int(rows[0][1])} if rows else {"length": -1, "paths": 0}
    return {"top": [[int(a), int(b)] for a, b in rows if int(a) not in liked][:top]}


def partner(starts, i):
    """The other end of the path searches from the i-th start (as workloads.rs's `partner`)."""
    n = len(starts)
    for k in range(1, n):
        if starts[(i + k) % n] != starts[i]:
            return starts[(i + k) % n]
    return starts[i]


def starts_of(spec, w):
    """The start vertices of a workload (as workloads.rs's `Workload::starts`): messages for IS4-IS7, else persons."""
    return spec["message_starts"] if w in MESSAGE_READS else spec["starts"]


PATH_STEPS = 6


def params(w, v, u):
    """A workload's parameters: the start, and for the path searches its partner."""
    return {"v": v, "u": u} if digest_kind(w) in ("length", "shortest") else {"v": v}


def go_shape(w):
    """(steps, case) of `go{N}-{what}` and `match{N}-{what}`."""
    head, what = w.split("-", 1)
    steps = int(head[-1])
    return steps, {"dst": 1, "edge-prop": 2, "dst-prop": 3, "distinct-order-limit": 4}[what]


# ---------------------------------------------------------------- load figures and the query runner, any system

def measure(spec, path, open_db, load, query, close, qs, edges_q, liked_q):
    """Opens and loads a database (timed), counts its edges, answers a first query (resident memory then), closes
    it (its size on disk), reopens it and answers the first query again (the restart). Returns the load figures
    and `run(workload, v) -> digest` on the reopened database."""
    rss0 = rss_bytes()
    t = time.perf_counter()
    h = open_db()
    load(h)
    seconds = time.perf_counter() - t
    edges = query(h, edges_q, {})[0][0]
    first_w, first = next(iter(qs.items()))
    starts = starts_of(spec, first_w)
    v0 = params(first_w, starts[0], partner(starts, 0))
    query(h, first, v0)
    rss = rss_bytes() - rss0
    close(h)
    del h
    disk = dir_bytes(path)
    t = time.perf_counter()
    h = open_db()
    query(h, first, v0)
    restart = time.perf_counter() - t
    figures = {"edges": edges, "seconds": seconds, "edges_per_s": edges / max(seconds, 1e-9), "disk_bytes": disk,
               "rss_bytes": max(rss, 0), "restart_s": restart}

    def run(w, v, u):
        if digest_kind(w) == "top":
            liked = {r[0] for r in query(h, liked_q, {"v": v})}
            return digest_rows(w, query(h, qs[w], {"v": v}), liked, spec["top"])
        return digest_rows(w, query(h, qs[w], params(w, v, u)))

    return figures, run


# ---------------------------------------------------------------- Cypher (Kuzu, ladybug)

def go_cypher(steps, case):
    q = "MATCH (a:person {id: $v})"
    prev = "a"
    for i in range(1, steps):
        q += f"-[:knows]->(m{i}:person) WITH DISTINCT m{i} MATCH (m{i})"
        prev = f"m{i}"
    q += "-[e:knows]->(b:person) "
    if case == 1:
        return q + "RETURN b.id"
    if case == 2:
        return q + "RETURN e.time"
    if case == 3:
        return q + "RETURN b.first_name"
    return q + "RETURN DISTINCT e.time AS t, b.first_name, b.last_name, b.birthday AS birth ORDER BY t, birth LIMIT 10"


RAGE_WALK = "MATCH (p:person {id: $v})-[:likes]->(i:item)<-[:likes]-(q:person)-[:likes]->(j:item) "
# Neo4j never reuses a relationship within one MATCH pattern: three clauses count the same walks as the others.
NEO4J_RAGE_WALK = "MATCH (p:person {id: $v})-[:likes]->(i:item) MATCH (i)<-[:likes]-(q:person) MATCH (q)-[:likes]->(j:item) "


def distinct_rels(rels, keep, walks):
    """What makes a walk engine (Kuzu, ladybug) match paths as a relationship-isomorphic one does: every pair of the
    path's relationships differs. It is a `WITH` (of the relationships and `keep`, what RETURN reads) and its WHERE,
    not the MATCH's WHERE: ladybug 0.22.0 answers wrongly with `id(e1) <> id(e2)` of two adjacent relationships in a
    MATCH's WHERE (a 3-hop count from a vertex with 42 such paths gave 32). Empty for Neo4j (`walks` false), which
    needs none."""
    if not walks or len(rels) < 2:
        return ""
    pairs = [f"id({a}) <> id({b})" for i, a in enumerate(rels) for b in rels[i + 1:]]
    return f"WITH {', '.join(rels + [keep])} WHERE " + " AND ".join(pairs) + " "


def match_cypher(steps, case, walks):
    """The MATCH form of NebulaGraph's case 1-4 (as workloads.rs's `match_go`): one row per path of `steps` knows
    relationships, none twice, the last one `e` to `d`."""
    rels = [f"e{i}" for i in range(1, steps)] + ["e"]
    q = "MATCH (v:person {id: $v})"
    for r in rels[:-1]:
        q += f"-[{r}:knows]->()" if walks else "-[:knows]->()"
    q += "-[e:knows]->(d) " + distinct_rels(rels, "d", walks)
    if case == 1:
        return q + "RETURN d.id"
    if case == 2:
        return q + "RETURN e.time"
    if case == 3:
        return q + "RETURN d.first_name"
    return q + "RETURN DISTINCT e.time AS t, d.first_name, d.last_name, d.birthday AS birth ORDER BY t, birth LIMIT 10"


def match_rage_walk(walks):
    """The MATCH form of the RageDB walk (as workloads.rs's `match_rage_walk`): paths, no relationship twice."""
    if not walks:
        return "MATCH (p:person {id: $v})-[:likes]->(i)<-[:likes]-(o)-[:likes]->(r) "
    return ("MATCH (p:person {id: $v})-[e1:likes]->(i)<-[e2:likes]-(o)-[e3:likes]->(r) "
            + distinct_rels(["e1", "e2", "e3"], "r", walks))


# The person reads of the social graphs. Friends of friends: a path that uses one relationship twice ends at the
# start, which is left out, so walks (Kuzu, ladybug) and relationship-isomorphic paths (Neo4j) reach the same persons.
PERSON_CYPHER = {
    "person-profile": ("MATCH (n:person {id: $v}) "
                       "RETURN n.first_name, n.last_name, n.gender, n.birthday, n.creation_date"),
    "person-friends": "MATCH (n:person {id: $v})-[k:knows]-(f:person) RETURN f.id, f.first_name, f.last_name, k.time",
    "friends-of-friends": ("MATCH (n:person {id: $v})-[:knows]-(:person)-[:knows]-(o:person) WHERE o.id <> $v "
                           "WITH DISTINCT n, o WHERE NOT EXISTS { MATCH (n)-[:knows]-(o) } RETURN o.id"),
}

# IS1-IS7 (as workloads.rs's `snb_read`). A message's root post is the post at the end of its reply_of chain
# (`*0..`: a post is its own root); a post is a message with is_post (the peers load no post table or label).
SNB_CYPHER = {
    "is1-profile": ("MATCH (n:person {id: $v})-[:is_located_in]->(c:place) RETURN n.first_name, n.last_name, "
                    "n.birthday, n.location_ip, n.browser_used, c.id, n.gender, n.creation_date"),
    "is2-recent-messages": ("MATCH (n:person {id: $v})<-[:has_creator]-(m:message) "
                            "WITH m ORDER BY m.creation_date DESC, m.id DESC LIMIT 10 "
                            "MATCH (m)-[:reply_of*0..]->(o:message)-[:has_creator]->(p:person) WHERE o.is_post "
                            "RETURN m.id, m.content, m.creation_date, o.id, p.id, p.first_name, p.last_name"),
    "is3-friends": ("MATCH (n:person {id: $v})-[k:knows]-(p:person) "
                    "RETURN p.id, p.first_name, p.last_name, k.creation_date"),
    "is4-message-content": "MATCH (m:message {id: $v}) RETURN m.creation_date, m.content",
    "is5-message-creator": ("MATCH (m:message {id: $v})-[:has_creator]->(p:person) "
                            "RETURN p.id, p.first_name, p.last_name"),
    "is6-message-forum": ("MATCH (m:message {id: $v})-[:reply_of*0..]->(o:message)<-[:container_of]-(f:forum)"
                          "-[:has_moderator]->(p:person) WHERE o.is_post "
                          "RETURN f.id, f.title, p.id, p.first_name, p.last_name"),
    "is7-message-replies": ("MATCH (m:message {id: $v})<-[:reply_of]-(c:message)-[:has_creator]->(p:person) "
                            "OPTIONAL MATCH (m)-[:has_creator]->(:person)-[k:knows]-(p) "
                            "RETURN c.id, c.content, c.creation_date, p.id, p.first_name, p.last_name, k IS NOT NULL"),
}


def cypher_queries(spec, walk=RAGE_WALK, walks=True):
    """The Cypher statements; `walks`: the system matches fixed-length patterns as walks (Kuzu, ladybug), so the
    MATCH forms spell out that no relationship is used twice."""
    qs = {}
    for w in spec["workloads"]:
        if w == "go2-count-over-all":
            qs[w] = "MATCH (a:person {id: $v})-[:knows]->(m:person) WITH DISTINCT m MATCH (m)-[:knows]->(b) RETURN count(*)"
        elif w.startswith("go"):
            qs[w] = go_cypher(*go_shape(w))
        elif w == "rage-3hop-count":
            qs[w] = walk + "RETURN count(*)"
        elif w == "rage-recommend":
            qs[w] = walk + f"RETURN j.id AS j, count(*) AS c ORDER BY c DESC, j LIMIT {spec['top'] + spec['likes']}"
        elif w == "match-rage-3hop-count":
            qs[w] = match_rage_walk(walks) + "RETURN count(*)"
        elif w == "match-rage-recommend":
            qs[w] = (match_rage_walk(walks)
                     + f"RETURN r.id AS j, count(*) AS c ORDER BY c DESC, j LIMIT {spec['top'] + spec['likes']}")
        elif w.startswith("match"):
            qs[w] = match_cypher(*go_shape(w), walks)
        elif w == "subgraph-2-steps":
            # The vertices within two steps both ways (the start included once), then the edges between them. Kuzu
            # 0.11.3 answers `CASE WHEN a.id IN ids THEN ids ELSE ids + [a.id] END` with the ELSE branch even when
            # the condition holds, so Kuzu and ladybug add the start with their own list functions.
            ball = ("list_distinct(list_append(ids, a.id))" if walks
                    else "CASE WHEN a.id IN ids THEN ids ELSE ids + [a.id] END")
            qs[w] = ("MATCH (a:person {id: $v})-[:knows*1..2]-(b:person) WITH a, collect(DISTINCT b.id) AS ids "
                     f"WITH {ball} AS ball "
                     "UNWIND ball AS i MATCH (x:person {id: i})-[r:knows]->(y:person) WHERE y.id IN ball "
                     "RETURN size(ball) AS n, count(r) AS m")
        elif w in ("shortest-path", "all-shortest-paths"):
            kind = "SHORTEST" if w == "shortest-path" else "ALL SHORTEST"
            ret = "length(p)" if w == "shortest-path" else "length(p) AS l, count(*) AS n"
            if walks:
                # Kuzu and ladybug: recursive relationships with a shortest-path semantic.
                qs[w] = (f"MATCH p = (a:person {{id: $v}})-[:knows* {kind} 1..{PATH_STEPS}]-(b:person {{id: $u}}) "
                         f"RETURN {ret}")
            else:
                fn = "shortestPath" if w == "shortest-path" else "allShortestPaths"
                qs[w] = (f"MATCH (a:person {{id: $v}}), (b:person {{id: $u}}) "
                         f"MATCH p = {fn}((a)-[:knows*..{PATH_STEPS}]-(b)) RETURN {ret}")
        elif w in PERSON_CYPHER:
            qs[w] = PERSON_CYPHER[w]
        elif w in SNB_CYPHER:
            # Kuzu and ladybug take at most 30 hops (`*0..100` is refused): the bound spelled out. The test
            # network's reply chains are 5 long at most.
            qs[w] = SNB_CYPHER[w].replace("*0..]", "*0..30]") if walks else SNB_CYPHER[w]
    return qs


def edge_count_query(spec):
    """The edges loaded: knows, likes, or every relationship of the snb network (as Quiver's figure counts them)."""
    if spec["kind"] == "snb":
        return "MATCH ()-[e]->() RETURN count(*)"
    return f"MATCH ()-[e:{'knows' if spec['kind'] == 'social' else 'likes'}]->() RETURN count(*)"


# The snb files (gen.rs's `snb`) as tables: the node tables' columns, then the relationship tables' ends and
# properties. post.csv is not loaded: a post is a message with is_post.
SNB_NODES = {
    "person": "id INT64, first_name STRING, last_name STRING, gender STRING, birthday INT64, creation_date INT64, "
              "location_ip STRING, browser_used STRING",
    "message": "id INT64, creation_date INT64, content STRING, length INT64, is_post BOOLEAN",
    "forum": "id INT64, title STRING, creation_date INT64",
    "place": "id INT64, name STRING",
}
SNB_EDGES = {
    "knows": ("person", "person", ", creation_date INT64"),
    "has_creator": ("message", "person", ""),
    "reply_of": ("message", "message", ""),
    "container_of": ("forum", "message", ""),
    "has_moderator": ("forum", "person", ""),
    "is_located_in": ("person", "place", ""),
}


LIKED_QUERY = "MATCH (p:person {id: $v})-[:likes]->(i:item) RETURN i.id"


def run_cypher_system(mod, spec, path):
    shutil.rmtree(path, ignore_errors=True)
    d = spec["dir"]

    def open_db():
        db = mod.Database(path)
        return db, mod.Connection(db)

    def load(h):
        conn = h[1]
        if spec["kind"] == "social":
            conn.execute("CREATE NODE TABLE person(id INT64, first_name STRING, last_name STRING, gender STRING, birthday INT64, creation_date INT64, PRIMARY KEY(id))")
            conn.execute("CREATE REL TABLE knows(FROM person TO person, time INT64)")
            conn.execute(f"COPY person FROM '{d}/person.csv' (HEADER=true)")
            conn.execute(f"COPY knows FROM '{d}/knows.csv' (HEADER=true)")
        elif spec["kind"] == "snb":
            # The files hold no `"` (the default quote and escape), so their single quotes and commas read as text.
            for t, cols in SNB_NODES.items():
                conn.execute(f"CREATE NODE TABLE {t}({cols}, PRIMARY KEY(id))")
            for t, (a, b, props) in SNB_EDGES.items():
                conn.execute(f"CREATE REL TABLE {t}(FROM {a} TO {b}{props})")
            for t in list(SNB_NODES) + list(SNB_EDGES):
                conn.execute(f"COPY {t} FROM '{d}/{t}.csv' (HEADER=true, DELIM='|')")
        else:
            conn.execute("CREATE NODE TABLE person(id INT64, PRIMARY KEY(id))")
            conn.execute("CREATE NODE TABLE item(id INT64, PRIMARY KEY(id))")
            conn.execute("CREATE REL TABLE likes(FROM person TO item, weight DOUBLE)")
            conn.execute(f"COPY person FROM '{d}/person.csv' (HEADER=true)")
            conn.execute(f"COPY item FROM '{d}/item.csv' (HEADER=true)")
            conn.execute(f"COPY likes FROM '{d}/likes.csv' (HEADER=true)")

    return measure(spec, path, open_db, load, lambda h, q, p: h[1].execute(q, p).get_all(), lambda h: None,
                   cypher_queries(spec), edge_count_query(spec), LIKED_QUERY)


# ---------------------------------------------------------------- DuckDB (SQL joins)

def duck_go(steps, case):
    q = "WITH f0 AS (SELECT $v AS v)"
    for i in range(1, steps):
        q += f", f{i} AS (SELECT DISTINCT k.dst AS v FROM f{i-1} JOIN knows k ON k.src = f{i-1}.v)"
    last = f"f{steps-1}"
    body = f" FROM {last} JOIN knows e ON e.src = {last}.v"
    if case == 1:
        return q + " SELECT e.dst" + body
    if case == 2:
        return q + " SELECT e.time" + body
    if case == 3:
        return q + " SELECT b.first_name" + body + " LEFT JOIN person b ON b.id = e.dst"
    return (q + " SELECT DISTINCT e.time AS t, b.first_name, b.last_name, b.birthday AS birth" + body
            + " LEFT JOIN person b ON b.id = e.dst ORDER BY t, birth LIMIT 10")


DUCK_WALK = "FROM likes a JOIN likes b ON b.dst = a.dst JOIN likes c ON c.src = b.src WHERE a.src = $v"


def duck_distinct_edges(edges):
    """No edge twice in one path: every pair of the joined edge rows differs (an edge is its (src, dst))."""
    return "".join(f" AND NOT ({a}.src = {b}.src AND {a}.dst = {b}.dst)"
                   for i, a in enumerate(edges) for b in edges[i + 1:])


def duck_match(steps, case):
    """The MATCH form of case 1-4 in SQL: one knows row per relationship of the path (k1 .. e), joined end to start,
    pairwise distinct, no de-duplication between steps."""
    edges = [f"k{i}" for i in range(1, steps)] + ["e"]
    body = f" FROM knows {edges[0]}"
    for a, b in zip(edges, edges[1:]):
        body += f" JOIN knows {b} ON {b}.src = {a}.dst"
    if case in (3, 4):
        body += " LEFT JOIN person d ON d.id = e.dst"
    body += f" WHERE {edges[0]}.src = $v" + duck_distinct_edges(edges)
    if case == 1:
        return "SELECT e.dst" + body
    if case == 2:
        return "SELECT e.time" + body
    if case == 3:
        return "SELECT d.first_name" + body
    return "SELECT DISTINCT e.time AS t, d.first_name, d.last_name, d.birthday AS birth" + body + " ORDER BY t, birth LIMIT 10"


# The MATCH form of the RageDB walk: paths (a, b, c), no edge twice.
DUCK_MATCH_WALK = DUCK_WALK + duck_distinct_edges(["a", "b", "c"])


def duck_shortest(first_only):
    """Shortest paths between $v and $u over knows both ways in SQL: breadth-first levels unrolled (a vertex's level
    is the first it appears in; its count, the paths that reach it, summed over the edges from the level before),
    then the first level that holds $u."""
    q = ("WITH e AS (SELECT src, dst FROM knows UNION ALL SELECT dst AS src, src AS dst FROM knows), "
         "l0 AS (SELECT CAST($v AS BIGINT) AS v, CAST(1 AS HUGEINT) AS n)")
    for k in range(1, PATH_STEPS + 1):
        seen = " UNION ALL ".join(f"SELECT v FROM l{j}" for j in range(k))
        q += (f", l{k} AS (SELECT e.dst AS v, sum(l{k-1}.n) AS n FROM l{k-1} JOIN e ON e.src = l{k-1}.v "
              f"WHERE e.dst NOT IN ({seen}) GROUP BY e.dst)")
    found = " UNION ALL ".join(f"SELECT {k} AS k, n FROM l{k} WHERE v = $u" for k in range(1, PATH_STEPS + 1))
    cols = "k" if first_only else "k, n"
    return q + f" SELECT {cols} FROM ({found}) ORDER BY k LIMIT 1"


def duck_friends(time):
    """One row per knows edge touching $v, either way: the friend, its names and the edge's `time` column."""
    return (f"SELECT p.id, p.first_name, p.last_name, k.t FROM (SELECT e.dst AS f, e.{time} AS t FROM knows e "
            f"WHERE e.src = $v UNION ALL SELECT e.src, e.{time} FROM knows e WHERE e.dst = $v) k "
            "JOIN person p ON p.id = k.f")


DUCK_PERSON = {
    "person-profile": "SELECT first_name, last_name, gender, birthday, creation_date FROM person WHERE id = $v",
    "person-friends": duck_friends("time"),
    "friends-of-friends": ("WITH e AS (SELECT src, dst FROM knows UNION ALL SELECT dst AS src, src AS dst FROM knows), "
                           "f AS (SELECT dst AS v FROM e WHERE src = $v) "
                           "SELECT DISTINCT e.dst FROM f JOIN e ON e.src = f.v "
                           "WHERE e.dst <> $v AND e.dst NOT IN (SELECT v FROM f)"),
}


def duck_roots(of):
    """The recursive CTE `up(m, o)`: the messages o on the reply_of chain of each message m of `of` (a CTE with an
    `id` column), m itself included; the post among them is m's root."""
    return f"up(m, o) AS (SELECT id, id FROM {of} UNION ALL SELECT up.m, r.dst FROM up JOIN reply_of r ON r.src = up.o)"


# IS1-IS7 in SQL, one table per file. IS7's LEFT JOIN is the OPTIONAL MATCH: one row per knows edge found, else NULL.
DUCK_SNB = {
    "is1-profile": ("SELECT p.first_name, p.last_name, p.birthday, p.location_ip, p.browser_used, l.dst, p.gender, "
                    "p.creation_date FROM person p JOIN is_located_in l ON l.src = p.id WHERE p.id = $v"),
    "is2-recent-messages": ("WITH RECURSIVE recent AS (SELECT m.id, m.content, m.creation_date FROM has_creator h "
                            "JOIN message m ON m.id = h.src WHERE h.dst = $v "
                            "ORDER BY m.creation_date DESC, m.id DESC LIMIT 10), " + duck_roots("recent") +
                            " SELECT recent.id, recent.content, recent.creation_date, o.id, p.id, p.first_name, "
                            "p.last_name FROM recent JOIN up ON up.m = recent.id JOIN message o ON o.id = up.o "
                            "JOIN has_creator h ON h.src = o.id JOIN person p ON p.id = h.dst WHERE o.is_post"),
    "is3-friends": duck_friends("creation_date"),
    "is4-message-content": "SELECT creation_date, content FROM message WHERE id = $v",
    "is5-message-creator": ("SELECT p.id, p.first_name, p.last_name FROM has_creator h JOIN person p ON p.id = h.dst "
                            "WHERE h.src = $v"),
    "is6-message-forum": ("WITH RECURSIVE start AS (SELECT CAST($v AS BIGINT) AS id), " + duck_roots("start") +
                          " SELECT f.id, f.title, p.id, p.first_name, p.last_name FROM up "
                          "JOIN message o ON o.id = up.o JOIN container_of c ON c.dst = o.id "
                          "JOIN forum f ON f.id = c.src JOIN has_moderator hm ON hm.src = f.id "
                          "JOIN person p ON p.id = hm.dst WHERE o.is_post"),
    "is7-message-replies": ("WITH friends AS (SELECT k.dst AS p FROM has_creator h JOIN (SELECT src, dst FROM knows "
                            "UNION ALL SELECT dst, src FROM knows) k ON k.src = h.dst WHERE h.src = $v) "
                            "SELECT c.id, c.content, c.creation_date, p.id, p.first_name, p.last_name, "
                            "friends.p IS NOT NULL FROM reply_of r JOIN message c ON c.id = r.src "
                            "JOIN has_creator hc ON hc.src = c.id JOIN person p ON p.id = hc.dst "
                            "LEFT JOIN friends ON friends.p = p.id WHERE r.dst = $v"),
}


def duck_queries(spec):
    qs = {}
    for w in spec["workloads"]:
        if w in ("shortest-path", "all-shortest-paths"):
            qs[w] = duck_shortest(w == "shortest-path")
            continue
        if w == "subgraph-2-steps":
            qs[w] = ("WITH e AS (SELECT src, dst FROM knows UNION ALL SELECT dst AS src, src AS dst FROM knows), "
                     "b1 AS (SELECT DISTINCT dst AS v FROM e WHERE src = $v), "
                     "ball AS (SELECT CAST($v AS BIGINT) AS v UNION SELECT v FROM b1 "
                     "UNION SELECT e.dst FROM b1 JOIN e ON e.src = b1.v) "
                     "SELECT (SELECT count(*) FROM ball), "
                     "(SELECT count(*) FROM knows k WHERE k.src IN (SELECT v FROM ball) AND k.dst IN (SELECT v FROM ball))")
            continue
        if w == "go2-count-over-all":
            qs[w] = ("WITH f1 AS (SELECT DISTINCT dst AS v FROM knows WHERE src = $v) "
                     "SELECT count(*) FROM f1 JOIN knows e ON e.src = f1.v")
        elif w.startswith("go"):
            qs[w] = duck_go(*go_shape(w))
        elif w == "rage-3hop-count":
            qs[w] = "SELECT count(*) " + DUCK_WALK
        elif w == "rage-recommend":
            qs[w] = (f"SELECT c.dst AS j, count(*) AS n {DUCK_WALK} GROUP BY c.dst ORDER BY n DESC, j "
                     f"LIMIT {spec['top'] + spec['likes']}")
        elif w == "match-rage-3hop-count":
            qs[w] = "SELECT count(*) " + DUCK_MATCH_WALK
        elif w == "match-rage-recommend":
            qs[w] = (f"SELECT c.dst AS j, count(*) AS n {DUCK_MATCH_WALK} GROUP BY c.dst ORDER BY n DESC, j "
                     f"LIMIT {spec['top'] + spec['likes']}")
        elif w.startswith("match"):
            qs[w] = duck_match(*go_shape(w))
        elif w in DUCK_PERSON:
            qs[w] = DUCK_PERSON[w]
        elif w in DUCK_SNB:
            qs[w] = DUCK_SNB[w]
    return qs


def duck_columns(cols):
    """read_csv's `columns` for a `name TYPE, ...` list."""
    return "{" + ", ".join("'{}': '{}'".format(*c.split()) for c in cols.split(", ")) + "}"


def run_duckdb(spec, path):
    import duckdb
    for p in (path, path + ".wal"):
        if os.path.exists(p):
            os.remove(p)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    d = spec["dir"]
    if spec["kind"] == "snb":
        # The snb files' columns typed as the other peers' (not sniffed), and no quote character (the sniffer could
        # take content's single quotes for one).
        cols = dict(SNB_NODES, **{t: "src INT64, dst INT64" + props for t, (_, _, props) in SNB_EDGES.items()})
        tables = {t: f"delim = '|', header = true, quote = '', escape = '', columns = {duck_columns(c)}"
                  for t, c in cols.items()}
        edges_q = "SELECT " + " + ".join(f"(SELECT count(*) FROM {t})" for t in SNB_EDGES)
    else:
        names = ["person", "knows"] if spec["kind"] == "social" else ["person", "item", "likes"]
        tables = {t: "header = true" for t in names}
        edges_q = f"SELECT count(*) FROM {names[-1]}"

    def load(con):
        for t, options in tables.items():
            con.execute(f"CREATE TABLE {t} AS SELECT * FROM read_csv('{d}/{t}.csv', {options})")
        con.execute("CHECKPOINT")

    return measure(spec, path, lambda: duckdb.connect(path), load, lambda con, q, p: con.execute(q, p).fetchall(),
                   lambda con: con.close(), duck_queries(spec), edges_q, "SELECT dst FROM likes WHERE src = $v")


# ---------------------------------------------------------------- Neo4j (a JVM of its own)

NEO4J_BUILD = os.path.join(os.path.dirname(os.path.abspath(__file__)), ".venv", "neo4j")


def run_neo4j(spec):
    """Runs bench/neo4j/NeoPeer.java, which loads, measures and digests as `measure` and `run_system` do here,
    except for the answers that are a few rows (`raw`, written as they are): those are digested here. The spec tells
    it each workload's starts."""
    cp_file = os.path.join(NEO4J_BUILD, "classpath.txt")
    if not os.path.exists(cp_file):
        raise RuntimeError("the Neo4j peer is not built (run bench/setup.sh)")
    with open(cp_file) as f:
        cp = os.path.join(NEO4J_BUILD, "classes") + ":" + f.read().strip()
    spec_path = os.path.join(spec["work"], "neo4j-spec.json")
    out_path = os.path.join(spec["work"], "neo4j-out.json")
    with open(spec_path, "w") as f:
        json.dump(dict(spec, queries=cypher_queries(spec, NEO4J_RAGE_WALK, walks=False),
                       edge_count_query=edge_count_query(spec),
                       liked_query=LIKED_QUERY,
                       workload_starts={w: starts_of(spec, w) for w in spec["workloads"]},
                       raw=[w for w in spec["workloads"]
                            if digest_kind(w) in ("rows", "length", "shortest", "subgraph")]), f)
    r = subprocess.run(["java", "-Xmx6g", "-cp", cp, "NeoPeer", spec_path, out_path],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"NeoPeer failed ({r.returncode}): {r.stderr.strip().splitlines()[-1:]}")
    with open(out_path) as f:
        out = json.load(f)
    for w, res in out["workloads"].items():
        res["digests"] = [digest_rows(w, d["raw"], set(d.get("liked", [])), spec["top"]) if "raw" in d else d
                          for d in res["digests"]]
    return out


# ---------------------------------------------------------------- driver

def run_system(spec, system):
    work = os.path.join(spec["work"], system)
    if system == "neo4j":
        os.makedirs(spec["work"], exist_ok=True)
        return run_neo4j(spec)
    if system == "duckdb":
        load, run = run_duckdb(spec, os.path.join(work, "db.duckdb"))
    elif system == "kuzu":
        import kuzu
        os.makedirs(work, exist_ok=True)
        load, run = run_cypher_system(kuzu, spec, os.path.join(work, "db"))
    elif system == "ladybug":
        import ladybug
        os.makedirs(work, exist_ok=True)
        load, run = run_cypher_system(ladybug, spec, os.path.join(work, "db"))
    else:
        raise ValueError(f"unknown peer `{system}' (duckdb, kuzu, ladybug, neo4j)")
    load.update({"system": system, "dataset": spec["dataset"]})
    out = {"load": load, "workloads": {}}
    for w in spec["workloads"]:
        # Warm-up, untimed, as Quiver's: every start (`warmup` of them) once, until half the budget is spent.
        warm = time.perf_counter()
        starts = starts_of(spec, w)
        for i, v in enumerate(starts[:spec.get("warmup", 0)]):
            if time.perf_counter() - warm > spec.get("budget_s", float("inf")) / 2:
                break
            run(w, v, partner(starts, i))
        lat, digests = [], []
        for i, v in enumerate(starts):
            t = time.perf_counter()
            digests.append(run(w, v, partner(starts, i)))
            lat.append((time.perf_counter() - t) * 1000.0)
            if sum(lat) / 1000.0 > spec.get("budget_s", float("inf")):
                break
        out["workloads"][w] = {"latencies_ms": lat, "digests": digests}
    return out


def main():
    spec_path = sys.argv[1]
    with open(spec_path) as f:
        spec = json.load(f)
    if len(sys.argv) > 3 and sys.argv[2] == "--system":
        system = sys.argv[3]
        try:
            result = run_system(spec, system)
        except Exception as e:  # reported, not fatal: the other peers still run
            result = {"error": f"{type(e).__name__}: {e}"}
        with open(os.path.join(spec["work"], f"{system}.json"), "w") as f:
            json.dump(result, f)
        return
    os.makedirs(spec["work"], exist_ok=True)
    systems = {}
    for system in spec["systems"]:
        print(f"peer {system} on {spec['dataset']} ...", file=sys.stderr, flush=True)
        t = time.perf_counter()
        part = os.path.join(spec["work"], f"{system}.json")
        if os.path.exists(part):
            os.remove(part)
        r = subprocess.run([sys.executable, __file__, spec_path, "--system", system])
        if os.path.exists(part):
            with open(part) as f:
                systems[system] = json.load(f)
        else:
            systems[system] = {"error": f"the {system} process failed ({r.returncode})"}
        print(f"peer {system} on {spec['dataset']}: {time.perf_counter() - t:.1f} s"
              + (f" ({systems[system]['error']})" if "error" in systems[system] else ""), file=sys.stderr, flush=True)
    with open(spec["out"], "w") as f:
        json.dump({"systems": systems}, f)


if __name__ == "__main__":
    main()
