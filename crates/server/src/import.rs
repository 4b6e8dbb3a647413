//! `quiver import`: the bulk loader. Reads CSV files as a mapping (`config.yaml`, see [`crate::mapping`]) says,
//! builds rows with the same type rules and defaults as INSERT, and hands them to storage's bulk path
//! (`quiver_storage::bulk`) in large sorted runs, which RocksDB ingests as table files. One thread parses and
//! encodes while another sorts and ingests the previous run.
//!
//! A bad row (a value of the wrong type, a missing column, a VID the space cannot hold) is reported with its file
//! and line and skipped; past `max_bad_rows` the import stops with an error. Either way the load is finished
//! (counters recounted, indexes rebuilt), so what was written is consistent, and running the same import again is
//! safe: it writes the same keys.

use crate::mapping::{read_config, ColType, Config, FileCfg, PropCfg, VidCfg};
use crate::progress::Progress;
use crate::Database;
use quiver_api::{EdgeKeyVal, SchemaKind, SchemaRef, SpaceDesc};
use quiver_common::limits::IMPORT_BAD_ROWS_SHOWN_MAX;
use quiver_common::{QError, QResult, Value};
use quiver_query::Params;
use quiver_storage::bulk::BulkRun;
use quiver_storage::codec;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Instant;

pub struct ImportOptions {
    /// The import stops once more rows than this are bad.
    pub max_bad_rows: u64,
    /// Key-value pairs per sorted run (each edge is two, a vertex one plus one per tag).
    pub run_pairs: usize,
    /// Draws progress bars on stderr.
    pub progress: bool,
}

impl Default for ImportOptions {
    fn default() -> Self {
        ImportOptions { max_bad_rows: 100, run_pairs: 4 << 20, progress: false }
    }
}

/// What an import did.
#[derive(Debug, Default, Clone, serde::Serialize)]
pub struct ImportReport {
    pub space: String,
    pub vertices: u64,
    pub edges: u64,
    /// Key-value pairs ingested (after removing repeated keys within a run).
    pub pairs: u64,
    pub bad_rows: u64,
    /// The first bad rows, as `file:line: reason`.
    pub bad_examples: Vec<String>,
    pub seconds: f64,
}

fn bad(msg: impl std::fmt::Display) -> QError {
    QError::execution(format!("import error: {msg}"))
}

struct VidCol {
    index: usize,
    ty: ColType,
    hash: bool,
}

impl VidCol {
    fn new(cfg: &VidCfg) -> QResult<VidCol> {
        Ok(VidCol { index: cfg.index, ty: ColType::parse(&cfg.ty)?, hash: cfg.hashed()? })
    }

    fn value(&self, space: &SpaceDesc, rec: &csv::StringRecord) -> Result<Value, String> {
        let raw = column(rec, self.index)?;
        let vid = if self.hash {
            Value::Int(quiver_common::murmur::nebula_hash(raw.as_bytes()))
        } else {
            self.ty.value(raw)?
        };
        if !space.vid_type_matches(&vid) {
            return Err(format!("VID `{raw}' is not of the space's VID type {}", space.vid_value_type()));
        }
        space.check_vid_len(&vid).map_err(|e| format!("VID `{raw}': {}", e.message))?;
        Ok(vid)
    }
}

/// Properties of one tag or edge type from a file's columns.
struct Props {
    schema: SchemaRef,
    names: Vec<String>,
    cols: Vec<(usize, ColType)>,
}

impl Props {
    fn new(schema: SchemaRef, props: &[PropCfg]) -> QResult<Props> {
        for p in props {
            if schema.latest().prop_index(&p.name).is_none() {
                return Err(bad(format!("`{}' has no property `{}'", schema.name, p.name)));
            }
        }
        Ok(Props {
            names: props.iter().map(|p| p.name.clone()).collect(),
            cols: props.iter().map(|p| Ok((p.index, ColType::parse(&p.ty)?))).collect::<QResult<_>>()?,
            schema,
        })
    }

    /// The encoded row: the file's values, then defaults, checked as INSERT checks them.
    fn row(&self, rec: &csv::StringRecord, params: &Params) -> Result<Vec<u8>, String> {
        let values = self.cols.iter().map(|(i, ty)| ty.value(column(rec, *i)?)).collect::<Result<Vec<_>, _>>()?;
        let row = quiver_query::build_row(&self.schema, &self.names, &values, params).map_err(|e| e.message)?;
        Ok(codec::encode(self.schema.latest(), &row))
    }
}

enum FilePlan {
    Vertex { vid: VidCol, tags: Vec<Props> },
    Edge { props: Props, src: VidCol, dst: VidCol, rank: Option<usize> },
}

fn column(rec: &csv::StringRecord, i: usize) -> Result<&str, String> {
    rec.get(i).ok_or_else(|| format!("no column {i} (the line has {})", rec.len()))
}

fn plan_file(db: &Database, space: &SpaceDesc, file: &FileCfg) -> QResult<FilePlan> {
    let catalog = &db.engine.catalog;
    match (&file.vertex, &file.edge) {
        (Some(v), None) => Ok(FilePlan::Vertex {
            vid: VidCol::new(&v.vid)?,
            tags: v
                .tags
                .iter()
                .map(|t| Props::new(catalog.schema(space, SchemaKind::Tag, &t.name)?, &t.props))
                .collect::<QResult<_>>()?,
        }),
        (None, Some(e)) => Ok(FilePlan::Edge {
            props: Props::new(catalog.schema(space, SchemaKind::Edge, &e.name)?, &e.props)?,
            src: VidCol::new(&e.src)?,
            dst: VidCol::new(&e.dst)?,
            rank: e.rank.as_ref().map(|r| r.index),
        }),
        _ => Err(bad(format!("{}: a file maps either a vertex or an edge", file.path))),
    }
}

/// Adds one CSV line to `run`.
fn add_row(
    plan: &FilePlan,
    space: &SpaceDesc,
    rec: &csv::StringRecord,
    params: &Params,
    run: &mut BulkRun,
) -> Result<(), String> {
    match plan {
        FilePlan::Vertex { vid, tags } => {
            let vid = vid.value(space, rec)?;
            let rows =
                tags.iter().map(|t| Ok((t.schema.id, t.row(rec, params)?))).collect::<Result<Vec<_>, String>>()?;
            run.vertex(space, &vid, rows);
        }
        FilePlan::Edge { props, src, dst, rank } => {
            let src = src.value(space, rec)?;
            let dst = dst.value(space, rec)?;
            let rank = match rank {
                None => 0,
                Some(i) => {
                    let raw = column(rec, *i)?;
                    raw.trim().parse().map_err(|_| format!("rank `{raw}' is not an int"))?
                }
            };
            let row = props.row(rec, params)?;
            run.edge(space, &EdgeKeyVal { src, edge_type: props.schema.id, rank, dst }, row);
        }
    }
    Ok(())
}

/// Imports the files a mapping names (paths relative to the mapping's folder), creating the space and schema if
/// needed.
pub fn import(db: &Database, config: &Path, opts: &ImportOptions) -> QResult<ImportReport> {
    let started = Instant::now();
    let cfg = read_config(config)?;
    let dir = config.parent().map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("."));
    cfg.create_schema(&db.engine)?;
    let space = db.engine.catalog.space(&cfg.space.name)?;
    let plans = cfg.files.iter().map(|f| plan_file(db, &space, f)).collect::<QResult<Vec<_>>>()?;
    let storage = db.local_storage()?.clone();
    storage.bulk_begin(&space)?;
    let mut report = ImportReport { space: cfg.space.name.clone(), ..ImportReport::default() };
    let (tx, rx) = mpsc::sync_channel::<BulkRun>(1);
    let loaded = std::thread::scope(|s| {
        let ingester = s.spawn(|| -> QResult<u64> {
            let mut pairs = 0;
            let mut busy = std::time::Duration::ZERO;
            for run in rx {
                let t = Instant::now();
                pairs += storage.bulk_ingest(&space, run)? as u64;
                busy += t.elapsed();
            }
            log::debug!("import: sorting and ingesting took {:.2} s", busy.as_secs_f64());
            Ok(pairs)
        });
        let read = read_files(&cfg, &dir, &plans, &space, opts, tx, &mut report);
        let ingested = ingester.join().map_err(|_| bad("the ingest thread panicked"))?;
        // An ingest error is the cause when both failed (the reader only sees the channel close).
        report.pairs = ingested?;
        read
    });
    log::debug!("import: rows read and ingested in {:.2} s", started.elapsed().as_secs_f64());
    // Finished even after an error, so what was written is counted and indexed.
    let finished = storage.bulk_finish(&space);
    loaded?;
    finished?;
    report.seconds = started.elapsed().as_secs_f64();
    Ok(report)
}

fn read_files(
    cfg: &Config,
    dir: &Path,
    plans: &[FilePlan],
    space: &SpaceDesc,
    opts: &ImportOptions,
    tx: mpsc::SyncSender<BulkRun>,
    report: &mut ImportReport,
) -> QResult<()> {
    let params = Params::new();
    let mut run = BulkRun::default();
    let send = |run: &mut BulkRun, report: &mut ImportReport| -> QResult<()> {
        let full = std::mem::take(run);
        report.vertices += full.vertices;
        report.edges += full.edges;
        tx.send(full).map_err(|_| bad("the ingest thread stopped"))
    };
    for (file, plan) in cfg.files.iter().zip(plans) {
        let path = dir.join(&file.path);
        let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        let mut rdr = file.reader(&path)?;
        let mut bar = Progress::new(format!("import {}", file.path), "bytes", size, !opts.progress);
        let mut rec = csv::StringRecord::new();
        loop {
            match rdr.read_record(&mut rec) {
                Ok(false) => break,
                Ok(true) => {
                    if let Err(reason) = add_row(plan, space, &rec, &params, &mut run) {
                        let line = rec.position().map_or(0, |p| p.line());
                        note_bad(report, opts, format!("{}:{line}: {reason}", file.path))?;
                    }
                }
                Err(e) => {
                    let line = e.position().map_or(0, |p| p.line());
                    note_bad(report, opts, format!("{}:{line}: {e}", file.path))?
                }
            }
            if run.len() >= opts.run_pairs {
                send(&mut run, report)?;
                bar.set(rdr.position().byte());
            }
        }
        bar.set(size);
        bar.finish();
    }
    if !run.is_empty() {
        send(&mut run, report)?;
    }
    Ok(())
}

fn note_bad(report: &mut ImportReport, opts: &ImportOptions, what: String) -> QResult<()> {
    report.bad_rows += 1;
    if report.bad_examples.len() < IMPORT_BAD_ROWS_SHOWN_MAX {
        report.bad_examples.push(what.clone());
    }
    if report.bad_rows > opts.max_bad_rows {
        return Err(bad(format!("more than {} bad rows; the last: {what}", opts.max_bad_rows)));
    }
    Ok(())
}
