"""The real nebula3-python client (pinned in requirements.txt) against a Quiver started by this test.

Expected rows are computed from the nba CSV files, never from Quiver's own output.
"""

import csv
import json
import os
import socket
import subprocess
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import pytest
from nebula3.common import ttypes
from nebula3.Config import Config, SessionPoolConfig
from nebula3.gclient.net import ConnectionPool
from nebula3.gclient.net.SessionPool import SessionPool
from nebula3.graph.ttypes import VerifyClientVersionReq

ROOT = Path(__file__).resolve().parents[3]
BIN = Path(os.environ.get("QUIVER_BIN", ROOT / "target" / "debug" / "quiver"))
DATASETS = Path(os.environ.get("QUIVER_DATASETS", ROOT.parent / "shared" / "data" / "nebula-tck-datasets"))
NBA = DATASETS / "nba"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rows(name):
    with open(NBA / name, newline="") as f:
        r = csv.reader(f)
        next(r)
        return list(r)


def likes_of(src):
    """(dst, likeness) of `src`'s like edges, one per distinct edge key, as stored."""
    seen = {}
    for s, d, l in rows("like.csv"):
        if s == src:
            seen[d] = int(l)
    return sorted(seen.items())


PLAYERS = {vid: (name, int(age)) for vid, name, age in rows("player.csv")}


def tags_of(vid):
    """The tags the nba mapping gives `vid` (null.csv and player.csv are both player rows)."""
    files = {"player.csv": "player", "null.csv": "player", "bachelor.csv": "bachelor", "team.csv": "team"}
    return sorted({tag for f, tag in files.items() if any(r[0] == vid for r in rows(f))})


class Server:
    def __init__(self, *extra):
        self.dir = tempfile.TemporaryDirectory()
        self.http = free_port()
        self.port = free_port()
        self.proc = subprocess.Popen(
            [str(BIN), "serve", "--data-dir", self.dir.name, "--http-addr", f"127.0.0.1:{self.http}",
             "--graph-addr", f"127.0.0.1:{self.port}", "--demo", "--datasets", str(DATASETS), *extra],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                self.probe()
                return
            except OSError:
                if self.proc.poll() is not None:
                    raise RuntimeError("quiver exited: " + self.proc.stderr.read().decode())
                time.sleep(0.1)
        raise RuntimeError("quiver did not become ready")

    def probe(self):
        """Raises OSError until the server answers its health check."""
        urllib.request.urlopen(f"http://127.0.0.1:{self.http}/api/v1/health", timeout=1)

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)
        self.dir.cleanup()


class Playground:
    """A local cluster (`quiver playground --demo`: 3 metads, 3 storage hosts, 1 graphd) in place of `quiver serve`,
    when QUIVER_PLAYGROUND is set (scripts/client-tests.sh runs a subset of these tests so)."""

    def __init__(self):
        self.dir = tempfile.TemporaryDirectory()
        offset = 2000 + os.getpid() % 20000
        self.proc = subprocess.Popen(
            [str(BIN), "playground", "--dir", self.dir.name, "--port-offset", str(offset), "--demo",
             "--datasets", str(DATASETS)],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        )
        for line in self.proc.stdout:
            words = line.split()
            if words[:1] == ["graphd"]:
                self.port = int(words[1].rsplit(":", 1)[1])
            elif words[:1] == ["http"]:
                self.http = int(words[1].rsplit(":", 1)[1])
            elif words[:2] == ["playground", "ready"]:
                return
        raise RuntimeError("the playground did not become ready: " + self.proc.stdout.read())

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=60)
        self.dir.cleanup()


@pytest.fixture(scope="module")
def server():
    s = Playground() if os.environ.get("QUIVER_PLAYGROUND") else Server()
    yield s
    s.stop()


@pytest.fixture(scope="module")
def pool(server):
    config = Config()
    config.max_connection_pool_size = 40
    p = ConnectionPool()
    assert p.init([("127.0.0.1", server.port)], config)
    yield p
    p.close()


def ok(result):
    assert result.is_succeeded(), (result.error_code(), result.error_msg())
    return result


def test_go_results_as_primitives(pool):
    with pool.session_context("root", "nebula") as s:
        ok(s.execute("USE nba"))
        r = ok(s.execute('GO FROM "Tim Duncan" OVER like YIELD dst(edge) AS d, like.likeness AS l, $$.player.age AS a'))
        assert r.keys() == ["d", "l", "a"]
        assert r.space_name() == "nba"
        got = sorted((x["d"], x["l"], x["a"]) for x in r.as_primitive())
        want = sorted((d, l, PLAYERS[d][1]) for d, l in likes_of("Tim Duncan"))
        assert got == want and want


def test_vertices_and_edges_are_typed(pool):
    with pool.session_context("root", "nebula") as s:
        ok(s.execute("USE nba"))
        r = ok(s.execute('FETCH PROP ON player, bachelor "Tim Duncan" YIELD vertex AS v'))
        v = r.row_values(0)[0]
        assert v.is_vertex()
        node = v.as_node()
        assert node.get_id().as_string() == "Tim Duncan"
        assert sorted(node.tags()) == ["bachelor", "player"]
        props = node.properties("player")
        assert props["age"].as_int() == PLAYERS["Tim Duncan"][1]
        assert node.properties("bachelor")["speciality"].as_string() == "psychology"

        r = ok(s.execute('GO FROM "Tim Duncan" OVER like YIELD edge AS e'))
        edges = [r.row_values(i)[0].as_relationship() for i in range(r.row_size())]
        got = sorted((e.start_vertex_id().as_string(), e.end_vertex_id().as_string(), e.edge_name(), e.ranking(), e.properties()["likeness"].as_int()) for e in edges)
        assert got == sorted(("Tim Duncan", d, "like", 0, l) for d, l in likes_of("Tim Duncan"))

        # Read reversely, the edge keeps its stored direction.
        r = ok(s.execute('GO FROM "Manu Ginobili" OVER like REVERSELY YIELD edge AS e'))
        sources = sorted(r.row_values(i)[0].as_relationship().start_vertex_id().as_string() for i in range(r.row_size()))
        assert sources == sorted({src for src, dst, _ in rows("like.csv") if dst == "Manu Ginobili"})


def test_scalar_list_map_and_calendar_values(pool):
    with pool.session_context("root", "nebula") as s:
        r = ok(s.execute(
            'YIELD 1.5 AS f, -7 AS i, true AS b, "naïve" AS s, [1, "a"] AS l, {k: 2} AS m, '
            'date("2020-02-29") AS d, time("23:59:58.000001") AS t, datetime("2021-03-04T05:06:07.000008") AS dt, '
            'duration({days: 1, seconds: 2}) AS du, NULL AS n'))
        v = {k: r.row_values(0)[i] for i, k in enumerate(r.keys())}
        assert v["f"].is_double() and v["f"].as_double() == 1.5
        assert v["i"].as_int() == -7 and v["b"].as_bool() is True and v["s"].as_string() == "naïve"
        assert [x.cast() for x in v["l"].as_list()] == [1, "a"]
        assert {k: x.as_int() for k, x in v["m"].as_map().items()} == {"k": 2}
        d = v["d"].as_date()
        assert (d.get_year(), d.get_month(), d.get_day()) == (2020, 2, 29)
        t = v["t"].as_time()
        assert (t.get_hour(), t.get_minute(), t.get_sec(), t.get_microsec()) == (23, 59, 58, 1)
        dt = v["dt"].as_datetime()
        assert (dt.get_year(), dt.get_month(), dt.get_day(), dt.get_hour(), dt.get_minute(), dt.get_sec(), dt.get_microsec()) == (2021, 3, 4, 5, 6, 7, 8)
        assert v["du"].is_duration()
        du = v["du"].as_duration()
        assert (du.get_seconds(), du.get_microseconds(), du.get_months()) == (86402, 0, 0)
        assert v["n"].is_null()
        p = r.as_primitive()[0]
        assert p["f"] == 1.5 and p["l"] == [1, "a"] and p["m"] == {"k": 2} and p["n"] is None


def test_geography_values(pool):
    # NebulaGraph's Geography union (common.thrift): a point, a linestring and a polygon, read as the client's wrappers.
    with pool.session_context("root", "nebula") as s:
        r = ok(s.execute(
            'YIELD ST_Point(3, -8.5) AS p, ST_GeogFromText("LINESTRING(0 1, 2 3)") AS l, '
            'ST_GeogFromText("POLYGON((0 0, 4 0, 0 4, 0 0))") AS g'))
        v = {k: r.row_values(0)[i] for i, k in enumerate(r.keys())}
        assert v["p"].is_geography() and v["p"].as_geography().is_point()
        assert v["l"].as_geography().is_linestring() and v["g"].as_geography().is_polygon()
        # The wrappers' accessors pass the thrift structs through (3.8.3's PointWrapper wraps the Point, not its
        # Coordinate), so the coordinates are read from the thrift values.
        c = v["p"].as_geography().get_geography().get_ptVal().coord
        assert (c.x, c.y) == (3.0, -8.5)
        line = v["l"].as_geography().get_geography().get_lsVal().coordList
        assert [(c.x, c.y) for c in line] == [(0.0, 1.0), (2.0, 3.0)]
        rings = v["g"].as_geography().get_geography().get_pgVal().coordListList
        assert [[(c.x, c.y) for c in ring] for ring in rings] == [[(0.0, 0.0), (4.0, 0.0), (0.0, 4.0), (0.0, 0.0)]]


def test_null_and_empty_are_different(pool):
    with pool.session_context("root", "nebula") as s:
        ok(s.execute("USE nba"))
        # A like row has no serve.start_year: EMPTY. Null1's name is stored as the string "null".
        r = ok(s.execute('GO FROM "Tim Duncan" OVER like, serve YIELD like.likeness AS l, serve.start_year AS y'))
        kinds = sorted((row[0].is_empty(), row[1].is_empty()) for row in (r.row_values(i) for i in range(r.row_size())))
        n_like = len(likes_of("Tim Duncan"))
        n_serve = len([1 for s_, *_ in rows("serve.csv") if s_ == "Tim Duncan"])
        assert kinds == sorted([(False, True)] * n_like + [(True, False)] * n_serve)
        r = ok(s.execute("YIELD NULL AS n"))
        assert r.row_values(0)[0].is_null() and not r.row_values(0)[0].is_empty()


def test_execute_json(pool):
    with pool.session_context("root", "nebula") as s:
        ok(s.execute("USE nba"))
        body = json.loads(s.execute_json('GO FROM "Tim Duncan" OVER like YIELD dst(edge) AS d'))
        assert body["errors"][0]["code"] == 0
        res = body["results"][0]
        assert res["columns"] == ["d"] and res["spaceName"] == "nba"
        assert sorted(r["row"][0] for r in res["data"]) == [d for d, _ in likes_of("Tim Duncan")]
        bad = json.loads(s.execute_json("GO FROM"))
        assert bad["errors"][0]["code"] == -1004


def test_parameters(pool):
    with pool.session_context("root", "nebula") as s:
        ok(s.execute("USE nba"))
        p = {"v": ttypes.Value(sVal=b"Tim Duncan"), "n": ttypes.Value(iVal=90), "f": ttypes.Value(fVal=0.25),
             "l": ttypes.Value(lVal=ttypes.NList(values=[ttypes.Value(iVal=1), ttypes.Value(iVal=2)]))}
        # A parameter is not a VID (NebulaGraph's grammar), but it may stand in a WHERE or a YIELD.
        bad = s.execute_parameter("GO FROM $v OVER like YIELD dst(edge) AS d", p)
        assert (bad.error_code(), bad.error_msg()) == (-1004, "SyntaxError: Parameter is not supported in vid near `$v'")
        r = ok(s.execute_parameter(
            "GO FROM \"Tim Duncan\" OVER like WHERE like.likeness > $n AND src(edge) == $v "
            "YIELD dst(edge) AS d, $f AS f, size($l) AS k", p))
        want = [d for d, l in likes_of("Tim Duncan") if l > 90]
        assert sorted(x["d"] for x in r.as_primitive()) == want and want
        assert all(x["f"] == 0.25 and x["k"] == 2 for x in r.as_primitive())
        # Plain Python values through the client's own conversion.
        r = ok(s.execute_py("YIELD $a + 1 AS a, $b AS b", {"a": 41, "b": ["x", 2.5]}))
        assert r.as_primitive() == [{"a": 42, "b": ["x", 2.5]}]
        body = json.loads(s.execute_json_with_parameter("YIELD $n * 2 AS x", {"n": ttypes.Value(iVal=21)}))
        assert body["results"][0]["data"][0]["row"] == [42]


def test_error_codes_and_messages(pool):
    with pool.session_context("root", "nebula") as s:
        r = s.execute('GO FROM "x" OVER like YIELD dst(edge)')
        assert (r.error_code(), r.error_msg()) == (-1009, "SemanticError: Space was not chosen.")
        r = s.execute("USE no_such_space")
        assert r.error_code() == -1005 and "SpaceNotFound" in r.error_msg()
        r = s.execute("CREATE TAGG x()")
        assert r.error_code() == -1004 and r.error_msg().startswith("SyntaxError:")
        assert not r.is_succeeded()


def test_explain_and_profile_carry_plans(pool):
    with pool.session_context("root", "nebula") as s:
        ok(s.execute("USE nba"))
        r = ok(s.execute('PROFILE GO FROM "Tim Duncan" OVER like YIELD dst(edge) AS d'))
        plan = r.plan_desc()
        assert plan is not None and plan.format == b"row"
        names = [n.name for n in plan.plan_node_descs]
        assert names == [b"Go"], names  # the projection is pushed into the traversal
        go = plan.plan_node_descs[0]
        assert go.profiles[0].rows == len(likes_of("Tim Duncan"))
        assert {p.key for p in go.description} >= {b"from", b"over"}
        assert set(plan.node_index_map.values()) == set(range(len(names)))
        assert r.row_size() == len(likes_of("Tim Duncan"))
        r = ok(s.execute('EXPLAIN FORMAT="dot" GO FROM "Tim Duncan" OVER like YIELD dst(edge) AS d'))
        assert r.plan_desc().format == b"dot"


def test_signout_then_the_pool_still_works(pool):
    conn = pool.get_connection()
    try:
        auth = conn.authenticate("root", "nebula")
        sid = auth.get_session_id()
        assert sid > 0
        assert conn.execute(sid, "YIELD 1").error_code == 0
        conn.signout(sid)
        resp = conn.execute(sid, "YIELD 1")
        assert resp.error_code == -1002
        assert resp.error_msg.decode() == f"Get sessionId[{sid}] failed: Session `{sid}' not found: Session not existed!"
        # Connection-level ping: session id 0.
        resp = conn.execute(0, "YIELD 1")
        assert (resp.error_code, resp.error_msg) == (-1002, b"Invalid session id")
    finally:
        conn.close()
    with pool.session_context("root", "nebula") as s:
        assert ok(s.execute("YIELD 1 AS x")).as_primitive() == [{"x": 1}]


def test_sessions_are_isolated_and_listed(pool):
    a = pool.get_session("root", "nebula")
    b = pool.get_session("alice", "x")
    try:
        ok(a.execute("USE nba"))
        r = b.execute('GO FROM "Tim Duncan" OVER like YIELD dst(edge)')
        assert r.error_code() == -1009  # b never chose a space
        r = ok(a.execute("SHOW SESSIONS"))
        assert r.keys() == ["SessionId", "UserName", "SpaceName", "CreateTime", "UpdateTime", "GraphAddr", "Timezone", "ClientIp"]
        listed = {x["SessionId"]: (x["UserName"], x["SpaceName"]) for x in r.as_primitive()}
        assert listed[a._session_id] == ("root", "nba")
        assert listed[b._session_id] == ("alice", "")
    finally:
        a.release()
        b.release()


def test_many_concurrent_sessions(pool):
    want = sorted(d for d, _ in likes_of("Tony Parker"))
    errors = []

    def worker():
        try:
            with pool.session_context("root", "nebula") as s:
                ok(s.execute("USE nba"))
                for _ in range(20):
                    r = ok(s.execute('GO FROM "Tony Parker" OVER like YIELD dst(edge) AS d'))
                    assert sorted(x["d"] for x in r.as_primitive()) == want
        except Exception as e:  # collected and reported below
            errors.append(repr(e))

    threads = [threading.Thread(target=worker) for _ in range(32)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors[:3]


def test_session_pool(server):
    config = SessionPoolConfig()
    config.min_size = 2
    config.max_size = 8
    sp = SessionPool("root", "nebula", "nba", [("127.0.0.1", server.port)])
    assert sp.init(config)
    try:
        r = ok(sp.execute('GO FROM "Tim Duncan" OVER like YIELD dst(edge) AS d'))
        assert sorted(x["d"] for x in r.as_primitive()) == [d for d, _ in likes_of("Tim Duncan")]
        results = []
        threads = [threading.Thread(target=lambda: results.append(sp.execute("YIELD 1 AS x").is_succeeded())) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        assert results == [True] * 8
    finally:
        sp.close()


def test_client_versions_outside_the_white_list_are_refused(pool, server):
    conn = pool.get_connection()
    try:
        resp = conn._connection.verifyClientVersion(VerifyClientVersionReq(version=b"2.6.0"))
        assert resp.error_code == -3061
        assert resp.error_msg.decode().startswith("Graph client version(2.6.0) is not accepted, current graph client white list: 3.0.0:")
    finally:
        conn.close()


def test_session_pool_replaces_expired_sessions():
    s = Server("--session-idle-timeout-secs", "1")
    try:
        config = SessionPoolConfig()
        config.min_size = 1
        config.max_size = 1
        sp = SessionPool("root", "nebula", "nba", [("127.0.0.1", s.port)])
        assert sp.init(config)
        ok(sp.execute("YIELD 1 AS x"))
        time.sleep(2.5)
        # nebula3-python hands back the server's answer for the expired session, then recycles it.
        r = sp.execute("YIELD 1 AS x")
        assert r.error_code() == -1002 and r.error_msg().endswith("Session not existed!")
        assert ok(sp.execute("YIELD 2 AS x")).as_primitive() == [{"x": 2}]
        sp.close()
    finally:
        s.stop()


def path_param():
    """a (player) -like@0-> b, then c -like@2-> b walked against its direction: one step each way."""
    def vertex(vid, tags):
        return ttypes.Vertex(vid=ttypes.Value(sVal=vid.encode()), tags=[
            ttypes.Tag(name=t.encode(), props={k.encode(): ttypes.Value(iVal=v) for k, v in props.items()})
            for t, props in tags.items()])
    return ttypes.Value(pVal=ttypes.Path(src=vertex("a", {"player": {"age": 1}}), steps=[
        ttypes.Step(dst=vertex("b", {}), type=5, name=b"like", ranking=0, props={b"likeness": ttypes.Value(iVal=95)}),
        ttypes.Step(dst=vertex("c", {"team": {}}), type=-5, name=b"like", ranking=2, props={}),
    ]))


def test_path_values_through_parameters_and_path_functions(pool):
    with pool.session_context("root", "nebula") as s:
        r = ok(s.execute_parameter(
            "YIELD $p AS p, nodes($p) AS n, relationships($p) AS r, length($p) AS l, reversePath($p) AS rp, "
            "startNode($p) AS s, endNode($p) AS e, hasSameEdgeInPath($p) AS se, hasSameVertexInPath($p) AS sv",
            {"p": path_param()}))
        v = dict(zip(r.keys(), r.row_values(0)))
        assert v["p"].is_path()
        p = v["p"].as_path()
        assert p.length() == 2
        assert [n.get_id().as_string() for n in p.nodes()] == ["a", "b", "c"]
        assert p.start_node().tags() == ["player"] and p.start_node().properties("player")["age"].as_int() == 1
        assert p.nodes()[2].tags() == ["team"]
        # The client turns each step into an edge in its stored direction: c -> b for the second.
        rels = [(e.start_vertex_id().as_string(), e.end_vertex_id().as_string(), e.edge_name(), e.ranking())
                for e in p.relationships()]
        assert rels == [("a", "b", "like", 0), ("c", "b", "like", 2)]
        assert p.relationships()[0].properties()["likeness"].as_int() == 95
        assert [n.as_node().get_id().as_string() for n in v["n"].as_list()] == ["a", "b", "c"]
        edges = [e.as_relationship() for e in v["r"].as_list()]
        assert [(e.start_vertex_id().as_string(), e.end_vertex_id().as_string()) for e in edges] == [("a", "b"), ("c", "b")]
        assert v["l"].as_int() == 2
        rp = v["rp"].as_path()
        assert [n.get_id().as_string() for n in rp.nodes()] == ["c", "b", "a"]
        assert [(e.start_vertex_id().as_string(), e.end_vertex_id().as_string(), e.ranking()) for e in rp.relationships()] == [
            ("c", "b", 2), ("a", "b", 0)]
        assert v["s"].as_node().get_id().as_string() == "a" and v["e"].as_node().get_id().as_string() == "c"
        assert v["se"].as_bool() is False and v["sv"].as_bool() is False
        # executeJson: NebulaGraph's Path::toJson row and getMetaData meta, vertex and edge entries alternating.
        body = json.loads(s.execute_json_with_parameter("YIELD $p AS p", {"p": path_param()}))
        data = body["results"][0]["data"][0]
        assert data["row"] == [[{"player.age": 1}, {"likeness": 95}, {}, {}, {}]]
        assert data["meta"] == [[
            {"type": "vertex", "id": "a"},
            {"type": "edge", "id": {"src": "a", "dst": "b", "type": 5, "name": "like", "ranking": 0}},
            {"type": "vertex", "id": "b"},
            {"type": "edge", "id": {"src": "b", "dst": "c", "type": -5, "name": "like", "ranking": 2}},
            {"type": "vertex", "id": "c"},
        ]]


def test_match_paths_nodes_and_relationships(pool):
    with pool.session_context("root", "nebula") as s:
        ok(s.execute("USE nba"))
        r = ok(s.execute('MATCH p = (v:player {name: "Tim Duncan"})-[e:like]->(w) RETURN p, v, e'))
        assert r.keys() == ["p", "v", "e"]
        got = []
        for i in range(r.row_size()):
            p, v, e = (x for x in r.row_values(i))
            assert p.is_path() and v.is_vertex() and e.is_edge()
            path, node, rel = p.as_path(), v.as_node(), e.as_relationship()
            assert path.length() == 1
            start, end = path.nodes()
            assert start.get_id().as_string() == node.get_id().as_string() == "Tim Duncan"
            assert sorted(start.tags()) == sorted(node.tags()) == tags_of("Tim Duncan") == ["bachelor", "player"]
            assert start.properties("player")["age"].as_int() == node.properties("player")["age"].as_int() == PLAYERS["Tim Duncan"][1]
            assert node.properties("bachelor")["speciality"].as_string() == "psychology"
            dst = end.get_id().as_string()
            assert sorted(end.tags()) == tags_of(dst)
            assert end.properties("player")["name"].as_string() == PLAYERS[dst][0]
            (step,) = path.relationships()
            for x in (step, rel):
                assert (x.start_vertex_id().as_string(), x.end_vertex_id().as_string()) == ("Tim Duncan", dst)
                assert (x.edge_name(), x.ranking()) == ("like", 0)
            likeness = rel.properties()["likeness"].as_int()
            assert step.properties()["likeness"].as_int() == likeness
            got.append((dst, likeness))
        assert sorted(got) == likes_of("Tim Duncan") and got


def test_match_path_against_edge_direction(pool):
    with pool.session_context("root", "nebula") as s:
        ok(s.execute("USE nba"))
        r = ok(s.execute('MATCH p = (v:player {name: "Tim Duncan"})<-[e:like]-(w) RETURN p, e'))
        got = []
        for i in range(r.row_size()):
            path, rel = r.row_values(i)[0].as_path(), r.row_values(i)[1].as_relationship()
            start, end = path.nodes()
            assert start.get_id().as_string() == "Tim Duncan"
            src = end.get_id().as_string()
            # The step is walked against the like edge, which the client reports in its stored direction.
            (step,) = path.relationships()
            for x in (step, rel):
                assert (x.start_vertex_id().as_string(), x.end_vertex_id().as_string()) == (src, "Tim Duncan")
            got.append((src, step.properties()["likeness"].as_int()))
        want = sorted({s_: int(l) for s_, d, l in rows("like.csv") if d == "Tim Duncan"}.items())
        assert sorted(got) == want and want


def test_find_path_and_subgraph_values(pool):
    with pool.session_context("root", "nebula") as s:
        ok(s.execute("USE nba"))
        # Tony Parker likes Tim Duncan: walked REVERSELY from Tim Duncan, one step against the stored edge.
        r = ok(s.execute('FIND SHORTEST PATH WITH PROP FROM "Tim Duncan" TO "Tony Parker" OVER like REVERSELY '
                         'YIELD path AS p'))
        assert r.keys() == ["p"] and r.row_size() == 1
        path = r.row_values(0)[0].as_path()
        assert path.length() == 1
        start, end = path.nodes()
        assert (start.get_id().as_string(), end.get_id().as_string()) == ("Tim Duncan", "Tony Parker")
        assert sorted(start.tags()) == tags_of("Tim Duncan") and sorted(end.tags()) == tags_of("Tony Parker")
        assert end.properties("player")["age"].as_int() == PLAYERS["Tony Parker"][1]
        (step,) = path.relationships()
        assert (step.start_vertex_id().as_string(), step.end_vertex_id().as_string()) == ("Tony Parker", "Tim Duncan")
        assert step.edge_name() == "like"
        assert step.properties()["likeness"].as_int() == dict(likes_of("Tony Parker"))["Tim Duncan"]
        # GET SUBGRAPH: one row per round, lists of vertices and edges.
        r = ok(s.execute('GET SUBGRAPH 1 STEPS FROM "Yao Ming" OUT serve YIELD VERTICES AS v, EDGES AS e'))
        assert r.keys() == ["v", "e"]
        first_v, first_e = r.row_values(0)
        assert [n.as_node().get_id().as_string() for n in first_v.as_list()] == ["Yao Ming"]
        teams = sorted(d for src, d, *_ in rows("serve.csv") if src == "Yao Ming")
        got = sorted(e.as_relationship().end_vertex_id().as_string() for e in first_e.as_list())
        assert got == teams and teams
        assert all(e.as_relationship().edge_name() == "serve" for e in first_e.as_list())
