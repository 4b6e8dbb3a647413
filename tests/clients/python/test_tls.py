"""nebula3-python's `SSL_config` against a Quiver serving TLS with a certificate this test makes (a test authority
and a server certificate it signed, with the openssl CLI); a plain client on the same port gets no session."""

import ssl
import subprocess
import tempfile
import urllib.request
from pathlib import Path

import pytest
from nebula3.Config import Config, SSL_config
from nebula3.gclient.net import ConnectionPool

from test_nebula3 import Server


def make_certs(d):
    def openssl(*args):
        subprocess.run(["openssl", *args], cwd=d, check=True, capture_output=True)

    (d / "leaf.ext").write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n")
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=quiver-test-ca",
            "-keyout", "ca.key", "-out", "ca.pem")
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost", "-keyout", "key.pem", "-out", "leaf.csr")
    openssl("x509", "-req", "-in", "leaf.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-days", "2",
            "-extfile", "leaf.ext", "-out", "cert.pem")
    return d / "ca.pem", d / "cert.pem", d / "key.pem"


class TlsServer(Server):
    def __init__(self, certs):
        ca, cert, key = certs
        self.ca = ca
        super().__init__("--cert-path", str(cert), "--key-path", str(key))

    def health_url(self):
        return f"https://127.0.0.1:{self.http}/api/v1/health"

    def probe(self):
        ctx = ssl.create_default_context(cafile=str(self.ca))
        urllib.request.urlopen(self.health_url(), context=ctx, timeout=1)


@pytest.fixture(scope="module")
def tls_server():
    d = tempfile.TemporaryDirectory()
    s = TlsServer(make_certs(Path(d.name)))
    yield s
    s.stop()
    d.cleanup()


def test_a_session_over_tls(tls_server):
    conf = SSL_config()
    conf.ca_certs = str(tls_server.ca)
    pool = ConnectionPool()
    assert pool.init([("127.0.0.1", tls_server.port)], Config(), conf)
    with pool.session_context("root", "nebula") as s:
        r = s.execute('USE nba; FETCH PROP ON player "Tim Duncan" YIELD player.age AS age')
        assert r.is_succeeded(), r.error_msg()
        assert r.row_values(0)[0].as_int() == 42
    pool.close()
    ctx = ssl.create_default_context(cafile=str(tls_server.ca))
    assert urllib.request.urlopen(tls_server.health_url(), context=ctx, timeout=10).read() == b"ok"


def test_a_plain_client_gets_no_session(tls_server):
    pool = ConnectionPool()
    try:
        ok = pool.init([("127.0.0.1", tls_server.port)], Config())
    except Exception:
        ok = False
    if ok:
        with pytest.raises(Exception):
            pool.get_session("root", "nebula")
    pool.close()
