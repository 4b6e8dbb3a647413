//! Statement execution: validates statements against the catalog and runs them through the storage client.
//!
//! **Architecture invariant:** the query layer opens no socket or file. It reaches the catalog and storage only
//! through the [`quiver_api::Catalog`] and [`quiver_api::StorageClient`] traits.
//!
//! This is the statement layer of the embedded core (DDL, DML, FETCH, YIELD). The planner and optimizer
//! (parse → validate → plan → optimize → execute) arrive with GO and query composition.

mod compose;
mod context;
mod data;
mod go;
mod schema;

use quiver_api::{Catalog, SpaceDesc, StorageClient};
use quiver_common::{QError, QResult, Value};
use quiver_syntax::ast::Statement;
use std::collections::BTreeMap;
use std::sync::Arc;

/// A result table.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DataSet {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Value>>,
}

impl DataSet {
    pub fn empty() -> DataSet {
        DataSet::default()
    }

    pub fn with_columns(columns: &[&str]) -> DataSet {
        DataSet { columns: columns.iter().map(|c| c.to_string()).collect(), rows: Vec::new() }
    }
}

/// Per-client state kept between requests.
#[derive(Debug, Clone, Default)]
pub struct Session {
    pub space: Option<String>,
}

pub type Params = BTreeMap<String, Value>;

pub struct QueryEngine {
    pub catalog: Arc<dyn Catalog>,
    pub storage: Arc<dyn StorageClient>,
}

impl QueryEngine {
    pub fn new(catalog: Arc<dyn Catalog>, storage: Arc<dyn StorageClient>) -> QueryEngine {
        QueryEngine { catalog, storage }
    }

    /// Runs every statement of `text` in order and returns the last one's result. The first error stops the
    /// request; statements before it have taken effect.
    pub fn execute(&self, session: &mut Session, text: &str, params: &Params) -> QResult<DataSet> {
        let names: Vec<&str> = params.keys().map(String::as_str).collect();
        let statements = quiver_syntax::parse_with_params(text, &names)?;
        let mut req = compose::Request::new(params);
        let mut last = DataSet::empty();
        for stmt in &statements {
            last = self.run(session, stmt, &mut req, None)?;
        }
        Ok(last)
    }

    pub(crate) fn current_space(&self, session: &Session) -> QResult<Arc<SpaceDesc>> {
        let name = session.space.as_ref().ok_or_else(|| QError::semantic("Space was not chosen."))?;
        self.catalog.space(name)
    }

    pub(crate) fn execute_statement(&self, session: &mut Session, stmt: &Statement, params: &Params) -> QResult<DataSet> {
        match stmt {
            Statement::CreateSpace { .. }
            | Statement::DropSpace { .. }
            | Statement::ClearSpace { .. }
            | Statement::ShowSpaces
            | Statement::DescribeSpace(_)
            | Statement::ShowCreateSpace(_) => self.space_statement(stmt),
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
            Statement::Unsupported(what) => Err(QError::not_supported(format!("`{what}'"))),
            _ => {
                let space = self.current_space(session)?;
                self.data_statement(&space, stmt, params)
            }
        }
    }
}
