//! `quiver bench --cluster`: the social workloads against a local cluster of processes (`quiver playground`: 3
//! metads, 3 storage hosts, 1 graphd; the graph in 6 partitions of 3 replicas) beside the embedded server, both
//! over NebulaGraph's graph protocol, in one run (docs/design/cluster.md §9). Reports per workload the
//! cluster/embedded ratio of single-client latency (and that both answer alike), 1-hop and 3-hop GO throughput at
//! 16 clients (the two modes measured in alternating rounds), single `INSERT EDGE` latency, and the time from
//! killing a partition's leader to the first write to that partition acknowledged.

use std::fmt::Write as _;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use quiver_api::Catalog;
use quiver_cluster::process::{GraphdView, ProcessCluster};
use quiver_cluster::ClusterStorage;
use quiver_common::Value;
use quiver_metad::remote::RemoteCatalog;
use quiver_metad::service::MetaClient;
use quiver_raft::tcp::TcpTransport;
use quiver_server::Database;

use crate::drive::{ladder, Conn, GraphServer, LadderPoint, Wire};
use crate::workloads::{partner, Workload};
use crate::{gen, Options};

/// Requests per workload on one client, after as many untimed.
const SINGLE_REQUESTS: usize = 200;
/// How long each throughput and insert measurement runs.
const CELL: Duration = Duration::from_secs(5);
/// Clients of the throughput measurements (the issue's).
const CLIENTS: usize = 16;
/// The throughput measurements alternate between the two modes in this many rounds, each `CELL / ROUNDS` long, so
/// that the machine's drift during a run (its speed changes by a third within minutes here) falls on both alike.
const ROUNDS: u32 = 5;
/// Partitions of the cluster's space, each with 3 replicas.
const PARTITIONS: u32 = 6;

/// A playground started for the run, stopped when dropped.
struct Playground {
    child: Child,
    procs: Vec<(String, String, u32)>,
}

impl Playground {
    fn start(exe: &PathBuf, dir: &std::path::Path) -> Result<Playground, String> {
        let _ = std::fs::remove_dir_all(dir);
        let mut child = Command::new(exe)
            .args(["playground", "--dir", &dir.display().to_string(), "--port-offset", "3000"])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot start the playground: {e}"))?;
        let out = BufReader::new(child.stdout.take().expect("piped"));
        let mut procs = Vec::new();
        for line in out.lines() {
            let line = line.map_err(|e| e.to_string())?;
            let words: Vec<&str> = line.split_whitespace().collect();
            match words.as_slice() {
                [role, addr, "pid", pid] => {
                    procs.push((role.to_string(), addr.to_string(), pid.parse().map_err(|_| line.clone())?))
                }
                ["playground", "ready", ..] => return Ok(Playground { child, procs }),
                _ => {}
            }
        }
        let _ = child.wait();
        Err("the playground did not start (see its errors above)".into())
    }

    fn addr(&self, role: &str) -> Vec<String> {
        self.procs.iter().filter(|p| p.0 == role).map(|p| p.1.clone()).collect()
    }
}

impl Drop for Playground {
    fn drop(&mut self) {
        let _ = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status();
        let _ = self.child.wait();
    }
}

pub fn run(opts: &Options) -> Result<PathBuf, String> {
    log::set_max_level(log::LevelFilter::Warn);
    let out = opts.out_dir.join(format!("{}-cluster", crate::report::today()));
    std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    // A folder of its own under the work directory, so a cluster run leaves the other mode's databases alone.
    let work = opts.work_dir.join("cluster");
    let _ = std::fs::remove_dir_all(&work);
    let scale = gen::social_scale(&opts.social_scale)
        .ok_or_else(|| format!("unknown scale `{}' (sf0.1, sf1, sf10, sf100)", opts.social_scale))?;
    let ds = gen::social(&work.join("data/social"), scale, opts.seed, SINGLE_REQUESTS)?;
    let mut report = String::new();
    let _ = writeln!(
        report,
        "# quiver bench --cluster, {} ({} persons, {} knows edges)\n\nOne run on this machine ({}). Embedded: `quiver \
         serve`'s engine in this process behind the graph protocol on loopback. Cluster: `quiver playground` (3 \
         metads, 3 storage hosts, 1 graphd, separate processes on 127.0.0.1-3), the graph in {PARTITIONS} \
         partitions of 3 replicas. Clients are threads of this process, over the graph protocol to each.\n",
        opts.social_scale,
        ds.vertices,
        ds.edges,
        crate::machine().cpu
    );

    // Embedded: imported, then served on loopback.
    let t = Instant::now();
    let dir = work.join("embedded");
    let db = Arc::new(Database::open(&dir).map_err(|e| e.to_string())?);
    let opts_import = quiver_server::import::ImportOptions { progress: true, ..Default::default() };
    quiver_server::import::import(&db, &ds.mapping(), &opts_import).map_err(|e| e.to_string())?;
    let embedded = GraphServer::start(db.clone())?;
    eprintln!("embedded loaded in {:.1} s", t.elapsed().as_secs_f64());

    // Cluster: a playground, loaded through its storage client (the statements graphd would run).
    let pg = Playground::start(&opts.probe_exe, &work.join("playground"))?;
    let rt = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    let client = Arc::new(MetaClient::new(pg.addr("metad"), TcpTransport::new(), rt.handle().clone()));
    let catalog = RemoteCatalog::connect(client).map_err(|e| e.to_string())?;
    let cluster = ProcessCluster::new(catalog.clone(), TcpTransport::new());
    let mut remote = Database::remote(catalog.clone(), Arc::new(ClusterStorage::new(cluster.clone(), catalog.clone())));
    remote.engine.cluster = Some(Arc::new(GraphdView { catalog: catalog.clone(), cluster: cluster.clone() }));
    let t = Instant::now();
    quiver_server::loader::load_placed_if_absent(&remote, &ds.dir, PARTITIONS, 3).map_err(|e| e.to_string())?;
    let load_s = t.elapsed().as_secs_f64();
    eprintln!("cluster loaded in {load_s:.1} s");
    let _ = writeln!(
        report,
        "Cluster load (INSERT statements through the storage client, every edge a chain across partitions): {load_s:.1} \
         s, {:.0} edges/s.\n",
        ds.edges as f64 / load_s
    );
    let graphd: std::net::SocketAddr = pg.addr("graphd")[0].parse().map_err(|e| format!("the graphd address: {e}"))?;
    let space = ds.space.clone();
    let connect = |addr: std::net::SocketAddr| {
        let space = space.clone();
        move || Ok(Box::new(Wire::connect(addr, &space)?) as Box<dyn Conn>)
    };

    // Single-client latency per workload, and the answers compared.
    let _ = writeln!(
        report,
        "## Reads, one client\n\n| workload | embedded mean ms | cluster mean ms | cluster/embedded | answers alike |\n\
         |---|---:|---:|---:|---:|"
    );
    let likes = 0;
    let mut e_conn = Wire::connect(embedded.addr, &ds.space)?;
    let mut c_conn = Wire::connect(graphd, &ds.space)?;
    // `--workloads` picks the reads measured one client at a time (the rest is measured always).
    let reads: Vec<Workload> =
        Workload::social().into_iter().filter(|w| opts.only.is_empty() || opts.only.contains(&w.name)).collect();
    for w in &reads {
        let starts = w.starts(&ds);
        let n = SINGLE_REQUESTS.min(starts.len());
        let timed = |conn: &mut Wire| -> Result<(f64, Vec<serde_json::Value>), String> {
            for (i, &v) in starts.iter().take(n).enumerate() {
                w.digest(conn, v, partner(starts, i), likes)?;
            }
            let (mut digests, t) = (Vec::with_capacity(n), Instant::now());
            for (i, &v) in starts.iter().take(n).enumerate() {
                digests.push(w.digest(conn, v, partner(starts, i), likes)?);
            }
            Ok((t.elapsed().as_secs_f64() * 1000.0 / n.max(1) as f64, digests))
        };
        let (e_ms, e_answers) = timed(&mut e_conn)?;
        let (c_ms, c_answers) = match timed(&mut c_conn) {
            Ok(r) => r,
            Err(e) => {
                let _ = writeln!(report, "| {} | {e_ms:.3} | failed: {e} | | |", w.name);
                continue;
            }
        };
        let alike = e_answers.iter().zip(&c_answers).filter(|(a, b)| a == b).count();
        let _ = writeln!(report, "| {} | {e_ms:.3} | {c_ms:.3} | {:.2} | {alike}/{n} |", w.name, c_ms / e_ms);
        eprintln!("{}: embedded {e_ms:.3} ms, cluster {c_ms:.3} ms, {alike}/{n} alike", w.name);
    }
    let _ = writeln!(report);

    // Throughput at 16 clients, and single inserts.
    let _ = writeln!(
        report,
        "## Throughput and inserts\n\n| measurement | embedded | cluster | cluster/embedded |\n|---|---:|---:|---:|"
    );
    let point = |name: &str, clients: usize, cell: Duration| -> Result<(LadderPoint, LadderPoint), String> {
        let w = Workload::social()
            .into_iter()
            .chain(Workload::social_mixes())
            .find(|w| w.name == name)
            .ok_or_else(|| format!("no workload {name}"))?;
        let request = |c: usize| w.request(&ds, c, likes);
        let e = ladder(name, "embedded", clients, cell, &connect(embedded.addr), &request)?;
        let c = ladder(name, "cluster", clients, cell, &connect(graphd), &request)?;
        Ok((e, c))
    };
    let mut rounds_note = String::new();
    for (name, label) in [("go1-dst", "1-hop GO"), ("go3-dst", "3-hop GO")] {
        // Requests and seconds of each mode summed over the rounds; each round's ratio kept to show the spread.
        let (mut e_sum, mut c_sum, mut ratios) = ((0u64, 0.0f64), (0u64, 0.0f64), Vec::new());
        for _ in 0..ROUNDS {
            let (e, c) = point(name, CLIENTS, CELL / ROUNDS)?;
            e_sum = (e_sum.0 + e.requests, e_sum.1 + e.requests as f64 / e.qps);
            c_sum = (c_sum.0 + c.requests, c_sum.1 + c.requests as f64 / c.qps);
            ratios.push(c.qps / e.qps);
        }
        let (e_qps, c_qps) = (e_sum.0 as f64 / e_sum.1, c_sum.0 as f64 / c_sum.1);
        let _ = writeln!(
            report,
            "| {label} at {CLIENTS} clients, requests/s | {e_qps:.0} | {c_qps:.0} | {:.2} |",
            c_qps / e_qps
        );
        let spread = ratios.iter().map(|r| format!("{r:.2}")).collect::<Vec<_>>().join(", ");
        let _ = write!(rounds_note, " {label}: {spread}.");
        eprintln!("{label} at {CLIENTS} clients: embedded {e_qps:.0}/s, cluster {c_qps:.0}/s (rounds: {spread})");
    }
    let (e, c) = point("insert-edge", 1, CELL)?;
    for (label, ev, cv) in [
        ("single INSERT EDGE p50 ms (client side)", e.client.p50, c.client.p50),
        ("single INSERT EDGE p99 ms (client side)", e.client.p99, c.client.p99),
    ] {
        let _ = writeln!(report, "| {label} | {ev:.2} | {cv:.2} | {:.1} |", cv / ev.max(1e-3));
    }
    let _ = writeln!(
        report,
        "\nThroughput: {ROUNDS} rounds of {:.1} s per mode, embedded and cluster in turn (each mode's requests over \
         its seconds, summed over the rounds). Cluster/embedded per round:{rounds_note}",
        (CELL / ROUNDS).as_secs_f64()
    );
    eprintln!(
        "insert p50/p99: embedded {:.2}/{:.2} ms, cluster {:.2}/{:.2} ms",
        e.client.p50, e.client.p99, c.client.p50, c.client.p99
    );

    // Failover: the leader of partition 1 is killed; writes to partition 1 until one is acknowledged.
    let desc = catalog.space(&ds.space).map_err(|e| e.to_string())?;
    let in_part_1: Vec<i64> = ds
        .starts
        .iter()
        .copied()
        .filter(|v| quiver_storage::keys::part_of(&desc, &Value::Int(*v)) == 1)
        .take(2)
        .collect();
    let [src, dst] = in_part_1[..] else { return Err("no two start vertices in partition 1".into()) };
    let parts = c_conn.run("SHOW PARTS 1")?.0;
    let leader = parts.first().and_then(|r| r.get(1)).and_then(|v| match v {
        Value::String(s) => Some(s.to_string()),
        _ => None,
    });
    let leader = leader.ok_or("SHOW PARTS named no leader of partition 1")?;
    let pid = pg.procs.iter().find(|p| p.0 == "storaged" && p.1 == leader).map(|p| p.2).ok_or("no such storaged")?;
    let killed = Instant::now();
    Command::new("kill").args(["-9", &pid.to_string()]).status().map_err(|e| e.to_string())?;
    let mut attempt = 0;
    let failover = loop {
        attempt += 1;
        let stmt = format!("INSERT EDGE knows(time) VALUES {src}->{dst}@{}:(1)", 2_000_000_000 + attempt);
        if c_conn.run(&stmt).is_ok() {
            break killed.elapsed();
        }
        if killed.elapsed() > Duration::from_secs(60) {
            return Err("no write to partition 1 acknowledged within 60 s of killing its leader".into());
        }
    };
    let _ = writeln!(
        report,
        "\n## Failover\n\nThe storage host leading partition 1 ({leader}) killed with SIGKILL: the first write to \
         partition 1 was acknowledged {:.2} s later ({attempt} attempts).",
        failover.as_secs_f64()
    );
    eprintln!("failover: {:.2} s", failover.as_secs_f64());
    drop(pg);
    let path = out.join("cluster.md");
    std::fs::write(&path, &report).map_err(|e| format!("{}: {e}", path.display()))?;
    println!("{report}");
    Ok(out)
}
