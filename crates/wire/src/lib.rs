//! NebulaGraph's graph service protocol: fbthrift header framing ([`frame`]), the compact protocol through the
//! `thrift` crate ([`compact`]), the `Value` union ([`value`]) and `GraphService`'s calls and replies ([`graph`]).
//!
//! Pure byte-slice functions: no sockets, no sessions, no query engine. The server crate owns those.

pub mod compact;
pub mod frame;
pub mod graph;
pub mod value;
