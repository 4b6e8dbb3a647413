//! The HTTP API: `POST /api/v1/exec` answers in the JSON shape of NebulaGraph's `executeJson`;
//! `GET /api/v1/health` answers 200 when the server is ready. `GET /stats` and `GET /status` answer as
//! NebulaGraph's web service does (its stats exporter reads them); `GET /metrics` in Prometheus's text format.
//!
//! [`serve`] is the port's own accept loop rather than `axum::serve`, so that a request in progress has a deadline:
//! its headers must arrive within the arrival timeout (hyper's `header_read_timeout`, which also closes a
//! keep-alive connection idle that long), and its body within the same time once the handler reads it.

use crate::net::ConnectionLimit;
use crate::Database;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use http_body_util::{BodyExt, LengthLimitError, Limited};
use hyper_util::rt::{TokioIo, TokioTimer};
use quiver_common::budget::Budget;
use quiver_common::limits::HTTP_BODY_BYTES_MAX;
use quiver_common::{ErrorCode, QError, Value};
use quiver_query::{DataSet, Params, PlanDesc, Session};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::{json, Value as J};
use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

#[derive(Clone)]
struct HttpState {
    db: Arc<Database>,
    arrival_timeout: Duration,
}

/// The API's routes; a request body must arrive within `arrival_timeout` of the handler starting to read it.
pub fn router(db: Arc<Database>, arrival_timeout: Duration) -> Router {
    Router::new()
        .route("/api/v1/health", get(|| async { "ok" }))
        .route("/api/v1/exec", post(exec))
        .route("/stats", get(stats))
        .route("/status", get(status))
        .route("/metrics", get(metrics))
        .with_state(HttpState { db, arrival_timeout })
}

/// Serves the API on `listener` until `shutdown` completes, then lets the requests in progress finish. Each
/// connection takes a place in `limit`.
pub async fn serve(
    listener: crate::net::Acceptor,
    db: Arc<Database>,
    limit: Arc<ConnectionLimit>,
    arrival_timeout: Duration,
    tls: Option<crate::tls::Tls>,
    shutdown: impl Future<Output = ()>,
) {
    let service = hyper_util::service::TowerToHyperService::new(router(db, arrival_timeout));
    let (stop, stopping) = tokio::sync::watch::channel(false);
    let mut connections = tokio::task::JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            _ = &mut shutdown => break,
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
            accepted = listener.accept() => {
                let (stream, peer) = match accepted {
                    Ok(a) => a,
                    Err(e) => {
                        log::warn!("HTTP listener: accept failed: {e}");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let Some(slot) = limit.admit(peer, "HTTP") else { continue };
                let service = service.clone();
                let stopping = stopping.clone();
                let tls = tls.clone();
                connections.spawn(async move {
                    let _slot = slot;
                    let closed = match tls {
                        None => serve_connection(stream, service, arrival_timeout, stopping).await,
                        Some(tls) => match tls.accept(stream, arrival_timeout).await {
                            Ok(stream) => serve_connection(stream, service, arrival_timeout, stopping).await,
                            Err(e) => Err(e),
                        },
                    };
                    if let Err(e) = closed {
                        log::warn!("HTTP connection from {peer} closed: {e}");
                    }
                });
            }
        }
    }
    drop(listener);
    let _ = stop.send(true);
    while connections.join_next().await.is_some() {}
}

/// Serves HTTP/1 on one connection until it closes, or gracefully once `stopping` changes.
async fn serve_connection<S, Svc>(
    stream: S,
    service: Svc,
    arrival_timeout: Duration,
    mut stopping: tokio::sync::watch::Receiver<bool>,
) -> Result<(), String>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    Svc: hyper::service::Service<hyper::Request<hyper::body::Incoming>, Response = Response> + Clone + Send + 'static,
    Svc::Future: Send + 'static,
    Svc::Error: std::error::Error + Send + Sync + 'static,
{
    let conn = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(arrival_timeout)
        .serve_connection(TokioIo::new(stream), service);
    tokio::pin!(conn);
    let closed = tokio::select! {
        r = conn.as_mut() => r,
        _ = stopping.changed() => {
            conn.as_mut().graceful_shutdown();
            conn.await
        }
    };
    closed.map_err(|e| e.to_string())
}

/// The whole body of a request, read within the arrival timeout and at most `HTTP_BODY_BYTES_MAX` long.
async fn read_body(body: Body, timeout: Duration) -> Result<Bytes, Response> {
    match tokio::time::timeout(timeout, Limited::new(body, HTTP_BODY_BYTES_MAX).collect()).await {
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
        Ok(Err(e)) if e.downcast_ref::<LengthLimitError>().is_some() => Err(error_response(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("request body larger than {HTTP_BODY_BYTES_MAX} bytes"),
        )),
        Ok(Err(e)) => Err(bad_request(format!("cannot read the request body: {e}"))),
        Err(_) => {
            log::warn!("HTTP request body did not arrive within {timeout:?}; answering 408");
            Err(error_response(StatusCode::REQUEST_TIMEOUT, format!("request body did not arrive within {timeout:?}")))
        }
    }
}

/// A JSON parameter as a query value: integers stay integers, other numbers become floats.
pub fn json_to_value(j: &J) -> Value {
    match j {
        J::Null => Value::NULL,
        J::Bool(b) => Value::Bool(*b),
        J::Number(n) => n.as_i64().map(Value::Int).unwrap_or_else(|| Value::Float(n.as_f64().unwrap_or(f64::NAN))),
        J::String(s) => Value::str(s.clone()),
        J::Array(items) => Value::List(items.iter().map(json_to_value).collect()),
        J::Object(m) => Value::Map(m.iter().map(|(k, v)| (k.clone(), json_to_value(v))).collect::<BTreeMap<_, _>>()),
    }
}

/// A request's answer in the JSON of NebulaGraph's `executeJson`, written straight into bytes (no tree of the whole
/// result is built): `{"errors": [E], "results": [{"columns", "data", "errors": E, "latencyInUs", "planDesc"?,
/// "spaceName"?}]}`, each row `{"meta": [...], "row": [...]}`. With a budget, the writing checks it every
/// [`CHECK_EVERY_BYTES`] (deadline, memory bound, KILL QUERY); the body may not grow past `max_bytes`. Either failure
/// answers the error instead of the rows.
pub(crate) fn encode_response(
    result: &Result<DataSet, QError>,
    space: Option<&str>,
    latency_us: u128,
    budget: Option<&Budget>,
    max_bytes: usize,
) -> Vec<u8> {
    let mut out = Bounded { out: Vec::new(), max_bytes, budget, checked_at: 0, failure: None };
    let answer = Answer { result, space, latency_us };
    if serde_json::to_writer(&mut out, &answer).is_ok() {
        return out.out;
    }
    let failure = out.failure.unwrap_or_else(|| QError::execution("the result could not be encoded as JSON"));
    let answer = Answer { result: &Err(failure), space, latency_us };
    serde_json::to_vec(&answer).expect("an error's JSON is written to memory")
}

/// How often [`encode_response`] checks the request's budget.
const CHECK_EVERY_BYTES: usize = 256 << 10;

/// A body being written: refuses to grow past `max_bytes`, and checks the request's budget as it grows.
struct Bounded<'a> {
    out: Vec<u8>,
    max_bytes: usize,
    budget: Option<&'a Budget>,
    checked_at: usize,
    /// Why writing stopped.
    failure: Option<QError>,
}

impl std::io::Write for Bounded<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.out.len() + buf.len() > self.max_bytes {
            self.failure = Some(QError::execution(format!(
                "the result's JSON is larger than the bound on a JSON response of {} bytes; add a LIMIT, or read \
                 it over the graph protocol",
                self.max_bytes
            )));
            return Err(std::io::Error::other("response bound"));
        }
        if self.out.len() >= self.checked_at + CHECK_EVERY_BYTES {
            self.checked_at = self.out.len();
            if let Some(Err(e)) = self.budget.map(Budget::check) {
                self.failure = Some(e);
                return Err(std::io::Error::other("budget"));
            }
        }
        self.out.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The whole answer; keys in the order a `serde_json::Map` keeps them (sorted), as the answers have always been.
struct Answer<'a> {
    result: &'a Result<DataSet, QError>,
    space: Option<&'a str>,
    latency_us: u128,
}

impl Serialize for Answer<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let errors = match self.result {
            Ok(_) => json!({"code": 0}),
            Err(e) => json!({"code": e.code.as_i32(), "message": e.message}),
        };
        let mut m = s.serialize_map(Some(2))?;
        m.serialize_entry("errors", &[&errors])?;
        m.serialize_entry("results", &[ResultBody { answer: self, errors: &errors }])?;
        m.end()
    }
}

struct ResultBody<'a> {
    answer: &'a Answer<'a>,
    errors: &'a J,
}

impl Serialize for ResultBody<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let a = self.answer;
        let mut m = s.serialize_map(None)?;
        match a.result {
            Ok(ds) => {
                m.serialize_entry("columns", ds.columns())?;
                m.serialize_entry("data", &Rows(ds))?;
            }
            Err(_) => {
                m.serialize_entry("columns", &[] as &[&str])?;
                m.serialize_entry("data", &[] as &[J])?;
            }
        }
        m.serialize_entry("errors", self.errors)?;
        m.serialize_entry("latencyInUs", &(a.latency_us as u64))?;
        if let Ok(DataSet { plan: Some(plan), .. }) = a.result {
            m.serialize_entry("planDesc", &plan_json(plan))?;
        }
        if let Some(space) = a.space {
            m.serialize_entry("spaceName", space)?;
        }
        m.end()
    }
}

/// A result's rows, one JSON object at a time.
struct Rows<'a>(&'a DataSet);

impl Serialize for Rows<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let ds = self.0;
        let width = ds.columns().len();
        let mut rows = s.serialize_seq(Some(ds.len()))?;
        for i in 0..ds.len() {
            let values = || (0..width).map(|c| ds.value(i, c));
            rows.serialize_element(&json!({
                "meta": values().map(Value::to_json_meta).collect::<Vec<_>>(),
                "row": values().map(Value::to_json).collect::<Vec<_>>(),
            }))?;
        }
        rows.end()
    }
}

/// A plan in the shape of NebulaGraph's `PlanDescription`.
fn plan_json(p: &PlanDesc) -> J {
    let nodes: Vec<J> = p
        .nodes
        .iter()
        .map(|n| {
            let mut node = json!({
                "name": n.name,
                "id": n.id,
                "outputVar": n.output_var,
                "description": n.description.iter().map(|(k, v)| json!({"key": k, "value": v})).collect::<Vec<_>>(),
                "dependencies": n.dependencies,
            });
            if let Some(s) = n.profile {
                node["profiles"] = json!([{"rows": s.rows, "execDurationInUs": s.exec_duration_us, "totalDurationInUs": s.total_duration_us}]);
            }
            node
        })
        .collect();
    let index: serde_json::Map<String, J> =
        p.nodes.iter().enumerate().map(|(i, n)| (n.id.to_string(), json!(i))).collect();
    json!({"planNodeDescs": nodes, "nodeIndexMap": index, "format": p.format, "optimize_time_in_us": p.optimize_time_us})
}

fn bad_request(msg: String) -> Response {
    error_response(StatusCode::BAD_REQUEST, msg)
}

fn error_response(status: StatusCode, msg: String) -> Response {
    let e = QError::new(ErrorCode::ExecutionError, msg);
    json_response(status, encode_response(&Err(e), None, 0, None, usize::MAX))
}

fn json_response(status: StatusCode, body: Vec<u8>) -> Response {
    (status, [(axum::http::header::CONTENT_TYPE, "application/json")], body).into_response()
}

async fn exec(State(state): State<HttpState>, headers: axum::http::HeaderMap, body: Body) -> Response {
    let body = match read_body(body, state.arrival_timeout).await {
        Ok(b) => b,
        Err(refused) => return refused,
    };
    let db = state.db;
    // With authorization on, each request signs in with HTTP basic auth and runs as that user.
    let mut user = String::new();
    if let Some(auth) = db.auth.clone() {
        let Some((name, password)) = basic_credentials(&headers) else {
            return unauthorized("this server needs a user name and password (HTTP basic auth)".into());
        };
        match auth.check_async(name.clone(), password).await {
            Ok(()) => user = name,
            Err(msg) => {
                db.metrics.add("num_auth_failed_sessions", 1);
                return unauthorized(msg);
            }
        }
    }
    let req: J = match serde_json::from_slice(&body) {
        Ok(j) => j,
        Err(e) => return bad_request(format!("request body is not JSON: {e}")),
    };
    let Some(stmt) = req.get("stmt").and_then(J::as_str).map(str::to_string) else {
        return bad_request("request needs a string field `stmt'".into());
    };
    let mut params = Params::new();
    match req.get("params") {
        None | Some(J::Null) => {}
        Some(J::Object(m)) => {
            for (k, v) in m {
                params.insert(k.clone(), json_to_value(v));
            }
        }
        Some(_) => return bad_request("`params' must be an object".into()),
    }
    let session = Session {
        space: match req.get("space") {
            None | Some(J::Null) => None,
            Some(J::String(s)) if s.is_empty() => None,
            Some(J::String(s)) => Some(s.clone()),
            Some(_) => return bad_request("`space' must be a string".into()),
        },
        user,
        ..Session::default()
    };
    let body = db.execute_json(session, stmt, params).await.0;
    json_response(StatusCode::OK, body)
}

/// The user name and password of an `Authorization: Basic ...` header.
fn basic_credentials(headers: &axum::http::HeaderMap) -> Option<(String, String)> {
    let value = headers.get(axum::http::header::AUTHORIZATION)?.to_str().ok()?;
    let encoded = value.strip_prefix("Basic ").or_else(|| value.strip_prefix("basic "))?;
    // Credentials are short; a huge header is refused by hyper before it gets here.
    let decoded = <base64ct::Base64 as base64ct::Encoding>::decode_vec(encoded.trim()).ok()?;
    let text = String::from_utf8(decoded).ok()?;
    let (user, password) = text.split_once(':')?;
    Some((user.to_string(), password.to_string()))
}

/// 401 with NebulaGraph's `E_BAD_USERNAME_PASSWORD` in the executeJson error shape, asking for basic auth.
fn unauthorized(msg: String) -> Response {
    let body = json!({ "errors": [{ "code": ErrorCode::BadUsernamePassword.as_i32(), "message": msg }] });
    (StatusCode::UNAUTHORIZED, [(axum::http::header::WWW_AUTHENTICATE, "Basic realm=\"quiver\"")], axum::Json(body))
        .into_response()
}

/// The value of query parameter `name`, percent-decoded (`stats=a%2Cb`).
fn query_param(uri: &axum::http::Uri, name: &str) -> Option<String> {
    let query = uri.query()?;
    query.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        (k == name).then(|| percent_decode(v))
    })
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let hex = |c: u8| (c as char).to_digit(16);
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(if b[i] == b'+' { b' ' } else { b[i] });
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// NebulaGraph's `/stats`: every figure, or those named in `stats=a,b`, one `name=value` per line, or with
/// `format=json` a list of one-entry objects; a name it cannot read gets the error text as its value.
async fn stats(State(st): State<HttpState>, uri: axum::http::Uri) -> Response {
    let figures: Vec<(String, Result<i64, String>)> = match query_param(&uri, "stats") {
        Some(names) => {
            names.split(',').filter(|n| !n.is_empty()).map(|n| (n.to_string(), st.db.metrics.read(n))).collect()
        }
        None => st.db.metrics.read_all().into_iter().map(|(n, v)| (n, Ok(v))).collect(),
    };
    if query_param(&uri, "format").as_deref() == Some("json") {
        let list: Vec<J> = figures
            .into_iter()
            .map(|(n, v)| match v {
                Ok(v) => json!({ n: v }),
                Err(e) => json!({ n: e }),
            })
            .collect();
        return axum::Json(J::Array(list)).into_response();
    }
    let mut text = String::new();
    for (n, v) in figures {
        match v {
            Ok(v) => text.push_str(&format!("{n}={v}\n")),
            Err(e) => text.push_str(&format!("{n}={e}\n")),
        }
    }
    text.into_response()
}

/// NebulaGraph's `/status`.
async fn status() -> Response {
    axum::Json(json!({ "status": "running", "git_info_sha": env!("CARGO_PKG_VERSION") })).into_response()
}

/// Prometheus's text format (0.0.4): the query, session and storage figures as totals, and the storage engine's.
async fn metrics(State(st): State<HttpState>) -> Response {
    let text = st.db.metrics.prometheus(&st.db.engine_figures());
    ([(axum::http::header::CONTENT_TYPE, "text/plain; version=0.0.4")], text).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use quiver_common::value::{Edge, Path, Step, Tag, Vertex};

    #[test]
    fn paths_vertices_and_edges_in_execute_json_rows() {
        let tim = Vertex {
            vid: Value::str("Tim Duncan"),
            tags: vec![Tag { name: "player".into(), props: BTreeMap::from([("age".to_string(), Value::Int(42))]) }],
        };
        let tony = Vertex { vid: Value::str("Tony Parker"), tags: vec![] };
        let likeness = BTreeMap::from([("likeness".to_string(), Value::Int(95))]);
        let path = Path {
            src: tim.clone(),
            steps: vec![Step { dst: tony, edge_type: 3, name: "like".into(), ranking: 0, props: likeness.clone() }],
        };
        let edge = Edge {
            src: Value::str("Tim Duncan"),
            dst: Value::str("Tony Parker"),
            edge_type: 3,
            name: "like".into(),
            ranking: 0,
            props: likeness,
        };
        let ds = DataSet::new(
            vec!["p".into(), "v".into(), "e".into()],
            vec![vec![Value::Path(Arc::new(path)), Value::Vertex(Arc::new(tim)), Value::Edge(Arc::new(edge))]],
        );
        let body: J = serde_json::from_slice(&encode_response(&Ok(ds), Some("nba"), 7, None, usize::MAX)).unwrap();
        let edge_meta = json!({"type": "edge", "id": {"src": "Tim Duncan", "dst": "Tony Parker", "type": 3,
            "name": "like", "ranking": 0}});
        assert_eq!(
            body["results"][0]["data"][0],
            json!({
                "row": [
                    [{"player.age": 42}, {"likeness": 95}, {}],
                    {"player.age": 42},
                    {"likeness": 95}
                ],
                "meta": [
                    [{"type": "vertex", "id": "Tim Duncan"}, edge_meta, {"type": "vertex", "id": "Tony Parker"}],
                    {"type": "vertex", "id": "Tim Duncan"},
                    edge_meta
                ]
            })
        );
    }
}
