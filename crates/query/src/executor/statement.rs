//! StatementExecutor: the statements that are not planned into operators (spaces, schemas, indexes, jobs,
//! sessions, INSERT, UPDATE/UPSERT, DELETE) run whole, each checking its own names (their validators are still
//! theirs: see `docs/design/query.md`).

use crate::{DataSet, Params, QueryEngine, Session};
use quiver_common::eval::eval;
use quiver_common::expr::Expr;
use quiver_common::{QError, QResult, Value};
use quiver_syntax::ast::Statement;

impl QueryEngine {
    pub(crate) fn execute_statement(
        &self,
        session: &mut Session,
        stmt: &Statement,
        params: &Params,
    ) -> QResult<DataSet> {
        match stmt {
            Statement::ShowSpaces if !self.is_god(session) => {
                let ds = self.space_statement(stmt)?;
                let keep: Vec<usize> = (0..ds.len())
                    .filter(|&r| match ds.value(r, 0) {
                        Value::String(name) => {
                            self.catalog.space(name).is_ok_and(|s| self.visible_space(session, s.id))
                        }
                        _ => false,
                    })
                    .collect();
                Ok(ds.gather(&keep))
            }
            Statement::CreateSpace { .. }
            | Statement::CreateSpaceAs { .. }
            | Statement::DropSpace { .. }
            | Statement::ClearSpace { .. }
            | Statement::ShowSpaces
            | Statement::DescribeSpace(_)
            | Statement::ShowCreateSpace(_) => self.space_statement(stmt),
            Statement::ShowSessions(only) => Ok(self.own_rows(session, self.show_sessions(*only), "UserName")),
            Statement::CreateUser { .. }
            | Statement::AlterUser { .. }
            | Statement::DropUser { .. }
            | Statement::ChangePassword { .. }
            | Statement::Grant { .. }
            | Statement::Revoke { .. }
            | Statement::ShowUsers
            | Statement::ShowRoles(_)
            | Statement::DescribeUser(_) => self.user_statement(session, stmt),
            Statement::ShowHosts(_)
            | Statement::ShowCharset
            | Statement::ShowCollation
            | Statement::ShowMetaLeader
            | Statement::AddHosts { .. }
            | Statement::DropHosts(_)
            | Statement::ShowZones
            | Statement::CreateSnapshot
            | Statement::DropSnapshot(_)
            | Statement::ShowSnapshots
            | Statement::DescribeZone(_) => self.cluster_statement(stmt),
            Statement::ShowQueries { local } => {
                Ok(self.own_rows(session, self.running.show(local.then_some(session.id), &self.local_addr()), "User"))
            }
            Statement::KillQuery { session: s, plan } => {
                let ctx = quiver_common::eval::ConstContext { params: Some(params) };
                let s = s.as_ref().map(|e| eval(e, &ctx).map(|v| (e, v))).transpose()?;
                self.kill_query(session, s, (plan, eval(plan, &ctx)?))
            }
            Statement::KillSession(e) => {
                let v = eval(e, &quiver_common::eval::ConstContext { params: Some(params) })?;
                if !matches!(v, Value::Int(_)) {
                    return Err(QError::semantic(format!(
                        "{e}, Session ID must be an integer but was {}",
                        v.type_name().to_uppercase()
                    )));
                }
                self.kill_sessions(session, e, &[v])
            }
            Statement::ShowConfigs(module) => Ok(self.configs.show(*module)),
            Statement::GetConfig { module, name } => self.configs.get(*module, name),
            Statement::SetConfig { module, name, value } => {
                let value = quiver_common::eval::eval_const(value)?;
                self.configs.set(*module, name, &value)?;
                Ok(DataSet::empty())
            }
            Statement::ShowParts(ids) => {
                let space = self.current_space(session)?;
                self.show_parts(&space, ids.as_deref())
            }
            Statement::UseSpace(name) => {
                self.catalog.space(name)?;
                session.space = Some(name.clone());
                Ok(DataSet::empty())
            }
            Statement::CreateSchema { .. }
            | Statement::AlterSchema { .. }
            | Statement::DropSchema { .. }
            | Statement::ShowSchemas(_)
            | Statement::DescribeSchema { .. }
            | Statement::ShowCreateSchema { .. } => {
                let space = self.current_space(session)?;
                self.schema_statement(&space, stmt)
            }
            Statement::CreateIndex { .. }
            | Statement::DropIndex { .. }
            | Statement::ShowIndexes { .. }
            | Statement::DescribeIndex { .. }
            | Statement::ShowCreateIndex { .. }
            | Statement::ShowIndexStatus(_)
            | Statement::RebuildIndex { .. }
            | Statement::SubmitJob(_)
            | Statement::ShowJobs
            | Statement::ShowJob(_)
            | Statement::StopJob(_)
            | Statement::RecoverJob(_)
            | Statement::ShowStats => {
                let space = self.current_space(session)?;
                self.admin_statement(&space, stmt)
            }
            Statement::Unsupported(what) => Err(QError::not_supported(format!("`{what}'"))),
            Statement::Refused(why) => Err(QError::semantic(why)),
            // Bound and planned by the validator and planner; never run as a whole statement.
            Statement::Match(_) => Err(QError::not_supported("`MATCH' here")),
            _ => {
                let space = self.current_space(session)?;
                self.data_statement(&space, stmt, params)
            }
        }
    }
}

impl QueryEngine {
    /// `KILL QUERY` of plan `plan` in session `target` (the asking session's when `None` or 0), each an expression
    /// with its value, with NebulaGraph's errors for values that are no integers. With authorization off every user
    /// may kill any query, as NebulaGraph's GOD role may.
    pub(crate) fn kill_query(
        &self,
        session: &Session,
        target: Option<(&Expr, Value)>,
        plan: (&Expr, Value),
    ) -> QResult<DataSet> {
        let target = match target {
            Some((e, v)) => int_of("Session", e, &v)?,
            None => 0,
        };
        let plan = int_of("ExecutionPlanID", plan.0, &plan.1)?;
        let exists = |id: i64| self.sessions.as_ref().is_some_and(|r| r.sessions().iter().any(|s| s.id == id));
        let only_own = (!self.is_god(session)).then_some(session.user.as_str());
        self.running.kill(session.id, target, plan, only_own, &exists)?;
        Ok(DataSet::empty())
    }

    /// `KILL SESSION`: ends the sessions whose ids `values` holds (evaluated from `e`), and says how many existed.
    pub(crate) fn kill_sessions(&self, session: &Session, e: &Expr, values: &[Value]) -> QResult<DataSet> {
        let mut killed = 0;
        let god = self.is_god(session);
        for v in values {
            let id = int_of("Session", e, v)?;
            if !god {
                let owner = self.sessions.as_ref().and_then(|r| r.sessions().into_iter().find(|s| s.id == id));
                if owner.is_some_and(|s| s.user != session.user) {
                    return Err(QError::permission("No permission to kill session"));
                }
            }
            if self.sessions.as_ref().is_some_and(|r| r.remove(id)) {
                killed += 1;
            }
        }
        let mut ds = DataSet::with_columns(&["Number of session killed"]);
        ds.push_row([Value::Int(killed)]);
        Ok(ds)
    }
}

/// The integer a KILL statement's `what` evaluated to, or NebulaGraph's error for another type.
fn int_of(what: &str, e: &Expr, v: &Value) -> QResult<i64> {
    match v {
        Value::Int(i) => Ok(*i),
        other => Err(QError::execution(format!(
            "{what} `{e}' is not kind of int, but was {}",
            other.type_name().to_uppercase()
        ))),
    }
}
