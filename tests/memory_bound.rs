//! The per-query memory bound holds on the process, not only on the query's own count: a 5-hop piped GO on a dense
//! generated graph (200,000 edges, 100 out of every vertex, so each hop multiplies the rows by 100) under a 256 MiB
//! bound fails with `GraphMemoryExceeded`, and the resident memory of this process grows by less than
//! [`FACTOR`] times the bound meanwhile (`VmHWM` in `/proc/self/status`, after `clear_refs` reset it).
//!
//! It is a test binary of its own so that no other test shares the process while resident memory is measured.

use quiver_common::budget::Limits;
use quiver_common::limits::QUERY_THREAD_STACK_BYTES;
use quiver_common::Value;
use quiver_query::{Params, Session};
use quiver_server::Database;
use std::sync::Arc;
use std::time::Duration;

const BOUND_BYTES: usize = 256 << 20;
/// The factor `docs/design/execution.md` guarantees: resident growth while a query runs stays under this times
/// its bound.
const FACTOR: f64 = 1.5;
const VERTICES: i64 = 2000;
const OUT_DEGREE: i64 = 100;

/// A field of `/proc/self/status`, in bytes.
fn status_bytes(field: &str) -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line =
        status.lines().find(|l| l.starts_with(field)).unwrap_or_else(|| panic!("no {field} in /proc/self/status"));
    let kb: usize = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kb * 1024
}

fn exec(db: &Database, s: &mut Session, stmt: &str) -> Vec<Vec<Value>> {
    match db.execute(s, stmt, &Params::new()) {
        Ok(ds) => ds.into_rows(),
        Err(e) => panic!("`{stmt}` failed: {}", e.message),
    }
}

#[test]
fn a_five_hop_pipe_fails_at_the_bound_with_resident_memory_within_the_factor() {
    let db = Database::in_memory();
    let mut s = Session::default();
    exec(&db, &mut s, "CREATE SPACE dense(vid_type = INT64, partition_num = 8); USE dense; CREATE EDGE e()");
    // Vertex v links to v+1 .. v+100 (mod VERTICES): every vertex has 100 out-edges.
    let mut edges = Vec::new();
    for v in 0..VERTICES {
        for k in 1..=OUT_DEGREE {
            edges.push(format!("{v}->{}:()", (v + k) % VERTICES));
        }
    }
    for chunk in edges.chunks(2000) {
        exec(&db, &mut s, &format!("INSERT EDGE e() VALUES {}", chunk.join(", ")));
    }
    assert_eq!(
        exec(&db, &mut s, "GO FROM 0 OVER e YIELD dst(edge) AS id | YIELD COUNT(*) AS n"),
        vec![vec![Value::Int(OUT_DEGREE)]]
    );

    db.engine.set_limits(Limits { timeout: Duration::from_secs(600), memory_bytes: BOUND_BYTES });
    let db = Arc::new(db);
    let hop = "GO FROM $-.id OVER e YIELD dst(edge) AS id";
    let query = format!("GO FROM 0 OVER e YIELD dst(edge) AS id | {hop} | {hop} | {hop} | {hop}");
    let run = |stmt: String| {
        let db = db.clone();
        std::thread::Builder::new()
            .stack_size(QUERY_THREAD_STACK_BYTES)
            .spawn(move || {
                let mut s = Session { space: Some("dense".into()), ..Session::default() };
                db.execute(&mut s, &stmt, &Params::new()).map(|ds| ds.len())
            })
            .unwrap()
            .join()
            .unwrap()
    };
    // Resets VmHWM to the current resident size.
    std::fs::write("/proc/self/clear_refs", "5").expect("clear_refs resets the peak");
    let before = status_bytes("VmRSS:");
    let started = std::time::Instant::now();
    let e = run(query).unwrap_err();
    let grew = status_bytes("VmHWM:").saturating_sub(before);
    assert_eq!(
        e.message,
        format!("GraphMemoryExceeded: (-2600) the query needed more than its memory bound of {BOUND_BYTES} bytes")
    );
    let ratio = grew as f64 / BOUND_BYTES as f64;
    println!("resident memory grew by {} MiB ({ratio:.2} x the bound) in {:?}", grew >> 20, started.elapsed());
    assert!(ratio < FACTOR, "resident memory grew by {grew} bytes, {ratio:.2} x the {BOUND_BYTES}-byte bound");
    // The server is healthy: the next query has its own budget.
    assert_eq!(run("GO 2 STEPS FROM 0 OVER e YIELD dst(edge) AS id | YIELD COUNT(*) AS n".into()), Ok(1));
}
