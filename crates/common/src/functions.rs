//! The scalar function families of nGQL: math, string, conversion, date/time, `hash`, graph accessors (`id`,
//! `tags`, `properties`, `src`, `dst`, `rank`, `type`, `startNode`, `endNode`) and path functions (`nodes`,
//! `relationships`, `length`, `hasSameEdgeInPath`, `hasSameVertexInPath`, `reversePath`). Names are
//! case-insensitive.

use crate::datetime::{Date, DateTime, Duration, Time};
use crate::error::{QError, QResult};
use crate::eval::as_f64;
use crate::expr::CastTo;
use crate::value::{NullKind, Value, Vertex};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

fn arity(name: &str, args: &[Value], min: usize, max: usize) -> QResult<()> {
    if args.len() < min || args.len() > max {
        return Err(QError::semantic(format!(
            "`{name}' accepts {} parameters, but {} were given",
            if min == max { min.to_string() } else { format!("{min} to {max}") },
            args.len()
        )));
    }
    Ok(())
}

/// Is `name` a known scalar function? Used by the validator for a clear error before execution.
pub fn exists(name: &str) -> bool {
    call_inner(&name.to_lowercase(), None).is_some()
}

pub fn is_aggregate(name: &str) -> bool {
    matches!(
        name.to_lowercase().as_str(),
        "count" | "sum" | "avg" | "min" | "max" | "std" | "collect" | "collect_set" | "bit_and" | "bit_or" | "bit_xor"
    )
}

pub fn call(name: &str, args: Vec<Value>) -> QResult<Value> {
    let lower = name.to_lowercase();
    match call_inner(&lower, Some(args)) {
        Some(r) => r,
        None => Err(QError::semantic(format!("Function `{name}' not defined"))),
    }
}

static RAND_STATE: AtomicU64 = AtomicU64::new(0x9E37_79B9_7F4A_7C15);

fn next_rand() -> u64 {
    // xorshift64*; seeded once from the clock. Not for cryptography.
    let mut x = RAND_STATE.load(Ordering::Relaxed);
    if x == 0x9E37_79B9_7F4A_7C15 {
        x ^= std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1);
    }
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    RAND_STATE.store(x, Ordering::Relaxed);
    x.wrapping_mul(0x2545_F491_4F6C_DD1D)
}

fn now_micros() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_micros() as i64).unwrap_or(0)
}

/// Returns `None` when the function does not exist. With `args == None` only answers existence.
fn call_inner(name: &str, args: Option<Vec<Value>>) -> Option<QResult<Value>> {
    macro_rules! known {
        () => {
            match args {
                Some(a) => a,
                None => return Some(Ok(Value::Empty)),
            }
        };
    }
    let res = match name {
        "abs" | "floor" | "ceil" | "round" | "sqrt" | "cbrt" | "exp" | "exp2" | "log" | "log2" | "log10" | "sin"
        | "asin" | "cos" | "acos" | "tan" | "atan" | "sign" | "radians" | "degrees" => {
            let a = known!();
            math1(name, a)
        }
        "hypot" | "pow" => {
            let a = known!();
            arity(name, &a, 2, 2).map(|_| {
                if a.iter().any(|v| v.is_null()) {
                    return Value::NULL;
                }
                if !a.iter().all(|v| matches!(v, Value::Int(_) | Value::Float(_))) {
                    return Value::Null(NullKind::BadType);
                }
                let (x, y) = (as_f64(&a[0]), as_f64(&a[1]));
                match name {
                    "hypot" => Value::Float(x.hypot(y)),
                    _ => match (&a[0], &a[1]) {
                        (Value::Int(b), Value::Int(e)) if *e >= 0 => {
                            match u32::try_from(*e).ok().and_then(|e| b.checked_pow(e)) {
                                Some(v) => Value::Int(v),
                                None => Value::Float(x.powf(y)),
                            }
                        }
                        _ => Value::Float(x.powf(y)),
                    },
                }
            })
        }
        "pi" => {
            let a = known!();
            arity(name, &a, 0, 0).map(|_| Value::Float(std::f64::consts::PI))
        }
        "e" => {
            let a = known!();
            arity(name, &a, 0, 0).map(|_| Value::Float(std::f64::consts::E))
        }
        "rand" => {
            let a = known!();
            arity(name, &a, 0, 0).map(|_| Value::Float((next_rand() >> 11) as f64 / (1u64 << 53) as f64))
        }
        "rand32" | "rand64" => {
            let a = known!();
            arity(name, &a, 0, 2).and_then(|_| {
                let ints: Vec<i64> =
                    a.iter().filter_map(|v| if let Value::Int(i) = v { Some(*i) } else { None }).collect();
                if ints.len() != a.len() {
                    return Ok(Value::Null(NullKind::BadType));
                }
                let r = next_rand();
                let v = match ints.as_slice() {
                    [] => {
                        if name == "rand32" {
                            (r >> 33) as i64
                        } else {
                            (r >> 1) as i64
                        }
                    }
                    [max] | [0, max] if *max > 0 => (r % *max as u64) as i64,
                    // The width of [min, max) as an unsigned number: it fits in 64 bits even for the whole i64 range.
                    [min, max] if max > min => min.wrapping_add((r % max.abs_diff(*min)) as i64),
                    _ => return Err(QError::semantic(format!("`{name}': the range must be non-empty"))),
                };
                Ok(Value::Int(v))
            })
        }
        "lower" | "tolower" | "upper" | "toupper" | "trim" | "ltrim" | "rtrim" | "reverse" | "length" | "size" => {
            let a = known!();
            string1(name, a)
        }
        "left" | "right" => {
            let a = known!();
            arity(name, &a, 2, 2).map(|_| match (&a[0], &a[1]) {
                (Value::Null(_), _) | (_, Value::Null(_)) => Value::NULL,
                (Value::String(s), Value::Int(n)) if *n >= 0 => {
                    let chars: Vec<char> = s.chars().collect();
                    let n = (*n as usize).min(chars.len());
                    let part: String = if name == "left" {
                        chars[..n].iter().collect()
                    } else {
                        chars[chars.len() - n..].iter().collect()
                    };
                    Value::str(part)
                }
                _ => Value::Null(NullKind::BadType),
            })
        }
        "lpad" | "rpad" => {
            let a = known!();
            arity(name, &a, 3, 3).map(|_| match (&a[0], &a[1], &a[2]) {
                (Value::String(s), Value::Int(n), Value::String(pad)) if *n >= 0 => {
                    let n = (*n as usize).min(crate::limits::STRING_PROP_BYTES_MAX);
                    let len = s.chars().count();
                    if n <= len {
                        Value::str(s.chars().take(n).collect::<String>())
                    } else if pad.is_empty() {
                        Value::String(s.clone())
                    } else {
                        let fill: String = pad.chars().cycle().take(n - len).collect();
                        Value::str(if name == "lpad" { format!("{fill}{s}") } else { format!("{s}{fill}") })
                    }
                }
                _ if a.iter().any(|v| v.is_null()) => Value::NULL,
                _ => Value::Null(NullKind::BadType),
            })
        }
        "substr" | "substring" => {
            let a = known!();
            arity(name, &a, 2, 3).map(|_| match (&a[0], &a[1], a.get(2)) {
                (Value::Null(_), _, _) => Value::NULL,
                (Value::String(s), Value::Int(start), len) => {
                    let chars: Vec<char> = s.chars().collect();
                    if *start < 0 {
                        return Value::Null(NullKind::BadData);
                    }
                    let start = (*start as usize).min(chars.len());
                    let end = match len {
                        None => chars.len(),
                        Some(Value::Int(l)) if *l >= 0 => (start + *l as usize).min(chars.len()),
                        _ => return Value::Null(NullKind::BadData),
                    };
                    Value::str(chars[start..end].iter().collect::<String>())
                }
                _ => Value::Null(NullKind::BadType),
            })
        }
        "replace" => {
            let a = known!();
            arity(name, &a, 3, 3).map(|_| match (&a[0], &a[1], &a[2]) {
                (Value::String(s), Value::String(from), Value::String(to)) => Value::str(s.replace(&**from, to)),
                _ if a.iter().any(|v| v.is_null()) => Value::NULL,
                _ => Value::Null(NullKind::BadType),
            })
        }
        "split" => {
            let a = known!();
            arity(name, &a, 2, 2).map(|_| match (&a[0], &a[1]) {
                (Value::String(s), Value::String(sep)) => Value::List(s.split(&**sep).map(Value::str).collect()),
                _ if a.iter().any(|v| v.is_null()) => Value::NULL,
                _ => Value::Null(NullKind::BadType),
            })
        }
        "strcasecmp" => {
            let a = known!();
            arity(name, &a, 2, 2).map(|_| match (&a[0], &a[1]) {
                (Value::String(x), Value::String(y)) => Value::Int(match x.to_lowercase().cmp(&y.to_lowercase()) {
                    std::cmp::Ordering::Less => -1,
                    std::cmp::Ordering::Equal => 0,
                    std::cmp::Ordering::Greater => 1,
                }),
                _ if a.iter().any(|v| v.is_null()) => Value::NULL,
                _ => Value::Null(NullKind::BadType),
            })
        }
        "concat" => {
            let a = known!();
            arity(name, &a, 1, usize::MAX).map(|_| {
                if a.iter().any(|v| v.is_null()) {
                    return Value::NULL;
                }
                Value::str(a.iter().map(plain_string).collect::<String>())
            })
        }
        "concat_ws" => {
            let a = known!();
            arity(name, &a, 2, usize::MAX).map(|_| match &a[0] {
                Value::String(sep) => {
                    let parts: Vec<String> = a[1..].iter().filter(|v| !v.is_null()).map(plain_string).collect();
                    Value::str(parts.join(sep))
                }
                _ => Value::NULL,
            })
        }
        "tostring" => {
            let a = known!();
            arity(name, &a, 1, 1).map(|_| match &a[0] {
                Value::Null(_) => Value::NULL,
                v => Value::str(plain_string(v)),
            })
        }
        "toboolean" => {
            let a = known!();
            arity(name, &a, 1, 1).map(|_| match &a[0] {
                Value::Bool(b) => Value::Bool(*b),
                Value::String(s) => match s.to_lowercase().as_str() {
                    "true" => Value::Bool(true),
                    "false" => Value::Bool(false),
                    _ => Value::NULL,
                },
                Value::Null(_) => Value::NULL,
                _ => Value::Null(NullKind::BadType),
            })
        }
        "tofloat" => {
            let a = known!();
            arity(name, &a, 1, 1).map(|_| match &a[0] {
                Value::Int(i) => Value::Float(*i as f64),
                Value::Float(f) => Value::Float(*f),
                Value::String(s) => s.trim().parse::<f64>().map(Value::Float).unwrap_or(Value::NULL),
                Value::Null(_) => Value::NULL,
                _ => Value::Null(NullKind::BadType),
            })
        }
        "tointeger" | "toint" => {
            let a = known!();
            arity(name, &a, 1, 1).map(|_| match &a[0] {
                Value::Int(i) => Value::Int(*i),
                Value::Float(f) if f.is_finite() && f.abs() < 9.2e18 => Value::Int(f.trunc() as i64),
                Value::String(s) => {
                    let t = s.trim();
                    t.parse::<i64>()
                        .map(Value::Int)
                        .or_else(|_| {
                            t.parse::<f64>().map(|f| {
                                if f.is_finite() && f.abs() < 9.2e18 {
                                    Value::Int(f as i64)
                                } else {
                                    Value::NULL
                                }
                            })
                        })
                        .unwrap_or(Value::NULL)
                }
                Value::Null(_) => Value::NULL,
                _ => Value::Null(NullKind::BadType),
            })
        }
        "hash" => {
            let a = known!();
            arity(name, &a, 1, 1).map(|_| match &a[0] {
                Value::String(s) => Value::Int(crate::murmur::nebula_hash(s.as_bytes())),
                Value::Int(i) => Value::Int(*i),
                Value::Bool(b) => Value::Int(*b as i64),
                Value::Float(f) => Value::Int(crate::murmur::nebula_hash(&f.to_le_bytes())),
                Value::Null(_) => Value::NULL,
                Value::Empty => Value::Empty,
                other => Value::Int(crate::murmur::nebula_hash(other.to_string().as_bytes())),
            })
        }
        "coalesce" => {
            let a = known!();
            Ok(a.into_iter().find(|v| !v.is_null_or_empty()).unwrap_or(Value::NULL))
        }
        "range" => {
            let a = known!();
            arity(name, &a, 2, 3).and_then(|_| {
                let ints: Vec<i64> =
                    a.iter().filter_map(|v| if let Value::Int(i) = v { Some(*i) } else { None }).collect();
                if ints.len() != a.len() {
                    return Ok(Value::Null(NullKind::BadType));
                }
                let step = ints.get(2).copied().unwrap_or(1);
                if step == 0 {
                    return Err(QError::semantic("`range()' step cannot be 0"));
                }
                let count = if (step > 0 && ints[1] >= ints[0]) || (step < 0 && ints[1] <= ints[0]) {
                    ((ints[1] as i128 - ints[0] as i128) / step as i128 + 1) as u128
                } else {
                    0
                };
                if count > crate::limits::LIST_LEN_MAX as u128 {
                    return Err(QError::semantic(format!(
                        "`range()' would build more than {} items",
                        crate::limits::LIST_LEN_MAX
                    )));
                }
                crate::memory::reserve(count as usize * std::mem::size_of::<Value>())?;
                Ok(Value::List((0..count as i64).map(|i| Value::Int(ints[0] + i * step)).collect()))
            })
        }
        "head" | "last" | "tail" => {
            let a = known!();
            arity(name, &a, 1, 1).map(|_| match &a[0] {
                Value::List(items) => match name {
                    "head" => items.first().cloned().unwrap_or(Value::NULL),
                    "last" => items.last().cloned().unwrap_or(Value::NULL),
                    _ => Value::List(items.iter().skip(1).cloned().collect()),
                },
                Value::Null(_) => Value::NULL,
                _ => Value::Null(NullKind::BadType),
            })
        }
        "keys" => {
            let a = known!();
            arity(name, &a, 1, 1).map(|_| match &a[0] {
                Value::Map(m) => Value::List(m.keys().map(|k| Value::str(k.clone())).collect()),
                Value::Edge(e) => Value::List(e.props.keys().map(|k| Value::str(k.clone())).collect()),
                Value::Vertex(v) => {
                    let mut keys: Vec<String> = v.tags.iter().flat_map(|t| t.props.keys().cloned()).collect();
                    keys.sort();
                    keys.dedup();
                    Value::List(keys.into_iter().map(Value::str).collect())
                }
                Value::Null(_) => Value::NULL,
                _ => Value::Null(NullKind::BadType),
            })
        }
        "id" => {
            let a = known!();
            arity(name, &a, 1, 1).map(|_| match &a[0] {
                Value::Vertex(v) => v.vid.clone(),
                Value::Null(_) => Value::NULL,
                Value::Empty => Value::Empty,
                _ => Value::Null(NullKind::BadType),
            })
        }
        "tags" | "labels" => {
            let a = known!();
            arity(name, &a, 1, 1).map(|_| match &a[0] {
                Value::Vertex(v) => Value::List(v.tags.iter().map(|t| Value::str(t.name.clone())).collect()),
                Value::Null(_) => Value::NULL,
                Value::Empty => Value::Empty,
                _ => Value::Null(NullKind::BadType),
            })
        }
        "properties" => {
            let a = known!();
            arity(name, &a, 1, 1).map(|_| match &a[0] {
                Value::Vertex(v) => {
                    let mut m = BTreeMap::new();
                    for t in &v.tags {
                        for (k, val) in &t.props {
                            m.insert(k.clone(), val.clone());
                        }
                    }
                    Value::Map(m)
                }
                Value::Edge(e) => Value::Map(e.props.clone()),
                Value::Map(m) => Value::Map(m.clone()),
                Value::Null(_) => Value::NULL,
                Value::Empty => Value::Empty,
                _ => Value::Null(NullKind::BadType),
            })
        }
        "src" | "dst" | "rank" | "type" => {
            let a = known!();
            arity(name, &a, 1, 1).map(|_| match &a[0] {
                Value::Edge(e) => {
                    let reversed = e.edge_type < 0;
                    // src()/dst() give the stored direction even when the edge was read reversely.
                    let (src, dst) = if reversed { (&e.dst, &e.src) } else { (&e.src, &e.dst) };
                    match name {
                        "src" => src.clone(),
                        "dst" => dst.clone(),
                        "rank" => Value::Int(e.ranking),
                        _ => Value::str(e.name.clone()),
                    }
                }
                Value::Null(_) => Value::NULL,
                Value::Empty => Value::Empty,
                _ => Value::Null(NullKind::BadType),
            })
        }
        "startnode" | "endnode" => {
            let a = known!();
            arity(name, &a, 1, 1).map(|_| match &a[0] {
                // As NebulaGraph: an edge's ends as vertices without tags, taken as the edge holds them (for an edge
                // read reversely, `src` is the vertex it was read from), unlike `src()` and `dst()`.
                Value::Edge(e) => {
                    let vid = if name == "startnode" { &e.src } else { &e.dst };
                    Value::Vertex(Arc::new(Vertex { vid: vid.clone(), tags: Vec::new() }))
                }
                Value::Path(p) => {
                    Value::Vertex(Arc::new(if name == "startnode" { p.src.clone() } else { p.end().clone() }))
                }
                Value::Null(_) => Value::NULL,
                Value::Empty => Value::Empty,
                _ => Value::Null(NullKind::BadType),
            })
        }
        "nodes" | "relationships" => {
            let a = known!();
            arity(name, &a, 1, 1).map(|_| match &a[0] {
                Value::Path(p) if name == "nodes" => {
                    Value::List(p.nodes().into_iter().map(|v| Value::Vertex(Arc::new(v))).collect())
                }
                Value::Path(p) => {
                    Value::List(p.relationships().into_iter().map(|e| Value::Edge(Arc::new(e))).collect())
                }
                Value::Null(_) => Value::NULL,
                _ => Value::Null(NullKind::BadType),
            })
        }
        // As NebulaGraph: anything but a path, NULL included, is BAD_TYPE.
        "hassameedgeinpath" | "hassamevertexinpath" | "reversepath" => {
            let a = known!();
            arity(name, &a, 1, 1).map(|_| match &a[0] {
                Value::Path(p) => match name {
                    "hassameedgeinpath" => Value::Bool(p.has_duplicate_edges()),
                    "hassamevertexinpath" => Value::Bool(p.has_duplicate_vertices()),
                    _ => Value::Path(Arc::new(p.reversed())),
                },
                _ => Value::Null(NullKind::BadType),
            })
        }
        "typeof" => {
            let a = known!();
            arity(name, &a, 1, 1).map(|_| Value::str(a[0].type_name()))
        }
        "now" => {
            let a = known!();
            arity(name, &a, 0, 0).map(|_| Value::Int(now_micros() / 1_000_000))
        }
        "timestamp" => {
            let a = known!();
            arity(name, &a, 0, 1).and_then(|_| match a.first() {
                None => Ok(Value::Int(now_micros() / 1_000_000)),
                Some(Value::Int(i)) => Ok(Value::Int(*i)),
                Some(Value::String(s)) => DateTime::parse(s)
                    .map(|d| Value::Int(d.to_timestamp()))
                    .ok_or_else(|| QError::semantic(format!("Invalid timestamp string `{s}'"))),
                Some(Value::DateTime(d)) => Ok(Value::Int(d.to_timestamp())),
                Some(Value::Null(_)) => Ok(Value::NULL),
                Some(_) => Ok(Value::Null(NullKind::BadType)),
            })
        }
        "date" => {
            let a = known!();
            arity(name, &a, 0, 1).and_then(|_| match a.first() {
                None => Ok(Value::Date(DateTime::from_micros(now_micros()).expect("clock in range").date)),
                Some(Value::String(s)) => Date::parse(s).map(Value::Date).ok_or_else(|| bad_literal("date", s)),
                Some(Value::Map(m)) => {
                    let y = map_int(m, "year", 1970)?;
                    let mo = map_int(m, "month", 1)?;
                    let d = map_int(m, "day", 1)?;
                    Date::new(y, mo, d)
                        .map(Value::Date)
                        .ok_or_else(|| bad_literal("date", &Value::Map(m.clone()).to_string()))
                }
                Some(Value::DateTime(dt)) => Ok(Value::Date(dt.date)),
                Some(Value::Date(d)) => Ok(Value::Date(*d)),
                Some(Value::Null(_)) => Ok(Value::NULL),
                Some(_) => Ok(Value::Null(NullKind::BadType)),
            })
        }
        "time" | "localtime" => {
            let a = known!();
            arity(name, &a, 0, 1).and_then(|_| match a.first() {
                None => Ok(Value::Time(Time::from_micros(now_micros()))),
                Some(Value::String(s)) => Time::parse(s).map(Value::Time).ok_or_else(|| bad_literal("time", s)),
                Some(Value::Map(m)) => Time::new(
                    map_int(m, "hour", 0)?,
                    map_int(m, "minute", 0)?,
                    map_int(m, "second", 0)?,
                    map_int(m, "millisecond", 0)? * 1000 + map_int(m, "microsecond", 0)?,
                )
                .map(Value::Time)
                .ok_or_else(|| bad_literal("time", &Value::Map(m.clone()).to_string())),
                Some(Value::DateTime(dt)) => Ok(Value::Time(dt.time)),
                Some(Value::Time(t)) => Ok(Value::Time(*t)),
                Some(Value::Null(_)) => Ok(Value::NULL),
                Some(_) => Ok(Value::Null(NullKind::BadType)),
            })
        }
        "datetime" | "localdatetime" => {
            let a = known!();
            arity(name, &a, 0, 1).and_then(|_| match a.first() {
                None => Ok(Value::DateTime(DateTime::from_micros(now_micros()).expect("clock in range"))),
                Some(Value::String(s)) => {
                    DateTime::parse(s).map(Value::DateTime).ok_or_else(|| bad_literal("datetime", s))
                }
                Some(Value::Int(ts)) => DateTime::from_timestamp(*ts)
                    .map(Value::DateTime)
                    .ok_or_else(|| bad_literal("datetime", &ts.to_string())),
                Some(Value::Map(m)) => {
                    let date = Date::new(map_int(m, "year", 1970)?, map_int(m, "month", 1)?, map_int(m, "day", 1)?);
                    let time = Time::new(
                        map_int(m, "hour", 0)?,
                        map_int(m, "minute", 0)?,
                        map_int(m, "second", 0)?,
                        map_int(m, "millisecond", 0)? * 1000 + map_int(m, "microsecond", 0)?,
                    );
                    match (date, time) {
                        (Some(date), Some(time)) => Ok(Value::DateTime(DateTime { date, time })),
                        _ => Err(bad_literal("datetime", &Value::Map(m.clone()).to_string())),
                    }
                }
                Some(Value::DateTime(dt)) => Ok(Value::DateTime(*dt)),
                Some(Value::Date(d)) => Ok(Value::DateTime(DateTime { date: *d, time: Time::from_micros(0) })),
                Some(Value::Null(_)) => Ok(Value::NULL),
                Some(_) => Ok(Value::Null(NullKind::BadType)),
            })
        }
        "duration" => {
            let a = known!();
            arity(name, &a, 1, 1).and_then(|_| match &a[0] {
                Value::Map(m) => {
                    // Summed in 64 bits with checks, then narrowed: a field too large for a duration is an error,
                    // not a wrapped value.
                    let (mut months, mut micros) = (0i64, 0i128);
                    for (k, v) in m {
                        let Value::Int(n) = v else {
                            return Err(QError::semantic(format!("Invalid duration field `{k}': {v}")));
                        };
                        let n = *n;
                        let (to_months, to_micros): (i64, i128) = match k.to_lowercase().as_str() {
                            "years" => (12, 0),
                            "months" => (1, 0),
                            "weeks" => (0, 7 * 86_400_000_000),
                            "days" => (0, 86_400_000_000),
                            "hours" => (0, 3_600_000_000),
                            "minutes" => (0, 60_000_000),
                            "seconds" => (0, 1_000_000),
                            "milliseconds" => (0, 1_000),
                            "microseconds" => (0, 1),
                            _ => return Err(QError::semantic(format!("Invalid duration field `{k}'"))),
                        };
                        months = n
                            .checked_mul(to_months)
                            .and_then(|x| months.checked_add(x))
                            .ok_or_else(duration_out_of_range)?;
                        micros += n as i128 * to_micros;
                    }
                    let months = i32::try_from(months).map_err(|_| duration_out_of_range())?;
                    let seconds = i64::try_from(micros.div_euclid(1_000_000)).map_err(|_| duration_out_of_range())?;
                    Ok(Value::Duration(Duration { months, seconds, microseconds: micros.rem_euclid(1_000_000) as i32 }))
                }
                Value::Null(_) => Ok(Value::NULL),
                _ => Ok(Value::Null(NullKind::BadType)),
            })
        }
        _ => return None,
    };
    Some(res)
}

fn duration_out_of_range() -> QError {
    QError::semantic("`duration': the value is out of range")
}

fn bad_literal(kind: &str, s: &str) -> QError {
    QError::semantic(format!("Invalid {kind} literal: `{s}'"))
}

fn map_int(m: &BTreeMap<String, Value>, key: &str, default: i64) -> QResult<i64> {
    match m.get(key) {
        None => Ok(default),
        Some(Value::Int(i)) => Ok(*i),
        Some(v) => Err(QError::semantic(format!("Invalid value for `{key}': {v}"))),
    }
}

/// The string form used by `toString()` and `concat()`: strings unquoted, everything else as printed.
/// `(type)v`, NebulaGraph's `TypeCastingExpression`: to BOOL, INT and FLOAT as `toBoolean`, `toInteger` and
/// `toFloat` convert; to STRING a string stays itself and any other value becomes its text (`NULL` too, and a
/// float without a forced `.0`); a cast to any other type is NULL.
pub fn cast(to: CastTo, v: Value) -> QResult<Value> {
    Ok(match to {
        CastTo::Bool => call_inner("toboolean", Some(vec![v])).expect("toboolean exists")?,
        CastTo::Int => call_inner("tointeger", Some(vec![v])).expect("tointeger exists")?,
        CastTo::Float => call_inner("tofloat", Some(vec![v])).expect("tofloat exists")?,
        CastTo::String => match v {
            Value::String(_) => v,
            Value::Float(x) => Value::str(format!("{x}")),
            Value::Null(NullKind::Null) => Value::str("NULL".to_string()),
            Value::Null(k) => Value::str(format!("__NULL_{k}__")),
            Value::Empty => Value::str("__EMPTY__".to_string()),
            other => Value::str(other.to_string()),
        },
        CastTo::Date | CastTo::Time | CastTo::DateTime | CastTo::Duration | CastTo::Geography => Value::NULL,
    })
}

fn plain_string(v: &Value) -> String {
    match v {
        Value::String(s) => s.to_string(),
        Value::Null(_) => "NULL".into(),
        other => other.to_string(),
    }
}

fn math1(name: &str, a: Vec<Value>) -> QResult<Value> {
    arity(name, &a, 1, 1)?;
    let v = &a[0];
    match v {
        Value::Null(_) => return Ok(Value::NULL),
        Value::Int(_) | Value::Float(_) => {}
        _ => return Ok(Value::Null(NullKind::BadType)),
    }
    if let Value::Int(i) = v {
        match name {
            "abs" => {
                return i
                    .checked_abs()
                    .map(Value::Int)
                    .ok_or_else(|| QError::semantic(format!("result of abs({i}) cannot be represented as an integer")))
            }
            "floor" | "ceil" | "round" => return Ok(Value::Float(*i as f64)),
            "sign" => return Ok(Value::Int(i.signum())),
            _ => {}
        }
    }
    let x = as_f64(v);
    Ok(match name {
        "abs" => Value::Float(x.abs()),
        "floor" => Value::Float(x.floor()),
        "ceil" => Value::Float(x.ceil()),
        "round" => Value::Float(x.round()),
        "sqrt" => Value::Float(x.sqrt()),
        "cbrt" => Value::Float(x.cbrt()),
        "exp" => Value::Float(x.exp()),
        "exp2" => Value::Float(x.exp2()),
        "log" => Value::Float(x.ln()),
        "log2" => Value::Float(x.log2()),
        "log10" => Value::Float(x.log10()),
        "sin" => Value::Float(x.sin()),
        "asin" => Value::Float(x.asin()),
        "cos" => Value::Float(x.cos()),
        "acos" => Value::Float(x.acos()),
        "tan" => Value::Float(x.tan()),
        "atan" => Value::Float(x.atan()),
        "radians" => Value::Float(x.to_radians()),
        "degrees" => Value::Float(x.to_degrees()),
        "sign" => Value::Int(if x > 0.0 {
            1
        } else if x < 0.0 {
            -1
        } else {
            0
        }),
        _ => unreachable!("math1 {name}"),
    })
}

fn string1(name: &str, a: Vec<Value>) -> QResult<Value> {
    arity(name, &a, 1, 1)?;
    Ok(match (name, &a[0]) {
        (_, Value::Null(_)) => Value::NULL,
        ("lower" | "tolower", Value::String(s)) => Value::str(s.to_lowercase()),
        ("upper" | "toupper", Value::String(s)) => Value::str(s.to_uppercase()),
        ("trim", Value::String(s)) => Value::str(s.trim().to_string()),
        ("ltrim", Value::String(s)) => Value::str(s.trim_start().to_string()),
        ("rtrim", Value::String(s)) => Value::str(s.trim_end().to_string()),
        ("reverse", Value::String(s)) => Value::str(s.chars().rev().collect::<String>()),
        ("reverse", Value::List(items)) => Value::List(items.iter().rev().cloned().collect()),
        ("length" | "size", Value::String(s)) => Value::Int(s.chars().count() as i64),
        ("length" | "size", Value::List(items) | Value::Set(items)) => Value::Int(items.len() as i64),
        // The number of steps (edges), not of vertices.
        ("length", Value::Path(p)) => Value::Int(p.len() as i64),
        ("size", Value::Map(m)) => Value::Int(m.len() as i64),
        (_, Value::Empty) => Value::Empty,
        _ => Value::Null(NullKind::BadType),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::{Edge, Path, Step, Tag};

    fn one(name: &str, arg: Value) -> Value {
        call(name, vec![arg]).unwrap_or_else(|e| panic!("{name}: {e:?}"))
    }

    fn bad_type() -> Value {
        Value::Null(NullKind::BadType)
    }

    fn vertex(vid: i64) -> Vertex {
        Vertex {
            vid: Value::Int(vid),
            tags: vec![Tag { name: "t".into(), props: BTreeMap::from([("p".to_string(), Value::Int(vid * 10))]) }],
        }
    }

    fn step(dst: i64, edge_type: i32) -> Step {
        Step {
            dst: vertex(dst),
            edge_type,
            name: "e".into(),
            ranking: 0,
            props: BTreeMap::from([("w".to_string(), Value::Int(dst))]),
        }
    }

    /// 1 -> 2 <- 3 (the edge 3 -> 2 walked against its direction).
    fn path() -> Value {
        Value::Path(Arc::new(Path { src: vertex(1), steps: vec![step(2, 7), step(3, -7)] }))
    }

    fn alone() -> Value {
        Value::Path(Arc::new(Path { src: vertex(1), steps: vec![] }))
    }

    fn vids(list: &Value) -> Vec<Value> {
        let Value::List(items) = list else { panic!("not a list: {list}") };
        items
            .iter()
            .map(|v| match v {
                Value::Vertex(v) => v.vid.clone(),
                other => panic!("not a vertex: {other}"),
            })
            .collect()
    }

    #[test]
    fn nodes_are_the_vertices_in_walk_order() {
        let nodes = one("nodes", path());
        assert_eq!(vids(&nodes), vec![Value::Int(1), Value::Int(2), Value::Int(3)]);
        // Whole vertices, tags and properties included.
        assert_eq!(nodes.to_string(), "[(1 :t{p: 10}), (2 :t{p: 20}), (3 :t{p: 30})]");
        assert_eq!(vids(&one("NODES", alone())), vec![Value::Int(1)]);
        assert_eq!(one("nodes", Value::NULL), Value::NULL);
        assert_eq!(one("nodes", Value::Empty), bad_type());
        assert_eq!(one("nodes", Value::List(vec![])), bad_type());
        assert!(call("nodes", vec![]).is_err());
    }

    #[test]
    fn relationships_are_the_steps_as_edges() {
        let rels = one("relationships", path());
        assert_eq!(rels.to_string(), r#"[[:e 1->2 @0 {w: 2}], [:e 3->2 @0 {w: 3}]]"#);
        let Value::List(items) = &rels else { panic!("{rels}") };
        let Value::Edge(back) = &items[1] else { panic!("{rels}") };
        // As NebulaGraph builds it: walk order, the step's negative type.
        assert_eq!(
            **back,
            Edge {
                src: Value::Int(2),
                dst: Value::Int(3),
                edge_type: -7,
                name: "e".into(),
                ranking: 0,
                props: BTreeMap::from([("w".to_string(), Value::Int(3))])
            }
        );
        // src() and dst() of it give the stored direction.
        assert_eq!(one("src", items[1].clone()), Value::Int(3));
        assert_eq!(one("dst", items[1].clone()), Value::Int(2));
        assert_eq!(one("relationships", alone()), Value::List(vec![]));
        assert_eq!(one("relationships", Value::NULL), Value::NULL);
        assert_eq!(one("relationships", Value::Empty), bad_type());
        assert_eq!(one("relationships", Value::Int(1)), bad_type());
    }

    #[test]
    fn length_of_a_path_counts_its_steps() {
        assert_eq!(one("length", path()), Value::Int(2));
        assert_eq!(one("length", alone()), Value::Int(0));
        // Strings and lists keep their length; size() of a path is BAD_TYPE, as in NebulaGraph.
        assert_eq!(one("length", Value::str("abc")), Value::Int(3));
        assert_eq!(one("length", Value::List(vec![Value::Int(1)])), Value::Int(1));
        assert_eq!(one("size", path()), bad_type());
        assert_eq!(one("length", Value::NULL), Value::NULL);
        assert_eq!(one("length", Value::Int(1)), bad_type());
    }

    #[test]
    fn start_and_end_nodes_of_paths_and_edges() {
        assert_eq!(one("startNode", path()), Value::Vertex(Arc::new(vertex(1))));
        assert_eq!(one("endNode", path()), Value::Vertex(Arc::new(vertex(3))));
        assert_eq!(one("endnode", alone()), Value::Vertex(Arc::new(vertex(1))));
        // An edge's ends are vertices without tags, as the edge holds them (NebulaGraph's `Vertex(edge.src, {})`).
        let Value::List(rels) = one("relationships", path()) else { unreachable!() };
        assert_eq!(one("startNode", rels[1].clone()).to_string(), "(2)");
        assert_eq!(one("endNode", rels[1].clone()).to_string(), "(3)");
        assert_eq!(one("startNode", Value::NULL), Value::NULL);
        assert_eq!(one("endNode", Value::Int(1)), bad_type());
        assert_eq!(one("startNode", Value::Vertex(Arc::new(vertex(1)))), bad_type());
    }

    #[test]
    fn has_same_edge_and_vertex_in_path() {
        assert_eq!(one("hasSameEdgeInPath", path()), Value::Bool(false));
        assert_eq!(one("hasSameVertexInPath", path()), Value::Bool(false));
        // 1 -> 2 then back over the same edge: the same edge and the same vertex twice.
        let there_and_back = Value::Path(Arc::new(Path { src: vertex(1), steps: vec![step(2, 7), step(1, -7)] }));
        assert_eq!(one("hassameedgeinpath", there_and_back.clone()), Value::Bool(true));
        assert_eq!(one("hassamevertexinpath", there_and_back), Value::Bool(true));
        // 1 -> 2 -> 1 over two edges: a vertex twice, no edge twice.
        let round = Value::Path(Arc::new(Path { src: vertex(1), steps: vec![step(2, 7), step(1, 7)] }));
        assert_eq!(one("hasSameEdgeInPath", round.clone()), Value::Bool(false));
        assert_eq!(one("hasSameVertexInPath", round), Value::Bool(true));
        assert_eq!(one("hasSameEdgeInPath", alone()), Value::Bool(false));
        assert_eq!(one("hasSameVertexInPath", alone()), Value::Bool(false));
        // Anything but a path is BAD_TYPE, NULL and EMPTY included.
        for f in ["hasSameEdgeInPath", "hasSameVertexInPath"] {
            assert_eq!(one(f, Value::NULL), bad_type(), "{f}");
            assert_eq!(one(f, Value::Empty), bad_type(), "{f}");
            assert_eq!(one(f, Value::List(vec![])), bad_type(), "{f}");
        }
    }

    #[test]
    fn reverse_path_walks_from_the_end() {
        let r = one("reversePath", path());
        assert_eq!(r.to_string(), "<(3 :t{p: 30})-[:e@0 {w: 3}]->(2 :t{p: 20})<-[:e@0 {w: 2}]-(1 :t{p: 10})>");
        assert_eq!(one("length", r.clone()), Value::Int(2));
        assert_eq!(one("reversepath", r), path());
        assert_eq!(one("reversePath", alone()), alone());
        assert_eq!(one("reversePath", Value::NULL), bad_type());
        assert_eq!(one("reversePath", Value::str("ab")), bad_type());
    }

    #[test]
    fn typeof_a_path() {
        assert_eq!(one("typeof", path()), Value::str("path"));
    }

    #[test]
    fn path_functions_exist() {
        for f in [
            "nodes",
            "relationships",
            "length",
            "startNode",
            "endNode",
            "hasSameEdgeInPath",
            "hasSameVertexInPath",
            "reversePath",
        ] {
            assert!(exists(f), "{f}");
        }
    }
}
