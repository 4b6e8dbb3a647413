//! Runs one statement N times in process against a database directory and prints the mean latency: a driver for
//! `perf record` (`cargo build --release --example prof -p quiver-bench`; usage: prof DIR SPACE V1,V2,.. N STMT,
//! where `{v}` in STMT is replaced by each start vertex in turn; each start runs once before the measured runs).
//! It times the engine alone: the result stays in the columns the engine returns (no rows built for a client).
//! `PROF_DISABLE=rule,...` switches optimizer rules off for the run; `PROF_WARM=STMT` runs STMT once first;
//! `PROF_ALT=STMT2` alternates STMT and STMT2 and prints both means (see below); `PROF_WARM_RUNS=N` runs STMT N
//! times before the measured runs; `PROF_PLAN=1` prints the plan of the last run (its operators' times too when
//! STMT starts with PROFILE).
use quiver_query::{Params, Session};
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let db = quiver_server::Database::open(std::path::Path::new(&a[1])).unwrap();
    let starts: Vec<i64> = a[3].split(',').map(|s| s.parse().unwrap()).collect();
    let n: usize = a[4].parse().unwrap();
    let mut session = Session { space: Some(a[2].clone()), ..Session::default() };
    // With PROF_DISABLE=rule,rule, those optimizer rules are off (to compare plans).
    if let Ok(rules) = std::env::var("PROF_DISABLE") {
        session.disabled_rules = rules.split(',').map(str::to_string).collect();
    }
    let mut run = |stmt: String| db.execute(&mut session, &stmt, &Params::new()).unwrap();
    // With PROF_WARM=STMT, that statement runs once first (with `{v}` the first start): to build what an earlier
    // workload of the benchmark would have (the topology, a cache) before this one is measured.
    if let Ok(warm) = std::env::var("PROF_WARM") {
        run(warm.replace("{v}", &starts[0].to_string()));
    }
    // Warm-up: every start once, or `PROF_WARM_RUNS` statements (caches that turn hot on reads are built here, not
    // in the measured runs: a neighbours read of one vertex with properties counts one read of 4096).
    let warm_runs = std::env::var("PROF_WARM_RUNS").ok().and_then(|n| n.parse().ok()).unwrap_or(starts.len());
    for i in 0..warm_runs.max(starts.len()) {
        run(a[5].replace("{v}", &starts[i % starts.len()].to_string()));
    }
    // With PROF_ALT=STMT2, STMT and STMT2 alternate query by query in this one process, each timed apart (the
    // machine's noise then falls on both alike): prints both means and their ratio.
    if let Ok(alt) = std::env::var("PROF_ALT") {
        for v in &starts {
            run(alt.replace("{v}", &v.to_string()));
        }
        let (mut first, mut second) = (std::time::Duration::ZERO, std::time::Duration::ZERO);
        for i in 0..n {
            let v = starts[i % starts.len()].to_string();
            let t = std::time::Instant::now();
            run(a[5].replace("{v}", &v));
            first += t.elapsed();
            let t = std::time::Instant::now();
            run(alt.replace("{v}", &v));
            second += t.elapsed();
        }
        let ms = |d: std::time::Duration| d.as_secs_f64() * 1000.0 / n as f64;
        println!("{} pairs, mean {:.3} ms and {:.3} ms, ratio {:.2}", n, ms(first), ms(second), ms(first) / ms(second));
        return;
    }
    let t = std::time::Instant::now();
    let mut rows = 0;
    let mut plan = None;
    for i in 0..n {
        let mut ds = run(a[5].replace("{v}", &starts[i % starts.len()].to_string()));
        plan = ds.plan.take();
        // With PROF_ROWS set, the rows a client gets are built too (as the benchmark's in-process driver does).
        rows += if std::env::var_os("PROF_ROWS").is_some() { ds.into_rows().len() } else { ds.len() };
    }
    if let (Some(plan), Some(_)) = (plan, std::env::var_os("PROF_PLAN")) {
        println!("validated, planned and optimized in {} us", plan.optimize_time_us);
        for node in &plan.nodes {
            println!("{:>3} {:<24} {:?} <- {:?}", node.id, node.name, node.profile, node.dependencies);
        }
    }
    println!("{} queries, mean {:.3} ms, rows {}", n, t.elapsed().as_secs_f64() * 1000.0 / n as f64, rows);
}
