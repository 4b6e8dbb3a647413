//! What the query layer sees of a cluster's machines: SHOW HOSTS, SHOW PARTS, SHOW META LEADER, ADD HOSTS and
//! DROP HOSTS in a cluster of processes. The embedded server has no such view (it is one host playing every role).

use crate::schema::SpaceDesc;
use quiver_common::QResult;
use std::collections::BTreeMap;

/// One storage host as SHOW HOSTS lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct StorageHostInfo {
    /// `ip:port`.
    pub addr: String,
    pub online: bool,
    /// Per space name, the partitions this host leads.
    pub leaders: BTreeMap<String, u32>,
    /// Per space name, the partitions placed on this host.
    pub parts: BTreeMap<String, u32>,
}

/// One partition as SHOW PARTS lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct PartInfo {
    pub id: u32,
    /// The host that leads it, if one does now.
    pub leader: Option<String>,
    /// Every host it is placed on.
    pub peers: Vec<String>,
    /// Those of its peers that are offline.
    pub losts: Vec<String>,
}

pub trait ClusterView: Send + Sync {
    /// Every registered storage host, by address.
    fn storage_hosts(&self) -> QResult<Vec<StorageHostInfo>>;
    /// Every partition of `space`, from 1.
    fn parts(&self, space: &SpaceDesc) -> QResult<Vec<PartInfo>>;
    /// The meta service's leader, `ip:port`.
    fn meta_leader(&self) -> QResult<String>;
    /// The metads and the graphds, `ip:port` (SHOW HOSTS META, SHOW HOSTS GRAPH).
    fn metas(&self) -> Vec<String>;
    /// `ADD HOSTS`.
    fn add_hosts(&self, hosts: &[String]) -> QResult<()>;
    /// `DROP HOSTS`.
    fn drop_hosts(&self, hosts: &[String]) -> QResult<()>;
}
