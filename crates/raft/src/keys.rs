//! Where a group's Raft state lives in the host's engine.
//!
//! Every key starts with `RAFT_PREFIX` (the 4 bytes of space id `u32::MAX`, which the catalog never hands out, so
//! no graph key can fall here), then a kind byte, then the group id (`u64` big-endian):
//!
//! | kind | rest of the key | value |
//! |---|---|---|
//! | `0x01` log | `index: u64 BE` | the entry ([`crate::codec::encode_entry`]) |
//! | `0x02` vote | | [`crate::codec::encode_vote`] |
//! | `0x03` committed | | a log id |
//! | `0x04` last purged | | a log id |
//! | `0x05` applied | | the applied log id and the last membership |
//!
//! Big-endian indexes keep a group's log contiguous and in order, so a range of entries is one range scan.

use crate::GroupId;

pub const RAFT_PREFIX: [u8; 4] = [0xff; 4];

pub const LOG: u8 = 0x01;
pub const VOTE: u8 = 0x02;
pub const COMMITTED: u8 = 0x03;
pub const PURGED: u8 = 0x04;
pub const APPLIED: u8 = 0x05;

/// The key of one of a group's records (`kind` other than [`LOG`]).
pub fn state_key(kind: u8, group: GroupId) -> Vec<u8> {
    let mut k = Vec::with_capacity(13);
    k.extend_from_slice(&RAFT_PREFIX);
    k.push(kind);
    k.extend_from_slice(&group.to_be_bytes());
    k
}

/// The key of a group's log entry at `index`.
pub fn log_key(group: GroupId, index: u64) -> Vec<u8> {
    let mut k = state_key(LOG, group);
    k.extend_from_slice(&index.to_be_bytes());
    k
}

/// The index of a log key.
pub fn log_index(key: &[u8]) -> Option<u64> {
    let tail: [u8; 8] = key.get(13..21)?.try_into().ok()?;
    Some(u64::from_be_bytes(tail))
}
