//! The key layout, after NebulaGraph's (see `docs/design/storage.md` for the bytes).
//!
//! Every key starts with `space_id: u32 BE | part_id: u32 BE | kind: u8`, so a partition's data is one contiguous
//! range (what a Raft snapshot of a partition will copy) and a space's data is one range (what DROP SPACE deletes).

use quiver_api::{SpaceDesc, VidType};
use quiver_common::murmur::murmur2_64a;
use quiver_common::{murmur::NEBULA_SEED, QError, QResult, Value};

pub const KIND_TAG: u8 = 0x01;
pub const KIND_EDGE: u8 = 0x02;
/// Secondary index entries (see [`crate::index`]).
pub const KIND_INDEX: u8 = 0x03;
/// The `SHOW STATS` counters of a partition (see [`crate::write::PartCounters`]).
pub const KIND_STATS: u8 = 0x05;
pub const KIND_VERTEX: u8 = 0x07;
/// A cluster partition's pending chains (TOSS primes, `docs/design/cluster.md` §7): writes to several partitions
/// that this one coordinates and has not finished. No read of the graph looks at them. (NebulaGraph's `kPrime`.)
pub const KIND_CHAIN: u8 = 0x08;
/// A cluster partition's fences: per coordinating partition, the last term whose chain wrote here (§7).
pub const KIND_FENCE: u8 = 0x0A;
/// The placeholder byte NebulaGraph reserves for MVCC at the end of an edge key.
pub const EDGE_VERSION: u8 = 0x01;

/// NebulaGraph's partition of a VID: an INT64 VID modulo the partition count; a string VID hashed with
/// MurmurHash2-64A first. Partitions are numbered from 1.
pub fn part_of(space: &SpaceDesc, vid: &Value) -> u32 {
    let h = match vid {
        Value::Int(i) => *i as u64,
        Value::String(s) => murmur2_64a(s.as_bytes(), NEBULA_SEED),
        other => panic!("VID of type {} reached storage unchecked", other.type_name()),
    };
    (h % space.partition_num as u64) as u32 + 1
}

pub fn encode_vid(space: &SpaceDesc, vid: &Value, out: &mut Vec<u8>) {
    match (space.vid_type, vid) {
        (VidType::Int64, Value::Int(i)) => out.extend_from_slice(&i.to_le_bytes()),
        (VidType::FixedString(n), Value::String(s)) => {
            assert!(s.len() <= n as usize, "VID longer than the space allows reached storage unchecked");
            out.extend_from_slice(s.as_bytes());
            out.resize(out.len() + n as usize - s.len(), 0);
        }
        _ => panic!("VID {vid} does not match the space's VID type (validated by the query layer)"),
    }
}

pub fn decode_vid(space: &SpaceDesc, bytes: &[u8]) -> QResult<Value> {
    match space.vid_type {
        VidType::Int64 => {
            Ok(Value::Int(i64::from_le_bytes(bytes.try_into().map_err(|_| QError::storage("bad VID length in key"))?)))
        }
        VidType::FixedString(_) => {
            let end = bytes.iter().position(|b| *b == 0).unwrap_or(bytes.len());
            String::from_utf8(bytes[..end].to_vec()).map(Value::str).map_err(|_| QError::storage("VID is not UTF-8"))
        }
    }
}

pub fn prefix(space_id: u32, part: u32, kind: u8) -> Vec<u8> {
    let mut k = Vec::with_capacity(64);
    k.extend_from_slice(&space_id.to_be_bytes());
    k.extend_from_slice(&part.to_be_bytes());
    k.push(kind);
    k
}

pub const PREFIX_LEN: usize = 9;

/// The record of chain `id` coordinated by partition `part` (ids sort in the order the chains began).
pub fn chain_key(space_id: u32, part: u32, id: u64) -> Vec<u8> {
    let mut k = prefix(space_id, part, KIND_CHAIN);
    k.extend_from_slice(&id.to_be_bytes());
    k
}

/// The fence in partition `part` of the chains that partition `coordinator` runs.
pub fn fence_key(space_id: u32, part: u32, coordinator: u32) -> Vec<u8> {
    let mut k = prefix(space_id, part, KIND_FENCE);
    k.extend_from_slice(&coordinator.to_be_bytes());
    k
}

pub fn vertex_key(space: &SpaceDesc, vid: &Value) -> Vec<u8> {
    let mut k = prefix(space.id, part_of(space, vid), KIND_VERTEX);
    encode_vid(space, vid, &mut k);
    k
}

/// Prefix of all tag rows of a vertex.
pub fn tag_prefix(space: &SpaceDesc, vid: &Value) -> Vec<u8> {
    let mut k = prefix(space.id, part_of(space, vid), KIND_TAG);
    encode_vid(space, vid, &mut k);
    k
}

pub fn tag_key(space: &SpaceDesc, vid: &Value, tag_id: i32) -> Vec<u8> {
    let mut k = tag_prefix(space, vid);
    k.extend_from_slice(&tag_id.to_be_bytes());
    k
}

pub fn tag_id_of_key(space: &SpaceDesc, key: &[u8]) -> i32 {
    let off = PREFIX_LEN + space.vid_type.key_len();
    i32::from_be_bytes(key[off..off + 4].try_into().expect("tag key length checked by prefix"))
}

fn flip_i32(v: i32) -> [u8; 4] {
    ((v as u32) ^ (1 << 31)).to_be_bytes()
}

fn flip_i64(v: i64) -> [u8; 8] {
    ((v as u64) ^ (1 << 63)).to_be_bytes()
}

/// Prefix of all edges stored under `vid` (out-edges, and in-edges under their negative type).
pub fn edge_prefix(space: &SpaceDesc, vid: &Value) -> Vec<u8> {
    let mut k = prefix(space.id, part_of(space, vid), KIND_EDGE);
    encode_vid(space, vid, &mut k);
    k
}

pub fn edge_type_prefix(space: &SpaceDesc, vid: &Value, edge_type: i32) -> Vec<u8> {
    let mut k = edge_prefix(space, vid);
    k.extend_from_slice(&flip_i32(edge_type));
    k
}

/// `from | edge_type | rank | to | version`, stored in the partition of `from`. An out-edge has `from = src` and a
/// positive type; its reverse copy has `from = dst` and the negative type.
pub fn edge_key(space: &SpaceDesc, from: &Value, edge_type: i32, rank: i64, to: &Value) -> Vec<u8> {
    let mut k = edge_type_prefix(space, from, edge_type);
    k.extend_from_slice(&flip_i64(rank));
    encode_vid(space, to, &mut k);
    k.push(EDGE_VERSION);
    k
}

/// Splits an edge key into `(edge_type, rank, to)`.
pub fn parse_edge_key(space: &SpaceDesc, key: &[u8]) -> QResult<(i32, i64, Value)> {
    let (et, rank, to) = parse_edge_key_raw(space, key)?;
    Ok((et, rank, decode_vid(space, to)?))
}

/// Splits an edge key into `(edge_type, rank, to key bytes)`.
pub fn parse_edge_key_raw<'k>(space: &SpaceDesc, key: &'k [u8]) -> QResult<(i32, i64, &'k [u8])> {
    let vl = space.vid_type.key_len();
    let off = PREFIX_LEN + vl;
    if key.len() != off + 4 + 8 + vl + 1 {
        return Err(QError::storage("bad edge key length"));
    }
    let et = (u32::from_be_bytes(key[off..off + 4].try_into().expect("len checked")) ^ (1 << 31)) as i32;
    let rank = (u64::from_be_bytes(key[off + 4..off + 12].try_into().expect("len checked")) ^ (1 << 63)) as i64;
    Ok((et, rank, &key[off + 12..off + 12 + vl]))
}

pub fn space_range(space_id: u32) -> (Vec<u8>, Vec<u8>) {
    (space_id.to_be_bytes().to_vec(), (space_id + 1).to_be_bytes().to_vec())
}

/// The keys of one partition of a space: `[space][part]` up to `[space][part + 1]` (what its Raft group owns).
pub fn part_range(space_id: u32, part: u32) -> (Vec<u8>, Vec<u8>) {
    let at = |p: u32| [space_id.to_be_bytes(), p.to_be_bytes()].concat();
    (at(part), at(part + 1))
}

/// The partition a key of space `space_id` lies in; `None` for a key of another space or too short to say.
pub fn part_of_key(space_id: u32, key: &[u8]) -> Option<u32> {
    if key.len() < 8 || key[..4] != space_id.to_be_bytes() {
        return None;
    }
    Some(u32::from_be_bytes(key[4..8].try_into().expect("four bytes")))
}
