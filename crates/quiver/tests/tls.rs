//! TLS on both ports (`--cert-path`, `--key-path`): served to a client that trusts the certificate, and nothing
//! else is served: a plain client, or garbage where a handshake belongs, loses its connection while the server
//! stays healthy. Start-up refuses a half or unreadable configuration with a clear error. (nebula3-python's
//! `SSL_config` round trip is in `tests/clients/python/test_tls.py`.)

mod support;

use quiver_wire::client::Client;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::Duration;
use support::*;

/// Writes `bytes` and reads until the server closes; true if it closed without answering a byte.
fn closed_unanswered(addr: &str, bytes: &[u8]) -> bool {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let _ = s.write_all(bytes);
    let mut out = Vec::new();
    match s.read_to_end(&mut out) {
        Ok(_) => !out.starts_with(b"HTTP") && !out.windows(2).any(|w| w == b"ok"),
        Err(e) => e.kind() == std::io::ErrorKind::ConnectionReset,
    }
}

#[test]
fn tls_ports_serve_tls_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let certs = make_certificate(&dir.path().join("certs"));
    let s = Server::start_tls(&dir.path().join("data"), &certs);
    let cert = &certs.ca;

    let health = tls_get(&s.addr, cert, "/api/v1/health").unwrap();
    assert!(health.starts_with("HTTP/1.1 200"), "{health}");
    assert!(health.ends_with("ok"), "{health}");
    let stats = tls_get(&s.addr, cert, "/stats?stats=num_queries.sum.60").unwrap();
    assert!(stats.contains("num_queries.sum.60="), "{stats}");

    // Plain HTTP and the plain graph protocol are refused, not served.
    assert!(agent().get(&format!("http://{}/api/v1/health", s.addr)).call().is_err());
    assert!(closed_unanswered(&s.addr, b"GET /api/v1/health HTTP/1.1\r\nHost: x\r\n\r\n"));
    let plain =
        Client::connect(&s.graph_addr, Duration::from_secs(20)).and_then(|mut c| c.open_session("root", "nebula"));
    assert!(plain.is_err(), "a plain graph client got a session on a TLS port");
    // Garbage where the TLS hello belongs, and a hello cut short then abandoned.
    assert!(closed_unanswered(&s.graph_addr, &[0x16, 0x03, 0x01, 0xff, 0xff, 1, 2, 3, 4, 5]));
    assert!(closed_unanswered(&s.graph_addr, &[0u8; 4096]));
    assert!(closed_unanswered(&s.addr, b"\x16\x03\x01\x00\x05hello"));

    // Still healthy.
    assert!(tls_get(&s.addr, cert, "/api/v1/health").unwrap().ends_with("ok"));
    // A client that trusts another authority refuses the server's certificate.
    let other = make_certificate(&dir.path().join("other"));
    assert!(tls_get(&s.addr, &other.ca, "/api/v1/health").is_err());
}

fn serve_error(dir: &std::path::Path, extra: &[&str]) -> String {
    let out = Command::new(BIN)
        .args(["serve", "--data-dir", dir.join("data").to_str().unwrap()])
        .args(["--http-addr", &format!("127.0.0.1:{}", free_port())])
        .args(["--graph-addr", &format!("127.0.0.1:{}", free_port())])
        .args(extra)
        .output()
        .unwrap();
    assert!(!out.status.success(), "started with {extra:?}");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_half_or_unreadable_tls_configuration_is_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let certs = make_certificate(&dir.path().join("certs"));
    let (cert, key) = (certs.cert.to_str().unwrap(), certs.key.to_str().unwrap());
    let missing = dir.path().join("missing.pem");
    let missing = missing.to_str().unwrap();
    let empty = dir.path().join("empty.pem");
    std::fs::write(&empty, "").unwrap();
    let empty = empty.to_str().unwrap();

    let e = serve_error(dir.path(), &["--cert-path", cert]);
    assert_eq!(e.trim(), "quiver serve: --cert-path and --key-path go together");
    let e = serve_error(dir.path(), &["--key-path", key]);
    assert_eq!(e.trim(), "quiver serve: --cert-path and --key-path go together");
    let e = serve_error(dir.path(), &["--cert-path", missing, "--key-path", key]);
    assert!(e.starts_with(&format!("quiver serve: cannot read the certificate {missing}: ")), "{e}");
    let e = serve_error(dir.path(), &["--cert-path", empty, "--key-path", key]);
    assert_eq!(e.trim(), format!("quiver serve: the certificate {empty} holds no PEM certificate"));
    let e = serve_error(dir.path(), &["--cert-path", cert, "--key-path", empty]);
    assert!(e.starts_with(&format!("quiver serve: cannot read the private key {empty}: ")), "{e}");
    // The key of another certificate.
    let other_key = make_certificate(&dir.path().join("other")).key;
    let e = serve_error(dir.path(), &["--cert-path", cert, "--key-path", other_key.to_str().unwrap()]);
    let expected =
        format!("quiver serve: the certificate {cert} and the key {} do not make a TLS identity", other_key.display());
    assert!(e.starts_with(&expected), "{e}");
}
