//! StatementExecutor: the statements that are not planned into operators (spaces, schemas, indexes, jobs,
//! sessions, INSERT, UPDATE/UPSERT, DELETE) run whole, each checking its own names (their validators are still
//! theirs: see `docs/design/query.md`).

use crate::{DataSet, Params, QueryEngine, Session};
use quiver_common::{QError, QResult};
use quiver_syntax::ast::Statement;

impl QueryEngine {
    pub(crate) fn execute_statement(
        &self,
        session: &mut Session,
        stmt: &Statement,
        params: &Params,
    ) -> QResult<DataSet> {
        match stmt {
            Statement::CreateSpace { .. }
            | Statement::CreateSpaceAs { .. }
            | Statement::DropSpace { .. }
            | Statement::ClearSpace { .. }
            | Statement::ShowSpaces
            | Statement::DescribeSpace(_)
            | Statement::ShowCreateSpace(_) => self.space_statement(stmt),
            Statement::ShowSessions(only) => Ok(self.show_sessions(*only)),
            Statement::ShowHosts(_)
            | Statement::ShowCharset
            | Statement::ShowCollation
            | Statement::ShowMetaLeader
            | Statement::ShowZones
            | Statement::CreateSnapshot
            | Statement::DropSnapshot(_)
            | Statement::ShowSnapshots
            | Statement::DescribeZone(_) => self.cluster_statement(stmt),
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
            // Bound and planned by the validator and planner; never run as a whole statement.
            Statement::Match(_) => Err(QError::not_supported("`MATCH' here")),
            _ => {
                let space = self.current_space(session)?;
                self.data_statement(&space, stmt, params)
            }
        }
    }
}
