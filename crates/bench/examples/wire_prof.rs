//! Runs one statement N times over NebulaGraph's graph protocol (a server in this process on a loopback port, one
//! client) against a database directory and prints the mean client and server latency: a driver for `perf record`
//! on the protocol path (`cargo build --release --example wire_prof -p quiver-bench`; usage: wire_prof DIR SPACE
//! V1,V2,.. N STMT, where `{v}` in STMT is replaced by each start vertex in turn and `{batch}` by 1,000 fresh edge
//! rows `a->b@r:(t)`; each start runs once first). `WIRE_CLIENTS=K` runs K clients at once and prints the total
//! rate instead; `WIRE_EMBEDDED=1` runs the statements in process instead, for comparison; `WIRE_WARM=STMT` runs
//! STMT (with `{v}` each start in turn) 5,000 times in process first, to turn the caches a read builds hot;
//! `WIRE_THREADS=N` serves at most N connections on threads of their own (0: all on the runtime);
//! `WIRE_SPIN_US=N` polls N microseconds for the next frame (see `GraphConfig::spin`);
//! `WIRE_RECONNECT=K` opens a new connection every K statements (as the benchmark's cells do).
use quiver_bench::drive::{Conn, Embedded, GraphServer, Wire};
use std::sync::Arc;
use std::time::Instant;

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let db = Arc::new(quiver_server::Database::open(std::path::Path::new(&a[1])).unwrap());
    let space = a[2].clone();
    let starts: Vec<i64> = a[3].split(',').map(|s| s.parse().unwrap()).collect();
    let n: usize = a[4].parse().unwrap();
    let template = a[5].clone();
    let clients: usize = std::env::var("WIRE_CLIENTS").ok().and_then(|s| s.parse().ok()).unwrap_or(1);
    let embedded = std::env::var_os("WIRE_EMBEDDED").is_some();
    if let Ok(warm) = std::env::var("WIRE_WARM") {
        let mut conn = Embedded::new(db.clone(), &space);
        for i in 0..5000 {
            conn.run(&warm.replace("{v}", &starts[i % starts.len()].to_string())).unwrap();
        }
    }
    let mut config = quiver_server::graphd::GraphConfig::default();
    if let Some(n) = std::env::var("WIRE_THREADS").ok().and_then(|s| s.parse().ok()) {
        config.connection_threads = n;
    }
    if let Some(us) = std::env::var("WIRE_SPIN_US").ok().and_then(|s| s.parse().ok()) {
        config.spin = std::time::Duration::from_micros(us);
    }
    let server = GraphServer::start_with(db.clone(), config).unwrap();
    let statement = move |i: usize, client: usize| {
        let v = starts[i % starts.len()];
        let mut s = template.replace("{v}", &v.to_string());
        if s.contains("{batch}") {
            let rows: Vec<String> = (0..1000)
                .map(|k| format!("{v}->{}@{}:({k})", 1 + (i * 1000 + k) % 9973, client * 1_000_000 + i * 1000 + k))
                .collect();
            s = s.replace("{batch}", &rows.join(", "));
        }
        s
    };
    let statement = Arc::new(statement);
    let started = Instant::now();
    let handles: Vec<_> = (0..clients)
        .map(|c| {
            let (space, statement) = (space.clone(), statement.clone());
            let (addr, db) = (server.addr, db.clone());
            std::thread::spawn(move || {
                let mut conn: Box<dyn Conn> = if embedded {
                    Box::new(Embedded::new(db, &space))
                } else {
                    Box::new(Wire::connect(addr, &space).unwrap())
                };
                for i in 0..3 {
                    conn.run(&statement(i, c)).unwrap();
                }
                let t = Instant::now();
                let mut server_us = 0u64;
                let reconnect: usize = std::env::var("WIRE_RECONNECT").ok().and_then(|s| s.parse().ok()).unwrap_or(0);
                for i in 0..n {
                    if reconnect > 0 && i > 0 && i % reconnect == 0 && !embedded {
                        conn = Box::new(Wire::connect(addr, &space).unwrap());
                    }
                    server_us += conn.run(&statement(i + 3, c)).unwrap().1;
                }
                (t.elapsed(), server_us)
            })
        })
        .collect();
    let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let wall = started.elapsed();
    let (client, server_us) = results[0];
    println!(
        "{clients} client(s), {n} statements each: client mean {:.1} us, server mean {:.1} us; {:.0} statements/s in all",
        client.as_secs_f64() * 1e6 / n as f64,
        server_us as f64 / n as f64,
        (clients * n) as f64 / wall.as_secs_f64()
    );
}
