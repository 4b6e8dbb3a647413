//! The cluster's job manager (`SUBMIT JOB`, `SHOW JOBS`, `STOP JOB`, `RECOVER JOB`; `docs/design/cluster.md` §6),
//! NebulaGraph's way: the job records are the meta service's ([`Catalog::job_records`]), replicated by the meta
//! group, so every graph service lists the same jobs and none is lost with a host; the work is split into tasks per
//! partition, each sent to that partition's leader, so a job runs whether or not one host carries the whole space.
//!
//! A graph service runs the jobs: each [`ClusterStorage`] whose worker is started ([`ClusterStorage::start_jobs`])
//! takes the oldest QUEUE job, or a RUNNING one whose runner's lease has lapsed, with a compare-and-set of its
//! record ([`Catalog::swap_job`]), so two graph services never both take one. While it runs, the runner renews its
//! lease every third of [`LEASE`]; a renewal that finds the record changed (STOP JOB marked it STOPPED, or another
//! graph service took it over after a lapse) stops the job between two tasks. A job taken over starts again from
//! its first task: every task is idempotent (a partition recounted, or an index's entries in a partition dropped
//! and written anew).
//!
//! Tasks: STATS recounts each partition on its leader; REBUILD INDEX writes each partition's entries on its leader,
//! then marks the index ready; COMPACT and FLUSH run on every storage host's own engine (each replica compacts
//! itself, as in NebulaGraph), and COMPACT then recounts each partition (expired rows are gone).
//!
//! Leases are judged by the clocks of the graph services, which are assumed to agree to well within [`LEASE`].

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use quiver_api::*;
use quiver_common::{QError, QResult};

use crate::client::ClusterStorage;
use crate::rpc::{Answer, HostRequest, PartOp};

/// How long a runner holds a job without renewing it.
pub const LEASE: Duration = Duration::from_secs(10);

/// How often an idle worker looks for a job (it is also woken by this graph service's own submissions).
const POLL_EVERY: Duration = Duration::from_millis(500);

/// How many times STOP JOB and RECOVER JOB try a record that keeps changing under them (a runner renewing it).
const SWAP_ATTEMPTS: usize = 20;

/// The error column of a job another graph service took over after its runner's lease lapsed.
pub const TAKEN_OVER: &str = "taken over after its graph service stopped renewing it";

/// Reads job `id`'s record and swaps it for what `change` makes of it, reading again while the swap finds it
/// changed, up to [`SWAP_ATTEMPTS`] times.
fn swap_record(
    id: i64,
    read: &dyn Fn() -> QResult<JobRecord>,
    swap: &dyn Fn(&JobRecord, JobRecord) -> QResult<bool>,
    change: &dyn Fn(&JobRecord) -> QResult<Option<JobRecord>>,
) -> QResult<bool> {
    for _ in 0..SWAP_ATTEMPTS {
        let record = read()?;
        let Some(new) = change(&record)? else { return Ok(false) };
        if swap(&record, new)? {
            return Ok(true);
        }
    }
    Err(QError::execution(format!("job {id} kept changing; try again")))
}

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

fn now_secs() -> i64 {
    (now_ms() / 1000) as i64
}

fn lease_ms() -> u64 {
    LEASE.as_millis() as u64
}

/// Wakes an idle worker.
#[derive(Default)]
pub(crate) struct JobWake {
    pending: Mutex<bool>,
    cv: Condvar,
}

impl JobWake {
    fn wake(&self) {
        *self.pending.lock().expect("lock poisoned") = true;
        self.cv.notify_all();
    }

    fn wait(&self, at_most: Duration) {
        let pending = self.pending.lock().expect("lock poisoned");
        let (mut pending, _) = self.cv.wait_timeout_while(pending, at_most, |p| !*p).expect("lock poisoned");
        *pending = false;
    }
}

impl ClusterStorage {
    /// Starts this graph service's job worker, as `runner` (a name no other graph service has: its address). Jobs
    /// submitted before wait in the meta service; so do jobs of a cluster none of whose graph services runs one.
    pub fn start_jobs(self: &Arc<Self>, runner: String) -> QResult<()> {
        let me = Arc::downgrade(self);
        std::thread::Builder::new()
            .name("cluster-jobs".into())
            .spawn(move || loop {
                let Some(storage) = me.upgrade() else { return };
                // A panic while taking or ending a job is logged; the worker goes on with the next.
                while std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| storage.run_next_job(&runner)))
                    .unwrap_or_else(|_| {
                        log::error!("the job worker panicked");
                        false
                    })
                {}
                let wake = storage.job_wake.clone();
                drop(storage);
                wake.wait(POLL_EVERY);
            })
            .map(|_| ())
            .map_err(|e| QError::storage(format!("cannot start the job worker: {e}")))
    }

    pub(crate) fn submit_cluster_job(&self, space: &SpaceDesc, job: NewJob) -> QResult<i64> {
        let record = self.catalog.add_job(space.id, job)?;
        self.job_wake.wake();
        Ok(record.job.id)
    }

    /// `space`'s jobs, newest first.
    pub(crate) fn cluster_jobs(&self, space: &SpaceDesc) -> Vec<JobInfo> {
        let mut jobs: Vec<JobInfo> =
            self.catalog.job_records().into_iter().filter(|r| r.job.space_id == space.id).map(|r| r.job).collect();
        jobs.sort_by_key(|j| std::cmp::Reverse(j.id));
        jobs
    }

    /// Swaps job `id`'s record for what `change` makes of it, trying again while the record changes under it;
    /// `change` says no (`Ok(None)`) or refuses (`Err`) on the record as it is.
    fn change_job(&self, id: i64, change: &dyn Fn(&JobRecord) -> QResult<Option<JobRecord>>) -> QResult<bool> {
        let read = || {
            self.catalog
                .job_records()
                .into_iter()
                .find(|r| r.job.id == id)
                .ok_or_else(|| QError::execution("Key not existed!"))
        };
        swap_record(id, &read, &|seen, new| self.catalog.swap_job(seen, new), change)
    }

    pub(crate) fn stop_cluster_job(&self, space: &SpaceDesc, id: i64) -> QResult<()> {
        self.change_job(id, &|r| {
            if r.job.space_id != space.id {
                return Err(QError::execution("Job not existed in chosen space!"));
            }
            if r.job.status.is_done() {
                return Err(QError::execution(
                    "Finished job or failed job can not be stopped, please start another job instead",
                ));
            }
            let mut new = r.clone();
            new.job.status = JobStatus::Stopped;
            new.job.stop_secs = now_secs();
            // A running job keeps its runner until the runner has seen the stop (or its lease lapsed): RECOVER JOB
            // leaves it until then, so two runners never run it at once.
            if r.job.status == JobStatus::Queue {
                (new.runner, new.lease_until_ms) = (None, 0);
            }
            Ok(Some(new))
        })?;
        Ok(())
    }

    /// Queues the failed and stopped jobs of `space` (of `only`, if not empty) again; returns how many. A stopped
    /// job whose runner has not yet seen the stop (and holds an unexpired lease) is not one of them.
    pub(crate) fn recover_cluster_jobs(&self, space: &SpaceDesc, only: &[i64]) -> QResult<usize> {
        let ids: Vec<i64> = self
            .catalog
            .job_records()
            .into_iter()
            .filter(|r| r.job.space_id == space.id && (only.is_empty() || only.contains(&r.job.id)))
            .map(|r| r.job.id)
            .collect();
        let mut n = 0;
        for id in ids {
            let queued = self.change_job(id, &|r| {
                let released = r.runner.is_none() || r.lease_until_ms < now_ms();
                if !matches!(r.job.status, JobStatus::Failed | JobStatus::Stopped) || !released {
                    return Ok(None);
                }
                let mut new = r.clone();
                new.job.status = JobStatus::Queue;
                (new.job.error, new.job.stop_secs) = (None, 0);
                (new.runner, new.lease_until_ms) = (None, 0);
                Ok(Some(new))
            })?;
            n += usize::from(queued);
        }
        self.job_wake.wake();
        Ok(n)
    }

    /// Takes the next job that is waiting (or whose runner's lease lapsed) and runs it; whether it took one.
    fn run_next_job(&self, runner: &str) -> bool {
        let now = now_ms();
        let Some(seen) = self.catalog.job_records().into_iter().find(|r| match r.job.status {
            JobStatus::Queue => true,
            JobStatus::Running => r.lease_until_ms < now,
            _ => false,
        }) else {
            return false;
        };
        let mut claimed = seen.clone();
        (claimed.runner, claimed.lease_until_ms) = (Some(runner.to_string()), now + lease_ms());
        if seen.job.status == JobStatus::Queue {
            claimed.job.status = JobStatus::Running;
            claimed.job.start_secs = now_secs();
        } else {
            claimed.job.error = Some(TAKEN_OVER.into());
        }
        match self.catalog.swap_job(&seen, claimed.clone()) {
            Ok(true) => {}
            // Another graph service took it first.
            Ok(false) => return true,
            Err(e) => {
                log::warn!("cannot take job {}: {}", seen.job.id, e.message);
                return false;
            }
        }
        self.run_claimed(Held {
            catalog: self.catalog.as_ref(),
            runner,
            record: Mutex::new(claimed),
            lost: AtomicBool::new(false),
            progress: Mutex::new((0, 0)),
        });
        true
    }

    /// Runs a job this runner holds, renewing its lease meanwhile, and records how it ended.
    fn run_claimed(&self, held: Held) {
        let over = (Mutex::new(false), Condvar::new());
        let result = std::thread::scope(|scope| {
            scope.spawn(|| {
                // Renews the lease (with the progress) every third of it until the job is over.
                let mut finished = over.0.lock().expect("lock poisoned");
                loop {
                    finished = over.1.wait_timeout_while(finished, LEASE / 3, |f| !*f).expect("lock poisoned").0;
                    if *finished || !held.renew() {
                        return;
                    }
                }
            });
            // The renewals end with the job, even one that panicked.
            let _end = Finally(|| {
                *over.0.lock().expect("lock poisoned") = true;
                over.1.notify_all();
            });
            let job = held.record.lock().expect("lock poisoned").job.clone();
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.execute_job(&job, &held)))
                .unwrap_or_else(|_| Err(QError::storage("the job panicked")))
        });
        let gone = held.stopped();
        let Held { record, progress, .. } = held;
        let held = record.into_inner().expect("lock poisoned");
        let id = held.job.id;
        if gone {
            // STOP JOB (or a takeover after a lapse) changed the record: it stays as that left it; a stop this
            // runner made is acknowledged by letting go of the job, so RECOVER JOB may queue it again.
            let now = self.catalog.job_records().into_iter().find(|r| r.job.id == id);
            if let Some(r) = now.filter(|r| r.job.status == JobStatus::Stopped && r.runner == held.runner) {
                let mut released = r.clone();
                (released.runner, released.lease_until_ms) = (None, 0);
                if let Err(e) = self.catalog.swap_job(&r, released) {
                    log::warn!("job {id}: cannot let go of it after its stop: {} (its lease lapses)", e.message);
                }
            }
            log::info!("job {id} changed while it ran; its record is left as that change made it");
            return;
        }
        let mut end = held.clone();
        (end.runner, end.lease_until_ms) = (None, 0);
        end.job.stop_secs = now_secs();
        (end.job.done, end.job.total) = progress.into_inner().expect("lock poisoned");
        match &result {
            Ok(()) => {
                end.job.status = JobStatus::Finished;
                end.job.error = end.job.error.take().filter(|e| e == TAKEN_OVER);
            }
            Err(e) => {
                end.job.status = JobStatus::Failed;
                end.job.error = Some(e.message.clone());
            }
        }
        // A record that changed since the last renewal (a STOP JOB) is left as it is.
        match self.catalog.swap_job(&held, end) {
            Ok(true) => log::info!("job {id} ({}) ended: {:?}", held.job.kind.name(), result.err().map(|e| e.message)),
            Ok(false) => log::info!("job {id} changed as it ended; its record is left as that change made it"),
            Err(e) => {
                log::warn!("cannot record the end of job {id}: {} (its lease lapses, and it runs again)", e.message)
            }
        }
    }

    fn execute_job(&self, job: &JobInfo, held: &Held) -> QResult<()> {
        let space = self
            .catalog
            .spaces()
            .into_iter()
            .find(|s| s.id == job.space_id)
            .ok_or_else(|| QError::execution("Space not existed!"))?;
        let parts = space.all_parts();
        let n = parts.len() as u64;
        let check = || if held.stopped() { Err(QError::execution(STOPPED)) } else { Ok(()) };
        // One task per partition, on its leader; `before` tasks were done before these, of `total`.
        let each_part = |op: &dyn Fn() -> PartOp, before: u64, total: u64| -> QResult<()> {
            for (i, &part) in parts.iter().enumerate() {
                check()?;
                crate::client::done(self.on_part(&space, part, op)?)?;
                held.progress(before + i as u64 + 1, total);
            }
            Ok(())
        };
        match job.kind {
            kind @ (JobKind::Compact | JobKind::Flush) => {
                let hosts = self.cluster().hosts();
                let recounts = if kind == JobKind::Compact { n } else { 0 };
                let total = hosts.len() as u64 + recounts;
                for (i, host) in hosts.iter().enumerate() {
                    // A host that cannot be reached now compacts (or flushes) at the next such job.
                    if let Err(e) = self.engine_job(host.as_ref(), &space, kind, &check) {
                        check()?;
                        log::warn!(
                            "job {}: storage host {} did not run its {}: {}",
                            job.id,
                            host.id(),
                            kind.name(),
                            e.message
                        );
                    }
                    held.progress(i as u64 + 1, total);
                }
                if kind == JobKind::Compact {
                    // Expired rows are gone: each partition is counted anew.
                    each_part(&|| PartOp::Recount, hosts.len() as u64, total)?;
                }
                Ok(())
            }
            JobKind::Stats => each_part(&|| PartOp::Recount, 0, n),
            JobKind::RebuildIndex(kind) => {
                let mut indexes = Vec::new();
                for id in &job.indexes {
                    let index = self
                        .catalog
                        .indexes(&space)
                        .into_iter()
                        .find(|i| i.id == *id && i.kind == kind)
                        .ok_or_else(|| QError::execution("Index not existed!"))?;
                    // Not used while its entries are rewritten (a job recovered or taken over may find it ready).
                    if index.state != IndexState::Building {
                        self.catalog.set_index_state(&space, index.id, IndexState::Building)?;
                    }
                    indexes.push(index);
                }
                // Progress in rows, as in one process.
                let stats = self.stats(&space)?;
                let total: u64 = indexes.iter().map(|i| stats.rows(i.kind, i.schema_id).max(0) as u64).sum();
                let mut done = 0;
                for index in &indexes {
                    // Chunk by chunk on each partition's leader: a request each, so no request runs long and a
                    // stop is seen between two chunks.
                    for &part in &parts {
                        let mut from = None;
                        loop {
                            check()?;
                            let op = || PartOp::BuildIndexChunk { index: index.clone(), from: from.clone() };
                            let (rows, next) = match self.on_part(&space, part, &op)? {
                                Answer::Chunk { rows, next } => (rows, next),
                                other => return Err(crate::rpc::unexpected(other)),
                            };
                            done += rows;
                            held.progress(done, total.max(done));
                            match next {
                                Some(next) => from = Some(next),
                                None => break,
                            }
                        }
                    }
                    // Only the job's holder marks it ready: not a runner that was stopped or taken over meanwhile.
                    held.confirm()?;
                    self.catalog.set_index_state(&space, index.id, IndexState::Ready)?;
                }
                Ok(())
            }
        }
    }

    /// Runs a COMPACT or FLUSH on `host`'s own engine and waits until it is over.
    fn engine_job(
        &self,
        host: &dyn crate::HostHandle,
        space: &SpaceDesc,
        kind: JobKind,
        check: &dyn Fn() -> QResult<()>,
    ) -> QResult<()> {
        let failed = |e: crate::HostError| QError::storage(format!("{e:?}"));
        let id = match host.call(HostRequest::EngineJob { space: space.clone(), kind }).map_err(failed)? {
            Answer::JobId(id) => id,
            other => return Err(crate::rpc::unexpected(other)),
        };
        loop {
            match host.call(HostRequest::EngineJobDone { space: space.clone(), id }).map_err(failed)? {
                Answer::Finished(true) => return Ok(()),
                Answer::Finished(false) => {}
                other => return Err(crate::rpc::unexpected(other)),
            }
            check()?;
            std::thread::sleep(ENGINE_POLL);
        }
    }
}

/// How often a host's engine job is asked whether it is over.
const ENGINE_POLL: Duration = Duration::from_millis(100);

/// A job a runner holds: its record as last written by the runner, whether the runner lost it (the record changed
/// under a renewal), and its progress.
struct Held<'a> {
    catalog: &'a dyn Catalog,
    runner: &'a str,
    record: Mutex<JobRecord>,
    lost: AtomicBool,
    progress: Mutex<(u64, u64)>,
}

impl Held<'_> {
    fn progress(&self, done: u64, total: u64) {
        *self.progress.lock().expect("lock poisoned") = (done, total);
    }

    /// Renews the lease, with the progress; false once the job is lost. A meta service that does not answer is
    /// tried again at the next renewal.
    fn renew(&self) -> bool {
        match self.try_renew() {
            Ok(held) => held,
            Err(e) => {
                log::warn!("cannot renew a job's lease: {}", e.message);
                true
            }
        }
    }

    /// Renews the lease; whether the record was still this runner's.
    fn try_renew(&self) -> QResult<bool> {
        if self.lost.load(Ordering::Acquire) {
            return Ok(false);
        }
        let mut held = self.record.lock().expect("lock poisoned");
        let mut renewed = held.clone();
        renewed.lease_until_ms = now_ms() + lease_ms();
        (renewed.job.done, renewed.job.total) = *self.progress.lock().expect("lock poisoned");
        if self.catalog.swap_job(&held, renewed.clone())? {
            *held = renewed;
            return Ok(true);
        }
        self.lost.store(true, Ordering::Release);
        Ok(false)
    }

    /// Makes sure this runner still holds the job (a renewal), before a step only the holder may take.
    fn confirm(&self) -> QResult<()> {
        match self.try_renew()? {
            true => Ok(()),
            false => Err(QError::execution(STOPPED)),
        }
    }

    /// Whether the job was stopped or taken from this runner, as far as the catalog's copy shows (the renewals
    /// find out for sure).
    fn stopped(&self) -> bool {
        let id = self.record.lock().expect("lock poisoned").job.id;
        self.lost.load(Ordering::Acquire)
            || !self.catalog.job_records().iter().any(|r| {
                r.job.id == id && r.job.status == JobStatus::Running && r.runner.as_deref() == Some(self.runner)
            })
    }
}

/// Runs a closure when dropped.
struct Finally<F: FnMut()>(F);

impl<F: FnMut()> Drop for Finally<F> {
    fn drop(&mut self) {
        (self.0)()
    }
}

/// The error a job that was stopped ends with.
const STOPPED: &str = "stopped";

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    fn record() -> JobRecord {
        JobRecord { job: JobInfo::queued(7, 1, NewJob::of(JobKind::Stats)), runner: None, lease_until_ms: 0 }
    }

    /// A record that changes under every swap is tried [`SWAP_ATTEMPTS`] times, then the statement is told to try
    /// again; one that stops changing is swapped; a change that says no leaves it.
    #[test]
    fn a_record_that_keeps_changing_is_given_up_on() {
        let swaps = Cell::new(0);
        let stopped = |r: &JobRecord| Ok(Some(JobRecord { runner: None, ..r.clone() }));
        let never = |_: &JobRecord, _: JobRecord| {
            swaps.set(swaps.get() + 1);
            Ok(false)
        };
        let err = swap_record(7, &|| Ok(record()), &never, &stopped).unwrap_err();
        assert_eq!(err.message, "job 7 kept changing; try again");
        assert_eq!(swaps.get(), SWAP_ATTEMPTS);
        let third = |_: &JobRecord, _: JobRecord| {
            swaps.set(swaps.get() + 1);
            Ok(swaps.get().is_multiple_of(3))
        };
        swaps.set(0);
        assert!(swap_record(7, &|| Ok(record()), &third, &stopped).unwrap());
        assert_eq!(swaps.get(), 3);
        assert!(!swap_record(7, &|| Ok(record()), &never, &|_| Ok(None)).unwrap());
    }
}
