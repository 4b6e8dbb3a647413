//! `--enable-authorize` on the running binary: passwords checked at sign-in with NebulaGraph's errors and its
//! lockout, sessions as bearer tokens (a session id works from a new connection, as nebula3-python's reconnect
//! needs) that non-GOD users cannot see or end for others, and the HTTP API signed in with basic auth.

mod support;

use quiver_common::Value;
use quiver_wire::client::Client;
use quiver_wire::graph::{Call, Reply};
use serde_json::{json, Value as J};
use std::collections::BTreeMap;
use std::time::Duration;
use support::*;

const TIMEOUT: Duration = Duration::from_secs(20);

/// Signs in; the session id, or the refusal's code and message.
fn sign_in(s: &Server, user: &str, password: &str) -> Result<i64, (i32, String)> {
    let mut c = Client::connect(&s.graph_addr, TIMEOUT).unwrap();
    c.call(&Call::VerifyClientVersion { version: "3.0.0".into() }).unwrap();
    match c.call(&Call::Authenticate { username: user.into(), password: password.into() }).unwrap() {
        Some(Ok(Reply::Auth(a))) if a.error_code == 0 => Ok(a.session_id.unwrap()),
        Some(Ok(Reply::Auth(a))) => Err((a.error_code, a.error_msg.unwrap_or_default())),
        other => panic!("authenticate answered {other:?}"),
    }
}

/// Runs `stmt` in session `sid` from a fresh connection: `Ok(rows)` or the error's code and message.
fn run(s: &Server, sid: i64, stmt: &str) -> Result<Vec<Vec<Value>>, (i32, String)> {
    let mut c = Client::connect(&s.graph_addr, TIMEOUT).unwrap();
    let r = c.execute(sid, stmt, BTreeMap::new()).unwrap();
    if r.error_code != 0 {
        return Err((r.error_code, r.error_msg.unwrap_or_default()));
    }
    Ok(r.data.map(|d| d.rows()).unwrap_or_default())
}

fn http(s: &Server, credentials: Option<(&str, &str)>, stmt: &str) -> (u16, J) {
    let mut req = agent().post(&format!("http://{}/api/v1/exec", s.addr));
    if let Some((u, p)) = credentials {
        use base64ct::Encoding;
        let token = base64ct::Base64::encode_string(format!("{u}:{p}").as_bytes());
        req = req.set("Authorization", &format!("Basic {token}"));
    }
    match req.send_json(json!({ "stmt": stmt })) {
        Ok(r) => (r.status(), r.into_json().unwrap()),
        Err(ureq::Error::Status(code, r)) => {
            assert_eq!(r.header("WWW-Authenticate"), Some("Basic realm=\"quiver\""));
            (code, r.into_json().unwrap())
        }
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn passwords_lockout_sessions_and_http_with_authorization_on() {
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start_with(
        dir.path(),
        &["--enable-authorize", "--failed-login-attempts", "3", "--password-lock-time-in-secs", "600"],
    );

    // root/nebula exists from the first start; wrong passwords and unknown users get NebulaGraph's errors.
    let root = sign_in(&s, "root", "nebula").unwrap();
    assert_eq!(sign_in(&s, "nobody", "x"), Err((-1001, "User not exist".into())));
    assert_eq!(sign_in(&s, "root", "wrong"), Err((-1001, "Invalid password, remaining attempts: 2".into())));
    // A right password resets the count.
    sign_in(&s, "root", "nebula").unwrap();

    run(&s, root, "CREATE USER bob WITH PASSWORD 'bobpw'; CREATE USER carol WITH PASSWORD 'carolpw'").unwrap();
    run(&s, root, "CREATE SPACE a(vid_type=INT64)").unwrap();
    run(&s, root, "GRANT GUEST ON a TO bob; GRANT GUEST ON a TO carol").unwrap();

    // Lockout after three wrong passwords in a row: even the right one is refused while locked; others unaffected.
    assert_eq!(sign_in(&s, "bob", "x"), Err((-1001, "Invalid password, remaining attempts: 2".into())));
    assert_eq!(sign_in(&s, "bob", "y"), Err((-1001, "Invalid password, remaining attempts: 1".into())));
    let locked = "3 times consecutive incorrect passwords has been input, user name: bob has been locked, try again in";
    let (code, msg) = sign_in(&s, "bob", "z").unwrap_err();
    assert_eq!(code, -1001);
    assert!(msg.starts_with(locked) && msg.ends_with("600 seconds"), "{msg}");
    let (_, msg) = sign_in(&s, "bob", "bobpw").unwrap_err();
    assert!(msg.starts_with(locked), "{msg}");

    // Oversized credentials are refused like any other; the server stays healthy.
    let long = "u".repeat(100_000);
    assert_eq!(sign_in(&s, &long, "x"), Err((-1001, "User not exist".into())));
    let (code, _) = sign_in(&s, "carol", &"p".repeat(1_000_000)).unwrap_err();
    assert_eq!(code, -1001);

    // A session id is a bearer token: it works from another connection.
    let carol = sign_in(&s, "carol", "carolpw").unwrap();
    // (A pipe reads data: a non-GOD user needs a space with a role in it.)
    let rows = run(&s, carol, "USE a; SHOW SESSIONS | YIELD $-.UserName AS u").unwrap();
    assert_eq!(rows, vec![vec![Value::str("carol")]], "a non-GOD user sees only their own sessions");
    let all = run(&s, root, "SHOW SESSIONS | YIELD $-.UserName AS u").unwrap();
    assert!(all.len() >= 3 && all.contains(&vec![Value::str("carol")]), "{all:?}");
    assert_eq!(
        run(&s, carol, &format!("KILL SESSION {root}")),
        Err((-1008, "PermissionError: No permission to kill session".into()))
    );
    assert_eq!(run(&s, root, &format!("KILL SESSION {carol} | YIELD 1 AS x")).map(|_| ()), Ok(()));

    // HTTP: credentials on every request; without or with wrong ones, 401.
    let (code, body) = http(&s, None, "YIELD 1");
    assert_eq!(code, 401);
    assert_eq!(body["errors"][0]["code"], -1001);
    let (code, body) = http(&s, Some(("root", "nope")), "YIELD 1");
    assert_eq!((code, body["errors"][0]["message"].as_str()), (401, Some("Invalid password, remaining attempts: 2")));
    let (code, body) = http(&s, Some(("root", "nebula")), "SHOW USERS");
    assert_eq!(code, 200);
    assert_eq!(body["results"][0]["data"].as_array().unwrap().len(), 3, "{body}");
    // ... and runs as that user.
    let (_, body) = http(&s, Some(("carol", "carolpw")), "SHOW USERS");
    assert_eq!(body["results"][0]["errors"]["code"], -1008, "{body}");
    // Monitoring stays open.
    assert!(agent().get(&format!("http://{}/api/v1/health", s.addr)).call().is_ok());
    let failed = agent()
        .get(&format!("http://{}/stats?stats=num_auth_failed_sessions.sum.600", s.addr))
        .call()
        .unwrap()
        .into_string()
        .unwrap();
    // root wrong, nobody, bob x3 + bob right-while-locked, the long user, carol's long password, and the HTTP wrong
    // password (a request without credentials signs in as no one: refused, not a failed sign-in).
    assert_eq!(failed.trim(), "num_auth_failed_sessions.sum.600=9");
}
