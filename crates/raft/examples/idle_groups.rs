//! Measures what idle Raft groups cost (docs/design/cluster.md, "Scale on paper"): three hosts in this process,
//! on loopback TCP and in-memory engines, carry N groups of three replicas each with the cluster's default timing;
//! once every group has a leader, the process's CPU time and resident memory are sampled over an idle window.
//!
//! `cargo run --release -p quiver-raft --example idle_groups -- 100 300 1000`

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use quiver_kv::{KvEngine, MemEngine};
use quiver_raft::tcp::{serve, TcpTransport};
use quiver_raft::{BasicNode, DataRange, RaftHost, Timing};
use tokio::net::TcpListener;

fn cpu_seconds() -> f64 {
    // utime and stime of this process, in clock ticks (fields 14 and 15 of /proc/self/stat).
    let stat = std::fs::read_to_string("/proc/self/stat").expect("/proc/self/stat");
    let after = &stat[stat.rfind(')').expect("comm") + 2..];
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks: f64 = f[11].parse::<f64>().unwrap() + f[12].parse::<f64>().unwrap();
    ticks / 100.0
}

fn rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).expect("VmRSS");
    line.split_whitespace().nth(1).unwrap().parse::<f64>().unwrap() / 1024.0
}

async fn measure(groups: u64, idle: Duration) {
    let rss_before = rss_mib();
    let mut listeners = Vec::new();
    let mut addrs = Vec::new();
    for _ in 0..3 {
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        addrs.push(l.local_addr().unwrap().to_string());
        listeners.push(l);
    }
    let mut hosts = Vec::new();
    let mut servers = Vec::new();
    for (i, l) in listeners.into_iter().enumerate() {
        let engine: Arc<dyn KvEngine> = Arc::new(MemEngine::new());
        let host = RaftHost::new(i as u64 + 1, engine, Timing::default());
        let transport = TcpTransport::new();
        for g in 0..groups {
            let group = (1u64 << 32) | (g + 1);
            let range = DataRange { start: group.to_be_bytes().to_vec(), end: (group + 1).to_be_bytes().to_vec() };
            host.open_group(group, range, transport.clone()).await.unwrap();
        }
        servers.push(tokio::spawn(serve(l, host.clone())));
        hosts.push(host);
    }
    let members: BTreeMap<u64, BasicNode> =
        addrs.iter().enumerate().map(|(i, a)| (i as u64 + 1, BasicNode::new(a))).collect();
    let started = Instant::now();
    for g in 0..groups {
        // Spread the first leaders over the hosts, as the meta service's placement would.
        let host = &hosts[(g % 3) as usize];
        host.replica((1u64 << 32) | (g + 1)).unwrap().initialize(members.clone()).await.unwrap();
    }
    loop {
        let led =
            (0..groups).filter(|g| hosts[0].replica((1u64 << 32) | (g + 1)).unwrap().leader().is_some()).count() as u64;
        if led == groups {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let elected = started.elapsed();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let (cpu0, t0) = (cpu_seconds(), Instant::now());
    tokio::time::sleep(idle).await;
    let cpu = (cpu_seconds() - cpu0) / t0.elapsed().as_secs_f64();
    let rss = rss_mib() - rss_before;
    println!(
        "{groups:>5} groups x 3 replicas: every group led after {:.1} s; idle CPU {:.1} % of a core ({:.3} % per replica), \
         resident memory +{rss:.0} MiB ({:.0} KiB per replica)",
        elected.as_secs_f64(),
        cpu * 100.0,
        cpu * 100.0 / (groups as f64 * 3.0),
        rss * 1024.0 / (groups as f64 * 3.0),
    );
    for s in servers {
        s.abort();
    }
    for h in hosts {
        h.shutdown().await;
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let counts: Vec<u64> = std::env::args().skip(1).map(|a| a.parse().expect("a number of groups")).collect();
    for n in if counts.is_empty() { vec![100, 300, 1000] } else { counts } {
        measure(n, Duration::from_secs(10)).await;
    }
}
