//! The limits one query runs under: a deadline and a memory bound, checked by operators between batches, so a
//! query that exceeds either fails alone and leaves the server healthy.

use crate::{QError, QResult};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Default time a query may run.
pub const QUERY_TIMEOUT_DEFAULT: Duration = Duration::from_secs(60);
/// Default memory a query's intermediate results may hold.
pub const QUERY_MEMORY_DEFAULT_BYTES: usize = 2 << 30;

/// Configurable limits, fixed per server.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    pub timeout: Duration,
    pub memory_bytes: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { timeout: QUERY_TIMEOUT_DEFAULT, memory_bytes: QUERY_MEMORY_DEFAULT_BYTES }
    }
}

/// One query's budget. Cloning shares it: every operator of the query charges the same account.
#[derive(Debug, Clone)]
pub struct Budget {
    limits: Limits,
    deadline: Instant,
    used: Arc<AtomicUsize>,
    killed: Arc<AtomicBool>,
}

impl Budget {
    pub fn new(limits: Limits) -> Budget {
        let now = Instant::now();
        Budget {
            limits,
            deadline: now.checked_add(limits.timeout).unwrap_or(now + QUERY_TIMEOUT_DEFAULT),
            used: Arc::default(),
            killed: Arc::default(),
        }
    }

    pub fn unlimited() -> Budget {
        Budget::new(Limits { timeout: Duration::from_secs(365 * 24 * 3600), memory_bytes: usize::MAX })
    }

    /// Fails once the deadline has passed or the query was cancelled.
    pub fn check(&self) -> QResult<()> {
        if self.killed.load(Ordering::Relaxed) {
            return Err(QError::execution("Execution had been killed"));
        }
        if Instant::now() >= self.deadline {
            return Err(QError::new(
                crate::ErrorCode::ExecutionError,
                format!(
                    "Execution had been killed: the query ran longer than its timeout of {} ms",
                    self.limits.timeout.as_millis()
                ),
            ));
        }
        Ok(())
    }

    /// Records `bytes` more held by the query; fails once the total exceeds the bound.
    pub fn charge(&self, bytes: usize) -> QResult<()> {
        let total = self.used.fetch_add(bytes, Ordering::Relaxed).saturating_add(bytes);
        if total > self.limits.memory_bytes {
            return Err(QError::execution(format!(
                "GraphMemoryExceeded: (-2600) the query needed more than its memory bound of {} bytes",
                self.limits.memory_bytes
            )));
        }
        Ok(())
    }

    /// Records that `bytes` charged earlier are no longer held (a batch that has been consumed).
    pub fn release(&self, bytes: usize) {
        let _ = self.used.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |u| Some(u.saturating_sub(bytes)));
    }

    /// Cancels the query: its next [`Budget::check`] fails.
    pub fn kill(&self) {
        self.killed.store(true, Ordering::Relaxed);
    }

    pub fn used_bytes(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_bound_fails_the_query_past_the_limit() {
        let b = Budget::new(Limits { timeout: Duration::from_secs(10), memory_bytes: 100 });
        assert!(b.charge(60).is_ok());
        let e = b.charge(60).unwrap_err();
        assert_eq!(e.message, "GraphMemoryExceeded: (-2600) the query needed more than its memory bound of 100 bytes");
        assert_eq!(e.code, crate::ErrorCode::ExecutionError);
    }

    #[test]
    fn deadline_and_kill() {
        let b = Budget::new(Limits { timeout: Duration::ZERO, memory_bytes: 100 });
        assert_eq!(
            b.check().unwrap_err().message,
            "Execution had been killed: the query ran longer than its timeout of 0 ms"
        );
        let b = Budget::unlimited();
        assert!(b.check().is_ok());
        b.clone().kill();
        assert_eq!(b.check().unwrap_err().message, "Execution had been killed");
    }
}
