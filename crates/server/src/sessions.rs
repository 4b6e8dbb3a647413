//! Client sessions of the graph protocol: created by `authenticate`, ended by `signout` or by staying idle longer
//! than the idle timeout.
//!
//! Session ids are random positive 63-bit numbers from the operating system's generator, so one client cannot
//! guess another's. A session's query state (the current space) is copied out for a request and written back after
//! it, so no lock is held while a query runs (and `SHOW SESSIONS` inside a session cannot deadlock on it).

use quiver_common::metrics::Metrics;
use quiver_common::{ErrorCode, QError};
use quiver_query::configs::ConfigCell;
use quiver_query::{Session, SessionInfo, SessionRegistry};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// NebulaGraph's default `session_idle_timeout_secs`.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(28_800);

struct Entry {
    user: String,
    client_ip: String,
    created_us: i64,
    updated_us: i64,
    last_used: Instant,
    state: Session,
}

impl Entry {
    fn expired(&self, idle_timeout: Duration) -> bool {
        self.last_used.elapsed() >= idle_timeout
    }
}

pub struct SessionManager {
    sessions: Mutex<HashMap<i64, Entry>>,
    /// Seconds (`session_idle_timeout_secs`, which `UPDATE CONFIGS` changes).
    idle_timeout_secs: ConfigCell,
    graph_addr: String,
    /// Optimizer rules every new session starts with switched off.
    disabled_rules: Vec<String>,
    metrics: std::sync::OnceLock<Arc<Metrics>>,
}

fn now_us() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_micros() as i64).unwrap_or(0)
}

/// The error NebulaGraph gives for a session id it does not know (never created, signed out, or expired).
pub fn session_not_found(id: i64) -> QError {
    QError::new(
        ErrorCode::SessionInvalid,
        format!("Get sessionId[{id}] failed: Session `{id}' not found: Session not existed!"),
    )
}

impl SessionManager {
    pub fn new(idle_timeout: Duration, graph_addr: String, disabled_rules: Vec<String>) -> SessionManager {
        SessionManager {
            sessions: Mutex::new(HashMap::new()),
            idle_timeout_secs: quiver_query::configs::cell(idle_timeout.as_secs().max(1) as i64),
            graph_addr,
            disabled_rules,
            metrics: std::sync::OnceLock::new(),
        }
    }

    /// Where session figures are recorded (`num_opened_sessions`, `num_active_sessions`, ...).
    pub fn set_metrics(&self, metrics: Arc<Metrics>) {
        let _ = self.metrics.set(metrics);
    }

    fn record(&self, name: &str, value: i64) {
        if let Some(m) = self.metrics.get() {
            m.add(name, value);
        }
    }

    /// A refused sign-in.
    pub fn auth_failed(&self) {
        self.record("num_auth_failed_sessions", 1);
    }

    /// The idle timeout's setting, for the registry of `UPDATE CONFIGS`.
    pub fn idle_timeout_cell(&self) -> ConfigCell {
        self.idle_timeout_secs.clone()
    }

    fn idle_timeout(&self) -> Duration {
        Duration::from_secs(self.idle_timeout_secs.load(std::sync::atomic::Ordering::Relaxed).max(1) as u64)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<i64, Entry>> {
        self.sessions.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn create(&self, user: &str, client_ip: &str) -> Result<i64, QError> {
        let now = now_us();
        let mut sessions = self.lock();
        loop {
            let id = (getrandom::u64().map_err(|e| QError::execution(format!("cannot draw a session id: {e}")))? >> 1)
                as i64;
            if id == 0 || sessions.contains_key(&id) {
                continue;
            }
            let state =
                Session { id, user: user.to_string(), space: None, disabled_rules: self.disabled_rules.clone() };
            sessions.insert(
                id,
                Entry {
                    user: user.to_string(),
                    client_ip: client_ip.to_string(),
                    created_us: now,
                    updated_us: now,
                    last_used: Instant::now(),
                    state,
                },
            );
            drop(sessions);
            self.record("num_opened_sessions", 1);
            self.record("num_active_sessions", 1);
            return Ok(id);
        }
    }

    /// The session's state for one request; refreshes its idle clock. An expired session is removed.
    pub fn checkout(&self, id: i64) -> Result<Session, QError> {
        if id == 0 {
            // Clients ping a connection with session id 0.
            return Err(QError::new(ErrorCode::SessionInvalid, "Invalid session id"));
        }
        let mut sessions = self.lock();
        let Some(entry) = sessions.get_mut(&id) else { return Err(session_not_found(id)) };
        if entry.expired(self.idle_timeout()) {
            log::info!("session {id} expired after {:?} idle", entry.last_used.elapsed());
            sessions.remove(&id);
            drop(sessions);
            self.record("num_active_sessions", -1);
            self.record("num_reclaimed_expired_sessions", 1);
            return Err(session_not_found(id));
        }
        entry.last_used = Instant::now();
        entry.updated_us = now_us();
        Ok(entry.state.clone())
    }

    /// Writes a request's resulting state (its current space) back, if the session still exists.
    pub fn checkin(&self, id: i64, state: Session) {
        if let Some(entry) = self.lock().get_mut(&id) {
            entry.state = state;
        }
    }

    pub fn remove(&self, id: i64) -> bool {
        let removed = self.lock().remove(&id).is_some();
        if removed {
            self.record("num_active_sessions", -1);
        }
        removed
    }

    /// Drops every session idle longer than the timeout; returns how many.
    pub fn reap(&self) -> usize {
        let mut sessions = self.lock();
        let before = sessions.len();
        sessions.retain(|_, e| !e.expired(self.idle_timeout()));
        let reaped = before - sessions.len();
        drop(sessions);
        if reaped > 0 {
            self.record("num_active_sessions", -(reaped as i64));
            self.record("num_reclaimed_expired_sessions", reaped as i64);
        }
        reaped
    }

    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl SessionRegistry for SessionManager {
    fn remove(&self, id: i64) -> bool {
        SessionManager::remove(self, id)
    }

    fn sessions(&self) -> Vec<SessionInfo> {
        let sessions = self.lock();
        sessions
            .iter()
            .filter(|(_, e)| !e.expired(self.idle_timeout()))
            .map(|(id, e)| SessionInfo {
                id: *id,
                user: e.user.clone(),
                space: e.state.space.clone(),
                created_us: e.created_us,
                updated_us: e.updated_us,
                graph_addr: self.graph_addr.clone(),
                timezone_offset_secs: 0,
                client_ip: e.client_ip.clone(),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_are_random_keep_their_space_and_expire() {
        let m = SessionManager::new(Duration::from_secs(1), "127.0.0.1:9669".into(), Vec::new());
        let a = m.create("root", "127.0.0.1").unwrap();
        let b = m.create("root", "127.0.0.1").unwrap();
        assert!(a > 0 && b > 0 && a != b);
        // Ids are not sequential: consecutive ids differ by more than a counter would.
        assert!((a - b).unsigned_abs() > 1_000_000, "{a} {b}");
        let mut s = m.checkout(a).unwrap();
        s.space = Some("nba".into());
        m.checkin(a, s);
        assert_eq!(m.checkout(a).unwrap().space.as_deref(), Some("nba"));
        assert_eq!(m.checkout(b).unwrap().space, None);
        assert_eq!(m.sessions().len(), 2);
        assert_eq!(m.checkout(0).unwrap_err().message, "Invalid session id");
        let e = m.checkout(12345).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (ErrorCode::SessionInvalid, "Get sessionId[12345] failed: Session `12345' not found: Session not existed!")
        );
        std::thread::sleep(Duration::from_millis(1100));
        assert!(m.sessions().is_empty());
        assert_eq!(m.checkout(a).unwrap_err().code, ErrorCode::SessionInvalid);
        assert_eq!(m.reap(), 1);
        assert!(m.is_empty());
    }
}
