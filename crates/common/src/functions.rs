//! The scalar function families of nGQL: math, string, conversion, date/time, `hash`, graph accessors (`id`,
//! `tags`, `properties`, `src`, `dst`, `rank`, `type`, `startNode`, `endNode`) and path functions (`nodes`,
//! `relationships`, `length`, `hasSameEdgeInPath`, `hasSameVertexInPath`, `reversePath`), and the geo functions
//! of [`crate::geo::functions`]. Names are case-insensitive.

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

/// Does the scalar function `name` take `n` arguments? NebulaGraph's parser resolves a call by its name and number
/// of arguments. Asked by calling it with `n` EMPTYs, which every function answers without side effects; only
/// the arity check's own refusal means no.
pub fn accepts(name: &str, n: usize) -> bool {
    let lower = name.to_lowercase();
    match call_inner(&lower, Some(vec![Value::Empty; n])) {
        None => false,
        Some(Err(e)) => !e.message.contains("parameters, but"),
        Some(Ok(_)) => true,
    }
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
    // Names are matched in lower case; most are written so already (no allocation per call, as per row).
    let lower = match name.chars().any(char::is_uppercase) {
        true => std::borrow::Cow::Owned(name.to_lowercase()),
        false => std::borrow::Cow::Borrowed(name),
    };
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
        "abs" | "floor" | "ceil" | "sqrt" | "cbrt" | "exp" | "exp2" | "log" | "log2" | "log10" | "sin" | "asin"
        | "cos" | "acos" | "tan" | "atan" | "sign" | "radians" | "degrees" => {
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
        geo if crate::geo::functions::arity(geo).is_some() => {
            let a = known!();
            let (min, max) = crate::geo::functions::arity(geo).expect("matched");
            arity(name, &a, min, max).map(|_| crate::geo::functions::call(geo, &a))
        }
        "round" => {
            let a = known!();
            arity(name, &a, 1, 3).map(|_| round(&a))
        }
        // The scalar `bit_and(a, b)`, `bit_or(a, b)` and `bit_xor(a, b)` (with one argument they are aggregates), as
        // NebulaGraph's `Value` operators `&`, `|` and `^`: a NULL on the left, or an EMPTY on the left beside a
        // right that is not NULL, is the result; then a NULL or EMPTY on the right; then both must be integers.
        "bit_and" | "bit_or" | "bit_xor" => {
            let a = known!();
            arity(name, &a, 2, 2).map(|_| match (&a[0], &a[1]) {
                (l @ Value::Null(_), _) => l.clone(),
                (Value::Empty, r) if !r.is_null() => Value::Empty,
                (_, r @ (Value::Null(_) | Value::Empty)) => r.clone(),
                (Value::Int(x), Value::Int(y)) => Value::Int(match name {
                    "bit_and" => x & y,
                    "bit_or" => x | y,
                    _ => x ^ y,
                }),
                _ => Value::Null(NullKind::BadType),
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
        // NebulaGraph's `uuid()` expression evaluates to the EMPTY it holds (and is refused where props are deduced).
        "uuid" => {
            let a = known!();
            arity(name, &a, 0, 0).map(|_| Value::Empty)
        }
        "rand" => {
            let a = known!();
            arity(name, &a, 0, 0).map(|_| Value::Float((next_rand() >> 11) as f64 / (1u64 << 53) as f64))
        }
        // As NebulaGraph (folly::Random): `rand32()` is any 32-bit integer, `rand64()` any 64-bit one; with bounds,
        // [0, max) or [min, max) (`rand32(0)` and `rand64(0)` give 0). A negative bound, a bound of rand32 beyond 32
        // bits unsigned, or `min >= max` is BAD_DATA; an argument that is not an integer BAD_TYPE.
        "rand32" | "rand64" => {
            let a = known!();
            arity(name, &a, 0, 2).map(|_| {
                let ints: Vec<i64> =
                    a.iter().filter_map(|v| if let Value::Int(i) = v { Some(*i) } else { None }).collect();
                if ints.len() != a.len() {
                    return Value::Null(NullKind::BadType);
                }
                let r = next_rand();
                let limit = if name == "rand32" { u32::MAX as i64 } else { i64::MAX };
                let (min, max) = match ints.as_slice() {
                    [] if name == "rand32" => return Value::Int((r >> 32) as u32 as i32 as i64),
                    [] => return Value::Int(r as i64),
                    [max] => (0, *max),
                    [min, max] if *min >= *max => return Value::Null(NullKind::BadData),
                    [min, max] => (*min, *max),
                    _ => unreachable!("at most two arguments"),
                };
                if min < 0 || max < 0 || min > limit || max > limit {
                    return Value::Null(NullKind::BadData);
                }
                let v = if min == max { 0 } else { min + (r % (max - min) as u64) as i64 };
                // NebulaGraph reads `rand32(max)` as a signed 32-bit value.
                Value::Int(if name == "rand32" && ints.len() == 1 { v as u32 as i32 as i64 } else { v })
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
                // A negative length is the empty string; anything but (string, int, string) is BAD_TYPE, NULL too.
                (Value::String(_), Value::Int(n), Value::String(_)) if *n < 0 => Value::str(""),
                (Value::String(s), Value::Int(n), Value::String(pad)) => {
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
        // As NebulaGraph: NULL if any argument is; in a string every occurrence of a substring, in a list every item
        // equal to the second argument, in a set that item (if it holds it).
        "replace" => {
            let a = known!();
            arity(name, &a, 3, 3).map(|_| match (&a[0], &a[1], &a[2]) {
                _ if a.iter().any(|v| v.is_null()) => Value::NULL,
                (Value::String(s), Value::String(from), Value::String(to)) => Value::str(s.replace(&**from, to)),
                (Value::List(items), from, to) => {
                    Value::List(items.iter().map(|v| if v == from { to.clone() } else { v.clone() }).collect())
                }
                (Value::Set(items), from, to) if items.contains(from) => {
                    Value::set_from(items.iter().filter(|v| *v != from).chain([to]).cloned().collect())
                }
                (Value::Set(_), _, _) => a[0].clone(),
                _ => Value::Null(NullKind::BadType),
            })
        }
        // As NebulaGraph: a list without the items equal to `v`, a set without `v`; anything else (NULL too) is
        // BAD_TYPE.
        "erase" => {
            let a = known!();
            arity(name, &a, 2, 2).map(|_| match &a[0] {
                Value::List(items) => Value::List(items.iter().filter(|v| **v != a[1]).cloned().collect()),
                Value::Set(items) => Value::Set(items.iter().filter(|v| **v != a[1]).cloned().collect()),
                _ => Value::Null(NullKind::BadType),
            })
        }
        // `setAdd(set, v)`: the set with `v`; anything but a set (NULL too) is BAD_TYPE.
        "setadd" => {
            let a = known!();
            arity(name, &a, 2, 2).map(|_| match &a[0] {
                Value::Set(items) => Value::set_from(items.iter().chain([&a[1]]).cloned().collect()),
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
        // C's `strcasecmp`, as NebulaGraph calls it: the difference of the first bytes that differ after ASCII
        // lower-casing (`strcasecmp("a", "aa")` is -97). Anything but two strings, NULL too, is BAD_TYPE.
        "strcasecmp" => {
            let a = known!();
            arity(name, &a, 2, 2).map(|_| match (&a[0], &a[1]) {
                (Value::String(x), Value::String(y)) => Value::Int(strcasecmp(x.as_bytes(), y.as_bytes())),
                _ => Value::Null(NullKind::BadType),
            })
        }
        // Every match of a regular expression in a string, left to right (NebulaGraph's `std::sregex_iterator`).
        "extract" => {
            let a = known!();
            arity(name, &a, 2, 2).and_then(|_| match (&a[0], &a[1]) {
                (Value::String(s), Value::String(pattern)) => {
                    let re = build_regex(pattern)?;
                    Ok(Value::List(re.find_iter(s).map(|m| Value::str(m.as_str())).collect()))
                }
                _ => Ok(Value::Null(NullKind::BadType)),
            })
        }
        "json_extract" => {
            let a = known!();
            arity(name, &a, 1, 1).map(|_| match &a[0] {
                Value::String(s) => json_extract(s),
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
        // The hex MD5 digest of a string (NebulaGraph's `md5`, proxygen's `md5Encode`).
        "md5" => {
            let a = known!();
            arity(name, &a, 1, 1).map(|_| match &a[0] {
                Value::String(s) => Value::str(format!("{:x}", md5::compute(s.as_bytes()))),
                Value::Null(_) => Value::NULL,
                _ => Value::Null(NullKind::BadType),
            })
        }
        "is_edge" => {
            let a = known!();
            arity(name, &a, 1, 1).map(|_| Value::Bool(matches!(a[0], Value::Edge(_))))
        }
        // Whether the first argument equals any of the others (NebulaGraph's `udf_is_in`).
        "udf_is_in" => {
            let a = known!();
            arity(name, &a, 2, usize::MAX).map(|_| Value::Bool(a[1..].contains(&a[0])))
        }
        // NebulaGraph's `cos_similarity(x1, ..., xn, y1, ..., yn)`: the cosine of the angle between the two vectors,
        // -2.0 (outside the cosine's range) for an odd number of arguments or a vector of length 0, BAD_TYPE for a
        // value that is not a number.
        "cos_similarity" => {
            let a = known!();
            arity(name, &a, 2, usize::MAX).map(|_| {
                if a.len() % 2 != 0 {
                    return Value::Float(-2.0);
                }
                let (x, y) = a.split_at(a.len() / 2);
                let (mut dot, mut xx, mut yy) = (0.0, 0.0, 0.0);
                for (x, y) in x.iter().zip(y) {
                    let (Some(x), Some(y)) = (number(x), number(y)) else {
                        return Value::Null(NullKind::BadType);
                    };
                    dot += x * y;
                    xx += x * x;
                    yy += y * y;
                }
                if xx.abs() <= K_EPSILON || yy.abs() <= K_EPSILON {
                    Value::Float(-2.0)
                } else {
                    Value::Float(dot / (xx.sqrt() * yy.sqrt()))
                }
            })
        }
        // NebulaGraph's `std::hash<Value>`, read as a signed integer; a time, duration, map or set is BAD_TYPE.
        "hash" => {
            let a = known!();
            arity(name, &a, 1, 1).map(|_| match &a[0] {
                Value::Time(_) | Value::Duration(_) | Value::Map(_) | Value::Set(_) => Value::Null(NullKind::BadType),
                v => Value::Int(nebula_hash(v) as i64),
            })
        }
        "toset" => {
            let a = known!();
            arity(name, &a, 1, 1).map(|_| match &a[0] {
                Value::Null(_) | Value::Empty => Value::NULL,
                Value::Set(_) => a[0].clone(),
                Value::List(items) => Value::set_from(items.clone()),
                _ => Value::Null(NullKind::BadType),
            })
        }
        // `exists(x.p)`, `exists(m["k"])`: whether the property or key is there with a value (NebulaGraph's
        // PredicateExpression; the parser admits only those argument forms).
        "exists" => {
            let a = known!();
            // Of something with no properties or keys (a list's `m.abc`), BAD_TYPE, as NebulaGraph answers.
            arity(name, &a, 1, 1).map(|_| match a[0] {
                Value::Null(NullKind::BadType) => Value::Null(NullKind::BadType),
                _ => Value::Bool(!a[0].is_null() && !matches!(a[0], Value::Empty)),
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
                    return Ok(Value::Null(NullKind::BadData));
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
        // The edge's signed type id: negative for an edge read against its direction.
        "typeid" => {
            let a = known!();
            arity(name, &a, 1, 1).map(|_| match &a[0] {
                Value::Edge(e) => Value::Int(e.edge_type as i64),
                Value::Null(_) => Value::NULL,
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
        // NebulaGraph's `none_direct_dst`/`none_direct_src`: the ends of an edge as it holds them, whichever way it
        // was read; of a vertex its VID; of a list of edges or vertices, the last's destination (or the first's
        // source); of an empty list the VID of the optional second argument, a vertex.
        "none_direct_dst" | "none_direct_src" => {
            let a = known!();
            let max = if name == "none_direct_dst" { 2 } else { 1 };
            arity(name, &a, 1, max).map(|_| {
                let dst = name == "none_direct_dst";
                let end = |v: &Value| match v {
                    Value::Edge(e) => (if dst { &e.dst } else { &e.src }).clone(),
                    Value::Vertex(v) => v.vid.clone(),
                    _ => Value::Null(NullKind::BadType),
                };
                match &a[0] {
                    Value::Null(_) => Value::NULL,
                    v @ (Value::Edge(_) | Value::Vertex(_)) => end(v),
                    Value::List(items) => match (if dst { items.last() } else { items.first() }, a.get(1)) {
                        (Some(v), _) => end(v),
                        (None, Some(Value::Vertex(v))) if dst => v.vid.clone(),
                        (None, _) => Value::Null(NullKind::BadType),
                    },
                    _ => Value::Null(NullKind::BadType),
                }
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
        // The date and time constructors return NULLs where NebulaGraph's do, never an error: BAD_DATA for a string
        // or map that is not a valid value, BAD_TYPE (BAD_DATA for `timestamp` and `datetime`) for an argument of
        // another type, NULL included.
        "timestamp" => {
            let a = known!();
            arity(name, &a, 0, 1).map(|_| {
                // NebulaGraph's `TimeUtils::toTimestamp`: whole seconds from 1970 up to i64::MAX / 10^9.
                let secs = match a.first() {
                    None => return Value::Int(now_micros() / 1_000_000),
                    Some(Value::Int(i)) => Some(*i),
                    Some(Value::String(s)) => {
                        DateTime::parse(s).filter(|d| d.time.microsec == 0).map(|d| d.to_timestamp())
                    }
                    Some(Value::DateTime(d)) => Some(d.to_timestamp()),
                    Some(_) => None,
                };
                match secs {
                    Some(t) if (0..=i64::MAX / 1_000_000_000).contains(&t) => Value::Int(t),
                    _ => Value::Null(NullKind::BadData),
                }
            })
        }
        "date" => {
            let a = known!();
            arity(name, &a, 0, 1).map(|_| match a.first() {
                None => Value::Date(DateTime::from_micros(now_micros()).expect("clock in range").date),
                Some(Value::String(s)) => Date::parse(s).map(Value::Date).unwrap_or(Value::Null(NullKind::BadData)),
                Some(Value::Map(m)) => temporal_from_map(m, &["year", "month", "day"])
                    .map(|t| Value::Date(t.date))
                    .unwrap_or(Value::Null(NullKind::BadData)),
                // Beyond NebulaGraph (which has BAD_TYPE): the date of a datetime.
                Some(Value::DateTime(dt)) => Value::Date(dt.date),
                Some(Value::Date(d)) => Value::Date(*d),
                Some(_) => Value::Null(NullKind::BadType),
            })
        }
        "time" | "localtime" => {
            let a = known!();
            arity(name, &a, 0, 1).map(|_| match a.first() {
                None => Value::Time(Time::from_micros(now_micros())),
                Some(Value::String(s)) => Time::parse(s).map(Value::Time).unwrap_or(Value::Null(NullKind::BadData)),
                Some(Value::Map(m)) => {
                    temporal_from_map(m, &["hour", "minute", "second", "millisecond", "microsecond"])
                        .map(|t| Value::Time(t.time))
                        .unwrap_or(Value::Null(NullKind::BadData))
                }
                // Beyond NebulaGraph (which has BAD_TYPE): the time of a datetime.
                Some(Value::DateTime(dt)) => Value::Time(dt.time),
                Some(Value::Time(t)) => Value::Time(*t),
                Some(_) => Value::Null(NullKind::BadType),
            })
        }
        "datetime" | "localdatetime" => {
            let a = known!();
            arity(name, &a, 0, 1).map(|_| match a.first() {
                None => Value::DateTime(DateTime::from_micros(now_micros()).expect("clock in range")),
                Some(Value::String(s)) => {
                    DateTime::parse(s).map(Value::DateTime).unwrap_or(Value::Null(NullKind::BadData))
                }
                Some(Value::Int(ts)) => {
                    DateTime::from_timestamp(*ts).map(Value::DateTime).unwrap_or(Value::Null(NullKind::BadData))
                }
                Some(Value::Map(m)) => temporal_from_map(
                    m,
                    &["year", "month", "day", "hour", "minute", "second", "millisecond", "microsecond"],
                )
                .map(Value::DateTime)
                .unwrap_or(Value::Null(NullKind::BadData)),
                // Beyond NebulaGraph: a datetime, or a date at midnight.
                Some(Value::DateTime(dt)) => Value::DateTime(*dt),
                Some(Value::Date(d)) => Value::DateTime(DateTime { date: *d, time: Time::from_micros(0) }),
                Some(_) => Value::Null(NullKind::BadData),
            })
        }
        // NebulaGraph's `TimeUtils::durationFromMap`: integer fields, names as written; another field or value is
        // BAD_DATA. A total too large for a duration is an error (NebulaGraph's fields would wrap around).
        "duration" => {
            let a = known!();
            arity(name, &a, 1, 1).and_then(|_| match &a[0] {
                Value::Map(m) => {
                    let (mut months, mut micros) = (0i64, 0i128);
                    for (k, v) in m {
                        let Value::Int(n) = v else {
                            return Ok(Value::Null(NullKind::BadData));
                        };
                        let n = *n;
                        let (to_months, to_micros): (i64, i128) = match k.as_str() {
                            "years" => (12, 0),
                            "quarters" => (3, 0),
                            "months" => (1, 0),
                            "weeks" => (0, 7 * 86_400_000_000),
                            "days" => (0, 86_400_000_000),
                            "hours" => (0, 3_600_000_000),
                            "minutes" => (0, 60_000_000),
                            "seconds" => (0, 1_000_000),
                            "milliseconds" => (0, 1_000),
                            "microseconds" => (0, 1),
                            _ => return Ok(Value::Null(NullKind::BadData)),
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

/// NebulaGraph's `TimeUtils::dateFromMap`, `timeFromMap` and `dateTimeFromMap`: only the `keys` given, each an
/// integer in its range (`millisecond` and `microsecond` 0 to 999, added up), the others as in year 0, January 1,
/// midnight; the date must exist. `None` where NebulaGraph has an error status (the function's BAD_DATA).
fn temporal_from_map(m: &BTreeMap<String, Value>, keys: &[&str]) -> Option<DateTime> {
    let (mut year, mut month, mut day, mut hour, mut minute, mut second, mut micro) = (0, 1, 1, 0, 0, 0, 0);
    for (k, v) in m {
        let Value::Int(n) = v else { return None };
        let n = *n;
        if !keys.contains(&k.as_str()) {
            return None;
        }
        let (field, range) = match k.as_str() {
            "year" => (&mut year, -32768..=32767),
            "month" => (&mut month, 1..=12),
            "day" => (&mut day, 1..=31),
            "hour" => (&mut hour, 0..=23),
            "minute" => (&mut minute, 0..=59),
            "second" => (&mut second, 0..=59),
            "millisecond" if (0..=999).contains(&n) => {
                micro += n * 1000;
                continue;
            }
            "microsecond" if (0..=999).contains(&n) => {
                micro += n;
                continue;
            }
            _ => return None,
        };
        if !range.contains(&n) {
            return None;
        }
        *field = n;
    }
    Some(DateTime { date: Date::new(year, month, day)?, time: Time::new(hour, minute, second, micro)? })
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

/// NebulaGraph's `round(x[, precision[, mode]])`, always a float. With a precision, `x * 10^precision` is rounded
/// in the mode (HALF_UP unless a third argument that is a string says otherwise; the name in any case) and divided
/// back; each mode's arithmetic is FunctionManager's, its quirks included (HALF_EVEN takes a negative tie away from
/// zero). An unknown mode or a precision that is not an integer is BAD_TYPE.
fn round(a: &[Value]) -> Value {
    let val = match &a[0] {
        Value::Null(_) => return Value::NULL,
        Value::Int(i) => *i as f64,
        Value::Float(f) => *f,
        _ => return Value::Null(NullKind::BadType),
    };
    if a.len() == 1 {
        return Value::Float(val.round());
    }
    let Value::Int(precision) = a[1] else { return Value::Null(NullKind::BadType) };
    let factor = 10f64.powf(precision as f64);
    let mode = match a.get(2) {
        Some(Value::String(m)) => m.as_str(),
        _ => "half_up",
    };
    let scaled = val * factor;
    let fraction = scaled.fract().abs();
    Value::Float(match mode.to_ascii_lowercase().as_str() {
        "up" => {
            let r = scaled.round() / factor;
            if val < 0.0 && r > val {
                r - 1.0 / factor
            } else if val > 0.0 && r < val {
                r + 1.0 / factor
            } else {
                r
            }
        }
        "down" => {
            let r = scaled.round() / factor;
            if val < 0.0 && r < val {
                r + 1.0 / factor
            } else if val > 0.0 && r > val {
                r - 1.0 / factor
            } else {
                r
            }
        }
        "ceiling" => scaled.ceil() / factor,
        "floor" => scaled.floor() / factor,
        "half_up" => scaled.round() / factor,
        "half_down" => {
            if (fraction <= 0.5 && val < 0.0) || (fraction > 0.5 && val > 0.0) {
                scaled.ceil() / factor
            } else {
                scaled.floor() / factor
            }
        }
        "half_even" => {
            if (fraction == 0.5 && (scaled - 0.5) % 2.0 == 1.0)
                || (fraction > 0.5 && val > 0.0)
                || (fraction < 0.5 && val < 0.0)
            {
                scaled.ceil() / factor
            } else {
                scaled.floor() / factor
            }
        }
        _ => return Value::Null(NullKind::BadType),
    })
}

/// glibc's `strcasecmp` over C strings (up to a NUL byte): `tolower(c1) - tolower(c2)` at the first difference.
fn strcasecmp(x: &[u8], y: &[u8]) -> i64 {
    for i in 0.. {
        let c1 = x.get(i).copied().unwrap_or(0).to_ascii_lowercase();
        let c2 = y.get(i).copied().unwrap_or(0).to_ascii_lowercase();
        if c1 != c2 || c1 == 0 {
            return c1 as i64 - c2 as i64;
        }
    }
    unreachable!("a C string ends")
}

/// A regular expression for `extract()`, under the same limits as `=~`.
fn build_regex(pattern: &str) -> QResult<regex::Regex> {
    if pattern.len() > crate::limits::REGEX_BYTES_MAX {
        return Err(QError::semantic(format!(
            "Regular expression longer than {} bytes",
            crate::limits::REGEX_BYTES_MAX
        )));
    }
    regex::RegexBuilder::new(pattern)
        .size_limit(crate::limits::REGEX_COMPILED_BYTES_MAX)
        .build()
        .map_err(|_| QError::semantic(format!("Invalid regular expression `{pattern}'")))
}

/// NebulaGraph's `json_extract(s)`: a JSON object as a map (`Map(folly::dynamic)`). Strings, integers, floats and
/// booleans are kept, `null` becomes EMPTY, a nested object becomes a map of its own strings, numbers and booleans
/// (anything deeper is dropped), and arrays are dropped. Text that is not a JSON object is BAD_DATA, and so is an
/// integer past i64 (folly has no fallback to double; serde_json reads one past u64 as a float, though).
fn json_extract(s: &str) -> Value {
    use serde_json::Value as J;
    fn scalar(v: &J) -> Option<Result<Value, ()>> {
        Some(Ok(match v {
            J::String(s) => Value::str(s.as_str()),
            J::Bool(b) => Value::Bool(*b),
            J::Number(n) => match (n.as_i64(), n.is_f64()) {
                (Some(i), _) => Value::Int(i),
                (None, true) => Value::Float(n.as_f64()?),
                (None, false) => return Some(Err(())),
            },
            _ => return None,
        }))
    }
    let Ok(J::Object(obj)) = serde_json::from_str::<J>(s) else { return Value::Null(NullKind::BadData) };
    let mut map = BTreeMap::new();
    for (k, v) in &obj {
        let item = match v {
            J::Null => Value::Empty,
            J::Array(_) => continue,
            J::Object(inner) => {
                let mut nested = BTreeMap::new();
                for (nk, nv) in inner {
                    match scalar(nv) {
                        Some(Ok(x)) => {
                            nested.insert(nk.clone(), x);
                        }
                        Some(Err(())) => return Value::Null(NullKind::BadData),
                        None => {}
                    }
                }
                Value::Map(nested)
            }
            _ => match scalar(v) {
                Some(Ok(x)) => x,
                _ => return Value::Null(NullKind::BadData),
            },
        };
        map.insert(k.clone(), item);
    }
    Value::Map(map)
}

/// One FNV-1 multiplication by the 64-bit FNV prime, written as folly writes it (shifts and adds).
fn fnv_mul(hash: u64) -> u64 {
    [0u32, 1, 4, 5, 7, 8, 40].iter().fold(0u64, |acc, &k| acc.wrapping_add(hash << k))
}

/// folly's `fnv64_buf`: FNV-1 over bytes read as signed chars.
fn fnv64(bytes: &[u8], hash: u64) -> u64 {
    bytes.iter().fold(hash, |hash, &b| fnv_mul(hash) ^ (b as i8 as i64 as u64))
}

/// NebulaGraph's `kEpsilon`: floats closer to 0 than this are 0 to its functions.
const K_EPSILON: f64 = 1e-8;

/// An int or a float as a float; `None` for anything else.
fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Int(i) => Some(*i as f64),
        Value::Float(f) => Some(*f),
        _ => None,
    }
}

const FNV64_START: u64 = 14_695_981_039_346_656_037;

/// `hv` mixed with `h` as NebulaGraph's `Vertex` and `Path` hashes do (one FNV-1 step of a whole word).
fn fnv64_mix(hv: u64, h: u64) -> u64 {
    fnv_mul(hv) ^ h
}

/// boost's `hash_combine` step, as NebulaGraph's `List`, `Set` and `Map` hashes use it.
fn hash_combine(seed: u64, h: u64) -> u64 {
    seed ^ h.wrapping_add(0x9e37_79b9).wrapping_add(seed << 6).wrapping_add(seed >> 2)
}

/// NebulaGraph's `Value::toString` of a vid (a string in double quotes, unescaped).
fn vid_text(v: &Value) -> String {
    match v {
        Value::String(s) => format!("\"{s}\""),
        other => other.to_string(),
    }
}

fn vertex_hash(v: &Vertex) -> u64 {
    // NebulaGraph mixes in the tags in the vertex's order; Quiver keeps them sorted by name.
    v.tags.iter().fold(fnv64(vid_text(&v.vid).as_bytes(), FNV64_START), |hv, t| {
        fnv64_mix(hv, fnv64(t.name.as_bytes(), FNV64_START))
    })
}

/// NebulaGraph's `std::hash<Value>`: an integer is itself, a string libstdc++'s `std::hash<std::string>`
/// (MurmurHash2-64A), anything else `Value::hash()`: NULL `~0`, EMPTY 0, a float libstdc++'s hash of a double (0
/// for zero), a date FNV-1 of its fields, a datetime its packed 64-bit word, a list its items combined (a list of
/// one item hashes as that item). A map or set is combined in Quiver's order (NebulaGraph's is its hash table's).
fn nebula_hash(v: &Value) -> u64 {
    match v {
        Value::Empty => 0,
        Value::Null(_) => !0,
        Value::Bool(b) => *b as u64,
        Value::Int(i) => *i as u64,
        Value::Float(f) if *f == 0.0 => 0,
        Value::Float(f) => crate::murmur::murmur2_64a(&f.to_le_bytes(), crate::murmur::NEBULA_SEED),
        Value::String(s) => crate::murmur::murmur2_64a(s.as_bytes(), crate::murmur::NEBULA_SEED),
        Value::Date(d) => {
            let hv = fnv64(&d.year.to_le_bytes(), FNV64_START);
            let hv = fnv64(&[d.month], hv);
            fnv64(&[d.day], hv)
        }
        Value::Time(t) => {
            let hv = fnv64(&[t.hour], FNV64_START);
            let hv = fnv64(&[t.minute], hv);
            let hv = fnv64(&[t.sec], hv);
            fnv64(&(t.microsec as i32).to_le_bytes(), hv)
        }
        // `DateTime::qword`: the bit fields from the low end, year 16 bits, month 4, day 5, hour 5, minute 6,
        // second 6, microsecond 22.
        Value::DateTime(dt) => {
            (dt.date.year as u16 as u64)
                | (dt.date.month as u64) << 16
                | (dt.date.day as u64) << 20
                | (dt.time.hour as u64) << 25
                | (dt.time.minute as u64) << 30
                | (dt.time.sec as u64) << 36
                | (dt.time.microsec as u64) << 42
        }
        // NebulaGraph's own hash of a duration reads through a wrong pointer; any stable value does here.
        Value::Duration(d) => {
            let hv = fnv64(&d.months.to_le_bytes(), FNV64_START);
            let hv = fnv64(&d.seconds.to_le_bytes(), hv);
            fnv64(&d.microseconds.to_le_bytes(), hv)
        }
        // `std::hash<Geography>`: the string hash of its WKB.
        Value::Geography(g) => crate::murmur::murmur2_64a(&g.to_wkb(), crate::murmur::NEBULA_SEED),
        Value::List(items) if items.len() == 1 => nebula_hash(&items[0]),
        Value::List(items) | Value::Set(items) => items.iter().fold(0, |seed, v| hash_combine(seed, nebula_hash(v))),
        Value::Map(m) => m.iter().fold(0, |seed, (k, v)| {
            let seed = hash_combine(seed, crate::murmur::murmur2_64a(k.as_bytes(), crate::murmur::NEBULA_SEED));
            hash_combine(seed, nebula_hash(v))
        }),
        Value::Vertex(v) => vertex_hash(v),
        // Keyed by the stored direction: source, destination, the positive type, the rank.
        Value::Edge(e) => {
            let (src, dst) = if e.edge_type > 0 { (&e.src, &e.dst) } else { (&e.dst, &e.src) };
            let hv = fnv64(vid_text(src).as_bytes(), FNV64_START);
            let hv = fnv64(vid_text(dst).as_bytes(), hv);
            let hv = fnv64(&e.edge_type.wrapping_abs().to_le_bytes(), hv);
            fnv64(&e.ranking.to_le_bytes(), hv)
        }
        Value::Path(p) => p.steps.iter().fold(vertex_hash(&p.src), |hv, s| {
            let step = fnv64(&s.edge_type.to_le_bytes(), vertex_hash(&s.dst));
            fnv64_mix(hv, fnv64(&s.ranking.to_le_bytes(), step))
        }),
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
            "floor" | "ceil" => return Ok(Value::Float(*i as f64)),
            "sign" => return Ok(Value::Int(i.signum())),
            _ => {}
        }
    }
    let x = as_f64(v);
    // NebulaGraph's logarithms of 0 (or of a float within kEpsilon of it) are NULL, not -inf.
    if matches!(name, "log" | "log2" | "log10") && x.abs() <= K_EPSILON {
        return Ok(Value::NULL);
    }
    Ok(match name {
        "abs" => Value::Float(x.abs()),
        "floor" => Value::Float(x.floor()),
        "ceil" => Value::Float(x.ceil()),
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
        // ASCII letters only, as NebulaGraph's `folly::toLowerAscii` and C-locale `toupper` change them.
        ("lower" | "tolower", Value::String(s)) => Value::str(s.to_ascii_lowercase()),
        ("upper" | "toupper", Value::String(s)) => Value::str(s.to_ascii_uppercase()),
        ("trim", Value::String(s)) => Value::str(s.trim().to_string()),
        ("ltrim", Value::String(s)) => Value::str(s.trim_start().to_string()),
        ("rtrim", Value::String(s)) => Value::str(s.trim_end().to_string()),
        ("reverse", Value::String(s)) => Value::str(s.chars().rev().collect::<String>()),
        ("reverse", Value::List(items)) => Value::List(items.iter().rev().cloned().collect()),
        // Bytes, as NebulaGraph counts them (`std::string::size()`).
        ("length" | "size", Value::String(s)) => Value::Int(s.len() as i64),
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

    fn edge(src: Value, dst: Value, edge_type: i32, ranking: i64) -> Value {
        Value::Edge(Arc::new(Edge { src, dst, edge_type, name: "e".into(), ranking, props: BTreeMap::new() }))
    }

    // Expected hashes from a python3 port of folly's fnv64_buf and NebulaGraph's Vertex/Edge/Path hashes.
    #[test]
    fn hash_of_graph_values() {
        let v = |vid: Value, tags: &[&str]| {
            Value::Vertex(Arc::new(Vertex {
                vid,
                tags: tags.iter().map(|t| Tag { name: t.to_string(), props: BTreeMap::new() }).collect(),
            }))
        };
        assert_eq!(one("hash", v(Value::str("a"), &["t"])), Value::Int(-2244017690871846885));
        assert_eq!(one("hash", v(Value::Int(1), &["t", "u"])), Value::Int(-7617236739802196391));
        // An edge hashes by its stored direction: read either way, the same.
        let e = edge(Value::str("a"), Value::str("b"), 5, 0);
        assert_eq!(one("hash", e), Value::Int(8958494945550756117));
        assert_eq!(one("hash", edge(Value::str("b"), Value::str("a"), -5, 0)), Value::Int(8958494945550756117));
        assert_eq!(one("hash", edge(Value::Int(1), Value::Int(2), 7, -3)), Value::Int(-1811720392476838377));
        assert_eq!(one("hash", path()), Value::Int(479670251587533531));
        // A time is BAD_TYPE alone, hashed inside a list (a list of one item hashes as the item).
        let t = Value::Time(Time::new(12, 31, 14, 222).unwrap());
        assert_eq!(one("hash", t.clone()), bad_type());
        assert_eq!(one("hash", Value::List(vec![t])), Value::Int(-3147170812409395042));
        assert_eq!(one("hash", Value::Empty), Value::Int(0));
    }

    #[test]
    fn typeid_is_the_signed_edge_type() {
        assert_eq!(one("typeid", edge(Value::Int(1), Value::Int(2), 7, 0)), Value::Int(7));
        assert_eq!(one("typeId", edge(Value::Int(2), Value::Int(1), -7, 0)), Value::Int(-7));
        assert_eq!(one("typeid", Value::NULL), Value::NULL);
        assert_eq!(one("typeid", Value::Empty), bad_type());
    }

    #[test]
    fn strcasecmp_stops_at_a_nul_byte() {
        assert_eq!(call("strcasecmp", vec![Value::str("a\0b"), Value::str("A\0c")]).unwrap(), Value::Int(0));
        assert_eq!(call("strcasecmp", vec![Value::str("ab"), Value::str("a")]).unwrap(), Value::Int(98));
    }

    #[test]
    fn extract_matches_and_errors() {
        let x = |s: &str, p: &str| call("extract", vec![Value::str(s), Value::str(p)]);
        // Empty matches count, one at each position, as std::sregex_iterator finds them.
        assert_eq!(x("abc", "x*").unwrap(), Value::List(vec![Value::str(""); 4]));
        assert!(x("abc", "(").is_err());
        assert!(call("extract", vec![Value::str("a")]).is_err());
    }

    #[test]
    fn json_extract_null_is_empty() {
        let m = one("json_extract", Value::str(r#"{"a": null, "b": {"c": null, "d": 1, "e": [1]}, "f": -0.5}"#));
        let Value::Map(m) = m else { panic!("{m}") };
        assert_eq!(m["a"], Value::Empty);
        assert_eq!(m["b"], Value::Map(BTreeMap::from([("d".to_string(), Value::Int(1))])));
        assert_eq!(m["f"], Value::Float(-0.5));
        assert_eq!(one("json_extract", Value::str("")), Value::Null(NullKind::BadData));
        assert_eq!(one("json_extract", Value::str("1")), Value::Null(NullKind::BadData));
    }

    #[test]
    fn bit_functions_take_nulls_and_empties_as_nebula_does() {
        let b = |l: Value, r: Value| call("bit_or", vec![l, r]).unwrap();
        assert_eq!(b(Value::Null(NullKind::BadData), Value::Empty), Value::Null(NullKind::BadData));
        assert_eq!(b(Value::Empty, Value::Int(1)), Value::Empty);
        assert_eq!(b(Value::Empty, Value::NULL), Value::NULL);
        assert_eq!(b(Value::Int(1), Value::Empty), Value::Empty);
        assert_eq!(b(Value::Int(1), Value::Int(2)), Value::Int(3));
        assert!(call("bit_xor", vec![Value::Int(1)]).is_err());
        assert!(exists("BIT_AND"));
    }

    #[test]
    fn negated_duration_prints_as_nebula() {
        let d = one("duration", Value::Map(BTreeMap::from([("milliseconds".to_string(), Value::Int(500))])));
        let Value::Duration(d) = d else { panic!("{d}") };
        assert_eq!(d.to_string(), "P0MT0.500000000S");
        assert_eq!(d.negate().to_string(), "P0MT0.-500000000S");
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
