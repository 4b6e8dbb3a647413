//! The decoders on seeded random bytes and on valid frames with random mutations (bit flips, truncations,
//! insertions, length fields rewritten): every input is either decoded or refused with an error, never a panic.
//! The fuzz target in `fuzz/` explores the same surface with coverage guidance.

use quiver_common::limits::FRAME_BYTES_MAX;
use quiver_common::memory::Account;
use quiver_common::Value;
use quiver_wire::compact::{Message, MessageKind};
use quiver_wire::frame::{decode_frame, encode_frame, frame_len, Framing, PROTOCOL_COMPACT};
use quiver_wire::graph::{decode_call, decode_reply, encode_call, encode_reply, Call, ExecutionResponse, Reply, Table};
use std::collections::BTreeMap;

/// Inputs the fuzzer found (fuzz/artifacts): each once made a decoder allocate what a length field claimed.
const FOUND_BY_FUZZING: &[&[u8]] = &[
    // A reply whose unknown field 13 is a string claiming 3.4 GB: thrift's own `skip` allocated it.
    &[0x82, 0x42, 0x5d, 0x01, 0x41, 0xd8, 0xd8, 0xd8, 0x82, 0xd8, 0x7c],
    // A field id near i16::MAX followed by a delta: thrift's compact reader added them unchecked (a panic with
    // overflow checks on).
    &[130, 98, 240, 241, 136, 6, 1, 98, 1, 240, 255, 51, 136, 175, 40, 72, 255, 255, 255, 255, 255, 255, 255, 255],
];

/// `quiver_common::rng::Rng` over `usize` ranges.
struct Rng(quiver_common::rng::Rng);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0.next()
    }

    fn below(&mut self, n: usize) -> usize {
        self.0.below(n.max(1) as u64) as usize
    }
}

fn decode_everything(bytes: &[u8]) {
    if bytes.len() >= 4 {
        let _ = frame_len([bytes[0], bytes[1], bytes[2], bytes[3]], FRAME_BYTES_MAX);
        if let Ok((_, payload)) = decode_frame(&bytes[4..]) {
            let _ = decode_call(payload);
            let _ = decode_reply(payload);
        }
    }
    let _ = decode_call(bytes);
    let _ = decode_reply(bytes);
}

fn seeds() -> Vec<Vec<u8>> {
    let props: BTreeMap<String, Value> = [
        ("l".to_string(), Value::List(vec![Value::Int(1), Value::Float(2.5), Value::str("x"), Value::NULL])),
        ("m".to_string(), Value::Map([("k".to_string(), Value::set_from(vec![Value::Bool(true)]))].into())),
    ]
    .into();
    let framing = Framing::Header { flags: 0, seq_id: 1, protocol: PROTOCOL_COMPACT };
    let calls = [
        Call::VerifyClientVersion { version: "3.0.0".into() },
        Call::Authenticate { username: "root".into(), password: "nebula".into() },
        Call::Signout { session_id: 9 },
        Call::Execute {
            session_id: 9,
            stmt: b"GO FROM $v OVER like YIELD dst(edge)".to_vec(),
            params: props.clone(),
            json: false,
        },
    ];
    let mut out: Vec<Vec<u8>> = calls.iter().map(|c| encode_frame(framing, &encode_call(1, c))).collect();
    let msg = Message { name: "execute".into(), kind: MessageKind::Call, seq_id: 1, version: 2 };
    let row: Vec<Value> = props.into_values().collect();
    let table = Table::from_rows((0..row.len()).map(|i| format!("c{i}")).collect(), vec![row]);
    let resp = ExecutionResponse { data: Some(table), ..Default::default() };
    out.push(encode_frame(framing, &encode_reply(&msg, &Reply::Execution(resp))));
    out
}

// What a decoder holds is measured by the allocator's per-thread accounting (`quiver_common::memory`): the most
// it held at once bounds its largest single allocation, so a decoder that trusts a length it read shows up here.

#[test]
fn inputs_found_by_fuzzing_are_refused_without_large_allocations() {
    for input in FOUND_BY_FUZZING {
        let account = Account::new(usize::MAX);
        let scope = account.enter();
        decode_everything(input);
        drop(scope);
        let held = account.peak_bytes();
        assert!(held < 1 << 16, "decoding {input:02x?} held {held} bytes at once");
    }
}

#[test]
fn random_and_mutated_frames_never_panic_nor_allocate_beyond_their_size() {
    let account = Account::new(usize::MAX);
    let mut rng = Rng(quiver_common::rng::Rng(0x9e37_79b9_7f4a_7c15));
    let seeds = seeds();
    let _scope = account.enter();
    for seed in &seeds {
        decode_everything(seed);
    }
    for _ in 0..20_000 {
        let n = rng.below(64);
        let bytes: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
        decode_everything(&bytes);
    }
    for _ in 0..100_000 {
        let mut bytes = seeds[rng.below(seeds.len())].clone();
        for _ in 0..1 + rng.below(4) {
            let at = rng.below(bytes.len());
            match rng.below(5) {
                0 => bytes[at] ^= 1 << rng.below(8),
                1 => bytes[at] = rng.next() as u8,
                2 => bytes.truncate(at),
                3 => bytes.insert(at, rng.next() as u8),
                _ => {
                    // A varint or length rewritten to something huge.
                    let huge = [0xff, 0xff, 0xff, 0xff, 0x0f];
                    let end = (at + 5).min(bytes.len());
                    bytes.splice(at..end, huge);
                }
            }
            if bytes.is_empty() {
                break;
            }
        }
        decode_everything(&bytes);
    }
    // Frames here are under 1 KiB; no decoder may hold far more than the input that caused it.
    let held = account.peak_bytes();
    assert!(held < 1 << 20, "a decoder held {held} bytes at once");
}
