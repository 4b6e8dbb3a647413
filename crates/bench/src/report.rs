//! Writes a run's `results.json`, `results.md` (the tables `bench/README.md` quotes) and, through
//! `bench/plot.py`, the PNG plots.

use crate::{Options, Results};
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::Path;

/// Today's date (UTC) as `yyyy-mm-dd`.
pub fn today() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs()) as i64;
    // Howard Hinnant's civil_from_days.
    let z = secs.div_euclid(86_400) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

fn ms(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}")
    } else if x >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    }
}

pub fn markdown(r: &Results) -> String {
    let mut s = String::new();
    let m = &r.machine;
    let _ = writeln!(s, "# Quiver benchmark, {} ({} mode)\n", r.date, r.mode);
    let _ = writeln!(
        s,
        "Machine: {} cores ({}), {:.0} GiB, {}. Clients: {}.\n",
        m.cores, m.cpu, m.memory_gib, m.os, m.client_cores
    );
    let _ = writeln!(s, "## Datasets\n\n| dataset | vertices | edges | start vertices |\n|---|---:|---:|---:|");
    for d in &r.datasets {
        let _ = writeln!(s, "| {} | {} | {} | {} |", d.name, d.vertices, d.edges, d.starts);
    }
    let _ = writeln!(s, "\n## Load\n\n| dataset | system | edges | load s | edges/s | disk B/edge | RSS MiB | restart s |\n|---|---|---:|---:|---:|---:|---:|---:|");
    for l in &r.loads {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {:.2} | {:.0} | {:.1} | {:.0} | {:.2} |",
            l.dataset,
            l.system,
            l.edges,
            l.seconds,
            l.edges_per_s,
            l.disk_bytes as f64 / l.edges.max(1) as f64,
            l.rss_bytes as f64 / (1 << 20) as f64,
            l.restart_s
        );
    }
    let systems: BTreeSet<&str> = r.single.iter().map(|x| x.system.as_str()).filter(|x| *x != "quiver").collect();
    let _ = writeln!(
        s,
        "\n## One client, same start vertices (mean latency, ms; ratio = peer / Quiver, above 1 means Quiver is faster)\n\n\
         A peer stops taking start vertices once it has spent its time budget on a workload; `agree` says how many \
         it answered, and its ratio is against Quiver's mean over those same starts. `failed`: a Quiver query of the \
         workload failed (see the notes); the peers' latencies are shown, with nothing to compare.\n"
    );
    let mut head = String::from("| dataset | workload | quiver |");
    let mut rule = String::from("|---|---|---:|");
    for p in &systems {
        let _ = write!(head, " {p} | ratio | agree |");
        rule.push_str("---:|---:|---|");
    }
    let _ = writeln!(s, "{head}\n{rule}");
    for q in r.single.iter().filter(|x| x.system == "quiver") {
        let quiver = if q.error.is_some() { "failed".to_string() } else { ms(q.latency_ms.mean) };
        let mut line = format!("| {} | {} | {quiver} |", q.dataset, q.workload);
        for p in &systems {
            let peer = r.single.iter().find(|x| x.system == *p && x.dataset == q.dataset && x.workload == q.workload);
            let check = r.checks.iter().find(|c| c.system == *p && c.dataset == q.dataset && c.workload == q.workload);
            match peer {
                Some(x) if q.error.is_some() => {
                    let _ = write!(line, " {} | - | - |", ms(x.latency_ms.mean));
                }
                Some(x) => {
                    let agree = check.map_or("-".to_string(), |c| format!("{}/{}", c.agreed, c.compared));
                    let base = x.quiver_mean_ms.unwrap_or(q.latency_ms.mean);
                    let _ = write!(
                        line,
                        " {} | {:.2} | {agree} |",
                        ms(x.latency_ms.mean),
                        x.latency_ms.mean / base.max(1e-9)
                    );
                }
                None => line.push_str(" - | - | - |"),
            }
        }
        let _ = writeln!(s, "{line}");
    }
    let diffs: Vec<_> = r.checks.iter().filter(|c| c.agreed != c.compared).collect();
    if !diffs.is_empty() {
        let _ = writeln!(s, "\nDisagreements (first of each):\n");
        for c in diffs {
            let _ = writeln!(
                s,
                "- {} {} vs {}: {}",
                c.dataset,
                c.workload,
                c.system,
                c.first_difference.as_deref().unwrap_or("")
            );
        }
    }
    let clients: BTreeSet<usize> = r.ladder.iter().map(|p| p.clients).collect();
    if !clients.is_empty() {
        let _ = writeln!(s, "\n## Quiver under concurrency (requests/s and client-side p99 ms per client count)\n");
        let mut head = String::from("| workload | path |");
        let mut rule = String::from("|---|---|");
        for c in &clients {
            let _ = write!(head, " {c} |");
            rule.push_str("---:|");
        }
        let _ = writeln!(s, "{head}\n{rule}");
        let mut seen = BTreeSet::new();
        for p in &r.ladder {
            if !seen.insert((p.workload.clone(), p.path.clone())) {
                continue;
            }
            let mut line = format!("| {} | {} |", p.workload, p.path);
            for c in &clients {
                match r.ladder.iter().find(|x| x.workload == p.workload && x.path == p.path && x.clients == *c) {
                    Some(x) if x.rows_per_s > 0.0 && x.workload.starts_with("insert-batch") => {
                        let _ = write!(line, " {:.0} edges/s, p99 {} |", x.rows_per_s, ms(x.client.p99));
                    }
                    Some(x) => {
                        let _ = write!(line, " {:.0}, p99 {} |", x.qps, ms(x.client.p99));
                    }
                    None => line.push_str(" - |"),
                }
            }
            let _ = writeln!(s, "{line}");
        }
        let _ = writeln!(s, "\nEvery point (p50/p90/p95/p99, client and server side) is in `results.json`.");
    }
    if !r.notes.is_empty() {
        let _ = writeln!(s, "\n## Notes\n");
        for n in &r.notes {
            let _ = writeln!(s, "- {n}");
        }
    }
    s
}

pub fn write(r: &Results, out: &Path, opts: &Options) -> Result<(), String> {
    let json = out.join("results.json");
    std::fs::write(&json, serde_json::to_string_pretty(r).expect("results serialize"))
        .map_err(|e| format!("{}: {e}", json.display()))?;
    let md = out.join("results.md");
    std::fs::write(&md, markdown(r)).map_err(|e| format!("{}: {e}", md.display()))?;
    let plotted =
        std::process::Command::new(&opts.python).arg(opts.scripts.join("plot.py")).arg(&json).arg(out).status();
    // The plots are a view of results.json; a machine without matplotlib still gets the results.
    match plotted {
        Ok(s) if s.success() => {}
        Ok(s) => eprintln!("quiver bench: no plots: bench/plot.py failed ({s})"),
        Err(e) => eprintln!("quiver bench: no plots: cannot run {}: {e} (run bench/setup.sh)", opts.python.display()),
    }
    Ok(())
}
