//! The graph service on NebulaGraph's wire protocol (port 9669): what `nebula3-python`, `nebula-go` and the tools
//! built on them connect to. Frames and values are the wire crate's; sessions are [`SessionManager`]'s. A plaintext
//! connection is served on a thread of its own (up to `GraphConfig::connection_threads`), where its requests are
//! read, run and answered; other connections are tasks of the runtime whose queries run on the blocking pool. Either
//! way a long query never stalls another connection.
//!
//! A connection is served one request at a time, in order. Anything that is not a GraphService call (garbage,
//! an oversized or truncated frame, an unknown method) closes that connection with a logged reason and touches
//! nothing else.

use crate::net::ConnectionLimit;
use crate::sessions::SessionManager;
use crate::Database;
use quiver_common::limits::FRAME_BYTES_MAX;
use quiver_common::{ErrorCode, QError};
use quiver_query::{Params, PlanDesc};
use quiver_wire::compact::Message;
use quiver_wire::frame::{decode_frame, encode_frame, frame_len, Framing};
use quiver_wire::graph::{
    decode_call, encode_exception, encode_reply, AuthResponse, Call, CallError, ExecutionResponse, PlanDescription,
    PlanNodeDescription, Reply, Table, E_CLIENT_SERVER_INCOMPATIBLE, UNKNOWN_METHOD,
};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;

/// NebulaGraph 3.x's default `client_white_list`.
pub const DEFAULT_CLIENT_VERSIONS: &[&str] =
    &["3.0.0", "3.1.0", "3.2.0", "3.3.0", "3.4.0", "3.5.0", "3.6.0", "3.7.0", "3.8.0"];

#[derive(Debug, Clone)]
pub struct GraphConfig {
    /// Client versions `verifyClientVersion` accepts; empty accepts every version.
    pub client_versions: Vec<String>,
    pub max_frame_bytes: usize,
    /// Once the first byte of a frame has arrived (its length included), the rest must arrive within this time; a
    /// TLS handshake, too.
    pub frame_timeout: Duration,
    /// TLS, when the port serves it (then it serves nothing else).
    pub tls: Option<crate::tls::Tls>,
    /// Plaintext connections served on threads of their own at once (see `Service::on_thread`); more are served
    /// on the runtime. 0 serves every connection on the runtime.
    pub connection_threads: usize,
    /// How long a connection thread that has answered polls its socket for the next frame before it blocks, while
    /// the rest of the machine is idle (see [`ConnectionThreads::spin_for_frame`]); zero blocks at once.
    pub spin: Duration,
}

impl Default for GraphConfig {
    fn default() -> GraphConfig {
        GraphConfig {
            client_versions: DEFAULT_CLIENT_VERSIONS.iter().map(|v| v.to_string()).collect(),
            max_frame_bytes: FRAME_BYTES_MAX,
            frame_timeout: crate::net::REQUEST_ARRIVAL_TIMEOUT_DEFAULT,
            tls: None,
            connection_threads: CONNECTION_THREADS_DEFAULT,
            spin: SPIN_DEFAULT,
        }
    }
}

struct Service {
    db: Arc<Database>,
    sessions: Arc<SessionManager>,
    config: GraphConfig,
    /// The threads plaintext connections are served on.
    threads: ConnectionThreads,
}

impl Service {
    /// One accepted connection, through the TLS handshake first when the port has TLS. A plaintext connection is
    /// served on a thread of its own while fewer than `GraphConfig::connection_threads` are (see [`Service::on_thread`]),
    /// otherwise as a task of the runtime.
    async fn accepted(self: Arc<Self>, stream: TcpStream, peer: SocketAddr) -> Result<(), String> {
        match &self.config.tls {
            None => match self.clone().on_thread(stream, peer) {
                Ok(served) => served.await.unwrap_or_else(|_| Err("the connection's thread ended early".into())),
                Err(stream) => self.connection(stream, peer).await,
            },
            Some(tls) => {
                let stream = tls.accept(stream, self.config.frame_timeout).await?;
                self.connection(stream, peer).await
            }
        }
    }

    /// Serves a plaintext connection on a thread of its own, blocking on its socket: a request is read, run and
    /// answered on that thread, with no task to wake and no hand-off to the blocking pool and back (two thread
    /// wake-ups less per request than [`Service::connection`]). The thread is one kept from a connection that
    /// closed when there is one, so a new connection finds its allocator pages and per-thread buffers warm (see
    /// [`ConnectionThreads`]). Gives the stream back when `GraphConfig::connection_threads` are served so already;
    /// otherwise the receiver ends with the connection.
    fn on_thread(
        self: Arc<Self>,
        stream: TcpStream,
        peer: SocketAddr,
    ) -> Result<tokio::sync::oneshot::Receiver<Result<(), String>>, TcpStream> {
        let idle = {
            let mut idle = self.threads.idle.lock().unwrap_or_else(|p| p.into_inner());
            match idle.pop() {
                Some(thread) => Some(thread),
                None if self.threads.alive.load(Ordering::Acquire) < self.config.connection_threads => {
                    self.threads.alive.fetch_add(1, Ordering::AcqRel);
                    None
                }
                None => return Err(stream),
            }
        };
        let (tx, rx) = tokio::sync::oneshot::channel();
        let std = match stream.into_std().and_then(|s| s.set_nonblocking(false).map(|_| s)) {
            Ok(s) => s,
            Err(e) => {
                // The place taken above is given back.
                match idle {
                    Some(thread) => self.threads.idle.lock().unwrap_or_else(|p| p.into_inner()).push(thread),
                    None => {
                        self.threads.alive.fetch_sub(1, Ordering::AcqRel);
                    }
                }
                let _ = tx.send(Err(format!("cannot serve the connection: {e}")));
                return Ok(rx);
            }
        };
        let job = Job { stream: std, peer, done: tx };
        let job = match idle {
            // The thread waits on its slot until it ends, and it ends only after taking its slot out of the idle
            // list (under the lock this slot was popped under), so the send does not fail.
            Some((_, slot)) => match slot.send(job) {
                Ok(()) => return Ok(rx),
                Err(std::sync::mpsc::SendError(job)) => {
                    self.threads.alive.fetch_add(1, Ordering::AcqRel);
                    job
                }
            },
            None => job,
        };
        let runtime = tokio::runtime::Handle::current();
        let service = self.clone();
        let spawned = std::thread::Builder::new()
            .name("quiver-graph".into())
            .stack_size(quiver_common::limits::QUERY_THREAD_STACK_BYTES)
            .spawn(move || service.connection_thread(job, &runtime));
        if let Err(e) = spawned {
            // The job (and the stream) moved into the closure that did not start and is closed with it; the
            // client retries.
            self.threads.alive.fetch_sub(1, Ordering::AcqRel);
            log::warn!("cannot start a thread for a graph connection from {peer}: {e}");
        }
        Ok(rx)
    }

    /// A connection thread: serves `job`, then waits up to [`CONNECTION_THREAD_KEEP`] for the next connection.
    fn connection_thread(self: Arc<Self>, mut job: Job, runtime: &tokio::runtime::Handle) {
        let threads = &self.threads;
        loop {
            let served = self.connection_blocking(job.stream, job.peer, runtime);
            let _ = job.done.send(served);
            let (slot, next) = std::sync::mpsc::channel();
            let id = threads.next_id.fetch_add(1, Ordering::Relaxed);
            threads.idle.lock().unwrap_or_else(|p| p.into_inner()).push((id, slot));
            job = match next.recv_timeout(CONNECTION_THREAD_KEEP) {
                Ok(j) => j,
                Err(_) => {
                    let mut idle = threads.idle.lock().unwrap_or_else(|p| p.into_inner());
                    match idle.iter().position(|(i, _)| *i == id) {
                        Some(at) => {
                            idle.swap_remove(at);
                            threads.alive.fetch_sub(1, Ordering::AcqRel);
                            return;
                        }
                        // Popped by a connection being handed over now: it is on its way.
                        None => {
                            drop(idle);
                            match next.recv() {
                                Ok(j) => j,
                                Err(_) => {
                                    threads.alive.fetch_sub(1, Ordering::AcqRel);
                                    return;
                                }
                            }
                        }
                    }
                }
            };
        }
    }
}

/// A connection handed to a connection thread, and where the thread says how it ended.
struct Job {
    stream: std::net::TcpStream,
    peer: SocketAddr,
    done: tokio::sync::oneshot::Sender<Result<(), String>>,
}

/// The threads that serve plaintext connections. A thread whose connection closed waits a while for the next one
/// (as the runtime's blocking pool keeps its threads): a fresh thread per connection started with cold allocator
/// pages and per-thread buffers, which at 16 short-lived connections running 3-hop GOs halved their throughput.
#[derive(Default)]
struct ConnectionThreads {
    /// Threads alive, serving or idle.
    alive: AtomicUsize,
    /// The idle threads' hand-over slots, by an id each.
    idle: std::sync::Mutex<Vec<(u64, std::sync::mpsc::Sender<Job>)>>,
    next_id: std::sync::atomic::AtomicU64,
    /// Connection threads reading, running or answering a frame.
    busy: AtomicUsize,
    /// Whether a connection thread is polling for its next frame (one at a time: see `spin_for_frame`).
    spinning: std::sync::atomic::AtomicBool,
    /// Numbers for connections, the last one a frame came from, and when (`micros`) the one before it differed.
    next_connection: std::sync::atomic::AtomicU64,
    last_frame_from: std::sync::atomic::AtomicU64,
    frames_interleaved_at: std::sync::atomic::AtomicU64,
    epoch: std::sync::OnceLock<Instant>,
    /// The cores this process may run on.
    cores: std::sync::OnceLock<usize>,
}

impl ConnectionThreads {
    /// Counts connection `me`'s thread as busy with a frame until the guard drops.
    fn busy(&self, me: u64) -> Busy<'_> {
        self.busy.fetch_add(1, Ordering::AcqRel);
        if self.last_frame_from.swap(me, Ordering::AcqRel) != me {
            self.frames_interleaved_at.store(self.micros(), Ordering::Release);
        }
        Busy(&self.busy)
    }

    /// Microseconds since the first call.
    fn micros(&self) -> u64 {
        self.epoch.get_or_init(Instant::now).elapsed().as_micros() as u64
    }

    /// Polls `stream` (without blocking) for up to `spin` or until a frame's first bytes are in `reader`, while
    /// connection `me` is the only one sending frames (none other has for `SPIN_ALONE`) and no other thread is busy
    /// with one. Waking a thread blocked on a socket costs a virtual machine's scheduler tens of microseconds, as
    /// much as a short statement's whole service time: a client sending statement after statement meets a thread
    /// still running instead. With several connections at work the cores are kept busy by them and a poller would
    /// only take time from them, so nothing polls then; the poller yields its core between polls and stops as soon
    /// as another connection's frame starts.
    fn spin_for_frame(
        &self,
        me: u64,
        stream: &std::net::TcpStream,
        reader: &mut std::io::BufReader<&std::net::TcpStream>,
        spin: Duration,
    ) {
        use std::io::BufRead;
        let cores = *self.cores.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        let alone = || {
            self.last_frame_from.load(Ordering::Acquire) == me
                && self.micros().saturating_sub(self.frames_interleaved_at.load(Ordering::Acquire))
                    > SPIN_ALONE.as_micros() as u64
                && self.busy.load(Ordering::Acquire) == 0
        };
        if spin.is_zero() || cores < 2 || !alone() {
            return;
        }
        if self.spinning.compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire).is_err() {
            return;
        }
        if stream.set_nonblocking(true).is_ok() {
            let until = Instant::now() + spin;
            while self.busy.load(Ordering::Acquire) == 0 && Instant::now() < until {
                match reader.fill_buf() {
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => std::thread::yield_now(),
                    // Bytes, the end of the stream or an error: the blocking read that follows sees each again.
                    _ => break,
                }
            }
            // A socket left non-blocking would turn the blocking read into an error: the connection ends.
            let _ = stream.set_nonblocking(false);
        }
        self.spinning.store(false, Ordering::Release);
    }
}

/// How long one connection must have been the only one sending frames before its thread polls for the next.
const SPIN_ALONE: Duration = Duration::from_millis(5);

struct Busy<'a>(&'a AtomicUsize);

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// See `GraphConfig::spin`: about a client's turnaround on the same machine (its own wake-up and its next request).
pub const SPIN_DEFAULT: Duration = Duration::from_micros(50);

/// How long a connection thread waits for the next connection before it ends.
const CONNECTION_THREAD_KEEP: Duration = Duration::from_secs(10);

/// Plaintext graph connections served on threads of their own at once by default; more are served on the runtime.
pub const CONNECTION_THREADS_DEFAULT: usize = 64;

/// Accepts connections until the task is dropped; idle sessions are reaped in the background.
pub async fn serve(
    listener: crate::net::Acceptor,
    limit: Arc<ConnectionLimit>,
    db: Arc<Database>,
    sessions: Arc<SessionManager>,
    config: GraphConfig,
    idle_timeout: Duration,
) {
    let service = Arc::new(Service { db, sessions: sessions.clone(), config, threads: ConnectionThreads::default() });
    let _reaper = AbortOnDrop(tokio::spawn(async move {
        let period = (idle_timeout / 2).clamp(Duration::from_millis(100), Duration::from_secs(60));
        loop {
            tokio::time::sleep(period).await;
            let n = sessions.reap();
            if n > 0 {
                log::info!("reclaimed {n} idle sessions");
            }
        }
    }));
    loop {
        match listener.accept().await {
            Ok((stream, peer)) => {
                let Some(slot) = limit.admit(peer, "graph") else { continue };
                let service = service.clone();
                tokio::spawn(async move {
                    let _slot = slot;
                    let _ = stream.set_nodelay(true);
                    if let Err(reason) = service.accepted(stream, peer).await {
                        log::warn!("graph connection from {peer} closed: {reason}");
                    }
                });
            }
            Err(e) => {
                log::warn!("graph listener: accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

/// Stops the session reaper when the accept loop is dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl Service {
    /// Serves one connection; `Err` carries why it was closed, `Ok` a clean close by the client.
    async fn connection(
        self: &Arc<Self>,
        mut stream: impl AsyncRead + AsyncWrite + Unpin,
        peer: SocketAddr,
    ) -> Result<(), String> {
        loop {
            // A connection may sit idle before a frame as long as it likes (pooled clients do); from the frame's
            // first byte on, the whole frame must arrive within the deadline.
            let mut first = [0u8; 1];
            match stream.read(&mut first).await {
                Ok(0) => return Ok(()),
                Ok(_) => {}
                Err(e) => return Err(format!("read failed: {e}")),
            }
            let timeout = self.config.frame_timeout;
            let body = match tokio::time::timeout(timeout, self.rest_of_frame(&mut stream, first[0])).await {
                Ok(body) => body?,
                Err(_) => return Err(format!("a frame did not arrive whole within {timeout:?} of its first byte")),
            };
            match decode(&body)? {
                Decoded::Call(framing, msg, Call::Execute { session_id, stmt, params, json }) => {
                    // On the blocking pool, so a long query never stalls the runtime.
                    let (service, call) = (self.clone(), msg.clone());
                    let ran =
                        tokio::task::spawn_blocking(move || service.execute_now(&call, session_id, stmt, params, json));
                    let payload = ran.await.unwrap_or_else(|e| {
                        log::error!("query task failed: {e}");
                        encode_reply(&msg, &error_reply(QError::execution(format!("internal error: {e}")), json))
                    });
                    write_frame(&mut stream, framing, &payload).await?;
                }
                Decoded::Call(framing, msg, call) => {
                    if let Some(reply) = self.handle(call, peer).await {
                        write_frame(&mut stream, framing, &encode_reply(&msg, &reply)).await?;
                    }
                }
                Decoded::Answer(framing, answer, close) => {
                    write_frame(&mut stream, framing, &answer).await?;
                    if let Some(reason) = close {
                        return Err(reason);
                    }
                }
            }
        }
    }

    /// [`Service::connection`] on a blocking socket, on the calling thread (see [`Service::on_thread`]). Calls
    /// other than `execute` (sign-in, sign-out, the version check) run as on the runtime, through `runtime`.
    fn connection_blocking(
        self: &Arc<Self>,
        stream: std::net::TcpStream,
        peer: SocketAddr,
        runtime: &tokio::runtime::Handle,
    ) -> Result<(), String> {
        use std::io::{BufRead, Read, Write};
        let mut reader = std::io::BufReader::with_capacity(BLOCKING_READ_BYTES, &stream);
        let mut writer = &stream;
        // Whether a read timeout is set on the socket (setting one is a system call: only when a frame needs more
        // than one read).
        let mut timed = false;
        // This connection's number among the frames `spin_for_frame` watches.
        let me = self.threads.next_connection.fetch_add(1, Ordering::Relaxed);
        loop {
            // Idle between frames as long as the client likes; from a frame's first byte on, the deadline.
            if timed && reader.buffer().is_empty() {
                stream.set_read_timeout(None).map_err(|e| format!("read failed: {e}"))?;
                timed = false;
            }
            if reader.buffer().is_empty() {
                self.threads.spin_for_frame(me, &stream, &mut reader, self.config.spin);
            }
            match reader.fill_buf() {
                Ok([]) => return Ok(()),
                Ok(_) => {}
                Err(e) => return Err(format!("read failed: {e}")),
            }
            let _busy = self.threads.busy(me);
            let deadline = Instant::now() + self.config.frame_timeout;
            let late =
                || format!("a frame did not arrive whole within {:?} of its first byte", self.config.frame_timeout);
            // Reads exactly `buf.len()` bytes before the deadline.
            let mut read_exact = |buf: &mut [u8], what: &str| -> Result<(), String> {
                let mut at = 0;
                while at < buf.len() {
                    if reader.buffer().is_empty() {
                        let left = deadline.checked_duration_since(Instant::now()).filter(|d| !d.is_zero());
                        let Some(left) = left else { return Err(late()) };
                        stream.set_read_timeout(Some(left)).map_err(|e| format!("read failed: {e}"))?;
                        timed = true;
                    }
                    match reader.read(&mut buf[at..]) {
                        Ok(0) => return Err(format!("disconnected inside {what}")),
                        Ok(n) => at += n,
                        Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                            return Err(late())
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(e) => return Err(format!("disconnected inside {what}: {e}")),
                    }
                }
                Ok(())
            };
            let mut prefix = [0u8; 4];
            read_exact(&mut prefix, "a frame's length")?;
            let len = frame_len(prefix, self.config.max_frame_bytes).map_err(|e| e.to_string())?;
            let mut body = vec![0u8; len];
            read_exact(&mut body, &format!("a frame of {len} bytes"))?;
            let write = |w: &mut &std::net::TcpStream, framing, payload: &[u8]| {
                w.write_all(&encode_frame(framing, payload)).map_err(|e| format!("write failed: {e}"))
            };
            match decode(&body)? {
                Decoded::Call(framing, msg, Call::Execute { session_id, stmt, params, json }) => {
                    write(&mut writer, framing, &self.execute_now(&msg, session_id, stmt, params, json))?;
                }
                Decoded::Call(framing, msg, call) => {
                    if let Some(reply) = runtime.block_on(self.handle(call, peer)) {
                        write(&mut writer, framing, &encode_reply(&msg, &reply))?;
                    }
                }
                Decoded::Answer(framing, answer, close) => {
                    write(&mut writer, framing, &answer)?;
                    if let Some(reason) = close {
                        return Err(reason);
                    }
                }
            }
        }
    }

    /// The rest of a frame whose first byte was `first`: the other three bytes of its length, then its body.
    async fn rest_of_frame(&self, stream: &mut (impl AsyncRead + Unpin), first: u8) -> Result<Vec<u8>, String> {
        let mut prefix = [first, 0, 0, 0];
        stream.read_exact(&mut prefix[1..]).await.map_err(|e| format!("disconnected inside a frame's length: {e}"))?;
        let len = frame_len(prefix, self.config.max_frame_bytes).map_err(|e| e.to_string())?;
        let mut body = vec![0u8; len];
        stream.read_exact(&mut body).await.map_err(|e| format!("disconnected inside a frame of {len} bytes: {e}"))?;
        Ok(body)
    }

    async fn handle(self: &Arc<Self>, call: Call, peer: SocketAddr) -> Option<Reply> {
        match call {
            Call::VerifyClientVersion { version } => {
                let versions = &self.config.client_versions;
                if versions.is_empty() || versions.contains(&version) {
                    Some(Reply::Verify { error_code: 0, error_msg: None })
                } else {
                    let msg = format!(
                        "Graph client version({version}) is not accepted, current graph client white list: {}.",
                        versions.join(":")
                    );
                    Some(Reply::Verify { error_code: E_CLIENT_SERVER_INCOMPATIBLE, error_msg: Some(msg) })
                }
            }
            Call::Authenticate { username, password } => {
                // With authorization off (NebulaGraph's default `enable_authorize=false`) any password signs in.
                if let Some(auth) = self.db.auth.clone() {
                    let checked = auth.check_async(username.clone(), password).await;
                    if let Err(msg) = checked {
                        self.sessions.auth_failed();
                        log::info!("sign-in of user {username} from {peer} refused: {msg}");
                        return Some(Reply::Auth(AuthResponse {
                            error_code: ErrorCode::BadUsernamePassword.as_i32(),
                            error_msg: Some(msg),
                            ..AuthResponse::default()
                        }));
                    }
                }
                let reply = match self.sessions.create(&username, &peer.ip().to_string()) {
                    Ok(id) => {
                        log::info!("session {id} opened for user {username} from {peer}");
                        AuthResponse {
                            error_code: 0,
                            session_id: Some(id),
                            time_zone_offset_seconds: Some(0),
                            time_zone_name: Some("UTC".into()),
                            ..AuthResponse::default()
                        }
                    }
                    Err(e) => {
                        self.sessions.auth_failed();
                        AuthResponse {
                            error_code: ErrorCode::SessionInvalid.as_i32(),
                            error_msg: Some(e.message),
                            ..AuthResponse::default()
                        }
                    }
                };
                Some(Reply::Auth(reply))
            }
            Call::Signout { session_id } => {
                if self.sessions.remove(session_id) {
                    log::info!("session {session_id} signed out");
                }
                None
            }
            Call::Execute { .. } => unreachable!("the connection loops run execute calls themselves"),
        }
    }

    /// Runs a statement for a session on the calling thread (it blocks while the statement runs) and encodes the
    /// reply to `call` while the request is still running: the encoded reply counts towards the request's memory
    /// bound, and a request past its deadline or bound once it is encoded answers that error instead.
    fn execute_now(&self, call: &Message, session_id: i64, stmt: Vec<u8>, params: Params, json: bool) -> Vec<u8> {
        let started = Instant::now();
        let mut state = match self.sessions.checkout(session_id) {
            Ok(s) => s,
            Err(e) => return encode_reply(call, &error_reply(e, json)),
        };
        let Ok(stmt) = String::from_utf8(stmt) else {
            return encode_reply(call, &error_reply(QError::syntax("the statement is not valid UTF-8"), json));
        };
        let payload = if json {
            let body = self.db.execute_json_now(&mut state, &stmt, &params, started);
            encode_reply(call, &Reply::Json(body))
        } else {
            self.db.engine.execute_encoded(&mut state, &stmt, &params, |result, session, budget| {
                let latency_us = started.elapsed().as_micros() as i64;
                let space_name = session.space.clone();
                let failed = |e: QError| {
                    let resp = ExecutionResponse {
                        latency_us,
                        space_name: space_name.clone(),
                        error_code: e.code.as_i32(),
                        error_msg: Some(e.message),
                        ..ExecutionResponse::default()
                    };
                    encode_reply(call, &Reply::Execution(resp))
                };
                let mut ds = match result {
                    Ok(ds) => ds,
                    Err(e) => return failed(e),
                };
                let plan = ds.plan.take().map(|p| wire_plan(&p));
                let (columns, values) = ds.into_columns();
                let data = Some(Table { columns, values });
                let resp =
                    ExecutionResponse { latency_us, space_name: space_name.clone(), data, plan, ..Default::default() };
                let encoded = encode_reply(call, &Reply::Execution(resp));
                match budget.check() {
                    Ok(()) => encoded,
                    Err(e) => {
                        drop(encoded);
                        failed(e)
                    }
                }
            })
        };
        self.sessions.checkin(session_id, state);
        payload
    }
}

/// What a frame asks for.
enum Decoded {
    /// A GraphService call, to answer in the frame's framing.
    Call(Framing, Message, Call),
    /// An answer made without running anything (an unknown or unsupported method); after writing it the
    /// connection closes if a reason is given.
    Answer(Framing, Vec<u8>, Option<String>),
}

/// A frame's call, or the answer to a frame that is not one; `Err` closes the connection (not a GraphService
/// call at all).
fn decode(body: &[u8]) -> Result<Decoded, String> {
    let (framing, payload) = decode_frame(body).map_err(|e| e.to_string())?;
    match decode_call(payload) {
        Ok((msg, call)) => Ok(Decoded::Call(framing, msg, call)),
        Err(CallError::Malformed(e)) => Err(format!("malformed call: {e}")),
        Err(CallError::UnknownMethod(msg)) => {
            let text = format!("Method name {} not found", msg.name);
            let close = format!("unknown method `{}'", msg.name);
            Ok(Decoded::Answer(framing, encode_exception(&msg, UNKNOWN_METHOD, &text), Some(close)))
        }
        Err(CallError::Unsupported(msg, text)) => {
            let json = msg.name.starts_with("executeJson");
            let reply = error_reply(QError::not_supported(text), json);
            Ok(Decoded::Answer(framing, encode_reply(&msg, &reply), None))
        }
    }
}

/// The read buffer of a connection served on its own thread: most requests arrive in one read.
const BLOCKING_READ_BYTES: usize = 16 << 10;

fn error_reply(e: QError, json: bool) -> Reply {
    if json {
        return Reply::Json(crate::http::encode_response(&Err(e), None, 0, None, usize::MAX));
    }
    Reply::Execution(ExecutionResponse {
        error_code: e.code.as_i32(),
        error_msg: Some(e.message),
        ..ExecutionResponse::default()
    })
}

fn wire_plan(p: &PlanDesc) -> PlanDescription {
    PlanDescription {
        nodes: p
            .nodes
            .iter()
            .map(|n| PlanNodeDescription {
                name: n.name.clone(),
                id: n.id,
                output_var: n.output_var.clone(),
                description: n.description.clone(),
                profile: n.profile.map(|s| (s.rows as i64, s.exec_duration_us as i64, s.total_duration_us as i64)),
                dependencies: n.dependencies.clone(),
            })
            .collect(),
        format: p.format.clone(),
        optimize_time_us: p.optimize_time_us.min(i32::MAX as u64) as i32,
    }
}

async fn write_frame(stream: &mut (impl AsyncWrite + Unpin), framing: Framing, payload: &[u8]) -> Result<(), String> {
    stream.write_all(&encode_frame(framing, payload)).await.map_err(|e| format!("write failed: {e}"))
}
