//! The HTTP API: `POST /api/v1/exec` answers in the JSON shape of NebulaGraph's `executeJson`;
//! `GET /api/v1/health` answers 200 when the server is ready.

use crate::Database;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use quiver_common::limits::HTTP_BODY_BYTES_MAX;
use quiver_common::{ErrorCode, QError, Value};
use quiver_query::{DataSet, Params, PlanDesc, Session};
use serde_json::{json, Value as J};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

pub fn router(db: Arc<Database>) -> Router {
    Router::new()
        .route("/api/v1/health", get(|| async { "ok" }))
        .route("/api/v1/exec", post(exec))
        .layer(DefaultBodyLimit::max(HTTP_BODY_BYTES_MAX))
        .with_state(db)
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

pub(crate) fn response_json(result: &Result<DataSet, QError>, space: Option<&str>, latency_us: u128) -> J {
    let mut body = serde_json::Map::new();
    body.insert("latencyInUs".into(), json!(latency_us as u64));
    if let Some(s) = space {
        body.insert("spaceName".into(), json!(s));
    }
    let errors = match result {
        Ok(ds) => {
            body.insert("columns".into(), json!(ds.columns()));
            let width = ds.columns().len();
            let data: Vec<J> = (0..ds.len())
                .map(|i| {
                    let row = || (0..width).map(|c| ds.value(i, c));
                    json!({"row": row().map(Value::to_json).collect::<Vec<_>>(), "meta": row().map(Value::to_json_meta).collect::<Vec<_>>()})
                })
                .collect();
            body.insert("data".into(), J::Array(data));
            if let Some(plan) = &ds.plan {
                body.insert("planDesc".into(), plan_json(plan));
            }
            json!({"code": 0})
        }
        Err(e) => {
            body.insert("columns".into(), json!([]));
            body.insert("data".into(), json!([]));
            json!({"code": e.code.as_i32(), "message": e.message})
        }
    };
    body.insert("errors".into(), errors.clone());
    json!({"results": [J::Object(body)], "errors": [errors]})
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
    let e = QError::new(ErrorCode::ExecutionError, msg);
    (StatusCode::BAD_REQUEST, axum::Json(response_json(&Err(e), None, 0))).into_response()
}

async fn exec(State(db): State<Arc<Database>>, body: Bytes) -> Response {
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
        ..Session::default()
    };
    let started = Instant::now();
    let (result, session) =
        db.execute_blocking(session, stmt, params).await.unwrap_or_else(|e| (Err(e), Session::default()));
    let latency = started.elapsed().as_micros();
    axum::Json(response_json(&result, session.space.as_deref(), latency)).into_response()
}
