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
use mimalloc::MiMalloc as Inner;
use std::alloc::{GlobalAlloc, Layout};
use std::cell::Cell;
use std::sync::atomic::{AtomicIsize, Ordering};
use std::sync::Arc;

/// mimalloc, counting into the current thread's account. (glibc's malloc spent about a third of allocation-heavy
/// MATCH reads in its free lists and consolidation; its state after a bulk load also slowed later reads.)
///
/// mimalloc advises transparent huge pages on its memory. When 16 clients start at once, new threads' first pages
/// fault in 2 MB at a time (12-16 % of CPU zeroing pages in profiles of that moment, 0.5 % once steady); built with
/// its `no_thp` feature, a 3-step GO over the edge property cache ran about 15 % slower in process, so THP stays.
/// (Measured 2026-11-29, Intel Xeon VM, THP set to `madvise`.)
pub struct TrackingAllocator;

#[global_allocator]
static ALLOCATOR: TrackingAllocator = TrackingAllocator;

/// What a thread counts before it adds it to its account's shared counter: adding to an atomic on every
/// allocation cost about 4% of a 3-step GO; a thread-local running total flushed every 64 KiB costs next to
/// nothing, and the account lags the truth by at most that much per thread.
const FLUSH_BYTES: isize = 64 << 10;

/// A thread's accounting state.
struct Local {
    /// The account this thread's allocations go to; null when none. Set only by [`Scope`], which keeps the
    /// account alive while the pointer is here.
    account: Cell<*const Account>,
    /// Counted, not yet added to the account.
    pending: Cell<isize>,
}

thread_local! {
    static LOCAL: Local = const { Local { account: Cell::new(std::ptr::null()), pending: Cell::new(0) } };
}

impl Local {
    /// Adds what is pending to the account.
    fn flush(&self) {
        let account = self.account.get();
        let pending = self.pending.replace(0);
        if !account.is_null() && pending != 0 {
            // SAFETY: the pointer was set by a live `Scope`, which holds an `Arc` to the account and flushes and
            // resets the slot before it lets go of it.
            unsafe { (*account).add(pending) };
        }
    }

    /// Flushes, then counts into `account` from now on; returns the account counted into before.
    fn switch(&self, account: *const Account) -> *const Account {
        self.flush();
        self.account.replace(account)
    }
}

#[inline]
fn note(delta: isize) {
    // `try_with`: an allocation during thread teardown finds no slot and is simply not counted.
    let _ = LOCAL.try_with(|l| {
        if l.account.get().is_null() {
            return;
        }
        let pending = l.pending.get() + delta;
        l.pending.set(pending);
        if !(-FLUSH_BYTES..FLUSH_BYTES).contains(&pending) {
            l.flush();
        }
    });
}

// SAFETY: every call is forwarded unchanged to mimalloc; the counting touches only thread-local cells and an
// atomic, and allocates nothing.
unsafe impl GlobalAlloc for TrackingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = Inner.alloc(layout);
        if !p.is_null() {
            note(layout.size() as isize);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = Inner.alloc_zeroed(layout);
        if !p.is_null() {
            note(layout.size() as isize);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        Inner.dealloc(ptr, layout);
        note(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = Inner.realloc(ptr, layout, new_size);
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

    /// The most this account has held at once (as its threads flushed it: within 64 KiB per thread).
    pub fn peak_bytes(&self) -> usize {
        self.flush_here();
        self.peak.load(Ordering::Relaxed).max(0) as usize
    }

    /// Bytes allocated and not freed by the threads that entered this account (0 if it freed more than it took):
    /// exact for the calling thread, within 64 KiB for each other one.
    pub fn used_bytes(&self) -> usize {
        self.flush_here();
        self.used.load(Ordering::Relaxed).max(0) as usize
    }

    /// Adds what the calling thread has pending, if it counts into this account.
    fn flush_here(&self) {
        let _ = LOCAL.try_with(|l| {
            if std::ptr::eq(l.account.get(), self) {
                l.flush();
            }
        });
    }

    pub fn limit_bytes(&self) -> usize {
        self.limit_bytes
    }

    /// Whether the query holds more than its bound, as last flushed (one atomic load: cheap enough per row).
    pub fn exceeded(&self) -> bool {
        self.used.load(Ordering::Relaxed) > self.limit_bytes.min(isize::MAX as usize) as isize
    }

    /// Whether `bytes` more would still be within the bound (for an allocation known in advance to be large).
    pub fn fits(&self, bytes: usize) -> bool {
        self.used_bytes().saturating_add(bytes) <= self.limit_bytes
    }

    /// Attributes the current thread's allocations to this account until the scope is dropped.
    pub fn enter(self: &Arc<Account>) -> Scope {
        let account = self.clone();
        let previous = LOCAL.with(|l| l.switch(Arc::as_ptr(&account)));
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
        LOCAL.with(|l| l.switch(self.previous));
    }
}

/// Fails with `GraphMemoryExceeded` unless `bytes` more fit in the current thread's account (any amount fits when
/// the thread counts into none): for values whose size is known before they are built, such as `range()`'s list.
pub fn reserve(bytes: usize) -> QResult<()> {
    LOCAL.with(|l| {
        l.flush();
        // SAFETY: as in `Local::flush`.
        match unsafe { l.account.get().as_ref() } {
            Some(a) if !a.fits(bytes) => Err(exceeded_error(a.limit_bytes)),
            _ => Ok(()),
        }
    })
}

/// NebulaGraph's error for a query past its memory bound: `E_GRAPH_MEMORY_EXCEEDED` (-2600), the code the
/// server's memory limit answers with too.
pub fn exceeded_error(limit_bytes: usize) -> QError {
    QError::new(
        crate::ErrorCode::MemoryExceeded,
        format!("GraphMemoryExceeded: (-2600) the query needed more than its memory bound of {limit_bytes} bytes"),
    )
}

/// Hands the allocator's free pages back to the system (mimalloc's `mi_collect`): after a query that held much
/// memory, so the process's resident size falls back rather than staying at the query's peak.
pub fn release_free_memory() {
    // SAFETY: `mi_collect` takes no pointers; it only walks the allocator's own structures.
    unsafe { libmimalloc_sys::mi_collect(true) };
}

/// Runs `f` with the current thread counting into no account: for long-lived structures a query builds on its
/// thread but does not own (storage's caches and topology).
pub fn untracked<R>(f: impl FnOnce() -> R) -> R {
    let previous = LOCAL.with(|l| l.switch(std::ptr::null()));
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
