//! The slow-query log: every request that ran at least `slow_query_threshold_us` microseconds (NebulaGraph's flag,
//! 200,000 by default, changed at run time with `UPDATE CONFIGS`) is appended to a file as one JSON line (time,
//! session, user, space, statement, duration, rows, error). The engine tells it of each finished request through
//! the query crate's `QueryObserver`; the query layer itself writes no file.

use quiver_common::datetime::DateTime;
use quiver_query::configs::{cell, ConfigCell};
use quiver_query::{FinishedQuery, QueryObserver};
use std::io::Write;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

/// NebulaGraph's default `slow_query_threshold_us`.
pub const SLOW_QUERY_THRESHOLD_US_DEFAULT: i64 = 200_000;

pub struct SlowQueryLog {
    threshold_us: ConfigCell,
    file: Mutex<std::fs::File>,
}

impl SlowQueryLog {
    /// Appends to `path` (its directory created), logging requests of at least `threshold_us`.
    pub fn open(path: &Path, threshold_us: i64) -> Result<SlowQueryLog, String> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| format!("cannot open the slow-query log {}: {e}", path.display()))?;
        Ok(SlowQueryLog { threshold_us: cell(threshold_us), file: Mutex::new(file) })
    }

    /// The threshold's setting, for the registry of `UPDATE CONFIGS`.
    pub fn threshold_cell(&self) -> ConfigCell {
        self.threshold_us.clone()
    }
}

impl QueryObserver for SlowQueryLog {
    fn finished(&self, q: &FinishedQuery<'_>) {
        let duration_us = q.duration.as_micros().min(i64::MAX as u128) as i64;
        if duration_us < self.threshold_us.load(Ordering::Relaxed) {
            return;
        }
        let now_us = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_micros() as i64);
        let line = serde_json::json!({
            "time": DateTime::from_micros(now_us).map(|t| t.to_string()).unwrap_or_default(),
            "session": q.session,
            "user": q.user,
            "space": q.space,
            "statement": q.text,
            "duration_us": duration_us,
            "rows": q.rows,
            "error": q.error.map(|e| e.to_string()),
        });
        let mut text = line.to_string();
        text.push('\n');
        // One write per line, so lines of concurrent requests never interleave.
        let mut file = self.file.lock().unwrap_or_else(|p| p.into_inner());
        if let Err(e) = file.write_all(text.as_bytes()) {
            log::warn!("cannot write the slow-query log: {e}");
        }
    }
}
