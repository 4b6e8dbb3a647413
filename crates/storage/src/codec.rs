//! The row codec: properties of one tag or edge row, with O(1) access to any property.
//!
//! ```text
//! u8  format (= 1)
//! u32 schema version, LE
//! null bitmap: ceil(n / 8) bytes, bit i set = property i is NULL
//! fixed slots, one per property in schema order (sizes below)
//! variable area: string bytes, addressed by (offset, len) from their slot
//! ```
//! Slot sizes: bool/int8 1, int16 2, int32/float/date 4, int64/double/timestamp/time 8, datetime 12,
//! duration 16, string/fixed_string/geography/list/set 8 (u32 offset from the row start, u32 length; a geography's
//! bytes are its little-endian WKB; a list's or set's are a u32 item count, then each item: an i64 or f64, LE, or a
//! string's u32 length and bytes).

use quiver_api::{convert_for_read, Props, SchemaDesc, SchemaVersion};
use quiver_common::datetime::{Date, DateTime, Duration, Time};
use quiver_common::eval::eval_const;
use quiver_common::{PropType, QError, QResult, Value};

const FORMAT: u8 = 1;

fn slot_size(ty: PropType) -> usize {
    match ty {
        PropType::Bool | PropType::Int8 => 1,
        PropType::Int16 => 2,
        PropType::Int32 | PropType::Float | PropType::Date => 4,
        PropType::Int64 | PropType::Double | PropType::Timestamp | PropType::Time => 8,
        PropType::DateTime => 12,
        PropType::Duration => 16,
        PropType::String | PropType::FixedString(_) | PropType::Geography(_) | PropType::List(_) | PropType::Set(_) => {
            8
        }
    }
}

/// Encodes `values` (already coerced to the schema's types) with schema version `schema`.
pub fn encode(schema: &SchemaVersion, values: &[Value]) -> Vec<u8> {
    assert_eq!(schema.props.len(), values.len(), "row width must match its schema");
    let n = values.len();
    let bitmap = n.div_ceil(8);
    let fixed: usize = schema.props.iter().map(|p| slot_size(p.ty)).sum();
    let head = 5 + bitmap;
    let mut out = vec![0u8; head + fixed];
    out[0] = FORMAT;
    out[1..5].copy_from_slice(&schema.version.to_le_bytes());
    let mut slot = head;
    for (i, (p, v)) in schema.props.iter().zip(values).enumerate() {
        let size = slot_size(p.ty);
        if v.is_null() {
            out[5 + i / 8] |= 1 << (i % 8);
            slot += size;
            continue;
        }
        let bytes: Vec<u8> = match (p.ty, v) {
            (PropType::Bool, Value::Bool(b)) => vec![*b as u8],
            (PropType::Int8, Value::Int(x)) => (*x as i8).to_le_bytes().to_vec(),
            (PropType::Int16, Value::Int(x)) => (*x as i16).to_le_bytes().to_vec(),
            (PropType::Int32, Value::Int(x)) => (*x as i32).to_le_bytes().to_vec(),
            (PropType::Int64 | PropType::Timestamp, Value::Int(x)) => x.to_le_bytes().to_vec(),
            (PropType::Float, Value::Float(x)) => (*x as f32).to_le_bytes().to_vec(),
            (PropType::Double, Value::Float(x)) => x.to_le_bytes().to_vec(),
            (PropType::Date, Value::Date(d)) => {
                let mut b = d.year.to_le_bytes().to_vec();
                b.push(d.month);
                b.push(d.day);
                b
            }
            (PropType::Time, Value::Time(t)) => t.to_micros().to_le_bytes().to_vec(),
            (PropType::DateTime, Value::DateTime(dt)) => {
                let mut b = dt.date.year.to_le_bytes().to_vec();
                b.push(dt.date.month);
                b.push(dt.date.day);
                b.extend_from_slice(&dt.time.to_micros().to_le_bytes());
                b
            }
            (PropType::Duration, Value::Duration(d)) => {
                let mut b = d.months.to_le_bytes().to_vec();
                b.extend_from_slice(&d.seconds.to_le_bytes());
                b.extend_from_slice(&d.microseconds.to_le_bytes());
                b
            }
            (PropType::String | PropType::FixedString(_), Value::String(s)) => {
                let off = out.len() as u32;
                out.extend_from_slice(s.as_bytes());
                let mut b = off.to_le_bytes().to_vec();
                b.extend_from_slice(&(s.len() as u32).to_le_bytes());
                b
            }
            (PropType::Geography(_), Value::Geography(g)) => {
                let wkb = g.to_wkb();
                let off = out.len() as u32;
                out.extend_from_slice(&wkb);
                let mut b = off.to_le_bytes().to_vec();
                b.extend_from_slice(&(wkb.len() as u32).to_le_bytes());
                b
            }
            (PropType::List(_), Value::List(items)) | (PropType::Set(_), Value::Set(items)) => {
                let off = out.len() as u32;
                out.extend_from_slice(&(items.len() as u32).to_le_bytes());
                for item in items {
                    match item {
                        Value::Int(i) => out.extend_from_slice(&i.to_le_bytes()),
                        Value::Float(f) => out.extend_from_slice(&f.to_le_bytes()),
                        Value::String(s) => {
                            out.extend_from_slice(&(s.len() as u32).to_le_bytes());
                            out.extend_from_slice(s.as_bytes());
                        }
                        v => panic!("item {v} of type {} reached the codec for a {} property", v.type_name(), p.ty),
                    }
                }
                let mut b = off.to_le_bytes().to_vec();
                b.extend_from_slice(&(out.len() as u32 - off).to_le_bytes());
                b
            }
            (ty, v) => panic!("value {v} of type {} reached the codec for a {ty} property", v.type_name()),
        };
        debug_assert_eq!(bytes.len(), size);
        out[slot..slot + size].copy_from_slice(&bytes);
        slot += size;
    }
    out
}

fn corrupt(what: &str) -> QError {
    QError::storage(format!("corrupt row: {what}"))
}

/// Decodes a row into the properties of the schema's current version: properties added since the row was
/// written read as their default (or NULL), dropped ones disappear, changed types are converted.
pub fn decode(schema: &SchemaDesc, row: &[u8]) -> QResult<Props> {
    decode_only(schema, row, &|_| true)
}

/// [`decode`], but only the current-version properties `wanted` accepts (projection push-down: the others are
/// never decoded).
pub fn decode_only(schema: &SchemaDesc, row: &[u8], wanted: &dyn Fn(&str) -> bool) -> QResult<Props> {
    let latest = schema.latest();
    let picked: Vec<usize> = (0..latest.props.len()).filter(|&i| wanted(&latest.props[i].name)).collect();
    let values = decode_indices(schema, row, &picked)?;
    Ok(picked.iter().map(|&i| latest.props[i].name.clone()).zip(values).collect())
}

/// The properties at `picked` (indices into the schema's current version), in that order: [`decode_only`] without
/// a map, for reads that decode many rows with one projection.
pub fn decode_indices(schema: &SchemaDesc, row: &[u8], picked: &[usize]) -> QResult<quiver_api::PropValues> {
    if row.len() < 5 || row[0] != FORMAT {
        return Err(corrupt("unknown format"));
    }
    let version = u32::from_le_bytes(row[1..5].try_into().expect("len checked"));
    let written = schema.version(version).ok_or_else(|| corrupt("unknown schema version"))?;
    let reader = RowReader::new(written, row)?;
    let latest = schema.latest();
    let mut values = quiver_api::PropValues::with_capacity(picked.len());
    for &i in picked {
        let p = &latest.props[i];
        let v = if latest.version == version {
            reader.field(i)?
        } else {
            match written.prop_index(&p.name) {
                Some(w) => convert_for_read(p.ty, reader.field(w)?),
                None => match &p.default {
                    Some((_, e)) => eval_const(e).unwrap_or(Value::NULL),
                    None => Value::NULL,
                },
            }
        };
        values.push(v);
    }
    Ok(values)
}

/// Random access to the fields of a row written with one schema version.
struct RowReader<'a> {
    schema: &'a SchemaVersion,
    row: &'a [u8],
}

impl<'a> RowReader<'a> {
    fn new(schema: &'a SchemaVersion, row: &'a [u8]) -> QResult<RowReader<'a>> {
        let r = RowReader { schema, row };
        if row.len() < r.slot(schema.props.len()) {
            return Err(corrupt("too short"));
        }
        Ok(r)
    }

    /// Byte offset of property `i`'s fixed slot (of the end of the slots for `i` = the number of properties):
    /// summed on each read rather than kept in a vector, so reading a row allocates nothing.
    fn slot(&self, i: usize) -> usize {
        5 + self.schema.props.len().div_ceil(8) + self.schema.props[..i].iter().map(|p| slot_size(p.ty)).sum::<usize>()
    }

    fn field(&self, i: usize) -> QResult<Value> {
        let row = self.row;
        if row[5 + i / 8] & (1 << (i % 8)) != 0 {
            return Ok(Value::NULL);
        }
        let ty = self.schema.props[i].ty;
        let at = self.slot(i);
        let b = &row[at..at + slot_size(ty)];
        let arr = |n: usize| -> &[u8] { &b[..n] };
        Ok(match ty {
            PropType::Bool => Value::Bool(b[0] != 0),
            PropType::Int8 => Value::Int(b[0] as i8 as i64),
            PropType::Int16 => Value::Int(i16::from_le_bytes(arr(2).try_into().expect("slot")) as i64),
            PropType::Int32 => Value::Int(i32::from_le_bytes(arr(4).try_into().expect("slot")) as i64),
            PropType::Int64 | PropType::Timestamp => Value::Int(i64::from_le_bytes(arr(8).try_into().expect("slot"))),
            PropType::Float => Value::Float(f32::from_le_bytes(arr(4).try_into().expect("slot")) as f64),
            PropType::Double => Value::Float(f64::from_le_bytes(arr(8).try_into().expect("slot"))),
            PropType::Date => Value::Date(
                Date::new(i16::from_le_bytes([b[0], b[1]]) as i64, b[2] as i64, b[3] as i64)
                    .ok_or_else(|| corrupt("bad date"))?,
            ),
            PropType::Time => Value::Time(Time::from_micros(i64::from_le_bytes(arr(8).try_into().expect("slot")))),
            PropType::DateTime => {
                let date = Date::new(i16::from_le_bytes([b[0], b[1]]) as i64, b[2] as i64, b[3] as i64)
                    .ok_or_else(|| corrupt("bad datetime"))?;
                let time = Time::from_micros(i64::from_le_bytes(b[4..12].try_into().expect("slot")));
                Value::DateTime(DateTime { date, time })
            }
            PropType::Duration => Value::Duration(Duration {
                months: i32::from_le_bytes(b[0..4].try_into().expect("slot")),
                seconds: i64::from_le_bytes(b[4..12].try_into().expect("slot")),
                microseconds: i32::from_le_bytes(b[12..16].try_into().expect("slot")),
            }),
            PropType::Geography(_) => {
                let off = u32::from_le_bytes(b[0..4].try_into().expect("slot")) as usize;
                let len = u32::from_le_bytes(b[4..8].try_into().expect("slot")) as usize;
                let wkb = row.get(off..off.saturating_add(len)).ok_or_else(|| corrupt("geography out of bounds"))?;
                let g = quiver_common::geo::Geography::from_wkb(wkb).map_err(|e| corrupt(&e))?;
                Value::Geography(std::sync::Arc::new(g))
            }
            PropType::List(t) | PropType::Set(t) => {
                let off = u32::from_le_bytes(b[0..4].try_into().expect("slot")) as usize;
                let len = u32::from_le_bytes(b[4..8].try_into().expect("slot")) as usize;
                let bytes = row.get(off..off.saturating_add(len)).ok_or_else(|| corrupt("list out of bounds"))?;
                let items = decode_items(t, bytes)?;
                if matches!(ty, PropType::List(_)) {
                    Value::List(items)
                } else {
                    Value::Set(items)
                }
            }
            PropType::String | PropType::FixedString(_) => {
                let off = u32::from_le_bytes(b[0..4].try_into().expect("slot")) as usize;
                let len = u32::from_le_bytes(b[4..8].try_into().expect("slot")) as usize;
                let s = row.get(off..off + len).ok_or_else(|| corrupt("string out of bounds"))?;
                Value::str(std::str::from_utf8(s).map_err(|_| corrupt("string not UTF-8"))?)
            }
        })
    }
}

/// A list's or set's items, as `encode` wrote them.
fn decode_items(t: quiver_common::ItemType, bytes: &[u8]) -> QResult<Vec<Value>> {
    use quiver_common::ItemType;
    let take = |at: &mut usize, n: usize| -> QResult<&[u8]> {
        let b = bytes.get(*at..at.saturating_add(n)).ok_or_else(|| corrupt("list item out of bounds"))?;
        *at += n;
        Ok(b)
    };
    let mut at = 0;
    let count = u32::from_le_bytes(take(&mut at, 4)?.try_into().expect("4 bytes")) as usize;
    // Each item takes at least 4 bytes: a count beyond that is corruption, not an allocation to make.
    if count > bytes.len() / 4 {
        return Err(corrupt("list item count"));
    }
    let mut items = Vec::with_capacity(count);
    for _ in 0..count {
        items.push(match t {
            ItemType::Int => Value::Int(i64::from_le_bytes(take(&mut at, 8)?.try_into().expect("8 bytes"))),
            ItemType::Float => Value::Float(f64::from_le_bytes(take(&mut at, 8)?.try_into().expect("8 bytes"))),
            ItemType::String => {
                let n = u32::from_le_bytes(take(&mut at, 4)?.try_into().expect("4 bytes")) as usize;
                Value::str(std::str::from_utf8(take(&mut at, n)?).map_err(|_| corrupt("list string not UTF-8"))?)
            }
        });
    }
    Ok(items)
}
