//! Index entries: an order-preserving, fixed-width encoding of the indexed values, after NebulaGraph's Table 2.
//!
//! ```text
//! tag index entry:  space | part(vid) | 0x03 | index_id: i32 BE | field... | vid
//! edge index entry: space | part(src) | 0x03 | index_id: i32 BE | field... | src | rank (sign-flipped BE) | dst
//! field:            0x00 and w zero bytes (NULL)  or  0x01 and w value bytes
//! ```
//! Every field has a fixed width `w` for its type, so the entries with the same leading values are one contiguous
//! range and a range on the next field is a byte range. Byte order equals value order: integers are big-endian
//! with the sign bit flipped; doubles flip the sign bit when positive and every bit when negative (with -0.0 read as
//! 0.0); strings are cut to the index's length and padded with zeros; dates, times and datetimes are their fields
//! big-endian. NULL sorts before every value, so a range predicate (which NULL never satisfies) starts past it.
//! The entry's value is empty.
//!
//! A geo index (one geography field) has one entry per S2 cell of the value's covering (a point: its leaf cell),
//! the field being the cell id big-endian; see `docs/design/geography.md`.

use crate::keys::{self, KIND_INDEX, PREFIX_LEN};
use quiver_api::{IndexDesc, IndexField, IndexRange, IndexScan, SpaceDesc};
use quiver_common::geo::cells;
use quiver_common::{PropType, QError, QResult, Value};

pub const NULL_FLAG: u8 = 0x00;
pub const VALUE_FLAG: u8 = 0x01;

/// Bytes of a field's value in a key (after its flag byte).
pub fn width(f: &IndexField) -> usize {
    match f.ty {
        PropType::Bool => 1,
        PropType::Int8 | PropType::Int16 | PropType::Int32 | PropType::Int64 | PropType::Timestamp => 8,
        PropType::Float | PropType::Double => 8,
        PropType::String | PropType::FixedString(_) => f.len.unwrap_or(0) as usize,
        PropType::Date => 4,
        PropType::Time => 8,
        PropType::DateTime => 12,
        PropType::Duration => 16,
        // A geo index's field is an S2 cell id (one entry per cell of the value's covering).
        PropType::Geography(_) => 8,
        PropType::List(_) | PropType::Set(_) => unreachable!("a list or set property is never indexed"),
    }
}

/// Whether a property type can be indexed.
pub fn indexable(ty: PropType) -> bool {
    !matches!(ty, PropType::Duration | PropType::List(_) | PropType::Set(_))
}

fn flip64(v: i64) -> [u8; 8] {
    ((v as u64) ^ (1 << 63)).to_be_bytes()
}

fn time_micros(t: &quiver_common::datetime::Time) -> i64 {
    ((t.hour as i64 * 60 + t.minute as i64) * 60 + t.sec as i64) * 1_000_000 + t.microsec as i64
}

fn date_bytes(d: &quiver_common::datetime::Date, out: &mut Vec<u8>) {
    out.extend_from_slice(&((d.year as u16) ^ (1 << 15)).to_be_bytes());
    out.push(d.month);
    out.push(d.day);
}

/// Appends one field: its flag and value bytes. A value of another type than the field's is a bug of the caller
/// (rows are coerced on write and predicate constants are checked by the planner).
pub fn encode_field(f: &IndexField, v: &Value, out: &mut Vec<u8>) -> QResult<()> {
    let w = width(f);
    if v.is_null() || matches!(v, Value::Empty) {
        out.push(NULL_FLAG);
        out.resize(out.len() + w, 0);
        return Ok(());
    }
    out.push(VALUE_FLAG);
    let start = out.len();
    match (f.ty, v) {
        (PropType::Bool, Value::Bool(b)) => out.push(*b as u8),
        (PropType::Int8 | PropType::Int16 | PropType::Int32 | PropType::Int64 | PropType::Timestamp, Value::Int(i)) => {
            out.extend_from_slice(&flip64(*i))
        }
        (PropType::Float | PropType::Double, Value::Float(x)) => {
            let x = if *x == 0.0 { 0.0 } else { *x };
            let bits = x.to_bits();
            let ordered = if bits >> 63 == 1 { !bits } else { bits ^ (1 << 63) };
            out.extend_from_slice(&ordered.to_be_bytes());
        }
        (PropType::String | PropType::FixedString(_), Value::String(s)) => {
            let b = s.as_bytes();
            out.extend_from_slice(&b[..b.len().min(w)]);
            out.resize(start + w, 0);
        }
        (PropType::Date, Value::Date(d)) => date_bytes(d, out),
        (PropType::Time, Value::Time(t)) => out.extend_from_slice(&flip64(time_micros(t))),
        (PropType::DateTime, Value::DateTime(dt)) => {
            date_bytes(&dt.date, out);
            out.extend_from_slice(&flip64(time_micros(&dt.time)));
        }
        _ => {
            return Err(QError::storage(format!(
                "value {v} does not fit index field `{}' of type {}",
                f.name,
                f.ty.name()
            )))
        }
    }
    debug_assert_eq!(out.len(), start + w);
    Ok(())
}

/// A row's values of the index's fields, in order (NULL where the row has none).
pub fn field_values(index: &IndexDesc, props: &quiver_api::Props) -> Vec<Value> {
    index.fields.iter().map(|f| props.get(&f.name).cloned().unwrap_or(Value::NULL)).collect()
}

/// `space | part | 0x03 | index_id`.
pub fn index_prefix(space_id: u32, part: u32, index_id: i32) -> Vec<u8> {
    let mut k = keys::prefix(space_id, part, KIND_INDEX);
    k.extend_from_slice(&index_id.to_be_bytes());
    k
}

/// Bytes of all fields of an entry.
pub fn fields_width(index: &IndexDesc) -> usize {
    index.fields.iter().map(|f| 1 + width(f)).sum()
}

/// The field bytes of a row's entries: one string of every field's encoding, or for a geo index one per S2 cell of
/// the value's covering (a NULL one entry of NULL).
fn encoded_fields(index: &IndexDesc, values: &[Value]) -> QResult<Vec<Vec<u8>>> {
    if index.is_geo() {
        return Ok(match values.first() {
            Some(Value::Geography(g)) => cells::index_cells(g, index.cover_params())
                .into_iter()
                .map(|c| {
                    let mut k = Vec::with_capacity(9);
                    k.push(VALUE_FLAG);
                    k.extend_from_slice(&c.to_be_bytes());
                    k
                })
                .collect(),
            _ => vec![vec![NULL_FLAG; 9]],
        });
    }
    let mut k = Vec::new();
    for (f, v) in index.fields.iter().zip(values) {
        encode_field(f, v, &mut k)?;
    }
    Ok(vec![k])
}

/// Each entry: the index's prefix in the partition of `owner`, one string of field bytes, then `target` (what
/// [`entry_target`] reads back).
fn entries(
    space: &SpaceDesc,
    index: &IndexDesc,
    owner: &Value,
    values: &[Value],
    target: &[u8],
) -> QResult<Vec<Vec<u8>>> {
    let base = index_prefix(space.id, keys::part_of(space, owner), index.id);
    Ok(encoded_fields(index, values)?.into_iter().map(|fields| [base.as_slice(), &fields, target].concat()).collect())
}

/// The entries of a tag row with property values `values` (the index's fields, in order): one, or one per cell of
/// a geo index.
pub fn vertex_entries(space: &SpaceDesc, index: &IndexDesc, vid: &Value, values: &[Value]) -> QResult<Vec<Vec<u8>>> {
    let mut target = Vec::new();
    keys::encode_vid(space, vid, &mut target);
    entries(space, index, vid, values, &target)
}

/// The entries of an out-edge, stored in the partition of its source.
pub fn edge_entries(
    space: &SpaceDesc,
    index: &IndexDesc,
    src: &Value,
    rank: i64,
    dst: &Value,
    values: &[Value],
) -> QResult<Vec<Vec<u8>>> {
    let mut target = Vec::new();
    keys::encode_vid(space, src, &mut target);
    target.extend_from_slice(&flip64(rank));
    keys::encode_vid(space, dst, &mut target);
    entries(space, index, src, values, &target)
}

/// What follows the fields of an entry: the VID, or `(src, rank, dst)`.
pub fn entry_target(space: &SpaceDesc, index: &IndexDesc, key: &[u8]) -> QResult<quiver_api::IndexHit> {
    let off = PREFIX_LEN + 4 + fields_width(index);
    let vl = space.vid_type.key_len();
    let rest = key.get(off..).ok_or_else(|| QError::storage("index entry too short"))?;
    match index.kind {
        quiver_api::SchemaKind::Tag => {
            if rest.len() != vl {
                return Err(QError::storage("bad index entry length"));
            }
            Ok(quiver_api::IndexHit::Vertex(keys::decode_vid(space, rest)?))
        }
        quiver_api::SchemaKind::Edge => {
            if rest.len() != vl + 8 + vl {
                return Err(QError::storage("bad index entry length"));
            }
            let src = keys::decode_vid(space, &rest[..vl])?;
            let rank = (u64::from_be_bytes(rest[vl..vl + 8].try_into().expect("len checked")) ^ (1 << 63)) as i64;
            let dst = keys::decode_vid(space, &rest[vl + 8..])?;
            Ok(quiver_api::IndexHit::Edge(src, rank, dst))
        }
    }
}

/// The key ranges `[start, end)` of one partition that a scan covers: one, or one per cell range of a geo scan.
pub fn scan_ranges(space_id: u32, part: u32, scan: &IndexScan) -> QResult<Vec<(Vec<u8>, Vec<u8>)>> {
    let cells = scan.range.as_ref().map(|r| r.cells.as_slice()).unwrap_or_default();
    if cells.is_empty() {
        return Ok(vec![scan_range(space_id, part, scan)?]);
    }
    let base = index_prefix(space_id, part, scan.index.id);
    let at = |c: u64| {
        let mut k = base.clone();
        k.push(VALUE_FLAG);
        k.extend_from_slice(&c.to_be_bytes());
        k
    };
    cells
        .iter()
        .map(|&(lo, hi)| {
            let end = quiver_kv::prefix_end(&at(hi)).ok_or_else(|| QError::storage("index bound has no end"))?;
            Ok((at(lo), end))
        })
        .collect()
}

/// The key range `[start, end)` of one partition that a scan of leading values and a range covers.
fn scan_range(space_id: u32, part: u32, scan: &IndexScan) -> QResult<(Vec<u8>, Vec<u8>)> {
    let index = &scan.index;
    let mut base = index_prefix(space_id, part, index.id);
    for (f, v) in index.fields.iter().zip(&scan.prefix) {
        encode_field(f, v, &mut base)?;
    }
    let whole = || -> QResult<(Vec<u8>, Vec<u8>)> {
        let end = quiver_kv::prefix_end(&base).ok_or_else(|| QError::storage("index prefix has no end"))?;
        Ok((base.clone(), end))
    };
    let Some(range) = &scan.range else { return whole() };
    let f = index.fields.get(scan.prefix.len()).ok_or_else(|| QError::storage("index range past the last field"))?;
    let IndexRange { lower, upper, starts_with, .. } = range;
    if let Some(p) = starts_with {
        let mut start = base.clone();
        start.push(VALUE_FLAG);
        let b = p.as_bytes();
        start.extend_from_slice(&b[..b.len().min(width(f))]);
        let end = quiver_kv::prefix_end(&start).ok_or_else(|| QError::storage("index prefix has no end"))?;
        return Ok((start, end));
    }
    let bound = |v: &Value| -> QResult<Vec<u8>> {
        let mut k = base.clone();
        encode_field(f, v, &mut k)?;
        Ok(k)
    };
    // A string bound as long as the key keeps is cut like the values: a value past it (`"aaaaaaa" > "aaaaa"` in a
    // five-byte key) has the bound's key, so an exclusive bound takes that key in too (the rows are re-checked).
    let cut = |v: &Value| matches!(v, Value::String(s) if !f.exact() && s.len() >= width(f));
    let lower = lower.as_ref().map(|(v, inclusive)| (v, *inclusive || cut(v)));
    let upper = upper.as_ref().map(|(v, inclusive)| (v, *inclusive || cut(v)));
    let start = match lower {
        // Values start at the flag byte 0x01: NULL (0x00) never satisfies a range.
        None => {
            let mut k = base.clone();
            k.push(VALUE_FLAG);
            k
        }
        Some((v, true)) => bound(v)?,
        Some((v, false)) => {
            quiver_kv::prefix_end(&bound(v)?).ok_or_else(|| QError::storage("index bound has no end"))?
        }
    };
    let end = match upper {
        None => {
            let mut k = base.clone();
            k.push(VALUE_FLAG + 1);
            k
        }
        Some((v, true)) => {
            quiver_kv::prefix_end(&bound(v)?).ok_or_else(|| QError::storage("index bound has no end"))?
        }
        Some((v, false)) => bound(v)?,
    };
    Ok((start, end))
}

#[cfg(test)]
mod tests {
    use super::*;
    use quiver_common::rng::Rng;

    fn key(ty: PropType, len: Option<u32>, v: &Value) -> Vec<u8> {
        let mut k = Vec::new();
        encode_field(&IndexField { name: "f".into(), ty, len }, v, &mut k).unwrap();
        k
    }

    /// Byte order of encoded fields equals value order, NULL first, for random ints, doubles and strings.
    #[test]
    fn encoded_fields_sort_as_their_values() {
        let mut r = Rng(11);
        let specials = [i64::MIN, -1, 0, 1, i64::MAX];
        let floats = [f64::NEG_INFINITY, -1e300, -2.5, -0.0, 0.0, 1e-300, 2.5, f64::INFINITY];
        for _ in 0..2000 {
            let (a, b) = if r.below(4) == 0 {
                (specials[r.below(5) as usize], specials[r.below(5) as usize])
            } else {
                (r.next() as i64 >> r.below(60), r.next() as i64 >> r.below(60))
            };
            let (ka, kb) = (key(PropType::Int64, None, &Value::Int(a)), key(PropType::Int64, None, &Value::Int(b)));
            assert_eq!(ka.cmp(&kb), a.cmp(&b), "{a} vs {b}");
            let (x, y) = if r.below(4) == 0 {
                (floats[r.below(8) as usize], floats[r.below(8) as usize])
            } else {
                (f64::from_bits(r.next()) % 1e6, (r.next() as i64 as f64) / 1e9)
            };
            if x.is_nan() || y.is_nan() {
                continue;
            }
            let (kx, ky) =
                (key(PropType::Double, None, &Value::Float(x)), key(PropType::Double, None, &Value::Float(y)));
            assert_eq!(kx.cmp(&ky), x.partial_cmp(&y).unwrap(), "{x} vs {y}");
            let s: String = (0..r.below(6)).map(|_| (b'a' + r.below(3) as u8) as char).collect();
            let t: String = (0..r.below(6)).map(|_| (b'a' + r.below(3) as u8) as char).collect();
            let (ks, kt) = (
                key(PropType::String, Some(8), &Value::str(s.clone())),
                key(PropType::String, Some(8), &Value::str(t.clone())),
            );
            assert_eq!(ks.cmp(&kt), s.cmp(&t), "{s:?} vs {t:?}");
        }
        let null = key(PropType::Int64, None, &Value::NULL);
        assert!(null < key(PropType::Int64, None, &Value::Int(i64::MIN)), "NULL sorts first");
        assert_eq!(null.len(), key(PropType::Int64, None, &Value::Int(0)).len(), "fixed width");
    }
}
