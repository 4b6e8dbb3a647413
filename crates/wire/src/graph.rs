//! NebulaGraph's `GraphService` (graph.thrift): its calls decoded, its replies encoded.
//!
//! Each call's arguments are a struct `<method>_args` (fields numbered as the IDL's parameters); each reply is a
//! struct `<method>_result` whose field 0 is the return value.

use crate::compact::{decode_message, DResult, DecodeError, Decoder, Encoder, Message, MessageKind};
use crate::value::{decode_props, encode_value};
use quiver_common::Value;
use std::collections::BTreeMap;
use thrift::protocol::TType;

/// `E_CLIENT_SERVER_INCOMPATIBLE`.
pub const E_CLIENT_SERVER_INCOMPATIBLE: i32 = -3061;

#[derive(Debug, Clone, PartialEq)]
pub enum Call {
    VerifyClientVersion {
        version: String,
    },
    Authenticate {
        username: String,
        password: String,
    },
    /// One-way: no reply is sent.
    Signout {
        session_id: i64,
    },
    /// `execute`, `executeWithParameter`, `executeJson` and `executeJsonWithParameter`.
    Execute {
        session_id: i64,
        stmt: Vec<u8>,
        params: BTreeMap<String, Value>,
        json: bool,
    },
}

#[derive(Debug)]
pub enum CallError {
    /// The bytes are not a GraphService call: the connection should be closed.
    Malformed(DecodeError),
    /// A well-formed message naming a method GraphService does not have.
    UnknownMethod(Message),
    /// A well-formed call with an argument Quiver cannot take (a path parameter, say): answered with an error.
    Unsupported(Message, String),
}

/// Decodes one call from a frame's payload.
pub fn decode_call(payload: &[u8]) -> Result<(Message, Call), CallError> {
    let (msg, offset) = decode_message(payload).map_err(CallError::Malformed)?;
    if !matches!(msg.kind, MessageKind::Call | MessageKind::Oneway) {
        return Err(CallError::Malformed(DecodeError::new(format!("a client sent a message of kind {:?}", msg.kind))));
    }
    let mut d = Decoder::new(&payload[offset..], msg.version);
    let call = match msg.name.as_str() {
        "verifyClientVersion" => {
            let mut version = "3.0.0".to_string();
            d.fields(|d, id, t| {
                if (id, t) != (1, TType::Struct) {
                    return Ok(false);
                }
                d.struct_begin()?;
                while let Some((id, t)) = d.field()? {
                    if (id, t) == (1, TType::String) {
                        version = d.string()?;
                    } else {
                        d.skip(t)?;
                    }
                    d.field_end()?;
                }
                d.struct_end()?;
                Ok(true)
            })
            .map(|_| Call::VerifyClientVersion { version })
        }
        "authenticate" => {
            let (mut username, mut password) = (String::new(), String::new());
            d.fields(|d, id, t| {
                match (id, t) {
                    (1, TType::String) => username = d.string()?,
                    (2, TType::String) => password = d.string()?,
                    _ => return Ok(false),
                }
                Ok(true)
            })
            .map(|_| Call::Authenticate { username, password })
        }
        "signout" => {
            let mut session_id = 0;
            d.fields(|d, id, t| {
                if (id, t) != (1, TType::I64) {
                    return Ok(false);
                }
                session_id = d.i64()?;
                Ok(true)
            })
            .map(|_| Call::Signout { session_id })
        }
        "execute" | "executeWithParameter" | "executeJson" | "executeJsonWithParameter" => {
            let (mut session_id, mut stmt, mut params) = (0, Vec::new(), BTreeMap::new());
            d.fields(|d, id, t| {
                match (id, t) {
                    (1, TType::I64) => session_id = d.i64()?,
                    (2, TType::String) => stmt = d.bytes()?,
                    (3, TType::Map) => params = decode_props(d)?,
                    _ => return Ok(false),
                }
                Ok(true)
            })
            .map(|_| Call::Execute {
                session_id,
                stmt,
                params,
                json: msg.name.starts_with("executeJson"),
            })
        }
        _ => return Err(CallError::UnknownMethod(msg)),
    };
    match call {
        Ok(call) => Ok((msg, call)),
        Err(e) if e.unsupported => Err(CallError::Unsupported(msg, e.message)),
        Err(e) => Err(CallError::Malformed(e)),
    }
}

/// One operator of a plan, as `PlanNodeDescription`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PlanNodeDescription {
    pub name: String,
    pub id: i64,
    pub output_var: String,
    pub description: Vec<(String, String)>,
    /// `(rows, exec_duration_in_us, total_duration_in_us)` when profiled.
    pub profile: Option<(i64, i64, i64)>,
    pub dependencies: Vec<i64>,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct PlanDescription {
    pub nodes: Vec<PlanNodeDescription>,
    pub format: String,
    pub optimize_time_us: i32,
}

/// A result table as an [`ExecutionResponse`] carries it (NebulaGraph's `DataSet`): the column names and, per
/// column, its values in row order. The protocol sends it row by row; holding it by column lets a server encode
/// the columns its engine produced without building a row first.
///
/// **Invariant:** one value vector per column, all of one length (so a table without columns has no rows).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Table {
    pub columns: Vec<String>,
    pub values: Vec<Vec<Value>>,
}

impl Table {
    pub fn from_rows(columns: Vec<String>, rows: Vec<Vec<Value>>) -> Table {
        let mut values = vec![Vec::with_capacity(rows.len()); columns.len()];
        for row in rows {
            assert_eq!(row.len(), columns.len(), "a row as wide as the columns");
            values.iter_mut().zip(row).for_each(|(c, v)| c.push(v));
        }
        Table { columns, values }
    }

    /// Rows.
    pub fn len(&self) -> usize {
        self.values.first().map_or(0, Vec::len)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every row, copied out.
    pub fn rows(&self) -> Vec<Vec<Value>> {
        (0..self.len()).map(|i| self.values.iter().map(|c| c[i].clone()).collect()).collect()
    }
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct ExecutionResponse {
    pub error_code: i32,
    pub latency_us: i64,
    pub data: Option<Table>,
    pub space_name: Option<String>,
    pub error_msg: Option<String>,
    pub plan: Option<PlanDescription>,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct AuthResponse {
    pub error_code: i32,
    pub error_msg: Option<String>,
    pub session_id: Option<i64>,
    pub time_zone_offset_seconds: Option<i32>,
    pub time_zone_name: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    Execution(ExecutionResponse),
    /// `executeJson`'s return value: the response as JSON text.
    Json(Vec<u8>),
    Auth(AuthResponse),
    Verify {
        error_code: i32,
        error_msg: Option<String>,
    },
}

/// The reply message to `call` (same name, sequence id and compact version).
pub fn encode_reply(call: &Message, reply: &Reply) -> Vec<u8> {
    let msg = Message { kind: MessageKind::Reply, ..call.clone() };
    let mut out = Vec::with_capacity(256);
    let mut e = Encoder::message(&mut out, &msg);
    e.struct_begin("result");
    match reply {
        Reply::Json(bytes) => e.bytes_field(0, bytes),
        Reply::Execution(r) => {
            e.field(0, TType::Struct);
            encode_execution(&mut e, r);
            e.field_end();
        }
        Reply::Auth(a) => {
            e.field(0, TType::Struct);
            e.struct_begin("AuthResponse");
            e.i32_field(1, a.error_code);
            if let Some(m) = &a.error_msg {
                e.bytes_field(2, m.as_bytes());
            }
            if let Some(id) = a.session_id {
                e.i64_field(3, id);
            }
            if let Some(off) = a.time_zone_offset_seconds {
                e.i32_field(4, off);
            }
            if let Some(name) = &a.time_zone_name {
                e.bytes_field(5, name.as_bytes());
            }
            e.struct_end();
            e.field_end();
        }
        Reply::Verify { error_code, error_msg } => {
            e.field(0, TType::Struct);
            e.struct_begin("VerifyClientVersionResp");
            e.i32_field(1, *error_code);
            if let Some(m) = error_msg {
                e.bytes_field(2, m.as_bytes());
            }
            e.struct_end();
            e.field_end();
        }
    }
    e.struct_end();
    drop(e);
    out
}

fn encode_execution(e: &mut Encoder, r: &ExecutionResponse) {
    e.struct_begin("ExecutionResponse");
    e.i32_field(1, r.error_code);
    e.i64_field(2, r.latency_us);
    if let Some(Table { columns, values }) = &r.data {
        e.field(3, TType::Struct);
        e.struct_begin("DataSet");
        e.field(1, TType::List);
        e.list_begin(TType::String, columns.len());
        for c in columns {
            e.bytes(c.as_bytes());
        }
        e.container_end();
        e.field_end();
        e.field(2, TType::List);
        let rows = values.first().map_or(0, Vec::len);
        e.list_begin(TType::Struct, rows);
        for i in 0..rows {
            e.struct_begin("Row");
            e.field(1, TType::List);
            e.list_begin(TType::Struct, values.len());
            for column in values {
                encode_value(e, &column[i]);
            }
            e.container_end();
            e.field_end();
            e.struct_end();
        }
        e.container_end();
        e.field_end();
        e.struct_end();
        e.field_end();
    }
    if let Some(s) = &r.space_name {
        e.bytes_field(4, s.as_bytes());
    }
    if let Some(m) = &r.error_msg {
        e.bytes_field(5, m.as_bytes());
    }
    if let Some(p) = &r.plan {
        e.field(6, TType::Struct);
        encode_plan(e, p);
        e.field_end();
    }
    e.struct_end();
}

fn encode_plan(e: &mut Encoder, p: &PlanDescription) {
    e.struct_begin("PlanDescription");
    e.field(1, TType::List);
    e.list_begin(TType::Struct, p.nodes.len());
    for n in &p.nodes {
        e.struct_begin("PlanNodeDescription");
        e.bytes_field(1, n.name.as_bytes());
        e.i64_field(2, n.id);
        e.bytes_field(3, n.output_var.as_bytes());
        e.field(4, TType::List);
        e.list_begin(TType::Struct, n.description.len());
        for (k, v) in &n.description {
            e.struct_begin("Pair");
            e.bytes_field(1, k.as_bytes());
            e.bytes_field(2, v.as_bytes());
            e.struct_end();
        }
        e.container_end();
        e.field_end();
        if let Some((rows, exec, total)) = n.profile {
            e.field(5, TType::List);
            e.list_begin(TType::Struct, 1);
            e.struct_begin("ProfilingStats");
            e.i64_field(1, rows);
            e.i64_field(2, exec);
            e.i64_field(3, total);
            e.struct_end();
            e.container_end();
            e.field_end();
        }
        e.field(7, TType::List);
        e.list_begin(TType::I64, n.dependencies.len());
        for d in &n.dependencies {
            e.i64(*d);
        }
        e.container_end();
        e.field_end();
        e.struct_end();
    }
    e.container_end();
    e.field_end();
    e.field(2, TType::Map);
    e.map_begin(TType::I64, TType::I64, p.nodes.len());
    for (i, n) in p.nodes.iter().enumerate() {
        e.i64(n.id);
        e.i64(i as i64);
    }
    e.container_end();
    e.field_end();
    e.bytes_field(3, p.format.as_bytes());
    e.i32_field(4, p.optimize_time_us);
    e.struct_end();
}

/// `TApplicationException` types (thrift's numbering).
pub const UNKNOWN_METHOD: i32 = 1;

/// An exception message answering `call`, as thrift servers send for an unknown method.
pub fn encode_exception(call: &Message, kind: i32, text: &str) -> Vec<u8> {
    let msg = Message { kind: MessageKind::Exception, ..call.clone() };
    let mut out = Vec::new();
    let mut e = Encoder::message(&mut out, &msg);
    e.struct_begin("TApplicationException");
    e.bytes_field(1, text.as_bytes());
    e.i32_field(2, kind);
    e.struct_end();
    drop(e);
    out
}

/// Encodes a call (what a client sends): for tests and tools that talk to a server.
pub fn encode_call(seq_id: i32, call: &Call) -> Vec<u8> {
    let (name, kind) = match call {
        Call::VerifyClientVersion { .. } => ("verifyClientVersion", MessageKind::Call),
        Call::Authenticate { .. } => ("authenticate", MessageKind::Call),
        Call::Signout { .. } => ("signout", MessageKind::Oneway),
        Call::Execute { json: false, .. } => ("executeWithParameter", MessageKind::Call),
        Call::Execute { json: true, .. } => ("executeJsonWithParameter", MessageKind::Call),
    };
    let msg = Message { name: name.into(), kind, seq_id, version: crate::compact::VERSION_DOUBLE_BE };
    let mut out = Vec::new();
    let mut e = Encoder::message(&mut out, &msg);
    e.struct_begin("args");
    match call {
        Call::VerifyClientVersion { version } => {
            e.field(1, TType::Struct);
            e.struct_begin("VerifyClientVersionReq");
            e.bytes_field(1, version.as_bytes());
            e.struct_end();
            e.field_end();
        }
        Call::Authenticate { username, password } => {
            e.bytes_field(1, username.as_bytes());
            e.bytes_field(2, password.as_bytes());
        }
        Call::Signout { session_id } => e.i64_field(1, *session_id),
        Call::Execute { session_id, stmt, params, .. } => {
            e.i64_field(1, *session_id);
            e.bytes_field(2, stmt);
            e.field(3, TType::Map);
            e.map_begin(TType::String, TType::Struct, params.len());
            for (k, v) in params {
                e.bytes(k.as_bytes());
                encode_value(&mut e, v);
            }
            e.container_end();
            e.field_end();
        }
    }
    e.struct_end();
    drop(e);
    out
}

/// A reply as a client reads it: the reply, or the server's `TApplicationException` `(type, message)`.
pub type ClientReply = Result<Reply, (i32, String)>;

/// Decodes a reply (what a client receives); its message name says which method it answers.
pub fn decode_reply(payload: &[u8]) -> DResult<(Message, ClientReply)> {
    let (msg, offset) = decode_message(payload)?;
    let mut d = Decoder::new(&payload[offset..], msg.version);
    if msg.kind == MessageKind::Exception {
        let (mut kind, mut text) = (0, String::new());
        d.fields(|d, id, t| {
            match (id, t) {
                (1, TType::String) => text = d.string()?,
                (2, TType::I32) => kind = d.i32()?,
                _ => return Ok(false),
            }
            Ok(true)
        })?;
        return Ok((msg, Err((kind, text))));
    }
    if msg.kind != MessageKind::Reply {
        return Err(DecodeError::new(format!("a server sent a message of kind {:?}", msg.kind)));
    }
    let mut reply = None;
    let name = msg.name.clone();
    d.fields(|d, id, t| {
        if id != 0 {
            return Ok(false);
        }
        reply = Some(match (name.as_str(), t) {
            ("executeJson" | "executeJsonWithParameter", TType::String) => Reply::Json(d.bytes()?),
            ("execute" | "executeWithParameter", TType::Struct) => Reply::Execution(decode_execution(d)?),
            ("authenticate", TType::Struct) => {
                let mut a = AuthResponse::default();
                d.fields(|d, id, t| {
                    match (id, t) {
                        (1, TType::I32) => a.error_code = d.i32()?,
                        (2, TType::String) => a.error_msg = Some(d.string()?),
                        (3, TType::I64) => a.session_id = Some(d.i64()?),
                        (4, TType::I32) => a.time_zone_offset_seconds = Some(d.i32()?),
                        (5, TType::String) => a.time_zone_name = Some(d.string()?),
                        _ => return Ok(false),
                    }
                    Ok(true)
                })?;
                Reply::Auth(a)
            }
            ("verifyClientVersion", TType::Struct) => {
                let (mut error_code, mut error_msg) = (0, None);
                d.fields(|d, id, t| {
                    match (id, t) {
                        (1, TType::I32) => error_code = d.i32()?,
                        (2, TType::String) => error_msg = Some(d.string()?),
                        _ => return Ok(false),
                    }
                    Ok(true)
                })?;
                Reply::Verify { error_code, error_msg }
            }
            (m, t) => return Err(DecodeError::new(format!("unexpected result of type {t:?} for `{m}'"))),
        });
        Ok(true)
    })?;
    let reply = reply.ok_or_else(|| DecodeError::new(format!("the reply to `{}' has no result", msg.name)))?;
    Ok((msg, Ok(reply)))
}

fn decode_execution(d: &mut Decoder) -> DResult<ExecutionResponse> {
    let mut r = ExecutionResponse::default();
    d.fields(|d, id, t| {
        match (id, t) {
            (1, TType::I32) => r.error_code = d.i32()?,
            (2, TType::I64) => r.latency_us = d.i64()?,
            (3, TType::Struct) => {
                let (mut columns, mut values) = (Vec::new(), Vec::<Vec<Value>>::new());
                d.fields(|d, id, t| {
                    match (id, t) {
                        (1, TType::List) => {
                            let (_, n) = d.list_begin()?;
                            for _ in 0..n {
                                columns.push(d.string()?);
                            }
                            d.container_end();
                        }
                        (2, TType::List) => {
                            let (_, n) = d.list_begin()?;
                            // Not sized by the row count: rows times columns is no bound on what the frame holds.
                            values = vec![Vec::new(); columns.len()];
                            for _ in 0..n {
                                let mut width = 0;
                                d.fields(|d, id, t| {
                                    if (id, t) != (1, TType::List) {
                                        return Ok(false);
                                    }
                                    let (_, n) = d.list_begin()?;
                                    for _ in 0..n {
                                        let v = crate::value::decode_value(d)?;
                                        let column = values.get_mut(width).ok_or_else(|| {
                                            DecodeError::new("a row has more values than the data set has columns")
                                        })?;
                                        column.push(v);
                                        width += 1;
                                    }
                                    d.container_end();
                                    Ok(true)
                                })?;
                                if width != values.len() {
                                    return Err(DecodeError::new(
                                        "a row has fewer values than the data set has columns",
                                    ));
                                }
                            }
                            d.container_end();
                        }
                        _ => return Ok(false),
                    }
                    Ok(true)
                })?;
                if values.len() != columns.len() {
                    values = vec![Vec::new(); columns.len()];
                }
                r.data = Some(Table { columns, values });
            }
            (4, TType::String) => r.space_name = Some(d.string()?),
            (5, TType::String) => r.error_msg = Some(d.string()?),
            (6, TType::Struct) => r.plan = Some(decode_plan(d)?),
            _ => return Ok(false),
        }
        Ok(true)
    })?;
    Ok(r)
}

fn decode_plan(d: &mut Decoder) -> DResult<PlanDescription> {
    let mut p = PlanDescription::default();
    d.fields(|d, id, t| {
        match (id, t) {
            (1, TType::List) => {
                let (_, n) = d.list_begin()?;
                for _ in 0..n {
                    let mut node = PlanNodeDescription::default();
                    d.fields(|d, id, t| {
                        match (id, t) {
                            (1, TType::String) => node.name = d.string()?,
                            (2, TType::I64) => node.id = d.i64()?,
                            (3, TType::String) => node.output_var = d.string()?,
                            (4, TType::List) => {
                                let (_, n) = d.list_begin()?;
                                for _ in 0..n {
                                    let (mut k, mut v) = (String::new(), String::new());
                                    d.fields(|d, id, t| {
                                        match (id, t) {
                                            (1, TType::String) => k = d.string()?,
                                            (2, TType::String) => v = d.string()?,
                                            _ => return Ok(false),
                                        }
                                        Ok(true)
                                    })?;
                                    node.description.push((k, v));
                                }
                                d.container_end();
                            }
                            (5, TType::List) => {
                                let (_, n) = d.list_begin()?;
                                for _ in 0..n {
                                    let mut stats = (0, 0, 0);
                                    d.fields(|d, id, t| {
                                        match (id, t) {
                                            (1, TType::I64) => stats.0 = d.i64()?,
                                            (2, TType::I64) => stats.1 = d.i64()?,
                                            (3, TType::I64) => stats.2 = d.i64()?,
                                            _ => return Ok(false),
                                        }
                                        Ok(true)
                                    })?;
                                    node.profile = Some(stats);
                                }
                                d.container_end();
                            }
                            (7, TType::List) => {
                                let (_, n) = d.list_begin()?;
                                for _ in 0..n {
                                    node.dependencies.push(d.i64()?);
                                }
                                d.container_end();
                            }
                            _ => return Ok(false),
                        }
                        Ok(true)
                    })?;
                    p.nodes.push(node);
                }
                d.container_end();
            }
            (3, TType::String) => p.format = d.string()?,
            (4, TType::I32) => p.optimize_time_us = d.i32()?,
            _ => return Ok(false),
        }
        Ok(true)
    })?;
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_round_trip() {
        let params: BTreeMap<String, Value> =
            [("p".to_string(), Value::List(vec![Value::Int(1), Value::Float(2.5)]))].into();
        for call in [
            Call::VerifyClientVersion { version: "3.0.0".into() },
            Call::Authenticate { username: "root".into(), password: "nebula".into() },
            Call::Signout { session_id: 42 },
            Call::Execute { session_id: -7, stmt: b"YIELD $p".to_vec(), params, json: true },
        ] {
            let bytes = encode_call(9, &call);
            let (msg, back) = decode_call(&bytes).unwrap();
            assert_eq!(msg.seq_id, 9);
            assert_eq!(back, call);
        }
    }

    #[test]
    fn replies_round_trip() {
        let plan = PlanDescription {
            nodes: vec![PlanNodeDescription {
                name: "Go".into(),
                id: 3,
                output_var: "__Go_3".into(),
                description: vec![("over".into(), "like".into())],
                profile: Some((2, 10, 12)),
                dependencies: vec![1],
            }],
            format: "row".into(),
            optimize_time_us: 5,
        };
        let exec = ExecutionResponse {
            error_code: 0,
            latency_us: 99,
            data: Some(Table::from_rows(
                vec!["a".into(), "b".into()],
                vec![vec![Value::Int(1), Value::Float(0.5)], vec![Value::NULL, Value::Empty]],
            )),
            space_name: Some("nba".into()),
            error_msg: None,
            plan: Some(plan),
        };
        for (method, reply) in [
            ("executeWithParameter", Reply::Execution(exec)),
            (
                "execute",
                Reply::Execution(ExecutionResponse {
                    error_code: -1004,
                    error_msg: Some("SyntaxError: x".into()),
                    ..Default::default()
                }),
            ),
            ("executeJson", Reply::Json(b"{}".to_vec())),
            (
                "authenticate",
                Reply::Auth(AuthResponse {
                    error_code: 0,
                    session_id: Some(5),
                    time_zone_offset_seconds: Some(0),
                    time_zone_name: Some("UTC".into()),
                    error_msg: None,
                }),
            ),
            (
                "verifyClientVersion",
                Reply::Verify { error_code: E_CLIENT_SERVER_INCOMPATIBLE, error_msg: Some("no".into()) },
            ),
        ] {
            let call = Message { name: method.into(), kind: MessageKind::Call, seq_id: 4, version: 2 };
            let (msg, back) = decode_reply(&encode_reply(&call, &reply)).unwrap();
            assert_eq!((msg.name.as_str(), msg.seq_id, msg.kind), (method, 4, MessageKind::Reply));
            assert_eq!(format!("{:?}", back.unwrap()), format!("{reply:?}"));
        }
        let call = Message { name: "nope".into(), kind: MessageKind::Call, seq_id: 8, version: 2 };
        let (_, back) = decode_reply(&encode_exception(&call, UNKNOWN_METHOD, "Method name nope not found")).unwrap();
        assert_eq!(back, Err((UNKNOWN_METHOD, "Method name nope not found".to_string())));
    }

    #[test]
    fn a_table_is_sent_row_by_row_and_rows_must_match_the_columns() {
        let call = Message { name: "execute".into(), kind: MessageKind::Call, seq_id: 1, version: 2 };
        let table = Table::from_rows(
            vec!["a".into(), "b".into()],
            vec![vec![Value::Int(1), Value::str("x")], vec![Value::Int(2), Value::NULL]],
        );
        assert_eq!(table.len(), 2);
        assert_eq!(table.values[1], vec![Value::str("x"), Value::NULL]);
        let reply = |data| Reply::Execution(ExecutionResponse { data: Some(data), ..Default::default() });
        let (_, back) = decode_reply(&encode_reply(&call, &reply(table.clone()))).unwrap();
        let Ok(Reply::Execution(back)) = back else { panic!("an execution reply") };
        assert_eq!(back.data.as_ref().map(Table::rows), Some(table.rows()));
        // An empty table keeps its columns.
        let empty = Table { columns: vec!["a".into()], values: vec![Vec::new()] };
        let (_, back) = decode_reply(&encode_reply(&call, &reply(empty.clone()))).unwrap();
        assert!(matches!(back, Ok(Reply::Execution(r)) if r.data == Some(empty)));
        // Rows narrower or wider than the column names are refused, not misread.
        for (columns, values, want) in [
            (vec!["a", "b"], vec![vec![Value::Int(1)]], "fewer values"),
            (vec!["a"], vec![vec![Value::Int(1)], vec![Value::Int(2)]], "more values"),
        ] {
            let bad = Table { columns: columns.into_iter().map(String::from).collect(), values };
            let err = decode_reply(&encode_reply(&call, &reply(bad))).unwrap_err();
            assert!(err.to_string().contains(want), "{err}");
        }
    }

    #[test]
    fn unknown_methods_and_garbage_are_told_apart() {
        let mut bytes = encode_call(3, &Call::Signout { session_id: 1 });
        // Rename "signout" to "signoff" in place.
        let at = bytes.windows(7).position(|w| w == b"signout").unwrap();
        bytes[at..at + 7].copy_from_slice(b"signoff");
        assert!(
            matches!(decode_call(&bytes), Err(CallError::UnknownMethod(m)) if m.name == "signoff" && m.seq_id == 3)
        );
        assert!(matches!(decode_call(b"\x82\x21"), Err(CallError::Malformed(_))));
        assert!(matches!(decode_call(b"hello"), Err(CallError::Malformed(_))));
        // A truncated execute call.
        let bytes = encode_call(
            1,
            &Call::Execute { session_id: 1, stmt: b"YIELD 1".to_vec(), params: BTreeMap::new(), json: false },
        );
        for cut in 0..bytes.len() {
            assert!(decode_call(&bytes[..cut]).is_err(), "cut at {cut}");
        }
    }
}
