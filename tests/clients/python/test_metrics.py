"""`/metrics` read by Prometheus's own text-format parser after a known workload through nebula3-python, and the
Grafana dashboard checked against what `/metrics` exposes."""

import json
import re
import time
import urllib.request
from pathlib import Path

import pytest
from nebula3.Config import Config
from nebula3.gclient.net import ConnectionPool
from prometheus_client.parser import text_string_to_metric_families

from test_nebula3 import ROOT, Server


@pytest.fixture(scope="module")
def server():
    s = Server()
    yield s
    s.stop()


def families(server):
    text = urllib.request.urlopen(f"http://127.0.0.1:{server.http}/metrics", timeout=10).read().decode()
    return {f.name: f for f in text_string_to_metric_families(text)}


def value(fams, family, sample=None):
    f = fams[family]
    name = sample or f.samples[0].name
    return next(s.value for s in f.samples if s.name == name and not s.labels)


def test_metrics_count_a_known_workload(server):
    before = families(server)
    pool = ConnectionPool()
    assert pool.init([("127.0.0.1", server.port)], Config())
    with pool.session_context("root", "nebula") as s:
        for _ in range(4):
            assert s.execute("YIELD 1").is_succeeded()
        assert not s.execute("YIELD nope").is_succeeded()
        assert s.execute("USE nba; FETCH PROP ON player \"Tim Duncan\" YIELD player.age").is_succeeded()
        # A GO builds the space's in-memory topology: every edge is held twice (out and in).
        assert s.execute('GO FROM "Tim Duncan" OVER like YIELD dst(edge)').is_succeeded()
        during = families(server)
    pool.close()
    # Signing out is a oneway call in NebulaGraph's protocol (the client does not wait for it): wait until the
    # server has closed the session, for at most 10 s.
    deadline = time.monotonic() + 10
    after = families(server)
    while value(after, "quiver_num_active_sessions") != value(before, "quiver_num_active_sessions"):
        assert time.monotonic() < deadline, "the session is still open 10 s after signing out"
        time.sleep(0.05)
        after = families(server)

    # The parser names a counter's family without `_total`; its sample keeps it.
    assert value(after, "quiver_num_queries", "quiver_num_queries_total") - value(before, "quiver_num_queries", "quiver_num_queries_total") == 7
    assert value(after, "quiver_num_query_errors", "quiver_num_query_errors_total") - value(before, "quiver_num_query_errors", "quiver_num_query_errors_total") == 1
    assert value(during, "quiver_num_active_sessions") - value(before, "quiver_num_active_sessions") == 1
    assert value(after, "quiver_num_active_sessions") == value(before, "quiver_num_active_sessions")
    assert value(after, "quiver_num_opened_sessions", "quiver_num_opened_sessions_total") - value(before, "quiver_num_opened_sessions", "quiver_num_opened_sessions_total") == 1

    latency = after["quiver_query_latency_us"]
    assert latency.type == "histogram"
    buckets = [(s.labels["le"], s.value) for s in latency.samples if s.name.endswith("_bucket")]
    counts = [v for _, v in buckets]
    assert counts == sorted(counts), "cumulative buckets never decrease"
    assert buckets[-1][0] == "+Inf"
    assert buckets[-1][1] == value(after, "quiver_query_latency_us", "quiver_query_latency_us_count")
    # The demo load's writes were committed and timed; RocksDB's figures are there.
    assert value(after, "quiver_commit_latency_us", "quiver_commit_latency_us_count") > 0
    assert value(after, "quiver_num_vertices_inserted", "quiver_num_vertices_inserted_total") > 0
    assert value(after, "rocksdb_block_cache_capacity_bytes") == 256 * 1024 * 1024
    edges = value(after, "quiver_topology_directed_edges")
    assert edges > 0 and edges % 2 == 0
    assert value(after, "quiver_topology_bytes") > 0


def test_the_dashboard_reads_only_what_metrics_exposes(server):
    dashboard = json.loads((ROOT / "docs" / "grafana" / "quiver.json").read_text())
    fams = families(server)
    samples = {s.name for f in fams.values() for s in f.samples}
    exprs = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
    assert exprs
    functions = {"rate", "histogram_quantile", "sum", "by", "le"}
    for e in exprs:
        bare = re.sub(r"\[[^\]]*\]", "", e)  # range selectors such as [5m]
        names = {n for n in re.findall(r"[a-z_][a-z0-9_]*", bare) if n not in functions}
        missing = names - samples
        assert not missing, f"{e}: {missing} not in /metrics"
