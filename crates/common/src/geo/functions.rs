//! The geo functions of NebulaGraph's `FunctionManager.cpp`, with its argument rules: a wrong type is NULL
//! (BAD_TYPE), a value out of range NULL (BAD_DATA). `ST_GeogFromWKB` and `ST_AsBinary` are commented out in
//! NebulaGraph 3.8; Quiver has them, on hex text (as NebulaGraph's own `asWKBHex`).

use super::cells::{self, CoverParams};
use super::{sphere, Coord, Geography};
use crate::value::{NullKind, Value};
use std::sync::Arc;

/// The names this module answers, lower case.
pub const NAMES: &[&str] = &[
    "st_point",
    "st_geogfromtext",
    "st_geogfromwkb",
    "st_astext",
    "st_asbinary",
    "st_centroid",
    "st_isvalid",
    "st_intersects",
    "st_covers",
    "st_coveredby",
    "st_dwithin",
    "st_distance",
    "s2_cellidfrompoint",
    "s2_coveringcellids",
];

/// `(min, max)` arguments of each function.
pub fn arity(name: &str) -> Option<(usize, usize)> {
    Some(match name {
        "st_point" | "st_intersects" | "st_covers" | "st_coveredby" | "st_distance" => (2, 2),
        "st_geogfromtext" | "st_geogfromwkb" | "st_astext" | "st_asbinary" | "st_centroid" | "st_isvalid" => (1, 1),
        "st_dwithin" => (3, 4),
        "s2_cellidfrompoint" => (1, 2),
        "s2_coveringcellids" => (1, 5),
        _ => return None,
    })
}

const BAD_TYPE: Value = Value::Null(NullKind::BadType);
const BAD_DATA: Value = Value::Null(NullKind::BadData);

fn geog(v: &Value) -> Option<&Geography> {
    match v {
        Value::Geography(g) => Some(g),
        _ => None,
    }
}

fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Int(i) => Some(*i as f64),
        Value::Float(f) => Some(*f),
        _ => None,
    }
}

fn new(g: Geography) -> Value {
    Value::Geography(Arc::new(g))
}

/// Calls geo function `name` (lower case, arity already checked).
pub fn call(name: &str, a: &[Value]) -> Value {
    match name {
        "st_point" => match (number(&a[0]), number(&a[1])) {
            (Some(x), Some(y)) => new(Geography::Point(Coord::new(x, y))),
            _ => BAD_TYPE,
        },
        "st_geogfromtext" => match &a[0] {
            Value::String(s) => Geography::from_wkt(s).map(new).unwrap_or(BAD_DATA),
            _ => BAD_TYPE,
        },
        "st_geogfromwkb" => match &a[0] {
            Value::String(s) => from_hex(s)
                .and_then(|b| Geography::from_wkb(&b).ok())
                .and_then(|mut g| {
                    g.normalize();
                    g.check().ok().map(|_| g)
                })
                .map(new)
                .unwrap_or(BAD_DATA),
            _ => BAD_TYPE,
        },
        "st_astext" => geog(&a[0]).map(|g| Value::str(g.wkt())).unwrap_or(BAD_TYPE),
        "st_asbinary" => geog(&a[0])
            .map(|g| Value::str(g.to_wkb().iter().map(|b| format!("{b:02x}")).collect::<String>()))
            .unwrap_or(BAD_TYPE),
        "st_centroid" => geog(&a[0]).map(|g| new(Geography::Point(sphere::centroid(g)))).unwrap_or(BAD_TYPE),
        "st_isvalid" => geog(&a[0]).map(|g| Value::Bool(g.is_valid())).unwrap_or(BAD_TYPE),
        "st_intersects" | "st_covers" | "st_coveredby" | "st_distance" => {
            let (Some(x), Some(y)) = (geog(&a[0]), geog(&a[1])) else { return BAD_TYPE };
            match name {
                "st_intersects" => Value::Bool(sphere::intersects(x, y)),
                "st_covers" => Value::Bool(sphere::covers(x, y)),
                "st_coveredby" => Value::Bool(sphere::covers(y, x)),
                _ => Value::Float(sphere::distance(x, y)),
            }
        }
        "st_dwithin" => {
            let (Some(x), Some(y), Some(d)) = (geog(&a[0]), geog(&a[1]), number(&a[2])) else { return BAD_TYPE };
            let exclusive = match a.get(3) {
                None => false,
                Some(Value::Bool(b)) => *b,
                Some(_) => return BAD_TYPE,
            };
            Value::Bool(sphere::dwithin(x, y, d, exclusive))
        }
        "s2_cellidfrompoint" => {
            let Some(g) = geog(&a[0]) else { return BAD_TYPE };
            let level = match a.get(1) {
                None => 30,
                Some(Value::Int(l)) if (0..=30).contains(l) => *l as u8,
                Some(Value::Int(_)) => return BAD_DATA,
                Some(_) => return BAD_TYPE,
            };
            match g {
                Geography::Point(c) => Value::Int(cells::cell_id_from_point(c, level)),
                _ => BAD_DATA,
            }
        }
        "s2_coveringcellids" => covering(a),
        _ => unreachable!("geo function {name} listed in NAMES"),
    }
}

/// `S2_CoveringCellIds(g [, min_level [, max_level [, max_cells [, buffer_meters]]]])`.
fn covering(a: &[Value]) -> Value {
    let Some(g) = geog(&a[0]) else { return BAD_TYPE };
    let mut p = CoverParams::default();
    let int = |i: usize| -> Result<Option<i64>, Value> {
        match a.get(i) {
            None => Ok(None),
            Some(Value::Int(v)) => Ok(Some(*v)),
            Some(_) => Err(BAD_TYPE),
        }
    };
    let mut run = || -> Result<Value, Value> {
        if let Some(l) = int(1)? {
            if !(0..=30).contains(&l) {
                return Err(BAD_DATA);
            }
            p.min_level = l as u8;
        }
        if let Some(l) = int(2)? {
            if !(0..=30).contains(&l) || l < p.min_level as i64 {
                return Err(BAD_DATA);
            }
            p.max_level = l as u8;
        }
        if let Some(n) = int(3)? {
            if n <= 0 {
                return Err(BAD_DATA);
            }
            p.max_cells = n.min(crate::limits::GEO_COVERING_CELLS_MAX as i64) as usize;
        }
        let buffer = match a.get(4) {
            None => 0.0,
            Some(v) => number(v).ok_or(BAD_TYPE)?,
        };
        if buffer < 0.0 {
            return Err(BAD_DATA);
        }
        // A floor so fine that the covering would hold far more cells than it may return is bad data.
        if cells::cells_at_level(g, buffer, p.min_level) > crate::limits::GEO_COVERING_MIN_LEVEL_CELLS_MAX {
            return Err(BAD_DATA);
        }
        Ok(Value::List(cells::covering_cell_ids(g, p, buffer).into_iter().map(Value::Int).collect()))
    };
    run().unwrap_or_else(|e| e)
}

fn from_hex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len()).step_by(2).map(|i| s.get(i..i + 2).and_then(|h| u8::from_str_radix(h, 16).ok())).collect()
}
