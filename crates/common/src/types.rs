//! Property types of tags and edge types.

use crate::geo::GeoShape;
use std::fmt;

/// The type of a tag or edge property, as declared in `CREATE TAG|EDGE`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum PropType {
    Bool,
    Int8,
    Int16,
    Int32,
    Int64,
    Float,
    Double,
    String,
    FixedString(u16),
    Date,
    Time,
    DateTime,
    Timestamp,
    Duration,
    /// `geography`, or `geography(point|linestring|polygon)` when the shape is fixed.
    Geography(Option<GeoShape>),
    /// `List< string|int|float >`: a list whose items are all of that type (NebulaGraph's LIST_STRING, ...).
    List(ItemType),
    /// `Set< string|int|float >`: a set whose items are all of that type (NebulaGraph's SET_STRING, ...).
    Set(ItemType),
}

/// The type of a list or set property's items.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum ItemType {
    String,
    Int,
    Float,
}

impl ItemType {
    pub fn name(self) -> &'static str {
        match self {
            ItemType::String => "string",
            ItemType::Int => "int",
            ItemType::Float => "float",
        }
    }

    /// Whether `v` is an item of this type.
    pub fn holds(self, v: &crate::Value) -> bool {
        matches!(
            (self, v),
            (ItemType::String, crate::Value::String(_))
                | (ItemType::Int, crate::Value::Int(_))
                | (ItemType::Float, crate::Value::Float(_))
        )
    }

    pub fn code(self) -> u16 {
        match self {
            ItemType::String => 1,
            ItemType::Int => 2,
            ItemType::Float => 3,
        }
    }

    pub fn from_code(code: u16) -> Option<ItemType> {
        Some(match code {
            1 => ItemType::String,
            2 => ItemType::Int,
            3 => ItemType::Float,
            _ => return None,
        })
    }
}

impl PropType {
    /// The name NebulaGraph prints in `DESCRIBE TAG` and `SHOW CREATE TAG`.
    pub fn name(&self) -> String {
        match self {
            PropType::Bool => "bool".into(),
            PropType::Int8 => "int8".into(),
            PropType::Int16 => "int16".into(),
            PropType::Int32 => "int32".into(),
            PropType::Int64 => "int64".into(),
            PropType::Float => "float".into(),
            PropType::Double => "double".into(),
            PropType::String => "string".into(),
            PropType::FixedString(n) => format!("fixed_string({n})"),
            PropType::Date => "date".into(),
            PropType::Time => "time".into(),
            PropType::DateTime => "datetime".into(),
            PropType::Timestamp => "timestamp".into(),
            PropType::Duration => "duration".into(),
            PropType::Geography(None) => "geography".into(),
            PropType::Geography(Some(s)) => format!("geography({})", s.name()),
            PropType::List(t) => format!("list_{}", t.name()),
            PropType::Set(t) => format!("set_{}", t.name()),
        }
    }

    /// Stable one-byte tag used in the persisted catalog.
    pub fn code(&self) -> u8 {
        match self {
            PropType::Bool => 1,
            PropType::Int8 => 2,
            PropType::Int16 => 3,
            PropType::Int32 => 4,
            PropType::Int64 => 5,
            PropType::Float => 6,
            PropType::Double => 7,
            PropType::String => 8,
            PropType::FixedString(_) => 9,
            PropType::Date => 10,
            PropType::Time => 11,
            PropType::DateTime => 12,
            PropType::Timestamp => 13,
            PropType::Duration => 14,
            PropType::Geography(_) => 15,
            PropType::List(_) => 16,
            PropType::Set(_) => 17,
        }
    }

    pub fn from_code(code: u8, len: u16) -> Option<PropType> {
        Some(match code {
            1 => PropType::Bool,
            2 => PropType::Int8,
            3 => PropType::Int16,
            4 => PropType::Int32,
            5 => PropType::Int64,
            6 => PropType::Float,
            7 => PropType::Double,
            8 => PropType::String,
            9 => PropType::FixedString(len),
            10 => PropType::Date,
            11 => PropType::Time,
            12 => PropType::DateTime,
            13 => PropType::Timestamp,
            14 => PropType::Duration,
            15 => PropType::Geography(match len {
                1 => Some(GeoShape::Point),
                2 => Some(GeoShape::LineString),
                3 => Some(GeoShape::Polygon),
                _ => None,
            }),
            16 => PropType::List(ItemType::from_code(len)?),
            17 => PropType::Set(ItemType::from_code(len)?),
            _ => return None,
        })
    }

    pub fn is_integer(&self) -> bool {
        matches!(self, PropType::Int8 | PropType::Int16 | PropType::Int32 | PropType::Int64 | PropType::Timestamp)
    }
}

impl fmt::Display for PropType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}
