//! What both front ends (HTTP and the graph protocol) share about connections: an optional bound on how many are
//! open at once, and how long a request that has started arriving may take to arrive whole.

use quiver_query::configs::ConfigCell;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Once the first byte of a request (a graph-protocol frame, an HTTP request's headers or body) has arrived, the
/// rest must arrive within this time, or the connection is closed. Idle connections between requests are not
/// limited on the graph port: they are the clients' pooled connections.
pub const REQUEST_ARRIVAL_TIMEOUT_DEFAULT: Duration = Duration::from_secs(30);

/// Client connections open across both ports, and the most that may be (`--max-connections`; none by default,
/// as NebulaGraph's `max_allowed_connections`).
#[derive(Debug)]
pub struct ConnectionLimit {
    open: AtomicUsize,
    /// The most open at once (`max_allowed_connections`, which `UPDATE CONFIGS` changes; `i64::MAX` when unbounded,
    /// NebulaGraph's default).
    max: ConfigCell,
}

/// One admitted connection; dropping it frees its place.
#[derive(Debug)]
pub struct ConnectionSlot {
    limit: Arc<ConnectionLimit>,
}

impl ConnectionLimit {
    pub fn new(max: Option<usize>) -> Arc<ConnectionLimit> {
        let max = max.map_or(i64::MAX, |m| m.min(i64::MAX as usize) as i64);
        Arc::new(ConnectionLimit { open: AtomicUsize::new(0), max: quiver_query::configs::cell(max) })
    }

    /// The bound's setting, for the registry of `UPDATE CONFIGS`.
    pub fn max_cell(&self) -> ConfigCell {
        self.max.clone()
    }

    /// A place for a new connection from `peer` on the `port` front end, or `None` (logged) when all are taken.
    pub fn admit(self: &Arc<ConnectionLimit>, peer: SocketAddr, port: &str) -> Option<ConnectionSlot> {
        let open = self.open.fetch_add(1, Ordering::AcqRel) + 1;
        let max = self.max.load(Ordering::Relaxed);
        if open as i64 > max {
            self.open.fetch_sub(1, Ordering::AcqRel);
            log::warn!(
                "refused a connection to the {port} port from {peer}: {max} connections are open, the most --max-connections (max_allowed_connections) allows"
            );
            return None;
        }
        Some(ConnectionSlot { limit: self.clone() })
    }

    /// Connections open now.
    pub fn open(&self) -> usize {
        self.open.load(Ordering::Acquire)
    }
}

impl Drop for ConnectionSlot {
    fn drop(&mut self) {
        self.limit.open.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_admits_up_to_its_bound_and_frees_places() {
        let peer: SocketAddr = "127.0.0.1:1".parse().unwrap();
        let limit = ConnectionLimit::new(Some(2));
        let a = limit.admit(peer, "graph").unwrap();
        let _b = limit.admit(peer, "HTTP").unwrap();
        assert!(limit.admit(peer, "graph").is_none());
        assert_eq!(limit.open(), 2);
        drop(a);
        assert!(limit.admit(peer, "graph").is_some());
        let unlimited = ConnectionLimit::new(None);
        let slots: Vec<_> = (0..1000).map(|_| unlimited.admit(peer, "HTTP").unwrap()).collect();
        assert_eq!(unlimited.open(), 1000);
        drop(slots);
        assert_eq!(unlimited.open(), 0);
    }
}
