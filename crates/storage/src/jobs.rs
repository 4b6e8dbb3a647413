//! Admin jobs (`SUBMIT JOB COMPACT | FLUSH | STATS`, index builds): queued, run one at a time on a worker thread,
//! and persisted at every change of status so that none is lost across a restart.
//!
//! Records live under `00000000 fd "job" <id: i64 BE>` as JSON ([`JobInfo`]). At start-up
//! ([`EmbeddedStorage::start_jobs`]) a job found QUEUE or RUNNING was interrupted by the restart: it is queued
//! again from the start (every job is idempotent) and says so in its error column until it finishes.
//!
//! Index builds work in chunks of [`BUILD_CHUNK`] keys, each read and written under the writers' lock, so writers
//! interleave with a build and no write can slip between a chunk's read and its entries (see `docs/design/indexes.md`).

use crate::keys::{self, KIND_EDGE, KIND_TAG};
use crate::{codec, index, kv_err, now_secs, Batch, EmbeddedStorage};
use quiver_api::*;
use quiver_common::{QError, QResult};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::Duration;

/// Keys read per chunk of an index build (and per lock acquisition).
pub const BUILD_CHUNK: usize = 4096;

/// A new index on a tag or edge type with at most this many rows is filled by `CREATE INDEX` itself; beyond it, by
/// a background job, and the index is unused until the job finishes.
pub const INLINE_BUILD_ROWS: i64 = 10_000;

const JOB_PREFIX: &[u8] = &[0, 0, 0, 0, 0xfd, b'j', b'o', b'b'];

/// Why a job was queued again at start-up.
pub const RESUMED: &str = "resumed after a restart";

fn job_key(id: i64) -> Vec<u8> {
    let mut k = JOB_PREFIX.to_vec();
    k.extend_from_slice(&id.to_be_bytes());
    k
}

#[derive(Default)]
pub(crate) struct Jobs {
    state: Mutex<JobsState>,
    wake: Condvar,
}

#[derive(Default)]
struct JobsState {
    jobs: BTreeMap<i64, JobInfo>,
    queue: VecDeque<i64>,
    /// Stop flags of queued and running jobs.
    cancel: HashMap<i64, Arc<AtomicBool>>,
    started: bool,
}

impl EmbeddedStorage {
    /// A job record is this engine's own, outside every partition. In a cluster the jobs are the meta service's
    /// (`crates/cluster/src/jobs.rs`); a host keeps here only the COMPACT and FLUSH of its own engine it was asked
    /// to run.
    fn save_job(&self, job: &JobInfo) -> QResult<()> {
        let mut b = quiver_kv::WriteBatch::new();
        b.put(job_key(job.id), serde_json::to_vec(job).expect("job serializes"));
        self.kv.write(b).map_err(kv_err)
    }

    /// Every stored job record.
    fn stored_jobs(&self) -> QResult<Vec<JobInfo>> {
        quiver_meta::json_records(self.kv.as_ref(), JOB_PREFIX, "job")
    }

    /// Loads the job records, queues again the ones a restart interrupted, and starts the worker. Call once the
    /// catalog is set; jobs submitted before this wait in the queue.
    pub fn start_jobs(self: &Arc<Self>) -> QResult<()> {
        let records = self.stored_jobs()?;
        {
            let mut st = self.jobs.state.lock().expect("lock poisoned");
            if st.started {
                return Ok(());
            }
            st.started = true;
            let queued_now: Vec<i64> = st.queue.iter().copied().collect();
            for mut j in records {
                if st.jobs.contains_key(&j.id) {
                    continue;
                }
                if !j.status.is_done() {
                    j.status = JobStatus::Queue;
                    j.error = Some(RESUMED.into());
                    self.save_job(&j)?;
                    st.queue.push_back(j.id);
                    st.cancel.insert(j.id, Arc::default());
                }
                st.jobs.insert(j.id, j);
            }
            // Jobs submitted before the start run after the resumed ones, in their order.
            st.queue.retain(|id| !queued_now.contains(id));
            st.queue.extend(queued_now);
        }
        let weak: Weak<EmbeddedStorage> = Arc::downgrade(self);
        let jobs = self.jobs.clone();
        std::thread::Builder::new()
            .name("jobs".into())
            .spawn(move || job_worker(jobs, weak))
            .map_err(|e| QError::storage(format!("cannot start the job worker: {e}")))?;
        Ok(())
    }

    /// Queues a job; returns its id.
    pub fn submit_job_internal(&self, space: &SpaceDesc, job: NewJob) -> QResult<i64> {
        let mut st = self.jobs.state.lock().expect("lock poisoned");
        let next = self.next_job_id(&st)?;
        let job = JobInfo::queued(next, space.id, job);
        self.save_job(&job)?;
        st.queue.push_back(job.id);
        st.cancel.insert(job.id, Arc::default());
        st.jobs.insert(job.id, job);
        self.jobs.wake.notify_all();
        Ok(next)
    }

    fn next_job_id(&self, st: &JobsState) -> QResult<i64> {
        // Ids are never reused: the highest ever stored is the last key of the job range.
        let mut max = st.jobs.keys().next_back().copied().unwrap_or(0);
        self.kv
            .scan_prefix(JOB_PREFIX, &mut |k, _| {
                if let Ok(b) = k[JOB_PREFIX.len()..].try_into() {
                    max = max.max(i64::from_be_bytes(b));
                }
                true
            })
            .map_err(kv_err)?;
        Ok(max + 1)
    }

    pub fn jobs_of(&self, space: &SpaceDesc) -> QResult<Vec<JobInfo>> {
        let st = self.jobs.state.lock().expect("lock poisoned");
        let mut out: Vec<JobInfo> = st.jobs.values().filter(|j| j.space_id == space.id).cloned().collect();
        if !st.started {
            // Before start-up only submitted jobs are in memory; the stored ones are listed too.
            for j in self.stored_jobs()? {
                if j.space_id == space.id && !out.iter().any(|o| o.id == j.id) {
                    out.push(j);
                }
            }
        }
        out.sort_by_key(|j| std::cmp::Reverse(j.id));
        Ok(out)
    }

    pub fn stop_job_internal(&self, space: &SpaceDesc, id: i64) -> QResult<()> {
        let mut st = self.jobs.state.lock().expect("lock poisoned");
        let job = st.jobs.get(&id).ok_or_else(|| QError::execution("Key not existed!"))?;
        if job.space_id != space.id {
            return Err(QError::execution("Job not existed in chosen space!"));
        }
        if job.status.is_done() {
            return Err(QError::execution(
                "Finished job or failed job can not be stopped, please start another job instead",
            ));
        }
        if let Some(c) = st.cancel.get(&id) {
            c.store(true, Ordering::Release);
        }
        if job.status == JobStatus::Queue {
            st.queue.retain(|q| *q != id);
            let job = st.jobs.get_mut(&id).expect("looked up above");
            job.status = JobStatus::Stopped;
            job.stop_secs = now_secs();
            let job = job.clone();
            self.save_job(&job)?;
        }
        Ok(())
    }

    /// Queues the failed and stopped jobs of `space` again; returns how many.
    pub fn recover_jobs_internal(&self, space: &SpaceDesc, only: &[i64]) -> QResult<usize> {
        let mut st = self.jobs.state.lock().expect("lock poisoned");
        let ids: Vec<i64> = st
            .jobs
            .values()
            .filter(|j| j.space_id == space.id && matches!(j.status, JobStatus::Failed | JobStatus::Stopped))
            .filter(|j| only.is_empty() || only.contains(&j.id))
            .map(|j| j.id)
            .collect();
        for id in &ids {
            let job = st.jobs.get_mut(id).expect("listed above");
            job.status = JobStatus::Queue;
            job.error = None;
            job.stop_secs = 0;
            let job = job.clone();
            self.save_job(&job)?;
            st.cancel.insert(*id, Arc::default());
            st.queue.push_back(*id);
        }
        self.jobs.wake.notify_all();
        Ok(ids.len())
    }

    fn update_job(&self, id: i64, f: impl FnOnce(&mut JobInfo)) -> QResult<JobInfo> {
        let mut st = self.jobs.state.lock().expect("lock poisoned");
        let job = st.jobs.get_mut(&id).ok_or_else(|| QError::storage(format!("job {id} vanished")))?;
        f(job);
        let job = job.clone();
        drop(st);
        self.save_job(&job)?;
        Ok(job)
    }

    fn run_job(&self, id: i64) {
        // The job turns RUNNING only if it is still queued, in one step under the lock: a STOP JOB that came
        // after the worker took it off the queue has marked it STOPPED, and it must stay so (a RECOVER JOB may
        // already have queued it again, with a fresh cancel flag that this run must not touch).
        let (job, cancel) = {
            let mut st = self.jobs.state.lock().expect("lock poisoned");
            let cancel = st.cancel.get(&id).cloned().unwrap_or_default();
            let Some(job) = st.jobs.get_mut(&id) else { return };
            if job.status != JobStatus::Queue {
                return;
            }
            job.status = JobStatus::Running;
            job.start_secs = now_secs();
            (job.clone(), cancel)
        };
        if let Err(e) = self.save_job(&job) {
            log::error!("job {id}: cannot record its start: {}", e.message);
            return;
        }
        let progress = AtomicU64::new(0);
        let result = self.execute_job(&job, &cancel, &|done, total| {
            progress.store(done, Ordering::Relaxed);
            // Progress is shown from memory; only status changes are persisted.
            if let Some(j) = self.jobs.state.lock().expect("lock poisoned").jobs.get_mut(&id) {
                j.done = done;
                j.total = total;
            }
        });
        let finished = self.update_job(id, |j| {
            j.stop_secs = now_secs();
            match &result {
                Ok(()) => {
                    j.status = JobStatus::Finished;
                    // A resumed job keeps saying so; any other note goes.
                    j.error = j.error.take().filter(|e| e == RESUMED);
                }
                Err(_) if cancel.load(Ordering::Acquire) => j.status = JobStatus::Stopped,
                Err(e) => {
                    j.status = JobStatus::Failed;
                    j.error = Some(e.message.clone());
                }
            }
        });
        match finished {
            Ok(j) => log::info!("job {id} ({}) {}", j.kind.name(), j.status.name()),
            Err(e) => log::error!("job {id}: cannot record its end: {}", e.message),
        }
        let mut st = self.jobs.state.lock().expect("lock poisoned");
        if st.cancel.get(&id).is_some_and(|c| Arc::ptr_eq(c, &cancel)) {
            st.cancel.remove(&id);
        }
    }

    fn execute_job(&self, job: &JobInfo, cancel: &AtomicBool, progress: &dyn Fn(u64, u64)) -> QResult<()> {
        let catalog = self.catalog().ok_or_else(|| QError::storage("jobs need the catalog"))?;
        let space = catalog
            .spaces()
            .into_iter()
            .find(|s| s.id == job.space_id)
            .ok_or_else(|| QError::execution("Space not existed!"))?;
        match job.kind {
            JobKind::Compact => {
                let (start, end) = keys::space_range(space.id);
                // Expired rows go with this compaction (see `ttl.rs`); the counters are then recounted.
                let filter = self.ttl_filter(&space);
                let armed = filter.is_some();
                self.kv.set_compaction_filter(filter);
                let compacted = self.kv.compact_range(&start, &end).map_err(kv_err);
                self.kv.set_compaction_filter(None);
                compacted?;
                // A cluster host compacts its own engine only: the job's runner recounts each partition on its
                // leader afterwards.
                if armed && !self.is_replicated() {
                    // The expired edges left the store but not the topology, which the writers also ask
                    // whether an edge is stored: it is built again from the store.
                    let _build = self.lock_for_build();
                    self.forget_mirrors(space.id);
                    drop(_build);
                    for part in 1..=space.partition_num {
                        self.recount_part(&space, part)?;
                        progress(part as u64, space.partition_num as u64);
                    }
                }
                Ok(())
            }
            JobKind::Flush => self.kv.flush().map_err(kv_err),
            JobKind::Stats => {
                for part in 1..=space.partition_num {
                    if cancel.load(Ordering::Acquire) {
                        return Err(QError::execution("stopped"));
                    }
                    self.recount_part(&space, part)?;
                    progress(part as u64, space.partition_num as u64);
                }
                Ok(())
            }
            JobKind::RebuildIndex(kind) => {
                let all = catalog.indexes(&space);
                for id in &job.indexes {
                    let index = all
                        .iter()
                        .find(|i| i.id == *id && i.kind == kind)
                        .ok_or_else(|| QError::execution("Index not existed!"))?;
                    self.build_index(&space, index, &space.all_parts(), Some(cancel), progress)?;
                    catalog.set_index_state(&space, index.id, IndexState::Ready)?;
                }
                Ok(())
            }
        }
    }

    /// Counts one partition under the writers' lock and makes the result its live counters (a STATS job; in a
    /// cluster, its task on the partition's leader).
    pub fn recount_part(&self, space: &SpaceDesc, part: u32) -> QResult<()> {
        let mut guard = self.lock_writers();
        self.load_counters(space, &mut guard)?;
        let c = self.count_part(space, part)?;
        let mut b = Batch::default();
        crate::write::put_counters(&mut b.kv, space.id, part, &c);
        guard.counters.get_mut(&space.id).expect("loaded above")[part as usize - 1] = c;
        self.commit(guard, space, b)
    }

    /// Removes an index's entries in partitions `parts` and writes one for every row there of its tag or edge type,
    /// chunk by chunk under the writers' lock. `progress` gets (rows done, rows expected).
    pub(crate) fn build_index(
        &self,
        space: &SpaceDesc,
        index: &IndexDesc,
        parts: &[u32],
        cancel: Option<&AtomicBool>,
        progress: &dyn Fn(u64, u64),
    ) -> QResult<()> {
        let counted = self.stats_of_parts(space, parts)?;
        let expected = counted.rows(index.kind, index.schema_id).max(0) as u64;
        let mut done = 0u64;
        for &part in parts {
            let mut cursor = None;
            loop {
                if cancel.is_some_and(|c| c.load(Ordering::Acquire)) {
                    return Err(QError::execution("stopped"));
                }
                let (rows, next) = self.build_index_chunk(space, index, part, cursor.as_deref())?;
                done += rows;
                progress(done, expected.max(done));
                match next {
                    Some(next) => cursor = Some(next),
                    None => break,
                }
            }
        }
        Ok(())
    }

    /// One chunk of an index's build in partition `part`: from the start (`from: None`, the partition's entries of
    /// the index removed first) or from a cursor an earlier chunk returned, at most [`BUILD_CHUNK`] rows read and
    /// their entries written, under the writers' lock. Returns the rows indexed and where the next chunk starts
    /// (`None`: the partition is done). A cluster's job runs a build as these chunks, one request each.
    pub fn build_index_chunk(
        &self,
        space: &SpaceDesc,
        index: &IndexDesc,
        part: u32,
        from: Option<&[u8]>,
    ) -> QResult<(u64, Option<Vec<u8>>)> {
        let catalog = self.catalog().ok_or_else(|| QError::storage("index builds need the catalog"))?;
        let kind = if index.kind == SchemaKind::Tag { KIND_TAG } else { KIND_EDGE };
        let prefix = keys::prefix(space.id, part, kind);
        let cursor = match from {
            None => {
                self.drop_index_data_in(space, index.id, &[part])?;
                prefix.clone()
            }
            // A cursor is a key of this partition's rows (it crosses the network in a cluster).
            Some(c) if c.starts_with(&prefix) => c.to_vec(),
            Some(_) => return Err(QError::storage("an index build's cursor outside its partition")),
        };
        let end = quiver_kv::prefix_end(&prefix).expect("kind prefix ends");
        let vl = space.vid_type.key_len();
        let guard = self.lock_writers();
        let schema =
            catalog.schema_by_id(space, index.kind, index.schema_id).ok_or_else(|| index.kind.not_existed())?;
        let mut b = Batch::default();
        let mut scanned = 0usize;
        let mut done = 0u64;
        let mut last: Option<Vec<u8>> = None;
        let mut err = None;
        self.kv
            .scan_range(&cursor, &end, &mut |k, v| {
                scanned += 1;
                last = Some(k.to_vec());
                let entry = || -> QResult<Option<Vec<Vec<u8>>>> {
                    let from = keys::decode_vid(space, &k[keys::PREFIX_LEN..keys::PREFIX_LEN + vl])?;
                    if index.kind == SchemaKind::Tag {
                        if keys::tag_id_of_key(space, k) != index.schema_id {
                            return Ok(None);
                        }
                        let values = index::field_values(index, &codec::decode(&schema, v)?);
                        return index::vertex_entries(space, index, &from, &values).map(Some);
                    }
                    let (et, rank, to) = keys::parse_edge_key(space, k)?;
                    if et != index.schema_id {
                        return Ok(None);
                    }
                    let values = index::field_values(index, &codec::decode(&schema, v)?);
                    index::edge_entries(space, index, &from, rank, &to, &values).map(Some)
                };
                match entry() {
                    Ok(Some(entries)) => {
                        entries.into_iter().for_each(|e| b.kv.put(e, Vec::new()));
                        done += 1;
                    }
                    Ok(None) => {}
                    Err(e) => err = Some(e),
                }
                err.is_none() && scanned < BUILD_CHUNK
            })
            .map_err(kv_err)?;
        if let Some(e) = err {
            return Err(e);
        }
        self.commit(guard, space, b)?;
        Ok(match last {
            Some(mut k) if scanned >= BUILD_CHUNK => {
                k.push(0);
                (done, Some(k))
            }
            _ => (done, None),
        })
    }
}

/// Runs queued jobs one at a time. It holds storage only while a job runs, so dropping storage closes the
/// engine at once; it exits once storage is gone.
fn job_worker(jobs: Arc<Jobs>, storage: Weak<EmbeddedStorage>) {
    loop {
        let next = {
            let mut st = jobs.state.lock().expect("lock poisoned");
            match st.queue.pop_front() {
                Some(id) => Some(id),
                None => {
                    let (mut st, _) = jobs.wake.wait_timeout(st, Duration::from_millis(200)).expect("lock poisoned");
                    st.queue.pop_front()
                }
            }
        };
        let Some(s) = storage.upgrade() else { return };
        if let Some(id) = next {
            s.run_job(id);
        }
    }
}
