//! `quiver bench --compare OLD/results.json`: every row of a run beside the same row of an earlier one, with the
//! ratio, and the rows more than [`SLOWER_FLAG`] slower flagged. Rows are matched by name (a load by system and
//! dataset, a one-client latency by system, dataset and workload, a ladder point by workload, path and clients);
//! a row in only one of the runs is listed as such. The files are read as plain JSON, so a run from before a field
//! was added still compares on the fields both have.
//!
//! The peers' rows say how the machine itself moved between the runs (the peers' code did not change): their median
//! ratio is printed first, so a Quiver row that moved with it is not taken for a regression.

use serde_json::Value as J;
use std::collections::BTreeMap;
use std::path::Path;

/// A row this much slower than before (in time per request, or in rate) is flagged.
pub const SLOWER_FLAG: f64 = 0.20;

/// One measured figure (kept under a key that says what it measures).
struct Row {
    value: f64,
    /// Whether a larger value is better (a rate) or worse (a time).
    higher_is_better: bool,
    /// A Quiver figure (a peer's tells of the machine).
    quiver: bool,
}

fn rows(results: &J) -> BTreeMap<String, Row> {
    let mut out = BTreeMap::new();
    let s = |j: &J, k: &str| j[k].as_str().unwrap_or("?").to_string();
    let mut add = |key: String, value: Option<f64>, higher_is_better: bool, quiver: bool| {
        if let Some(value) = value.filter(|v| v.is_finite() && *v > 0.0) {
            out.insert(key, Row { value, higher_is_better, quiver });
        }
    };
    for l in results["loads"].as_array().into_iter().flatten() {
        let (system, dataset) = (s(l, "system"), s(l, "dataset"));
        let quiver = system == "quiver";
        add(format!("load {dataset} {system}: edges/s"), l["edges_per_s"].as_f64(), true, quiver);
        add(format!("load {dataset} {system}: restart s"), l["restart_s"].as_f64(), false, quiver);
    }
    for r in results["single"].as_array().into_iter().flatten() {
        let (system, dataset, workload) = (s(r, "system"), s(r, "dataset"), s(r, "workload"));
        let key = format!("single {dataset} {workload} {system}: mean ms");
        add(key, r["latency_ms"]["mean"].as_f64(), false, system == "quiver");
    }
    for p in results["ladder"].as_array().into_iter().flatten() {
        let (workload, path) = (s(p, "workload"), s(p, "path"));
        let clients = p["clients"].as_u64().unwrap_or(0);
        let rows_per_s = p["rows_per_s"].as_f64().filter(|r| *r > 0.0);
        let (what, value) = match rows_per_s {
            Some(r) => ("rows/s", Some(r)),
            None => ("requests/s", p["qps"].as_f64()),
        };
        add(format!("ladder {workload} {path} {clients:>2} clients: {what}"), value, true, true);
    }
    out
}

/// How much better (above 1) or worse (below 1) `new` is than `old`.
fn speedup(old: &Row, new: &Row) -> f64 {
    if new.higher_is_better {
        new.value / old.value
    } else {
        old.value / new.value
    }
}

fn read(path: &Path) -> Result<J, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{} is not a results file: {e}", path.display()))
}

/// The comparison of the run in `new` against the one in `old`, as Markdown, and how many rows it flags.
pub fn compare(old: &Path, new: &Path) -> Result<(String, usize), String> {
    let (old_j, new_j) = (read(old)?, read(new)?);
    let (before, after) = (rows(&old_j), rows(&new_j));
    let mut peer_ratios: Vec<f64> =
        after.iter().filter(|(_, r)| !r.quiver).filter_map(|(k, n)| before.get(k).map(|o| speedup(o, n))).collect();
    peer_ratios.sort_by(f64::total_cmp);
    let mut out = format!("# {} against {}\n\n", new.display(), old.display());
    let cpu = |j: &J| j["machine"]["cpu"].as_str().unwrap_or("?").to_string();
    out.push_str(&format!("Machines: {} then {}.", cpu(&old_j), cpu(&new_j)));
    match peer_ratios.get(peer_ratios.len() / 2) {
        Some(m) => out.push_str(&format!(
            " The peers' rows (their code unchanged) moved by a median of {m:.2}x: the machine's own drift.\n\n"
        )),
        None => out.push_str(" No peer rows in both runs: the machine's drift is not known.\n\n"),
    }
    out.push_str(&format!(
        "A ratio is how many times faster the new run is (below 1: slower); **flagged** rows are more than {:.0}% \
         slower.\n\n",
        SLOWER_FLAG * 100.0
    ));
    out.push_str("| row | before | after | ratio | |\n|---|---:|---:|---:|---|\n");
    let mut flagged = 0;
    for (key, n) in &after {
        match before.get(key) {
            Some(o) => {
                let ratio = speedup(o, n);
                let flag = ratio < 1.0 / (1.0 + SLOWER_FLAG);
                flagged += usize::from(flag);
                let mark = if flag { "**flagged**" } else { "" };
                out.push_str(&format!("| {key} | {} | {} | {ratio:.2} | {mark} |\n", num(o.value), num(n.value)));
            }
            None => out.push_str(&format!("| {key} | | {} | | new |\n", num(n.value))),
        }
    }
    for key in before.keys().filter(|k| !after.contains_key(*k)) {
        out.push_str(&format!("| {key} | {} | | | gone |\n", num(before[key].value)));
    }
    out.push_str(&format!("\n{flagged} row(s) flagged.\n"));
    Ok((out, flagged))
}

fn num(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, j: J) -> std::path::PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, j.to_string()).unwrap();
        p
    }

    #[test]
    fn rows_are_matched_by_name_and_the_slower_ones_flagged() {
        let dir = tempfile::tempdir().unwrap();
        let run = |go_qps: f64, insert_rows: f64, mean: f64, peer_mean: f64| {
            serde_json::json!({
                "machine": {"cpu": "X"},
                "loads": [{"system": "quiver", "dataset": "d", "edges_per_s": 100.0, "restart_s": 1.0}],
                "single": [
                    {"system": "quiver", "dataset": "d", "workload": "go1", "latency_ms": {"mean": mean}},
                    {"system": "kuzu", "dataset": "d", "workload": "go1", "latency_ms": {"mean": peer_mean}}
                ],
                "ladder": [
                    {"workload": "go1", "path": "wire", "clients": 1, "qps": go_qps, "rows_per_s": 0.0},
                    {"workload": "insert-batch-1000", "path": "wire", "clients": 1, "qps": 1.0,
                     "rows_per_s": insert_rows}
                ]
            })
        };
        let old = write(dir.path(), "old.json", run(10_000.0, 100_000.0, 1.0, 2.0));
        // go1 over the wire 25% fewer requests/s (flagged), batched inserts 10% fewer rows/s (not), the one-client
        // latency 30% longer (flagged), the peer 10% faster.
        let mut new_j = run(7_500.0, 90_000.0, 1.3, 1.8);
        new_j["ladder"].as_array_mut().unwrap().push(serde_json::json!(
            {"workload": "go2", "path": "wire", "clients": 4, "qps": 5.0, "rows_per_s": 0.0}));
        let new = write(dir.path(), "new.json", new_j);
        let (text, flagged) = compare(&old, &new).unwrap();
        assert_eq!(flagged, 2, "{text}");
        assert!(
            text.contains("| ladder go1 wire  1 clients: requests/s | 10000 | 7500 | 0.75 | **flagged** |"),
            "{text}"
        );
        assert!(
            text.contains("| ladder insert-batch-1000 wire  1 clients: rows/s | 100000 | 90000 | 0.90 |  |"),
            "{text}"
        );
        assert!(text.contains("| single d go1 quiver: mean ms | 1.000 | 1.300 | 0.77 | **flagged** |"), "{text}");
        assert!(text.contains("moved by a median of 1.11x"), "{text}");
        assert!(text.contains("| ladder go2 wire  4 clients: requests/s | | 5.000 | | new |"), "{text}");
        assert!(compare(&old, &dir.path().join("missing.json")).unwrap_err().starts_with("cannot read"));
    }
}
