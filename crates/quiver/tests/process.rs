//! Tests of the `quiver` binary as a process: durability across `kill -9`, the HTTP API's JSON shape, console exit
//! codes, clean SIGTERM shutdown, and clear start-up errors.

use serde_json::{json, Value as J};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

mod support;

use support::*;

#[test]
fn kill9_keeps_every_acknowledged_write_and_no_half_write() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path());
    let r = server.exec(
        "CREATE SPACE d(partition_num=4, vid_type=INT64); USE d; CREATE TAG a(x int); CREATE TAG b(y int); CREATE EDGE e(w int)",
        None,
    );
    assert_eq!(code(&r), 0, "{r}");
    let acked = Arc::new(Mutex::new(Vec::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let mut writers = Vec::new();
    for w in 0..4i64 {
        let (addr, acked, stop) = (server.addr.clone(), acked.clone(), stop.clone());
        writers.push(std::thread::spawn(move || {
            let mut i = w;
            while !stop.load(Ordering::Relaxed) {
                // Two tags in one statement: both or neither may survive. The edge goes in the next statement.
                let stmt = format!(
                    "INSERT VERTEX a(x), b(y) VALUES {i}:({i}, {i}); INSERT EDGE e(w) VALUES {i}->{}:({i})",
                    i + 1
                );
                match exec_at(&addr, &stmt, Some("d")) {
                    Ok(j) if code(&j) == 0 => acked.lock().unwrap().push(i),
                    _ => break,
                }
                i += 4;
            }
        }));
    }
    std::thread::sleep(Duration::from_millis(1500));
    server.child.kill().unwrap(); // SIGKILL
    server.child.wait().unwrap();
    stop.store(true, Ordering::Relaxed);
    for w in writers {
        w.join().unwrap();
    }
    let acked = acked.lock().unwrap().clone();
    assert!(acked.len() > 20, "only {} writes acknowledged before the kill", acked.len());
    let max = *acked.iter().max().unwrap() + 40;

    let server = Server::start(dir.path());
    let ids: Vec<String> = (0..=max).map(|i| i.to_string()).collect();
    let r = server.exec(&format!("FETCH PROP ON a, b {} YIELD id(vertex), a.x, b.y", ids.join(",")), Some("d"));
    assert_eq!(code(&r), 0, "{r}");
    let mut present = std::collections::HashSet::new();
    for row in r["results"][0]["data"].as_array().unwrap() {
        let row = row["row"].as_array().unwrap();
        let id = row[0].as_i64().unwrap();
        assert_eq!(row[1].as_i64(), Some(id), "vertex {id} lost tag a: half-written");
        assert_eq!(row[2].as_i64(), Some(id), "vertex {id} lost tag b: half-written");
        present.insert(id);
    }
    for id in &acked {
        assert!(present.contains(id), "acknowledged vertex {id} is missing after kill -9");
    }
    let keys: Vec<String> = acked.iter().map(|i| format!("{i}->{}", i + 1)).collect();
    let r = server.exec(&format!("FETCH PROP ON e {} YIELD e.w", keys.join(",")), Some("d"));
    assert_eq!(r["results"][0]["data"].as_array().unwrap().len(), acked.len(), "acknowledged edges missing");
}

#[test]
fn http_api_answers_in_execute_json_shape() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let r = server.exec(
        "CREATE SPACE h(vid_type=FIXED_STRING(8)); USE h; CREATE TAG t(n string); INSERT VERTEX t(n) VALUES \"v\":(\"x\")",
        None,
    );
    assert_eq!(code(&r), 0, "{r}");
    assert_eq!(r["results"][0]["spaceName"], "h", "USE is reported back");
    let r = server.exec("FETCH PROP ON t \"v\" YIELD vertex AS v, t.n, 1 AS one", Some("h"));
    let res = &r["results"][0];
    assert_eq!(res["columns"], json!(["v", "t.n", "one"]));
    assert_eq!(res["data"][0]["row"], json!([{"t.n": "x"}, "x", 1]));
    assert_eq!(res["data"][0]["meta"], json!([{"type": "vertex", "id": "v"}, null, null]));
    assert!(res["latencyInUs"].as_u64().is_some());
    assert_eq!(r["errors"], json!([{"code": 0}]));

    // PROFILE returns the rows and the plan with rows and times per operator, in NebulaGraph's planDesc shape.
    let r = server.exec("PROFILE FETCH PROP ON t \"v\" YIELD t.n", Some("h"));
    let res = &r["results"][0];
    assert_eq!(res["data"][0]["row"], json!(["x"]), "{r}");
    let node = &res["planDesc"]["planNodeDescs"][0];
    assert_eq!(node["name"], "GetVertices", "{r}");
    assert_eq!(node["profiles"][0]["rows"], 1, "{r}");
    assert_eq!(res["planDesc"]["format"], "row");
    let r = server.exec("EXPLAIN FORMAT=\"dot\" YIELD 1 AS a", None);
    assert!(r["results"][0]["data"][0]["row"][0].as_str().unwrap().starts_with("digraph exec_plan {"), "{r}");

    // Without the parameter, `$p` is a syntax error, as in NebulaGraph.
    let r = server.exec("YIELD $p + 1 AS x", None);
    assert_eq!(code(&r), -1004);
    let r: J = ureq::post(&format!("http://{}/api/v1/exec", server.addr))
        .send_json(json!({"stmt": "YIELD $p + 1 AS x", "params": {"p": 41}}))
        .unwrap()
        .into_json()
        .unwrap();
    assert_eq!(r["results"][0]["data"][0]["row"], json!([42]));

    let r = server.exec("YIELD +", None);
    assert_eq!(code(&r), -1004);
    assert_eq!(r["results"][0]["errors"]["message"], "SyntaxError: syntax error near `+'");
    assert_eq!(r["errors"][0]["code"], -1004);

    let resp = ureq::post(&format!("http://{}/api/v1/exec", server.addr)).send_string("{not json");
    match resp {
        Err(ureq::Error::Status(400, r)) => {
            let j: J = r.into_json().unwrap();
            assert!(j["errors"][0]["message"].as_str().unwrap().starts_with("request body is not JSON"));
        }
        other => panic!("expected 400, got {other:?}"),
    }
    // The server is still healthy after bad input.
    assert_eq!(code(&server.exec("YIELD 1", None)), 0);
}

#[test]
fn console_runs_statements_and_exits_nonzero_on_error() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let out =
        Command::new(BIN).args(["console", "--addr", &server.addr, "-e", "YIELD 1 AS a, \"x\" AS b"]).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("| a | b   |"), "{text}");
    assert!(text.contains("Got 1 rows (time spent"), "{text}");

    let out = Command::new(BIN).args(["console", "--addr", &server.addr, "-e", "CREATE TAGG x()"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("[ERROR (-1004)]: SyntaxError: syntax error near `TAGG'"));

    let script = dir.path().join("s.ngql");
    std::fs::write(&script, "CREATE SPACE c(vid_type=INT64);\nUSE c;\nCREATE TAG t(a int);\nINSERT VERTEX t(a) VALUES 1:(5);\nFETCH PROP ON t 1\n  YIELD t.a;\n").unwrap();
    let out =
        Command::new(BIN).args(["console", "--addr", &server.addr, "-f", script.to_str().unwrap()]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("| 5   |"), "USE carries over between statements of a file");

    // A reader that goes away before the output (`quiver console -e ... | head -0`) ends the console quietly.
    let mut child = Command::new(BIN)
        .args(["console", "--addr", &server.addr, "-e", "YIELD 1 AS a; YIELD 2 AS b"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
}

/// `--memory-limit-mb`: a query that grows the server past 90 % of the limit is stopped with GraphMemoryExceeded,
/// and the server, its memory given back, keeps answering.
#[test]
fn the_server_memory_limit_stops_the_largest_query() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_with(dir.path(), &["--memory-limit-mb", "300"]);
    assert_eq!(code(&server.exec("CREATE SPACE m(vid_type=INT64)", None)), 0);
    std::thread::sleep(Duration::from_millis(200));
    // About 9 million rows held by the sort: far more than 300 MiB.
    let r = server.exec("UNWIND range(1, 9000000) AS x WITH x ORDER BY x DESC RETURN x LIMIT 1", Some("m"));
    assert_eq!(code(&r), -2600, "{r}");
    let msg = r["results"][0]["errors"]["message"].as_str().unwrap();
    assert!(
        msg.starts_with(
            "GraphMemoryExceeded: (-2600) the server neared its memory limit of 300 MiB; this query held the most ("
        ),
        "{msg}"
    );
    assert_eq!(server.exec("YIELD 1 AS one", None)["results"][0]["data"][0]["row"], json!([1]));
    let stats = agent()
        .get(&format!("http://{}/stats?stats=num_queries_hit_memory_watermark.sum.600", server.addr))
        .call()
        .unwrap()
        .into_string()
        .unwrap();
    assert_eq!(stats.trim(), "num_queries_hit_memory_watermark.sum.600=1");
}

#[test]
fn sigterm_stops_cleanly_and_startup_errors_are_clear() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path());

    // A taken port is a clear error and a non-zero exit.
    let other = tempfile::tempdir().unwrap();
    let out = Command::new(BIN)
        .args(["serve", "--data-dir", other.path().to_str().unwrap(), "--http-addr", &server.addr])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("cannot listen on"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // An unusable data directory (a file) is a clear error and a non-zero exit.
    let file = dir.path().join("afile");
    std::fs::write(&file, "x").unwrap();
    let out = Command::new(BIN)
        .args(["serve", "--data-dir", file.to_str().unwrap(), "--http-addr", &format!("127.0.0.1:{}", free_port())])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("data directory"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let pid = server.child.id().to_string();
    assert!(Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    let status = server.child.wait().unwrap();
    assert!(status.success(), "SIGTERM ends the server with status 0, got {status}");
}

#[test]
fn an_index_build_interrupted_by_kill9_resumes_after_restart() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path());
    let r = server.exec("CREATE SPACE j(partition_num=4, vid_type=INT64); USE j; CREATE TAG t(a int)", None);
    assert_eq!(code(&r), 0, "{r}");
    const N: i64 = 40_000;
    for start in (0..N).step_by(4_000) {
        let values: Vec<String> = (start..start + 4_000).map(|i| format!("{i}:({})", i % 50)).collect();
        let r = server.exec(&format!("INSERT VERTEX t(a) VALUES {}", values.join(", ")), Some("j"));
        assert_eq!(code(&r), 0, "{r}");
    }
    // Enough rows for a background build; kill the server as soon as the job is queued.
    let r = server.exec("CREATE TAG INDEX ia ON t(a)", Some("j"));
    assert_eq!(code(&r), 0, "{r}");
    let before = server.exec("SHOW JOBS", Some("j"));
    server.child.kill().unwrap();
    server.child.wait().unwrap();
    let status_before = before["results"][0]["data"][0]["row"][2].as_str().unwrap().to_string();

    let server = Server::start(dir.path());
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let job = loop {
        let r = server.exec("SHOW JOB 1", Some("j"));
        assert_eq!(code(&r), 0, "the job record survived the kill: {r}");
        let rows = r["results"][0]["data"].as_array().unwrap().clone();
        if rows[0]["row"][2] == "FINISHED" {
            break rows;
        }
        assert!(std::time::Instant::now() < deadline, "the job did not finish after the restart: {r}");
        std::thread::sleep(Duration::from_millis(50));
    };
    if status_before != "FINISHED" {
        // Interrupted while queued or running: queued again at start-up, and it says so.
        assert_eq!(job[2]["row"][5], "resumed after a restart", "{job:?}");
    }
    let r = server.exec("LOOKUP ON t WHERE t.a == 7 YIELD id(vertex) AS id | YIELD COUNT(*) AS n", Some("j"));
    assert_eq!(r["results"][0]["data"][0]["row"][0], json!(N / 50), "{r}");
    let r = server.exec("SHOW STATS", Some("j"));
    assert_eq!(r["results"][0]["data"][0]["row"], json!(["Tag", "t", N]), "{r}");
}
