//! The statements about the cluster's machines (SHOW HOSTS, SHOW PARTS, SHOW ZONES, DESCRIBE ZONE, SHOW META
//! LEADER) and its character sets. The embedded mode is one host playing every role, which owns and leads every
//! partition of every space; the columns are NebulaGraph's (its `ShowHostsExecutor`, `PartExecutor`,
//! `ZoneExecutor`, `ShowMetaLeaderExecutor`, `CharsetExecutor`).

use crate::{DataSet, QueryEngine};
use quiver_api::{ClusterView, SpaceDesc};
use quiver_common::datetime::DateTime;
use quiver_common::{QError, QResult, Value};
use quiver_syntax::ast::{HostRole, Statement};
use std::collections::BTreeMap;

/// The version SHOW HOSTS reports: the NebulaGraph release whose behaviour Quiver follows.
const NEBULA_VERSION: &str = "3.8.0";

impl QueryEngine {
    /// This host as NebulaGraph writes one: `host:port`.
    pub(crate) fn local_addr(&self) -> String {
        format!("{}:{}", self.local_host.0, self.local_host.1)
    }

    /// The one zone NebulaGraph would give this host (`AddHostsProcessor`'s name for it).
    fn zone_name(&self) -> String {
        let (host, port) = &self.local_host;
        format!("default_zone_{host}_{port}")
    }

    /// A new snapshot's name, as NebulaGraph's meta makes it: `SNAPSHOT_` and the time to the second (UTC here),
    /// waiting for the next second when a snapshot of this one exists.
    fn snapshot_name(&self) -> QResult<String> {
        let taken = self.storage.snapshots()?;
        loop {
            let secs = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs() as i64)
                .unwrap_or(0);
            let DateTime { date: d, time: t } = DateTime::from_timestamp(secs).expect("the clock is within dates");
            let name = format!(
                "SNAPSHOT_{:04}_{:02}_{:02}_{:02}_{:02}_{:02}",
                d.year, d.month, d.day, t.hour, t.minute, t.sec
            );
            if !taken.contains(&name) {
                return Ok(name);
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }

    pub(crate) fn cluster_statement(&self, stmt: &Statement) -> QResult<DataSet> {
        if let Some(cluster) = &self.cluster {
            if let Some(ds) = self.cluster_view_statement(cluster.as_ref(), stmt)? {
                return Ok(ds);
            }
        }
        let (host, port) = (Value::str(self.local_host.0.clone()), Value::Int(self.local_host.1 as i64));
        Ok(match stmt {
            Statement::AddHosts { .. } => return Err(QError::not_supported("`ADD HOSTS' in the embedded mode")),
            Statement::DropHosts(_) => return Err(QError::not_supported("`DROP HOSTS' in the embedded mode")),
            // `SHOW HOSTS` is the storage hosts' partitions; `SHOW HOSTS STORAGE`, like the other roles, their
            // builds (NebulaGraph's ShowHostsExecutor).
            Statement::ShowHosts(None) => self.show_storage_hosts(),
            Statement::ShowHosts(Some(HostRole::Agent)) => self.role_hosts("AGENT", []),
            Statement::ShowHosts(Some(role)) => self.role_hosts(role.name(), [(host, port, true)]),
            Statement::ShowCharset => {
                let mut ds = DataSet::with_columns(&["Charset", "Description", "Default collation", "Maxlen"]);
                ds.push_row([Value::str("utf8"), Value::str("UTF-8 Unicode"), Value::str("utf8_bin"), Value::Int(4)]);
                ds
            }
            Statement::ShowCollation => {
                let mut ds = DataSet::with_columns(&["Collation", "Charset"]);
                ds.push_row([Value::str("utf8_bin"), Value::str("utf8")]);
                ds
            }
            Statement::ShowMetaLeader => {
                let mut ds = DataSet::with_columns(&["Meta Leader", "secs from last heart beat"]);
                ds.push_row([Value::str(self.local_addr()), Value::Int(0)]);
                ds
            }
            Statement::ShowZones => {
                let mut ds = DataSet::with_columns(&["Name", "Host", "Port"]);
                ds.push_row([Value::str(self.zone_name()), host, port]);
                ds
            }
            Statement::DescribeZone(name) => {
                if *name != self.zone_name() {
                    return Err(QError::execution("Zone not existed!"));
                }
                let mut ds = DataSet::with_columns(&["Hosts", "Port"]);
                ds.push_row([host, port]);
                ds
            }
            Statement::CreateSnapshot => {
                self.storage.create_snapshot(&self.snapshot_name()?)?;
                DataSet::empty()
            }
            Statement::DropSnapshot(name) => {
                if !self.storage.drop_snapshot(name)? {
                    return Err(QError::execution("Snapshot not found!"));
                }
                DataSet::empty()
            }
            Statement::ShowSnapshots => {
                let mut ds = DataSet::with_columns(&["Name", "Status", "Hosts"]);
                let me = self.local_addr();
                for name in self.storage.snapshots()? {
                    ds.push_row([Value::str(name), Value::str("VALID"), Value::str(me.clone())]);
                }
                ds
            }
            _ => unreachable!("not a cluster statement: {stmt:?}"),
        })
    }

    /// The statements a cluster's view answers (`None`: the others, answered as in the embedded mode).
    fn cluster_view_statement(&self, cluster: &dyn ClusterView, stmt: &Statement) -> QResult<Option<DataSet>> {
        let split = |addr: &str| -> (Value, Value) {
            match addr.rsplit_once(':') {
                Some((h, p)) => (Value::str(h), p.parse().map(Value::Int).unwrap_or(Value::NULL)),
                None => (Value::str(addr), Value::NULL),
            }
        };
        Ok(Some(match stmt {
            Statement::ShowHosts(Some(HostRole::Storage)) => {
                let hosts = cluster.storage_hosts()?;
                self.role_hosts(
                    "STORAGE",
                    hosts.iter().map(|h| {
                        let (host, port) = split(&h.addr);
                        (host, port, h.online)
                    }),
                )
            }
            Statement::ShowHosts(None) => {
                let hosts = cluster.storage_hosts()?;
                let rows = hosts
                    .into_iter()
                    .map(|h| {
                        let (host, port) = split(&h.addr);
                        HostRow { host, port, online: h.online, leaders: h.leaders, parts: h.parts }
                    })
                    .collect();
                storage_hosts(rows)
            }
            Statement::ShowHosts(Some(HostRole::Meta)) => {
                // A metad is shown ONLINE when it leads or while the leader answers (followers are not asked).
                let online = cluster.meta_leader().is_ok();
                self.role_hosts(
                    "META",
                    cluster.metas().iter().map(|addr| {
                        let (host, port) = split(addr);
                        (host, port, online)
                    }),
                )
            }
            Statement::ShowMetaLeader => {
                let mut ds = DataSet::with_columns(&["Meta Leader", "secs from last heart beat"]);
                ds.push_row([Value::str(cluster.meta_leader()?), Value::Int(0)]);
                ds
            }
            Statement::AddHosts { zone: Some(_), .. } => {
                return Err(QError::not_supported("`ADD HOSTS ... INTO NEW ZONE'"));
            }
            Statement::AddHosts { hosts, zone: None } => {
                cluster.add_hosts(hosts)?;
                DataSet::empty()
            }
            Statement::DropHosts(hosts) => {
                cluster.drop_hosts(hosts)?;
                DataSet::empty()
            }
            _ => return Ok(None),
        }))
    }

    /// `SHOW HOSTS GRAPH|META|STORAGE|AGENT`: one row per host of the role, with this build's commit.
    fn role_hosts(&self, role: &str, hosts: impl IntoIterator<Item = (Value, Value, bool)>) -> DataSet {
        let mut ds = DataSet::with_columns(&["Host", "Port", "Status", "Role", "Git Info Sha", "Version"]);
        for (host, port, online) in hosts {
            let status = Value::str(if online { "ONLINE" } else { "OFFLINE" });
            ds.push_row([
                host,
                port,
                status,
                Value::str(role),
                Value::str(self.git_sha.clone()),
                Value::str(NEBULA_VERSION),
            ]);
        }
        ds
    }

    /// SHOW HOSTS: this host with every partition of every space, led here, and the total row.
    fn show_storage_hosts(&self) -> DataSet {
        let counts: BTreeMap<String, u32> =
            self.catalog.spaces().iter().map(|s| (s.name.clone(), s.partition_num)).collect();
        storage_hosts(vec![HostRow {
            host: Value::str(self.local_host.0.clone()),
            port: Value::Int(self.local_host.1 as i64),
            online: true,
            leaders: counts.clone(),
            parts: counts,
        }])
    }

    /// SHOW PARTS [ids]: each partition of the space, led by this host, which is its only peer.
    pub(crate) fn show_parts(&self, space: &SpaceDesc, ids: Option<&[i64]>) -> QResult<DataSet> {
        let me = Value::str(self.local_addr());
        let known = match &self.cluster {
            Some(cluster) => Some(cluster.parts(space)?),
            None => None,
        };
        let mut parts: Vec<i64> = match ids {
            None => (1..=space.partition_num as i64).collect(),
            Some(ids) => ids.to_vec(),
        };
        parts.sort_unstable();
        parts.dedup();
        if parts.iter().any(|p| !(1..=space.partition_num as i64).contains(p)) {
            return Err(QError::execution("Part not existed!"));
        }
        let mut ds = DataSet::with_columns(&["Partition ID", "Leader", "Peers", "Losts"]);
        for p in parts {
            match known.as_ref().and_then(|k| k.iter().find(|i| i.id as i64 == p)) {
                Some(info) => ds.push_row([
                    Value::Int(p),
                    info.leader.as_ref().map_or(Value::str(""), |l| Value::str(l.clone())),
                    Value::str(info.peers.join(", ")),
                    Value::str(info.losts.join(", ")),
                ]),
                None => ds.push_row([Value::Int(p), me.clone(), me.clone(), Value::str("")]),
            }
        }
        Ok(ds)
    }
}

/// One storage host's row of SHOW HOSTS.
struct HostRow {
    host: Value,
    port: Value,
    online: bool,
    leaders: BTreeMap<String, u32>,
    parts: BTreeMap<String, u32>,
}

/// `name:n, ...` by space name, of the spaces with a count.
fn distribution(counts: &BTreeMap<String, u32>) -> Option<String> {
    let shown: Vec<String> = counts.iter().filter(|(_, n)| **n > 0).map(|(s, n)| format!("{s}:{n}")).collect();
    (!shown.is_empty()).then(|| shown.join(", "))
}

/// SHOW HOSTS' rows (NebulaGraph's `ShowHostsExecutor`): each host, then the total row.
fn storage_hosts(rows: Vec<HostRow>) -> DataSet {
    let mut ds = DataSet::with_columns(&[
        "Host",
        "Port",
        "Status",
        "Leader count",
        "Leader distribution",
        "Partition distribution",
        "Version",
    ]);
    let (mut leaders, mut parts) = (BTreeMap::<String, u32>::new(), BTreeMap::<String, u32>::new());
    for row in rows {
        let none = || "No valid partition".to_string();
        for (s, n) in &row.leaders {
            *leaders.entry(s.clone()).or_default() += n;
        }
        for (s, n) in &row.parts {
            *parts.entry(s.clone()).or_default() += n;
        }
        ds.push_row([
            row.host,
            row.port,
            Value::str(if row.online { "ONLINE" } else { "OFFLINE" }),
            Value::Int(row.leaders.values().map(|n| *n as i64).sum()),
            Value::str(distribution(&row.leaders).unwrap_or_else(none)),
            Value::str(distribution(&row.parts).unwrap_or_else(none)),
            Value::str(NEBULA_VERSION),
        ]);
    }
    let total = |c: &BTreeMap<String, u32>| distribution(c).map_or(Value::NULL, Value::str);
    ds.push_row([
        Value::str("Total"),
        Value::NULL,
        Value::NULL,
        Value::Int(leaders.values().map(|n| *n as i64).sum()),
        total(&leaders),
        total(&parts),
        Value::NULL,
    ]);
    ds
}
