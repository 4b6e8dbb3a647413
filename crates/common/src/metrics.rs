//! The process's metrics, read in two formats: NebulaGraph's `/stats` (`name.method.window` over the last 5, 60,
//! 600 and 3600 seconds, as its `StatsManager` reports them) and Prometheus's text format (totals since start).
//!
//! A small registry of our own rather than a crate: `/stats` needs windowed sums, rates and percentile estimates
//! that no Prometheus client computes, and Prometheus needs only totals and cumulative buckets; one registry keeps
//! both views of the same figures consistent, with no dependency.
//!
//! Every metric is registered up front ([`Metrics::new`]), as NebulaGraph registers its stats when a service
//! starts. A figure is recorded in three rings of 60 slots (1 s, 10 s and 60 s each), so a window's value is the sum
//! of the slots younger than it. Histograms bucket values on a log scale (4 buckets per power of two, about 19 %
//! wide), which bounds a percentile estimate's error to one bucket's width; NebulaGraph's own histograms have 1 ms
//! buckets up to 2 ms, coarser than these.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Instant;

/// The windows of `/stats`, in seconds.
pub const WINDOWS: [u64; 4] = [5, 60, 600, 3600];

/// Rings of slots of 1, 10 and 60 seconds, 60 slots each.
const RINGS: [u64; 3] = [1, 10, 60];
const SLOTS: usize = 60;

/// Log-scale buckets: 4 per power of two, for values up to 2^40 (about 12 days in microseconds).
const SUB_BUCKETS: u32 = 4;
const BUCKETS: usize = 41 * SUB_BUCKETS as usize;

/// Prometheus buckets of the histograms (microseconds): 100 µs to 60 s.
const PROMETHEUS_BUCKETS_US: [u64; 18] = [
    100, 250, 500, 1_000, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000, 250_000, 500_000, 1_000_000, 2_500_000,
    5_000_000, 10_000_000, 30_000_000, 60_000_000,
];

/// How `/stats` may read a metric (NebulaGraph's registration: `"rate, sum"`, `"sum"`, or a histogram's
/// `"avg, p75, p95, p99, p999"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A count of events: `sum` and `rate` per window; a Prometheus counter.
    Counter,
    /// Ups and downs (`+1` when a query starts, `-1` when it ends): `sum` per window, the net change in it, as
    /// NebulaGraph reports it; a Prometheus gauge of the current value.
    UpDown,
    /// A distribution of values: `avg` and percentiles per window; a Prometheus histogram.
    Histogram,
}

/// The metrics this process records, with their help text.
pub const METRICS: &[(&str, Kind, &str)] = &[
    ("num_queries", Kind::Counter, "requests run"),
    ("num_active_queries", Kind::UpDown, "requests running"),
    ("num_slow_queries", Kind::Counter, "requests at or past slow_query_threshold_us"),
    ("num_query_errors", Kind::Counter, "requests that ended with an error"),
    ("num_killed_queries", Kind::Counter, "requests stopped by KILL QUERY"),
    ("num_queries_hit_memory_watermark", Kind::Counter, "requests stopped because the server neared its memory limit"),
    ("query_latency_us", Kind::Histogram, "request latency in microseconds"),
    ("slow_query_latency_us", Kind::Histogram, "latency of slow requests in microseconds"),
    ("num_opened_sessions", Kind::Counter, "sessions opened"),
    ("num_active_sessions", Kind::UpDown, "sessions open"),
    ("num_auth_failed_sessions", Kind::Counter, "sign-ins refused"),
    ("num_reclaimed_expired_sessions", Kind::Counter, "sessions ended for being idle"),
    ("num_vertices_inserted", Kind::Counter, "vertices written by INSERT VERTEX"),
    ("num_edges_inserted", Kind::Counter, "edges written by INSERT EDGE"),
    ("commit_latency_us", Kind::Histogram, "time from a write batch's append to its durability, in microseconds"),
];

#[derive(Clone)]
struct Slot {
    /// The start of the slot's period, in seconds since the registry began; `u64::MAX` for a slot never used.
    period: u64,
    sum: i64,
    count: u64,
    buckets: Option<Box<[u32; BUCKETS]>>,
}

impl Slot {
    fn empty(histogram: bool) -> Slot {
        Slot { period: u64::MAX, sum: 0, count: 0, buckets: histogram.then(|| Box::new([0; BUCKETS])) }
    }
}

struct Series {
    kind: Kind,
    rings: [Vec<Slot>; 3],
    total_sum: i64,
    total_count: u64,
    /// Cumulative since start, by [`PROMETHEUS_BUCKETS_US`] (the last is +Inf).
    total_buckets: [u64; PROMETHEUS_BUCKETS_US.len() + 1],
}

/// The bucket of a value: exact below 4, then 4 per power of two.
fn bucket_of(v: i64) -> usize {
    let v = v.max(0) as u64;
    if v < u64::from(SUB_BUCKETS) {
        return v as usize;
    }
    let log = 63 - v.leading_zeros();
    let sub = ((v >> (log - 2)) & 3) as usize;
    ((log as usize - 1) * SUB_BUCKETS as usize + sub).min(BUCKETS - 1)
}

/// The smallest value of a bucket (its upper end is the next bucket's lower end).
fn bucket_low(b: usize) -> u64 {
    if b < SUB_BUCKETS as usize {
        return b as u64;
    }
    let log = b / SUB_BUCKETS as usize + 1;
    let sub = (b % SUB_BUCKETS as usize) as u64;
    (4 + sub) << (log - 2)
}

impl Series {
    fn new(kind: Kind) -> Series {
        let histogram = kind == Kind::Histogram;
        Series {
            kind,
            rings: std::array::from_fn(|_| vec![Slot::empty(histogram); SLOTS]),
            total_sum: 0,
            total_count: 0,
            total_buckets: [0; PROMETHEUS_BUCKETS_US.len() + 1],
        }
    }

    fn add(&mut self, now: u64, value: i64) {
        let histogram = self.kind == Kind::Histogram;
        for (ring, &width) in self.rings.iter_mut().zip(&RINGS) {
            let period = now / width * width;
            let slot = &mut ring[(now / width) as usize % SLOTS];
            if slot.period != period {
                *slot = Slot::empty(histogram);
                slot.period = period;
            }
            slot.sum += value;
            slot.count += 1;
            if let Some(b) = &mut slot.buckets {
                b[bucket_of(value)] += 1;
            }
        }
        self.total_sum += value;
        self.total_count += 1;
        if histogram {
            let i = PROMETHEUS_BUCKETS_US.iter().position(|&le| value.max(0) as u64 <= le);
            self.total_buckets[i.unwrap_or(PROMETHEUS_BUCKETS_US.len())] += 1;
        }
    }

    /// The slots covering the last `window` seconds: of the finest ring that spans it.
    fn slots(&self, now: u64, window: u64) -> impl Iterator<Item = &Slot> {
        let r = RINGS.iter().position(|&w| w * SLOTS as u64 >= window).unwrap_or(RINGS.len() - 1);
        let width = RINGS[r];
        // A slot counts if its period started within the window (the current, partly elapsed slot included).
        let oldest = (now / width * width + width).saturating_sub(window.max(width));
        self.rings[r].iter().filter(move |s| s.period != u64::MAX && s.period >= oldest && s.period <= now)
    }

    fn window(&self, now: u64, window: u64) -> (i64, u64, Option<[u32; BUCKETS]>) {
        let (mut sum, mut count) = (0i64, 0u64);
        let mut buckets = (self.kind == Kind::Histogram).then_some([0u32; BUCKETS]);
        for s in self.slots(now, window) {
            sum += s.sum;
            count += s.count;
            if let (Some(acc), Some(b)) = (&mut buckets, &s.buckets) {
                for (a, x) in acc.iter_mut().zip(b.iter()) {
                    *a += x;
                }
            }
        }
        (sum, count, buckets)
    }
}

/// A percentile estimate from bucket counts: the value at rank `pct` of `count`, interpolated within its bucket.
fn percentile(buckets: &[u32; BUCKETS], count: u64, pct: f64) -> i64 {
    if count == 0 {
        return 0;
    }
    let rank = (pct / 100.0 * count as f64).max(1.0);
    let mut seen = 0f64;
    for (b, &n) in buckets.iter().enumerate() {
        if n == 0 {
            continue;
        }
        if seen + f64::from(n) >= rank {
            let (low, high) = (bucket_low(b) as f64, bucket_low(b + 1) as f64);
            let within = (rank - seen) / f64::from(n);
            return (low + (high - low) * within) as i64;
        }
        seen += f64::from(n);
    }
    bucket_low(BUCKETS - 1) as i64
}

/// The registry. Cheap to record into from many threads (one short lock per figure).
pub struct Metrics {
    start: Instant,
    series: BTreeMap<&'static str, Mutex<Series>>,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    pub fn new() -> Metrics {
        let series = METRICS.iter().map(|&(name, kind, _)| (name, Mutex::new(Series::new(kind)))).collect();
        Metrics { start: Instant::now(), series }
    }

    fn now(&self) -> u64 {
        self.start.elapsed().as_secs()
    }

    /// Records `value` (1 for an event) in `name`; a name not registered is a programming error, ignored in
    /// release builds.
    pub fn add(&self, name: &str, value: i64) {
        self.add_at(self.now(), name, value);
    }

    fn add_at(&self, now: u64, name: &str, value: i64) {
        match self.series.get(name) {
            Some(s) => s.lock().unwrap_or_else(|p| p.into_inner()).add(now, value),
            None => debug_assert!(false, "metric {name} is not registered"),
        }
    }

    /// One figure of `/stats`: `name.method.window`, with NebulaGraph's error texts for a name it cannot read.
    pub fn read(&self, stat: &str) -> Result<i64, String> {
        self.read_at(self.now(), stat)
    }

    fn read_at(&self, now: u64, stat: &str) -> Result<i64, String> {
        let parts: Vec<&str> = stat.split('.').filter(|p| !p.is_empty()).collect();
        let [name, method, window] = parts[..] else {
            return Err(format!("\"{stat}\" is not a valid metric name"));
        };
        let window: u64 = match window {
            "5" | "60" | "600" | "3600" => window.parse().expect("a window"),
            _ => return Err(format!("Unsupported time range \"{window}\"")),
        };
        let method = method.to_ascii_lowercase();
        let Some(series) = self.series.get(name) else {
            return Err(format!("Stats not found \"{name}\""));
        };
        let s = series.lock().unwrap_or_else(|p| p.into_inner());
        let (sum, count, buckets) = s.window(now, window);
        // Over the time the registry has existed, when that is shorter than the window.
        let elapsed = window.min(now + 1).max(1) as i64;
        match method.as_str() {
            "sum" => Ok(sum),
            "count" => Ok(count as i64),
            "avg" => Ok(if count == 0 { 0 } else { sum / count as i64 }),
            "rate" => Ok(sum / elapsed),
            m if m.starts_with('p') => {
                let pct = parse_pct(m).ok_or_else(|| format!("\"{m}\" is not a valid percentile form"))?;
                match &buckets {
                    Some(b) => Ok(percentile(b, count, pct)),
                    None => Err("Invalid stats".to_string()),
                }
            }
            m => Err(format!("Unsupported statistic method \"{m}\"")),
        }
    }

    /// Every figure `/stats` lists when no names are asked for: each metric with its methods, over every window.
    pub fn read_all(&self) -> Vec<(String, i64)> {
        let now = self.now();
        let mut out = Vec::new();
        for &(name, kind, _) in METRICS {
            let methods: &[&str] = match kind {
                Kind::Counter => &["sum", "rate"],
                Kind::UpDown => &["sum"],
                Kind::Histogram => &["avg", "p75", "p95", "p99", "p999"],
            };
            for m in methods {
                for w in WINDOWS {
                    let stat = format!("{name}.{m}.{w}");
                    if let Ok(v) = self.read_at(now, &stat) {
                        out.push((stat, v));
                    }
                }
            }
        }
        out
    }

    /// The Prometheus text format (version 0.0.4) of every metric, named `quiver_<name>`, followed by `extra`
    /// figures (storage engine figures, already named; counters when the name ends in `_total`, else gauges).
    pub fn prometheus(&self, extra: &[(String, String, f64)]) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        for &(name, kind, help) in METRICS {
            let s = self.series[name].lock().unwrap_or_else(|p| p.into_inner());
            match kind {
                Kind::Counter => {
                    let _ = writeln!(out, "# HELP quiver_{name}_total {help}\n# TYPE quiver_{name}_total counter");
                    let _ = writeln!(out, "quiver_{name}_total {}", s.total_sum);
                }
                Kind::UpDown => {
                    let _ = writeln!(out, "# HELP quiver_{name} {help}\n# TYPE quiver_{name} gauge");
                    let _ = writeln!(out, "quiver_{name} {}", s.total_sum);
                }
                Kind::Histogram => {
                    let _ = writeln!(out, "# HELP quiver_{name} {help}\n# TYPE quiver_{name} histogram");
                    let mut cumulative = 0;
                    for (i, le) in PROMETHEUS_BUCKETS_US.iter().enumerate() {
                        cumulative += s.total_buckets[i];
                        let _ = writeln!(out, "quiver_{name}_bucket{{le=\"{le}\"}} {cumulative}");
                    }
                    let _ = writeln!(out, "quiver_{name}_bucket{{le=\"+Inf\"}} {}", s.total_count);
                    let _ = writeln!(out, "quiver_{name}_sum {}", s.total_sum);
                    let _ = writeln!(out, "quiver_{name}_count {}", s.total_count);
                }
            }
        }
        for (name, help, value) in extra {
            // A figure named `..._total` is a total since start: a counter; the others are gauges.
            let kind = if name.ends_with("_total") { "counter" } else { "gauge" };
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}");
        }
        out
    }
}

/// NebulaGraph's percentile forms: `p75` is 75, `p999` 99.9, `p9999` 99.99 (the digits after the first two are
/// decimals).
fn parse_pct(m: &str) -> Option<f64> {
    let digits = &m[1..];
    if digits.is_empty() || digits.len() > 6 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let divisor = [1.0, 1.0, 10.0, 100.0, 1000.0, 10000.0][digits.len() - 1];
    Some(digits.parse::<f64>().ok()? / divisor)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_forget_what_is_older_than_them() {
        let m = Metrics::new();
        m.add_at(0, "num_queries", 1);
        m.add_at(3, "num_queries", 1);
        m.add_at(100, "num_queries", 1);
        assert_eq!(m.read_at(100, "num_queries.sum.5"), Ok(1));
        assert_eq!(m.read_at(100, "num_queries.sum.60"), Ok(1));
        assert_eq!(m.read_at(100, "num_queries.sum.600"), Ok(3));
        assert_eq!(m.read_at(4, "num_queries.sum.5"), Ok(2));
        assert_eq!(m.read_at(7, "num_queries.sum.5"), Ok(1));
        // 3 events over the 101 seconds the registry has existed, within a 600 s window.
        assert_eq!(m.read_at(100, "num_queries.rate.600"), Ok(0));
        for _ in 0..120 {
            m.add_at(100, "num_queries", 1);
        }
        assert_eq!(m.read_at(100, "num_queries.rate.60"), Ok(2));
        // Past an hour, everything recorded at the start is gone.
        assert_eq!(m.read_at(3650, "num_queries.sum.3600"), Ok(121));
        assert_eq!(m.read_at(7200, "num_queries.sum.3600"), Ok(0));
    }

    #[test]
    fn up_down_sums_are_net_changes() {
        let m = Metrics::new();
        m.add_at(10, "num_active_queries", 1);
        m.add_at(10, "num_active_queries", 1);
        m.add_at(11, "num_active_queries", -1);
        assert_eq!(m.read_at(11, "num_active_queries.sum.60"), Ok(1));
        assert!(m.prometheus(&[]).contains("\nquiver_num_active_queries 1\n"));
    }

    #[test]
    fn percentiles_fall_within_a_bucket_of_the_truth() {
        let m = Metrics::new();
        // 1..=10000 µs: the p-th percentile is p * 100.
        for v in 1..=10_000 {
            m.add_at(50, "query_latency_us", v);
        }
        for (p, truth) in [("p75", 7500.0), ("p95", 9500.0), ("p99", 9900.0), ("p999", 9990.0)] {
            let got = m.read_at(50, &format!("query_latency_us.{p}.60")).unwrap() as f64;
            assert!((got - truth).abs() / truth < 0.19, "{p}: {got} against {truth}");
        }
        assert_eq!(m.read_at(50, "query_latency_us.avg.60"), Ok(5000));
        assert_eq!(m.read_at(50, "query_latency_us.count.5"), Ok(10_000));
    }

    #[test]
    fn bad_names_get_nebulagraphs_errors() {
        let m = Metrics::new();
        assert_eq!(m.read("num_queries.sum"), Err("\"num_queries.sum\" is not a valid metric name".into()));
        assert_eq!(m.read("num_queries.sum.7"), Err("Unsupported time range \"7\"".into()));
        assert_eq!(m.read("num_queries.median.60"), Err("Unsupported statistic method \"median\"".into()));
        assert_eq!(m.read("query_latency_us.pxx.60"), Err("\"pxx\" is not a valid percentile form".into()));
        assert_eq!(m.read("nothing.sum.60"), Err("Stats not found \"nothing\"".into()));
        assert_eq!(m.read("num_queries.p99.60"), Err("Invalid stats".into()));
    }

    #[test]
    fn buckets_are_ordered_and_cover_their_values() {
        for b in 0..BUCKETS - 1 {
            assert!(bucket_low(b) < bucket_low(b + 1));
        }
        for v in [0i64, 1, 3, 4, 5, 7, 8, 1000, 999_999, 1 << 39] {
            let b = bucket_of(v);
            assert!(bucket_low(b) <= v as u64 && (v as u64) < bucket_low(b + 1), "{v} in bucket {b}");
        }
    }

    #[test]
    fn prometheus_histograms_are_cumulative() {
        let m = Metrics::new();
        for v in [50, 150, 150, 5_000_000, 100_000_000] {
            m.add("commit_latency_us", v);
        }
        let text = m.prometheus(&[("rocksdb_x".into(), "a figure".into(), 2.0)]);
        assert!(text.contains("quiver_commit_latency_us_bucket{le=\"100\"} 1\n"));
        assert!(text.contains("quiver_commit_latency_us_bucket{le=\"250\"} 3\n"));
        assert!(text.contains("quiver_commit_latency_us_bucket{le=\"5000000\"} 4\n"));
        assert!(text.contains("quiver_commit_latency_us_bucket{le=\"+Inf\"} 5\n"));
        assert!(text.contains("quiver_commit_latency_us_count 5\n"));
        assert!(text.ends_with("# TYPE rocksdb_x gauge\nrocksdb_x 2\n"));
    }
}
