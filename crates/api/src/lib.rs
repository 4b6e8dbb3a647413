//! The boundaries between the query layer and the services it uses: catalog types, the [`Catalog`] and
//! [`StorageClient`] traits, and the request and response types that cross them; [`conformance`] is the suite every
//! [`StorageClient`] is run against.
//!
//! **Architecture invariant:** the query layer reaches storage and the catalog only through these traits. The
//! embedded server implements them in-process; a cluster implements them over the network, with no change to the
//! query layer ([`ClusterView`] is what it sees of a cluster's machines). Every storage call takes a batch (of VIDs, keys or mutations), never one object.

pub mod catalog;
pub mod cluster;
pub mod conformance;
pub mod index;
pub mod schema;
pub mod storage;

pub use catalog::*;
pub use cluster::*;
pub use index::*;
pub use schema::*;
pub use storage::*;
