//! The server-wide memory bound (`--memory-limit-mb`), beside each query's own: a watchdog samples the process's
//! resident memory, and when it passes 90 % of the limit it stops the running query that holds the most memory
//! (as NebulaGraph's memory tracker does), if it holds at least 5 % of the limit. That query fails with `GraphMemoryExceeded` and frees what it holds as
//! it unwinds; the server keeps answering.
//!
//! Apart from the bound, [`start_trimmer`] hands the allocator's free memory back to the system once the engine has
//! been idle for a moment, so a process that ran a large query does not stay at its peak.

use crate::Database;
use std::sync::Arc;
use std::time::Duration;

/// The share of the limit at which the watchdog stops a query.
const WATERMARK_PERCENT: usize = 90;

/// A query is stopped only if it holds at least this share of the limit: memory the server holds for itself (the
/// block cache, the topology, memory the allocator keeps) is not any query's, and stopping small queries would not
/// give it back.
const STOPPABLE_PERCENT: usize = 5;

/// The process's resident memory (Linux's `VmRSS`), or `None` where it cannot be read.
pub fn resident_bytes() -> Option<usize> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Starts the watchdog thread for `limit_bytes`; it runs as long as the process.
pub fn start(db: Arc<Database>, limit_bytes: usize) -> std::io::Result<()> {
    if resident_bytes().is_none() {
        log::warn!("--memory-limit-mb: this system does not report resident memory; the limit is not enforced");
        return Ok(());
    }
    std::thread::Builder::new().name("memory-watchdog".into()).spawn(move || {
        let watermark = limit_bytes / 100 * WATERMARK_PERCENT;
        loop {
            std::thread::sleep(Duration::from_millis(20));
            let Some(rss) = resident_bytes() else { continue };
            if rss < watermark {
                continue;
            }
            if let Some((plan, held)) =
                db.engine.evict_largest_query(limit_bytes, limit_bytes / 100 * STOPPABLE_PERCENT)
            {
                db.metrics.add("num_queries_hit_memory_watermark", 1);
                log::warn!(
                    "resident memory {} MiB passed {WATERMARK_PERCENT} % of the {} MiB limit: stopped query {plan}, \
                     which held {} MiB",
                    rss >> 20,
                    limit_bytes >> 20,
                    held >> 20
                );
                // Let it unwind and free what it holds before looking again.
                std::thread::sleep(Duration::from_millis(200));
            }
        }
    })?;
    Ok(())
}

/// How long the engine must have run nothing before its free memory is handed back.
const TRIM_AFTER_IDLE: Duration = Duration::from_secs(1);

/// Starts a thread that, once no request has run for [`TRIM_AFTER_IDLE`], hands the allocator's free pages back to
/// the system (mimalloc's forced collect), once per idle spell. Doing it after each large request instead, while
/// others ran, made the next requests fault their pages in again (the kernel zeroes each huge page it hands out).
pub fn start_trimmer(db: Arc<Database>) -> std::io::Result<()> {
    std::thread::Builder::new().name("memory-trimmer".into()).spawn(move || {
        let mut trimmed = None;
        let mut seen = None;
        loop {
            std::thread::sleep(TRIM_AFTER_IDLE);
            let now = db.engine.idle();
            // Idle now, idle at the last look with nothing run in between, and not trimmed since.
            if now.is_some() && now == seen && now != trimmed {
                quiver_common::memory::release_free_memory();
                trimmed = now;
            }
            seen = now;
        }
    })?;
    Ok(())
}
