//! Every statement kind, as every role, in every composition (alone, after `USE`, in a pipe, in a set operation,
//! assigned to a variable, under EXPLAIN and PROFILE), against a model of NebulaGraph's grammar and permission table
//! written apart from the engine's own: the model says whether the request is a syntax error (a sentence that may
//! not stand in a pipe, a set operation or an assignment), a permission error (some part of it needs a role the user
//! lacks in the space that part runs in), or allowed (any other answer). Two spaces of different VID types and a user
//! per pair of roles in them: a sentence checked against the wrong space would either pass where the model refuses or
//! hand storage a VID of the wrong type (which panicked).
//!
//! `QUIVER_PERMISSION_SEED` and `QUIVER_PERMISSION_REQUESTS` (default 4,000) change the run; a failure prints its
//! seed and the request.

use quiver_common::rng::Rng;
use quiver_query::{Params, Session};
use quiver_server::Database;

#[derive(Clone, Copy, PartialEq, Debug)]
enum Role {
    Admin,
    Dba,
    User,
    Guest,
}

const ROLES: [Option<Role>; 5] = [None, Some(Role::Admin), Some(Role::Dba), Some(Role::User), Some(Role::Guest)];

fn role_name(r: Role) -> &'static str {
    match r {
        Role::Admin => "ADMIN",
        Role::Dba => "DBA",
        Role::User => "USER",
        Role::Guest => "GUEST",
    }
}

/// What a statement needs, as NebulaGraph's permission table says.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Needs {
    /// Any role in the space it runs in.
    Read,
    /// ADMIN, DBA or USER there.
    WriteData,
    /// ADMIN or DBA there.
    WriteSchema,
    /// GOD.
    WriteSpace,
    /// Any role in the named space (USE).
    UseSpace(usize),
    /// Any role in the current space, if there is one (SHOW TAGS).
    ReadCurrent,
}

/// One statement of the request, as text for the space it is aimed at.
#[derive(Clone)]
struct Sentence {
    text: String,
    needs: Needs,
    /// May stand in a pipe, a set operation or an assignment (NebulaGraph's `traverse_sentence`).
    composable: bool,
    is_match: bool,
}

const SPACES: [&str; 2] = ["ps1", "ps2"];

/// A VID literal of space `s`'s type (ps1: INT64, ps2: FIXED_STRING(8)).
fn vid(s: usize, n: u64) -> String {
    if s == 0 {
        n.to_string()
    } else {
        format!("\"v{n}\"")
    }
}

fn sentence(rng: &mut Rng) -> Sentence {
    // Aimed at either space: a statement aimed at the other space's VID type fails as a semantic error.
    let target = rng.below(2) as usize;
    let v = vid(target, 1 + rng.below(4));
    let w = vid(target, 1 + rng.below(4));
    let (text, needs, composable) = match rng.below(16) {
        0 => (format!("FETCH PROP ON t {v} YIELD t.n AS n"), Needs::Read, true),
        1 => (format!("GO FROM {v} OVER e YIELD dst(edge) AS d"), Needs::Read, true),
        2 => ("YIELD 1 AS d".to_string(), Needs::Read, true),
        3 => ("LOOKUP ON t YIELD id(vertex) AS d".to_string(), Needs::Read, true),
        4 => ("MATCH (a:t) RETURN count(a) AS d".to_string(), Needs::Read, false),
        5 => (format!("INSERT VERTEX t(n) VALUES {v}:({})", rng.below(100)), Needs::WriteData, false),
        6 => (format!("INSERT EDGE e() VALUES {v}->{w}:()"), Needs::WriteData, false),
        7 => (format!("UPDATE VERTEX ON t {v} SET n = n + 1 YIELD n AS d"), Needs::WriteData, true),
        8 => (format!("DELETE EDGE e {v}->{w}"), Needs::WriteData, true),
        9 => (format!("DELETE VERTEX {v}"), Needs::WriteData, true),
        10 => ("CREATE TAG IF NOT EXISTS t2(n int)".to_string(), Needs::WriteSchema, false),
        11 => ("CREATE SPACE IF NOT EXISTS ps1(vid_type = INT64)".to_string(), Needs::WriteSpace, false),
        12 | 13 => (format!("USE {}", SPACES[target]), Needs::UseSpace(target), false),
        14 => ("SHOW TAGS".to_string(), Needs::ReadCurrent, true),
        _ => (format!("GO FROM {v} OVER e YIELD dst(edge) AS d | DELETE VERTEX $-.d"), Needs::WriteData, true),
    };
    let is_match = text.starts_with("MATCH");
    Sentence { text, needs, composable, is_match }
}

/// What the model expects of a request.
#[derive(Debug, PartialEq)]
enum Outcome {
    Syntax,
    Permission,
    Allowed,
}

/// A user's roles in the two spaces, or GOD.
#[derive(Clone, Copy)]
struct Grants {
    god: bool,
    roles: [Option<Role>; 2],
}

impl Grants {
    /// Whether `needs` is met with `current` as the space the sentence runs in.
    fn allows(&self, needs: Needs, current: Option<usize>) -> bool {
        if self.god {
            return true;
        }
        let role = current.and_then(|s| self.roles[s]);
        match needs {
            Needs::Read => role.is_some(),
            Needs::WriteData => matches!(role, Some(Role::Admin | Role::Dba | Role::User)),
            Needs::WriteSchema => matches!(role, Some(Role::Admin | Role::Dba)),
            Needs::WriteSpace => false,
            Needs::UseSpace(s) => self.roles[s].is_some(),
            Needs::ReadCurrent => current.is_none() || role.is_some(),
        }
    }
}

/// A request and the model's outcome for it, with the session starting in `current`.
fn request(rng: &mut Rng, grants: Grants, current: Option<usize>) -> (String, Outcome) {
    let a = sentence(rng);
    let b = sentence(rng);
    let allowed = |ok: bool| if ok { Outcome::Allowed } else { Outcome::Permission };
    match rng.below(7) {
        0 => (a.text.clone(), allowed(grants.allows(a.needs, current))),
        1 => {
            // USE, then a statement in the space it chose.
            let s = rng.below(2) as usize;
            let text = format!("USE {}; {}", SPACES[s], a.text);
            if !grants.allows(Needs::UseSpace(s), current) {
                return (text, Outcome::Permission);
            }
            (text, allowed(grants.allows(a.needs, Some(s))))
        }
        2 => {
            // A pipe: both sides in the session's space; the pipe itself reads.
            let text = format!("{} | {}", a.text, b.text);
            if !(a.composable && b.composable) {
                return (text, Outcome::Syntax);
            }
            let ok = [Needs::Read, a.needs, b.needs].iter().all(|&n| grants.allows(n, current));
            (text, allowed(ok))
        }
        3 => {
            let text = format!("{} UNION {}", a.text, b.text);
            if !(a.composable && b.composable || a.is_match && b.is_match) {
                return (text, Outcome::Syntax);
            }
            let ok = [Needs::Read, a.needs, b.needs].iter().all(|&n| grants.allows(n, current));
            (text, allowed(ok))
        }
        4 => {
            let text = format!("$var = {}", a.text);
            if !a.composable {
                return (text, Outcome::Syntax);
            }
            (text, allowed(grants.allows(Needs::Read, current) && grants.allows(a.needs, current)))
        }
        5 => (format!("EXPLAIN {}", a.text), allowed(grants.allows(a.needs, current))),
        _ => (format!("PROFILE {}", a.text), allowed(grants.allows(a.needs, current))),
    }
}

fn run(db: &Database, session: &mut Session, stmt: &str) {
    if let Err(e) = db.execute(session, stmt, &Params::new()) {
        panic!("setup `{stmt}`: {}", e.message);
    }
}

#[test]
fn every_statement_as_every_role_in_every_composition_matches_the_permission_table() {
    let seed: u64 = std::env::var("QUIVER_PERMISSION_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x05ee_dac1);
    let requests: usize =
        std::env::var("QUIVER_PERMISSION_REQUESTS").ok().and_then(|s| s.parse().ok()).unwrap_or(4_000);
    let mut db = Database::in_memory();
    db.enable_authorize(0, 0);
    let mut root = Session { user: "root".into(), ..Session::default() };
    run(&db, &mut root, "CREATE SPACE ps1(vid_type = INT64); CREATE SPACE ps2(vid_type = FIXED_STRING(8))");
    for (s, name) in SPACES.iter().enumerate() {
        run(&db, &mut root, &format!("USE {name}; CREATE TAG t(n int); CREATE EDGE e(); CREATE TAG INDEX ti ON t(n)"));
        let rows: Vec<String> = (1..=4).map(|n| format!("{}:({n})", vid(s, n))).collect();
        run(&db, &mut root, &format!("INSERT VERTEX t(n) VALUES {}", rows.join(", ")));
        run(&db, &mut root, &format!("INSERT EDGE e() VALUES {}->{}:()", vid(s, 1), vid(s, 2)));
    }
    // A user for every pair of roles in the two spaces.
    let mut users = Vec::new();
    for (i, r1) in ROLES.iter().enumerate() {
        for (j, r2) in ROLES.iter().enumerate() {
            let name = format!("u{i}{j}");
            run(&db, &mut root, &format!("CREATE USER {name} WITH PASSWORD 'pw'"));
            for (s, role) in [(0, r1), (1, r2)] {
                if let Some(role) = role {
                    run(&db, &mut root, &format!("GRANT ROLE {} ON {} TO {name}", role_name(*role), SPACES[s]));
                }
            }
            users.push((name, Grants { god: false, roles: [*r1, *r2] }));
        }
    }
    users.push(("root".into(), Grants { god: true, roles: [None, None] }));

    let mut rng = Rng(seed);
    let mut seen = std::collections::HashMap::<String, usize>::new();
    for _ in 0..requests {
        let (user, grants) = &users[rng.below(users.len() as u64) as usize];
        let current = match rng.below(5) {
            0 => None,
            n => Some((n % 2) as usize),
        };
        let mut session =
            Session { user: user.clone(), space: current.map(|s| SPACES[s].to_string()), ..Session::default() };
        let (text, expected) = request(&mut rng, *grants, current);
        let answer = db.execute(&mut session, &text, &Params::new());
        let got = match &answer {
            Err(e) if e.code.as_i32() == -1004 => Outcome::Syntax,
            Err(e) if e.code.as_i32() == -1008 => Outcome::Permission,
            _ => Outcome::Allowed,
        };
        let detail = answer.as_ref().err().map(|e| e.message.clone()).unwrap_or_else(|| "ok".into());
        assert!(!detail.contains("panicked"), "seed {seed}: {user} in {current:?}: `{text}`: {detail}");
        assert_eq!(got, expected, "seed {seed}: {user} in {current:?}: `{text}`: {detail}");
        let kind = if answer.is_ok() { "ok".to_string() } else { format!("{got:?}") };
        *seen.entry(kind).or_default() += 1;
    }
    // The model's three outcomes all occur, and allowed requests mostly succeed (not only fail another way).
    for kind in ["ok", "Syntax", "Permission"] {
        assert!(seen.get(kind).copied().unwrap_or(0) > requests / 20, "{seen:?}");
    }
}
