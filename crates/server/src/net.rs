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

/// The listeners of one port: its address, and for the IPv4 loopback also the IPv6 one (`::1`, where the system
/// has it), so a client that resolves `localhost` to either reaches the server.
pub struct Acceptor {
    listeners: Vec<tokio::net::TcpListener>,
    /// Where the next accept starts looking, so a busy listener does not starve the other.
    next: std::sync::atomic::AtomicUsize,
}

impl Acceptor {
    /// Binds `addr`; for `127.0.0.1:port` also `[::1]:port` when it can (a system without IPv6 keeps the first).
    pub async fn bind(addr: std::net::SocketAddr) -> std::io::Result<Acceptor> {
        let first = tokio::net::TcpListener::bind(addr).await?;
        let mut listeners = vec![first];
        if addr.ip() == std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST) {
            let port = listeners[0].local_addr()?.port();
            match tokio::net::TcpListener::bind((std::net::Ipv6Addr::LOCALHOST, port)).await {
                Ok(l) => listeners.push(l),
                Err(e) => log::info!("not listening on [::1]:{port} as well: {e}"),
            }
        }
        Ok(Acceptor { listeners, next: Default::default() })
    }

    /// One listener as it is.
    pub fn single(listener: tokio::net::TcpListener) -> Acceptor {
        Acceptor { listeners: vec![listener], next: Default::default() }
    }

    /// The addresses listened on.
    pub fn local_addrs(&self) -> Vec<std::net::SocketAddr> {
        self.listeners.iter().filter_map(|l| l.local_addr().ok()).collect()
    }

    /// The next connection on any of the listeners.
    pub async fn accept(&self) -> std::io::Result<(tokio::net::TcpStream, std::net::SocketAddr)> {
        let n = self.listeners.len();
        let start = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        std::future::poll_fn(|cx| {
            for i in 0..n {
                if let std::task::Poll::Ready(r) = self.listeners[(start + i) % n].poll_accept(cx) {
                    return std::task::Poll::Ready(r);
                }
            }
            std::task::Poll::Pending
        })
        .await
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
