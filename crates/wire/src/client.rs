//! A blocking client of the graph service over one TCP connection: what the tests and the benchmark use to talk to
//! a server exactly as NebulaGraph's clients do (header frames, compact protocol version 2).

use crate::frame::{decode_frame, encode_frame, frame_len, Framing, PROTOCOL_COMPACT};
use crate::graph::{decode_reply, encode_call, Call, ClientReply, ExecutionResponse, Reply};
use quiver_common::Value;
use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

pub struct Client {
    stream: TcpStream,
    seq: i32,
}

fn invalid(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg)
}

impl Client {
    pub fn connect(addr: impl ToSocketAddrs, timeout: Duration) -> io::Result<Client> {
        let stream = TcpStream::connect(addr)?;
        stream.set_read_timeout(Some(timeout))?;
        stream.set_nodelay(true)?;
        Ok(Client { stream, seq: 0 })
    }

    /// Sends one call; reads its reply unless the call is one-way (`signout`).
    pub fn call(&mut self, call: &Call) -> io::Result<Option<ClientReply>> {
        self.seq = self.seq.wrapping_add(1);
        let framing = Framing::Header { flags: 0, seq_id: self.seq as u32, protocol: PROTOCOL_COMPACT };
        self.stream.write_all(&encode_frame(framing, &encode_call(self.seq, call)))?;
        if matches!(call, Call::Signout { .. }) {
            return Ok(None);
        }
        let mut prefix = [0u8; 4];
        self.stream.read_exact(&mut prefix)?;
        let len = frame_len(prefix, usize::MAX).map_err(|e| invalid(e.to_string()))?;
        let mut body = vec![0u8; len];
        self.stream.read_exact(&mut body)?;
        let (_, payload) = decode_frame(&body).map_err(|e| invalid(e.to_string()))?;
        let (msg, reply) = decode_reply(payload).map_err(|e| invalid(e.to_string()))?;
        if msg.seq_id != self.seq {
            return Err(invalid(format!("reply to call {} answered call {}", self.seq, msg.seq_id)));
        }
        Ok(Some(reply))
    }

    /// `verifyClientVersion("3.0.0")` then `authenticate`: the session id.
    pub fn open_session(&mut self, user: &str, password: &str) -> io::Result<i64> {
        match self.call(&Call::VerifyClientVersion { version: "3.0.0".into() })? {
            Some(Ok(Reply::Verify { error_code: 0, .. })) => {}
            other => return Err(invalid(format!("verifyClientVersion: {other:?}"))),
        }
        match self.call(&Call::Authenticate { username: user.into(), password: password.into() })? {
            Some(Ok(Reply::Auth(a))) if a.error_code == 0 => {
                a.session_id.ok_or_else(|| invalid("authenticate: no session id".into()))
            }
            other => Err(invalid(format!("authenticate: {other:?}"))),
        }
    }

    pub fn execute(
        &mut self,
        session_id: i64,
        stmt: &str,
        params: BTreeMap<String, Value>,
    ) -> io::Result<ExecutionResponse> {
        match self.call(&Call::Execute { session_id, stmt: stmt.as_bytes().to_vec(), params, json: false })? {
            Some(Ok(Reply::Execution(r))) => Ok(r),
            other => Err(invalid(format!("execute: {other:?}"))),
        }
    }

    pub fn stream(&mut self) -> &mut TcpStream {
        &mut self.stream
    }
}
