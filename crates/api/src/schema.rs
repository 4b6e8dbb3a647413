//! Spaces, tags and edge types as the catalog keeps them, and the type rules for property values.

use quiver_common::datetime::DateTime;
use quiver_common::expr::Expr;
use quiver_common::{PropType, QError, QResult, Value};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum VidType {
    FixedString(u32),
    Int64,
}

impl VidType {
    pub fn name(&self) -> String {
        match self {
            VidType::FixedString(n) => format!("FIXED_STRING({n})"),
            VidType::Int64 => "INT64".into(),
        }
    }

    /// Bytes a VID takes in a key.
    pub fn key_len(&self) -> usize {
        match self {
            VidType::FixedString(n) => *n as usize,
            VidType::Int64 => 8,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpaceDesc {
    pub id: u32,
    pub name: String,
    pub partition_num: u32,
    pub replica_factor: u32,
    pub vid_type: VidType,
    pub comment: Option<String>,
}

impl SpaceDesc {
    /// The space's partition ids, 1 to `partition_num`.
    pub fn all_parts(&self) -> Vec<u32> {
        (1..=self.partition_num).collect()
    }

    /// Whether `vid` has the space's VID type (its length is checked by [`SpaceDesc::check_vid_len`]).
    pub fn vid_type_matches(&self, vid: &Value) -> bool {
        matches!((self.vid_type, vid), (VidType::Int64, Value::Int(_)) | (VidType::FixedString(_), Value::String(_)))
    }

    /// NebulaGraph's name of the value type VIDs have in this space, as its messages print it.
    pub fn vid_value_type(&self) -> &'static str {
        match self.vid_type {
            VidType::Int64 => "INT",
            VidType::FixedString(_) => "STRING",
        }
    }

    /// A string VID longer than the space allows fails with NebulaGraph's storage error. The query layer checks every
    /// VID with this before it reaches storage, which asserts it (a longer one there is a bug, not an input).
    pub fn check_vid_len(&self, vid: &Value) -> QResult<()> {
        match (self.vid_type, vid) {
            (VidType::FixedString(n), Value::String(s)) if s.len() > n as usize => Err(QError::execution(
                "Storage Error: The VID must be a 64-bit integer or a string fitting space vertex id length limit.",
            )),
            _ => Ok(()),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SchemaKind {
    Tag,
    Edge,
}

impl SchemaKind {
    /// NebulaGraph's error for a tag or edge type that does not exist (DESCRIBE, DROP, ALTER).
    pub fn not_existed(self) -> QError {
        match self {
            // NebulaGraph's meta client turns E_TAG_NOT_FOUND into `Status::TagNotFound("Tag not existed!")`.
            SchemaKind::Tag => QError::execution("TagNotFound: Tag not existed!"),
            SchemaKind::Edge => QError::execution("EdgeNotFound: Edge not existed!"),
        }
    }
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PropDef {
    pub name: String,
    pub ty: PropType,
    pub nullable: bool,
    /// The DEFAULT expression, with its text as written (for DESCRIBE and SHOW CREATE).
    pub default: Option<(String, Expr)>,
    pub comment: Option<String>,
}

/// One version of a tag's or edge type's properties. Rows record the version they were written with.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SchemaVersion {
    pub version: u32,
    pub props: Vec<PropDef>,
}

impl SchemaVersion {
    pub fn prop_index(&self, name: &str) -> Option<usize> {
        self.props.iter().position(|p| p.name == name)
    }
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SchemaDesc {
    pub kind: SchemaKind,
    pub id: i32,
    pub name: String,
    /// Oldest first; the last is the current one. Never empty.
    pub versions: Vec<SchemaVersion>,
    pub ttl_duration: i64,
    pub ttl_col: String,
    pub comment: Option<String>,
}

impl SchemaDesc {
    pub fn latest(&self) -> &SchemaVersion {
        self.versions.last().expect("a schema has at least one version")
    }

    pub fn version(&self, v: u32) -> Option<&SchemaVersion> {
        self.versions.iter().find(|s| s.version == v)
    }
}

pub type SchemaRef = Arc<SchemaDesc>;

/// Checks `v` against a property's type and converts it to the stored form, as NebulaGraph does on write:
/// ints narrow only if they fit, ints widen into floats, strings fit fixed strings by truncation.
pub fn coerce(prop: &PropDef, v: Value) -> QResult<Value> {
    let mismatch = || {
        QError::execution("Storage Error: The data type does not meet the requirements. Use the correct type of data.")
    };
    // A NULL that records an error (BAD_DATA, BAD_TYPE, ...) is never a property's value (RowWriterV2::setValue).
    if matches!(v, Value::Null(k) if k != quiver_common::NullKind::Null && k != quiver_common::NullKind::NaN) {
        return Err(mismatch());
    }
    if v.is_null() {
        if !prop.nullable {
            return Err(QError::execution("Storage Error: The not null field cannot be null."));
        }
        return Ok(Value::NULL);
    }
    let in_range = |i: i64, lo: i64, hi: i64| {
        if (lo..=hi).contains(&i) {
            Ok(Value::Int(i))
        } else {
            Err(QError::execution("Storage Error: Out of range value."))
        }
    };
    match (prop.ty, v) {
        (PropType::Bool, v @ Value::Bool(_)) => Ok(v),
        (PropType::Int8, Value::Int(i)) => in_range(i, i8::MIN as i64, i8::MAX as i64),
        (PropType::Int16, Value::Int(i)) => in_range(i, i16::MIN as i64, i16::MAX as i64),
        (PropType::Int32, Value::Int(i)) => in_range(i, i32::MIN as i64, i32::MAX as i64),
        (PropType::Int64, v @ Value::Int(_)) => Ok(v),
        // A float into an integer column is rounded (half away from zero), as NebulaGraph's RowWriterV2 does, once it
        // is known to fit.
        (PropType::Int8 | PropType::Int16 | PropType::Int32 | PropType::Int64, Value::Float(f)) => {
            let (lo, hi) = match prop.ty {
                PropType::Int8 => (i8::MIN as f64, i8::MAX as f64),
                PropType::Int16 => (i16::MIN as f64, i16::MAX as f64),
                PropType::Int32 => (i32::MIN as f64, i32::MAX as f64),
                _ => (i64::MIN as f64, i64::MAX as f64),
            };
            if !(lo..=hi).contains(&f) {
                return Err(QError::execution("Storage Error: Out of range value."));
            }
            Ok(Value::Int(f.round() as i64))
        }
        (PropType::Float | PropType::Double, Value::Int(i)) => Ok(Value::Float(i as f64)),
        (PropType::Float, Value::Float(f)) => Ok(Value::Float(f as f32 as f64)),
        (PropType::Double, v @ Value::Float(_)) => Ok(v),
        (PropType::String, v @ Value::String(_)) => Ok(v),
        (PropType::FixedString(n), Value::String(s)) => {
            let mut end = s.len().min(n as usize);
            while !s.is_char_boundary(end) {
                end -= 1;
            }
            Ok(Value::str(s[..end].to_string()))
        }
        (PropType::Timestamp, Value::Int(i)) => {
            if (0..=253_402_300_799).contains(&i) {
                Ok(Value::Int(i))
            } else {
                Err(QError::execution("Storage Error: Out of range value."))
            }
        }
        (PropType::Timestamp, Value::String(s)) => {
            DateTime::parse(&s).map(|d| Value::Int(d.to_timestamp())).ok_or_else(mismatch)
        }
        (PropType::Date, v @ Value::Date(_)) => Ok(v),
        (PropType::Time, v @ Value::Time(_)) => Ok(v),
        (PropType::DateTime, v @ Value::DateTime(_)) => Ok(v),
        (PropType::Duration, v @ Value::Duration(_)) => Ok(v),
        // A `geography(shape)` column takes only that shape (RowWriterV2's TYPE_MISMATCH).
        (PropType::Geography(shape), Value::Geography(g)) if shape.is_none_or(|s| s == g.shape()) => {
            Ok(Value::Geography(g))
        }
        // A list or set column takes a list or set (not the other) whose items are all of its item type.
        (PropType::List(t), Value::List(items)) if items.iter().all(|v| t.holds(v)) => Ok(Value::List(items)),
        (PropType::Set(t), Value::Set(items)) if items.iter().all(|v| t.holds(v)) => {
            let mut seen = quiver_common::fasthash::FastSet::default();
            let distinct: Vec<Value> = items.into_iter().filter(|v| seen.insert(v.clone())).collect();
            Ok(Value::Set(distinct))
        }
        _ => Err(mismatch()),
    }
}

/// Converts a value read with an older schema version to the property's current type (`ALTER ... CHANGE`);
/// a value that cannot be converted reads as NULL.
pub fn convert_for_read(ty: PropType, v: Value) -> Value {
    match (ty, &v) {
        (_, Value::Null(_)) => v,
        (PropType::String | PropType::FixedString(_), Value::String(_)) => v,
        (PropType::String | PropType::FixedString(_), Value::Int(_) | Value::Float(_) | Value::Bool(_)) => {
            Value::str(v.to_string())
        }
        (PropType::Int8 | PropType::Int16 | PropType::Int32 | PropType::Int64 | PropType::Timestamp, Value::Int(_)) => {
            v
        }
        (PropType::Int8 | PropType::Int16 | PropType::Int32 | PropType::Int64, Value::Float(f)) => {
            Value::Int(*f as i64)
        }
        (PropType::Int8 | PropType::Int16 | PropType::Int32 | PropType::Int64, Value::String(s)) => {
            s.trim().parse().map(Value::Int).unwrap_or(Value::NULL)
        }
        (PropType::Float | PropType::Double, Value::Int(i)) => Value::Float(*i as f64),
        (PropType::Float | PropType::Double, Value::Float(_)) => v,
        (PropType::Float | PropType::Double, Value::String(s)) => {
            s.trim().parse().map(Value::Float).unwrap_or(Value::NULL)
        }
        (PropType::Bool, Value::Bool(_)) => v,
        (PropType::Date, Value::Date(_))
        | (PropType::Time, Value::Time(_))
        | (PropType::DateTime, Value::DateTime(_))
        | (PropType::Duration, Value::Duration(_)) => v,
        (PropType::Geography(shape), Value::Geography(g)) if shape.is_none_or(|s| s == g.shape()) => v,
        (PropType::List(t), Value::List(items)) | (PropType::Set(t), Value::Set(items))
            if items.iter().all(|v| t.holds(v)) =>
        {
            v
        }
        _ => Value::NULL,
    }
}
