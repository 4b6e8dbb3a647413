//! Loads a dataset described by a NebulaGraph-test-style `config.yaml` (space options, schema as nGQL, and how each
//! CSV column maps to a VID, a tag or edge property, or a rank) by running the schema and batched INSERTs.

use crate::mapping::{read_config, ColType, Config, VidCfg};
use crate::Database;
use quiver_common::limits::LOADER_ROWS_PER_INSERT_MAX;
use quiver_common::value::write_quoted;
use quiver_common::{QError, QResult};
use quiver_query::Params;
use quiver_query::QueryEngine;
use std::path::Path;

/// What a load did.
#[derive(Debug, Default)]
pub struct LoadReport {
    pub space: String,
    pub vertices: usize,
    pub edges: usize,
}

fn bad(msg: impl std::fmt::Display) -> QError {
    QError::execution(format!("load error: {msg}"))
}

fn field<'a>(rec: &'a csv::StringRecord, i: usize, file: &str, line: usize) -> QResult<&'a str> {
    rec.get(i).ok_or_else(|| bad(format!("{file}:{line}: no column {i}")))
}

fn literal(ty: &str, raw: &str) -> QResult<String> {
    let col = ColType::parse(ty)?;
    if raw == "__NULL__" {
        return Ok("NULL".into());
    }
    let mut out = String::new();
    match col {
        ColType::String => write_quoted(&mut out, raw).expect("string write"),
        ColType::Int | ColType::Double => {
            col.value(raw).map_err(bad)?;
            out.push_str(raw.trim());
        }
        ColType::Bool => out.push_str(&raw.trim().to_lowercase()),
        ColType::Date | ColType::Time | ColType::DateTime | ColType::Timestamp => {
            out.push_str(ty);
            out.push('(');
            write_quoted(&mut out, raw).expect("string write");
            out.push(')');
        }
    }
    Ok(out)
}

fn vid_literal(cfg: &VidCfg, raw: &str) -> QResult<String> {
    let lit = literal(&cfg.ty, raw)?;
    Ok(if cfg.hashed()? { format!("hash({lit})") } else { lit })
}

/// Loads the dataset in `dir` unless its space already exists. Returns `None` if it existed.
pub fn load_if_absent(db: &Database, dir: &Path) -> QResult<Option<LoadReport>> {
    let cfg = read_config(&dir.join("config.yaml"))?;
    if db.engine.catalog.space(&cfg.space.name).is_ok() {
        return Ok(None);
    }
    load_config(&db.engine, dir, &cfg).map(Some)
}

/// [`load_if_absent`] in a cluster: the space gets `partitions` partitions of `replicas` replicas each, whatever
/// the config says (the test datasets have one partition of one replica).
pub fn load_placed_if_absent(db: &Database, dir: &Path, partitions: u32, replicas: u32) -> QResult<Option<LoadReport>> {
    let mut cfg = read_config(&dir.join("config.yaml"))?;
    if db.engine.catalog.space(&cfg.space.name).is_ok() {
        return Ok(None);
    }
    cfg.space.partition_num = partitions;
    cfg.space.replica_factor = replicas;
    load_config(&db.engine, dir, &cfg).map(Some)
}

/// Loads the dataset in `dir` into a space of the config's name, creating it.
pub fn load(db: &Database, dir: &Path) -> QResult<LoadReport> {
    load_into(&db.engine, dir)
}

/// [`load`] through any query engine (one over a cluster's storage, in the tests).
pub fn load_into(engine: &QueryEngine, dir: &Path) -> QResult<LoadReport> {
    let cfg = read_config(&dir.join("config.yaml"))?;
    load_config(engine, dir, &cfg)
}

fn load_config(db: &QueryEngine, dir: &Path, cfg: &Config) -> QResult<LoadReport> {
    let params = Params::new();
    let mut session = cfg.create_schema(db)?;
    let mut report = LoadReport { space: cfg.space.name.clone(), ..LoadReport::default() };
    for file in &cfg.files {
        let path = dir.join(&file.path);
        let name = file.path.clone();
        let mut rdr = file.reader(&path)?;
        let mut rows = Vec::new();
        let head = if let Some(v) = &file.vertex {
            let tags: Vec<String> = v
                .tags
                .iter()
                .map(|t| {
                    format!(
                        "`{}`({})",
                        t.name,
                        t.props.iter().map(|p| format!("`{}`", p.name)).collect::<Vec<_>>().join(",")
                    )
                })
                .collect();
            format!("INSERT VERTEX {} VALUES ", tags.join(","))
        } else if let Some(e) = &file.edge {
            format!(
                "INSERT EDGE `{}`({}) VALUES ",
                e.name,
                e.props.iter().map(|p| format!("`{}`", p.name)).collect::<Vec<_>>().join(",")
            )
        } else {
            return Err(bad(format!("{name}: neither vertex nor edge")));
        };
        for (i, rec) in rdr.records().enumerate() {
            let line = i + 1 + file.with_header as usize;
            let rec = rec.map_err(|e| bad(format!("{name}:{line}: {e}")))?;
            let row = if let Some(v) = &file.vertex {
                let vid = vid_literal(&v.vid, field(&rec, v.vid.index, &name, line)?)?;
                let mut vals = Vec::new();
                for t in &v.tags {
                    for p in &t.props {
                        vals.push(literal(&p.ty, field(&rec, p.index, &name, line)?)?);
                    }
                }
                report.vertices += 1;
                format!("{vid}:({})", vals.join(","))
            } else {
                let e = file.edge.as_ref().expect("checked above");
                let src = vid_literal(&e.src, field(&rec, e.src.index, &name, line)?)?;
                let dst = vid_literal(&e.dst, field(&rec, e.dst.index, &name, line)?)?;
                let rank = match &e.rank {
                    Some(r) => format!("@{}", literal("int", field(&rec, r.index, &name, line)?)?),
                    None => String::new(),
                };
                let vals = e
                    .props
                    .iter()
                    .map(|p| literal(&p.ty, field(&rec, p.index, &name, line)?))
                    .collect::<QResult<Vec<_>>>()?;
                report.edges += 1;
                format!("{src}->{dst}{rank}:({})", vals.join(","))
            };
            rows.push(row);
            if rows.len() == LOADER_ROWS_PER_INSERT_MAX {
                db.execute(&mut session, &format!("{head}{}", rows.join(",")), &params)?;
                rows.clear();
            }
        }
        if !rows.is_empty() {
            db.execute(&mut session, &format!("{head}{}", rows.join(",")), &params)?;
        }
    }
    Ok(report)
}
