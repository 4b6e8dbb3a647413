//! The limits one query runs under: a deadline and a memory bound, checked by operators between batches, so a
//! query that exceeds either fails alone and leaves the server healthy.

use crate::memory::{self, Account, Scope};
use crate::{QError, QResult};
use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicBool, Ordering};
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

thread_local! {
    /// The budget the current thread runs under, for code that has no handle on it (the evaluator's loops).
    static CURRENT: RefCell<Option<Budget>> = const { RefCell::new(None) };
    /// Calls of [`check_current`] since its last full check.
    static CALLS: Cell<u32> = const { Cell::new(0) };
}

/// While alive, the current thread runs under a budget (see [`Budget::enter`]). Not `Send`.
pub struct BudgetScope {
    _memory: Scope,
    previous: Option<Budget>,
}

impl Drop for BudgetScope {
    fn drop(&mut self) {
        let previous = self.previous.take();
        CURRENT.with(|c| *c.borrow_mut() = previous);
    }
}

/// Checks the current thread's budget (if it runs under one) every [`TICKS_PER_CHECK`] calls, and its memory bound
/// at every call: for loops that have no handle on the budget, such as a `reduce()` over a long list, so that no
/// expression runs past its query's deadline or memory bound.
pub fn check_current() -> QResult<()> {
    let full = CALLS.with(|n| {
        let calls = n.get() + 1;
        n.set(if calls >= TICKS_PER_CHECK { 0 } else { calls });
        calls >= TICKS_PER_CHECK
    });
    if full {
        return CURRENT.with(|c| c.borrow().as_ref().map_or(Ok(()), Budget::check));
    }
    memory::reserve(0)
}

/// A budget sent to another service (a storage host serving part of a query) arrives as its limits with the time
/// left and whether it was killed: the receiver checks its own deadline and memory account under them. Cancelling
/// the query after the request was sent does not reach it (the request ends by its deadline).
impl serde::Serialize for Budget {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        let limits = (self.limits.timeout.as_millis() as u64, self.limits.memory_bytes as u64);
        (left.as_millis() as u64, limits, self.is_killed()).serialize(s)
    }
}

impl<'de> serde::Deserialize<'de> for Budget {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Budget, D::Error> {
        let (left, (timeout, memory), killed) = <(u64, (u64, u64), bool)>::deserialize(d)?;
        let limits = Limits {
            timeout: Duration::from_millis(timeout),
            memory_bytes: usize::try_from(memory).unwrap_or(usize::MAX),
        };
        let mut budget = Budget::new(limits);
        let now = Instant::now();
        budget.deadline = now.checked_add(Duration::from_millis(left)).unwrap_or(budget.deadline);
        if killed {
            budget.kill();
        }
        Ok(budget)
    }
}

/// Rows or edges an operator produces between two [`Budget::check`]s (see [`Meter`]).
pub const TICKS_PER_CHECK: u32 = 1024;

/// One query's budget. Cloning shares it: every operator of the query checks the same deadline and account.
#[derive(Debug, Clone)]
pub struct Budget {
    limits: Limits,
    deadline: Instant,
    memory: Arc<Account>,
    killed: Arc<AtomicBool>,
    /// Why it was killed, when not by KILL QUERY (the server's memory watchdog).
    reason: Arc<std::sync::OnceLock<QError>>,
}

impl Budget {
    pub fn new(limits: Limits) -> Budget {
        let now = Instant::now();
        Budget {
            limits,
            deadline: now.checked_add(limits.timeout).unwrap_or(now + QUERY_TIMEOUT_DEFAULT),
            memory: Account::new(limits.memory_bytes),
            killed: Arc::default(),
            reason: Arc::default(),
        }
    }

    pub fn unlimited() -> Budget {
        Budget::new(Limits { timeout: Duration::from_secs(365 * 24 * 3600), memory_bytes: usize::MAX })
    }

    /// Makes this the current thread's budget until the scope is dropped: its allocations count towards the
    /// memory bound, and [`check_current`] checks this budget. A query enters it on every thread it runs on; what a
    /// thread allocates outside it is not the query's.
    pub fn enter(&self) -> BudgetScope {
        let memory = self.memory.enter();
        let previous = CURRENT.with(|c| c.replace(Some(self.clone())));
        BudgetScope { _memory: memory, previous }
    }

    /// Fails once the deadline has passed, the query was cancelled, or it holds more than its memory bound.
    pub fn check(&self) -> QResult<()> {
        if self.killed.load(Ordering::Relaxed) {
            return Err(self.reason.get().cloned().unwrap_or_else(|| QError::execution("Execution had been killed")));
        }
        if self.memory.used_bytes() > self.limits.memory_bytes {
            return Err(memory::exceeded_error(self.limits.memory_bytes));
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

    /// Cancels the query: its next [`Budget::check`] fails.
    pub fn kill(&self) {
        self.killed.store(true, Ordering::Relaxed);
    }

    /// Cancels the query with `reason` as the error its next [`Budget::check`] returns.
    pub fn kill_because(&self, reason: QError) {
        let _ = self.reason.set(reason);
        self.killed.store(true, Ordering::Relaxed);
    }

    pub fn is_killed(&self) -> bool {
        self.killed.load(Ordering::Relaxed)
    }

    /// What the query holds now, as its account counts it.
    pub fn used_bytes(&self) -> usize {
        self.memory.used_bytes()
    }

    /// The most the query has held at once.
    pub fn peak_bytes(&self) -> usize {
        self.memory.peak_bytes()
    }
}

/// Checks a budget per row (or edge) of a loop that produces them without returning to the executor between
/// batches: a GO's output, a grouping, a neighbour read. A loop can outgrow the memory bound by one row before it
/// stops, which is what makes the bound hold within a small factor.
pub struct Meter<'a> {
    budget: &'a Budget,
    left: u32,
}

impl<'a> Meter<'a> {
    pub fn new(budget: &'a Budget) -> Meter<'a> {
        Meter { budget, left: TICKS_PER_CHECK }
    }

    /// Counts one row: checks the memory bound (an atomic load), and the whole budget every [`TICKS_PER_CHECK`]
    /// rows (reading the clock costs more).
    #[inline]
    pub fn tick(&mut self) -> QResult<()> {
        self.left -= 1;
        if self.left == 0 {
            self.left = TICKS_PER_CHECK;
            return self.budget.check();
        }
        if self.budget.memory.exceeded() {
            return Err(memory::exceeded_error(self.budget.limits.memory_bytes));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_bound_fails_the_query_past_the_limit() {
        let b = Budget::new(Limits { timeout: Duration::from_secs(10), memory_bytes: 100_000 });
        let _scope = b.enter();
        let small = vec![0u8; 60_000];
        assert!(b.check().is_ok());
        let more = vec![0u8; 60_000];
        let e = b.check().unwrap_err();
        assert_eq!(
            e.message,
            "GraphMemoryExceeded: (-2600) the query needed more than its memory bound of 100000 bytes"
        );
        assert_eq!(e.code, crate::ErrorCode::MemoryExceeded);
        drop(more);
        assert!(b.check().is_ok());
        // A meter checks memory at every row (as the thread last flushed it: within 64 KiB), the deadline every
        // TICKS_PER_CHECK rows.
        let mut meter = Meter::new(&b);
        meter.tick().unwrap();
        let more = vec![0u8; 100_000];
        assert!(meter.tick().is_err());
        drop((small, more));
        let late = Budget::new(Limits { timeout: Duration::ZERO, memory_bytes: 100 });
        let mut meter = Meter::new(&late);
        for _ in 1..TICKS_PER_CHECK {
            meter.tick().unwrap();
        }
        assert!(meter.tick().is_err());
    }

    #[test]
    fn the_current_budget_is_checked_by_code_without_a_handle_on_it() {
        assert!((0..10 * TICKS_PER_CHECK).all(|_| check_current().is_ok()), "no budget: nothing to check");
        let late = Budget::new(Limits { timeout: Duration::ZERO, memory_bytes: usize::MAX });
        {
            let _scope = late.enter();
            let failed = (0..TICKS_PER_CHECK + 1).find_map(|_| check_current().err());
            assert_eq!(
                failed.map(|e| e.message),
                Some("Execution had been killed: the query ran longer than its timeout of 0 ms".to_string())
            );
        }
        assert!((0..10 * TICKS_PER_CHECK).all(|_| check_current().is_ok()), "the scope ended");
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
