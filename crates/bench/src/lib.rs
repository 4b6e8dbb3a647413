//! `quiver bench`: generates the seed workloads' data, loads it into Quiver (`quiver import`) and into the peers
//! (`bench/peers.py`: DuckDB, Kuzu, ladybug, Neo4j), checks that every system gives the same answers, measures
//! latencies (one client, the same start vertices everywhere) and Quiver's throughput and latency percentiles at
//! 1..32 concurrent clients over NebulaGraph's protocol and in process, and writes `bench/results/<date>/`:
//! `results.json`, `results.md` and PNG plots (`bench/plot.py`). See `bench/README.md`.

pub mod cluster;
pub mod compare;
pub mod drive;
pub mod gen;
pub mod report;
pub mod workloads;

use drive::{Conn, Embedded, GraphServer, LadderPoint, Percentiles, Wire};
use gen::Dataset;
use quiver_server::import::{import, ImportOptions};
use quiver_server::progress::Progress;
use quiver_server::Database;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use workloads::Workload;

pub struct Options {
    pub quick: bool,
    /// Where the data and databases go (deleted and regenerated per run).
    pub work_dir: PathBuf,
    /// Where `<date>/` with the results is written.
    pub out_dir: PathBuf,
    /// The social graph's scale (`sf1`, `sf10`, `sf100`).
    pub social_scale: String,
    /// Where LDBC SF0.1 is (`../shared/data/ldbc-sf01`); skipped if absent.
    pub ldbc_dir: PathBuf,
    /// Where the LDBC SNB Interactive v1 test network is (`../shared/data/ldbc-snb-interactive-v1-testdata`),
    /// for the short reads IS1-IS7; skipped if absent.
    pub snb_dir: PathBuf,
    /// Peers to run (`duckdb`, `kuzu`, `ladybug`, `neo4j`); empty runs Quiver alone.
    pub peers: Vec<String>,
    /// The Python with the peers installed (`bench/setup.sh` makes `bench/.venv`).
    pub python: PathBuf,
    /// `bench/` (the peers and plot scripts).
    pub scripts: PathBuf,
    pub seed: u64,
    /// Only these read workloads (by name), and no ladders, when not empty: a run of a few workloads against the
    /// peers.
    pub only: Vec<String>,
    /// The `quiver` binary, run as `quiver bench-probe` to measure a restart and the resident memory of a fresh
    /// process holding a loaded database, and as `quiver playground` for `--cluster`.
    pub probe_exe: PathBuf,
    /// `--cluster`: the cluster measurements ([`cluster::run`]) instead of the peers'.
    pub cluster: bool,
}

/// One system's load of one dataset.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct LoadStats {
    pub system: String,
    pub dataset: String,
    pub edges: u64,
    pub seconds: f64,
    pub edges_per_s: f64,
    pub disk_bytes: u64,
    /// Resident memory of a fresh process holding the loaded database, after a first query built its in-memory
    /// state (for the peers: what loading added to the Python process).
    pub rss_bytes: u64,
    /// Reopening the loaded database and answering a first query (Quiver: in a fresh process, its start included).
    pub restart_s: f64,
}

/// One system's one-client latencies over a workload's start vertices.
#[derive(Debug, Clone, Serialize)]
pub struct SingleStats {
    pub system: String,
    pub dataset: String,
    pub workload: String,
    pub queries: usize,
    pub latency_ms: Percentiles,
    /// For a peer: Quiver's mean latency over the same start vertices (a peer out of time budget runs only the
    /// first ones), what the ratio in the table compares against.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quiver_mean_ms: Option<f64>,
    /// For Quiver: the error a query of the workload failed with (then nothing of it is measured or compared, and
    /// it gets no ladder; the peers still run it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Whether a peer's answers equal Quiver's on every start vertex.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    pub dataset: String,
    pub workload: String,
    pub system: String,
    pub agreed: usize,
    pub compared: usize,
    /// The first disagreement, if any.
    pub first_difference: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Machine {
    pub cores: usize,
    pub memory_gib: f64,
    pub cpu: String,
    pub os: String,
    /// Clients run in the same process as the server, on the same cores.
    pub client_cores: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Results {
    pub date: String,
    pub mode: String,
    pub machine: Machine,
    pub datasets: Vec<DatasetInfo>,
    pub loads: Vec<LoadStats>,
    pub single: Vec<SingleStats>,
    pub checks: Vec<Check>,
    pub ladder: Vec<LadderPoint>,
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct DatasetInfo {
    pub name: String,
    pub vertices: u64,
    pub edges: u64,
    pub starts: usize,
}

struct Plan {
    clients: Vec<usize>,
    cell: Duration,
    check_starts: usize,
    rage: gen::RageScale,
    /// Seconds a peer may spend on one workload's start vertices before it stops taking more (at least one).
    peer_budget: Duration,
    /// Whether the MATCH forms run the concurrency ladders too (full mode only: at 3 hops one of their queries
    /// takes longer than a quick cell).
    match_ladders: bool,
}

fn plan(quick: bool) -> Plan {
    if quick {
        Plan {
            clients: vec![1, 4, 16],
            cell: Duration::from_millis(700),
            check_starts: 20,
            rage: gen::RageScale { persons: 10_000, items: 1_000, likes_per_person: 50 },
            peer_budget: Duration::from_secs(15),
            match_ladders: false,
        }
    } else {
        Plan {
            clients: vec![1, 2, 4, 8, 16, 32],
            cell: Duration::from_secs(3),
            check_starts: 50,
            rage: gen::RageScale { persons: 100_000, items: 2_000, likes_per_person: 100 },
            peer_budget: Duration::from_secs(30),
            match_ladders: true,
        }
    }
}

/// Runs the benchmark; returns the results folder.
pub fn run(opts: &Options) -> Result<PathBuf, String> {
    if opts.cluster {
        return cluster::run(opts);
    }
    // Session open/close lines of the graph server would drown the progress bars.
    log::set_max_level(log::LevelFilter::Warn);
    let p = plan(opts.quick);
    let date = report::today();
    // A quick run does not replace the day's full results.
    let out = opts.out_dir.join(if opts.quick { format!("{date}-quick") } else { date.clone() });
    std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    let _ = std::fs::remove_dir_all(&opts.work_dir);
    let data = opts.work_dir.join("data");
    let scale = gen::social_scale(&opts.social_scale)
        .ok_or_else(|| format!("unknown scale `{}' (sf0.1, sf1, sf10, sf100)", opts.social_scale))?;
    let mut results = Results {
        date: date.clone(),
        mode: if opts.quick { "quick".into() } else { "full".into() },
        machine: machine(),
        datasets: Vec::new(),
        loads: Vec::new(),
        single: Vec::new(),
        checks: Vec::new(),
        ladder: Vec::new(),
        notes: Vec::new(),
    };
    let t = Instant::now();
    let mut sets =
        vec![(gen::social(&data.join("social"), scale, opts.seed, p.check_starts)?, Workload::social(), true)];
    if opts.ldbc_dir.join("Person.csv").exists() {
        sets.push((
            gen::ldbc(&opts.ldbc_dir, &data.join("ldbc"), opts.seed, p.check_starts)?,
            Workload::social(),
            false,
        ));
    } else {
        results.notes.push(format!("LDBC SF0.1 not found at {}; skipped", opts.ldbc_dir.display()));
    }
    if opts.snb_dir.join("vanilla").exists() {
        let ds = gen::snb(&opts.snb_dir.join("vanilla"), &data.join("snb"), opts.seed, p.check_starts)?;
        sets.push((ds, Workload::snb(), false));
    } else {
        results.notes.push(format!("the LDBC SNB test network not found at {}; skipped", opts.snb_dir.display()));
    }
    sets.push((gen::ragedb(&data.join("ragedb"), p.rage, opts.seed, p.check_starts)?, Workload::rage(), true));
    eprintln!("generated {} datasets in {:.1} s", sets.len(), t.elapsed().as_secs_f64());
    if !opts.only.is_empty() {
        for (_, reads, ladders) in &mut sets {
            reads.retain(|w| opts.only.contains(&w.name));
            *ladders = false;
        }
        sets.retain(|(_, reads, _)| !reads.is_empty());
    }
    for (ds, reads, ladders) in &sets {
        results.datasets.push(DatasetInfo {
            name: ds.name.clone(),
            vertices: ds.vertices,
            edges: ds.edges,
            starts: ds.starts.len(),
        });
        bench_dataset(opts, &p, ds, reads, *ladders, &mut results)?;
        // Written after every dataset, so a long run stopped part way keeps what it measured.
        report::write(&results, &out, opts)?;
    }
    Ok(out)
}

fn bench_dataset(
    opts: &Options,
    p: &Plan,
    ds: &Dataset,
    reads: &[Workload],
    ladders: bool,
    results: &mut Results,
) -> Result<(), String> {
    let likes = p.rage.likes_per_person;
    let dir = opts.work_dir.join(format!("quiver-{}", ds.name));
    let (db, load) = load_quiver(opts, ds, &dir)?;
    eprintln!(
        "quiver loaded {}: {} edges in {:.2} s ({:.0} edges/s), {} B/edge on disk, restart {:.2} s",
        ds.name,
        ds.edges,
        load.seconds,
        load.edges_per_s,
        load.disk_bytes / ds.edges.max(1),
        load.restart_s
    );
    results.loads.push(load);
    // One client, every start vertex: latencies and the answers the peers must match. A workload one of whose
    // queries fails (say, past the per-query memory bound) is reported as failed rather than ending the run.
    let mut answers = Vec::new();
    let mut failed = Vec::new();
    let mut conn = Embedded::new(db.clone(), &ds.space);
    for w in reads {
        let (digests, us, error) = match quiver_single(p, ds, w, &mut conn, likes) {
            Ok((digests, us)) => (digests, us, None),
            Err(e) => {
                eprintln!("quiver failed {} on {}: {e}", w.name, ds.name);
                results
                    .notes
                    .push(format!("quiver failed `{}` on {} (not measured or compared): {e}", w.name, ds.name));
                failed.push(w.name.clone());
                (Vec::new(), Vec::new(), Some(e))
            }
        };
        results.single.push(SingleStats {
            system: "quiver".into(),
            dataset: ds.name.clone(),
            workload: w.name.clone(),
            queries: us.len(),
            latency_ms: Percentiles::of_us(us.clone()),
            quiver_mean_ms: None,
            error,
        });
        answers.push((w.name.clone(), digests, us));
    }
    if !opts.peers.is_empty() {
        match peers(opts, p, ds, reads) {
            Ok(peer) => {
                for (system, stats) in peer.systems {
                    if let Some(e) = stats.error {
                        results.notes.push(format!("{system} on {}: {e}", ds.name));
                        continue;
                    }
                    if let Some(mut l) = stats.load {
                        l.system = system.clone();
                        l.dataset = ds.name.clone();
                        results.loads.push(l);
                    }
                    for ((name, digests, us), w) in answers.iter().zip(reads) {
                        let Some(pw) = stats.workloads.get(name) else { continue };
                        let starts = w.starts(ds);
                        let same = &us[..pw.latencies_ms.len().min(us.len())];
                        let quiver_failed = failed.contains(name);
                        results.single.push(SingleStats {
                            system: system.clone(),
                            dataset: ds.name.clone(),
                            workload: name.clone(),
                            queries: pw.latencies_ms.len(),
                            latency_ms: Percentiles::of_us(
                                pw.latencies_ms.iter().map(|ms| (ms * 1000.0) as u64).collect(),
                            ),
                            quiver_mean_ms: (!quiver_failed)
                                .then(|| same.iter().sum::<u64>() as f64 / 1000.0 / same.len().max(1) as f64),
                            error: None,
                        });
                        if quiver_failed {
                            continue;
                        }
                        let mut check = Check {
                            dataset: ds.name.clone(),
                            workload: name.clone(),
                            system: system.clone(),
                            agreed: 0,
                            compared: 0,
                            first_difference: None,
                        };
                        for (i, (q, theirs)) in digests.iter().zip(&pw.digests).enumerate() {
                            check.compared += 1;
                            if q == theirs {
                                check.agreed += 1;
                            } else if check.first_difference.is_none() {
                                check.first_difference =
                                    Some(format!("from {}: quiver {q}, {system} {theirs}", starts[i]));
                            }
                        }
                        results.checks.push(check);
                    }
                }
            }
            Err(e) => results.notes.push(format!("peers on {}: {e}", ds.name)),
        }
    }
    if ladders {
        let server = GraphServer::start(db.clone())?;
        // The MATCH forms only in full mode (`Plan::match_ladders`); never a workload Quiver failed.
        let mut all: Vec<Workload> = reads
            .iter()
            .filter(|w| !failed.contains(&w.name) && !w.is_path() && (p.match_ladders || !w.is_match()))
            .cloned()
            .collect();
        if reads.iter().any(|w| matches!(w.kind, workloads::Kind::Go { .. })) {
            all.extend(Workload::social_mixes());
        }
        let cells = all.len() * p.clients.len() * 2;
        let mut bar = Progress::new(format!("ladders on {}", ds.name), "runs", cells as u64, false);
        for w in &all {
            for path in ["wire", "embedded"] {
                for &c in &p.clients {
                    let make: Box<dyn Fn() -> Result<Box<dyn Conn>, String> + Sync> = if path == "wire" {
                        let addr = server.addr;
                        let space = ds.space.clone();
                        Box::new(move || Ok(Box::new(Wire::connect(addr, &space)?) as Box<dyn Conn>))
                    } else {
                        let db = db.clone();
                        let space = ds.space.clone();
                        Box::new(move || Ok(Box::new(Embedded::new(db.clone(), &space)) as Box<dyn Conn>))
                    };
                    let point =
                        drive::ladder(&w.name, path, c, p.cell, &*make, &|client| w.request(ds, client, likes))?;
                    results.ladder.push(point);
                    bar.add(1);
                }
            }
        }
        bar.finish();
    }
    Ok(())
}

/// Quiver's one-client pass over a workload: untimed warm-up starts, then every start vertex timed. Returns the
/// digests and the latencies in microseconds.
fn quiver_single(
    p: &Plan,
    ds: &Dataset,
    w: &Workload,
    conn: &mut Embedded,
    likes: u64,
) -> Result<(Vec<serde_json::Value>, Vec<u64>), String> {
    let warm = Instant::now();
    let starts = w.starts(ds);
    // Warm-up, untimed: every start once (stopping early once half the time budget is spent), on every system, so
    // all are measured warm, Quiver's read-built caches included (a 3-hop read may need several starts' reads to
    // turn an edge type's cache hot).
    for (i, &v) in starts.iter().enumerate() {
        if warm.elapsed() > p.peer_budget / 2 {
            break;
        }
        w.digest(conn, v, workloads::partner(starts, i), likes)?;
    }
    let mut us = Vec::new();
    let mut digests = Vec::new();
    for (i, &v) in starts.iter().enumerate() {
        let t = Instant::now();
        digests.push(w.digest(conn, v, workloads::partner(starts, i), likes)?);
        us.push(t.elapsed().as_micros() as u64);
    }
    Ok((digests, us))
}

fn dir_bytes(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    entries
        .flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => dir_bytes(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}

/// The process's resident set, from `/proc/self/status`.
pub fn rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

/// The first query after a load or a restart: builds the in-memory topology.
fn first_query(db: &Arc<Database>, space: &str, v: i64) -> Result<(), String> {
    let mut c = Embedded::new(db.clone(), space);
    c.run(&format!("GO FROM {v} OVER * YIELD dst(edge) | YIELD COUNT(*)")).map(|_| ())
}

fn load_quiver(opts: &Options, ds: &Dataset, dir: &Path) -> Result<(Arc<Database>, LoadStats), String> {
    let _ = std::fs::remove_dir_all(dir);
    let db = Database::open(dir).map_err(|e| e.to_string())?;
    let iopts = ImportOptions { progress: true, ..Default::default() };
    let r = import(&db, &ds.mapping(), &iopts).map_err(|e| e.to_string())?;
    if r.bad_rows > 0 {
        return Err(format!("{} bad rows importing {}: {:?}", r.bad_rows, ds.name, r.bad_examples));
    }
    drop(db);
    let disk = dir_bytes(dir);
    // A fresh process: its start, the open, and a first query (which builds the topology) are the restart; its
    // resident set then is the memory the loaded graph needs.
    let v = ds.starts.first().copied().unwrap_or(0);
    let t = Instant::now();
    let out = std::process::Command::new(&opts.probe_exe)
        .arg("bench-probe")
        .arg(dir)
        .arg(&ds.space)
        .arg(v.to_string())
        .output()
        .map_err(|e| format!("cannot run {} bench-probe: {e}", opts.probe_exe.display()))?;
    let restart = t.elapsed().as_secs_f64();
    if !out.status.success() {
        return Err(format!("bench-probe failed: {}", String::from_utf8_lossy(&out.stderr)));
    }
    let rss: u64 = String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .map_err(|_| format!("bench-probe printed {:?}", String::from_utf8_lossy(&out.stdout)))?;
    let db = Arc::new(Database::open(dir).map_err(|e| e.to_string())?);
    first_query(&db, &ds.space, v)?;
    let stats = LoadStats {
        system: "quiver".into(),
        dataset: ds.name.clone(),
        edges: r.edges,
        seconds: r.seconds,
        edges_per_s: r.edges as f64 / r.seconds.max(1e-9),
        disk_bytes: disk,
        rss_bytes: rss,
        restart_s: restart,
    };
    Ok((db, stats))
}

/// `quiver bench-probe DIR SPACE VID`: opens the database, answers a first query from `vid`, and returns the
/// process's resident set in bytes.
pub fn probe(dir: &Path, space: &str, vid: i64) -> Result<u64, String> {
    let db = Arc::new(Database::open(dir).map_err(|e| e.to_string())?);
    first_query(&db, space, vid)?;
    Ok(rss_bytes())
}

#[derive(serde::Deserialize)]
struct PeerOutput {
    systems: std::collections::BTreeMap<String, PeerSystem>,
}

#[derive(serde::Deserialize)]
struct PeerSystem {
    error: Option<String>,
    load: Option<LoadStats>,
    #[serde(default)]
    workloads: std::collections::BTreeMap<String, PeerWorkload>,
}

#[derive(serde::Deserialize)]
struct PeerWorkload {
    latencies_ms: Vec<f64>,
    digests: Vec<serde_json::Value>,
}

fn peers(opts: &Options, p: &Plan, ds: &Dataset, reads: &[Workload]) -> Result<PeerOutput, String> {
    let likes = p.rage.likes_per_person;
    let spec = opts.work_dir.join(format!("peers-{}.json", ds.name));
    let out = opts.work_dir.join(format!("peers-{}-out.json", ds.name));
    let req = serde_json::json!({
        "dataset": ds.name,
        "dir": ds.dir,
        "kind": if ds.name.starts_with("ragedb") {
            "ragedb"
        } else if ds.space == "snb" {
            "snb"
        } else {
            "social"
        },
        "starts": ds.starts,
        "message_starts": ds.message_starts,
        "workloads": reads.iter().map(|w| &w.name).collect::<Vec<_>>(),
        "likes": likes,
        "top": workloads::TOP_ITEMS,
        "systems": opts.peers,
        "budget_s": p.peer_budget.as_secs_f64(),
        "warmup": p.check_starts,
        "work": opts.work_dir.join(format!("peers-{}", ds.name)),
        "out": out,
    });
    std::fs::write(&spec, req.to_string()).map_err(|e| e.to_string())?;
    let status = std::process::Command::new(&opts.python)
        .arg(opts.scripts.join("peers.py"))
        .arg(&spec)
        .status()
        .map_err(|e| format!("cannot run {}: {e} (run bench/setup.sh)", opts.python.display()))?;
    if !status.success() {
        return Err(format!("bench/peers.py failed ({status})"));
    }
    let text = std::fs::read_to_string(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", out.display()))
}

pub(crate) fn machine() -> Machine {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split(':').nth(1))
        .unwrap_or("unknown")
        .trim()
        .to_string();
    let mem = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| s.lines().next().and_then(|l| l.split_whitespace().nth(1)).and_then(|kb| kb.parse::<f64>().ok()))
        .unwrap_or(0.0);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    Machine {
        cores,
        memory_gib: mem / 1024.0 / 1024.0,
        cpu,
        os: std::fs::read_to_string("/etc/os-release")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("PRETTY_NAME="))
                    .map(|l| l.trim_start_matches("PRETTY_NAME=").trim_matches('"').to_string())
            })
            .unwrap_or_default(),
        client_cores: format!("the same {cores} cores as the server (clients are threads of the benchmark process)"),
    }
}
