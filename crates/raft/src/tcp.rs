//! Raft's messages over TCP: one connection per pair of hosts (opened on first use, reopened after a failure),
//! multiplexed by request id, so a slow snapshot chunk does not hold up heartbeats of other groups.
//!
//! A frame is `u32` length (of what follows, at most `RAFT_FRAME_BYTES_MAX`), `u64` request id, `u8` kind, then
//! for a request the `u64` group and the message ([`crate::message`]), for a reply a `u8` status and its body. Every
//! length is checked before anything is allocated; a frame that does not decode closes its connection.
//!
//! The same connections carry a process's own service ([`Service`]: the storage or meta service's requests, whose
//! bytes this module does not read), so a host has one port and one connection per peer.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use openraft::error::{InstallSnapshotError, PayloadTooLarge, RemoteError};
use quiver_common::limits::{RAFT_FRAME_BYTES_MAX, RAFT_REQUESTS_IN_FLIGHT_MAX, SEQUENTIAL_CONNECTIONS_MAX};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, oneshot, Semaphore};

use crate::host::{network_error, unreachable};
use crate::message;
use crate::{
    AppendEntriesRequest, AppendEntriesResponse, GroupId, InstallSnapshotRequest, InstallSnapshotResponse, RaftError,
    RaftHost, RpcError, Target, Transport, VoteRequest, VoteResponse,
};

const APPEND: u8 = 1;
const VOTE: u8 = 2;
const SNAPSHOT: u8 = 3;
const SERVICE: u8 = 4;
const REPLY: u8 = 0x80;

const OK: u8 = 0;
/// The receiving group failed or does not run there: the sender backs off and retries.
const UNAVAILABLE: u8 = 1;
/// A snapshot chunk that does not continue the stream the receiver has: the sender restarts the snapshot.
const SNAPSHOT_MISMATCH: u8 = 2;

fn frame(id: u64, kind: u8, head: &[u8], body: &[u8]) -> Vec<u8> {
    let len = 8 + 1 + head.len() + body.len();
    let mut f = Vec::with_capacity(4 + len);
    f.extend_from_slice(&(len as u32).to_le_bytes());
    f.extend_from_slice(&id.to_le_bytes());
    f.push(kind);
    f.extend_from_slice(head);
    f.extend_from_slice(body);
    f
}

/// The `group` word of a service request on a connection that carries only service requests, one at a time (a
/// [`ServiceClient`]'s): the host serves such a connection on a thread of its own, which reads a request, serves it
/// and writes the reply, with no hand-off between threads (the runtime's path hands each request to the blocking
/// pool and its reply to a writer task: two thread wake-ups more per request).
const SEQUENTIAL: u64 = 1;

/// Reads one frame's bytes after its length; `None` at a clean end of stream.
async fn read_frame(r: &mut (impl AsyncReadExt + Unpin)) -> std::io::Result<Option<Vec<u8>>> {
    let mut len = [0u8; 4];
    match r.read_exact(&mut len).await {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let mut buf = vec![0u8; frame_len(len)?];
    r.read_exact(&mut buf).await?;
    Ok(Some(buf))
}

/// How many bytes a blocking connection's reader asks the socket for at once: a small frame's length and body
/// arrive in one `recv`, not two.
const BLOCKING_READ_BYTES: usize = 16 * 1024;

/// [`read_frame`] from a blocking stream (its callers read through a buffer of [`BLOCKING_READ_BYTES`]).
fn read_frame_blocking(r: &mut impl std::io::Read) -> std::io::Result<Option<Vec<u8>>> {
    let mut len = [0u8; 4];
    match r.read_exact(&mut len) {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let mut buf = vec![0u8; frame_len(len)?];
    r.read_exact(&mut buf)?;
    Ok(Some(buf))
}

/// The length a frame claims, refused before anything is allocated unless it is within bounds.
fn frame_len(len: [u8; 4]) -> std::io::Result<usize> {
    let len = u32::from_le_bytes(len) as usize;
    if !(9..=RAFT_FRAME_BYTES_MAX).contains(&len) {
        return Err(std::io::Error::other(format!("a raft frame of {len} bytes")));
    }
    Ok(len)
}

fn split_head(f: &[u8]) -> (u64, u8, &[u8]) {
    (u64::from_le_bytes(f[..8].try_into().expect("8 bytes")), f[8], &f[9..])
}

type Reply = (u8, Vec<u8>);
type Pending = Arc<Mutex<HashMap<u64, oneshot::Sender<Reply>>>>;

/// Frames a connection queues for writing before calls on it are refused (openraft backs off and retries).
const SEND_QUEUE_FRAMES: usize = 256;

/// A frame not written within this time means the peer stopped reading: the connection is dropped.
const WRITE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// An open connection to one host.
struct Conn {
    frames: mpsc::Sender<Vec<u8>>,
    pending: Pending,
    /// False once its reader or writer has stopped, or a call on it went unanswered.
    alive: Arc<std::sync::atomic::AtomicBool>,
}

impl Conn {
    async fn open(addr: &str) -> std::io::Result<Conn> {
        let stream = TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        let (mut rd, mut wr) = stream.into_split();
        let (frames, mut rx) = mpsc::channel::<Vec<u8>>(SEND_QUEUE_FRAMES);
        let pending: Pending = Arc::default();
        let alive = Arc::new(std::sync::atomic::AtomicBool::new(true));
        let writer_alive = alive.clone();
        tokio::spawn(async move {
            while let Some(f) = rx.recv().await {
                if !matches!(tokio::time::timeout(WRITE_TIMEOUT, wr.write_all(&f)).await, Ok(Ok(()))) {
                    break;
                }
            }
            writer_alive.store(false, Ordering::SeqCst);
        });
        let waiting = pending.clone();
        let reader_alive = alive.clone();
        tokio::spawn(async move {
            while let Ok(Some(f)) = read_frame(&mut rd).await {
                let (id, kind, rest) = split_head(&f);
                if kind & REPLY == 0 || rest.is_empty() {
                    break;
                }
                if let Some(tx) = waiting.lock().expect("pending lock").remove(&id) {
                    let _ = tx.send((rest[0], rest[1..].to_vec()));
                }
            }
            reader_alive.store(false, Ordering::SeqCst);
            // The connection is gone: every call still waiting learns it now (their senders drop).
            waiting.lock().expect("pending lock").clear();
        });
        Ok(Conn { frames, pending, alive })
    }

    fn is_open(&self) -> bool {
        self.alive.load(Ordering::SeqCst) && !self.frames.is_closed()
    }
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::Unreachable(why) => write!(f, "not sent: {why}"),
            CallError::Lost(why) => write!(f, "no answer: {why}"),
        }
    }
}

/// A process's own requests, served on its Raft port: `request` in, the reply out. Runs on the blocking pool or on
/// a connection's own thread, never on the runtime's workers (a service may wait on its groups).
pub trait Service: Send + Sync + 'static {
    fn serve(&self, request: &[u8]) -> Vec<u8>;
}

/// Why a call got no reply.
#[derive(Debug, Clone)]
pub enum CallError {
    /// No connection could be made: the request was not sent.
    Unreachable(String),
    /// Sent, and no reply came: it may or may not have been delivered.
    Lost(String),
}

/// The connection to one address, opened under its own lock: a host that does not answer delays only the calls
/// to it.
type Slot = Arc<tokio::sync::Mutex<Option<Arc<Conn>>>>;

/// The sending side, shared by every group of a host.
#[derive(Default)]
pub struct TcpTransport {
    conns: std::sync::Mutex<HashMap<String, Slot>>,
    next_id: AtomicU64,
    /// A fault hook (the process tests' network partition): while set, this host's Raft messages are neither sent
    /// nor, on the port served with it ([`serve_with`]), answered; its service's requests still are.
    cut_off: Arc<std::sync::atomic::AtomicBool>,
}

impl TcpTransport {
    pub fn new() -> Arc<TcpTransport> {
        Arc::new(TcpTransport::default())
    }

    /// Cuts this host's Raft traffic off (or restores it), as a network partition of the host would for Raft.
    pub fn set_cut_off(&self, cut: bool) {
        self.cut_off.store(cut, Ordering::SeqCst);
    }

    /// The flag [`TcpTransport::set_cut_off`] sets, for the serving side.
    pub fn cut_off_flag(&self) -> Arc<std::sync::atomic::AtomicBool> {
        self.cut_off.clone()
    }

    async fn conn(&self, addr: &str, timeout: Duration) -> Result<Arc<Conn>, CallError> {
        let slot = self.conns.lock().expect("conns lock").entry(addr.to_string()).or_default().clone();
        let mut slot = slot.lock().await;
        if let Some(c) = slot.as_ref().filter(|c| c.is_open()) {
            return Ok(c.clone());
        }
        let c = match tokio::time::timeout(timeout, Conn::open(addr)).await {
            Ok(Ok(c)) => Arc::new(c),
            Ok(Err(e)) => return Err(CallError::Unreachable(format!("{addr}: {e}"))),
            Err(_) => return Err(CallError::Unreachable(format!("{addr}: connect timed out"))),
        };
        *slot = Some(c.clone());
        Ok(c)
    }

    async fn call(
        &self,
        to: &Target,
        kind: u8,
        group: GroupId,
        body: &[u8],
        timeout: Duration,
    ) -> Result<Reply, CallError> {
        if kind != SERVICE && self.cut_off.load(Ordering::SeqCst) {
            return Err(CallError::Unreachable(format!("{}: this host is cut off (a fault test)", to.addr)));
        }
        let conn = self.conn(&to.addr, timeout).await?;
        if body.len() + 64 > RAFT_FRAME_BYTES_MAX {
            return Err(CallError::Unreachable(format!("a request of {} bytes is larger than a frame", body.len())));
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        conn.pending.lock().expect("pending lock").insert(id, tx);
        if let Err(e) = conn.frames.try_send(frame(id, kind, &group.to_le_bytes(), body)) {
            conn.pending.lock().expect("pending lock").remove(&id);
            return Err(CallError::Unreachable(format!("{}: {e}", to.addr)));
        }
        match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(reply)) => Ok(reply),
            Ok(Err(_)) => Err(CallError::Lost(format!("{}: connection closed", to.addr))),
            Err(_) => {
                conn.pending.lock().expect("pending lock").remove(&id);
                // A peer that lets a call go unanswered may be gone without a word: reconnect on the next call.
                conn.alive.store(false, Ordering::SeqCst);
                Err(CallError::Lost(format!("{}: no reply in {timeout:?}", to.addr)))
            }
        }
    }
}

impl TcpTransport {
    /// Sends `request` to the [`Service`] of the process at `addr` and waits up to `timeout` for its reply.
    pub async fn call_service(&self, addr: &str, request: &[u8], timeout: Duration) -> Result<Vec<u8>, CallError> {
        let to = Target { id: 0, addr: addr.to_string() };
        match self.call(&to, SERVICE, 0, request, timeout).await? {
            (OK, reply) => Ok(reply),
            (_, why) => Err(CallError::Lost(format!("{addr}: {}", String::from_utf8_lossy(&why)))),
        }
    }
}

/// A blocking client of one process's [`Service`], for callers on their own threads (graphd's query threads): each
/// call borrows a connection of its pool (or opens one), writes the request and reads the reply on the caller's
/// thread, with no hand-off to a runtime. A connection carries one call at a time; the server serves its frames as
/// it serves any.
pub struct ServiceClient {
    addr: String,
    /// Idle connections (read through a buffer), each with the timeout its socket is set to (set again only when
    /// a call's differs).
    pool: Mutex<Vec<(std::io::BufReader<std::net::TcpStream>, Option<Duration>)>>,
    next_id: AtomicU64,
}

impl ServiceClient {
    pub fn new(addr: &str) -> ServiceClient {
        ServiceClient { addr: addr.to_string(), pool: Mutex::default(), next_id: AtomicU64::new(1) }
    }

    pub fn call(&self, request: &[u8], timeout: Duration) -> Result<Vec<u8>, CallError> {
        use std::io::Write;
        if request.len() + 64 > RAFT_FRAME_BYTES_MAX {
            return Err(CallError::Unreachable(format!("a request of {} bytes is larger than a frame", request.len())));
        }
        let pooled = self.pool.lock().expect("pool lock").pop();
        let (mut conn, set_to) = match pooled {
            Some(c) => c,
            None => {
                let addr: std::net::SocketAddr =
                    self.addr.parse().map_err(|e| CallError::Unreachable(format!("{}: {e}", self.addr)))?;
                let c = std::net::TcpStream::connect_timeout(&addr, timeout)
                    .map_err(|e| CallError::Unreachable(format!("{}: {e}", self.addr)))?;
                let _ = c.set_nodelay(true);
                (std::io::BufReader::with_capacity(BLOCKING_READ_BYTES, c), None)
            }
        };
        // Any failure drops every pooled connection too: they lead to the same (maybe restarted) process.
        let lost = |e: std::io::Error| {
            self.pool.lock().expect("pool lock").clear();
            CallError::Lost(format!("{}: {e}", self.addr))
        };
        if set_to != Some(timeout) {
            conn.get_ref().set_read_timeout(Some(timeout)).map_err(lost)?;
            conn.get_ref().set_write_timeout(Some(timeout)).map_err(lost)?;
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        if let Err(e) = conn.get_mut().write_all(&frame(id, SERVICE, &SEQUENTIAL.to_le_bytes(), request)) {
            // The peer closed the connection (it stopped): nothing of the request was served.
            self.pool.lock().expect("pool lock").clear();
            return Err(CallError::Unreachable(format!("{}: {e}", self.addr)));
        }
        // A reply has a status byte after the head: at least 10 bytes.
        let mut body = match read_frame_blocking(&mut conn).map_err(lost)? {
            Some(body) if body.len() >= 10 => body,
            Some(body) => return Err(CallError::Lost(format!("{}: a reply frame of {} bytes", self.addr, body.len()))),
            None => return Err(lost(std::io::ErrorKind::UnexpectedEof.into())),
        };
        let (got, kind, rest) = split_head(&body);
        if got != id || kind != SERVICE | REPLY {
            return Err(CallError::Lost(format!("{}: a reply to another request", self.addr)));
        }
        let status = rest[0];
        body.drain(..10);
        // A server sends one reply per request: bytes after it mean a connection out of step, not pooled again.
        if conn.buffer().is_empty() {
            self.pool.lock().expect("pool lock").push((conn, Some(timeout)));
        }
        match status {
            OK => Ok(body),
            _ => Err(CallError::Lost(format!("{}: {}", self.addr, String::from_utf8_lossy(&body)))),
        }
    }
}

fn rpc_error<E: std::error::Error>(e: CallError) -> RpcError<E> {
    match e {
        CallError::Unreachable(why) => unreachable(&why),
        CallError::Lost(why) => network_error(&why),
    }
}

fn decoded<T, E: std::error::Error>(r: Result<T, crate::codec::DecodeError>) -> Result<T, RpcError<E>> {
    r.map_err(|e| network_error(&e.to_string()))
}

fn unavailable<E: std::error::Error>(to: &Target, body: &[u8]) -> RpcError<E> {
    unreachable(&format!("node {} at {}: {}", to.id, to.addr, String::from_utf8_lossy(body)))
}

impl Transport for TcpTransport {
    async fn append_entries(
        &self,
        to: &Target,
        group: GroupId,
        req: AppendEntriesRequest,
        timeout: Duration,
    ) -> Result<AppendEntriesResponse, RpcError<RaftError>> {
        let body = message::encode_append_request(&req);
        if body.len() + 64 > RAFT_FRAME_BYTES_MAX && req.entries.len() > 1 {
            // openraft sends fewer entries and tries again.
            return Err(RpcError::PayloadTooLarge(PayloadTooLarge::new_entries_hint(req.entries.len() as u64 / 2)));
        }
        match self.call(to, APPEND, group, &body, timeout).await.map_err(rpc_error)? {
            (OK, b) => decoded(message::decode_append_response(&b)),
            (_, b) => Err(unavailable(to, &b)),
        }
    }

    async fn vote(
        &self,
        to: &Target,
        group: GroupId,
        req: VoteRequest,
        timeout: Duration,
    ) -> Result<VoteResponse, RpcError<RaftError>> {
        let body = message::encode_vote_request(&req);
        match self.call(to, VOTE, group, &body, timeout).await.map_err(rpc_error)? {
            (OK, b) => decoded(message::decode_vote_response(&b)),
            (_, b) => Err(unavailable(to, &b)),
        }
    }

    async fn install_snapshot(
        &self,
        to: &Target,
        group: GroupId,
        req: InstallSnapshotRequest,
        timeout: Duration,
    ) -> Result<InstallSnapshotResponse, RpcError<RaftError<InstallSnapshotError>>> {
        let body = message::encode_snapshot_request(&req);
        match self.call(to, SNAPSHOT, group, &body, timeout).await.map_err(rpc_error)? {
            (OK, b) => decoded(message::decode_snapshot_response(&b)),
            (SNAPSHOT_MISMATCH, b) => {
                let m = decoded(message::decode_mismatch(&b))?;
                let e = RaftError::APIError(InstallSnapshotError::SnapshotMismatch(m));
                Err(RpcError::RemoteError(RemoteError::new(to.id, e)))
            }
            (_, b) => Err(unavailable(to, &b)),
        }
    }
}

/// The receiving side: serves `host`'s groups on `listener` until the task is aborted, which also closes every
/// connection it accepted.
pub async fn serve(listener: TcpListener, host: Arc<RaftHost>) {
    serve_with(listener, host, None, Arc::default()).await
}

/// [`serve`], and `service`'s requests on the same connections; while `cut_off` is set, Raft's requests are
/// dropped unanswered (see [`TcpTransport::set_cut_off`]).
pub async fn serve_with(
    listener: TcpListener,
    host: Arc<RaftHost>,
    service: Option<Arc<dyn Service>>,
    cut_off: Arc<std::sync::atomic::AtomicBool>,
) {
    let mut connections = tokio::task::JoinSet::new();
    // Dropped with this future: closes the connections served on threads of their own too.
    let sequential = Arc::new(Sequential::default());
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let _ = stream.set_nodelay(true);
                let ctx = (host.clone(), service.clone(), cut_off.clone(), sequential.clone());
                connections.spawn(serve_connection(stream, ctx));
            }
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

/// The connections a host serves on threads of their own ([`SEQUENTIAL`]), each by a clone of its socket, so
/// that they close when the host stops serving (as the runtime's connections do when their tasks are dropped).
#[derive(Default)]
struct Sequential {
    open: Mutex<HashMap<u64, std::net::TcpStream>>,
    next: AtomicU64,
}

impl Drop for Sequential {
    fn drop(&mut self) {
        for (_, s) in self.open.lock().expect("sequential lock").drain() {
            let _ = s.shutdown(std::net::Shutdown::Both);
        }
    }
}

/// A service request served: its status and reply (a panic or an oversized reply is answered as unavailable).
fn serve_request(service: &dyn Service, request: &[u8]) -> Reply {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| service.serve(request))) {
        Ok(reply) if reply.len() + 64 <= RAFT_FRAME_BYTES_MAX => (OK, reply),
        Ok(reply) => (UNAVAILABLE, format!("a reply of {} bytes is larger than a frame", reply.len()).into_bytes()),
        Err(_) => (UNAVAILABLE, b"the request panicked".to_vec()),
    }
}

type ConnectionContext = (Arc<RaftHost>, Option<Arc<dyn Service>>, Arc<std::sync::atomic::AtomicBool>, Arc<Sequential>);

async fn serve_connection(mut stream: TcpStream, (host, service, cut_off, sequential): ConnectionContext) {
    let Ok(Some(mut first)) = read_frame(&mut stream).await else { return };
    let (_, kind, rest) = split_head(&first);
    let sequential_request = kind == SERVICE
        && rest.len() >= 8
        && u64::from_le_bytes(rest[..8].try_into().expect("8 bytes")) & SEQUENTIAL != 0;
    if let (true, Some(service)) = (sequential_request, &service) {
        match serve_on_own_thread(stream, first, service.clone(), &sequential) {
            Ok(()) => return,
            Err(back) => (stream, first) = back,
        }
    }
    serve_multiplexed(stream, Some(first), (host, service, cut_off)).await
}

/// Hands a [`SEQUENTIAL`] connection to a thread of its own, or gives it back (with its first frame) when
/// [`SEQUENTIAL_CONNECTIONS_MAX`] are served so already or the thread cannot start.
fn serve_on_own_thread(
    stream: TcpStream,
    first: Vec<u8>,
    service: Arc<dyn Service>,
    sequential: &Arc<Sequential>,
) -> Result<(), (TcpStream, Vec<u8>)> {
    let mut open = sequential.open.lock().expect("sequential lock");
    if open.len() >= SEQUENTIAL_CONNECTIONS_MAX {
        return Err((stream, first));
    }
    let Ok(std) = stream.into_std() else { return Ok(()) };
    let Ok(kept) = std.set_nonblocking(false).and_then(|_| std.try_clone()) else { return Ok(()) };
    let key = sequential.next.fetch_add(1, Ordering::Relaxed);
    open.insert(key, kept);
    drop(open);
    let registry = Arc::downgrade(sequential);
    let spawned = std::thread::Builder::new().name("quiver-service".into()).spawn(move || {
        serve_sequential(std, first, &*service);
        if let Some(r) = registry.upgrade() {
            r.open.lock().expect("sequential lock").remove(&key);
        }
    });
    if spawned.is_err() {
        // The stream moved into the closure that did not start and is closed with it; the client retries.
        sequential.open.lock().expect("sequential lock").remove(&key);
    }
    Ok(())
}

/// Serves a [`SEQUENTIAL`] connection until it closes or sends anything but a service request.
fn serve_sequential(stream: std::net::TcpStream, first: Vec<u8>, service: &dyn Service) {
    use std::io::Write;
    let mut reader = std::io::BufReader::with_capacity(BLOCKING_READ_BYTES, &stream);
    let mut next = Some(first);
    while let Some(f) = next.take() {
        let (id, kind, rest) = split_head(&f);
        if kind != SERVICE || rest.len() < 8 {
            return;
        }
        let (status, reply) = serve_request(service, &rest[8..]);
        if (&stream).write_all(&frame(id, kind | REPLY, &[status], &reply)).is_err() {
            return;
        }
        next = read_frame_blocking(&mut reader).ok().flatten();
    }
}

/// Serves a connection's frames on the runtime, `first` (already read) first: Raft's requests and service requests,
/// several in flight, each reply written by the connection's writer task as it is ready.
async fn serve_multiplexed(
    stream: TcpStream,
    mut first: Option<Vec<u8>>,
    (host, service, cut_off): (Arc<RaftHost>, Option<Arc<dyn Service>>, Arc<std::sync::atomic::AtomicBool>),
) {
    let (mut rd, mut wr) = stream.into_split();
    let (replies, mut rx) = mpsc::unbounded_channel::<Vec<u8>>();
    let writer = tokio::spawn(async move {
        while let Some(f) = rx.recv().await {
            if wr.write_all(&f).await.is_err() {
                break;
            }
        }
    });
    let in_flight = Arc::new(Semaphore::new(RAFT_REQUESTS_IN_FLIGHT_MAX));
    loop {
        let f = match first.take() {
            Some(f) => f,
            None => match read_frame(&mut rd).await {
                Ok(Some(f)) => f,
                _ => break,
            },
        };
        let (id, kind, rest) = split_head(&f);
        if rest.len() < 8 {
            break;
        }
        let group = u64::from_le_bytes(rest[..8].try_into().expect("8 bytes"));
        if kind == SERVICE {
            let Some(service) = service.clone() else { break };
            let Ok(permit) = in_flight.clone().acquire_owned().await else { break };
            let replies = replies.clone();
            let request = rest[8..].to_vec();
            // Served on a blocking thread, which hands the reply straight to the writer: no task of the runtime
            // wakes in between (one task wake less per request).
            tokio::task::spawn_blocking(move || {
                let (status, reply) = serve_request(&*service, &request);
                let _ = replies.send(frame(id, kind | REPLY, &[status], &reply));
                drop(permit);
            });
            continue;
        }
        if cut_off.load(Ordering::SeqCst) {
            continue;
        }
        // A request that does not decode: the peer is not speaking this protocol; drop the connection.
        let Some(request) = Request::decode(kind, &rest[8..]) else { break };
        let Ok(permit) = in_flight.clone().acquire_owned().await else { break };
        let (host, replies) = (host.clone(), replies.clone());
        tokio::spawn(async move {
            let (status, reply) = request.run(&host, group).await;
            let _ = replies.send(frame(id, kind | REPLY, &[status], &reply));
            drop(permit);
        });
    }
    drop(replies);
    let _ = writer.await;
}

enum Request {
    Append(AppendEntriesRequest),
    Vote(VoteRequest),
    Snapshot(InstallSnapshotRequest),
}

impl Request {
    fn decode(kind: u8, body: &[u8]) -> Option<Request> {
        match kind {
            APPEND => message::decode_append_request(body).ok().map(Request::Append),
            VOTE => message::decode_vote_request(body).ok().map(Request::Vote),
            SNAPSHOT => message::decode_snapshot_request(body).ok().map(Request::Snapshot),
            _ => None,
        }
    }

    async fn run(self, host: &RaftHost, group: GroupId) -> (u8, Vec<u8>) {
        fn failed<E: std::error::Error>(e: RpcError<E>) -> (u8, Vec<u8>) {
            (UNAVAILABLE, e.to_string().into_bytes())
        }
        match self {
            Request::Append(req) => match host.append_entries(group, req).await {
                Ok(r) => (OK, message::encode_append_response(&r)),
                Err(e) => failed(e),
            },
            Request::Vote(req) => match host.vote(group, req).await {
                Ok(r) => (OK, message::encode_vote_response(&r)),
                Err(e) => failed(e),
            },
            Request::Snapshot(req) => match host.install_snapshot(group, req).await {
                Ok(r) => (OK, message::encode_snapshot_response(&r)),
                Err(RpcError::RemoteError(RemoteError {
                    source: RaftError::APIError(InstallSnapshotError::SnapshotMismatch(m)),
                    ..
                })) => (SNAPSHOT_MISMATCH, message::encode_mismatch(&m)),
                Err(e) => failed(e),
            },
        }
    }
}
