//! Types shared by every layer of Quiver: values and their types, error codes, limits, the expression tree and
//! its evaluator, and the VID hash.
//!
//! **Architecture invariant:** this crate knows nothing of storage, the catalog, the network or the parser. The
//! expression evaluator reaches data only through the [`eval::EvalContext`] trait.

pub mod budget;
pub mod datetime;
pub mod error;
pub mod eval;
pub mod expr;
pub mod fasthash;
pub mod functions;
pub mod geo;
pub mod limits;
pub mod memory;
pub mod metrics;
pub mod murmur;
pub mod password;
pub mod pattern;
pub mod rng;
pub mod types;
pub mod value;

pub use error::{ErrorCode, QError, QResult};
pub use types::{ItemType, PropType};
pub use value::{NullKind, Value};
