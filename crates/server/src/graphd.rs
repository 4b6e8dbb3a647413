//! The graph service on NebulaGraph's wire protocol (port 9669): what `nebula3-python`, `nebula-go` and the tools
//! built on them connect to. Frames and values are the wire crate's; sessions are [`SessionManager`]'s; queries run
//! on the blocking pool so a long query never stalls another connection.
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
use quiver_wire::frame::{decode_frame, encode_frame, frame_len, Framing};
use quiver_wire::graph::{
    decode_call, encode_exception, encode_reply, AuthResponse, Call, CallError, ExecutionResponse, PlanDescription,
    PlanNodeDescription, Reply, Table, E_CLIENT_SERVER_INCOMPATIBLE, UNKNOWN_METHOD,
};
use std::net::SocketAddr;
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
}

impl Default for GraphConfig {
    fn default() -> GraphConfig {
        GraphConfig {
            client_versions: DEFAULT_CLIENT_VERSIONS.iter().map(|v| v.to_string()).collect(),
            max_frame_bytes: FRAME_BYTES_MAX,
            frame_timeout: crate::net::REQUEST_ARRIVAL_TIMEOUT_DEFAULT,
            tls: None,
        }
    }
}

struct Service {
    db: Arc<Database>,
    sessions: Arc<SessionManager>,
    config: GraphConfig,
}

impl Service {
    /// One accepted connection, through the TLS handshake first when the port has TLS.
    async fn accepted(&self, stream: TcpStream, peer: SocketAddr) -> Result<(), String> {
        match &self.config.tls {
            None => self.connection(stream, peer).await,
            Some(tls) => {
                let stream = tls.accept(stream, self.config.frame_timeout).await?;
                self.connection(stream, peer).await
            }
        }
    }
}

/// Accepts connections until the task is dropped; idle sessions are reaped in the background.
pub async fn serve(
    listener: crate::net::Acceptor,
    limit: Arc<ConnectionLimit>,
    db: Arc<Database>,
    sessions: Arc<SessionManager>,
    config: GraphConfig,
    idle_timeout: Duration,
) {
    let service = Arc::new(Service { db, sessions: sessions.clone(), config });
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
        &self,
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
            let (framing, payload) = decode_frame(&body).map_err(|e| e.to_string())?;
            let (msg, call) = match decode_call(payload) {
                Ok(pair) => pair,
                Err(CallError::Malformed(e)) => return Err(format!("malformed call: {e}")),
                Err(CallError::UnknownMethod(msg)) => {
                    let text = format!("Method name {} not found", msg.name);
                    write_frame(&mut stream, framing, &encode_exception(&msg, UNKNOWN_METHOD, &text)).await?;
                    return Err(format!("unknown method `{}'", msg.name));
                }
                Err(CallError::Unsupported(msg, text)) => {
                    let json = msg.name.starts_with("executeJson");
                    let reply = error_reply(QError::not_supported(text), json);
                    write_frame(&mut stream, framing, &encode_reply(&msg, &reply)).await?;
                    continue;
                }
            };
            if let Some(reply) = self.handle(call, peer).await {
                write_frame(&mut stream, framing, &encode_reply(&msg, &reply)).await?;
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

    async fn handle(&self, call: Call, peer: SocketAddr) -> Option<Reply> {
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
            Call::Execute { session_id, stmt, params, json } => {
                Some(self.execute(session_id, stmt, params, json).await)
            }
        }
    }

    async fn execute(&self, session_id: i64, stmt: Vec<u8>, params: Params, json: bool) -> Reply {
        let started = Instant::now();
        let state = match self.sessions.checkout(session_id) {
            Ok(s) => s,
            Err(e) => return error_reply(e, json),
        };
        let Ok(stmt) = String::from_utf8(stmt) else {
            return error_reply(QError::syntax("the statement is not valid UTF-8"), json);
        };
        if json {
            let (body, state) = self.db.execute_json(state, stmt, params).await;
            self.sessions.checkin(session_id, state);
            return Reply::Json(body);
        }
        let (result, state) = match self.db.execute_blocking(state, stmt, params).await {
            Ok(pair) => pair,
            Err(e) => return error_reply(e, json),
        };
        let space = state.space.clone();
        self.sessions.checkin(session_id, state);
        let latency_us = started.elapsed().as_micros() as i64;
        let mut resp = ExecutionResponse { latency_us, space_name: space, ..ExecutionResponse::default() };
        match result {
            Ok(mut ds) => {
                resp.plan = ds.plan.take().map(|p| wire_plan(&p));
                let (columns, values) = ds.into_columns();
                resp.data = Some(Table { columns, values });
            }
            Err(e) => {
                resp.error_code = e.code.as_i32();
                resp.error_msg = Some(e.message);
            }
        }
        Reply::Execution(resp)
    }
}

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
