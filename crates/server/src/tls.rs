//! TLS on the graph and HTTP ports (`--cert-path`, `--key-path`: NebulaGraph's `cert_path`, `key_path` with
//! `enable_graph_ssl`), with rustls and its ring provider. A port started with TLS serves only TLS: a plain client's
//! first bytes are not a TLS hello, so its handshake fails and the connection is closed unserved.

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpStream;
use tokio_rustls::rustls;
use tokio_rustls::server::TlsStream;
use tokio_rustls::TlsAcceptor;

/// The server side of TLS, shared by every connection of a port.
#[derive(Clone)]
pub struct Tls {
    acceptor: TlsAcceptor,
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Tls")
    }
}

impl Tls {
    /// Reads a PEM certificate chain and its private key.
    pub fn load(cert_path: &Path, key_path: &Path) -> Result<Tls, String> {
        let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert_path)
            .and_then(|certs| certs.collect::<Result<_, _>>())
            .map_err(|e| format!("cannot read the certificate {}: {e}", cert_path.display()))?;
        if certs.is_empty() {
            return Err(format!("the certificate {} holds no PEM certificate", cert_path.display()));
        }
        let key = PrivateKeyDer::from_pem_file(key_path)
            .map_err(|e| format!("cannot read the private key {}: {e}", key_path.display()))?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("TLS: {e}"))?
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .map_err(|e| {
                format!(
                    "the certificate {} and the key {} do not make a TLS identity: {e}",
                    cert_path.display(),
                    key_path.display()
                )
            })?;
        Ok(Tls { acceptor: TlsAcceptor::from(Arc::new(config)) })
    }

    /// The handshake of one connection, within `timeout`.
    pub async fn accept(&self, stream: TcpStream, timeout: Duration) -> Result<TlsStream<TcpStream>, String> {
        match tokio::time::timeout(timeout, self.acceptor.accept(stream)).await {
            Ok(Ok(s)) => Ok(s),
            Ok(Err(e)) => Err(format!("TLS handshake failed: {e}")),
            Err(_) => Err(format!("TLS handshake did not finish within {timeout:?}")),
        }
    }
}
