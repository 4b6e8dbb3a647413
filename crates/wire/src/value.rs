//! Quiver's [`Value`] as NebulaGraph's `Value` union (common.thrift) and back.
//!
//! Field ids of the union: 1 nVal (NullType), 2 bVal, 3 iVal, 4 fVal, 5 sVal, 6 dVal (Date), 7 tVal (Time),
//! 8 dtVal (DateTime), 9 vVal (Vertex), 10 eVal (Edge), 11 pVal (Path), 12 lVal (NList), 13 mVal (NMap),
//! 14 uVal (NSet), 15 gVal (DataSet), 16 ggVal (Geography), 17 duVal (Duration). EMPTY is the union with no field.

use crate::compact::{DResult, DecodeError, Decoder, Encoder};
use quiver_common::datetime::{Date, DateTime, Duration, Time};
use quiver_common::geo::{Coord, Geography};
use quiver_common::value::{Edge, NullKind, Path, SmolStr, Step, Tag, Vertex};
use quiver_common::Value;
use std::collections::BTreeMap;
use std::sync::Arc;
use thrift::protocol::TType;

fn null_code(k: NullKind) -> i32 {
    match k {
        NullKind::Null => 0,
        NullKind::NaN => 1,
        NullKind::BadData => 2,
        NullKind::BadType => 3,
        NullKind::Overflow => 4,
        NullKind::UnknownProp => 5,
        NullKind::DivByZero => 6,
        NullKind::OutOfRange => 7,
    }
}

fn null_kind(code: i32) -> DResult<NullKind> {
    Ok(match code {
        0 => NullKind::Null,
        1 => NullKind::NaN,
        2 => NullKind::BadData,
        3 => NullKind::BadType,
        4 => NullKind::Overflow,
        5 => NullKind::UnknownProp,
        6 => NullKind::DivByZero,
        7 => NullKind::OutOfRange,
        c => return Err(DecodeError::new(format!("unknown NullType {c}"))),
    })
}

pub fn encode_value(e: &mut Encoder, v: &Value) {
    e.struct_begin("Value");
    match v {
        Value::Empty => {}
        Value::Null(k) => e.i32_field(1, null_code(*k)),
        Value::Bool(b) => {
            e.field(2, TType::Bool);
            e.bool(*b);
            e.field_end();
        }
        Value::Int(i) => e.i64_field(3, *i),
        Value::Float(f) => {
            e.field(4, TType::Double);
            e.double(*f);
            e.field_end();
        }
        Value::String(s) => e.bytes_field(5, s.as_bytes()),
        Value::Date(d) => {
            e.field(6, TType::Struct);
            encode_date(e, d);
            e.field_end();
        }
        Value::Time(t) => {
            e.field(7, TType::Struct);
            e.struct_begin("Time");
            encode_time_fields(e, t, 1);
            e.struct_end();
            e.field_end();
        }
        Value::DateTime(dt) => {
            e.field(8, TType::Struct);
            e.struct_begin("DateTime");
            encode_date_fields(e, &dt.date);
            encode_time_fields(e, &dt.time, 4);
            e.struct_end();
            e.field_end();
        }
        Value::Vertex(vx) => {
            e.field(9, TType::Struct);
            encode_vertex(e, vx);
            e.field_end();
        }
        Value::Edge(ed) => {
            e.field(10, TType::Struct);
            encode_edge(e, ed);
            e.field_end();
        }
        Value::Path(p) => {
            e.field(11, TType::Struct);
            encode_path(e, p);
            e.field_end();
        }
        Value::List(items) => {
            e.field(12, TType::Struct);
            e.struct_begin("NList");
            encode_value_list(e, 1, items);
            e.struct_end();
            e.field_end();
        }
        Value::Map(m) => {
            e.field(13, TType::Struct);
            e.struct_begin("NMap");
            e.field(1, TType::Map);
            encode_props(e, m);
            e.field_end();
            e.struct_end();
            e.field_end();
        }
        Value::Set(items) => {
            e.field(14, TType::Struct);
            e.struct_begin("NSet");
            e.field(1, TType::Set);
            e.set_begin(TType::Struct, items.len());
            for item in items {
                encode_value(e, item);
            }
            e.container_end();
            e.field_end();
            e.struct_end();
            e.field_end();
        }
        Value::Geography(g) => {
            e.field(16, TType::Struct);
            encode_geography(e, g);
            e.field_end();
        }
        Value::Duration(d) => {
            e.field(17, TType::Struct);
            e.struct_begin("Duration");
            e.i64_field(1, d.seconds);
            e.i32_field(2, d.microseconds);
            e.i32_field(3, d.months);
            e.struct_end();
            e.field_end();
        }
    }
    e.struct_end();
}

/// `Geography` union: 1 ptVal (Point{1: Coordinate coord}), 2 lsVal (LineString{1: list<Coordinate>}), 3 pgVal
/// (Polygon{1: list<list<Coordinate>>}); a Coordinate is {1: double x, 2: double y}.
fn encode_geography(e: &mut Encoder, g: &Geography) {
    fn coord(e: &mut Encoder, c: &Coord) {
        e.struct_begin("Coordinate");
        e.field(1, TType::Double);
        e.double(c.x);
        e.field_end();
        e.field(2, TType::Double);
        e.double(c.y);
        e.field_end();
        e.struct_end();
    }
    fn coords(e: &mut Encoder, cs: &[Coord]) {
        e.list_begin(TType::Struct, cs.len());
        cs.iter().for_each(|c| coord(e, c));
        e.container_end();
    }
    e.struct_begin("Geography");
    match g {
        Geography::Point(c) => {
            e.field(1, TType::Struct);
            e.struct_begin("Point");
            e.field(1, TType::Struct);
            coord(e, c);
        }
        Geography::LineString(cs) => {
            e.field(2, TType::Struct);
            e.struct_begin("LineString");
            e.field(1, TType::List);
            coords(e, cs);
        }
        Geography::Polygon(rings) => {
            e.field(3, TType::Struct);
            e.struct_begin("Polygon");
            e.field(1, TType::List);
            e.list_begin(TType::List, rings.len());
            rings.iter().for_each(|r| coords(e, r));
            e.container_end();
        }
    }
    e.field_end();
    e.struct_end();
    e.field_end();
    e.struct_end();
}

fn decode_coord(d: &mut Decoder) -> DResult<Coord> {
    let mut c = Coord::new(0.0, 0.0);
    d.fields(|d, id, t| {
        match (id, t) {
            (1, TType::Double) => c.x = d.double()?,
            (2, TType::Double) => c.y = d.double()?,
            _ => return Ok(false),
        }
        Ok(true)
    })?;
    Ok(c)
}

fn decode_coords(d: &mut Decoder) -> DResult<Vec<Coord>> {
    let (t, n) = d.list_begin()?;
    d.expect(t, TType::Struct, "a Coordinate")?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        out.push(decode_coord(d)?);
    }
    d.container_end();
    Ok(out)
}

fn decode_geography(d: &mut Decoder) -> DResult<Geography> {
    let mut g = None;
    d.fields(|d, id, t| {
        d.expect(t, TType::Struct, "a Geography member")?;
        let mut shape = None;
        d.fields(|d, inner, t| {
            shape = Some(match (id, inner) {
                (1, 1) => {
                    d.expect(t, TType::Struct, "Point.coord")?;
                    Geography::Point(decode_coord(d)?)
                }
                (2, 1) => {
                    d.expect(t, TType::List, "LineString.coordList")?;
                    Geography::LineString(decode_coords(d)?)
                }
                (3, 1) => {
                    d.expect(t, TType::List, "Polygon.coordListList")?;
                    let (t, n) = d.list_begin()?;
                    d.expect(t, TType::List, "a ring")?;
                    let mut rings = Vec::with_capacity(n);
                    for _ in 0..n {
                        rings.push(decode_coords(d)?);
                    }
                    d.container_end();
                    Geography::Polygon(rings)
                }
                _ => return Ok(false),
            });
            Ok(true)
        })?;
        g = shape;
        Ok(true)
    })?;
    g.ok_or_else(|| DecodeError::new("a Geography union with no member set"))
}

/// A `list<Value>` field.
pub fn encode_value_list(e: &mut Encoder, id: i16, items: &[Value]) {
    e.field(id, TType::List);
    e.list_begin(TType::Struct, items.len());
    for item in items {
        encode_value(e, item);
    }
    e.container_end();
    e.field_end();
}

fn encode_date_fields(e: &mut Encoder, d: &Date) {
    e.field(1, TType::I16);
    e.i16(d.year);
    e.field_end();
    e.field(2, TType::I08);
    e.i8(d.month as i8);
    e.field_end();
    e.field(3, TType::I08);
    e.i8(d.day as i8);
    e.field_end();
}

fn encode_date(e: &mut Encoder, d: &Date) {
    e.struct_begin("Date");
    encode_date_fields(e, d);
    e.struct_end();
}

fn encode_time_fields(e: &mut Encoder, t: &Time, first: i16) {
    for (i, b) in [t.hour, t.minute, t.sec].into_iter().enumerate() {
        e.field(first + i as i16, TType::I08);
        e.i8(b as i8);
        e.field_end();
    }
    e.i32_field(first + 3, t.microsec as i32);
}

/// A `map<binary, Value>` (the field header is the caller's).
fn encode_props(e: &mut Encoder, props: &BTreeMap<String, Value>) {
    e.map_begin(TType::String, TType::Struct, props.len());
    for (k, v) in props {
        e.bytes(k.as_bytes());
        encode_value(e, v);
    }
    e.container_end();
}

fn encode_vertex(e: &mut Encoder, v: &Vertex) {
    e.struct_begin("Vertex");
    e.field(1, TType::Struct);
    encode_value(e, &v.vid);
    e.field_end();
    e.field(2, TType::List);
    e.list_begin(TType::Struct, v.tags.len());
    for tag in &v.tags {
        e.struct_begin("Tag");
        e.bytes_field(1, tag.name.as_bytes());
        e.field(2, TType::Map);
        encode_props(e, &tag.props);
        e.field_end();
        e.struct_end();
    }
    e.container_end();
    e.field_end();
    e.struct_end();
}

fn encode_edge(e: &mut Encoder, ed: &Edge) {
    e.struct_begin("Edge");
    e.field(1, TType::Struct);
    encode_value(e, &ed.src);
    e.field_end();
    e.field(2, TType::Struct);
    encode_value(e, &ed.dst);
    e.field_end();
    e.i32_field(3, ed.edge_type);
    e.bytes_field(4, ed.name.as_bytes());
    e.i64_field(5, ed.ranking);
    e.field(6, TType::Map);
    encode_props(e, &ed.props);
    e.field_end();
    e.struct_end();
}

/// `Path { 1: Vertex src, 2: list<Step> steps }` with `Step { 1: Vertex dst, 2: EdgeType type (i32, signed as
/// walked), 3: binary name, 4: EdgeRanking ranking (i64), 5: map<binary, Value> props }` (common.thrift).
fn encode_path(e: &mut Encoder, p: &Path) {
    e.struct_begin("Path");
    e.field(1, TType::Struct);
    encode_vertex(e, &p.src);
    e.field_end();
    e.field(2, TType::List);
    e.list_begin(TType::Struct, p.steps.len());
    for s in &p.steps {
        e.struct_begin("Step");
        e.field(1, TType::Struct);
        encode_vertex(e, &s.dst);
        e.field_end();
        e.i32_field(2, s.edge_type);
        e.bytes_field(3, s.name.as_bytes());
        e.i64_field(4, s.ranking);
        e.field(5, TType::Map);
        encode_props(e, &s.props);
        e.field_end();
        e.struct_end();
    }
    e.container_end();
    e.field_end();
    e.struct_end();
}

/// Reads one `Value` union (a parameter, or a value in a reply the test client reads). Data sets are refused:
/// Quiver has no such values.
pub fn decode_value(d: &mut Decoder) -> DResult<Value> {
    d.struct_begin()?;
    let mut value = Value::Empty;
    while let Some((id, t)) = d.field()? {
        let v = match (id, t) {
            (1, TType::I32) => Value::Null(null_kind(d.i32()?)?),
            (2, TType::Bool) => Value::Bool(d.bool()?),
            (3, TType::I64) => Value::Int(d.i64()?),
            (4, TType::Double) => Value::Float(d.double()?),
            (5, TType::String) => Value::str(d.string()?),
            (6, TType::Struct) => Value::Date(decode_date(d)?),
            (7, TType::Struct) => Value::Time(decode_time(d)?),
            (8, TType::Struct) => Value::DateTime(decode_datetime(d)?),
            (9, TType::Struct) => Value::Vertex(Arc::new(decode_vertex(d)?)),
            (10, TType::Struct) => Value::Edge(Arc::new(decode_edge(d)?)),
            (11, TType::Struct) => Value::Path(Arc::new(decode_path(d)?)),
            (12, TType::Struct) => Value::List(decode_wrapped_list(d, false)?),
            (13, TType::Struct) => Value::Map(decode_wrapped_map(d)?),
            (14, TType::Struct) => Value::set_from(decode_wrapped_list(d, true)?),
            (17, TType::Struct) => Value::Duration(decode_duration(d)?),
            (15, _) => return Err(DecodeError::new("data set values are not supported as parameters")),
            (16, TType::Struct) => Value::Geography(Arc::new(decode_geography(d)?)),
            (id, t) => {
                return Err(DecodeError::new(format!("Value field {id} of type {t:?} is not part of the union")))
            }
        };
        d.field_end()?;
        if !value.is_empty() {
            return Err(DecodeError::new("a Value union with more than one field set"));
        }
        value = v;
    }
    d.struct_end()?;
    Ok(value)
}

fn small(d: &mut Decoder, t: TType, what: &str) -> DResult<u8> {
    d.expect(t, TType::I08, what)?;
    let v = d.i8()?;
    u8::try_from(v).map_err(|_| DecodeError::new(format!("{what} {v} is negative")))
}

fn decode_date(d: &mut Decoder) -> DResult<Date> {
    let mut date = Date { year: 1970, month: 1, day: 1 };
    d.fields(|d, id, t| {
        match id {
            1 => {
                d.expect(t, TType::I16, "Date.year")?;
                date.year = d.i16()?;
            }
            2 => date.month = small(d, t, "Date.month")?,
            3 => date.day = small(d, t, "Date.day")?,
            _ => return Ok(false),
        }
        Ok(true)
    })?;
    Ok(date)
}

fn decode_time(d: &mut Decoder) -> DResult<Time> {
    let mut time = Time { hour: 0, minute: 0, sec: 0, microsec: 0 };
    d.fields(|d, id, t| time_field(d, &mut time, id, t, 1))?;
    Ok(time)
}

fn time_field(d: &mut Decoder, time: &mut Time, id: i16, t: TType, first: i16) -> DResult<bool> {
    match id - first {
        0 => time.hour = small(d, t, "hour")?,
        1 => time.minute = small(d, t, "minute")?,
        2 => time.sec = small(d, t, "sec")?,
        3 => {
            d.expect(t, TType::I32, "microsec")?;
            let v = d.i32()?;
            time.microsec = u32::try_from(v).map_err(|_| DecodeError::new(format!("microsec {v} is negative")))?;
        }
        _ => return Ok(false),
    }
    Ok(true)
}

fn decode_datetime(d: &mut Decoder) -> DResult<DateTime> {
    let mut dt = DateTime {
        date: Date { year: 1970, month: 1, day: 1 },
        time: Time { hour: 0, minute: 0, sec: 0, microsec: 0 },
    };
    d.fields(|d, id, t| {
        match id {
            1 => {
                d.expect(t, TType::I16, "DateTime.year")?;
                dt.date.year = d.i16()?;
            }
            2 => dt.date.month = small(d, t, "DateTime.month")?,
            3 => dt.date.day = small(d, t, "DateTime.day")?,
            _ => return time_field(d, &mut dt.time, id, t, 4),
        }
        Ok(true)
    })?;
    Ok(dt)
}

fn decode_duration(d: &mut Decoder) -> DResult<Duration> {
    let mut dur = Duration { months: 0, seconds: 0, microseconds: 0 };
    d.fields(|d, id, t| {
        match (id, t) {
            (1, TType::I64) => dur.seconds = d.i64()?,
            (2, TType::I32) => dur.microseconds = d.i32()?,
            (3, TType::I32) => dur.months = d.i32()?,
            _ => return Ok(false),
        }
        Ok(true)
    })?;
    Ok(dur)
}

/// `list<Value>` (or `set<Value>` when `set`) as the caller's current field.
fn decode_value_list(d: &mut Decoder, set: bool) -> DResult<Vec<Value>> {
    let (t, n) = if set { d.set_begin()? } else { d.list_begin()? };
    d.expect(t, TType::Struct, "a list element")?;
    let mut items = Vec::with_capacity(n);
    for _ in 0..n {
        items.push(decode_value(d)?);
    }
    d.container_end();
    Ok(items)
}

/// NList / NSet: a struct whose field 1 is the list or set.
fn decode_wrapped_list(d: &mut Decoder, set: bool) -> DResult<Vec<Value>> {
    let mut items = Vec::new();
    d.fields(|d, id, t| {
        if id != 1 || t != if set { TType::Set } else { TType::List } {
            return Ok(false);
        }
        items = decode_value_list(d, set)?;
        Ok(true)
    })?;
    Ok(items)
}

/// `map<binary, Value>` as the caller's current field.
pub fn decode_props(d: &mut Decoder) -> DResult<BTreeMap<String, Value>> {
    let (k, v, n) = d.map_begin()?;
    let mut map = BTreeMap::new();
    if n > 0 {
        if k != Some(TType::String) || v != Some(TType::Struct) {
            return Err(DecodeError::new(format!("a map<binary, Value> with key and value types {k:?}, {v:?}")));
        }
        for _ in 0..n {
            let key = d.string()?;
            map.insert(key, decode_value(d)?);
        }
    }
    d.container_end();
    Ok(map)
}

fn decode_wrapped_map(d: &mut Decoder) -> DResult<BTreeMap<String, Value>> {
    let mut map = BTreeMap::new();
    d.fields(|d, id, t| {
        if (id, t) != (1, TType::Map) {
            return Ok(false);
        }
        map = decode_props(d)?;
        Ok(true)
    })?;
    Ok(map)
}

fn decode_vertex(d: &mut Decoder) -> DResult<Vertex> {
    let mut vertex = Vertex { vid: Value::Empty, tags: Vec::new() };
    d.fields(|d, id, t| {
        match (id, t) {
            (1, TType::Struct) => vertex.vid = decode_value(d)?,
            (2, TType::List) => {
                let (et, n) = d.list_begin()?;
                d.expect(et, TType::Struct, "a vertex tag")?;
                for _ in 0..n {
                    let mut tag = Tag { name: String::new(), props: BTreeMap::new() };
                    d.fields(|d, id, t| {
                        match (id, t) {
                            (1, TType::String) => tag.name = d.string()?,
                            (2, TType::Map) => tag.props = decode_props(d)?,
                            _ => return Ok(false),
                        }
                        Ok(true)
                    })?;
                    vertex.tags.push(tag);
                }
                d.container_end();
                vertex.tags.sort_by(|a, b| a.name.cmp(&b.name));
            }
            _ => return Ok(false),
        }
        Ok(true)
    })?;
    Ok(vertex)
}

fn decode_edge(d: &mut Decoder) -> DResult<Edge> {
    let mut edge = Edge {
        src: Value::Empty,
        dst: Value::Empty,
        edge_type: 0,
        name: SmolStr::default(),
        ranking: 0,
        props: BTreeMap::new(),
    };
    d.fields(|d, id, t| {
        match (id, t) {
            (1, TType::Struct) => edge.src = decode_value(d)?,
            (2, TType::Struct) => edge.dst = decode_value(d)?,
            (3, TType::I32) => edge.edge_type = d.i32()?,
            (4, TType::String) => edge.name = d.string()?.into(),
            (5, TType::I64) => edge.ranking = d.i64()?,
            (6, TType::Map) => edge.props = decode_props(d)?,
            _ => return Ok(false),
        }
        Ok(true)
    })?;
    Ok(edge)
}

fn decode_path(d: &mut Decoder) -> DResult<Path> {
    let mut path = Path { src: Vertex { vid: Value::Empty, tags: Vec::new() }, steps: Vec::new() };
    d.fields(|d, id, t| {
        match (id, t) {
            (1, TType::Struct) => path.src = decode_vertex(d)?,
            (2, TType::List) => {
                let (et, n) = d.list_begin()?;
                d.expect(et, TType::Struct, "a path step")?;
                path.steps.reserve(n);
                for _ in 0..n {
                    path.steps.push(decode_step(d)?);
                }
                d.container_end();
            }
            _ => return Ok(false),
        }
        Ok(true)
    })?;
    Ok(path)
}

fn decode_step(d: &mut Decoder) -> DResult<Step> {
    let mut step = Step {
        dst: Vertex { vid: Value::Empty, tags: Vec::new() },
        edge_type: 0,
        name: SmolStr::default(),
        ranking: 0,
        props: BTreeMap::new(),
    };
    d.fields(|d, id, t| {
        match (id, t) {
            (1, TType::Struct) => step.dst = decode_vertex(d)?,
            (2, TType::I32) => step.edge_type = d.i32()?,
            (3, TType::String) => step.name = d.string()?.into(),
            (4, TType::I64) => step.ranking = d.i64()?,
            (5, TType::Map) => step.props = decode_props(d)?,
            _ => return Ok(false),
        }
        Ok(true)
    })?;
    Ok(step)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compact::{Message, MessageKind};

    fn round_trip(v: &Value, version: u8) -> Value {
        let msg = Message { name: "t".into(), kind: MessageKind::Reply, seq_id: 1, version };
        let mut out = Vec::new();
        let mut e = Encoder::message(&mut out, &msg);
        encode_value(&mut e, v);
        drop(e);
        let (_, off) = crate::compact::decode_message(&out).unwrap();
        let mut d = Decoder::new(&out[off..], version);
        decode_value(&mut d).unwrap()
    }

    fn sample() -> Vec<Value> {
        let props: BTreeMap<String, Value> =
            [("age".to_string(), Value::Int(42)), ("name".to_string(), Value::str("Tim"))].into();
        vec![
            Value::Empty,
            Value::NULL,
            Value::Null(NullKind::DivByZero),
            Value::Bool(true),
            Value::Bool(false),
            Value::Int(i64::MIN),
            Value::Float(-1.5e300),
            Value::str("naïve"),
            Value::Date(Date { year: -3, month: 12, day: 31 }),
            Value::Time(Time { hour: 23, minute: 59, sec: 58, microsec: 999_999 }),
            Value::DateTime(DateTime {
                date: Date { year: 2024, month: 2, day: 29 },
                time: Time { hour: 1, minute: 2, sec: 3, microsec: 4 },
            }),
            Value::Duration(Duration { months: 14, seconds: -5, microseconds: 7 }),
            Value::Geography(Arc::new(Geography::Point(Coord::new(3.0, -8.5)))),
            Value::Geography(Arc::new(Geography::LineString(vec![Coord::new(0.0, 1.0), Coord::new(2.0, 3.0)]))),
            Value::Geography(Arc::new(Geography::Polygon(vec![
                vec![Coord::new(0.0, 0.0), Coord::new(4.0, 0.0), Coord::new(0.0, 4.0), Coord::new(0.0, 0.0)],
                vec![Coord::new(1.0, 1.0), Coord::new(2.0, 1.0), Coord::new(1.0, 2.0), Coord::new(1.0, 1.0)],
            ]))),
            Value::List(vec![Value::Int(1), Value::List(vec![Value::Empty])]),
            Value::set_from(vec![Value::Int(2), Value::Int(1)]),
            Value::Map(props.clone()),
            Value::Vertex(Arc::new(Vertex {
                vid: Value::str("v"),
                tags: vec![Tag { name: "player".into(), props: props.clone() }],
            })),
            Value::Edge(Arc::new(Edge {
                src: Value::Int(1),
                dst: Value::Int(2),
                edge_type: -3,
                name: "like".into(),
                ranking: 9,
                props: props.clone(),
            })),
            Value::Path(Arc::new(Path {
                src: Vertex { vid: Value::str("a"), tags: vec![Tag { name: "player".into(), props: props.clone() }] },
                steps: vec![
                    Step {
                        dst: Vertex { vid: Value::str("b"), tags: vec![] },
                        edge_type: 3,
                        name: "like".into(),
                        ranking: -1,
                        props: props.clone(),
                    },
                    Step {
                        dst: Vertex {
                            vid: Value::str("c"),
                            tags: vec![Tag { name: "team".into(), props: props.clone() }],
                        },
                        edge_type: -4,
                        name: "serve".into(),
                        ranking: i64::MAX,
                        props: BTreeMap::new(),
                    },
                ],
            })),
            Value::Path(Arc::new(Path { src: Vertex { vid: Value::Int(1), tags: vec![] }, steps: vec![] })),
        ]
    }

    fn encoded(v: &Value) -> Vec<u8> {
        let msg = Message { name: "t".into(), kind: MessageKind::Reply, seq_id: 1, version: 2 };
        let mut out = Vec::new();
        let mut e = Encoder::message(&mut out, &msg);
        encode_value(&mut e, v);
        drop(e);
        let (_, off) = crate::compact::decode_message(&out).unwrap();
        out[off..].to_vec()
    }

    #[test]
    fn a_path_is_laid_out_as_common_thrift_path_and_step() {
        let path = Value::Path(Arc::new(Path {
            src: Vertex { vid: Value::Int(1), tags: vec![] },
            steps: vec![Step {
                dst: Vertex { vid: Value::Int(2), tags: vec![] },
                edge_type: -3,
                name: "e".into(),
                ranking: 0,
                props: BTreeMap::new(),
            }],
        }));
        #[rustfmt::skip]
        let want = [
            0xbc,                         // Value field 11 (pVal), struct
            0x1c,                         //   Path field 1 (src), struct
            0x1c, 0x36, 0x02, 0x00,       //     Vertex field 1 (vid): Value { 3: iVal 1 }
            0x19, 0x0c,                   //     Vertex field 2 (tags): empty list of structs
            0x00,                         //   end of Vertex
            0x19, 0x1c,                   //   Path field 2 (steps): list of 1 struct
            0x1c,                         //     Step field 1 (dst), struct
            0x1c, 0x36, 0x04, 0x00,       //       Vertex field 1 (vid): Value { 3: iVal 2 }
            0x19, 0x0c, 0x00,             //       Vertex field 2 (tags): empty; end of Vertex
            0x15, 0x05,                   //     Step field 2 (type): i32 -3, zigzag
            0x18, 0x01, b'e',             //     Step field 3 (name): binary "e"
            0x16, 0x00,                   //     Step field 4 (ranking): i64 0
            0x1b, 0x00,                   //     Step field 5 (props): empty map
            0x00,                         //   end of Step
            0x00,                         // end of Path
            0x00,                         // end of Value
        ];
        assert_eq!(encoded(&path), want);
        assert_eq!(round_trip(&path, 2), path);
    }

    #[test]
    fn every_value_kind_round_trips_in_both_compact_versions() {
        for version in [1, 2] {
            for v in sample() {
                let back = round_trip(&v, version);
                assert_eq!(format!("{back:?}"), format!("{v:?}"), "version {version}");
            }
        }
    }

    #[test]
    fn doubles_are_big_endian_in_version_2_and_little_endian_in_version_1() {
        for (version, bytes) in [(2u8, 1.5f64.to_be_bytes()), (1, 1.5f64.to_le_bytes())] {
            let msg = Message { name: "t".into(), kind: MessageKind::Reply, seq_id: 1, version };
            let mut out = Vec::new();
            let mut e = Encoder::message(&mut out, &msg);
            encode_value(&mut e, &Value::Float(1.5));
            drop(e);
            assert!(out.windows(8).any(|w| w == bytes), "version {version}: {out:02x?}");
        }
    }

    #[test]
    fn hostile_lengths_and_nesting_are_refused_without_allocating() {
        // Value { 5: sVal } whose length varint claims 4 GiB.
        let data = [0x58, 0xff, 0xff, 0xff, 0xff, 0x0f];
        let err = decode_value(&mut Decoder::new(&data, 2)).unwrap_err();
        assert!(err.message.contains("runs past the frame"), "{err}");
        // Value { 12: NList { 1: list of 2^31-1 structs } }.
        let data = [0xcc, 0x19, 0xfc, 0xff, 0xff, 0xff, 0xff, 0x07];
        let err = decode_value(&mut Decoder::new(&data, 2)).unwrap_err();
        assert!(err.message.contains("runs past the frame"), "{err}");
        // A list nested 100 deep: Value{12: NList{1: [Value{12: ...}]}} repeated.
        let mut data = Vec::new();
        for _ in 0..100 {
            data.extend_from_slice(&[0xcc, 0x19, 0x1c]);
        }
        let err = decode_value(&mut Decoder::new(&data, 2)).unwrap_err();
        assert!(err.message.contains("nested deeper"), "{err}");
    }
}
