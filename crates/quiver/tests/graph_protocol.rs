//! The graph protocol served by the `quiver` binary, from a raw socket: hostile input closes only the offending
//! connection, sessions expire, both framings and pipelined calls work. (The real clients are tested in
//! `tests/clients/`.)

mod support;

use quiver_common::Value;
use quiver_wire::client::Client;
use quiver_wire::compact::{Message, MessageKind};
use quiver_wire::frame::{encode_frame, Framing, PROTOCOL_COMPACT};
use quiver_wire::graph::{decode_reply, encode_call, Call, Reply, UNKNOWN_METHOD};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;
use support::Server;

const TIMEOUT: Duration = Duration::from_secs(10);

fn client(s: &Server) -> Client {
    Client::connect(&s.graph_addr, TIMEOUT).unwrap()
}

/// The server still answers a fresh session.
fn healthy(s: &Server) {
    let mut c = client(s);
    let sid = c.open_session("root", "nebula").unwrap();
    let r = c.execute(sid, "YIELD 6 * 7 AS x", BTreeMap::new()).unwrap();
    let data = r.data.expect("a data set");
    assert_eq!((data.columns.clone(), data.rows()), (vec!["x".to_string()], vec![vec![Value::Int(42)]]));
}

/// Reads until the server closes the connection; returns what it sent before closing.
fn read_until_closed(stream: &mut TcpStream) -> Vec<u8> {
    stream.set_read_timeout(Some(TIMEOUT)).unwrap();
    let mut out = Vec::new();
    match stream.read_to_end(&mut out) {
        Ok(_) => out,
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => out,
        Err(e) => panic!("the server did not close the connection: {e}"),
    }
}

#[test]
fn hostile_input_closes_only_its_own_connection() {
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start_with(dir.path(), &["--max-frame-mb", "1"]);
    // A session opened before the attacks keeps working after them.
    let mut keeper = client(&s);
    let sid = keeper.open_session("root", "nebula").unwrap();
    keeper.execute(sid, "CREATE SPACE g(vid_type = INT64)", BTreeMap::new()).unwrap();
    assert_eq!(keeper.execute(sid, "USE g", BTreeMap::new()).unwrap().error_code, 0);

    // Not thrift at all.
    let mut raw = TcpStream::connect(&s.graph_addr).unwrap();
    raw.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    assert!(read_until_closed(&mut raw).is_empty());

    // An oversized frame is refused from its length prefix, before any allocation.
    let mut raw = TcpStream::connect(&s.graph_addr).unwrap();
    raw.write_all(&0x3fff_ffffu32.to_be_bytes()).unwrap();
    assert!(read_until_closed(&mut raw).is_empty());

    // Disconnecting in the middle of a frame.
    let mut raw = TcpStream::connect(&s.graph_addr).unwrap();
    raw.write_all(&100u32.to_be_bytes()).unwrap();
    raw.write_all(&[0x0f, 0xff, 0, 0]).unwrap();
    drop(raw);

    // A header frame whose payload is garbage.
    let mut raw = TcpStream::connect(&s.graph_addr).unwrap();
    let framing = Framing::Header { flags: 0, seq_id: 1, protocol: PROTOCOL_COMPACT };
    raw.write_all(&encode_frame(framing, &[0x82, 0x21, 0x01, 0xff, 0xff, 0xff])).unwrap();
    assert!(read_until_closed(&mut raw).is_empty());

    // An unknown method gets thrift's UNKNOWN_METHOD exception, then the connection closes.
    let mut raw = TcpStream::connect(&s.graph_addr).unwrap();
    let mut payload = encode_call(7, &Call::Signout { session_id: 1 });
    let at = payload.windows(7).position(|w| w == b"signout").unwrap();
    payload[at..at + 7].copy_from_slice(b"signoff");
    payload[1] = (payload[1] & 0x1f) | ((MessageKind::Call as u8) << 5);
    raw.write_all(&encode_frame(framing, &payload)).unwrap();
    let answer = read_until_closed(&mut raw);
    let (_, reply) = decode_reply(quiver_wire::frame::decode_frame(&answer[4..]).unwrap().1).unwrap();
    assert_eq!(reply, Err((UNKNOWN_METHOD, "Method name signoff not found".to_string())));

    // Many connections dropped right after connecting.
    for _ in 0..50 {
        drop(TcpStream::connect(&s.graph_addr).unwrap());
    }

    healthy(&s);
    let r = keeper.execute(sid, "YIELD 1 AS one", BTreeMap::new()).unwrap();
    assert_eq!((r.error_code, r.space_name.as_deref()), (0, Some("g")));
}

#[test]
fn framed_compact_and_pipelined_calls_are_answered_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start(dir.path());
    let mut c = client(&s);
    let sid = c.open_session("root", "nebula").unwrap();
    let stream = c.stream();
    // Three calls written at once, two header-framed and one framed-compact; replies come back in order.
    let mut batch = Vec::new();
    for (seq, framing) in [
        (11, Framing::Header { flags: 0, seq_id: 11, protocol: PROTOCOL_COMPACT }),
        (12, Framing::FramedCompact),
        (13, Framing::Header { flags: 0, seq_id: 13, protocol: PROTOCOL_COMPACT }),
    ] {
        let stmt = format!("YIELD {seq} AS s");
        batch.extend(encode_frame(
            framing,
            &encode_call(
                seq,
                &Call::Execute { session_id: sid, stmt: stmt.into_bytes(), params: BTreeMap::new(), json: false },
            ),
        ));
    }
    stream.write_all(&batch).unwrap();
    for seq in [11, 12, 13] {
        let mut prefix = [0u8; 4];
        stream.read_exact(&mut prefix).unwrap();
        let mut body = vec![0u8; u32::from_be_bytes(prefix) as usize];
        stream.read_exact(&mut body).unwrap();
        let (framing, payload) = quiver_wire::frame::decode_frame(&body).unwrap();
        match framing {
            Framing::Header { seq_id, .. } => assert_eq!(seq_id, seq as u32),
            Framing::FramedCompact => assert_eq!(seq, 12),
        }
        let (msg, reply): (Message, _) = decode_reply(payload).unwrap();
        assert_eq!(msg.seq_id, seq);
        let Ok(Reply::Execution(r)) = reply else { panic!("{reply:?}") };
        assert_eq!(r.data.unwrap().rows(), vec![vec![Value::Int(seq as i64)]]);
    }
}

#[test]
fn idle_sessions_expire_and_signed_out_sessions_are_gone() {
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start_with(dir.path(), &["--session-idle-timeout-secs", "1"]);
    let mut c = client(&s);
    let idle = c.open_session("root", "nebula").unwrap();
    let gone = c.open_session("root", "nebula").unwrap();
    assert_ne!(idle, gone);
    c.call(&Call::Signout { session_id: gone }).unwrap();
    let r = c.execute(gone, "YIELD 1", BTreeMap::new()).unwrap();
    assert_eq!(
        (r.error_code, r.error_msg.unwrap()),
        (-1002, format!("Get sessionId[{gone}] failed: Session `{gone}' not found: Session not existed!"))
    );
    std::thread::sleep(Duration::from_millis(2500));
    let r = c.execute(idle, "YIELD 1", BTreeMap::new()).unwrap();
    assert_eq!(
        (r.error_code, r.error_msg.unwrap()),
        (-1002, format!("Get sessionId[{idle}] failed: Session `{idle}' not found: Session not existed!"))
    );
    // A new session lists only itself.
    let fresh = c.open_session("root", "nebula").unwrap();
    let r = c.execute(fresh, "SHOW SESSIONS", BTreeMap::new()).unwrap();
    let rows = r.data.unwrap().rows();
    assert_eq!(rows.iter().map(|r| r[0].clone()).collect::<Vec<_>>(), vec![Value::Int(fresh)]);
}

#[test]
fn client_versions_outside_the_configured_list_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start_with(dir.path(), &["--client-white-list", "3.0.0:3.8.0"]);
    let mut c = client(&s);
    let r = c.call(&Call::VerifyClientVersion { version: "2.6.0".into() }).unwrap().unwrap().unwrap();
    assert_eq!(
        r,
        Reply::Verify {
            error_code: -3061,
            error_msg: Some(
                "Graph client version(2.6.0) is not accepted, current graph client white list: 3.0.0:3.8.0.".into()
            )
        }
    );
    let r = c.call(&Call::VerifyClientVersion { version: "3.8.0".into() }).unwrap().unwrap().unwrap();
    assert_eq!(r, Reply::Verify { error_code: 0, error_msg: None });
}

/// `SHOW QUERIES` lists another session's running query, with its session id and user; `KILL QUERY` stops it at
/// its next check with NebulaGraph's error, and it leaves the list; `KILL SESSION` ends that session.
#[test]
fn a_running_query_and_its_session_are_killed_from_another_session() {
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start_with(dir.path(), &[]);
    let mut a = client(&s);
    let runner = a.open_session("root", "nebula").unwrap();
    for stmt in ["CREATE SPACE k(vid_type = INT64)", "USE k"] {
        assert_eq!(a.execute(runner, stmt, BTreeMap::new()).unwrap().error_code, 0, "{stmt}");
    }
    let long = "UNWIND range(1, 1000000) AS a UNWIND range(1, 1000000) AS b RETURN count(*)";
    let worker = std::thread::spawn(move || {
        let r = a.execute(runner, long, BTreeMap::new()).unwrap();
        (a, r)
    });
    let mut b = client(&s);
    let killer = b.open_session("root", "nebula").unwrap();
    let listed = |b: &mut Client| {
        let r = b.execute(killer, "SHOW QUERIES", BTreeMap::new()).unwrap();
        assert_eq!(r.error_code, 0, "{:?}", r.error_msg);
        let data = r.data.expect("a data set");
        assert_eq!(
            data.columns,
            ["SessionID", "ExecutionPlanID", "User", "Host", "StartTime", "DurationInUSec", "Status", "Query"]
        );
        data.rows().into_iter().find(|row| row[7] == Value::str(long))
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let row = loop {
        if let Some(row) = listed(&mut b) {
            break row;
        }
        assert!(std::time::Instant::now() < deadline, "the long query was never listed");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!((&row[0], &row[2], &row[6]), (&Value::Int(runner), &Value::str("root"), &Value::str("RUNNING")));
    let Value::Int(plan) = row[1] else { panic!("a plan id: {row:?}") };
    let r = b.execute(killer, &format!("KILL QUERY (session = {runner}, plan = 999999999)"), BTreeMap::new()).unwrap();
    assert_eq!(
        (r.error_code, r.error_msg.unwrap()),
        (-1005, format!("ExecutionPlanId[999999999] does not exist in Session[{runner}]."))
    );
    let r = b.execute(killer, &format!("KILL QUERY (session = {runner}, plan = {plan})"), BTreeMap::new()).unwrap();
    assert_eq!(r.error_code, 0, "{:?}", r.error_msg);
    let (mut a, killed) = worker.join().unwrap();
    assert_eq!((killed.error_code, killed.error_msg.unwrap()), (-1005, "Execution had been killed".to_string()));
    assert!(listed(&mut b).is_none(), "a finished query is not listed");
    // KILL SESSION ends the other session: its next request is refused as NebulaGraph refuses an unknown one.
    let r = b.execute(killer, &format!("KILL SESSION {runner}"), BTreeMap::new()).unwrap();
    let data = r.data.expect("a data set");
    assert_eq!(
        (data.columns.clone(), data.rows()),
        (vec!["Number of session killed".to_string()], vec![vec![Value::Int(1)]])
    );
    let r = a.execute(runner, "YIELD 1", BTreeMap::new()).unwrap();
    assert_eq!(r.error_code, -1002, "{:?}", r.error_msg);
}

fn get(s: &Server, path: &str) -> String {
    support::agent().get(&format!("http://{}{path}", s.addr)).call().unwrap().into_string().unwrap()
}

/// `/stats` in NebulaGraph's form and `/metrics` in Prometheus's count what a known workload did: sessions opened
/// and signed out, requests with their errors, slow requests, and inserted vertices and edges.
#[test]
fn stats_and_metrics_count_a_known_workload() {
    let dir = tempfile::tempdir().unwrap();
    // Every request is slow at a threshold of 0.
    let s = Server::start_with(dir.path(), &["--slow-query-threshold-us", "0"]);
    let mut c = client(&s);
    let a = c.open_session("root", "nebula").unwrap();
    let b = c.open_session("root", "nebula").unwrap();
    let ok = |c: &mut Client, sid, stmt: &str| {
        let r = c.execute(sid, stmt, BTreeMap::new()).unwrap();
        assert_eq!(r.error_code, 0, "{stmt}: {:?}", r.error_msg);
    };
    ok(&mut c, a, "CREATE SPACE m(vid_type=INT64); USE m; CREATE TAG t(n int); CREATE EDGE e(w int)");
    // The catalog answers new names within a heartbeat in NebulaGraph; here at once. Three vertices, two edges.
    ok(&mut c, a, "USE m; INSERT VERTEX t(n) VALUES 1:(1), 2:(2), 3:(3); INSERT EDGE e(w) VALUES 1->2:(1), 2->3:(2)");
    for _ in 0..5 {
        ok(&mut c, b, "YIELD 1 AS one");
    }
    let bad = c.execute(b, "YIELD nope", BTreeMap::new()).unwrap();
    assert_ne!(bad.error_code, 0);
    c.call(&Call::Signout { session_id: b }).unwrap();
    // Sign-out is one-way in NebulaGraph's protocol (no reply): the server may still be handling it.
    let started = std::time::Instant::now();
    while get(&s, "/stats?stats=num_active_sessions.sum.60").trim() != "num_active_sessions.sum.60=1" {
        assert!(started.elapsed() < std::time::Duration::from_secs(5), "the signed-out session is still active");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }

    // 8 requests, 1 error, all slow at threshold 0.
    let text = get(&s, "/stats?stats=num_queries.sum.60,num_query_errors.sum.600,num_slow_queries.sum.3600,num_active_queries.sum.60,num_opened_sessions.sum.60,num_active_sessions.sum.60,num_vertices_inserted.sum.60,num_edges_inserted.sum.5,query_latency_us.p99.60,num_queries.sum,num_queries.avg.9,nothing.sum.60");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        &lines[..8],
        &[
            "num_queries.sum.60=8",
            "num_query_errors.sum.600=1",
            "num_slow_queries.sum.3600=8",
            "num_active_queries.sum.60=0",
            "num_opened_sessions.sum.60=2",
            "num_active_sessions.sum.60=1",
            "num_vertices_inserted.sum.60=3",
            "num_edges_inserted.sum.5=2",
        ],
        "{text}"
    );
    let p99: i64 = lines[8].strip_prefix("query_latency_us.p99.60=").unwrap().parse().unwrap();
    assert!(p99 > 0, "{text}");
    assert_eq!(
        &lines[9..],
        &[
            "num_queries.sum=\"num_queries.sum\" is not a valid metric name",
            "num_queries.avg.9=Unsupported time range \"9\"",
            "nothing.sum.60=Stats not found \"nothing\"",
        ]
    );
    // `stats` as a browser encodes it, and the JSON form.
    let j: serde_json::Value =
        serde_json::from_str(&get(&s, "/stats?stats=num_queries.sum.60%2Cnum_query_errors.sum.60&format=json"))
            .unwrap();
    assert_eq!(j, serde_json::json!([{"num_queries.sum.60": 8}, {"num_query_errors.sum.60": 1}]));
    // Every figure, when none is named: each metric with its methods over the four windows.
    let all = get(&s, "/stats");
    for figure in [
        "num_queries.rate.5=",
        "num_queries.sum.3600=8",
        "slow_query_latency_us.p999.600=",
        "num_active_sessions.sum.5=",
    ] {
        assert!(all.lines().any(|l| l.starts_with(figure)), "{figure} missing from\n{all}");
    }
    let status: serde_json::Value = serde_json::from_str(&get(&s, "/status")).unwrap();
    assert_eq!(status["status"], "running");

    let prom = get(&s, "/metrics");
    for line in [
        "quiver_num_queries_total 8",
        "quiver_num_query_errors_total 1",
        "quiver_num_slow_queries_total 8",
        "quiver_num_active_sessions 1",
        "quiver_num_opened_sessions_total 2",
        "quiver_num_vertices_inserted_total 3",
        "quiver_num_edges_inserted_total 2",
        "quiver_query_latency_us_count 8",
        "quiver_query_latency_us_bucket{le=\"+Inf\"} 8",
        "# TYPE quiver_query_latency_us histogram",
        "# TYPE rocksdb_block_cache_capacity_bytes gauge",
    ] {
        assert!(prom.lines().any(|l| l == line), "{line} missing from\n{prom}");
    }
    // Two writes (the two INSERT statements' batches) and the DDL's: commit latencies were recorded.
    let commits: u64 =
        prom.lines().find_map(|l| l.strip_prefix("quiver_commit_latency_us_count ")).unwrap().parse().unwrap();
    assert!(commits >= 2, "{prom}");
}

/// Both ports answer on the IPv6 loopback too, so a client that resolves `localhost` to `::1` is served (skipped on
/// a system without IPv6).
#[test]
fn loopback_ports_answer_on_ipv4_and_ipv6() {
    if std::net::TcpListener::bind("[::1]:0").is_err() {
        eprintln!("no IPv6 loopback here: skipped");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start(dir.path());
    let port = |a: &str| a.rsplit(':').next().unwrap().to_string();
    let health = support::agent().get(&format!("http://[::1]:{}/api/v1/health", port(&s.addr))).call().unwrap();
    assert_eq!(health.into_string().unwrap(), "ok");
    let mut c = Client::connect(format!("[::1]:{}", port(&s.graph_addr)), TIMEOUT).unwrap();
    let sid = c.open_session("root", "nebula").unwrap();
    let r = c.execute(sid, "YIELD 1 AS one", BTreeMap::new()).unwrap();
    assert_eq!(r.error_code, 0);
}

/// `--rocksdb-statistics`: RocksDB's tickers in `/metrics` as counters; a read of flushed data goes through the
/// block cache. Without the flag they are absent.
#[test]
fn rocksdb_statistics_show_block_cache_traffic() {
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start_with(dir.path(), &["--rocksdb-statistics"]);
    let ok = |stmt: &str, space: Option<&str>| {
        let r = support::exec_at(&s.addr, stmt, space).unwrap();
        assert_eq!(support::code(&r), 0, "{stmt}: {r}");
    };
    ok("CREATE SPACE r(vid_type=INT64)", None);
    std::thread::sleep(Duration::from_millis(200));
    ok("CREATE TAG t(n int)", Some("r"));
    std::thread::sleep(Duration::from_millis(200));
    ok("INSERT VERTEX t(n) VALUES 1:(1), 2:(2)", Some("r"));
    ok("SUBMIT JOB FLUSH", Some("r"));
    std::thread::sleep(Duration::from_millis(500));
    ok("FETCH PROP ON t 1, 2 YIELD t.n", Some("r"));
    let prom = get(&s, "/metrics");
    let total = |name: &str| -> f64 {
        prom.lines()
            .find_map(|l| l.strip_prefix(&format!("{name} ")))
            .unwrap_or_else(|| panic!("{name}\n{prom}"))
            .parse()
            .unwrap()
    };
    assert!(prom.contains("# TYPE rocksdb_block_cache_hits_total counter"), "{prom}");
    assert!(total("rocksdb_block_cache_hits_total") + total("rocksdb_block_cache_misses_total") > 0.0, "{prom}");
    assert!(total("rocksdb_written_bytes_total") > 0.0);

    let plain = tempfile::tempdir().unwrap();
    let p = Server::start(plain.path());
    assert!(!get(&p, "/metrics").contains("rocksdb_block_cache_hits_total"));
}
