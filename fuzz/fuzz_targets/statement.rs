//! Any text as a request to the query engine, over a small graph (string VIDs, two tags, an edge type with a
//! rank, an index, a dangling edge): it must be answered or refused, never panic or hang. Each input gets a fresh
//! in-memory database, so inputs do not see each other's writes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use quiver_common::budget::Limits;
use quiver_kv::MemEngine;
use quiver_meta::MetaStore;
use quiver_query::{Params, QueryEngine, Session};
use quiver_storage::EmbeddedStorage;
use std::sync::Arc;
use std::time::Duration;

const SETUP: &str = r#"
CREATE SPACE g(partition_num=3, vid_type=FIXED_STRING(16));
USE g;
CREATE TAG person(name string, age int DEFAULT 20, born date NULL);
CREATE TAG team(name string NOT NULL);
CREATE EDGE like(likeness double, since timestamp NULL);
CREATE EDGE serve(start_year int, end_year int);
CREATE TAG INDEX person_age ON person(age);
INSERT VERTEX person(name, age, born) VALUES "a":("Ann", 30, date("1990-01-02")), "b":("Bob", 25, NULL), "c":("Cy", 41, NULL);
INSERT VERTEX team(name) VALUES "t":("Team");
INSERT EDGE like(likeness, since) VALUES "a"->"b":(90.5, 0), "b"->"c":(70.0, NULL), "c"->"a":(80.0, 1), "a"->"b"@7:(1.0, 2), "c"->"ghost":(5.0, 3);
INSERT EDGE serve(start_year, end_year) VALUES "a"->"t":(2000, 2010), "b"->"t":(2005, 2020)
"#;

fuzz_target!(|data: &[u8]| {
    let Ok(stmt) = std::str::from_utf8(data) else { return };
    let kv = Arc::new(MemEngine::new());
    let meta = Arc::new(MetaStore::open(kv.clone()).unwrap());
    let storage = Arc::new(EmbeddedStorage::new(kv));
    storage.set_catalog(meta.clone());
    let mut engine = QueryEngine::new(meta, storage);
    engine.limits = Limits { timeout: Duration::from_secs(1), memory_bytes: 64 << 20 };
    let mut session = Session::default();
    engine.execute(&mut session, SETUP, &Params::new()).expect("the setup runs");
    let _ = engine.execute(&mut session, stmt, &Params::new());
});
