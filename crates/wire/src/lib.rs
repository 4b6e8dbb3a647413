//! NebulaGraph's graph service protocol: fbthrift header framing ([`frame`]), the compact protocol through the
//! `thrift` crate ([`compact`]), the `Value` union ([`value`]), `GraphService`'s calls and replies ([`graph`]), and a
//! blocking client ([`client`]) for tests and the benchmark.
//!
//! Everything but the client is pure functions over byte slices: no sockets, no sessions, no query engine (the server
//! crate owns those).

pub mod client;
pub mod compact;
pub mod frame;
pub mod graph;
pub mod value;
