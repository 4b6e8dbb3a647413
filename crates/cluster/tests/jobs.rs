//! The cluster's jobs (`crates/cluster/src/jobs.rs`) on a simulated cluster where no host carries a whole space
//! (three hosts, one replica per partition): the meta service keeps the records, so every graph service lists the
//! same jobs; a job whose runner stopped renewing its lease is taken over; STOP JOB and RECOVER JOB work on jobs no
//! one runs; an index over more rows than a statement builds is filled by a job.

use quiver_api::conformance::space_with_schema;
use std::sync::Arc;
use std::time::{Duration, Instant};

use quiver_api::*;
use quiver_cluster::jobs::TAKEN_OVER;
use quiver_cluster::{ClusterStorage, SimCluster};
use quiver_common::budget::Budget;
use quiver_common::{PropType, Value};
use quiver_kv::MemEngine;
use quiver_meta::MetaStore;
use quiver_raft::Timing;

struct Setup {
    catalog: Arc<MetaStore>,
    sim: Arc<SimCluster>,
    space: Arc<SpaceDesc>,
    tag: SchemaRef,
}

fn setup(seed: u64) -> Setup {
    setup_with(seed, 6)
}

fn setup_with(seed: u64, partition_num: u32) -> Setup {
    let catalog = Arc::new(MetaStore::open(Arc::new(MemEngine::new())).expect("an empty catalog opens"));
    let (space, tag) = space_with_schema(catalog.as_ref(), partition_num, 1, SchemaKind::Tag, "t", "x");
    let sim = SimCluster::start(3, 1, catalog.clone(), Timing::steady(), seed);
    Setup { catalog, sim, space, tag }
}

impl Setup {
    /// A graph service's storage client; its job worker runs as `runner` if given.
    fn client(&self, runner: Option<&str>) -> Arc<ClusterStorage> {
        let storage = Arc::new(ClusterStorage::new(self.sim.clone(), self.catalog.clone()));
        if let Some(runner) = runner {
            storage.start_jobs(runner.to_string()).unwrap();
        }
        storage
    }

    fn insert(&self, storage: &ClusterStorage, vids: std::ops::Range<i64>) {
        let ms = vids
            .map(|v| Mutation::InsertVertex {
                vid: Value::Int(v),
                tags: vec![(self.tag.clone(), vec![Value::Int(v % 7)])],
                if_not_exists: false,
            })
            .collect();
        storage.write(&self.space, ms).unwrap();
    }

    fn job(&self, storage: &ClusterStorage, id: i64) -> JobInfo {
        let jobs = storage.jobs(&self.space).unwrap();
        jobs.into_iter().find(|j| j.id == id).unwrap_or_else(|| panic!("job {id} is not listed"))
    }

    fn wait_done(&self, storage: &ClusterStorage, id: i64) -> JobInfo {
        let started = Instant::now();
        loop {
            let job = self.job(storage, id);
            if job.status.is_done() {
                return job;
            }
            assert!(started.elapsed() < Duration::from_secs(60), "job {id} not done after 60 s: {job:?}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn new_index(&self) -> IndexRef {
        let desc = IndexDesc {
            id: 0,
            name: "t_x".into(),
            kind: SchemaKind::Tag,
            schema_id: self.tag.id,
            schema_name: self.tag.name.clone(),
            fields: vec![IndexField { name: "x".into(), ty: PropType::Int64, len: None }],
            comment: None,
            state: IndexState::Building,
            params: Default::default(),
        };
        self.catalog.create_index(&self.space, desc, false).unwrap().unwrap()
    }

    fn index_state(&self) -> IndexState {
        self.catalog.indexes(&self.space).into_iter().find(|i| i.name == "t_x").unwrap().state
    }
}

/// A job submitted through one graph service is listed by another (the records are the meta service's), runs on
/// the partitions' leaders although no host carries the space, and leaves SHOW STATS exact.
#[test]
fn jobs_are_the_meta_services() {
    let s = setup(21);
    let one = s.client(Some("graphd-1"));
    let two = s.client(None);
    s.insert(&one, 0..200);
    let before = one.stats(&s.space).unwrap();
    let id = one.submit_job(&s.space, NewJob::of(JobKind::Stats)).unwrap();
    let done = s.wait_done(&two, id);
    assert_eq!((done.status, done.error.as_deref()), (JobStatus::Finished, None), "{done:?}");
    assert_eq!((done.done, done.total), (6, 6), "one task per partition: {done:?}");
    assert_eq!(two.jobs(&s.space).unwrap(), one.jobs(&s.space).unwrap());
    assert_eq!(one.stats(&s.space).unwrap(), before);
    assert_eq!(before.vertices, 200);
    // Ids go on from the highest recorded, whichever graph service submits.
    let next = two.submit_job(&s.space, NewJob::of(JobKind::Flush)).unwrap();
    assert_eq!(next, id + 1);
    assert_eq!(s.wait_done(&one, next).status, JobStatus::Finished);
}

/// A job marked RUNNING by a graph service that stopped renewing its lease is taken over by another, which runs it
/// to the end and says so in its error column; one whose lease still holds is left alone.
#[test]
fn a_lapsed_job_is_taken_over() {
    let s = setup(22);
    let idle = s.client(None);
    s.insert(&idle, 0..50);
    let lapsed = s.catalog.add_job(s.space.id, NewJob::of(JobKind::Stats)).unwrap();
    let held = s.catalog.add_job(s.space.id, NewJob::of(JobKind::Stats)).unwrap();
    let run = |r: &JobRecord, runner: &str, lease_until_ms: u64| {
        let mut new = r.clone();
        new.job.status = JobStatus::Running;
        (new.runner, new.lease_until_ms) = (Some(runner.into()), lease_until_ms);
        assert!(s.catalog.swap_job(r, new).unwrap());
    };
    let now_ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64;
    run(&lapsed, "gone", now_ms - 1);
    run(&held, "alive", now_ms + 600_000);
    let worker = s.client(Some("graphd-2"));
    let done = s.wait_done(&worker, lapsed.job.id);
    assert_eq!((done.status, done.error.as_deref()), (JobStatus::Finished, Some(TAKEN_OVER)), "{done:?}");
    std::thread::sleep(Duration::from_millis(1200));
    let record = |id: i64| s.catalog.job_records().into_iter().find(|r| r.job.id == id).unwrap();
    let still = record(held.job.id);
    assert_eq!((still.job.status, still.runner.as_deref()), (JobStatus::Running, Some("alive")), "{still:?}");
    // Stopped while its runner holds it: STOPPED at once, but not queued again until the runner lets go of it (or
    // its lease lapses), so two runners never run it at once.
    worker.stop_job(&s.space, held.job.id).unwrap();
    let stopped = record(held.job.id);
    assert_eq!((stopped.job.status, stopped.runner.as_deref()), (JobStatus::Stopped, Some("alive")));
    assert_eq!(worker.recover_jobs(&s.space, &[]).unwrap(), 0);
    let mut lapsed = stopped.clone();
    lapsed.lease_until_ms = now_ms - 1;
    assert!(s.catalog.swap_job(&stopped, lapsed).unwrap());
    assert_eq!(worker.recover_jobs(&s.space, &[]).unwrap(), 1);
    let done = s.wait_done(&worker, held.job.id);
    assert_eq!((done.status, done.error.as_deref()), (JobStatus::Finished, None), "{done:?}");
}

/// STOP JOB and RECOVER JOB on jobs no graph service runs yet, with NebulaGraph's errors; a recovered job runs once
/// a worker starts.
#[test]
fn stop_and_recover_jobs_in_the_meta_service() {
    let s = setup(23);
    let client = s.client(None);
    let a = client.submit_job(&s.space, NewJob::of(JobKind::Stats)).unwrap();
    let b = client.submit_job(&s.space, NewJob::of(JobKind::Compact)).unwrap();
    assert_eq!(s.job(&client, a).status, JobStatus::Queue);
    client.stop_job(&s.space, a).unwrap();
    assert_eq!(s.job(&client, a).status, JobStatus::Stopped);
    assert!(s.job(&client, a).stop_secs > 0);
    let e = client.stop_job(&s.space, a).unwrap_err();
    assert_eq!(e.message, "Finished job or failed job can not be stopped, please start another job instead");
    assert_eq!(client.stop_job(&s.space, 99).unwrap_err().message, "Key not existed!");
    let other =
        NewSpace { name: "o".into(), partition_num: 2, replica_factor: 1, vid_type: VidType::Int64, comment: None };
    assert!(s.catalog.create_space(other, false).unwrap());
    let other = s.catalog.space("o").unwrap();
    assert_eq!(client.stop_job(&other, b).unwrap_err().message, "Job not existed in chosen space!");
    assert!(client.jobs(&other).unwrap().is_empty());
    // Only failed and stopped jobs are recovered; `only` picks among them.
    assert_eq!(client.recover_jobs(&s.space, &[b]).unwrap(), 0);
    assert_eq!(client.recover_jobs(&s.space, &[]).unwrap(), 1);
    assert_eq!(s.job(&client, a).status, JobStatus::Queue);
    let worker = s.client(Some("graphd-3"));
    for id in [a, b] {
        let done = s.wait_done(&worker, id);
        assert_eq!((done.status, done.error), (JobStatus::Finished, None));
    }
    let listed: Vec<i64> = client.jobs(&s.space).unwrap().iter().map(|j| j.id).collect();
    assert_eq!(listed, vec![b, a], "newest first");
}

/// An index over more rows than CREATE INDEX fills itself is filled by a REBUILD job on the partitions' leaders
/// (two partitions of about 5,000 rows: two chunks each), and is ready (and complete) once the job is over.
#[test]
fn a_large_index_is_built_by_a_job() {
    let s = setup_with(24, 2);
    let client = s.client(Some("graphd-4"));
    let rows = quiver_storage::jobs::INLINE_BUILD_ROWS + 1;
    for chunk in (0..rows).step_by(2000) {
        s.insert(&client, chunk..(chunk + 2000).min(rows));
    }
    let index = s.new_index();
    // A job stopped at once stays STOPPED, whether its runner had taken it or not, and leaves the index building.
    let stopped = client
        .submit_job(
            &s.space,
            NewJob { kind: JobKind::RebuildIndex(SchemaKind::Tag), indexes: vec![index.id], paras: vec![] },
        )
        .unwrap();
    client.stop_job(&s.space, stopped).unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(s.job(&client, stopped).status, JobStatus::Stopped);
    assert_eq!(s.index_state(), IndexState::Building);
    let id = client.index_created(&s.space, &index).unwrap().expect("a job builds the index");
    let done = s.wait_done(&client, id);
    assert_eq!((done.status, done.kind), (JobStatus::Finished, JobKind::RebuildIndex(SchemaKind::Tag)), "{done:?}");
    assert_eq!((done.done, done.total), (rows as u64, rows as u64), "progress in rows, as in one process");
    assert_eq!(s.index_state(), IndexState::Ready);
    let index = s.catalog.indexes(&s.space).into_iter().find(|i| i.name == "t_x").unwrap();
    let scan = IndexScan { index, prefix: vec![Value::Int(3)], range: None };
    let hits = client.scan_index(&s.space, &[scan], &Budget::unlimited()).unwrap();
    let expected = (0..rows).filter(|v| v % 7 == 3).count();
    assert_eq!(hits.len(), expected);
}

/// What a host refuses of a job's tasks: the end of an engine job it never ran, and an index build's chunk asked of
/// more than one partition (a chunk's cursor is a key of one partition).
#[test]
fn a_host_refuses_malformed_job_tasks() {
    use quiver_cluster::host::HostError;
    use quiver_cluster::rpc::{HostRequest, PartOp};
    let s = setup(25);
    // A write opens the space's partitions on their hosts.
    s.insert(&s.client(None), 0..10);
    let space = (*s.space).clone();
    let host = s.sim.storage_hosts().into_iter().next().expect("three hosts");
    let failed = |r: Result<_, HostError>| match r {
        Err(HostError::Failed(e)) => e.message,
        Err(other) => panic!("refused otherwise: {other:?}"),
        Ok(_) => panic!("served"),
    };
    let done = host.serve(HostRequest::EngineJobDone { space: space.clone(), id: 4242 });
    assert_eq!(failed(done), "this host has no engine job 4242");
    let index = s.new_index();
    // Two partitions this host leads, so the leadership check passes and the chunk's own rule is what refuses.
    let deadline = Instant::now() + Duration::from_secs(10);
    let led = loop {
        let led: Vec<u32> =
            (1..=space.partition_num).filter(|&p| s.sim.leader_id(space.id, p) == Some(host.id())).collect();
        if led.len() >= 2 || Instant::now() > deadline {
            break led;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(led.len() >= 2, "the host leads two partitions of six: {led:?}");
    let chunk =
        HostRequest::Parts { space, lead: led[..2].to_vec(), op: PartOp::BuildIndexChunk { index, from: None } };
    assert_eq!(failed(host.serve(chunk)), "Storage Error: an index build's chunk is asked of one partition");
}
