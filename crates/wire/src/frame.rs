//! fbthrift "Header" framing, as NebulaGraph's clients speak it (and plain framed compact, which fbthrift servers
//! also accept). Pure functions over byte slices, so the decoder can be fuzzed without sockets.
//!
//! A header frame (all integers big-endian):
//!
//! ```text
//! 0      4      6      8          12       14                          14+4*H
//! | LEN  | 0FFF | FLAGS| SEQ ID   | H      | header: varint PROTOCOL ID, | payload (a compact-protocol message)
//! | u32  | magic| u16  | u32      | u16    | varint N, N varint TRANSFORM |
//! |      |      |      |          |        | ids, info headers, 0 padding |
//! ```
//!
//! `LEN` counts every byte after itself. `H` is the header length in 4-byte words. Info headers are
//! `varint kind (1 normal, 2 persistent), varint count, count x (varint-length key, varint-length value)`.
//! A framed-compact frame is `LEN` followed directly by the message (first byte 0x82).

use crate::compact::write_varint;
use std::fmt;

pub const HEADER_MAGIC: u16 = 0x0FFF;
/// fbthrift's protocol id for the compact protocol in a header frame.
pub const PROTOCOL_COMPACT: u32 = 2;
const BIG_FRAME_MAGIC: u32 = 0x4249_4746;
const COMPACT_PROTOCOL_ID: u8 = 0x82;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrameError {
    /// The length prefix announces more than the server accepts.
    TooLarge {
        len: u64,
        max: usize,
    },
    /// Not a header frame and not framed compact: the peer speaks something else.
    UnknownFraming,
    Malformed(String),
    /// A compression transform (zlib, snappy, zstd) we do not implement.
    UnsupportedTransform(u32),
    UnsupportedProtocol(u32),
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::TooLarge { len, max } => {
                write!(f, "frame of {len} bytes is larger than the limit of {max} bytes")
            }
            FrameError::UnknownFraming => write!(f, "not a thrift header or framed-compact frame"),
            FrameError::Malformed(m) => write!(f, "malformed frame: {m}"),
            FrameError::UnsupportedTransform(t) => write!(f, "frame transform {t} is not supported (no compression)"),
            FrameError::UnsupportedProtocol(p) => write!(f, "protocol id {p} is not supported (only compact, 2)"),
        }
    }
}

impl std::error::Error for FrameError {}

/// How a request was framed; the reply is framed the same way, echoing flags, sequence id and protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    Header { flags: u16, seq_id: u32, protocol: u32 },
    FramedCompact,
}

/// The length announced by a frame's first four bytes, checked against `max`.
pub fn frame_len(prefix: [u8; 4], max: usize) -> Result<usize, FrameError> {
    let len = u32::from_be_bytes(prefix);
    if len == BIG_FRAME_MAGIC {
        // A 64-bit length follows; such frames (over 1 GiB) are always above our limit.
        return Err(FrameError::TooLarge { len: u64::from(u32::MAX), max });
    }
    if len as usize > max {
        return Err(FrameError::TooLarge { len: u64::from(len), max });
    }
    if len < 2 {
        return Err(FrameError::Malformed(format!("frame length {len} is too short")));
    }
    Ok(len as usize)
}

/// Splits a frame body (the bytes after the length prefix) into its framing and its payload.
pub fn decode_frame(body: &[u8]) -> Result<(Framing, &[u8]), FrameError> {
    if body.first() == Some(&COMPACT_PROTOCOL_ID) {
        return Ok((Framing::FramedCompact, body));
    }
    if body.len() < 10 || u16::from_be_bytes([body[0], body[1]]) != HEADER_MAGIC {
        return Err(FrameError::UnknownFraming);
    }
    let flags = u16::from_be_bytes([body[2], body[3]]);
    let seq_id = u32::from_be_bytes([body[4], body[5], body[6], body[7]]);
    let header_len = usize::from(u16::from_be_bytes([body[8], body[9]])) * 4;
    let rest = &body[10..];
    if header_len > rest.len() {
        return Err(FrameError::Malformed(format!("header of {header_len} bytes in a frame of {} bytes", body.len())));
    }
    let (mut header, payload) = rest.split_at(header_len);
    let protocol = read_varint(&mut header)?;
    if protocol != PROTOCOL_COMPACT {
        return Err(FrameError::UnsupportedProtocol(protocol));
    }
    let transforms = read_varint(&mut header)?;
    if transforms > 0 {
        return Err(FrameError::UnsupportedTransform(read_varint(&mut header)?));
    }
    // Info headers (client identity and the like) carry nothing we act on; they are validated and skipped.
    while let Some(&kind) = header.first() {
        if kind == 0 {
            break; // padding
        }
        read_varint(&mut header)?;
        if kind > 2 {
            break; // an unknown kind ends info processing, as in fbthrift
        }
        let count = read_varint(&mut header)?;
        for _ in 0..count {
            skip_string(&mut header)?;
            skip_string(&mut header)?;
        }
    }
    Ok((Framing::Header { flags, seq_id, protocol }, payload))
}

/// A whole frame, length prefix included, around `payload`.
pub fn encode_frame(framing: Framing, payload: &[u8]) -> Vec<u8> {
    match framing {
        Framing::FramedCompact => {
            let mut out = Vec::with_capacity(4 + payload.len());
            out.extend_from_slice(&(payload.len() as u32).to_be_bytes());
            out.extend_from_slice(payload);
            out
        }
        Framing::Header { flags, seq_id, protocol } => {
            let mut header = Vec::with_capacity(8);
            write_varint(&mut header, u64::from(protocol));
            write_varint(&mut header, 0); // no transforms
                                          // fbthrift always pads with 1 to 4 zero bytes.
            let padding = 4 - header.len() % 4;
            header.resize(header.len() + padding, 0);
            let len = 10 + header.len() + payload.len();
            let mut out = Vec::with_capacity(4 + len);
            out.extend_from_slice(&(len as u32).to_be_bytes());
            out.extend_from_slice(&HEADER_MAGIC.to_be_bytes());
            out.extend_from_slice(&flags.to_be_bytes());
            out.extend_from_slice(&seq_id.to_be_bytes());
            out.extend_from_slice(&((header.len() / 4) as u16).to_be_bytes());
            out.extend_from_slice(&header);
            out.extend_from_slice(payload);
            out
        }
    }
}

fn read_varint(buf: &mut &[u8]) -> Result<u32, FrameError> {
    let mut pos = 0;
    let v = crate::compact::varint(buf, &mut pos).map_err(|e| FrameError::Malformed(format!("header: {e}")))?;
    if pos > 5 {
        return Err(FrameError::Malformed("header varint longer than 5 bytes".into()));
    }
    *buf = &buf[pos..];
    u32::try_from(v).map_err(|_| FrameError::Malformed("header varint overflows 32 bits".into()))
}

fn skip_string(buf: &mut &[u8]) -> Result<(), FrameError> {
    let len = read_varint(buf)? as usize;
    if len > buf.len() {
        return Err(FrameError::Malformed("info header string runs past the header".into()));
    }
    *buf = &buf[len..];
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use quiver_common::limits::FRAME_BYTES_MAX;

    #[test]
    fn header_frames_round_trip_and_echo_flags_and_sequence() {
        let framing = Framing::Header { flags: 1, seq_id: 77, protocol: PROTOCOL_COMPACT };
        let frame = encode_frame(framing, b"\x82\x21payload");
        let len = frame_len(frame[..4].try_into().unwrap(), FRAME_BYTES_MAX).unwrap();
        assert_eq!(len, frame.len() - 4);
        let (f, payload) = decode_frame(&frame[4..]).unwrap();
        assert_eq!(f, framing);
        assert_eq!(payload, b"\x82\x21payload");
    }

    #[test]
    fn a_frame_written_by_the_python_client_decodes() {
        // THeaderTransport with an identity info header: proto 2, 0 transforms, info kind 1 with one pair.
        let mut header = vec![2u8, 0, 1, 1, 2, b'i', b'd', 1, b'x'];
        header.resize(12, 0);
        let mut body = vec![0x0f, 0xff, 0, 0, 0, 0, 0, 5, 0, 3];
        body.extend_from_slice(&header);
        body.extend_from_slice(b"\x82\x21");
        let (f, payload) = decode_frame(&body).unwrap();
        assert_eq!(f, Framing::Header { flags: 0, seq_id: 5, protocol: 2 });
        assert_eq!(payload, b"\x82\x21");
    }

    #[test]
    fn bad_frames_are_refused_with_a_reason() {
        assert_eq!(frame_len(*b"BIGF", 1 << 20), Err(FrameError::TooLarge { len: u64::from(u32::MAX), max: 1 << 20 }));
        assert_eq!(
            frame_len(2_000_000u32.to_be_bytes(), 1 << 20),
            Err(FrameError::TooLarge { len: 2_000_000, max: 1 << 20 })
        );
        assert!(matches!(frame_len(1u32.to_be_bytes(), 1 << 20), Err(FrameError::Malformed(_))));
        assert_eq!(decode_frame(b"GET / HTTP/1.1\r\n"), Err(FrameError::UnknownFraming));
        // Header longer than the frame.
        assert!(matches!(decode_frame(&[0x0f, 0xff, 0, 0, 0, 0, 0, 1, 0, 9, 2, 0]), Err(FrameError::Malformed(_))));
        // Binary protocol (0) and zlib transform (1).
        assert_eq!(
            decode_frame(&[0x0f, 0xff, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0]),
            Err(FrameError::UnsupportedProtocol(0))
        );
        assert_eq!(
            decode_frame(&[0x0f, 0xff, 0, 0, 0, 0, 0, 1, 0, 1, 2, 1, 1, 0]),
            Err(FrameError::UnsupportedTransform(1))
        );
    }
}
