//! The dataset mapping of NebulaGraph's test suite and nebula-importer (`config.yaml`): the space's options, its
//! schema as nGQL, and for each CSV file which column is the VID, which columns are tag or edge properties, and
//! which are an edge's ends and rank. Read by the nGQL loader (`loader.rs`) and the bulk importer (`import.rs`).

use quiver_common::datetime::{Date, DateTime, Time};
use quiver_common::{QError, QResult, Value};
use quiver_query::{Params, Session};
use serde::Deserialize;
use std::path::Path;

#[derive(Deserialize)]
pub struct Config {
    pub space: SpaceCfg,
    pub schema: String,
    pub files: Vec<FileCfg>,
}

#[derive(Deserialize)]
pub struct SpaceCfg {
    pub name: String,
    #[serde(rename = "partitionNum")]
    pub partition_num: u32,
    #[serde(rename = "replicaFactor", alias = "ReplicaFactor")]
    pub replica_factor: u32,
    #[serde(rename = "vidType")]
    pub vid_type: String,
}

#[derive(Deserialize)]
pub struct FileCfg {
    pub path: String,
    #[serde(rename = "withHeader", default)]
    pub with_header: bool,
    /// The field separator, one character (`,` unless given; LDBC's files use `|`).
    #[serde(default)]
    pub delimiter: Option<String>,
    pub vertex: Option<VertexCfg>,
    pub edge: Option<EdgeCfg>,
}

#[derive(Deserialize)]
pub struct VidCfg {
    pub index: usize,
    #[serde(rename = "type")]
    pub ty: String,
    pub function: Option<String>,
}

#[derive(Deserialize)]
pub struct PropCfg {
    pub name: String,
    #[serde(rename = "type")]
    pub ty: String,
    pub index: usize,
}

#[derive(Deserialize)]
pub struct TagCfg {
    pub name: String,
    pub props: Vec<PropCfg>,
}

#[derive(Deserialize)]
pub struct VertexCfg {
    pub vid: VidCfg,
    pub tags: Vec<TagCfg>,
}

#[derive(Deserialize)]
pub struct RankCfg {
    pub index: usize,
}

#[derive(Deserialize)]
pub struct EdgeCfg {
    pub name: String,
    #[serde(rename = "srcVID")]
    pub src: VidCfg,
    #[serde(rename = "dstVID")]
    pub dst: VidCfg,
    pub rank: Option<RankCfg>,
    #[serde(default)]
    pub props: Vec<PropCfg>,
}

fn bad(msg: impl std::fmt::Display) -> QError {
    QError::execution(format!("load error: {msg}"))
}

/// Reads and parses a mapping file.
pub fn read_config(path: &Path) -> QResult<Config> {
    let text = std::fs::read_to_string(path).map_err(|e| bad(format!("{}: {e}", path.display())))?;
    serde_yaml::from_str(&text).map_err(|e| bad(format!("{}: {e}", path.display())))
}

impl Config {
    /// The space's VID type as nGQL writes it.
    pub fn vid_type(&self) -> String {
        match self.space.vid_type.to_lowercase().as_str() {
            "int" | "int64" => "INT64".to_string(),
            other => other.to_uppercase(),
        }
    }

    /// Creates the space (if absent) and runs the schema statements; a statement whose tag, edge type or index
    /// already exists is skipped, so a load can be run again. Returns a session using the space.
    pub fn create_schema(&self, db: &quiver_query::QueryEngine) -> QResult<Session> {
        let params = Params::new();
        // The loader is the administrator: root, whose GOD role may create spaces with authorization on.
        let mut session = Session { user: quiver_api::ROOT_USER.to_string(), ..Session::default() };
        db.execute(
            &mut session,
            &format!(
                "CREATE SPACE IF NOT EXISTS `{}`(partition_num={}, replica_factor={}, vid_type={}); USE `{}`",
                self.space.name,
                self.space.partition_num,
                self.space.replica_factor,
                self.vid_type(),
                self.space.name
            ),
            &params,
        )?;
        for stmt in self.schema.split(';').map(str::trim).filter(|s| !s.is_empty()) {
            match db.execute(&mut session, stmt, &params) {
                Err(e) if e.message.ends_with("Existed!") => {}
                r => {
                    r?;
                }
            }
        }
        Ok(session)
    }
}

/// A CSV column's type in the mapping: how its text becomes a value (the schema's type rules come after).
#[derive(Clone, Copy)]
pub enum ColType {
    String,
    Int,
    Double,
    Bool,
    Date,
    Time,
    DateTime,
    Timestamp,
}

impl ColType {
    pub fn parse(ty: &str) -> QResult<ColType> {
        Ok(match ty.to_lowercase().as_str() {
            "string" | "fixed_string" => ColType::String,
            "int" | "int64" | "int32" | "int16" | "int8" => ColType::Int,
            "double" | "float" => ColType::Double,
            "bool" => ColType::Bool,
            "date" => ColType::Date,
            "time" => ColType::Time,
            "datetime" => ColType::DateTime,
            "timestamp" => ColType::Timestamp,
            other => return Err(bad(format!("unsupported column type `{other}'"))),
        })
    }

    pub fn value(self, raw: &str) -> Result<Value, String> {
        if raw == "__NULL__" {
            return Ok(Value::NULL);
        }
        let t = raw.trim();
        let fail = |what: &str| format!("`{raw}' is not {what}");
        match self {
            ColType::String => Ok(Value::str(raw.to_string())),
            ColType::Int => t.parse().map(Value::Int).map_err(|_| fail("an int")),
            ColType::Double => t.parse().map(Value::Float).map_err(|_| fail("a number")),
            ColType::Bool => match t.to_lowercase().as_str() {
                "true" => Ok(Value::Bool(true)),
                "false" => Ok(Value::Bool(false)),
                _ => Err(fail("a bool")),
            },
            ColType::Date => Date::parse(t).map(Value::Date).ok_or_else(|| fail("a date")),
            ColType::Time => Time::parse(t).map(Value::Time).ok_or_else(|| fail("a time")),
            ColType::DateTime => DateTime::parse(t).map(Value::DateTime).ok_or_else(|| fail("a datetime")),
            // An integer is seconds since the epoch; other text is a datetime the schema's rules convert.
            ColType::Timestamp => Ok(t.parse().map(Value::Int).unwrap_or_else(|_| Value::str(t.to_string()))),
        }
    }
}

impl VidCfg {
    /// Whether the column's text is hashed into an INT64 VID (`function: hash`).
    pub fn hashed(&self) -> QResult<bool> {
        match self.function.as_deref() {
            None => Ok(false),
            Some("hash") => Ok(true),
            Some(f) => Err(bad(format!("unsupported VID function `{f}'"))),
        }
    }
}

impl FileCfg {
    /// A CSV reader for this file (at `path`) with its header and separator options.
    pub fn reader(&self, path: &Path) -> QResult<csv::Reader<std::fs::File>> {
        let delimiter = match self.delimiter.as_deref() {
            None => b',',
            Some(d) if d.len() == 1 => d.as_bytes()[0],
            Some(d) => return Err(bad(format!("{}: the delimiter must be one ASCII character, not `{d}'", self.path))),
        };
        csv::ReaderBuilder::new()
            .has_headers(self.with_header)
            .delimiter(delimiter)
            .flexible(true)
            .from_path(path)
            .map_err(|e| bad(format!("{}: {e}", path.display())))
    }
}
