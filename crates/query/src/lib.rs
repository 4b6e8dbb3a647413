//! Statement execution: validates statements against the catalog and runs them through the storage client.
//!
//! **Architecture invariant:** the query layer opens no socket or file. It reaches the catalog and storage only
//! through the [`quiver_api::Catalog`] and [`quiver_api::StorageClient`] traits.
//!
//! A request is parsed, each statement turned into a plan ([`plan`]), rewritten by the rule-based optimizer
//! ([`optimizer`]) and executed ([`plan::exec`]); statements that need no planning (DDL, DML, FETCH) run in the
//! statement layer ([`data`], [`schema`]).

mod access;
pub mod configs;
mod constants;
mod context;
mod dataset;
mod distinct;
mod executor;
pub mod optimizer;
mod planner;
mod queries;
mod request;

mod top;
mod validator;

pub use dataset::DataSet;
pub use executor::mutation::build_row;
pub use executor::schema::DEFAULT_PARTITION_NUM;
pub use planner::desc::{PlanDesc, PlanNodeDesc, ProfileStats};

use executor::Executor;
use planner::desc::Profiles;
use planner::PlanNode;
use quiver_api::{Catalog, SpaceDesc, StorageClient};
use quiver_common::budget::{Budget, Limits};
use quiver_common::limits::PLAN_NODES_MAX;
use quiver_common::{QError, QResult, Value};
use quiver_syntax::ast::{PlanFormat, Statement};
use request::Request;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

/// One client session of the graph protocol, as `SHOW SESSIONS` lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionInfo {
    pub id: i64,
    pub user: String,
    pub space: Option<String>,
    /// Microseconds since the Unix epoch.
    pub created_us: i64,
    pub updated_us: i64,
    pub graph_addr: String,
    pub timezone_offset_secs: i64,
    pub client_ip: String,
}

/// A request as it finished, for what watches them (the server's slow-query log).
pub struct FinishedQuery<'a> {
    pub session: i64,
    pub user: &'a str,
    /// The current space when the request ended.
    pub space: Option<&'a str>,
    pub text: &'a str,
    pub duration: std::time::Duration,
    /// Rows of the result (0 on an error).
    pub rows: usize,
    pub error: Option<&'a QError>,
}

/// `text` with every quoted string replaced by `'***'` when it mentions a password (CREATE USER ... WITH PASSWORD,
/// ALTER USER, CHANGE PASSWORD): what the slow-query log and SHOW QUERIES show of it.
pub fn redact_passwords(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.to_ascii_lowercase().contains("password") {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in text.chars() {
        match quote {
            None if c == '\'' || c == '"' => {
                quote = Some(c);
                out.push_str("'***'");
            }
            None => out.push(c),
            Some(q) => {
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == q {
                    quote = None;
                }
            }
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Told of every request the engine starts and finishes (the query layer writes no file and keeps no figures).
pub trait QueryObserver: Send + Sync {
    fn started(&self) {}
    fn finished(&self, q: &FinishedQuery<'_>);
}

/// Where `SHOW SESSIONS` finds the sessions: the server that owns them.
pub trait SessionRegistry: Send + Sync {
    fn sessions(&self) -> Vec<SessionInfo>;
    /// Ends a session (`KILL SESSION`); whether it existed.
    fn remove(&self, id: i64) -> bool;
}

/// Per-client state kept between requests.
#[derive(Debug, Clone, Default)]
pub struct Session {
    /// The graph protocol's session id (0 for a request outside its sessions: the HTTP API, embedded use).
    pub id: i64,
    /// Who opened the session.
    pub user: String,
    pub space: Option<String>,
    /// Optimizer rules switched off for this session, by name (see [`optimizer::rule_names`]).
    pub disabled_rules: Vec<String>,
}

pub type Params = BTreeMap<String, Value>;

pub struct QueryEngine {
    pub catalog: Arc<dyn Catalog>,
    pub storage: Arc<dyn StorageClient>,
    /// The settings `UPDATE CONFIGS` changes: the engine registers its own (each request's deadline and memory
    /// bound, the log level); a server adds those of its sessions and connections.
    pub configs: configs::Configs,
    /// Each request's deadline (`query_timeout_ms`) and memory bound (`query_memory_bytes`), read as it starts.
    query_timeout_ms: configs::ConfigCell,
    query_memory_bytes: configs::ConfigCell,
    /// The requests running now (`SHOW QUERIES`, `KILL QUERY`).
    running: queries::RunningQueries,
    /// Optimizer rules switched off for every session.
    pub disabled_rules: Vec<String>,
    /// The graph protocol's sessions, when a server serves that protocol.
    pub sessions: Option<Arc<dyn SessionRegistry>>,
    /// Whether users' roles decide what they may run (`--enable-authorize`; off by default, as in NebulaGraph).
    pub authorize: bool,
    /// Told of every request, when a server watches them (the slow-query log, the metrics).
    pub observers: Vec<Arc<dyn QueryObserver>>,
    /// The address this process serves on: the one host SHOW HOSTS, SHOW PARTS and SHOW ZONES report, which
    /// plays every role (graph, meta, storage) in the embedded mode.
    pub local_host: (String, u16),
    /// What SHOW HOSTS reports as `Git Info Sha`: the commit the server binary was built from (it sets this), else
    /// the package version.
    pub git_sha: String,
    /// A cluster's machines, in a cluster's graphd; `None` in the embedded mode.
    pub cluster: Option<Arc<dyn quiver_api::ClusterView>>,
    /// The partitions of a space created without `partition_num` (`--default-parts-num`).
    pub default_parts_num: u32,
}

impl QueryEngine {
    pub fn new(catalog: Arc<dyn Catalog>, storage: Arc<dyn StorageClient>) -> QueryEngine {
        let (configs, query_timeout_ms, query_memory_bytes) = configs::Configs::for_engine(Limits::default());
        QueryEngine {
            catalog,
            storage,
            configs,
            query_timeout_ms,
            query_memory_bytes,
            running: queries::RunningQueries::default(),
            disabled_rules: Vec::new(),
            sessions: None,
            authorize: false,
            observers: Vec::new(),
            local_host: ("127.0.0.1".into(), 9669),
            git_sha: env!("CARGO_PKG_VERSION").into(),
            cluster: None,
            default_parts_num: DEFAULT_PARTITION_NUM,
        }
    }

    /// The server's memory neared `limit_bytes`: kills the running query holding the most memory (NebulaGraph's
    /// memory tracker does the same), which fails with `GraphMemoryExceeded`. Its plan id and bytes, if any ran.
    /// Only a query holding at least `min_bytes` is stopped.
    pub fn evict_largest_query(&self, limit_bytes: usize, min_bytes: usize) -> Option<(i64, usize)> {
        self.running.kill_largest(min_bytes, |held| {
            QError::new(
                quiver_common::ErrorCode::MemoryExceeded,
                format!(
                    "GraphMemoryExceeded: (-2600) the server neared its memory limit of {} MiB; this query held the \
                     most ({held} bytes) and was stopped",
                    limit_bytes >> 20
                ),
            )
        })
    }

    /// `None` while a request runs; otherwise a number that changes whenever a request has run since the last
    /// call (how many have finished): what a caller that hands memory back once the engine is idle watches.
    pub fn idle(&self) -> Option<u64> {
        self.running.idle()
    }

    /// Each request's deadline and memory bound, as they are set now.
    pub fn limits(&self) -> Limits {
        use std::sync::atomic::Ordering::Relaxed;
        Limits {
            timeout: std::time::Duration::from_millis(self.query_timeout_ms.load(Relaxed).max(0) as u64),
            memory_bytes: self.query_memory_bytes.load(Relaxed).max(0) as usize,
        }
    }

    /// Sets each request's deadline and memory bound (`--query-timeout-ms`, `--query-memory-mb`).
    pub fn set_limits(&self, limits: Limits) {
        use std::sync::atomic::Ordering::Relaxed;
        self.query_timeout_ms.store(limits.timeout.as_millis().min(i64::MAX as u128) as i64, Relaxed);
        self.query_memory_bytes.store(limits.memory_bytes.min(i64::MAX as usize) as i64, Relaxed);
    }

    /// Runs every statement of `text` in order and returns the last one's result. The first error stops the
    /// request; statements before it have taken effect.
    pub fn execute(&self, session: &mut Session, text: &str, params: &Params) -> QResult<DataSet> {
        self.execute_encoded(session, text, params, |result, _, _| result)
    }

    /// Runs a request as [`QueryEngine::execute`] does, then hands its result to `encode` (with the session as the
    /// request left it, and the request's budget) while the request is still running: the encoding of a result for
    /// a client counts towards the request's memory bound, meets its deadline (`encode` calls [`Budget::check`] as
    /// it goes) and can be stopped by KILL QUERY or the server's memory limit, as any operator can.
    pub fn execute_encoded<R>(
        &self,
        session: &mut Session,
        text: &str,
        params: &Params,
        encode: impl FnOnce(QResult<DataSet>, &Session, &Budget) -> R,
    ) -> R {
        let started = Instant::now();
        // What observers (the slow-query log) and SHOW QUERIES see: never a password.
        let shown = redact_passwords(text);
        for o in &self.observers {
            o.started();
        }
        let budget = Budget::new(self.limits());
        let running = self.running.register(session.id, &session.user, &shown, &budget);
        let (encoded, rows, error) = {
            // Everything this thread allocates for the request, from its syntax tree to its encoding, counts
            // towards its bound.
            let _memory = budget.enter();
            let result = self.execute_request(session, text, params, &budget);
            let rows = result.as_ref().map_or(0, DataSet::len);
            let error = result.as_ref().err().cloned();
            (encode(result, session, &budget), rows, error)
        };
        drop(running);
        for o in &self.observers {
            o.finished(&FinishedQuery {
                session: session.id,
                user: &session.user,
                space: session.space.as_deref(),
                text: &shown,
                duration: started.elapsed(),
                rows,
                error: error.as_ref(),
            });
        }
        encoded
    }

    fn execute_request(&self, session: &mut Session, text: &str, params: &Params, budget: &Budget) -> QResult<DataSet> {
        let names: Vec<&str> = params.keys().map(String::as_str).collect();
        let statements = quiver_syntax::parse_with_params(text, &names)?;
        // SHOW, GET and UPDATE CONFIGS run outside the bounds they set: `UPDATE CONFIGS query_timeout_ms = ...` must
        // undo a bound too tight for any other statement.
        let configs_only = statements.iter().all(|s| {
            matches!(s, Statement::ShowConfigs(_) | Statement::GetConfig { .. } | Statement::SetConfig { .. })
        });
        let budget = if configs_only { Budget::unlimited() } else { budget.clone() };
        let _exempt = configs_only.then(|| budget.enter());
        let mut req = Request::new(params, budget);
        let mut last = DataSet::empty();
        for stmt in &statements {
            self.check_access(session, stmt)?;
            last = match stmt {
                Statement::Explain { profile, format, body } => {
                    self.explain(session, body, *profile, *format, &mut req)?
                }
                _ => {
                    let plan = self.plan(session, stmt, &mut req)?;
                    Executor { engine: self, session, req: &mut req, profiles: None }.run(&plan, None)?
                }
            };
        }
        Ok(last)
    }

    /// One statement validated, planned and optimized: every name resolved and every semantic error raised
    /// before anything runs, EXPLAIN included.
    fn plan(&self, session: &Session, stmt: &Statement, req: &mut Request<'_>) -> QResult<PlanNode> {
        let space = self.current_space(session).ok();
        let mut assigned = std::mem::take(&mut req.assigned);
        let bound = validator::Validator { engine: self, space: space.clone(), req }.statement(stmt, &mut assigned);
        req.assigned = assigned;
        let bound = bound?;
        // Validation, planning and optimisation run under the request's deadline and memory bound, as execution
        // does (the memory is counted from the syntax tree on; these are the checks).
        req.budget.check()?;
        let mut plan = PlanNode::build(bound);
        let nodes = plan.size();
        if nodes > PLAN_NODES_MAX {
            return Err(QError::semantic(format!(
                "The statement's plan has {nodes} operators, more than the {PLAN_NODES_MAX} allowed"
            )));
        }
        req.budget.check()?;
        let ctx = optimizer::RuleContext { req, storage: self.storage.as_ref(), space: space.as_deref() };
        let disabled: Vec<String> = self.disabled_rules.iter().chain(&session.disabled_rules).cloned().collect();
        optimizer::optimize(&mut plan, &ctx, &disabled);
        req.budget.check()?;
        Ok(plan)
    }

    /// EXPLAIN returns the plans of `body` as rows; PROFILE runs them and returns the last one's rows, with the
    /// plans and per-operator rows and times in [`DataSet::plan`].
    fn explain(
        &self,
        session: &mut Session,
        body: &[Statement],
        profile: bool,
        format: PlanFormat,
        req: &mut Request<'_>,
    ) -> QResult<DataSet> {
        let mut plans = Vec::new();
        let mut last = DataSet::empty();
        let mut profiles = Profiles::new();
        let mut optimize_us = 0;
        for stmt in body {
            // Checked here too, each in the space the statements before it chose (`PROFILE { USE b; ... }`).
            self.check_access(session, stmt)?;
            let t = Instant::now();
            // Boxed: profiles are keyed by node address, which must not change when the plan is kept.
            let plan = Box::new(self.plan(session, stmt, req)?);
            optimize_us += t.elapsed().as_micros() as u64;
            if profile {
                last = Executor { engine: self, session, req, profiles: Some(&mut profiles) }.run(&plan, None)?;
            }
            plans.push(plan);
        }
        let refs: Vec<&PlanNode> = plans.iter().map(|p| &**p).collect();
        let desc = PlanDesc::of(&refs, format, profile.then_some(&profiles), optimize_us);
        if profile {
            last.plan = Some(Box::new(desc));
            return Ok(last);
        }
        let mut rows = desc.to_data_set();
        rows.plan = Some(Box::new(desc));
        Ok(rows)
    }

    fn show_sessions(&self, only: Option<i64>) -> DataSet {
        let mut ds = DataSet::with_columns(&[
            "SessionId",
            "UserName",
            "SpaceName",
            "CreateTime",
            "UpdateTime",
            "GraphAddr",
            "Timezone",
            "ClientIp",
        ]);
        let mut sessions = self.sessions.as_ref().map(|r| r.sessions()).unwrap_or_default();
        sessions.retain(|s| only.is_none_or(|id| s.id == id));
        sessions.sort_by_key(|s| std::cmp::Reverse(s.created_us));
        let time =
            |us: i64| quiver_common::datetime::DateTime::from_micros(us).map(Value::DateTime).unwrap_or(Value::NULL);
        for s in sessions {
            ds.push_row([
                Value::Int(s.id),
                Value::str(s.user),
                Value::str(s.space.unwrap_or_default()),
                time(s.created_us),
                time(s.updated_us),
                Value::str(s.graph_addr),
                Value::Int(s.timezone_offset_secs),
                Value::str(s.client_ip),
            ]);
        }
        ds
    }

    pub(crate) fn current_space(&self, session: &Session) -> QResult<Arc<SpaceDesc>> {
        let name = session.space.as_ref().ok_or_else(|| QError::semantic("Space was not chosen."))?;
        self.catalog.space(name)
    }
}

#[cfg(test)]
mod redact_tests {
    use super::redact_passwords;

    #[test]
    fn passwords_never_reach_logs() {
        assert_eq!(
            redact_passwords("CREATE USER u WITH PASSWORD 'se\\'cret'; YIELD \"x\""),
            "CREATE USER u WITH PASSWORD '***'; YIELD '***'"
        );
        assert_eq!(redact_passwords("change password u from \"a\" to 'b'"), "change password u from '***' to '***'");
        // Requests without a password keep their text, strings included.
        assert_eq!(redact_passwords("YIELD 'abc' AS s"), "YIELD 'abc' AS s");
    }
}
