//! The data-driven query-file runner (sqllogictest style).
//!
//! A file is a list of records separated by blank lines:
//!
//! ```text
//! # a comment
//! dataset nba                      loads a NebulaGraph test dataset into this file's database
//!
//! statement ok                     the statement must succeed
//! CREATE SPACE s(vid_type=INT64)
//!
//! statement error -1009            the statement must fail with this code and, after ----, this exact message
//! YIELD 1/0
//! ----
//! SemanticError: Divide by 0
//!
//! query [rowsort]                  the rows after ---- must match: header, then one line per row, cells joined
//! FETCH PROP ON player "Tim Duncan" YIELD player.age     by " | ", values in NebulaGraph's TCK notation
//! ----
//! player.age
//! 42
//!
//! plan                             EXPLAIN's operator tree, root first, indented two spaces per level
//! GO FROM "Tim Duncan" OVER like YIELD like._dst
//! ----
//! Go {from: "Tim Duncan"; over: like; edge props: none; columns: like._dst}
//!
//! rules off push_filter_into_go    switches optimizer rules off for the records that follow (`rules on`: all on)
//!
//! wait jobs                        waits (up to 60 s) until no job of the current space is queued or running
//! ```
//! Every file runs against a fresh in-memory database with one session, so `USE` carries from record to record.

use quiver_query::{Params, QueryEngine, Session};
use quiver_server::Database;
use std::path::{Path, PathBuf};

pub fn datasets_dir() -> PathBuf {
    match std::env::var_os("QUIVER_DATASETS") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/nebula-tck-datasets"),
    }
}

fn render_row(row: &[quiver_common::Value]) -> String {
    row.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(" | ")
}

/// Polls `SHOW JOBS` until every job of the session's space has finished, failed or stopped.
pub fn wait_jobs(db: &Database, session: &mut Session) -> Result<(), String> {
    wait_jobs_on(&db.engine, session)
}

fn wait_jobs_on(db: &QueryEngine, session: &mut Session) -> Result<(), String> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let ds =
            db.execute(session, "SHOW JOBS", &Params::new()).map_err(|e| format!("SHOW JOBS failed: {}", e.message))?;
        let busy =
            ds.rows().any(|r| matches!(&r[2], quiver_common::Value::String(s) if &**s == "QUEUE" || &**s == "RUNNING"));
        if !busy {
            return Ok(());
        }
        if std::time::Instant::now() > deadline {
            return Err("jobs still running after 60 s".into());
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Runs one query file; returns the list of failures (empty on success).
pub fn run_file(path: &Path) -> Vec<String> {
    run_file_on(path, &mut Database::in_memory().engine)
}

/// [`run_file`] on a query engine over any storage (a cluster's, in `cluster_queries`).
pub fn run_file_on(path: &Path, db: &mut QueryEngine) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut session = Session { user: "root".into(), ..Session::default() };
    let params = Params::new();
    let mut failures = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim_end();
        let lineno = i + 1;
        if line.is_empty() || line.starts_with('#') {
            i += 1;
            continue;
        }
        let here = format!("{}:{lineno}", path.display());
        if let Some(name) = line.strip_prefix("dataset ") {
            if let Err(e) = quiver_server::loader::load_into(db, &datasets_dir().join(name.trim())) {
                failures.push(format!("{here}: loading dataset {name}: {e}"));
                return failures;
            }
            i += 1;
            continue;
        }
        if let Some(rules) = line.strip_prefix("rules off ") {
            session.disabled_rules = rules.split(',').map(|r| r.trim().to_string()).collect();
            i += 1;
            continue;
        }
        if line == "wait jobs" {
            if let Err(e) = wait_jobs_on(db, &mut session) {
                failures.push(format!("{here}: {e}"));
                return failures;
            }
            i += 1;
            continue;
        }
        // `authorize on|off`: whether users' roles decide what runs (`--enable-authorize`).
        if let Some(on) = line.strip_prefix("authorize ") {
            db.authorize = on.trim() == "on";
            i += 1;
            continue;
        }
        // `as USER`: the following statements run as USER, in the same session (its space stays).
        if let Some(user) = line.strip_prefix("as ") {
            session.user = user.trim().to_string();
            i += 1;
            continue;
        }
        if line == "rules on" {
            session.disabled_rules.clear();
            i += 1;
            continue;
        }
        let header = line.to_string();
        i += 1;
        let mut stmt = Vec::new();
        while i < lines.len() && !lines[i].trim().is_empty() && lines[i].trim_end() != "----" {
            stmt.push(lines[i]);
            i += 1;
        }
        let mut expected = Vec::new();
        if i < lines.len() && lines[i].trim_end() == "----" {
            i += 1;
            while i < lines.len() && !lines[i].trim().is_empty() {
                expected.push(lines[i].trim_end().to_string());
                i += 1;
            }
        }
        let stmt = stmt.join("\n");
        if header == "plan" {
            match db.execute(&mut session, &format!("EXPLAIN {stmt}"), &params) {
                Err(e) => {
                    failures.push(format!("{here}: EXPLAIN `{stmt}` failed: [{}] {}", e.code.as_i32(), e.message))
                }
                Ok(ds) => {
                    let got = ds.plan.map(|p| p.to_tree()).unwrap_or_default();
                    if got != expected {
                        failures.push(format!(
                            "{here}: plan of `{stmt}`\n   got:\n{}\nwanted:\n{}",
                            got.join("\n"),
                            expected.join("\n")
                        ));
                    }
                }
            }
            continue;
        }
        let result = db.execute(&mut session, &stmt, &params);
        let words: Vec<&str> = header.split_whitespace().collect();
        match words.as_slice() {
            ["statement", "ok"] => {
                if let Err(e) = result {
                    failures.push(format!("{here}: `{stmt}` failed: [{}] {}", e.code.as_i32(), e.message));
                }
            }
            ["statement", "error", code] => match result {
                Ok(ds) => failures.push(format!(
                    "{here}: `{stmt}` succeeded with {:?}, expected error {code}",
                    ds.rows().collect::<Vec<_>>()
                )),
                Err(e) => {
                    if e.code.as_i32().to_string() != *code {
                        failures.push(format!(
                            "{here}: `{stmt}` error code {} ({}), expected {code}",
                            e.code.as_i32(),
                            e.message
                        ));
                    }
                    if let Some(msg) = expected.first() {
                        if e.message != *msg {
                            failures
                                .push(format!("{here}: `{stmt}` error message\n   got: {}\nwanted: {msg}", e.message));
                        }
                    }
                }
            },
            ["query", rest @ ..] => match result {
                Err(e) => failures.push(format!("{here}: `{stmt}` failed: [{}] {}", e.code.as_i32(), e.message)),
                Ok(ds) => {
                    let mut got = vec![ds.columns().join(" | ")];
                    let mut rows: Vec<String> = ds.rows().map(|r| render_row(&r)).collect();
                    let mut want_rows: Vec<String> = expected.iter().skip(1).cloned().collect();
                    if rest.contains(&"rowsort") {
                        rows.sort();
                        want_rows.sort();
                    }
                    got.extend(rows);
                    let mut want = vec![expected.first().cloned().unwrap_or_default()];
                    want.extend(want_rows);
                    if got != want {
                        failures.push(format!(
                            "{here}: `{stmt}`\n   got:\n{}\nwanted:\n{}",
                            got.join("\n"),
                            want.join("\n")
                        ));
                    }
                }
            },
            _ => failures.push(format!("{here}: unknown record header `{header}`")),
        }
    }
    failures
}
