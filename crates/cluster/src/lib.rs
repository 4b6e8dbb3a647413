//! Cluster mode's storage side (`docs/design/cluster.md`): storage hosts whose partitions are Raft groups
//! ([`host`]), graphd's [`StorageClient`](quiver_api::StorageClient) over them ([`client`]), the requests between
//! them as values ([`rpc`]), the cluster as processes ([`process`]), and a whole cluster in one process over the
//! simulated network ([`sim`]), which the conformance suite and the fault tests run on.
//!
//! **Architecture invariant:** this crate knows storage hosts and partitions, never queries: graphd's query layer
//! reaches it only through the `StorageClient` trait, and it reaches Raft only through `quiver-raft`'s replicas.

pub mod chain;
pub mod client;
pub mod host;
pub mod jobs;
pub mod process;
pub mod rpc;
pub mod sim;

pub use chain::{ChainFault, ChainStep};
pub use client::{Cluster, ClusterStorage};
pub use host::{latest_leader, HostError, Hosts, PartLeader, StorageHost};
pub use rpc::HostHandle;
pub use sim::SimCluster;
