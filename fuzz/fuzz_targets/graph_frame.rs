//! Everything the graph service does with bytes from a socket before a query runs: the length prefix, the header
//! frame, the call and its arguments (values included); and, for the client side, replies. None may panic, hang or
//! allocate more than the input justifies.
#![no_main]

use quiver_common::limits::FRAME_BYTES_MAX;
use libfuzzer_sys::fuzz_target;
use quiver_wire::frame::{decode_frame, frame_len, };
use quiver_wire::graph::{decode_call, decode_reply};

fuzz_target!(|data: &[u8]| {
    if data.len() >= 4 {
        let _ = frame_len([data[0], data[1], data[2], data[3]], FRAME_BYTES_MAX);
        if let Ok((_, payload)) = decode_frame(&data[4..]) {
            let _ = decode_call(payload);
            let _ = decode_reply(payload);
        }
    }
    let _ = decode_call(data);
    let _ = decode_reply(data);
});
