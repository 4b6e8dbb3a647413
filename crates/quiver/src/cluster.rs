//! The cluster's processes (`quiver metad`, `quiver storaged`, `quiver graphd`) and `quiver playground`, which
//! starts a local cluster of them (docs/design/cluster.md §1).

use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use quiver_cluster::process::{GraphdView, ProcessCluster, Storaged};
use quiver_cluster::ClusterStorage;
use quiver_kv_rocks::RocksEngine;
use quiver_metad::remote::RemoteCatalog;
use quiver_metad::service::{MetaClient, MetaRequest};
use quiver_raft::tcp::TcpTransport;

/// How long a process waits for the meta service at its start, and the playground for a process to be ready.
const READY_WITHIN: Duration = Duration::from_secs(60);

fn split_addrs(list: &str) -> Vec<String> {
    list.split(',').map(str::trim).filter(|a| !a.is_empty()).map(str::to_string).collect()
}

fn runtime(name: &str) -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name(name)
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))
}

fn engine(data_dir: &Path) -> Result<Arc<RocksEngine>, String> {
    std::fs::create_dir_all(data_dir).map_err(|e| format!("cannot create {}: {e}", data_dir.display()))?;
    RocksEngine::open(&data_dir.join("kv"))
        .map(Arc::new)
        .map_err(|e| format!("cannot open data directory {}: {e}", data_dir.display()))
}

/// The catalog from the meta service, waiting for it to answer (its metads may be starting too).
fn connect_catalog(metas: Vec<String>, runtime: &tokio::runtime::Runtime) -> Result<Arc<RemoteCatalog>, String> {
    let client = Arc::new(MetaClient::new(metas, TcpTransport::new(), runtime.handle().clone()));
    let started = Instant::now();
    loop {
        match RemoteCatalog::connect(client.clone()) {
            Ok(catalog) => return Ok(catalog),
            Err(e) if started.elapsed() > READY_WITHIN => return Err(format!("the meta service did not answer: {e}")),
            Err(e) => {
                log::info!("waiting for the meta service: {e}");
                std::thread::sleep(Duration::from_millis(500));
            }
        }
    }
}

pub fn metad(addr: &str, data_dir: &Path, meta_addrs: &str) -> Result<(), String> {
    let rt = runtime("metad")?;
    let metas = split_addrs(meta_addrs);
    let metad = quiver_metad::start(addr, engine(data_dir)?, &metas, &rt).map_err(|e| e.to_string())?;
    log::info!("metad {addr} serving (data in {}; metads {})", data_dir.display(), metas.join(","));
    rt.block_on(crate::shutdown_signal());
    rt.block_on(metad.host.shutdown());
    Ok(())
}

pub fn storaged(addr: &str, data_dir: &Path, meta_addrs: &str, fault_injection: bool) -> Result<(), String> {
    let rt = runtime("storaged")?;
    let catalog = connect_catalog(split_addrs(meta_addrs), &rt)?;
    let storaged =
        Storaged::start(addr, engine(data_dir)?, catalog, &rt, fault_injection).map_err(|e| e.to_string())?;
    log::info!("storaged {addr} serving (data in {})", data_dir.display());
    let beating = storaged.clone();
    std::thread::spawn(move || beating.run());
    rt.block_on(crate::shutdown_signal());
    rt.block_on(storaged.host.raft().shutdown());
    Ok(())
}

/// graphd: the query layer over the meta service's catalog and the storage hosts.
pub fn graphd(
    graph: crate::GraphOptions,
    http_addr: SocketAddr,
    meta_addrs: &str,
    demo: bool,
    datasets: PathBuf,
) -> Result<(), String> {
    // The clients' own runtime: requests block on it from the query threads of the server's runtime.
    let rt = runtime("graphd-client")?;
    let catalog = connect_catalog(split_addrs(meta_addrs), &rt)?;
    catalog.refresh_every(Duration::from_secs(1));
    let cluster = ProcessCluster::new(catalog.clone(), TcpTransport::new());
    let storage = Arc::new(ClusterStorage::new(cluster.clone(), catalog.clone()));
    // Jobs are taken by this graphd under its graph address (unique in the cluster).
    storage.start_jobs(graph.addr.to_string()).map_err(|e| e.to_string())?;
    let mut db = quiver_server::Database::remote(catalog.clone(), storage);
    db.engine.cluster = Some(Arc::new(GraphdView { catalog, cluster }));
    let logs = std::env::temp_dir().join(format!("quiver-graphd-{}", graph.addr.port()));
    crate::serve(db, logs, http_addr, graph, demo, datasets, Default::default(), Vec::new())
}

/// One process of a playground.
struct Proc {
    role: &'static str,
    addr: String,
    child: Child,
}

fn spawn(exe: &Path, role: &'static str, addr: &str, args: &[String], log: &Path) -> Result<Proc, String> {
    let out = std::fs::File::create(log).map_err(|e| format!("cannot create {}: {e}", log.display()))?;
    let err = out.try_clone().map_err(|e| e.to_string())?;
    let child = Command::new(exe)
        .arg(role)
        .args(args)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .map_err(|e| format!("cannot start {role}: {e}"))?;
    Ok(Proc { role, addr: addr.to_string(), child })
}

fn wait_listening(p: &mut Proc) -> Result<(), String> {
    let started = Instant::now();
    let addr: SocketAddr = p.addr.parse().map_err(|e| format!("{}: {e}", p.addr))?;
    loop {
        if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
            return Ok(());
        }
        if let Ok(Some(status)) = p.child.try_wait() {
            return Err(format!("{} {} exited ({status}) before it was ready", p.role, p.addr));
        }
        if started.elapsed() > READY_WITHIN {
            return Err(format!("{} {} did not listen within {READY_WITHIN:?}", p.role, p.addr));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Playground addresses: process `i` (from 1) of a role on 127.0.0.`i`, at the role's port plus `offset`.
fn addrs(n: usize, port: u16, offset: u16) -> Vec<String> {
    (1..=n).map(|i| format!("127.0.0.{i}:{}", port + offset)).collect()
}

pub struct PlaygroundOptions {
    pub metad: usize,
    pub storaged: usize,
    pub graphd: usize,
    pub dir: PathBuf,
    pub port_offset: u16,
    pub demo: bool,
    pub datasets: PathBuf,
    pub fault_injection: bool,
}

pub fn playground(o: PlaygroundOptions) -> Result<(), String> {
    if o.metad == 0 || o.storaged == 0 || o.graphd == 0 || o.metad > 254 || o.storaged > 254 || o.graphd > 254 {
        return Err("--metad, --storaged and --graphd must each be between 1 and 254".into());
    }
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
    let logs = o.dir.join("logs");
    std::fs::create_dir_all(&logs).map_err(|e| format!("cannot create {}: {e}", logs.display()))?;
    let metas = addrs(o.metad, 9559, o.port_offset);
    let stores = addrs(o.storaged, 9779, o.port_offset);
    let graphs = addrs(o.graphd, 9669, o.port_offset);
    let meta_list = metas.join(",");
    let mut procs: Vec<Proc> = Vec::new();
    let started = (|| -> Result<(), String> {
        for (i, a) in metas.iter().enumerate() {
            let dir = o.dir.join(format!("metad-{}", i + 1)).display().to_string();
            let args = ["--addr".into(), a.clone(), "--data-dir".into(), dir, "--meta-addrs".into(), meta_list.clone()];
            procs.push(spawn(&exe, "metad", a, &args, &logs.join(format!("metad-{}.log", i + 1)))?);
        }
        for (i, a) in stores.iter().enumerate() {
            let dir = o.dir.join(format!("storaged-{}", i + 1)).display().to_string();
            let mut args =
                vec!["--addr".into(), a.clone(), "--data-dir".into(), dir, "--meta-addrs".into(), meta_list.clone()];
            if o.fault_injection {
                args.push("--fault-injection".into());
            }
            procs.push(spawn(&exe, "storaged", a, &args, &logs.join(format!("storaged-{}.log", i + 1)))?);
        }
        for p in &mut procs {
            wait_listening(p)?;
        }
        // As `tiup playground` does: the storage hosts are added for the user (NebulaGraph's ADD HOSTS).
        let rt = runtime("playground")?;
        let client = MetaClient::new(metas.clone(), TcpTransport::new(), rt.handle().clone());
        match client.call(&MetaRequest::AddHosts(stores.clone())) {
            Ok(_) => {}
            Err(e) if e.message == "Existed!" => {}
            Err(e) => return Err(format!("cannot add the storage hosts: {e}")),
        }
        // Ready once every storage host has heartbeated: a CREATE SPACE places partitions on the online ones.
        let since = Instant::now();
        loop {
            match client.call(&MetaRequest::Hosts) {
                Ok(quiver_metad::service::MetaAnswer::Hosts(h)) if h.iter().all(|(_, online)| *online) => break,
                _ if since.elapsed() > READY_WITHIN => return Err("the storage hosts did not heartbeat".into()),
                _ => std::thread::sleep(Duration::from_millis(200)),
            }
        }
        for (i, a) in graphs.iter().enumerate() {
            let http = format!("127.0.0.{}:{}", i + 1, 19669 + o.port_offset);
            let mut args =
                vec!["--addr".into(), a.clone(), "--http-addr".into(), http, "--meta-addrs".into(), meta_list.clone()];
            if o.demo && i == 0 {
                args.extend(["--demo".into(), "--datasets".into(), o.datasets.display().to_string()]);
            }
            let mut p = spawn(&exe, "graphd", a, &args, &logs.join(format!("graphd-{}.log", i + 1)))?;
            wait_listening(&mut p)?;
            procs.push(p);
        }
        Ok(())
    })();
    if let Err(e) = started {
        stop(&mut procs);
        return Err(format!("{e} (logs in {})", logs.display()));
    }
    for p in &procs {
        println!("{:<9} {:<18} pid {}", p.role, p.addr, p.child.id());
    }
    for (i, _) in graphs.iter().enumerate() {
        println!("http      127.0.0.{}:{}", i + 1, 19669 + o.port_offset);
    }
    println!("playground ready (data and logs in {}); Ctrl-C stops it", o.dir.display());
    let rt = runtime("playground")?;
    rt.block_on(crate::shutdown_signal());
    stop(&mut procs);
    Ok(())
}

/// Stops every process: SIGTERM, then SIGKILL for any still running after 5 s.
fn stop(procs: &mut [Proc]) {
    for p in procs.iter() {
        let _ = Command::new("kill").arg("-TERM").arg(p.child.id().to_string()).status();
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    for p in procs.iter_mut() {
        while Instant::now() < deadline && matches!(p.child.try_wait(), Ok(None)) {
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = p.child.kill();
        let _ = p.child.wait();
    }
}
