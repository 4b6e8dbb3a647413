//! Helpers shared by the process tests: start `quiver serve` on free ports, call its HTTP API.
#![allow(dead_code, reason = "each test binary uses a different part of the shared support")]

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

    /// Starts `quiver serve` with TLS on both ports, ready once its health answers over TLS to a client trusting
    /// the test authority.
    pub fn start_tls(dir: &Path, certs: &TestCerts) -> Server {
        let extra = ["--cert-path", certs.cert.to_str().unwrap(), "--key-path", certs.key.to_str().unwrap()];
        Server::spawn_probed(dir, &extra, Stdio::null(), &|s: &Server| {
            tls_get(&s.addr, &certs.ca, "/api/v1/health").is_ok()
        })
    }

    fn spawn(dir: &Path, extra: &[&str], stderr: Stdio) -> Server {
        Server::spawn_probed(dir, extra, stderr, &|s: &Server| {
            agent().get(&format!("http://{}/api/v1/health", s.addr)).call().is_ok()
        })
    }

    fn spawn_probed(dir: &Path, extra: &[&str], stderr: Stdio, ready: &dyn Fn(&Server) -> bool) -> Server {
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
            if ready(&s) {
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

/// A test certificate authority and a server certificate it signed for `localhost` and 127.0.0.1, made with the
/// `openssl` CLI in `dir`.
pub struct TestCerts {
    /// What a client trusts.
    pub ca: std::path::PathBuf,
    /// What the server presents, and its key.
    pub cert: std::path::PathBuf,
    pub key: std::path::PathBuf,
}

pub fn make_certificate(dir: &Path) -> TestCerts {
    std::fs::create_dir_all(dir).unwrap();
    let p = |name: &str| dir.join(name);
    let openssl = |args: &[&str]| {
        let out = Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .output()
            .expect("the openssl CLI (scripts/setup.sh installs it)");
        assert!(out.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    };
    std::fs::write(p("leaf.ext"), "subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n").unwrap();
    openssl(&[
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "2",
        "-subj",
        "/CN=quiver-test-ca",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
    ]);
    openssl(&[
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-subj",
        "/CN=localhost",
        "-keyout",
        "key.pem",
        "-out",
        "leaf.csr",
    ]);
    openssl(&[
        "x509",
        "-req",
        "-in",
        "leaf.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "2",
        "-extfile",
        "leaf.ext",
        "-out",
        "cert.pem",
    ]);
    TestCerts { ca: p("ca.pem"), cert: p("cert.pem"), key: p("key.pem") }
}

/// `GET path` over TLS to `addr`, trusting only `root` (PEM); the whole response, headers included.
pub fn tls_get(addr: &str, root: &Path, path: &str) -> std::io::Result<String> {
    use rustls_pki_types::pem::PemObject;
    use std::io::{Read, Write};
    use tokio_rustls::rustls;
    let other = |e: &dyn std::fmt::Display| std::io::Error::other(e.to_string());
    let mut roots = rustls::RootCertStore::empty();
    for c in rustls_pki_types::CertificateDer::pem_file_iter(root).map_err(|e| other(&e))? {
        roots.add(c.map_err(|e| other(&e))?).map_err(|e| other(&e))?;
    }
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| other(&e))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    let name = rustls_pki_types::ServerName::try_from("127.0.0.1").map_err(|e| other(&e))?;
    let conn = rustls::ClientConnection::new(std::sync::Arc::new(config), name).map_err(|e| other(&e))?;
    let sock = std::net::TcpStream::connect(addr)?;
    sock.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut tls = rustls::StreamOwned::new(conn, sock);
    tls.write_all(format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n").as_bytes())?;
    let mut out = String::new();
    match tls.read_to_string(&mut out) {
        Ok(_) => Ok(out),
        // A peer closing without TLS's close_notify still sent the whole response.
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof && !out.is_empty() => Ok(out),
        Err(e) => Err(e),
    }
}
