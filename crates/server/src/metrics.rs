//! The graph service's figures, recorded as the engine tells of each request (`QueryObserver`), and the storage
//! engine's figures `/metrics` adds.

use quiver_common::metrics::Metrics;
use quiver_query::configs::ConfigCell;
use quiver_query::{FinishedQuery, QueryObserver};
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// Records NebulaGraph's query figures: `num_queries`, `num_active_queries`, `num_query_errors`,
/// `num_killed_queries`, `query_latency_us`, and for requests at or past the slow-query threshold
/// `num_slow_queries` and `slow_query_latency_us`.
pub struct QueryMetrics {
    metrics: Arc<Metrics>,
    slow_threshold_us: ConfigCell,
}

impl QueryMetrics {
    pub fn new(metrics: Arc<Metrics>, slow_threshold_us: ConfigCell) -> QueryMetrics {
        QueryMetrics { metrics, slow_threshold_us }
    }
}

impl QueryObserver for QueryMetrics {
    fn started(&self) {
        self.metrics.add("num_active_queries", 1);
    }

    fn finished(&self, q: &FinishedQuery<'_>) {
        let m = &self.metrics;
        let us = q.duration.as_micros().min(i64::MAX as u128) as i64;
        m.add("num_active_queries", -1);
        m.add("num_queries", 1);
        m.add("query_latency_us", us);
        if let Some(e) = q.error {
            m.add("num_query_errors", 1);
            if e.message.starts_with("Execution had been killed") {
                m.add("num_killed_queries", 1);
            }
        }
        if us >= self.slow_threshold_us.load(Ordering::Relaxed) {
            m.add("num_slow_queries", 1);
            m.add("slow_query_latency_us", us);
        }
    }
}
