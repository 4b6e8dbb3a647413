"""nebula3-python against a Quiver started with --enable-authorize: a wrong password is refused with
NebulaGraph's error, the right one signs in, and a user's role decides what it may run."""

import pytest
from nebula3.Config import Config
from nebula3.Exception import AuthFailedException
from nebula3.gclient.net import ConnectionPool

from test_nebula3 import Server


@pytest.fixture(scope="module")
def auth_server():
    s = Server("--enable-authorize")
    yield s
    s.stop()


@pytest.fixture(scope="module")
def auth_pool(auth_server):
    p = ConnectionPool()
    assert p.init([("127.0.0.1", auth_server.port)], Config())
    yield p
    p.close()


def test_wrong_and_right_passwords(auth_pool):
    with pytest.raises(AuthFailedException, match="Invalid password"):
        auth_pool.get_session("root", "not-nebula")
    with pytest.raises(AuthFailedException, match="User not exist"):
        auth_pool.get_session("nobody", "nebula")
    with auth_pool.session_context("root", "nebula") as s:
        assert s.execute("SHOW USERS").is_succeeded()


def test_roles_decide_what_runs(auth_pool):
    with auth_pool.session_context("root", "nebula") as s:
        r = s.execute("CREATE USER IF NOT EXISTS reader WITH PASSWORD 'r3ad'; GRANT GUEST ON nba TO reader")
        assert r.is_succeeded(), r.error_msg()
    with auth_pool.session_context("reader", "r3ad") as s:
        r = s.execute('USE nba; FETCH PROP ON player "Tim Duncan" YIELD player.age AS age')
        assert r.is_succeeded(), r.error_msg()
        assert r.row_values(0)[0].as_int() == 42
        r = s.execute('INSERT VERTEX player(name, age) VALUES "x":("x", 1)')
        assert not r.is_succeeded()
        assert r.error_msg() == "PermissionError: No permission to write data."
