//! Runs one statement N times over NebulaGraph's graph protocol (a server in this process on a loopback port, one
//! client) against a database directory and prints the mean client and server latency: a driver for `perf record`
//! on the protocol path (`cargo build --release --example wire_prof -p quiver-bench`; usage: wire_prof DIR SPACE
//! V1,V2,.. N STMT, where `{v}` in STMT is replaced by each start vertex in turn and `{batch}` by 1,000 fresh edge
//! rows `a->b@r:(t)`; each start runs once first). `WIRE_CLIENTS=K` runs K clients at once and prints the total
//! rate instead.
use quiver_bench::drive::{Conn, GraphServer, Wire};
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
    let server = GraphServer::start(db).unwrap();
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
            let addr = server.addr;
            std::thread::spawn(move || {
                let mut conn = Wire::connect(addr, &space).unwrap();
                for i in 0..3 {
                    conn.run(&statement(i, c)).unwrap();
                }
                let t = Instant::now();
                let mut server_us = 0u64;
                for i in 0..n {
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
