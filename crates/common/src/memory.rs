//! Per-query memory accounting at the allocator.
//!
//! Every allocation a query makes on a thread that has entered its [`Account`] is added to that account and every
//! free subtracted, so the account knows what the query holds: batches between operators, variables, the hash tables
//! of DISTINCT, GROUP BY and joins, sort buffers, strings, lists, storage's neighbour lists and visited sets, without
//! any operator having to estimate its own footprint. The allocator only counts; the query compares the count with
//! its bound at its checkpoints ([`crate::budget::Budget::check`], called per batch and every
//! [`crate::budget::TICKS_PER_CHECK`] rows inside operators) and fails there with `GraphMemoryExceeded`, because an
//! allocator must not unwind.
//!
//! This is the counting NebulaGraph does with its memory tracker (operator new/delete hooks), kept per query
//! rather than per process. Memory the query frees that it did not allocate (a cache it drops) is credited to it;
//! long-lived structures that a query happens to build on its thread (storage's caches) are built inside
//! [`untracked`] so that they are not charged to it.

use crate::{QError, QResult};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicIsize, Ordering};
use std::sync::Arc;

/// The system allocator, counting into the current thread's account.
pub struct TrackingAllocator;

#[global_allocator]
static ALLOCATOR: TrackingAllocator = TrackingAllocator;

thread_local! {
    /// The account this thread's allocations go to; null when none. Set only by [`Scope`], which keeps the
    /// account alive while the pointer is here.
    static CURRENT: Cell<*const Account> = const { Cell::new(std::ptr::null()) };
}

#[inline]
fn note(delta: isize) {
    // `try_with`: an allocation during thread teardown finds no slot and is simply not counted.
    let _ = CURRENT.try_with(|c| {
        let account = c.get();
        if !account.is_null() {
            // SAFETY: the pointer was set by a live `Scope`, which holds an `Arc` to the account and resets the
            // slot before it lets go of it.
            unsafe { (*account).add(delta) };
        }
    });
}

// SAFETY: every call is forwarded unchanged to `System`; the counting touches only a thread-local cell and an
// atomic, and allocates nothing.
unsafe impl GlobalAlloc for TrackingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() {
            note(layout.size() as isize);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        if !p.is_null() {
            note(layout.size() as isize);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        note(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = System.realloc(ptr, layout, new_size);
        if !p.is_null() {
            note(new_size as isize - layout.size() as isize);
        }
        p
    }
}

/// What one query holds, and its bound.
#[derive(Debug)]
pub struct Account {
    used: AtomicIsize,
    /// The most `used` has been.
    peak: AtomicIsize,
    limit_bytes: usize,
}

impl Account {
    pub fn new(limit_bytes: usize) -> Arc<Account> {
        Arc::new(Account { used: AtomicIsize::new(0), peak: AtomicIsize::new(0), limit_bytes })
    }

    #[inline]
    fn add(&self, delta: isize) {
        let now = self.used.fetch_add(delta, Ordering::Relaxed) + delta;
        if delta > 0 && now > self.peak.load(Ordering::Relaxed) {
            self.peak.fetch_max(now, Ordering::Relaxed);
        }
    }

    /// The most this account has held at once.
    pub fn peak_bytes(&self) -> usize {
        self.peak.load(Ordering::Relaxed).max(0) as usize
    }

    /// Bytes allocated and not freed by the threads that entered this account (0 if it freed more than it took).
    pub fn used_bytes(&self) -> usize {
        self.used.load(Ordering::Relaxed).max(0) as usize
    }

    pub fn limit_bytes(&self) -> usize {
        self.limit_bytes
    }

    /// Whether the query holds more than its bound.
    pub fn exceeded(&self) -> bool {
        self.used_bytes() > self.limit_bytes
    }

    /// Whether `bytes` more would still be within the bound (for an allocation known in advance to be large).
    pub fn fits(&self, bytes: usize) -> bool {
        self.used_bytes().saturating_add(bytes) <= self.limit_bytes
    }

    /// Attributes the current thread's allocations to this account until the scope is dropped.
    pub fn enter(self: &Arc<Account>) -> Scope {
        let account = self.clone();
        let previous = CURRENT.with(|c| c.replace(Arc::as_ptr(&account)));
        Scope { account: Some(account), previous }
    }
}

/// While alive, the current thread counts into one account (or, from [`untracked`], into none). Not `Send`: it
/// restores the thread it was made on.
pub struct Scope {
    account: Option<Arc<Account>>,
    previous: *const Account,
}

impl Scope {
    /// The account this scope counts into.
    pub fn account(&self) -> Option<&Arc<Account>> {
        self.account.as_ref()
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        CURRENT.with(|c| c.set(self.previous));
    }
}

/// Fails with `GraphMemoryExceeded` unless `bytes` more fit in the current thread's account (any amount fits when
/// the thread counts into none): for values whose size is known before they are built, such as `range()`'s list.
pub fn reserve(bytes: usize) -> QResult<()> {
    CURRENT.with(|c| {
        let account = c.get();
        // SAFETY: as in `note`.
        match unsafe { account.as_ref() } {
            Some(a) if !a.fits(bytes) => Err(exceeded_error(a.limit_bytes)),
            _ => Ok(()),
        }
    })
}

/// NebulaGraph's error for a query past its memory bound.
pub fn exceeded_error(limit_bytes: usize) -> QError {
    QError::execution(format!(
        "GraphMemoryExceeded: (-2600) the query needed more than its memory bound of {limit_bytes} bytes"
    ))
}

/// Runs `f` with the current thread counting into no account: for long-lived structures a query builds on its
/// thread but does not own (storage's caches and topology).
pub fn untracked<R>(f: impl FnOnce() -> R) -> R {
    let previous = CURRENT.with(|c| c.replace(std::ptr::null()));
    let _restore = Scope { account: None, previous };
    f()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_account_counts_what_its_thread_holds() {
        let account = Account::new(1 << 20);
        let held = {
            let _scope = account.enter();
            let v: Vec<u8> = Vec::with_capacity(100_000);
            let during = account.used_bytes();
            drop(v);
            during
        };
        assert!((100_000..101_000).contains(&held), "{held}");
        assert!(account.used_bytes() < 1000, "{}", account.used_bytes());
        assert_eq!(account.peak_bytes(), held);
        // Outside the scope nothing is counted.
        let outside: Vec<u8> = Vec::with_capacity(100_000);
        assert!(account.used_bytes() < 1000);
        drop(outside);
        // Untracked work inside a scope is not counted, and the scope is restored after it.
        let _scope = account.enter();
        let cache = untracked(|| vec![0u8; 500_000]);
        assert!(account.used_bytes() < 1000);
        let mine = vec![0u8; 2 << 20];
        assert!(account.exceeded());
        assert_eq!(
            reserve(1).unwrap_err().message,
            "GraphMemoryExceeded: (-2600) the query needed more than its memory bound of 1048576 bytes"
        );
        drop(mine);
        assert!(!account.exceeded() && account.fits(1000) && reserve(1000).is_ok() && reserve(2 << 20).is_err());
        // Another thread's allocations are not this one's.
        std::thread::spawn(|| drop(vec![0u8; 4 << 20])).join().unwrap();
        assert!(!account.exceeded());
        drop(cache);
    }

    #[test]
    fn scopes_nest() {
        let outer = Account::new(usize::MAX);
        let inner = Account::new(usize::MAX);
        let _o = outer.enter();
        {
            let _i = inner.enter();
            let v = vec![0u8; 10_000];
            assert!(inner.used_bytes() >= 10_000);
            drop(v);
        }
        let w = vec![0u8; 20_000];
        assert!(outer.used_bytes() >= 20_000 && outer.used_bytes() < 30_000 + 1000, "{}", outer.used_bytes());
        drop(w);
    }
}
