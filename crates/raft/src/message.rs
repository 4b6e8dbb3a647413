//! Raft's messages between hosts, in the byte format of [`crate::codec`] (the log's own): what the TCP transport
//! sends. Decoding is bounded by the bytes of the frame, as the log's is.

use openraft::error::SnapshotMismatch;
use openraft::raft::{AppendEntriesResponse as AeResp, SnapshotResponse};
use openraft::SnapshotSegmentId;
use openraft::{SnapshotMeta, Vote};

use crate::codec::{self, DecodeError, Reader};
use crate::{
    AppendEntriesRequest, AppendEntriesResponse, BasicNode, InstallSnapshotRequest, InstallSnapshotResponse, NodeId,
    VoteRequest, VoteResponse,
};

fn put_vote(out: &mut Vec<u8>, v: &Vote<NodeId>) {
    out.extend_from_slice(&codec::encode_vote(v));
}

fn vote(r: &mut Reader<'_>) -> Result<Vote<NodeId>, DecodeError> {
    let term = r.u64("vote term")?;
    let node = r.u64("vote node")?;
    let committed = r.u8("vote committed")? != 0;
    Ok(if committed { Vote::new_committed(term, node) } else { Vote::new(term, node) })
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as u32).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}

fn string(r: &mut Reader<'_>, what: &str) -> Result<String, DecodeError> {
    let b = r.bytes(what)?;
    String::from_utf8(b.to_vec()).map_err(|_| DecodeError(format!("{what} is not UTF-8")))
}

fn done(r: &Reader<'_>) -> Result<(), DecodeError> {
    if r.is_empty() {
        Ok(())
    } else {
        Err(DecodeError("bytes after the message".into()))
    }
}

pub fn encode_append_request(req: &AppendEntriesRequest) -> Vec<u8> {
    let mut out = Vec::new();
    put_vote(&mut out, &req.vote);
    codec::encode_opt_log_id(&mut out, &req.prev_log_id);
    codec::encode_opt_log_id(&mut out, &req.leader_commit);
    out.extend_from_slice(&(req.entries.len() as u32).to_le_bytes());
    for e in &req.entries {
        out.extend_from_slice(&e.log_id.index.to_le_bytes());
        let bytes = codec::encode_entry(e);
        out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
        out.extend_from_slice(&bytes);
    }
    out
}

pub fn decode_append_request(bytes: &[u8]) -> Result<AppendEntriesRequest, DecodeError> {
    let mut r = Reader::new(bytes);
    let vote = vote(&mut r)?;
    let prev_log_id = codec::decode_opt_log_id(&mut r)?;
    let leader_commit = codec::decode_opt_log_id(&mut r)?;
    // An entry is its index, a length, and at least format, term, leader and kind.
    let n = r.count(8 + 4 + 18, "entries")?;
    let mut entries = Vec::with_capacity(n);
    for _ in 0..n {
        let index = r.u64("entry index")?;
        entries.push(codec::decode_entry(index, r.bytes("entry")?)?);
    }
    done(&r)?;
    Ok(AppendEntriesRequest { vote, prev_log_id, entries, leader_commit })
}

pub fn encode_append_response(resp: &AppendEntriesResponse) -> Vec<u8> {
    let mut out = Vec::new();
    match resp {
        AeResp::Success => out.push(0),
        AeResp::PartialSuccess(id) => {
            out.push(1);
            codec::encode_opt_log_id(&mut out, id);
        }
        AeResp::Conflict => out.push(2),
        AeResp::HigherVote(v) => {
            out.push(3);
            put_vote(&mut out, v);
        }
    }
    out
}

pub fn decode_append_response(bytes: &[u8]) -> Result<AppendEntriesResponse, DecodeError> {
    let mut r = Reader::new(bytes);
    let resp = match r.u8("append reply")? {
        0 => AeResp::Success,
        1 => AeResp::PartialSuccess(codec::decode_opt_log_id(&mut r)?),
        2 => AeResp::Conflict,
        3 => AeResp::HigherVote(vote(&mut r)?),
        t => return Err(DecodeError(format!("append reply {t}"))),
    };
    done(&r)?;
    Ok(resp)
}

pub fn encode_vote_request(req: &VoteRequest) -> Vec<u8> {
    let mut out = Vec::new();
    put_vote(&mut out, &req.vote);
    codec::encode_opt_log_id(&mut out, &req.last_log_id);
    out
}

pub fn decode_vote_request(bytes: &[u8]) -> Result<VoteRequest, DecodeError> {
    let mut r = Reader::new(bytes);
    let v = vote(&mut r)?;
    let last_log_id = codec::decode_opt_log_id(&mut r)?;
    done(&r)?;
    Ok(VoteRequest { vote: v, last_log_id })
}

pub fn encode_vote_response(resp: &VoteResponse) -> Vec<u8> {
    let mut out = Vec::new();
    put_vote(&mut out, &resp.vote);
    out.push(resp.vote_granted as u8);
    codec::encode_opt_log_id(&mut out, &resp.last_log_id);
    out
}

pub fn decode_vote_response(bytes: &[u8]) -> Result<VoteResponse, DecodeError> {
    let mut r = Reader::new(bytes);
    let v = vote(&mut r)?;
    let vote_granted = r.u8("vote granted")? != 0;
    let last_log_id = codec::decode_opt_log_id(&mut r)?;
    done(&r)?;
    Ok(VoteResponse { vote: v, vote_granted, last_log_id })
}

fn put_meta(out: &mut Vec<u8>, meta: &SnapshotMeta<NodeId, BasicNode>) {
    codec::encode_opt_log_id(out, &meta.last_log_id);
    codec::encode_stored_membership(out, &meta.last_membership);
    put_str(out, &meta.snapshot_id);
}

fn meta(r: &mut Reader<'_>) -> Result<SnapshotMeta<NodeId, BasicNode>, DecodeError> {
    let last_log_id = codec::decode_opt_log_id(r)?;
    let last_membership = codec::decode_stored_membership(r)?;
    let snapshot_id = string(r, "snapshot id")?;
    Ok(SnapshotMeta { last_log_id, last_membership, snapshot_id })
}

pub fn encode_snapshot_request(req: &InstallSnapshotRequest) -> Vec<u8> {
    let mut out = Vec::with_capacity(req.data.len() + 128);
    put_vote(&mut out, &req.vote);
    put_meta(&mut out, &req.meta);
    out.extend_from_slice(&req.offset.to_le_bytes());
    out.extend_from_slice(&(req.data.len() as u32).to_le_bytes());
    out.extend_from_slice(&req.data);
    out.push(req.done as u8);
    out
}

pub fn decode_snapshot_request(bytes: &[u8]) -> Result<InstallSnapshotRequest, DecodeError> {
    let mut r = Reader::new(bytes);
    let v = vote(&mut r)?;
    let m = meta(&mut r)?;
    let offset = r.u64("snapshot offset")?;
    let data = r.bytes("snapshot data")?.to_vec();
    // The receiver writes the chunk at `offset` of the snapshot it holds in memory: an offset past any snapshot a
    // group can have would make it allocate that much.
    if offset.saturating_add(data.len() as u64) > quiver_common::limits::RAFT_SNAPSHOT_BYTES_MAX as u64 {
        return Err(DecodeError(format!("a snapshot chunk at offset {offset}")));
    }
    let is_done = r.u8("snapshot done")? != 0;
    done(&r)?;
    Ok(InstallSnapshotRequest { vote: v, meta: m, offset, data, done: is_done })
}

pub fn encode_snapshot_response(resp: &InstallSnapshotResponse) -> Vec<u8> {
    let mut out = Vec::new();
    put_vote(&mut out, &resp.vote);
    out
}

pub fn decode_snapshot_response(bytes: &[u8]) -> Result<InstallSnapshotResponse, DecodeError> {
    let mut r = Reader::new(bytes);
    let v = vote(&mut r)?;
    done(&r)?;
    Ok(SnapshotResponse::new(v).into())
}

fn put_segment(out: &mut Vec<u8>, s: &SnapshotSegmentId) {
    put_str(out, &s.id);
    out.extend_from_slice(&s.offset.to_le_bytes());
}

fn segment(r: &mut Reader<'_>) -> Result<SnapshotSegmentId, DecodeError> {
    let id = string(r, "snapshot segment")?;
    Ok(SnapshotSegmentId { id, offset: r.u64("snapshot segment offset")? })
}

pub fn encode_mismatch(m: &SnapshotMismatch) -> Vec<u8> {
    let mut out = Vec::new();
    put_segment(&mut out, &m.expect);
    put_segment(&mut out, &m.got);
    out
}

pub fn decode_mismatch(bytes: &[u8]) -> Result<SnapshotMismatch, DecodeError> {
    let mut r = Reader::new(bytes);
    let expect = segment(&mut r)?;
    let got = segment(&mut r)?;
    done(&r)?;
    Ok(SnapshotMismatch { expect, got })
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use openraft::{CommittedLeaderId, EntryPayload, Membership, StoredMembership};
    use quiver_kv::WriteBatch;

    use super::*;
    use crate::{Command, LogId};

    fn lid(term: u64, node: u64, index: u64) -> LogId {
        LogId::new(CommittedLeaderId::new(term, node), index)
    }

    #[test]
    fn messages_round_trip() {
        let mut batch = WriteBatch::new();
        batch.put(b"k".to_vec(), b"v".to_vec());
        let req = AppendEntriesRequest {
            vote: Vote::new_committed(3, 1),
            prev_log_id: Some(lid(2, 1, 9)),
            entries: vec![
                codec::Entry { log_id: lid(3, 1, 10), payload: EntryPayload::Blank },
                codec::Entry { log_id: lid(3, 1, 11), payload: EntryPayload::Normal(Command::Write(batch)) },
            ],
            leader_commit: Some(lid(2, 1, 8)),
        };
        let back = decode_append_request(&encode_append_request(&req)).unwrap();
        assert_eq!(back.vote, req.vote);
        assert_eq!(back.prev_log_id, req.prev_log_id);
        assert_eq!(back.leader_commit, req.leader_commit);
        assert_eq!(back.entries.len(), 2);
        assert_eq!(back.entries[1].payload, req.entries[1].payload);
        for resp in [
            AeResp::Success,
            AeResp::PartialSuccess(Some(lid(1, 2, 3))),
            AeResp::Conflict,
            AeResp::HigherVote(Vote::new(9, 3)),
        ] {
            assert_eq!(decode_append_response(&encode_append_response(&resp)).unwrap(), resp);
        }
        let vreq = VoteRequest { vote: Vote::new(4, 2), last_log_id: Some(lid(3, 1, 11)) };
        assert_eq!(decode_vote_request(&encode_vote_request(&vreq)).unwrap(), vreq);
        let vresp = VoteResponse { vote: Vote::new(4, 2), vote_granted: true, last_log_id: None };
        assert_eq!(decode_vote_response(&encode_vote_response(&vresp)).unwrap(), vresp);
        let m = Membership::new(
            vec![BTreeSet::from([1, 2])],
            BTreeMap::from([(1, BasicNode::new("a:1")), (2, BasicNode::new("b:2"))]),
        );
        let sreq = InstallSnapshotRequest {
            vote: Vote::new_committed(5, 2),
            meta: SnapshotMeta {
                last_log_id: Some(lid(5, 2, 40)),
                last_membership: StoredMembership::new(Some(lid(1, 1, 1)), m),
                snapshot_id: "g-5-40-1".into(),
            },
            offset: 1024,
            data: vec![7; 300],
            done: true,
        };
        assert_eq!(decode_snapshot_request(&encode_snapshot_request(&sreq)).unwrap(), sreq);
        let mismatch = SnapshotMismatch { expect: ("a", 0).into(), got: ("b", 512).into() };
        assert_eq!(decode_mismatch(&encode_mismatch(&mismatch)).unwrap(), mismatch);
    }

    #[test]
    fn truncated_and_inflated_messages_are_refused() {
        let req = VoteRequest { vote: Vote::new(4, 2), last_log_id: Some(lid(3, 1, 11)) };
        let bytes = encode_vote_request(&req);
        for cut in 0..bytes.len() {
            assert!(decode_vote_request(&bytes[..cut]).is_err());
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(decode_vote_request(&longer).is_err());
        // An append request claiming 2^32-1 entries in a few bytes is refused before anything is reserved.
        let mut inflated = Vec::new();
        put_vote(&mut inflated, &Vote::new(1, 1));
        inflated.extend_from_slice(&[0, 0]);
        inflated.extend_from_slice(&u32::MAX.to_le_bytes());
        assert!(decode_append_request(&inflated).unwrap_err().0.contains("cannot fit"));
    }
}
