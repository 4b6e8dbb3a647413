//! The byte formats of a group's Raft state (docs/design/cluster.md, "Raft layout and byte formats").
//!
//! Integers are little-endian. Decoding is bounded by the bytes present: a length is checked against what is left
//! before anything is allocated, so a damaged record is an error, never a huge allocation or a panic. The engine
//! checksums its own log and files (RocksDB's WAL records and blocks), so records carry no checksum of their own.

use std::collections::{BTreeMap, BTreeSet};

use openraft::{CommittedLeaderId, EntryPayload, Membership, StoredMembership, Vote};
use quiver_kv::{WriteBatch, WriteOp};

use crate::{BasicNode, Command, LogId, NodeId, TypeConfig};

/// The version byte every entry starts with.
pub const FORMAT: u8 = 1;

/// Snapshot chunks on the wire: NebulaGraph's 512 KiB snapshot batches.
pub const SNAPSHOT_CHUNK_BYTES: u64 = 512 * 1024;

const KIND_BLANK: u8 = 0;
const KIND_MEMBERSHIP: u8 = 1;
const KIND_WRITE: u8 = 2;
const KIND_FENCED: u8 = 3;

const OP_PUT: u8 = 1;
const OP_DELETE: u8 = 2;
const OP_DELETE_RANGE: u8 = 3;

pub type Entry = openraft::Entry<TypeConfig>;

#[derive(Debug, thiserror::Error, PartialEq)]
#[error("damaged raft record: {0}")]
pub struct DecodeError(pub String);

fn damaged(what: &str) -> DecodeError {
    DecodeError(what.to_string())
}

/// Reads fields off a byte slice, refusing to read past its end.
pub struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader { bytes }
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], DecodeError> {
        if self.bytes.len() < n {
            return Err(DecodeError(format!("{what}: {n} bytes needed, {} left", self.bytes.len())));
        }
        let (head, tail) = self.bytes.split_at(n);
        self.bytes = tail;
        Ok(head)
    }

    pub fn u8(&mut self, what: &str) -> Result<u8, DecodeError> {
        Ok(self.take(1, what)?[0])
    }

    pub fn u16(&mut self, what: &str) -> Result<u16, DecodeError> {
        Ok(u16::from_le_bytes(self.take(2, what)?.try_into().expect("2 bytes")))
    }

    pub fn u32(&mut self, what: &str) -> Result<u32, DecodeError> {
        Ok(u32::from_le_bytes(self.take(4, what)?.try_into().expect("4 bytes")))
    }

    pub fn u64(&mut self, what: &str) -> Result<u64, DecodeError> {
        Ok(u64::from_le_bytes(self.take(8, what)?.try_into().expect("8 bytes")))
    }

    /// A `u32` length, then that many bytes.
    pub fn bytes(&mut self, what: &str) -> Result<&'a [u8], DecodeError> {
        let n = self.u32(what)? as usize;
        self.take(n, what)
    }

    /// A count of items each at least `min_bytes` long, refused when the bytes left cannot hold them.
    pub fn count(&mut self, min_bytes: usize, what: &str) -> Result<usize, DecodeError> {
        let n = self.u32(what)? as usize;
        if n.saturating_mul(min_bytes) > self.bytes.len() {
            return Err(DecodeError(format!("{what}: {n} items cannot fit in {} bytes", self.bytes.len())));
        }
        Ok(n)
    }
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    out.extend_from_slice(&(b.len() as u32).to_le_bytes());
    out.extend_from_slice(b);
}

pub fn encode_log_id(out: &mut Vec<u8>, id: &LogId) {
    out.extend_from_slice(&id.leader_id.term.to_le_bytes());
    out.extend_from_slice(&id.leader_id.node_id.to_le_bytes());
    out.extend_from_slice(&id.index.to_le_bytes());
}

pub fn decode_log_id(r: &mut Reader<'_>) -> Result<LogId, DecodeError> {
    let term = r.u64("log id term")?;
    let node = r.u64("log id node")?;
    let index = r.u64("log id index")?;
    Ok(LogId::new(CommittedLeaderId::new(term, node), index))
}

pub fn encode_opt_log_id(out: &mut Vec<u8>, id: &Option<LogId>) {
    match id {
        None => out.push(0),
        Some(id) => {
            out.push(1);
            encode_log_id(out, id);
        }
    }
}

pub fn decode_opt_log_id(r: &mut Reader<'_>) -> Result<Option<LogId>, DecodeError> {
    match r.u8("log id presence")? {
        0 => Ok(None),
        1 => Ok(Some(decode_log_id(r)?)),
        b => Err(DecodeError(format!("log id presence byte {b}"))),
    }
}

pub fn encode_vote(vote: &Vote<NodeId>) -> Vec<u8> {
    let mut out = Vec::with_capacity(17);
    out.extend_from_slice(&vote.leader_id.term.to_le_bytes());
    out.extend_from_slice(&vote.leader_id.voted_for().unwrap_or(0).to_le_bytes());
    out.push(vote.is_committed() as u8);
    out
}

pub fn decode_vote(bytes: &[u8]) -> Result<Vote<NodeId>, DecodeError> {
    let mut r = Reader::new(bytes);
    let term = r.u64("vote term")?;
    let node = r.u64("vote node")?;
    let committed = r.u8("vote committed")? != 0;
    Ok(if committed { Vote::new_committed(term, node) } else { Vote::new(term, node) })
}

pub fn encode_membership(out: &mut Vec<u8>, m: &Membership<NodeId, BasicNode>) {
    let configs = m.get_joint_config();
    out.extend_from_slice(&(configs.len() as u32).to_le_bytes());
    for config in configs {
        out.extend_from_slice(&(config.len() as u32).to_le_bytes());
        for id in config {
            out.extend_from_slice(&id.to_le_bytes());
        }
    }
    let nodes: Vec<_> = m.nodes().collect();
    out.extend_from_slice(&(nodes.len() as u32).to_le_bytes());
    for (id, node) in nodes {
        out.extend_from_slice(&id.to_le_bytes());
        out.extend_from_slice(&(node.addr.len() as u16).to_le_bytes());
        out.extend_from_slice(node.addr.as_bytes());
    }
}

pub fn decode_membership(r: &mut Reader<'_>) -> Result<Membership<NodeId, BasicNode>, DecodeError> {
    let n_configs = r.count(4, "membership configs")?;
    let mut configs = Vec::with_capacity(n_configs);
    for _ in 0..n_configs {
        let n = r.count(8, "membership voters")?;
        let mut set = BTreeSet::new();
        for _ in 0..n {
            set.insert(r.u64("voter id")?);
        }
        configs.push(set);
    }
    let n_nodes = r.count(10, "membership nodes")?;
    let mut nodes = BTreeMap::new();
    for _ in 0..n_nodes {
        let id = r.u64("node id")?;
        let len = r.u16("node address")? as usize;
        let addr =
            std::str::from_utf8(r.take(len, "node address")?).map_err(|_| damaged("node address is not UTF-8"))?;
        nodes.insert(id, BasicNode::new(addr));
    }
    // Membership::new adds every voter missing from `nodes` as a default node; a stored membership always has all.
    Ok(Membership::new(configs, nodes))
}

pub fn encode_stored_membership(out: &mut Vec<u8>, m: &StoredMembership<NodeId, BasicNode>) {
    encode_opt_log_id(out, m.log_id());
    encode_membership(out, m.membership());
}

pub fn decode_stored_membership(r: &mut Reader<'_>) -> Result<StoredMembership<NodeId, BasicNode>, DecodeError> {
    let log_id = decode_opt_log_id(r)?;
    Ok(StoredMembership::new(log_id, decode_membership(r)?))
}

pub fn encode_batch(out: &mut Vec<u8>, batch: &WriteBatch) {
    out.extend_from_slice(&(batch.ops.len() as u32).to_le_bytes());
    for op in &batch.ops {
        match op {
            WriteOp::Put(k, v) => {
                out.push(OP_PUT);
                put_bytes(out, k);
                put_bytes(out, v);
            }
            WriteOp::Delete(k) => {
                out.push(OP_DELETE);
                put_bytes(out, k);
            }
            WriteOp::DeleteRange(s, e) => {
                out.push(OP_DELETE_RANGE);
                put_bytes(out, s);
                put_bytes(out, e);
            }
        }
    }
}

/// The bytes `command` takes in a log entry.
pub fn command_bytes(command: &Command) -> usize {
    match command {
        Command::Write(b) => batch_bytes(b),
        Command::Fenced(f) => 4 + f.fence.len() + 8 + batch_bytes(&f.batch),
    }
}

/// The bytes `batch` takes in a log entry.
pub fn batch_bytes(batch: &WriteBatch) -> usize {
    4 + batch
        .ops
        .iter()
        .map(|op| match op {
            WriteOp::Put(k, v) | WriteOp::DeleteRange(k, v) => 9 + k.len() + v.len(),
            WriteOp::Delete(k) => 5 + k.len(),
        })
        .sum::<usize>()
}

pub fn decode_batch(r: &mut Reader<'_>) -> Result<WriteBatch, DecodeError> {
    let n = r.count(5, "write batch operations")?;
    let mut batch = WriteBatch::new();
    for _ in 0..n {
        match r.u8("operation")? {
            OP_PUT => {
                let k = r.bytes("put key")?.to_vec();
                batch.put(k, r.bytes("put value")?.to_vec());
            }
            OP_DELETE => batch.delete(r.bytes("delete key")?.to_vec()),
            OP_DELETE_RANGE => {
                let s = r.bytes("range start")?.to_vec();
                let e = r.bytes("range end")?.to_vec();
                batch.ops.push(WriteOp::DeleteRange(s, e));
            }
            op => return Err(DecodeError(format!("operation {op}"))),
        }
    }
    Ok(batch)
}

/// An entry as it is stored (its index is in the key): format, term, leader, kind, payload.
pub fn encode_entry(entry: &Entry) -> Vec<u8> {
    let mut out = Vec::with_capacity(32);
    out.push(FORMAT);
    out.extend_from_slice(&entry.log_id.leader_id.term.to_le_bytes());
    out.extend_from_slice(&entry.log_id.leader_id.node_id.to_le_bytes());
    match &entry.payload {
        EntryPayload::Blank => out.push(KIND_BLANK),
        EntryPayload::Membership(m) => {
            out.push(KIND_MEMBERSHIP);
            encode_membership(&mut out, m);
        }
        EntryPayload::Normal(Command::Write(batch)) => {
            out.push(KIND_WRITE);
            encode_batch(&mut out, batch);
        }
        EntryPayload::Normal(Command::Fenced(f)) => {
            out.push(KIND_FENCED);
            put_bytes(&mut out, &f.fence);
            out.extend_from_slice(&f.term.to_le_bytes());
            encode_batch(&mut out, &f.batch);
        }
    }
    out
}

pub fn decode_entry(index: u64, bytes: &[u8]) -> Result<Entry, DecodeError> {
    let mut r = Reader::new(bytes);
    let format = r.u8("format")?;
    if format != FORMAT {
        return Err(DecodeError(format!("entry format {format}")));
    }
    let term = r.u64("term")?;
    let node = r.u64("leader")?;
    let log_id = LogId::new(CommittedLeaderId::new(term, node), index);
    let payload = match r.u8("kind")? {
        KIND_BLANK => EntryPayload::Blank,
        KIND_MEMBERSHIP => EntryPayload::Membership(decode_membership(&mut r)?),
        KIND_WRITE => EntryPayload::Normal(Command::Write(decode_batch(&mut r)?)),
        KIND_FENCED => {
            let fence = r.bytes("fence key")?.to_vec();
            let term = r.u64("fence term")?;
            EntryPayload::Normal(Command::Fenced(crate::Fenced { fence, term, batch: decode_batch(&mut r)? }))
        }
        kind => return Err(DecodeError(format!("entry kind {kind}"))),
    };
    if !r.is_empty() {
        return Err(damaged("bytes after the entry"));
    }
    Ok(Entry { log_id, payload })
}

/// The applied state: the last applied log id and the last membership.
pub fn encode_applied(applied: &Option<LogId>, membership: &StoredMembership<NodeId, BasicNode>) -> Vec<u8> {
    let mut out = Vec::new();
    encode_opt_log_id(&mut out, applied);
    encode_stored_membership(&mut out, membership);
    out
}

pub type AppliedState = (Option<LogId>, StoredMembership<NodeId, BasicNode>);

pub fn decode_applied(bytes: &[u8]) -> Result<AppliedState, DecodeError> {
    let mut r = Reader::new(bytes);
    let applied = decode_opt_log_id(&mut r)?;
    Ok((applied, decode_stored_membership(&mut r)?))
}

pub fn encode_opt_log_id_value(id: &Option<LogId>) -> Vec<u8> {
    let mut out = Vec::new();
    encode_opt_log_id(&mut out, id);
    out
}

pub fn decode_opt_log_id_value(bytes: &[u8]) -> Result<Option<LogId>, DecodeError> {
    decode_opt_log_id(&mut Reader::new(bytes))
}

/// A snapshot's data: the group's pairs, each a `u32` length and bytes for the key, then for the value.
pub fn encode_pair(out: &mut Vec<u8>, key: &[u8], value: &[u8]) {
    put_bytes(out, key);
    put_bytes(out, value);
}

/// Key-value pairs, in key order.
pub type Pairs = Vec<(Vec<u8>, Vec<u8>)>;

/// The pairs of a snapshot's data.
pub fn decode_pairs(bytes: &[u8]) -> Result<Pairs, DecodeError> {
    let mut r = Reader::new(bytes);
    let mut pairs = Vec::new();
    while !r.is_empty() {
        let k = r.bytes("snapshot key")?.to_vec();
        pairs.push((k, r.bytes("snapshot value")?.to_vec()));
    }
    Ok(pairs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lid(term: u64, node: u64, index: u64) -> LogId {
        LogId::new(CommittedLeaderId::new(term, node), index)
    }

    #[test]
    fn entries_round_trip() {
        let mut batch = WriteBatch::new();
        batch.put(b"k1".to_vec(), b"v1".to_vec());
        batch.delete(b"k2".to_vec());
        batch.delete_range(b"a".to_vec(), b"b".to_vec());
        let m = Membership::new(
            vec![BTreeSet::from([1, 2, 3])],
            BTreeMap::from([(1, BasicNode::new("h1")), (2, BasicNode::new("h2")), (3, BasicNode::new("h3"))]),
        );
        let mut only_batch = Vec::new();
        encode_batch(&mut only_batch, &batch);
        assert_eq!(batch_bytes(&batch), only_batch.len());
        let fenced = Command::Fenced(crate::Fenced { fence: b"f".to_vec(), term: 9, batch: batch.clone() });
        let header = encode_entry(&Entry { log_id: lid(3, 2, 17), payload: EntryPayload::Blank }).len() - 1;
        for payload in [
            EntryPayload::Blank,
            EntryPayload::Normal(fenced),
            EntryPayload::Normal(Command::Write(batch)),
            EntryPayload::Membership(m),
        ] {
            let e = Entry { log_id: lid(3, 2, 17), payload };
            let bytes = encode_entry(&e);
            if let EntryPayload::Normal(c) = &e.payload {
                assert_eq!(header + 1 + command_bytes(c), bytes.len());
            }
            let back = decode_entry(17, &bytes).unwrap();
            assert_eq!(back.log_id, e.log_id);
            assert_eq!(back.payload, e.payload);
        }
    }

    #[test]
    fn votes_and_applied_state_round_trip() {
        for v in [Vote::new(4, 2), Vote::new_committed(5, 3)] {
            assert_eq!(decode_vote(&encode_vote(&v)).unwrap(), v);
        }
        let m = StoredMembership::new(
            Some(lid(1, 1, 1)),
            Membership::new(vec![BTreeSet::from([7])], BTreeMap::from([(7, BasicNode::new("x:1"))])),
        );
        let (applied, back) = decode_applied(&encode_applied(&Some(lid(2, 7, 9)), &m)).unwrap();
        assert_eq!(applied, Some(lid(2, 7, 9)));
        assert_eq!(back, m);
    }

    #[test]
    fn damaged_records_are_errors_not_allocations() {
        let e = Entry { log_id: lid(1, 1, 1), payload: EntryPayload::Blank };
        let good = encode_entry(&e);
        for cut in 0..good.len() {
            assert!(decode_entry(1, &good[..cut]).is_err(), "cut at {cut}");
        }
        // A write batch claiming 2^32-1 operations in a few bytes is refused before anything is reserved.
        let mut huge = vec![FORMAT];
        huge.extend_from_slice(&1u64.to_le_bytes());
        huge.extend_from_slice(&1u64.to_le_bytes());
        huge.push(KIND_WRITE);
        huge.extend_from_slice(&u32::MAX.to_le_bytes());
        assert!(decode_entry(1, &huge).unwrap_err().0.contains("cannot fit"));
        let mut pairs = Vec::new();
        encode_pair(&mut pairs, b"k", b"v");
        pairs.extend_from_slice(&u32::MAX.to_le_bytes());
        assert!(decode_pairs(&pairs).is_err());
        assert_eq!(decode_entry(1, &[9]).unwrap_err(), DecodeError("entry format 9".into()));
    }
}
