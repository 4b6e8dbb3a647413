//! The `quiver` binary: `quiver serve` runs the embedded server, `quiver console` the shell; `quiver metad`,
//! `quiver storaged` and `quiver graphd` are a cluster's processes, `quiver playground` starts a local cluster.

mod cluster;

use clap::{Parser, Subcommand};
use quiver_common::budget::Limits;
use quiver_server::sessions::SessionManager;
use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

#[derive(Parser)]
#[command(name = "quiver", version, about = "Quiver: a NebulaGraph-compatible graph database")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Runs the embedded server: catalog, storage and query engine in one process.
    Serve {
        #[arg(long, default_value = "./quiver-data")]
        data_dir: PathBuf,
        #[arg(long, default_value = "127.0.0.1:19669")]
        http_addr: SocketAddr,
        /// Where NebulaGraph's graph protocol is served (nebula3-python, nebula-go and tools built on them).
        #[arg(long, default_value = "127.0.0.1:9669")]
        graph_addr: SocketAddr,
        /// A graph-protocol session idle this long is closed (NebulaGraph's `session_idle_timeout_secs`).
        #[arg(long, default_value_t = 28_800)]
        session_idle_timeout_secs: u64,
        /// Client versions `verifyClientVersion` accepts, `:`-separated; empty accepts any.
        #[arg(long, default_value_t = quiver_server::graphd::DEFAULT_CLIENT_VERSIONS.join(":"))]
        client_white_list: String,
        /// A graph-protocol frame larger than this closes its connection.
        #[arg(long, default_value_t = 64)]
        max_frame_mb: usize,
        /// Plaintext graph-protocol connections served on threads of their own (a request read, run and answered on
        /// one thread); more are served on the async runtime, whose blocking pool runs their queries. 0: all so.
        #[arg(long, default_value_t = quiver_server::graphd::CONNECTION_THREADS_DEFAULT)]
        graph_connection_threads: usize,
        /// A connection thread that has answered polls its socket this long for the next request before it sleeps,
        /// while no other request is running: a client sending request after request then finds it awake (waking
        /// a sleeping thread costs a virtual machine tens of microseconds). 0: sleep at once.
        #[arg(long, default_value_t = quiver_server::graphd::SPIN_DEFAULT.as_micros() as u64)]
        graph_spin_us: u64,
        /// Once a request has started to arrive (a graph-protocol frame's first byte, an HTTP request's headers,
        /// then its body), it must arrive whole within this time, or its connection is closed.
        #[arg(long, default_value_t = quiver_server::net::REQUEST_ARRIVAL_TIMEOUT_DEFAULT.as_millis() as u64)]
        request_arrival_timeout_ms: u64,
        /// The most client connections open at once, both ports together; a connection past it is closed at once
        /// (logged). Unlimited by default, as NebulaGraph's `max_allowed_connections`.
        #[arg(long)]
        max_connections: Option<usize>,
        /// Loads the `nba` demo graph if it is absent.
        #[arg(long)]
        demo: bool,
        /// Where the NebulaGraph test datasets are (for --demo).
        #[arg(long, default_value = "../shared/data/nebula-tck-datasets")]
        datasets: PathBuf,
        /// A query running longer than this fails with "Execution had been killed".
        #[arg(long, default_value_t = 60_000)]
        query_timeout_ms: u64,
        /// A query whose intermediate results exceed this fails with GraphMemoryExceeded.
        #[arg(long, default_value_t = 2048)]
        query_memory_mb: usize,
        /// Switches an optimizer rule off for every session (repeatable).
        #[arg(long = "disable-rule")]
        disabled_rules: Vec<String>,
        /// The partitions of a space created without `partition_num` (NebulaGraph's `default_parts_num`; its test
        /// harness runs with 1).
        #[arg(long, default_value_t = quiver_query::DEFAULT_PARTITION_NUM)]
        default_parts_num: u32,
        /// Requests running at least this long are written to `DATA_DIR/logs/slow-queries.log` as JSON lines
        /// (NebulaGraph's `slow_query_threshold_us`).
        #[arg(long, default_value_t = quiver_server::slowlog::SLOW_QUERY_THRESHOLD_US_DEFAULT)]
        slow_query_threshold_us: i64,
        /// Serve TLS only, on both ports, with this PEM certificate chain (with --key-path; NebulaGraph's
        /// `cert_path` with `enable_graph_ssl`).
        #[arg(long)]
        cert_path: Option<PathBuf>,
        /// The PEM private key of --cert-path's certificate.
        #[arg(long)]
        key_path: Option<PathBuf>,
        /// Check passwords at sign-in and let users' roles decide what they may run (NebulaGraph's
        /// `enable_authorize`). The user `root` with password `nebula` exists from the first start.
        #[arg(long)]
        enable_authorize: bool,
        /// With --enable-authorize: this many wrong passwords in a row lock a user (0: never).
        #[arg(long, default_value_t = 0)]
        failed_login_attempts: u32,
        /// How long a locked user stays locked, in seconds (0: never locked).
        #[arg(long, default_value_t = 0)]
        password_lock_time_in_secs: u64,
        /// When the server's resident memory passes 90 % of this, the running query holding the most memory is
        /// stopped with GraphMemoryExceeded (0: no server-wide limit).
        #[arg(long, default_value_t = 0)]
        memory_limit_mb: usize,
        /// Turn RocksDB's statistics on: block cache hits and misses and compaction bytes in /metrics (off by
        /// default: RocksDB then times its operations).
        #[arg(long)]
        rocksdb_statistics: bool,
    },
    /// Bulk-loads CSV files described by a mapping (`config.yaml` in the NebulaGraph test datasets' shape) into a
    /// data directory (the server must not be running on it).
    Import {
        /// The mapping: space, schema as nGQL, and which CSV columns are VIDs, properties, edge ends and ranks.
        config: PathBuf,
        #[arg(long, default_value = "./quiver-data")]
        data_dir: PathBuf,
        /// Stops the import after this many bad rows (each is reported with its file and line).
        #[arg(long, default_value_t = 100)]
        max_bad_rows: u64,
        /// Prints the report as JSON on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Runs the benchmark suite (see bench/README.md): generates data, loads it into Quiver and the peers, checks
    /// they agree, measures, and writes bench/results/<date>/ (JSON, Markdown, PNG plots).
    Bench {
        /// A small run (under 5 minutes on 2 cores) instead of the full one.
        #[arg(long)]
        quick: bool,
        /// The social graph's scale: sf1, sf10 or sf100 (default: sf1 with --quick, else sf10).
        #[arg(long)]
        scale: Option<String>,
        /// Peers, comma-separated (duckdb, kuzu, ladybug, neo4j); `none` runs Quiver alone.
        #[arg(long, default_value = "duckdb,kuzu,ladybug,neo4j")]
        peers: String,
        #[arg(long, default_value = "bench/work")]
        work_dir: PathBuf,
        #[arg(long, default_value = "bench/results")]
        out_dir: PathBuf,
        #[arg(long, default_value = "../shared/data/ldbc-sf01")]
        ldbc_dir: PathBuf,
        /// The LDBC SNB Interactive v1 test network (the short reads IS1-IS7).
        #[arg(long, default_value = "../shared/data/ldbc-snb-interactive-v1-testdata")]
        snb_dir: PathBuf,
        /// The Python that has the peers (bench/setup.sh installs them into bench/.venv).
        #[arg(long, default_value = "bench/.venv/bin/python")]
        python: PathBuf,
        #[arg(long, default_value_t = 42)]
        seed: u64,
        /// Only these read workloads, comma-separated by name (say `shortest-path,all-shortest-paths`), without
        /// the load ladders; empty runs them all.
        #[arg(long, default_value = "")]
        workloads: String,
        /// An earlier run's results.json: every row of this run is printed beside it with the ratio, rows more
        /// than 20% slower flagged (also written to the run's compare.md).
        #[arg(long)]
        compare: Option<PathBuf>,
        /// With --compare: compare this results.json instead of making a new run.
        #[arg(long, requires = "compare")]
        against: Option<PathBuf>,
        /// The social workloads against a local cluster (`quiver playground`) beside the embedded server, with
        /// throughput at 16 clients, insert latency and failover (not the peers).
        #[arg(long)]
        cluster: bool,
    },
    /// Runs a meta service process (one replica of the meta Raft group).
    Metad {
        #[arg(long, default_value = "127.0.0.1:9559")]
        addr: String,
        #[arg(long, default_value = "./metad-data")]
        data_dir: PathBuf,
        /// Every metad's address, comma-separated (the first makes the meta group on its first start).
        #[arg(long, default_value = "127.0.0.1:9559")]
        meta_addrs: String,
    },
    /// Runs a storage service process (one Raft group per partition replica placed on it).
    Storaged {
        #[arg(long, default_value = "127.0.0.1:9779")]
        addr: String,
        #[arg(long, default_value = "./storaged-data")]
        data_dir: PathBuf,
        #[arg(long, default_value = "127.0.0.1:9559")]
        meta_addrs: String,
        /// (Fault tests.) Lets a request to this host cut its Raft traffic off.
        #[arg(long, hide = true)]
        fault_injection: bool,
    },
    /// Runs a graph service process: NebulaGraph's graph protocol and the HTTP API over the cluster.
    Graphd {
        #[arg(long, default_value = "127.0.0.1:9669")]
        addr: SocketAddr,
        #[arg(long, default_value = "127.0.0.1:19669")]
        http_addr: SocketAddr,
        #[arg(long, default_value = "127.0.0.1:9559")]
        meta_addrs: String,
        /// Load the `nba` graph if it is absent (6 partitions, replicated on up to 3 storage hosts).
        #[arg(long)]
        demo: bool,
        #[arg(long, default_value = "../shared/data/nebula-tck-datasets")]
        datasets: PathBuf,
    },
    /// Starts a local cluster on loopback addresses (127.0.0.N) and stops it on Ctrl-C.
    Playground {
        #[arg(long, default_value_t = 3)]
        metad: usize,
        #[arg(long, default_value_t = 3)]
        storaged: usize,
        #[arg(long, default_value_t = 1)]
        graphd: usize,
        #[arg(long, default_value = "./playground")]
        dir: PathBuf,
        /// Added to every default port (9559, 9779, 9669, 19669), to run beside another cluster.
        #[arg(long, default_value_t = 0)]
        port_offset: u16,
        /// The first graphd loads the `nba` graph if it is absent.
        #[arg(long)]
        demo: bool,
        #[arg(long, default_value = "../shared/data/nebula-tck-datasets")]
        datasets: PathBuf,
        /// (Fault tests.) Starts the storage hosts with --fault-injection.
        #[arg(long, hide = true)]
        fault_injection: bool,
    },
    /// (For `quiver bench`.) Opens a data directory, answers a first query, prints the resident set in bytes.
    #[command(hide = true)]
    BenchProbe { data_dir: PathBuf, space: String, vid: i64 },
    /// Opens the interactive console, or runs statements with -e / -f.
    Console {
        #[arg(long, default_value = "127.0.0.1:19669")]
        addr: String,
        /// Sign in as this user (for a server started with --enable-authorize).
        #[arg(short = 'u', long)]
        user: Option<String>,
        /// The user's password.
        #[arg(short = 'p', long, default_value = "")]
        password: String,
        #[arg(short = 'e')]
        exec: Option<String>,
        #[arg(short = 'f')]
        file: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info")).init();
    let cli = Cli::parse();
    match cli.command {
        Command::Serve {
            data_dir,
            http_addr,
            graph_addr,
            session_idle_timeout_secs,
            client_white_list,
            max_frame_mb,
            graph_connection_threads,
            graph_spin_us,
            request_arrival_timeout_ms,
            max_connections,
            demo,
            datasets,
            query_timeout_ms,
            query_memory_mb,
            disabled_rules,
            default_parts_num,
            slow_query_threshold_us,
            cert_path,
            key_path,
            enable_authorize,
            failed_login_attempts,
            password_lock_time_in_secs,
            memory_limit_mb,
            rocksdb_statistics,
        } => {
            let tls = match (cert_path, key_path) {
                (None, None) => None,
                (Some(cert), Some(key)) => match quiver_server::tls::Tls::load(&cert, &key) {
                    Ok(tls) => Some(tls),
                    Err(e) => {
                        eprintln!("quiver serve: {e}");
                        return ExitCode::FAILURE;
                    }
                },
                _ => {
                    eprintln!("quiver serve: --cert-path and --key-path go together");
                    return ExitCode::FAILURE;
                }
            };
            let limits = Limits {
                timeout: Duration::from_millis(query_timeout_ms),
                memory_bytes: query_memory_mb.saturating_mul(1 << 20),
            };
            let graph = GraphOptions {
                addr: graph_addr,
                idle_timeout: Duration::from_secs(session_idle_timeout_secs.max(1)),
                config: quiver_server::graphd::GraphConfig {
                    client_versions: client_white_list
                        .split(':')
                        .filter(|v| !v.is_empty())
                        .map(str::to_string)
                        .collect(),
                    max_frame_bytes: max_frame_mb.max(1).saturating_mul(1 << 20),
                    frame_timeout: Duration::from_millis(request_arrival_timeout_ms.max(1)),
                    tls,
                    connection_threads: graph_connection_threads,
                    spin: Duration::from_micros(graph_spin_us),
                },
                max_connections,
                slow_query_threshold_us,
                authorize: enable_authorize.then_some((failed_login_attempts, password_lock_time_in_secs)),
                memory_limit_bytes: memory_limit_mb.saturating_mul(1 << 20),
                rocksdb_statistics,
                default_parts_num,
            };
            let db = match quiver_server::Database::open_with(&data_dir, graph.rocksdb_statistics) {
                Ok(db) => db,
                Err(e) => {
                    eprintln!("quiver serve: {e}");
                    return ExitCode::FAILURE;
                }
            };
            match serve(db, data_dir, http_addr, graph, demo, datasets, limits, disabled_rules) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("quiver serve: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Metad { addr, data_dir, meta_addrs } => exit("metad", cluster::metad(&addr, &data_dir, &meta_addrs)),
        Command::Storaged { addr, data_dir, meta_addrs, fault_injection } => {
            exit("storaged", cluster::storaged(&addr, &data_dir, &meta_addrs, fault_injection))
        }
        Command::Graphd { addr, http_addr, meta_addrs, demo, datasets } => {
            let graph = GraphOptions {
                addr,
                idle_timeout: Duration::from_secs(28_800),
                config: Default::default(),
                max_connections: None,
                slow_query_threshold_us: quiver_server::slowlog::SLOW_QUERY_THRESHOLD_US_DEFAULT,
                authorize: None,
                memory_limit_bytes: 0,
                rocksdb_statistics: false,
                default_parts_num: quiver_query::DEFAULT_PARTITION_NUM,
            };
            exit("graphd", cluster::graphd(graph, http_addr, &meta_addrs, demo, datasets))
        }
        Command::Playground { metad, storaged, graphd, dir, port_offset, demo, datasets, fault_injection } => exit(
            "playground",
            cluster::playground(cluster::PlaygroundOptions {
                metad,
                storaged,
                graphd,
                dir,
                port_offset,
                demo,
                datasets,
                fault_injection,
            }),
        ),
        Command::Import { config, data_dir, max_bad_rows, json } => import(&config, &data_dir, max_bad_rows, json),
        Command::Bench {
            quick,
            scale,
            peers,
            work_dir,
            out_dir,
            ldbc_dir,
            snb_dir,
            python,
            seed,
            workloads,
            compare,
            against,
            cluster,
        } => {
            if let (Some(old), Some(new)) = (&compare, &against) {
                return bench_compare(old, new, None);
            }
            let opts = quiver_bench::Options {
                quick,
                work_dir,
                out_dir,
                social_scale: scale.unwrap_or_else(|| if quick { "sf1".into() } else { "sf10".into() }),
                ldbc_dir,
                snb_dir,
                peers: peers
                    .split(',')
                    .map(str::trim)
                    .filter(|p| !p.is_empty() && *p != "none")
                    .map(str::to_string)
                    .collect(),
                python,
                scripts: PathBuf::from("bench"),
                seed,
                only: workloads.split(',').map(str::trim).filter(|w| !w.is_empty()).map(str::to_string).collect(),
                probe_exe: std::env::current_exe().unwrap_or_else(|_| PathBuf::from("quiver")),
                cluster,
            };
            match quiver_bench::run(&opts) {
                Ok(out) => {
                    println!("results in {}", out.display());
                    match &compare {
                        Some(old) => bench_compare(old, &out.join("results.json"), Some(&out.join("compare.md"))),
                        None => ExitCode::SUCCESS,
                    }
                }
                Err(e) => {
                    eprintln!("quiver bench: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::BenchProbe { data_dir, space, vid } => match quiver_bench::probe(&data_dir, &space, vid) {
            Ok(rss) => {
                println!("{rss}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("quiver bench-probe: {e}");
                ExitCode::FAILURE
            }
        },
        Command::Console { addr, user, password, exec, file } => {
            let mut client = quiver_console::Client::new(&addr);
            if let Some(user) = user {
                client = client.with_credentials(&user, &password);
            }
            if let Some(stmt) = exec {
                return if quiver_console::run_script(&mut client, &stmt) {
                    ExitCode::SUCCESS
                } else {
                    ExitCode::FAILURE
                };
            }
            if let Some(path) = file {
                return match std::fs::read_to_string(&path) {
                    Ok(text) => {
                        if quiver_console::run_script(&mut client, &text) {
                            ExitCode::SUCCESS
                        } else {
                            ExitCode::FAILURE
                        }
                    }
                    Err(e) => {
                        eprintln!("quiver console: cannot read {}: {e}", path.display());
                        ExitCode::FAILURE
                    }
                };
            }
            match quiver_console::repl(&mut client) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("quiver console: {e}");
                    ExitCode::FAILURE
                }
            }
        }
    }
}

fn exit(role: &str, r: Result<(), String>) -> ExitCode {
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("quiver {role}: {e}");
            ExitCode::FAILURE
        }
    }
}

fn import(config: &std::path::Path, data_dir: &std::path::Path, max_bad_rows: u64, json: bool) -> ExitCode {
    let db = match quiver_server::Database::open(data_dir) {
        Ok(db) => db,
        Err(e) => {
            eprintln!("quiver import: {e}");
            return ExitCode::FAILURE;
        }
    };
    let opts = quiver_server::import::ImportOptions { max_bad_rows, progress: true, ..Default::default() };
    match quiver_server::import::import(&db, config, &opts) {
        Ok(r) => {
            for b in &r.bad_examples {
                eprintln!("bad row: {b}");
            }
            if json {
                println!("{}", serde_json::to_string_pretty(&r).expect("report serializes"));
            } else {
                println!(
                    "imported into `{}': {} vertices, {} edges ({} key-value pairs) in {:.2} s ({}/s edges), {} bad rows",
                    r.space,
                    r.vertices,
                    r.edges,
                    r.pairs,
                    r.seconds,
                    quiver_server::progress::human(r.edges as f64 / r.seconds.max(1e-9)),
                    r.bad_rows
                );
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("quiver import: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The network side of `quiver serve`: the graph port, and what both ports share.
struct GraphOptions {
    addr: SocketAddr,
    idle_timeout: Duration,
    config: quiver_server::graphd::GraphConfig,
    max_connections: Option<usize>,
    slow_query_threshold_us: i64,
    /// `--enable-authorize`, with the lockout's attempts and seconds.
    authorize: Option<(u32, u64)>,
    /// `--memory-limit-mb` in bytes; 0 for none.
    memory_limit_bytes: usize,
    rocksdb_statistics: bool,
    default_parts_num: u32,
}

#[allow(clippy::too_many_arguments, reason = "the server's options, passed once from each command")]
fn serve(
    mut db: quiver_server::Database,
    data_dir: PathBuf,
    http_addr: SocketAddr,
    graph: GraphOptions,
    demo: bool,
    datasets: PathBuf,
    limits: Limits,
    disabled_rules: Vec<String>,
) -> Result<(), String> {
    let known = quiver_query::optimizer::rule_names();
    if let Some(bad) = disabled_rules.iter().find(|r| !known.contains(&r.as_str())) {
        return Err(format!("unknown optimizer rule `{bad}' (rules: {})", known.join(", ")));
    }
    db.engine.set_limits(limits);
    if let Some((attempts, lock_secs)) = graph.authorize {
        db.enable_authorize(attempts, lock_secs);
    }
    db.engine.local_host = (graph.addr.ip().to_string(), graph.addr.port());
    db.engine.git_sha = env!("QUIVER_GIT_SHA").into();
    if !(1..=quiver_common::limits::PARTITIONS_MAX).contains(&graph.default_parts_num) {
        return Err(format!(
            "--default-parts-num must be between 1 and {}, got {}",
            quiver_common::limits::PARTITIONS_MAX,
            graph.default_parts_num
        ));
    }
    db.engine.default_parts_num = graph.default_parts_num;
    let sessions = Arc::new(SessionManager::new(graph.idle_timeout, graph.addr.to_string(), disabled_rules.clone()));
    db.engine.disabled_rules = disabled_rules;
    db.engine.sessions = Some(sessions.clone());
    let limit = quiver_server::net::ConnectionLimit::new(graph.max_connections);
    {
        use quiver_query::configs::ConfigModule;
        use quiver_query::configs::ConfigType;
        // NebulaGraph's bounds: its gflag validator's one week, and a positive connection count.
        let week = ConfigType::Int { min: 1, max: 604_800 };
        db.engine.configs.register(
            ConfigModule::Graph,
            "session_idle_timeout_secs",
            week,
            sessions.idle_timeout_cell(),
        );
        let positive = ConfigType::Int { min: 1, max: i64::MAX };
        db.engine.configs.register(ConfigModule::Graph, "max_allowed_connections", positive, limit.max_cell());
        let log = quiver_server::slowlog::SlowQueryLog::open(
            &data_dir.join("logs").join("slow-queries.log"),
            graph.slow_query_threshold_us,
        )?;
        let any = ConfigType::Int { min: 0, max: i64::MAX };
        db.engine.configs.register(ConfigModule::Graph, "slow_query_threshold_us", any, log.threshold_cell());
        let metrics = quiver_server::metrics::QueryMetrics::new(db.metrics.clone(), log.threshold_cell());
        db.engine.observers = vec![Arc::new(log), Arc::new(metrics)];
        sessions.set_metrics(db.metrics.clone());
    }
    let db = Arc::new(db);
    if graph.memory_limit_bytes > 0 {
        quiver_server::memguard::start(db.clone(), graph.memory_limit_bytes)
            .map_err(|e| format!("cannot start the memory watchdog: {e}"))?;
    }
    quiver_server::memguard::start_trimmer(db.clone()).map_err(|e| format!("cannot start the memory trimmer: {e}"))?;
    if demo {
        let dir = datasets.join("nba");
        let loaded = match &db.engine.cluster {
            // A cluster's demo graph is spread and replicated: 6 partitions on up to 3 hosts each.
            Some(cluster) => {
                let hosts = cluster.storage_hosts().map_err(|e| e.to_string())?.len().clamp(1, 3) as u32;
                quiver_server::loader::load_placed_if_absent(&db, &dir, 6, hosts)
            }
            None => quiver_server::loader::load_if_absent(&db, &dir),
        };
        match loaded {
            Ok(Some(r)) => log::info!("loaded demo graph `{}`: {} vertices, {} edges", r.space, r.vertices, r.edges),
            Ok(None) => log::info!("demo graph `nba` already present"),
            Err(e) => return Err(format!("cannot load the demo graph from {}: {e}", dir.display())),
        }
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_stack_size(quiver_common::limits::QUERY_THREAD_STACK_BYTES)
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))?;
    rt.block_on(async move {
        let listener = quiver_server::net::Acceptor::bind(http_addr)
            .await
            .map_err(|e| format!("cannot listen on {http_addr}: {e}"))?;
        let graph_listener = quiver_server::net::Acceptor::bind(graph.addr)
            .await
            .map_err(|e| format!("cannot listen on {}: {e}", graph.addr))?;
        let addrs = |a: &quiver_server::net::Acceptor| {
            a.local_addrs().iter().map(|x| x.to_string()).collect::<Vec<_>>().join(" and ")
        };
        log::info!(
            "quiver serving HTTP{} on {} and the graph protocol{} on {} (data in {})",
            if graph.config.tls.is_some() { "S" } else { "" },
            addrs(&listener),
            if graph.config.tls.is_some() { " over TLS" } else { "" },
            addrs(&graph_listener),
            data_dir.display()
        );
        let arrival_timeout = graph.config.frame_timeout;
        let tls = graph.config.tls.clone();
        let graph_task = tokio::spawn(quiver_server::graphd::serve(
            graph_listener,
            limit.clone(),
            db.clone(),
            sessions,
            graph.config,
            graph.idle_timeout,
        ));
        quiver_server::http::serve(listener, db.clone(), limit, arrival_timeout, tls, shutdown_signal()).await;
        graph_task.abort();
        db.flush().map_err(|e| e.to_string())?;
        let (batches, syncs) = db.commit_stats();
        log::info!("quiver stopped cleanly ({batches} write batches, {syncs} log fsyncs)");
        Ok(())
    })
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
}

/// Prints the comparison of `new` against `old` (`quiver bench --compare`), and writes it to `to` if given.
fn bench_compare(old: &Path, new: &Path, to: Option<&Path>) -> ExitCode {
    match quiver_bench::compare::compare(old, new) {
        Ok((text, _flagged)) => {
            // A closed pipe (`| head`) is not an error of the comparison.
            let _ = writeln!(std::io::stdout(), "{text}");
            if let Some(to) = to {
                if let Err(e) = std::fs::write(to, &text) {
                    eprintln!("quiver bench: cannot write {}: {e}", to.display());
                    return ExitCode::FAILURE;
                }
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("quiver bench: {e}");
            ExitCode::FAILURE
        }
    }
}
