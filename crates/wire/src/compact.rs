//! The compact protocol, through the `thrift` crate's `TCompactInputProtocol` / `TCompactOutputProtocol`, with the
//! three things fbthrift does differently or that a server facing the network needs:
//! - message headers of version 2 (Apache's codec accepts only version 1), parsed and written here;
//! - doubles big-endian in version 2 (Apache writes them little-endian): byte-swapped around the crate's calls;
//! - lengths and element counts checked against the bytes left before anything is allocated, and nesting bounded,
//!   so a 20-byte frame cannot make the server allocate gigabytes or overflow its stack.

use quiver_common::limits::WIRE_VALUE_DEPTH_MAX;
use std::cell::Cell;
use std::io::Read;
use std::rc::Rc;
use thrift::protocol::{
    TCompactInputProtocol, TCompactOutputProtocol, TFieldIdentifier, TInputProtocol, TListIdentifier, TMapIdentifier,
    TOutputProtocol, TSetIdentifier, TStructIdentifier, TType,
};

pub const PROTOCOL_ID: u8 = 0x82;
/// fbthrift's compact version with big-endian doubles; version 1 (little-endian doubles) is also read.
pub const VERSION_DOUBLE_BE: u8 = 2;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageKind {
    Call = 1,
    Reply = 2,
    Exception = 3,
    Oneway = 4,
}

/// A message header: method name, kind, sequence id, and the compact version the peer used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub name: String,
    pub kind: MessageKind,
    pub seq_id: i32,
    pub version: u8,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    pub message: String,
    /// Well-formed input that Quiver does not take (a path parameter, say), as opposed to malformed bytes.
    pub unsupported: bool,
}

impl DecodeError {
    pub fn new(message: impl Into<String>) -> DecodeError {
        DecodeError { message: message.into(), unsupported: false }
    }

    pub fn unsupported(message: impl Into<String>) -> DecodeError {
        DecodeError { message: message.into(), unsupported: true }
    }
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<thrift::Error> for DecodeError {
    fn from(e: thrift::Error) -> DecodeError {
        DecodeError::new(e.to_string())
    }
}

pub type DResult<T> = Result<T, DecodeError>;

/// Parses a message header; returns it and the offset where the message's struct begins.
pub fn decode_message(payload: &[u8]) -> DResult<(Message, usize)> {
    let mut pos = 0;
    let byte = |pos: &mut usize| -> DResult<u8> {
        let b = *payload.get(*pos).ok_or_else(|| DecodeError::new("message header is truncated"))?;
        *pos += 1;
        Ok(b)
    };
    let id = byte(&mut pos)?;
    if id != PROTOCOL_ID {
        return Err(DecodeError::new(format!("bad compact protocol id {id:#04x}")));
    }
    let vt = byte(&mut pos)?;
    let version = vt & 0x1f;
    if !(1..=VERSION_DOUBLE_BE).contains(&version) {
        return Err(DecodeError::new(format!("bad compact protocol version {version}")));
    }
    let kind = match (vt >> 5) & 0x07 {
        1 => MessageKind::Call,
        2 => MessageKind::Reply,
        3 => MessageKind::Exception,
        4 => MessageKind::Oneway,
        k => return Err(DecodeError::new(format!("bad message kind {k}"))),
    };
    let seq_id = varint(payload, &mut pos)? as u32 as i32;
    let len = varint(payload, &mut pos)? as usize;
    if len > payload.len() - pos {
        return Err(DecodeError::new("method name runs past the frame"));
    }
    let name = String::from_utf8_lossy(&payload[pos..pos + len]).into_owned();
    Ok((Message { name, kind, seq_id, version }, pos + len))
}

pub(crate) fn varint(data: &[u8], pos: &mut usize) -> DResult<u64> {
    let mut value: u64 = 0;
    for i in 0..10 {
        let b = *data.get(*pos).ok_or_else(|| DecodeError::new("input ends inside a varint"))?;
        *pos += 1;
        value |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err(DecodeError::new("varint longer than 10 bytes"))
}

pub(crate) fn write_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads a slice, sharing its position with the [`Decoder`] so lengths can be checked before they are trusted.
struct SliceReader<'a> {
    data: &'a [u8],
    pos: Rc<Cell<usize>>,
}

impl Read for SliceReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let pos = self.pos.get();
        let n = buf.len().min(self.data.len() - pos);
        buf[..n].copy_from_slice(&self.data[pos..pos + n]);
        self.pos.set(pos + n);
        Ok(n)
    }
}

/// A bounded compact-protocol reader over one message's struct.
pub struct Decoder<'a> {
    proto: TCompactInputProtocol<SliceReader<'a>>,
    data: &'a [u8],
    pos: Rc<Cell<usize>>,
    doubles_be: bool,
    depth: usize,
    /// The last field id read in each open struct, mirroring the crate's own state: a field-id delta that would
    /// overflow is refused here (the crate adds it unchecked).
    field_ids: Vec<i16>,
}

impl<'a> Decoder<'a> {
    pub fn new(data: &'a [u8], version: u8) -> Decoder<'a> {
        let pos = Rc::new(Cell::new(0));
        let proto = TCompactInputProtocol::new(SliceReader { data, pos: pos.clone() });
        Decoder { proto, data, pos, doubles_be: version >= VERSION_DOUBLE_BE, depth: 0, field_ids: Vec::new() }
    }

    fn remaining(&self) -> usize {
        self.data.len() - self.pos.get()
    }

    /// Enters a nested struct or container; fails past [`WIRE_VALUE_DEPTH_MAX`].
    pub fn enter(&mut self) -> DResult<()> {
        self.depth += 1;
        if self.depth > WIRE_VALUE_DEPTH_MAX {
            return Err(DecodeError::new(format!("values nested deeper than {WIRE_VALUE_DEPTH_MAX} levels")));
        }
        Ok(())
    }

    pub fn leave(&mut self) {
        self.depth -= 1;
    }

    pub fn struct_begin(&mut self) -> DResult<()> {
        self.enter()?;
        self.proto.read_struct_begin()?;
        self.field_ids.push(0);
        Ok(())
    }

    pub fn struct_end(&mut self) -> DResult<()> {
        self.proto.read_struct_end()?;
        self.field_ids.pop();
        self.leave();
        Ok(())
    }

    /// Reads a struct field by field with `each(decoder, id, type)`, which returns whether it consumed the field;
    /// fields it leaves are skipped.
    pub fn fields(&mut self, mut each: impl FnMut(&mut Decoder<'a>, i16, TType) -> DResult<bool>) -> DResult<()> {
        self.struct_begin()?;
        while let Some((id, t)) = self.field()? {
            if !each(self, id, t)? {
                self.skip(t)?;
            }
            self.field_end()?;
        }
        self.struct_end()
    }

    /// The next field's `(id, type)`, or `None` at the struct's end.
    pub fn field(&mut self) -> DResult<Option<(i16, TType)>> {
        if let Some(&header) = self.data.get(self.pos.get()) {
            let delta = i16::from(header >> 4);
            let last = self.field_ids.last().copied().unwrap_or(0);
            if header & 0x0f != 0 && delta != 0 && last.checked_add(delta).is_none() {
                return Err(DecodeError::new(format!("field id {last} + {delta} overflows")));
            }
        }
        let f = self.proto.read_field_begin()?;
        if f.field_type == TType::Stop {
            return Ok(None);
        }
        let id = f.id.unwrap_or(0);
        if let Some(last) = self.field_ids.last_mut() {
            *last = id;
        }
        Ok(Some((id, f.field_type)))
    }

    pub fn field_end(&mut self) -> DResult<()> {
        Ok(self.proto.read_field_end()?)
    }

    /// Skips a value of type `t` with the same bounds as reading it (the crate's own `skip` allocates whatever
    /// length a string claims).
    pub fn skip(&mut self, t: TType) -> DResult<()> {
        match t {
            TType::Bool => drop(self.bool()?),
            TType::I08 => drop(self.i8()?),
            TType::I16 => drop(self.i16()?),
            TType::I32 => drop(self.i32()?),
            TType::I64 => drop(self.i64()?),
            TType::Double => drop(self.double()?),
            TType::String => drop(self.bytes()?),
            TType::Struct => {
                self.struct_begin()?;
                while let Some((_, t)) = self.field()? {
                    self.skip(t)?;
                    self.field_end()?;
                }
                self.struct_end()?;
            }
            TType::List | TType::Set => {
                let (et, n) = if t == TType::List { self.list_begin()? } else { self.set_begin()? };
                for _ in 0..n {
                    self.skip(et)?;
                }
                self.container_end();
            }
            TType::Map => {
                let (k, v, n) = self.map_begin()?;
                if n > 0 {
                    let (Some(k), Some(v)) = (k, v) else {
                        return Err(DecodeError::new("a map without element types"));
                    };
                    for _ in 0..n {
                        self.skip(k)?;
                        self.skip(v)?;
                    }
                }
                self.container_end();
            }
            other => return Err(DecodeError::new(format!("cannot skip a value of type {other:?}"))),
        }
        Ok(())
    }

    /// Fails unless a field has the type the schema gives it.
    pub fn expect(&self, got: TType, want: TType, what: &str) -> DResult<()> {
        if got != want {
            return Err(DecodeError::new(format!("{what} has type {got:?}, expected {want:?}")));
        }
        Ok(())
    }

    pub fn bool(&mut self) -> DResult<bool> {
        Ok(self.proto.read_bool()?)
    }

    pub fn i8(&mut self) -> DResult<i8> {
        Ok(self.proto.read_i8()?)
    }

    pub fn i16(&mut self) -> DResult<i16> {
        Ok(self.proto.read_i16()?)
    }

    pub fn i32(&mut self) -> DResult<i32> {
        Ok(self.proto.read_i32()?)
    }

    pub fn i64(&mut self) -> DResult<i64> {
        Ok(self.proto.read_i64()?)
    }

    pub fn double(&mut self) -> DResult<f64> {
        let d = self.proto.read_double()?;
        Ok(if self.doubles_be { f64::from_bits(d.to_bits().swap_bytes()) } else { d })
    }

    pub fn bytes(&mut self) -> DResult<Vec<u8>> {
        let mut pos = self.pos.get();
        let len = varint(self.data, &mut pos)?;
        if len > (self.data.len() - pos) as u64 {
            return Err(DecodeError::new(format!("a string of {len} bytes runs past the frame")));
        }
        Ok(self.proto.read_bytes()?)
    }

    pub fn string(&mut self) -> DResult<String> {
        Ok(String::from_utf8_lossy(&self.bytes()?).into_owned())
    }

    fn check_count(&self, size: i32) -> DResult<usize> {
        // Every element takes at least one byte, so a count above the bytes left is a lie.
        if size < 0 || size as usize > self.remaining() {
            return Err(DecodeError::new(format!("a container of {size} elements runs past the frame")));
        }
        Ok(size as usize)
    }

    /// `(element type, count)` of a list or set.
    pub fn list_begin(&mut self) -> DResult<(TType, usize)> {
        self.enter()?;
        let l = self.proto.read_list_begin()?;
        Ok((l.element_type, self.check_count(l.size)?))
    }

    pub fn set_begin(&mut self) -> DResult<(TType, usize)> {
        self.enter()?;
        let s = self.proto.read_set_begin()?;
        Ok((s.element_type, self.check_count(s.size)?))
    }

    /// `(key type, value type, count)` of a map; the types are `None` for an empty map.
    pub fn map_begin(&mut self) -> DResult<(Option<TType>, Option<TType>, usize)> {
        self.enter()?;
        let m = self.proto.read_map_begin()?;
        Ok((m.key_type, m.value_type, self.check_count(m.size)?))
    }

    /// Ends a list, set or map.
    pub fn container_end(&mut self) {
        self.leave();
    }
}

/// A compact-protocol writer that appends one message to a buffer.
pub struct Encoder<'a> {
    proto: TCompactOutputProtocol<&'a mut Vec<u8>>,
    doubles_be: bool,
}

impl<'a> Encoder<'a> {
    /// Writes the message header into `out` and returns an encoder for the message's struct.
    pub fn message(out: &'a mut Vec<u8>, msg: &Message) -> Encoder<'a> {
        out.push(PROTOCOL_ID);
        out.push(msg.version | ((msg.kind as u8) << 5));
        write_varint(out, u64::from(msg.seq_id as u32));
        write_varint(out, msg.name.len() as u64);
        out.extend_from_slice(msg.name.as_bytes());
        Encoder { proto: TCompactOutputProtocol::new(out), doubles_be: msg.version >= VERSION_DOUBLE_BE }
    }

    // Writing into a Vec cannot fail, so the crate's io results are dropped.
    pub fn struct_begin(&mut self, name: &str) {
        let _ = self.proto.write_struct_begin(&TStructIdentifier::new(name));
    }

    pub fn struct_end(&mut self) {
        let _ = self.proto.write_field_stop();
        let _ = self.proto.write_struct_end();
    }

    pub fn field(&mut self, id: i16, t: TType) {
        let _ = self.proto.write_field_begin(&TFieldIdentifier { name: None, field_type: t, id: Some(id) });
    }

    pub fn field_end(&mut self) {
        let _ = self.proto.write_field_end();
    }

    pub fn bool(&mut self, v: bool) {
        let _ = self.proto.write_bool(v);
    }

    pub fn i8(&mut self, v: i8) {
        let _ = self.proto.write_i8(v);
    }

    pub fn i16(&mut self, v: i16) {
        let _ = self.proto.write_i16(v);
    }

    pub fn i32(&mut self, v: i32) {
        let _ = self.proto.write_i32(v);
    }

    pub fn i64(&mut self, v: i64) {
        let _ = self.proto.write_i64(v);
    }

    pub fn double(&mut self, v: f64) {
        let v = if self.doubles_be { f64::from_bits(v.to_bits().swap_bytes()) } else { v };
        let _ = self.proto.write_double(v);
    }

    pub fn bytes(&mut self, v: &[u8]) {
        let _ = self.proto.write_bytes(v);
    }

    pub fn list_begin(&mut self, t: TType, n: usize) {
        let _ = self.proto.write_list_begin(&TListIdentifier::new(t, n as i32));
    }

    pub fn set_begin(&mut self, t: TType, n: usize) {
        let _ = self.proto.write_set_begin(&TSetIdentifier::new(t, n as i32));
    }

    pub fn map_begin(&mut self, k: TType, v: TType, n: usize) {
        let _ = self.proto.write_map_begin(&TMapIdentifier::new(k, v, n as i32));
    }

    pub fn container_end(&mut self) {}

    // Typed field helpers: one call per field of a generated struct.
    pub fn i32_field(&mut self, id: i16, v: i32) {
        self.field(id, TType::I32);
        self.i32(v);
        self.field_end();
    }

    pub fn i64_field(&mut self, id: i16, v: i64) {
        self.field(id, TType::I64);
        self.i64(v);
        self.field_end();
    }

    pub fn bytes_field(&mut self, id: i16, v: &[u8]) {
        self.field(id, TType::String);
        self.bytes(v);
        self.field_end();
    }
}
