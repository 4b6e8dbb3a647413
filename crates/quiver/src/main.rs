//! The `quiver` binary: `quiver serve` runs the embedded server, `quiver console` the shell.

use clap::{Parser, Subcommand};
use std::net::SocketAddr;
use std::path::PathBuf;
use quiver_common::budget::Limits;
use std::process::ExitCode;
use quiver_server::sessions::SessionManager;
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
    },
    /// Opens the interactive console, or runs statements with -e / -f.
    Console {
        #[arg(long, default_value = "127.0.0.1:19669")]
        addr: String,
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
        Command::Serve { data_dir, http_addr, graph_addr, session_idle_timeout_secs, client_white_list, max_frame_mb, demo, datasets, query_timeout_ms, query_memory_mb, disabled_rules } => {
            let limits = Limits { timeout: Duration::from_millis(query_timeout_ms), memory_bytes: query_memory_mb.saturating_mul(1 << 20) };
            let graph = GraphOptions {
                addr: graph_addr,
                idle_timeout: Duration::from_secs(session_idle_timeout_secs.max(1)),
                config: quiver_server::graphd::GraphConfig {
                    client_versions: client_white_list.split(':').filter(|v| !v.is_empty()).map(str::to_string).collect(),
                    max_frame_bytes: max_frame_mb.max(1).saturating_mul(1 << 20),
                    ..Default::default()
                },
            };
            match serve(data_dir, http_addr, graph, demo, datasets, limits, disabled_rules) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("quiver serve: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Console { addr, exec, file } => {
            let mut client = quiver_console::Client::new(&addr);
            if let Some(stmt) = exec {
                return if quiver_console::run_script(&mut client, &stmt) { ExitCode::SUCCESS } else { ExitCode::FAILURE };
            }
            if let Some(path) = file {
                return match std::fs::read_to_string(&path) {
                    Ok(text) => if quiver_console::run_script(&mut client, &text) { ExitCode::SUCCESS } else { ExitCode::FAILURE },
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

struct GraphOptions {
    addr: SocketAddr,
    idle_timeout: Duration,
    config: quiver_server::graphd::GraphConfig,
}

fn serve(data_dir: PathBuf, http_addr: SocketAddr, graph: GraphOptions, demo: bool, datasets: PathBuf, limits: Limits, disabled_rules: Vec<String>) -> Result<(), String> {
    let known = quiver_query::optimizer::rule_names();
    if let Some(bad) = disabled_rules.iter().find(|r| !known.contains(&r.as_str())) {
        return Err(format!("unknown optimizer rule `{bad}' (rules: {})", known.join(", ")));
    }
    let mut db = quiver_server::Database::open(&data_dir).map_err(|e| e.to_string())?;
    db.engine.limits = limits;
    let sessions = Arc::new(SessionManager::new(graph.idle_timeout, graph.addr.to_string(), disabled_rules.clone()));
    db.engine.disabled_rules = disabled_rules;
    db.engine.sessions = Some(sessions.clone());
    let db = Arc::new(db);
    if demo {
        let dir = datasets.join("nba");
        match quiver_server::loader::load_if_absent(&db, &dir) {
            Ok(Some(r)) => log::info!("loaded demo graph `{}`: {} vertices, {} edges", r.space, r.vertices, r.edges),
            Ok(None) => log::info!("demo graph `nba` already present"),
            Err(e) => return Err(format!("cannot load the demo graph from {}: {e}", dir.display())),
        }
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_stack_size(16 << 20)
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(http_addr).await.map_err(|e| format!("cannot listen on {http_addr}: {e}"))?;
        let graph_listener = tokio::net::TcpListener::bind(graph.addr).await.map_err(|e| format!("cannot listen on {}: {e}", graph.addr))?;
        log::info!("quiver serving HTTP on {http_addr} and the graph protocol on {} (data in {})", graph.addr, data_dir.display());
        let graph_task = tokio::spawn(quiver_server::graphd::serve(graph_listener, db.clone(), sessions, graph.config, graph.idle_timeout));
        let app = quiver_server::http::router(db.clone());
        let served = axum::serve(listener, app).with_graceful_shutdown(shutdown_signal()).await.map_err(|e| format!("server error: {e}"));
        graph_task.abort();
        served?;
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
