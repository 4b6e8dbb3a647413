//! Runs statements against Quiver, in process (`Embedded`) or over NebulaGraph's graph protocol (`Wire`, a
//! server in this process on a loopback port, clients on their own threads), and measures latencies.

use quiver_common::Value;
use quiver_query::{Params, Session};
use quiver_server::sessions::SessionManager;
use quiver_server::Database;
use quiver_wire::client::Client;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One connection: runs a statement, returns its rows and the server-side latency in microseconds.
pub trait Conn: Send {
    fn run(&mut self, stmt: &str) -> Result<(Vec<Vec<Value>>, u64), String>;
}

pub struct Embedded {
    db: Arc<Database>,
    session: Session,
}

impl Embedded {
    pub fn new(db: Arc<Database>, space: &str) -> Embedded {
        Embedded { db, session: Session { space: Some(space.to_string()), ..Session::default() } }
    }
}

impl Conn for Embedded {
    fn run(&mut self, stmt: &str) -> Result<(Vec<Vec<Value>>, u64), String> {
        let t = Instant::now();
        let ds =
            self.db.execute(&mut self.session, stmt, &Params::new()).map_err(|e| format!("{stmt}: {}", e.message))?;
        // Rows are counted as delivered once they are rows, as over the wire.
        let rows = ds.into_rows();
        Ok((rows, t.elapsed().as_micros() as u64))
    }
}

pub struct Wire {
    client: Client,
    session: i64,
}

impl Wire {
    pub fn connect(addr: std::net::SocketAddr, space: &str) -> Result<Wire, String> {
        let mut client = Client::connect(addr, Duration::from_secs(600)).map_err(|e| format!("connect {addr}: {e}"))?;
        let session = client.open_session("root", "nebula").map_err(|e| e.to_string())?;
        let mut w = Wire { client, session };
        w.run(&format!("USE {space}"))?;
        Ok(w)
    }
}

impl Conn for Wire {
    fn run(&mut self, stmt: &str) -> Result<(Vec<Vec<Value>>, u64), String> {
        let r = self.client.execute(self.session, stmt, Default::default()).map_err(|e| format!("{stmt}: {e}"))?;
        if r.error_code != 0 {
            return Err(format!("{stmt}: {} ({})", r.error_msg.unwrap_or_default(), r.error_code));
        }
        Ok((r.data.map(|t| t.rows()).unwrap_or_default(), r.latency_us.max(0) as u64))
    }
}

/// The graph protocol served from this process on a loopback port, until dropped.
pub struct GraphServer {
    pub addr: std::net::SocketAddr,
    rt: Option<tokio::runtime::Runtime>,
}

impl GraphServer {
    pub fn start(db: Arc<Database>) -> Result<GraphServer, String> {
        GraphServer::start_with(db, Default::default())
    }

    /// With the graph service's configuration `config`.
    pub fn start_with(db: Arc<Database>, config: quiver_server::graphd::GraphConfig) -> Result<GraphServer, String> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .thread_stack_size(quiver_common::limits::QUERY_THREAD_STACK_BYTES)
            .build()
            .map_err(|e| e.to_string())?;
        let listener = rt.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).map_err(|e| e.to_string())?;
        let addr = listener.local_addr().map_err(|e| e.to_string())?;
        let idle = Duration::from_secs(3600);
        let sessions = Arc::new(SessionManager::new(idle, addr.to_string(), Vec::new()));
        rt.spawn(quiver_server::graphd::serve(
            quiver_server::net::Acceptor::single(listener),
            quiver_server::net::ConnectionLimit::new(None),
            db,
            sessions,
            config,
            idle,
        ));
        Ok(GraphServer { addr, rt: Some(rt) })
    }
}

impl Drop for GraphServer {
    fn drop(&mut self) {
        if let Some(rt) = self.rt.take() {
            rt.shutdown_timeout(Duration::from_secs(1));
        }
    }
}

/// Latency percentiles in milliseconds.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Percentiles {
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p95: f64,
    pub p99: f64,
    pub max: f64,
}

impl Percentiles {
    pub fn of_us(mut us: Vec<u64>) -> Percentiles {
        if us.is_empty() {
            return Percentiles::default();
        }
        us.sort_unstable();
        let at = |q: f64| us[((us.len() as f64 * q).ceil() as usize).clamp(1, us.len()) - 1] as f64 / 1000.0;
        Percentiles {
            mean: us.iter().sum::<u64>() as f64 / us.len() as f64 / 1000.0,
            p50: at(0.50),
            p90: at(0.90),
            p95: at(0.95),
            p99: at(0.99),
            max: *us.last().expect("not empty") as f64 / 1000.0,
        }
    }
}

/// One step of a concurrency ladder.
#[derive(Debug, Clone, serde::Serialize)]
pub struct LadderPoint {
    pub workload: String,
    pub path: String,
    pub clients: usize,
    pub requests: u64,
    /// Requests per second (for batched inserts: also `rows_per_s`).
    pub qps: f64,
    pub rows_per_s: f64,
    pub client: Percentiles,
    pub server: Percentiles,
}

/// What one request of a workload does: statements to run, and how many rows it writes (for throughput).
pub type Request = Box<dyn FnMut(&mut dyn Conn, u64) -> Result<u64, String> + Send>;

/// One client's measurements: client-side and server-side latencies in microseconds, and rows written.
type ClientRun = (Vec<u64>, Vec<u64>, u64);

/// Runs `clients` threads, each with its own connection and request generator, for `duration`.
pub fn ladder(
    workload: &str,
    path: &str,
    clients: usize,
    duration: Duration,
    conn: &(dyn Fn() -> Result<Box<dyn Conn>, String> + Sync),
    request: &(dyn Fn(usize) -> Request + Sync),
) -> Result<LadderPoint, String> {
    let started = Instant::now();
    let results: Vec<Result<ClientRun, String>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..clients)
            .map(|c| {
                s.spawn(move || -> Result<ClientRun, String> {
                    let mut conn = conn()?;
                    let mut req = request(c);
                    let (mut client_us, mut server_us, mut rows) = (Vec::new(), Vec::new(), 0);
                    let deadline = started + duration;
                    let mut i = 0;
                    while Instant::now() < deadline || client_us.is_empty() {
                        let t = Instant::now();
                        let mut server = 0;
                        let mut counting = CountingConn { inner: conn.as_mut(), server_us: &mut server };
                        rows += req(&mut counting, i)?;
                        client_us.push(t.elapsed().as_micros() as u64);
                        server_us.push(server);
                        i += 1;
                    }
                    Ok((client_us, server_us, rows))
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err("a client thread panicked".into()))).collect()
    });
    let elapsed = started.elapsed().as_secs_f64();
    let (mut client, mut server, mut rows) = (Vec::new(), Vec::new(), 0);
    for r in results {
        let (c, s, n) = r?;
        client.extend(c);
        server.extend(s);
        rows += n;
    }
    Ok(LadderPoint {
        workload: workload.to_string(),
        path: path.to_string(),
        clients,
        requests: client.len() as u64,
        qps: client.len() as f64 / elapsed,
        rows_per_s: rows as f64 / elapsed,
        client: Percentiles::of_us(client),
        server: Percentiles::of_us(server),
    })
}

/// Sums the server-side latency of every statement a request runs.
struct CountingConn<'a> {
    inner: &'a mut dyn Conn,
    server_us: &'a mut u64,
}

impl Conn for CountingConn<'_> {
    fn run(&mut self, stmt: &str) -> Result<(Vec<Vec<Value>>, u64), String> {
        let (rows, us) = self.inner.run(stmt)?;
        *self.server_us += us;
        Ok((rows, us))
    }
}
