//! Index, job and statistics statements: `CREATE|DROP|SHOW|DESCRIBE|REBUILD ... INDEX`, `SUBMIT|SHOW|STOP|RECOVER
//! JOB`, `SHOW STATS`, with NebulaGraph's columns and messages.

use super::schema::kind_of;
use crate::{DataSet, QueryEngine};
use quiver_api::*;
use quiver_common::datetime::DateTime;
use quiver_common::{QError, QResult, Value};
use quiver_syntax::ast::{JobSpec, Statement};

fn by_column(kind: SchemaKind) -> &'static str {
    match kind {
        SchemaKind::Tag => "By Tag",
        SchemaKind::Edge => "By Edge",
    }
}

fn keyword(kind: SchemaKind) -> &'static str {
    match kind {
        SchemaKind::Tag => "Tag",
        SchemaKind::Edge => "Edge",
    }
}

/// How `DESCRIBE INDEX` prints a field: a string column is kept as a fixed-length prefix.
fn field_type(f: &IndexField) -> String {
    match (f.ty, f.len) {
        (quiver_common::PropType::String | quiver_common::PropType::FixedString(_), Some(n)) => {
            format!("fixed_string({n})")
        }
        (ty, _) => ty.name(),
    }
}

fn show_create_index(i: &IndexDesc) -> String {
    let kw = match i.kind {
        SchemaKind::Tag => "TAG",
        SchemaKind::Edge => "EDGE",
    };
    let fields: Vec<String> = i
        .fields
        .iter()
        .map(|f| match (f.ty, f.len) {
            (quiver_common::PropType::String, Some(n)) => format!(" `{}`({n})", f.name),
            _ => format!(" `{}`", f.name),
        })
        .collect();
    let mut s = format!("CREATE {kw} INDEX `{}` ON `{}` (\n{}\n)", i.name, i.schema_name, fields.join(",\n"));
    // IndexUtil::toShowCreateIndex: the options given, ` WITH (s2_max_level = n, s2_max_cells = n)`.
    let params: Vec<String> = [("s2_max_level", i.params.s2_max_level), ("s2_max_cells", i.params.s2_max_cells)]
        .into_iter()
        .filter_map(|(k, v)| v.map(|v| format!("{k} = {v}")))
        .collect();
    if !params.is_empty() {
        s.push_str(&format!(" WITH ({})", params.join(", ")));
    }
    // IndexUtil::toShowCreateIndex: ` comment "..."`, in lower case.
    if let Some(c) = &i.comment {
        s.push_str(" comment ");
        let _ = quiver_common::value::write_quoted(&mut s, c);
    }
    s
}

/// A job's columns in SHOW JOBS, which SHOW JOB's first row begins with: id, command, status, start and stop.
fn job_columns(j: &JobInfo) -> [Value; 5] {
    [
        Value::Int(j.id),
        Value::String(j.kind.name().into()),
        Value::String(j.status.name().into()),
        job_time(j.start_secs),
        job_time(j.stop_secs),
    ]
}

fn job_time(secs: i64) -> Value {
    if secs <= 0 {
        return Value::Empty;
    }
    DateTime::from_timestamp(secs).map(Value::DateTime).unwrap_or(Value::Empty)
}

/// NebulaGraph's error code column of `SHOW JOB`.
fn job_code(j: &JobInfo) -> &'static str {
    match j.status {
        JobStatus::Queue | JobStatus::Running => "E_JOB_SUBMITTED",
        JobStatus::Finished => "SUCCEEDED",
        JobStatus::Failed => "E_JOB_FAILED",
        JobStatus::Stopped => "E_USER_CANCEL",
    }
}

impl QueryEngine {
    fn index_by_name(&self, space: &SpaceDesc, kind: SchemaKind, name: &str) -> QResult<IndexRef> {
        self.catalog
            .indexes(space)
            .into_iter()
            .find(|i| i.kind == kind && i.name == name)
            .ok_or_else(|| QError::execution("Index not existed!"))
    }

    pub(crate) fn admin_statement(&self, space: &SpaceDesc, stmt: &Statement) -> QResult<DataSet> {
        match stmt {
            Statement::CreateIndex {
                kind,
                if_not_exists,
                name,
                schema,
                fields,
                s2_max_level,
                s2_max_cells,
                comment,
            } => {
                let kind = kind_of(*kind);
                if comment.as_ref().is_some_and(|c| c.len() > quiver_common::limits::COMMENT_BYTES_MAX) {
                    return Err(QError::semantic(format!(
                        "Comment is longer than {} bytes",
                        quiver_common::limits::COMMENT_BYTES_MAX
                    )));
                }
                let mut specs = Vec::with_capacity(fields.len());
                for f in fields {
                    let len = match f.len {
                        None => None,
                        Some(n) if n > 0 && n <= u32::MAX as i64 => Some(n as u32),
                        Some(_) => return Err(QError::execution("Invalid param!")),
                    };
                    // The type is filled in by the catalog from the schema.
                    specs.push(IndexField { name: f.name.clone(), ty: quiver_common::PropType::Bool, len });
                }
                let desc = IndexDesc {
                    id: 0,
                    name: name.clone(),
                    kind,
                    schema_id: 0,
                    schema_name: schema.clone(),
                    fields: specs,
                    comment: comment.clone(),
                    state: IndexState::Building,
                    params: IndexParams { s2_max_level: *s2_max_level, s2_max_cells: *s2_max_cells },
                };
                let Some(index) = self.catalog.create_index(space, desc, *if_not_exists)? else {
                    return Ok(DataSet::empty());
                };
                if let Some(job) = self.storage.index_created(space, &index)? {
                    log::info!("index `{}' is built by job {job}; it is used once the job finishes", index.name);
                }
                Ok(DataSet::empty())
            }
            Statement::DropIndex { kind, if_exists, name } => {
                if let Some(index) = self.catalog.drop_index(space, kind_of(*kind), name, *if_exists)? {
                    self.storage.drop_index_data(space, index.id)?;
                }
                Ok(DataSet::empty())
            }
            Statement::ShowIndexes { kind, by } => {
                let kind = kind_of(*kind);
                let mut indexes: Vec<IndexRef> =
                    self.catalog.indexes(space).into_iter().filter(|i| i.kind == kind).collect();
                if let Some(by) = by {
                    self.catalog.schema(space, kind, by)?;
                    indexes.retain(|i| i.schema_name == *by);
                }
                indexes.sort_by(|a, b| a.name.cmp(&b.name));
                let columns =
                    |i: &IndexDesc| Value::List(i.fields.iter().map(|f| Value::str(f.name.clone())).collect());
                Ok(match by {
                    None => DataSet::new(
                        vec!["Index Name".into(), by_column(kind).into(), "Columns".into()],
                        indexes
                            .iter()
                            .map(|i| vec![Value::str(i.name.clone()), Value::str(i.schema_name.clone()), columns(i)])
                            .collect(),
                    ),
                    Some(_) => DataSet::new(
                        vec!["Index Name".into(), "Columns".into()],
                        indexes.iter().map(|i| vec![Value::str(i.name.clone()), columns(i)]).collect(),
                    ),
                })
            }
            Statement::DescribeIndex { kind, name } => {
                let i = self.index_by_name(space, kind_of(*kind), name)?;
                let rows =
                    i.fields.iter().map(|f| vec![Value::str(f.name.clone()), Value::str(field_type(f))]).collect();
                Ok(DataSet::new(vec!["Field".into(), "Type".into()], rows))
            }
            Statement::ShowCreateIndex { kind, name } => {
                let kind = kind_of(*kind);
                let i = self.index_by_name(space, kind, name)?;
                let k = keyword(kind);
                Ok(DataSet::new(
                    vec![format!("{k} Index Name"), format!("Create {k} Index")],
                    vec![vec![Value::str(i.name.clone()), Value::str(show_create_index(&i))]],
                ))
            }
            Statement::ShowIndexStatus(kind) => {
                let kind = kind_of(*kind);
                let mut rows: Vec<Vec<Value>> = Vec::new();
                // The latest rebuild of each set of indexes, named by the names it was given, as NebulaGraph lists
                // them (`all_tag_indexes` for a rebuild of all).
                for j in self.storage.jobs(space)? {
                    if j.kind != JobKind::RebuildIndex(kind) {
                        continue;
                    }
                    let name = if j.paras.is_empty() {
                        Value::str(format!("all_{}_indexes", keyword(kind).to_lowercase()))
                    } else {
                        Value::str(j.paras.join(","))
                    };
                    if rows.iter().any(|r| r[0] == name) {
                        continue;
                    }
                    rows.push(vec![name, Value::String(j.status.name().into())]);
                }
                Ok(DataSet::new(vec!["Name".into(), "Index Status".into()], rows))
            }
            Statement::RebuildIndex { kind, names } => {
                let kind = kind_of(*kind);
                let indexes: Vec<IndexRef> = if names.is_empty() {
                    self.catalog.indexes(space).into_iter().filter(|i| i.kind == kind).collect()
                } else {
                    let mut v = Vec::new();
                    for n in names {
                        v.push(
                            self.index_by_name(space, kind, n)
                                .map_err(|_| QError::semantic(format!("Index not existed: {n}")))?,
                        );
                    }
                    v
                };
                // Until the rebuild finishes the index is not used: its entries are being rewritten.
                for i in &indexes {
                    self.catalog.set_index_state(space, i.id, IndexState::Building)?;
                }
                let job = NewJob {
                    kind: JobKind::RebuildIndex(kind),
                    indexes: indexes.iter().map(|i| i.id).collect(),
                    paras: names.clone(),
                };
                let id = self.storage.submit_job(space, job)?;
                Ok(DataSet::new(vec!["New Job Id".into()], vec![vec![Value::Int(id)]]))
            }
            Statement::SubmitJob(spec) => {
                let kind = match spec {
                    JobSpec::Compact => JobKind::Compact,
                    JobSpec::Flush => JobKind::Flush,
                    JobSpec::Stats => JobKind::Stats,
                };
                let id = self.storage.submit_job(space, NewJob::of(kind))?;
                Ok(DataSet::new(vec!["New Job Id".into()], vec![vec![Value::Int(id)]]))
            }
            Statement::ShowJobs => {
                let rows = self.storage.jobs(space)?.into_iter().map(|j| job_columns(&j).to_vec()).collect();
                Ok(DataSet::new(
                    ["Job Id", "Command", "Status", "Start Time", "Stop Time"].iter().map(|c| c.to_string()).collect(),
                    rows,
                ))
            }
            Statement::ShowJob(id) => {
                let jobs = self.storage.jobs(space)?;
                let Some(j) = jobs.into_iter().find(|j| j.id == *id) else {
                    return Err(QError::execution("Job not existed in chosen space!"));
                };
                let code = job_code(&j);
                let progress = match (j.kind, j.total) {
                    (JobKind::Stats, t) if t > 0 => format!("local: {} of {t} partitions", j.done),
                    (JobKind::RebuildIndex(_), t) if t > 0 || j.done > 0 => {
                        format!("local: {} of {} rows", j.done, t.max(j.done))
                    }
                    _ => "local".to_string(),
                };
                let task_code = if code == "E_JOB_SUBMITTED" { "" } else { code };
                let mut rows = vec![
                    [job_columns(&j).as_slice(), &[Value::String(code.into())]].concat(),
                    vec![
                        Value::Int(0),
                        Value::str(progress),
                        Value::str(j.status.name()),
                        job_time(j.start_secs),
                        job_time(j.stop_secs),
                        Value::str(task_code),
                    ],
                ];
                let count = |s: JobStatus| i32::from(j.status == s);
                rows.push(vec![
                    Value::String("Total:1".into()),
                    Value::str(format!("Succeeded:{}", count(JobStatus::Finished))),
                    Value::str(format!("Failed:{}", count(JobStatus::Failed))),
                    Value::str(format!("In Progress:{}", count(JobStatus::Running))),
                    Value::str(String::new()),
                    Value::str(j.error.clone().unwrap_or_default()),
                ]);
                Ok(DataSet::new(
                    ["Job Id(TaskId)", "Command(Dest)", "Status", "Start Time", "Stop Time", "Error Code"]
                        .iter()
                        .map(|c| c.to_string())
                        .collect(),
                    rows,
                ))
            }
            Statement::StopJob(id) => {
                self.storage.stop_job(space, *id)?;
                Ok(DataSet::new(vec!["Result".into()], vec![vec![Value::String("Job stopped".into())]]))
            }
            Statement::RecoverJob(ids) => {
                let n = self.storage.recover_jobs(space, ids)?;
                Ok(DataSet::new(vec!["Recovered job num".into()], vec![vec![Value::Int(n as i64)]]))
            }
            Statement::ShowStats => {
                let stats = self.storage.stats(space)?;
                let mut tags: Vec<(String, i64)> = Vec::new();
                for s in self.catalog.schemas(space, SchemaKind::Tag) {
                    tags.push((
                        s.name.clone(),
                        stats.tags.iter().find(|(id, _)| *id == s.id).map(|(_, n)| *n).unwrap_or(0),
                    ));
                }
                let mut edges: Vec<(String, i64)> = Vec::new();
                for s in self.catalog.schemas(space, SchemaKind::Edge) {
                    edges.push((
                        s.name.clone(),
                        stats.edges.iter().find(|(id, _)| *id == s.id).map(|(_, n)| *n).unwrap_or(0),
                    ));
                }
                tags.sort();
                edges.sort();
                let mut rows: Vec<Vec<Value>> = Vec::new();
                for (n, c) in tags {
                    rows.push(vec![Value::str("Tag"), Value::str(n), Value::Int(c)]);
                }
                for (n, c) in edges {
                    rows.push(vec![Value::str("Edge"), Value::str(n), Value::Int(c)]);
                }
                rows.push(vec![
                    Value::String("Space".into()),
                    Value::String("vertices".into()),
                    Value::Int(stats.vertices),
                ]);
                rows.push(vec![
                    Value::String("Space".into()),
                    Value::String("edges".into()),
                    Value::Int(stats.total_edges),
                ]);
                Ok(DataSet::new(vec!["Type".into(), "Name".into(), "Count".into()], rows))
            }
            _ => unreachable!("not an admin statement: {stmt:?}"),
        }
    }
}
