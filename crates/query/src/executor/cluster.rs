//! The statements about the cluster's machines (SHOW HOSTS, SHOW PARTS, SHOW ZONES, DESCRIBE ZONE, SHOW META
//! LEADER) and its character sets. The embedded mode is one host playing every role, which owns and leads every
//! partition of every space; the columns are NebulaGraph's (its `ShowHostsExecutor`, `PartExecutor`,
//! `ZoneExecutor`, `ShowMetaLeaderExecutor`, `CharsetExecutor`).

use crate::{DataSet, QueryEngine};
use quiver_api::SpaceDesc;
use quiver_common::datetime::DateTime;
use quiver_common::{QError, QResult, Value};
use quiver_syntax::ast::{HostRole, Statement};

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
        let (host, port) = (Value::str(self.local_host.0.clone()), Value::Int(self.local_host.1 as i64));
        Ok(match stmt {
            Statement::ShowHosts(None) | Statement::ShowHosts(Some(HostRole::Storage)) => self.show_storage_hosts(),
            Statement::ShowHosts(Some(HostRole::Agent)) => {
                DataSet::with_columns(&["Host", "Port", "Status", "Role", "Git Info Sha", "Version"])
            }
            Statement::ShowHosts(Some(role)) => {
                let mut ds = DataSet::with_columns(&["Host", "Port", "Status", "Role", "Git Info Sha", "Version"]);
                let sha = Value::str(env!("CARGO_PKG_VERSION"));
                ds.push_row([
                    host,
                    port,
                    Value::str("ONLINE"),
                    Value::str(role.name()),
                    sha,
                    Value::str(NEBULA_VERSION),
                ]);
                ds
            }
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

    /// SHOW HOSTS: this host with every partition of every space, led here, and the total row.
    fn show_storage_hosts(&self) -> DataSet {
        let mut ds = DataSet::with_columns(&[
            "Host",
            "Port",
            "Status",
            "Leader count",
            "Leader distribution",
            "Partition distribution",
            "Version",
        ]);
        let mut spaces: Vec<(String, u32)> =
            self.catalog.spaces().iter().map(|s| (s.name.clone(), s.partition_num)).collect();
        spaces.sort();
        let total: i64 = spaces.iter().map(|(_, n)| *n as i64).sum();
        let distribution = spaces.iter().map(|(name, n)| format!("{name}:{n}")).collect::<Vec<_>>().join(", ");
        let here = if spaces.is_empty() { "No valid partition".to_string() } else { distribution.clone() };
        ds.push_row([
            Value::str(self.local_host.0.clone()),
            Value::Int(self.local_host.1 as i64),
            Value::str("ONLINE"),
            Value::Int(total),
            Value::str(here.clone()),
            Value::str(here),
            Value::str(NEBULA_VERSION),
        ]);
        let summed = if spaces.is_empty() { Value::NULL } else { Value::str(distribution) };
        ds.push_row([
            Value::str("Total"),
            Value::NULL,
            Value::NULL,
            Value::Int(total),
            summed.clone(),
            summed,
            Value::NULL,
        ]);
        ds
    }

    /// SHOW PARTS [ids]: each partition of the space, led by this host, which is its only peer.
    pub(crate) fn show_parts(&self, space: &SpaceDesc, ids: Option<&[i64]>) -> QResult<DataSet> {
        let me = Value::str(self.local_addr());
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
            ds.push_row([Value::Int(p), me.clone(), me.clone(), Value::str("")]);
        }
        Ok(ds)
    }
}
