//! A cluster of real processes (`quiver playground`: 3 metads, 3 storageds, 1 graphd on 127.0.0.x), with kill -9
//! of a storage host during concurrent writes, its restart, a second host's kill, and the meta leader's kill
//! (issue 22's process tests; docs/design/cluster.md §8).

use serde_json::{json, Value as J};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

mod support;

use quiver_api::{Catalog, StorageClient};
use quiver_cluster::process::{GraphdView, ProcessCluster};
use quiver_cluster::rpc::{HostRequest, PartOp};
use quiver_cluster::ClusterStorage;
use quiver_common::Value;
use quiver_metad::remote::RemoteCatalog;
use quiver_metad::service::MetaClient;
use quiver_query::QueryEngine;
use quiver_raft::tcp::TcpTransport;
use quiver_storage::keys::part_of;

use support::*;

/// The tests of this file run one at a time: each starts seven processes, and the timing bounds they check (a
/// writer's wait across a failover) are for a machine that is not running two more playgrounds beside them.
fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static ONE: Mutex<()> = Mutex::new(());
    ONE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Ports apart from other runs': the playground's defaults plus an offset by process id (`start_with` moves on if
/// one is taken); each test adds its own.
fn base_offset() -> u16 {
    1000 + (std::process::id() % 20_000) as u16
}

/// A running playground and the processes it reported.
struct Playground {
    child: Child,
    /// `(role, address, pid)` of each process.
    procs: Vec<(String, String, u32)>,
    http: String,
    /// Processes the test started itself (restarted storage hosts).
    extra: Vec<Child>,
    dir: tempfile::TempDir,
    metas: String,
}

impl Playground {
    fn start_at(offset: u16) -> Playground {
        Playground::start_with(offset, &[])
    }

    /// Starts a playground at `offset`, or, if it cannot start there (a port in use by another run), a few
    /// offsets further.
    fn start_with(offset: u16, extra: &[&str]) -> Playground {
        for attempt in 0..4u16 {
            if let Some(pg) = Playground::try_start(offset + attempt * 97, extra) {
                return pg;
            }
        }
        panic!("no playground started (4 attempts)");
    }

    fn try_start(offset: u16, extra: &[&str]) -> Option<Playground> {
        let dir = tempfile::tempdir().unwrap();
        let mut child = Command::new(BIN)
            .args(["playground", "--dir", dir.path().to_str().unwrap(), "--port-offset", &offset.to_string()])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let out = BufReader::new(child.stdout.take().unwrap());
        let (mut procs, mut http) = (Vec::new(), String::new());
        for line in out.lines() {
            let line = line.unwrap();
            let words: Vec<&str> = line.split_whitespace().collect();
            match words.as_slice() {
                [role, addr, "pid", pid] => procs.push((role.to_string(), addr.to_string(), pid.parse().unwrap())),
                ["http", addr] => http = addr.to_string(),
                ["playground", "ready", ..] => break,
                _ => panic!("unexpected playground output: {line}"),
            }
        }
        if procs.len() != 7 {
            // It said why on stderr (a port in use, most likely) and stopped what it started.
            let _ = child.wait();
            return None;
        }
        let metas = procs.iter().filter(|p| p.0 == "metad").map(|p| p.1.clone()).collect::<Vec<_>>().join(",");
        Some(Playground { child, procs, http, extra: Vec::new(), dir, metas })
    }

    fn proc(&self, role: &str, n: usize) -> (String, u32) {
        let p = self.procs.iter().filter(|p| p.0 == role).nth(n - 1).unwrap();
        (p.1.clone(), p.2)
    }

    fn kill9(&self, role: &str, n: usize) {
        let (_, pid) = self.proc(role, n);
        assert!(Command::new("kill").args(["-9", &pid.to_string()]).status().unwrap().success());
    }

    fn restart_storaged(&mut self, n: usize) {
        let (addr, _) = self.proc("storaged", n);
        let data = self.dir.path().join(format!("storaged-{n}"));
        let log = std::fs::File::create(self.dir.path().join(format!("logs/storaged-{n}-again.log"))).unwrap();
        let child = Command::new(BIN)
            .args(["storaged", "--addr", &addr, "--data-dir", data.to_str().unwrap(), "--meta-addrs", &self.metas])
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        self.extra.push(child);
    }

    fn exec(&self, stmt: &str) -> Result<J, String> {
        self.exec_in("c", stmt)
    }

    fn exec_in(&self, space: &str, stmt: &str) -> Result<J, String> {
        let resp = agent()
            .post(&format!("http://{}/api/v1/exec", self.http))
            .timeout(Duration::from_secs(60))
            .send_json(json!({"stmt": stmt, "space": space}));
        match resp {
            Ok(r) => r.into_json().map_err(|e| e.to_string()),
            Err(ureq::Error::Status(_, r)) => r.into_json().map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        }
    }

    /// Runs `stmt` until it succeeds, for up to `within`.
    fn exec_ok(&self, stmt: &str, within: Duration) -> J {
        let started = Instant::now();
        loop {
            let r = self.exec(stmt);
            match &r {
                Ok(j) if code(j) == 0 => return j.clone(),
                _ if started.elapsed() > within => panic!("`{stmt}` did not succeed within {within:?}: {r:?}"),
                _ => std::thread::sleep(Duration::from_millis(200)),
            }
        }
    }

    fn logs(&self) -> String {
        let mut all = String::new();
        for e in std::fs::read_dir(self.dir.path().join("logs")).unwrap() {
            let path = e.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            let tail: Vec<&str> = text.lines().rev().take(15).collect();
            all += &format!("== {}\n{}\n", path.display(), tail.into_iter().rev().collect::<Vec<_>>().join("\n"));
        }
        all
    }
}

impl Drop for Playground {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("{}", self.logs());
        }
        for c in &mut self.extra {
            let _ = c.kill();
            let _ = c.wait();
        }
        let _ = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status();
        let _ = self.child.wait();
    }
}

/// Query files run by a query engine in this process over a playground's meta service and storage hosts (the
/// remote catalog and storage client a graphd uses; a graphd adds only its ports). A representative subset: the
/// nba graph through GO, FETCH, LOOKUP, MATCH and FIND PATH (each file loads `nba`, one partition, one replica,
/// itself), indexes on a space spread over the hosts (`partitioned`), and jobs kept by the meta service
/// (`stats_jobs`). `tests/cluster_queries.rs` runs every file
/// on the simulated cluster.
#[test]
fn query_files_on_a_playground() {
    let _one = one_at_a_time();
    // (go.test's `tree` space and partitioned.test's `spread` have 3 partitions of one replica, on different hosts:
    // the multi-hop GOs are walked step by step from the client, and the index builds and scans are each partition
    // leader's.)
    let files = [
        "nba",
        "go",
        "match_basic",
        "match_multi_hop",
        "lookup",
        "find_path",
        "fetch",
        "insert",
        "update",
        "partitioned",
        "stats_jobs",
    ];
    let base = base_offset() + 7;
    let rt = tokio::runtime::Runtime::new().unwrap();
    for (i, file) in files.iter().enumerate() {
        let pg = Playground::start_at(base + i as u16);
        let metas = pg.metas.split(',').map(str::to_string).collect();
        let client = Arc::new(MetaClient::new(metas, TcpTransport::new(), rt.handle().clone()));
        let catalog = RemoteCatalog::connect(client).unwrap();
        let cluster = ProcessCluster::new(catalog.clone(), TcpTransport::new());
        let storage = Arc::new(ClusterStorage::new(cluster.clone(), catalog.clone()));
        storage.start_jobs(format!("test-graphd-{i}")).unwrap();
        let mut engine = QueryEngine::new(catalog.clone(), storage);
        engine.cluster = Some(Arc::new(GraphdView { catalog, cluster }));
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../tests/queries/{file}.test"));
        let started = Instant::now();
        let failures = quiver_tests::run_file_on(&path, &mut engine);
        assert!(failures.is_empty(), "{file}: {} failure(s):\n{}", failures.len(), failures.join("\n\n"));
        eprintln!("{file}.test on a playground: {:?}", started.elapsed());
    }
}

/// One storage host's Raft traffic is cut off (the transport's fault hook: a network partition of that host for
/// Raft) while four clients write through graphd: the partitions it led elect leaders among the other two, writes go
/// on, the cut-off host refuses writes sent straight to it, and once healed nothing acknowledged is lost and nothing
/// it refused appears.
#[test]
fn a_storage_host_cut_off_stops_acknowledging_and_nothing_acknowledged_is_lost() {
    let _one = one_at_a_time();
    let pg = Playground::start_with(base_offset() + 20, &["--fault-injection"]);
    pg.exec_ok("CREATE SPACE c(partition_num=6, replica_factor=3, vid_type=INT64)", Duration::from_secs(30));
    pg.exec_ok("CREATE EDGE e(w int)", Duration::from_secs(30));
    pg.exec_ok("INSERT EDGE e(w) VALUES -1->-2:(-1)", Duration::from_secs(30));
    hostile_frames_are_refused(&pg.proc("storaged", 1).0);
    hostile_frames_are_refused(&pg.proc("metad", 1).0);
    let victim = pg.proc("storaged", 3).0;
    let rt = tokio::runtime::Runtime::new().unwrap();
    let metas = pg.metas.split(',').map(str::to_string).collect();
    let catalog =
        RemoteCatalog::connect(Arc::new(MetaClient::new(metas, TcpTransport::new(), rt.handle().clone()))).unwrap();
    let space = catalog.space("c").unwrap();
    let edge = catalog.schema(&space, quiver_api::SchemaKind::Edge, "e").unwrap();
    let cluster = ProcessCluster::new(catalog.clone(), TcpTransport::new());
    let host = cluster.remote(&victim).unwrap();
    let led =
        rows(&pg.exec_ok("SHOW PARTS", Duration::from_secs(10))).iter().filter(|p| p[1] == *victim.as_str()).count();

    let pg = Arc::new(pg);
    let writers = Writers::start(&pg);
    std::thread::sleep(Duration::from_secs(2));
    host.call(HostRequest::CutOff(true)).unwrap();
    let cut = writers.acked();
    std::thread::sleep(Duration::from_secs(8));
    // Straight to the cut-off host, one self-loop in each partition: refused, whether it led the partition or not.
    let mut refused = Vec::new();
    for part in 1..=space.partition_num {
        let vid = (-1_000_000..0i64).find(|v| part_of(&space, &Value::Int(*v)) == part).unwrap();
        let key = quiver_api::EdgeKeyVal { src: Value::Int(vid), edge_type: edge.id, rank: 0, dst: Value::Int(vid) };
        let m = quiver_api::Mutation::InsertEdge {
            key,
            schema: edge.clone(),
            values: vec![Value::Int(vid)],
            if_not_exists: false,
        };
        let op = PartOp::Write(vec![(part, vec![m])]);
        let answer = host.call(HostRequest::Parts { space: (*space).clone(), lead: vec![part], op });
        assert!(answer.is_err(), "part {part}: the cut-off host acknowledged a write: {answer:?}");
        refused.push(vid);
    }
    let during = writers.acked() - cut;
    // The partitions it led are led by the other two now.
    for p in rows(&pg.exec_ok("SHOW PARTS", Duration::from_secs(10))) {
        assert!(p[1] != *victim.as_str(), "{p:?}");
    }
    host.call(HostRequest::CutOff(false)).unwrap();
    std::thread::sleep(Duration::from_secs(3));
    let (acked, longest) = writers.stop();
    let mut pg = Arc::try_unwrap(pg).ok().expect("writers are done");
    eprintln!(
        "the cut-off host led {led} of 6 partitions; {cut} writes before, {during} while cut off, {} in all; \
         longest wait of a writer {longest:?}",
        acked.len()
    );
    assert!(during > 10, "writes stopped while one host of three was cut off: {during}");
    assert_eq!(edges_read(&pg, &acked), acked);
    let keys: Vec<String> = refused.iter().map(|v| format!("{v}->{v}")).collect();
    let r = pg.exec_ok(&format!("FETCH PROP ON e {} YIELD e.w", keys.join(",")), Duration::from_secs(30));
    assert_eq!(rows(&r), Vec::<Vec<J>>::new(), "a write the cut-off host refused was applied");

    // DROP SPACE with one storage host down: the others close the space's partitions (their groups stop leading
    // anything) within a heartbeat or two; the one that was down deletes what it holds of the space at its first
    // heartbeat after it restarts.
    pg.kill9("storaged", 3);
    pg.exec_ok("DROP SPACE c", Duration::from_secs(30));
    let stores: Vec<String> = (1..=2).map(|n| pg.proc("storaged", n).0).collect();
    let started = Instant::now();
    loop {
        let led = cluster.claims(&stores);
        if !led.keys().any(|(s, _)| *s == space.id) {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(15), "dropped space {} still led: {led:?}", space.id);
        std::thread::sleep(Duration::from_millis(200));
    }
    let engine_of_3 = pg.dir.path().join("storaged-3/kv");
    let held = stored_keys_of_space(&engine_of_3, &space);
    assert!(held > 0, "the host down held nothing of the space: the check below would prove nothing");
    pg.restart_storaged(3);
    let log = pg.dir.path().join("logs/storaged-3-again.log");
    let started = Instant::now();
    while !std::fs::read_to_string(&log).unwrap_or_default().contains("dropped while this host was down") {
        assert!(started.elapsed() < Duration::from_secs(20), "the restarted host deleted nothing:\n{}", pg.logs());
        std::thread::sleep(Duration::from_millis(200));
    }
    let mut restarted = pg.extra.pop().expect("the restarted host");
    restarted.kill().unwrap();
    restarted.wait().unwrap();
    assert_eq!(stored_keys_of_space(&engine_of_3, &space), 0, "of {held} keys of the dropped space, some are left");
}

/// How many keys a storage host's engine (at `path`, the process stopped) holds of `space`: its partitions' rows and
/// their Raft groups' logs and state.
fn stored_keys_of_space(path: &std::path::Path, space: &quiver_api::SpaceDesc) -> usize {
    use quiver_kv::KvEngine;
    let engine = quiver_kv_rocks::RocksEngine::open(path).unwrap();
    let mut n = 0;
    for part in 1..=space.partition_num {
        let (start, end) = quiver_storage::keys::part_range(space.id, part);
        engine
            .scan_range(&start, &end, &mut |_, _| {
                n += 1;
                true
            })
            .unwrap();
        let group = quiver_raft::partition_group(space.id, part);
        for kind in [quiver_raft::keys::LOG, quiver_raft::keys::VOTE, quiver_raft::keys::APPLIED] {
            engine
                .scan_prefix(&quiver_raft::keys::state_key(kind, group), &mut |_, _| {
                    n += 1;
                    true
                })
                .unwrap();
        }
    }
    n
}

/// A storage or meta port given a service request that does not decode answers with an error and keeps the
/// connection; one whose frame claims more than a frame may hold is closed before anything is allocated; a kind no
/// one speaks closes the connection too. The process serves on.
fn hostile_frames_are_refused(addr: &str) {
    use std::io::{Read, Write};
    let frame = |kind: u8, body: &[u8]| {
        let mut f = Vec::new();
        f.extend_from_slice(&((8 + 1 + 8 + body.len()) as u32).to_le_bytes());
        f.extend_from_slice(&7u64.to_le_bytes());
        f.push(kind);
        f.extend_from_slice(&0u64.to_le_bytes());
        f.extend_from_slice(body);
        f
    };
    let connect = || {
        let s = std::net::TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s
    };
    // Garbage for the service: a reply frame (kind 4 | 0x80, status OK) carrying the service's error.
    let mut s = connect();
    s.write_all(&frame(4, &[0xff; 40])).unwrap();
    let mut len = [0u8; 4];
    s.read_exact(&mut len).unwrap();
    let mut reply = vec![0u8; u32::from_le_bytes(len) as usize];
    s.read_exact(&mut reply).unwrap();
    assert_eq!((&reply[..8], reply[8], reply[9]), (&7u64.to_le_bytes()[..], 0x84, 0), "{addr}");
    assert!(String::from_utf8_lossy(&reply[10..]).contains("does not decode"), "{addr}: {reply:?}");
    // The same connection still serves.
    s.write_all(&frame(4, &[0xff; 3])).unwrap();
    s.read_exact(&mut len).unwrap();
    // A frame claiming 4 GiB, and a kind no one speaks: the connection is closed.
    for bad in [u32::MAX.to_le_bytes().to_vec(), frame(0x33, b"hello")] {
        let mut s = connect();
        s.write_all(&bad).unwrap();
        // Closed (end of stream or reset), never answered.
        let mut rest = Vec::new();
        let _ = s.read_to_end(&mut rest);
        assert!(rest.is_empty(), "{addr}: answered {rest:?}");
    }
}

/// Which metad (from 1) SHOW META LEADER names.
fn meta_leader(pg: &Playground) -> usize {
    let leader = rows(&pg.exec_ok("SHOW META LEADER", Duration::from_secs(10)))[0][0].clone();
    (1..=3).find(|&n| leader == *pg.proc("metad", n).0.as_str()).unwrap_or_else(|| panic!("leader {leader}"))
}

/// Jobs are the meta service's (`cluster::jobs`): a job submitted through graphd outlives a kill -9 of that graphd
/// right after it answered. Another graph service (a storage client in this process, as a graphd runs one) lists
/// the job before it runs any, then runs it to the end, taking it over once the dead graphd's lease has lapsed if
/// that graphd had started it. The space has one replica per partition: no storage host carries it whole.
#[test]
fn a_job_outlives_its_graphd() {
    let _one = one_at_a_time();
    let pg = Playground::start_at(base_offset() + 30);
    pg.exec_ok("CREATE SPACE c(partition_num=6, replica_factor=1, vid_type=INT64)", Duration::from_secs(30));
    pg.exec_ok("CREATE TAG t(x int)", Duration::from_secs(30));
    let values: Vec<String> = (1..=300).map(|v| format!("{v}:({v})")).collect();
    pg.exec_ok(&format!("INSERT VERTEX t(x) VALUES {}", values.join(", ")), Duration::from_secs(30));
    let id = rows(&pg.exec_ok("SUBMIT JOB STATS", Duration::from_secs(30)))[0][0].as_i64().unwrap();
    pg.kill9("graphd", 1);

    let rt = tokio::runtime::Runtime::new().unwrap();
    let metas = pg.metas.split(',').map(str::to_string).collect();
    let catalog =
        RemoteCatalog::connect(Arc::new(MetaClient::new(metas, TcpTransport::new(), rt.handle().clone()))).unwrap();
    catalog.refresh_every(Duration::from_secs(1));
    let space = catalog.space("c").unwrap();
    let storage = Arc::new(ClusterStorage::new(ProcessCluster::new(catalog.clone(), TcpTransport::new()), catalog));
    let listed = storage.jobs(&space).unwrap();
    let job = listed.iter().find(|j| j.id == id).unwrap_or_else(|| panic!("job {id} is not listed: {listed:?}"));
    eprintln!("job {id} after its graphd's kill -9: {:?}", job.status);
    storage.start_jobs("test-graphd".into()).unwrap();
    let started = Instant::now();
    let done = loop {
        let job = storage.jobs(&space).unwrap().into_iter().find(|j| j.id == id).unwrap();
        if job.status.is_done() {
            break job;
        }
        assert!(started.elapsed() < Duration::from_secs(60), "job {id} not done after 60 s: {job:?}");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(done.status, quiver_api::JobStatus::Finished, "{done:?}");
    assert_eq!(storage.stats(&space).unwrap().vertices, 300);
}

fn rows(r: &J) -> Vec<Vec<J>> {
    r["results"][0]["data"].as_array().unwrap().iter().map(|row| row["row"].as_array().unwrap().clone()).collect()
}

/// Four clients inserting edges `i -> i + 1e6` through graphd (client `w` the `i` that are `w` mod 4), keeping the
/// acknowledged ones and how long each waited between acknowledgements.
struct Writers {
    acked: Arc<Mutex<Vec<i64>>>,
    gaps: Arc<Mutex<Vec<Duration>>>,
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Writers {
    fn start(pg: &Arc<Playground>) -> Writers {
        let acked: Arc<Mutex<Vec<i64>>> = Arc::default();
        let gaps: Arc<Mutex<Vec<Duration>>> = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let threads = (0..4i64)
            .map(|w| {
                let (pg, acked, gaps, stop) = (pg.clone(), acked.clone(), gaps.clone(), stop.clone());
                std::thread::spawn(move || {
                    let (mut i, mut last_ok) = (w, Instant::now());
                    while !stop.load(Ordering::Relaxed) {
                        match pg.exec(&format!("INSERT EDGE e(w) VALUES {i}->{}:({i})", i + 1_000_000)) {
                            Ok(j) if code(&j) == 0 => {
                                acked.lock().unwrap().push(i);
                                gaps.lock().unwrap().push(last_ok.elapsed());
                                last_ok = Instant::now();
                            }
                            _ => std::thread::sleep(Duration::from_millis(20)),
                        }
                        i += 4;
                    }
                })
            })
            .collect();
        Writers { acked, gaps, stop, threads }
    }

    fn acked(&self) -> usize {
        self.acked.lock().unwrap().len()
    }

    /// Stops them: the acknowledged edges' sources, sorted, and the longest wait of a writer.
    fn stop(self) -> (Vec<i64>, Duration) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads {
            t.join().unwrap();
        }
        let mut acked = self.acked.lock().unwrap().clone();
        acked.sort_unstable();
        let longest = self.gaps.lock().unwrap().iter().max().copied().unwrap_or_default();
        (acked, longest)
    }
}

/// The edges `e` among `keys` that read back, by source.
fn edges_read(pg: &Playground, acked: &[i64]) -> Vec<i64> {
    let keys: Vec<String> = acked.iter().map(|i| format!("{i}->{}", i + 1_000_000)).collect();
    let r = pg.exec_ok(&format!("FETCH PROP ON e {} YIELD src(edge), e.w", keys.join(",")), Duration::from_secs(30));
    let mut got: Vec<i64> = r["results"][0]["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            let row = row["row"].as_array().unwrap();
            assert_eq!(row[0], row[1], "an edge with another edge's row: {row:?}");
            row[0].as_i64().unwrap()
        })
        .collect();
    got.sort_unstable();
    got
}

#[test]
fn a_playground_survives_kill9_of_storage_hosts_and_of_the_meta_leader() {
    let _one = one_at_a_time();
    // `--demo`: the nba graph, in 6 partitions of 3 replicas.
    let datasets = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data/nebula-tck-datasets");
    let offset = base_offset();
    let pg = Playground::start_with(offset, &["--demo", "--datasets", datasets]);
    pg.exec_ok("CREATE SPACE c(partition_num=6, replica_factor=3, vid_type=INT64)", Duration::from_secs(30));
    pg.exec_ok("CREATE EDGE e(w int)", Duration::from_secs(30));
    // The storage hosts open their partitions and learn the schema on their next heartbeat.
    pg.exec_ok("INSERT EDGE e(w) VALUES -1->-2:(-1)", Duration::from_secs(30));
    let stores: Vec<String> = (1..=3).map(|n| pg.proc("storaged", n).0).collect();

    // NebulaGraph's columns: every host ONLINE with its share of the 6 x 3 replicas, every partition led.
    // (Partitions elect their leaders within a few election timeouts of being opened.)
    let started = Instant::now();
    let hosts = loop {
        let hosts = rows(&pg.exec_ok("SHOW HOSTS", Duration::from_secs(10)));
        if hosts.last().is_some_and(|t| t[3] == 12) || started.elapsed() > Duration::from_secs(20) {
            break hosts;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(hosts.len(), 4, "{hosts:?}");
    for (h, addr) in hosts.iter().zip(&stores) {
        assert_eq!(format!("{}:{}", h[0].as_str().unwrap(), h[1]), *addr);
        assert_eq!((h[2].as_str(), h[5].as_str()), (Some("ONLINE"), Some("c:6, nba:6")), "{h:?}");
    }
    assert_eq!(
        (hosts[3][0].as_str(), hosts[3][3].as_i64(), hosts[3][5].as_str()),
        (Some("Total"), Some(12), Some("c:18, nba:18"))
    );
    let parts = rows(&pg.exec_ok("SHOW PARTS", Duration::from_secs(10)));
    assert_eq!(parts.len(), 6);
    for p in &parts {
        assert!(stores.iter().any(|s| p[1] == *s.as_str()), "a partition without a leader: {p:?}");
        assert_eq!(p[2].as_str().unwrap(), stores.join(", "));
        assert_eq!(p[3], "");
    }
    let r = pg.exec(&format!("ADD HOSTS \"127.0.0.1\":{}", stores[0].rsplit(':').next().unwrap())).unwrap();
    assert_eq!(r["results"][0]["errors"]["message"], "Existed!", "{r}");
    // Zones are not modelled: every host is in the one default zone.
    let r = pg.exec("ADD HOSTS \"127.0.0.9\":9779 INTO NEW ZONE \"z1\"").unwrap();
    assert_eq!(
        r["results"][0]["errors"]["message"], "SemanticError: `ADD HOSTS ... INTO NEW ZONE' is not supported yet",
        "{r}"
    );
    let meta = meta_leader(&pg);

    // Writers: each edge goes from i to i + 1e6, two partitions apart in general (a chain across hosts); a reader
    // of nba beside them, counting every like edge (as many as like.csv has distinct keys).
    let pg = Arc::new(pg);
    let writers = Writers::start(&pg);
    let stop_reading = Arc::new(AtomicBool::new(false));
    let reader = {
        let (pg, stop) = (pg.clone(), stop_reading.clone());
        std::thread::spawn(move || {
            let (mut longest, mut last_ok, mut answers) = (Duration::ZERO, Instant::now(), Vec::new());
            while !stop.load(Ordering::Relaxed) {
                // Every partition's leader is asked (the host running it catches up with each).
                match pg.exec_in("nba", "MATCH (v:player)-[:like]->(w) RETURN count(*) AS n") {
                    Ok(j) if code(&j) == 0 => {
                        answers.push(rows(&j)[0][0].as_i64().unwrap_or(-1));
                        longest = longest.max(last_ok.elapsed());
                        last_ok = Instant::now();
                    }
                    _ => std::thread::sleep(Duration::from_millis(20)),
                }
            }
            (longest.max(last_ok.elapsed()), answers)
        })
    };
    std::thread::sleep(Duration::from_secs(2));
    let before = writers.acked();
    pg.kill9("storaged", 1);
    std::thread::sleep(Duration::from_secs(8));
    let (acked, longest) = writers.stop();
    stop_reading.store(true, Ordering::Relaxed);
    let (longest_read, answers) = reader.join().unwrap();
    eprintln!("nba read {} times; longest wait of the reader {longest_read:?}", answers.len());
    assert!(longest_read < Duration::from_secs(5), "the reader waited {longest_read:?} for an answer");
    let likes = std::fs::read_to_string(format!("{datasets}/nba/like.csv")).unwrap();
    let pairs: std::collections::HashSet<(&str, &str)> =
        likes.lines().skip(1).filter_map(|l| l.split(',').collect::<Vec<_>>().get(..2).map(|p| (p[0], p[1]))).collect();
    assert!(answers.len() > 10, "{answers:?}");
    assert!(answers.iter().all(|n| *n == pairs.len() as i64), "{} like edges, counted {answers:?}", pairs.len());
    let mut pg = Arc::try_unwrap(pg).ok().expect("writers are done");
    eprintln!(
        "acknowledged {before} writes before the kill, {} in all; longest wait of a writer {longest:?}",
        acked.len()
    );
    assert!(before >= 10, "only {before} writes before the kill");
    assert!(acked.len() > before + 10, "writes stopped after the kill: {} then {}", before, acked.len());
    assert!(longest < Duration::from_secs(5), "a writer waited {longest:?} for an acknowledgement");

    // Nothing acknowledged is lost with one host down, after it restarts, and once another is down.
    assert_eq!(edges_read(&pg, &acked), acked);
    // The killed host is OFFLINE once it missed its heartbeats, and lost to each of its partitions.
    let started = Instant::now();
    loop {
        let hosts = rows(&pg.exec_ok("SHOW HOSTS", Duration::from_secs(10)));
        if hosts[0][2] == "OFFLINE" {
            assert_eq!(hosts[0][3], 0, "an offline host leads nothing: {hosts:?}");
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(15), "host 1 still {hosts:?}");
        std::thread::sleep(Duration::from_millis(500));
    }
    for p in rows(&pg.exec_ok("SHOW PARTS", Duration::from_secs(10))) {
        assert_eq!(p[3], *stores[0].as_str(), "{p:?}");
        assert!(p[1] != *stores[0].as_str(), "{p:?}");
    }
    pg.restart_storaged(1);
    std::thread::sleep(Duration::from_secs(4));
    pg.exec_ok("INSERT EDGE e(w) VALUES -3->-4:(-3)", Duration::from_secs(30));
    pg.kill9("storaged", 2);
    assert_eq!(edges_read(&pg, &acked), acked, "with host 2 down, host 1 must have caught up");
    let r = pg.exec_ok("GO FROM -3 OVER e YIELD dst(edge)", Duration::from_secs(30));
    assert_eq!(r["results"][0]["data"][0]["row"][0], -4);

    // The meta leader is killed: DDL works after failover, and another metad leads.
    pg.kill9("metad", meta);
    let started = Instant::now();
    pg.exec_ok("CREATE TAG t(x int)", Duration::from_secs(30));
    eprintln!("DDL answered {:?} after the meta leader was killed", started.elapsed());
    assert_ne!(meta_leader(&pg), meta);
    pg.exec_ok("INSERT VERTEX t(x) VALUES 7:(7)", Duration::from_secs(30));
    let r = pg.exec_ok("FETCH PROP ON t 7 YIELD t.x", Duration::from_secs(30));
    assert_eq!(r["results"][0]["data"][0]["row"][0], 7);
}
