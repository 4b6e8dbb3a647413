//! Three hosts in one process talking Raft over TCP on loopback: a group elects a leader, takes writes, loses its
//! leader (its port closed and its groups stopped), elects another, and the old leader, restarted on its engine,
//! catches up. Hostile bytes on a Raft port close that connection and nothing else.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use quiver_kv::{KvEngine, MemEngine, WriteBatch};
use quiver_raft::tcp::{serve, TcpTransport};
use quiver_raft::{BasicNode, DataRange, GroupId, NodeId, RaftHost, Replica, ReplicaError, Timing};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

const GROUP: GroupId = (7 << 32) | 1;

fn timing() -> Timing {
    Timing {
        heartbeat: Duration::from_millis(100),
        election_min: Duration::from_millis(500),
        election_max: Duration::from_millis(1000),
        snapshot_every: 50,
    }
}

fn range() -> DataRange {
    DataRange { start: GROUP.to_be_bytes().to_vec(), end: (GROUP + 1).to_be_bytes().to_vec() }
}

fn key(i: u64) -> Vec<u8> {
    let mut k = GROUP.to_be_bytes().to_vec();
    k.extend_from_slice(&i.to_be_bytes());
    k
}

struct Node {
    id: NodeId,
    addr: String,
    engine: Arc<dyn KvEngine>,
    host: Option<Arc<RaftHost>>,
    server: Option<JoinHandle<()>>,
}

impl Node {
    async fn start(&mut self, listener: TcpListener) {
        let host = RaftHost::new(self.id, self.engine.clone(), timing());
        host.open_group(GROUP, range(), TcpTransport::new()).await.unwrap();
        self.server = Some(tokio::spawn(serve(listener, host.clone())));
        self.host = Some(host);
    }

    async fn stop(&mut self) {
        if let Some(s) = self.server.take() {
            s.abort();
            let _ = s.await;
        }
        if let Some(h) = self.host.take() {
            h.shutdown().await;
        }
    }

    fn replica(&self) -> Option<Arc<Replica>> {
        self.host.as_ref()?.replica(GROUP)
    }
}

/// Writes through whichever node leads, following hints, for up to `patience`.
async fn write(nodes: &[Node], k: u64, patience: Duration) -> Result<(), String> {
    let deadline = Instant::now() + patience;
    let mut target = 0;
    let mut last = String::new();
    while Instant::now() < deadline {
        if let Some(r) = nodes[target].replica() {
            let mut b = WriteBatch::new();
            b.put(key(k), k.to_le_bytes().to_vec());
            match tokio::time::timeout(Duration::from_secs(2), r.write(b)).await {
                Ok(Ok(_)) => return Ok(()),
                Ok(Err(ReplicaError::NotLeader { leader: Some(l), .. })) => {
                    target = nodes.iter().position(|n| n.id == l).unwrap();
                    continue;
                }
                Ok(Err(e)) => last = e.to_string(),
                Err(_) => last = "timed out".into(),
            }
        }
        target = (target + 1) % nodes.len();
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Err(format!("key {k} not written: {last}"))
}

fn leader(nodes: &[Node]) -> Option<usize> {
    nodes.iter().position(|n| n.replica().is_some_and(|r| r.is_leader()))
}

fn dump(engine: &Arc<dyn KvEngine>) -> Vec<(Vec<u8>, Vec<u8>)> {
    let r = range();
    let mut pairs = Vec::new();
    engine
        .scan_range(&r.start, &r.end, &mut |k, v| {
            pairs.push((k.to_vec(), v.to_vec()));
            true
        })
        .unwrap();
    pairs
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_group_survives_losing_its_leader_over_tcp() {
    let mut listeners = Vec::new();
    let mut nodes = Vec::new();
    for id in 1..=3u64 {
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = l.local_addr().unwrap().to_string();
        listeners.push(l);
        nodes.push(Node { id, addr, engine: Arc::new(MemEngine::new()), host: None, server: None });
    }
    for (n, l) in nodes.iter_mut().zip(listeners) {
        n.start(l).await;
    }
    let members: BTreeMap<NodeId, BasicNode> = nodes.iter().map(|n| (n.id, BasicNode::new(&n.addr))).collect();
    nodes[0].replica().unwrap().initialize(members).await.unwrap();

    for k in 0..100 {
        write(&nodes, k, Duration::from_secs(20)).await.unwrap();
    }
    let l = leader(&nodes).expect("a leader after 100 writes");
    let r = nodes[l].replica().unwrap();
    assert_eq!(r.read(&key(42)).await.unwrap(), Some(42u64.to_le_bytes().to_vec()));

    // Hostile bytes on a follower's port: an oversized frame, then garbage; the connections close, the group goes on.
    let follower = &nodes[(l + 1) % 3];
    for bytes in
        [u32::MAX.to_le_bytes().to_vec(), vec![20, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 1, 9, 9, 9, 9, 9, 9, 9, 9, 0, 0, 0]]
    {
        let mut s = TcpStream::connect(&follower.addr).await.unwrap();
        s.write_all(&bytes).await.unwrap();
        let mut buf = [0u8; 16];
        let n = tokio::time::timeout(Duration::from_secs(5), s.read(&mut buf)).await.unwrap().unwrap_or(0);
        assert_eq!(n, 0, "a hostile frame got a reply instead of a closed connection");
    }

    // The leader goes away: its port closes and its groups stop.
    let old = l;
    let listener_addr = nodes[old].addr.clone();
    nodes[old].stop().await;
    let lost_at = Instant::now();
    write(&nodes, 100, Duration::from_secs(30)).await.unwrap();
    eprintln!("first write after losing the leader: {:?}", lost_at.elapsed());
    for k in 101..200 {
        write(&nodes, k, Duration::from_secs(20)).await.unwrap();
    }

    // The old leader comes back on its engine and port, and catches up (by log or by snapshot).
    let listener = TcpListener::bind(&listener_addr).await.unwrap();
    nodes[old].start(listener).await;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let applied: Vec<_> =
            nodes.iter().map(|n| n.replica().unwrap().raft().metrics().borrow().last_applied).collect();
        if applied.iter().all(|a| a.is_some() && *a == applied[0]) {
            break;
        }
        assert!(Instant::now() < deadline, "the restarted node did not catch up: {applied:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let first = dump(&nodes[0].engine);
    assert_eq!(first.len(), 200);
    for n in &nodes[1..] {
        assert_eq!(dump(&n.engine), first, "node {} holds other data", n.id);
    }
    for n in &mut nodes {
        n.stop().await;
    }
}

/// A service's requests on a Raft port: each answered with the service's reply; one whose handler panics answered
/// with an error, and the connection (and the process) serve the next request as before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_service_request_that_panics_is_answered_with_an_error() {
    struct Echo;
    impl quiver_raft::tcp::Service for Echo {
        fn serve(&self, request: &[u8]) -> Vec<u8> {
            assert!(request != b"boom", "a handler's bug");
            request.iter().rev().copied().collect()
        }
    }
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let host = RaftHost::new(1, Arc::new(MemEngine::new()), timing());
    let server = tokio::spawn(quiver_raft::tcp::serve_with(listener, host, Some(Arc::new(Echo)), Arc::default()));
    let replies = tokio::task::spawn_blocking(move || {
        let client = quiver_raft::tcp::ServiceClient::new(&addr);
        let call = |r: &[u8]| client.call(r, Duration::from_secs(5)).map_err(|e| format!("{e:?}"));
        (call(b"abc"), call(b"boom"), call(b"xyz"))
    })
    .await
    .unwrap();
    server.abort();
    assert_eq!(replies.0, Ok(b"cba".to_vec()));
    let panicked = replies.1.expect_err("a panicked request has no reply");
    assert!(panicked.contains("the request panicked"), "{panicked}");
    assert_eq!(replies.2, Ok(b"zyx".to_vec()), "the connection serves on");
}

/// A `ServiceClient`'s connections are served on threads of their own, up to `SEQUENTIAL_CONNECTIONS_MAX`; more at
/// once are served on the runtime as other connections are (every call answered); when the host stops serving, its
/// connections close, those served on their own threads too (a call on one then fails instead of being answered).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn service_connections_past_the_thread_limit_are_served_and_all_close_when_the_host_stops() {
    use quiver_common::limits::SEQUENTIAL_CONNECTIONS_MAX;
    struct Slow;
    impl quiver_raft::tcp::Service for Slow {
        fn serve(&self, request: &[u8]) -> Vec<u8> {
            std::thread::sleep(Duration::from_millis(300));
            request.to_vec()
        }
    }
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let host = RaftHost::new(1, Arc::new(MemEngine::new()), timing());
    let server = tokio::spawn(quiver_raft::tcp::serve_with(listener, host, Some(Arc::new(Slow)), Arc::default()));
    let client = Arc::new(quiver_raft::tcp::ServiceClient::new(&addr));
    let calls = SEQUENTIAL_CONNECTIONS_MAX + 8;
    let c = client.clone();
    let replies = tokio::task::spawn_blocking(move || {
        // All at once: each call takes a connection of its own from the client's pool.
        let threads: Vec<_> = (0..calls)
            .map(|i| {
                let c = c.clone();
                std::thread::spawn(move || c.call(&(i as u32).to_le_bytes(), Duration::from_secs(20)))
            })
            .collect();
        threads.into_iter().map(|t| t.join().unwrap().map_err(|e| format!("{e:?}"))).collect::<Vec<_>>()
    })
    .await
    .unwrap();
    for (i, r) in replies.into_iter().enumerate() {
        assert_eq!(r, Ok((i as u32).to_le_bytes().to_vec()), "call {i} of {calls}");
    }
    server.abort();
    let _ = server.await;
    // The pooled connections (served on threads of their own or on the stopped runtime task) are closed.
    let after = tokio::task::spawn_blocking(move || client.call(b"late", Duration::from_secs(5))).await.unwrap();
    assert!(after.is_err(), "a stopped host answered: {after:?}");
}

/// A connection that says it asks one request at a time is served on a thread of its own that reads through a
/// buffer: requests written back to back (one of them split across writes, one larger than the buffer) are each
/// answered once, in order, and a `ServiceClient` gets a reply larger than its buffer whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sequential_connection_answers_back_to_back_and_large_requests_in_order() {
    use std::io::{Read, Write};
    struct Echo;
    impl quiver_raft::tcp::Service for Echo {
        fn serve(&self, request: &[u8]) -> Vec<u8> {
            request.iter().rev().copied().collect()
        }
    }
    // A service request frame as a `ServiceClient` writes it: length, id, kind 4, the SEQUENTIAL group word, body.
    fn request(id: u64, body: &[u8]) -> Vec<u8> {
        let mut f = ((8 + 1 + 8 + body.len()) as u32).to_le_bytes().to_vec();
        f.extend_from_slice(&id.to_le_bytes());
        f.push(4);
        f.extend_from_slice(&1u64.to_le_bytes());
        f.extend_from_slice(body);
        f
    }
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let host = RaftHost::new(1, Arc::new(MemEngine::new()), timing());
    let server = tokio::spawn(quiver_raft::tcp::serve_with(listener, host, Some(Arc::new(Echo)), Arc::default()));
    let large: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
    let large_reversed: Vec<u8> = large.iter().rev().copied().collect();
    let bodies: Vec<Vec<u8>> = vec![b"first".to_vec(), b"second".to_vec(), large.clone(), b"last".to_vec()];
    let asked = bodies.clone();
    let (replies, whole) = tokio::task::spawn_blocking(move || {
        let mut s = std::net::TcpStream::connect(&addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        // The first frame alone (it makes the connection a sequential one), then the rest in one stream of bytes
        // written in two pieces that cut the third frame in its middle.
        s.write_all(&request(1, &asked[0])).unwrap();
        let rest: Vec<u8> = (1..asked.len()).flat_map(|i| request(i as u64 + 1, &asked[i])).collect();
        let cut = request(2, &asked[1]).len() + 1_000;
        s.write_all(&rest[..cut]).unwrap();
        std::thread::sleep(Duration::from_millis(50));
        s.write_all(&rest[cut..]).unwrap();
        let mut replies = Vec::new();
        for _ in 0..asked.len() {
            let mut len = [0u8; 4];
            s.read_exact(&mut len).unwrap();
            let mut f = vec![0u8; u32::from_le_bytes(len) as usize];
            s.read_exact(&mut f).unwrap();
            let id = u64::from_le_bytes(f[..8].try_into().unwrap());
            replies.push((id, f[8], f[9], f[10..].to_vec()));
        }
        let client = quiver_raft::tcp::ServiceClient::new(&addr);
        (replies, client.call(&large, Duration::from_secs(10)).map_err(|e| format!("{e:?}")))
    })
    .await
    .unwrap();
    server.abort();
    for (i, (id, kind, status, body)) in replies.into_iter().enumerate() {
        assert_eq!((id, kind, status), (i as u64 + 1, 4 | 0x80, 0), "reply {i}");
        let expected: Vec<u8> = bodies[i].iter().rev().copied().collect();
        assert!(body == expected, "reply {i}: {} bytes, expected {}", body.len(), expected.len());
    }
    assert!(whole.as_ref().is_ok_and(|r| *r == large_reversed), "a large reply: {:?}", whole.map(|r| r.len()));
}
