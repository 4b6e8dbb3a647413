//! TTL: a tag or edge row whose `ttl_col` value plus `ttl_duration` seconds lies in the past is expired. Every read
//! path treats it as absent from that moment; a `SUBMIT JOB COMPACT` removes it physically through the key-value
//! engine's compaction filter (never a scan).
//!
//! As NebulaGraph: `ttl_duration = 0` never expires; a NULL in the TTL column never expires; each tag of a vertex
//! expires on its own, and a vertex whose every stored tag has expired is gone.
//!
//! The filter is armed only while a COMPACT job runs, and the job then recounts the space, so `SHOW STATS` (which
//! counts stored rows, as NebulaGraph's STATS job does) stays exact; RocksDB's own background compactions keep
//! expired rows until the next COMPACT job.

use crate::{codec, keys, now_secs, EmbeddedStorage};
use quiver_api::*;
use quiver_common::{QResult, Value};
use std::collections::HashMap;
use std::sync::Arc;

pub(crate) fn has_ttl(s: &SchemaDesc) -> bool {
    s.ttl_duration > 0 && !s.ttl_col.is_empty()
}

/// Whether a decoded row has expired at `now`.
pub(crate) fn expired(s: &SchemaDesc, props: &Props, now: i64) -> bool {
    if !has_ttl(s) {
        return false;
    }
    match props.get(&s.ttl_col) {
        // NebulaGraph adds in 64 bits and wraps (`checkDataExpiredForTTL`): a duration past the end of time
        // expires the row at once, as its TCK expects.
        Some(Value::Int(t)) => t.wrapping_add(s.ttl_duration) < now,
        _ => false,
    }
}

/// Whether a stored row has expired (decoding only its TTL column).
pub(crate) fn row_expired(s: &SchemaDesc, row: &[u8], now: i64) -> QResult<bool> {
    if !has_ttl(s) {
        return Ok(false);
    }
    let props = codec::decode_only(s, row, &|n| n == s.ttl_col)?;
    Ok(expired(s, &props, now))
}

impl EmbeddedStorage {
    /// The compaction filter of a COMPACT job of `space`: drops the expired tag rows and edges (both copies) of
    /// its tag and edge types with a TTL; keeps everything else, and anything it cannot decode.
    pub(crate) fn ttl_filter(&self, space: &SpaceDesc) -> Option<quiver_kv::CompactionFilter> {
        let catalog = self.catalog()?;
        let mut schemas: HashMap<(u8, i32), SchemaRef> = HashMap::new();
        for kind in [SchemaKind::Tag, SchemaKind::Edge] {
            for s in catalog.schemas(space, kind) {
                if has_ttl(&s) {
                    let k = if kind == SchemaKind::Tag { keys::KIND_TAG } else { keys::KIND_EDGE };
                    schemas.insert((k, s.id), s);
                }
            }
        }
        if schemas.is_empty() {
            return None;
        }
        let space = space.clone();
        let now = now_secs();
        let schemas = Arc::new(schemas);
        Some(Arc::new(move |key: &[u8], value: &[u8]| {
            if key.len() <= keys::PREFIX_LEN || key[..4] != space.id.to_be_bytes() {
                return false;
            }
            let id = match key[8] {
                keys::KIND_TAG if key.len() == keys::PREFIX_LEN + space.vid_type.key_len() + 4 => {
                    keys::tag_id_of_key(&space, key)
                }
                keys::KIND_EDGE => match keys::parse_edge_key_raw(&space, key) {
                    Ok((et, _, _)) => et.abs(),
                    Err(_) => return false,
                },
                _ => return false,
            };
            match schemas.get(&(key[8], id)) {
                Some(s) => row_expired(s, value, now).unwrap_or(false),
                None => false,
            }
        }))
    }
}
