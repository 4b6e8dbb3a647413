//! Helpers shared by the process tests: start `quiver serve` on free ports, call its HTTP API.
#![allow(dead_code)]

use serde_json::{json, Value as J};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_quiver");

/// An HTTP client that keeps no idle connection: each request's connection closes after it, so none lingers to
/// count against the server's connection limit.
pub fn agent() -> ureq::Agent {
    ureq::AgentBuilder::new().max_idle_connections(0).build()
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

pub struct Server {
    pub child: Child,
    /// The HTTP API.
    pub addr: String,
    /// NebulaGraph's graph protocol.
    pub graph_addr: String,
}

impl Server {
    pub fn start(dir: &Path) -> Server {
        Server::start_with(dir, &[])
    }

    /// Starts `quiver serve` on free ports with `extra` flags.
    pub fn start_with(dir: &Path, extra: &[&str]) -> Server {
        Server::spawn(dir, extra, Stdio::null())
    }

    /// Like [`Server::start_with`], with the server's log written to `log`.
    pub fn start_logging(dir: &Path, log: &Path, extra: &[&str]) -> Server {
        Server::spawn(dir, extra, std::fs::File::create(log).unwrap().into())
    }

    fn spawn(dir: &Path, extra: &[&str], stderr: Stdio) -> Server {
        let addr = format!("127.0.0.1:{}", free_port());
        let graph_addr = format!("127.0.0.1:{}", free_port());
        let child = Command::new(BIN)
            .args(["serve", "--data-dir", dir.to_str().unwrap(), "--http-addr", &addr, "--graph-addr", &graph_addr])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .unwrap();
        let s = Server { child, addr, graph_addr };
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if agent().get(&format!("http://{}/api/v1/health", s.addr)).call().is_ok() {
                return s;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("server did not become ready");
    }

    pub fn exec(&self, stmt: &str, space: Option<&str>) -> J {
        exec_at(&self.addr, stmt, space).expect("request reaches the server")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn exec_at(addr: &str, stmt: &str, space: Option<&str>) -> Result<J, String> {
    let resp = agent()
        .post(&format!("http://{addr}/api/v1/exec"))
        .timeout(Duration::from_secs(10))
        .send_json(json!({"stmt": stmt, "space": space}));
    match resp {
        Ok(r) => r.into_json().map_err(|e| e.to_string()),
        Err(ureq::Error::Status(_, r)) => r.into_json().map_err(|e| e.to_string()),
        Err(e) => Err(e.to_string()),
    }
}

pub fn code(j: &J) -> i64 {
    j["results"][0]["errors"]["code"].as_i64().unwrap()
}
