//! Seeded random mutations of every statement in the query files, run against the `nba` graph: each must come back
//! as rows or an error within the query deadline (plus slack), never as a panic or a hang, and the database must
//! still answer afterwards. The statements are cut into tokens (with the spacing that followed them) and
//! mutated by deleting, repeating, swapping and replacing tokens, splicing two statements, pushing numbers to their
//! extremes, truncating, and inserting stray characters.
//!
//! `QUIVER_MUTATION_SEED` and `QUIVER_MUTATIONS` (default 20,000) change the run, `QUIVER_MUTATION_SHOW` prints a
//! sample of the refusals; a failure prints its seed and the
//! statement, so it reproduces.

use quiver_common::budget::Limits;
use quiver_common::rng::Rng;
use quiver_query::{Params, Session};
use quiver_server::Database;
use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

const DEADLINE: Duration = Duration::from_secs(2);
/// A statement answered later than its deadline plus this counts as a hang.
const SLACK: Duration = Duration::from_secs(8);

/// Words and values the mutations put in: keywords of every statement family, operators, and the values at the edge
/// of each type. No `DROP`/`CLEAR` here, so the graph under test stays.
const DICTIONARY: &[&str] = &[
    "GO",
    "FROM",
    "OVER",
    "YIELD",
    "STEPS",
    "TO",
    "REVERSELY",
    "BIDIRECT",
    "WHERE",
    "LIMIT",
    "SAMPLE",
    "OFFSET",
    "ORDER BY",
    "GROUP BY",
    "ASC",
    "DESC",
    "DISTINCT",
    "AS",
    "|",
    ";",
    ",",
    ".",
    "$-",
    "$-.id",
    "$^",
    "$$",
    "$var",
    "$a",
    "$p",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    "*",
    "+",
    "-",
    "/",
    "%",
    "==",
    "!=",
    "<",
    ">=",
    "=~",
    "AND",
    "OR",
    "XOR",
    "NOT",
    "IN",
    "CONTAINS",
    "STARTS WITH",
    "IS NULL",
    "IS NOT EMPTY",
    "CASE",
    "WHEN",
    "THEN",
    "ELSE",
    "END",
    "NULL",
    "EMPTY",
    "true",
    "false",
    "UNION",
    "UNION ALL",
    "INTERSECT",
    "MINUS",
    "EXPLAIN",
    "PROFILE",
    "FORMAT=\"dot\"",
    "FETCH PROP ON",
    "LOOKUP ON",
    "INSERT VERTEX",
    "INSERT EDGE",
    "VALUES",
    "UPDATE",
    "UPSERT",
    "SET",
    "DELETE",
    "VERTEX",
    "EDGE",
    "TAG",
    "WITH EDGE",
    "IF NOT EXISTS",
    "SHOW",
    "DESCRIBE",
    "MATCH",
    "RETURN",
    "USE",
    "COUNT(*)",
    "count",
    "collect",
    "sum",
    "avg",
    "std",
    "bit_xor",
    "id($$)",
    "src(edge)",
    "properties($^)",
    "vertex",
    "edge",
    "like",
    "serve",
    "teammate",
    "player",
    "team",
    "like.likeness",
    "$$.player.name",
    "$^.player.age",
    "like._dst",
    "\"Tim Duncan\"",
    "\"\"",
    "'x'",
    "hash(\"a\")",
    "0",
    "1",
    "-1",
    "3",
    "100000000",
    "9223372036854775807",
    "-9223372036854775808",
    "9223372036854775808",
    "1e308",
    "-0.0",
    "0x7fffffffffffffff",
    "date(\"2020-02-30\")",
    "datetime()",
    "duration({years: 1})",
    "timestamp(\"1970-01-01T00:00:00\")",
    "range(1, 100000000)",
    "[1,2,3][-9]",
    "\"\\u0000\"",
    "é",
    "🦀",
];

const EXTREME_NUMBERS: &[&str] = &[
    "0",
    "-1",
    "9223372036854775807",
    "-9223372036854775808",
    "99999999999999999999",
    "1e308",
    "-1e-308",
    "4294967296",
    "2147483648",
    "100000000",
];

const STRAY: &[char] =
    &['\0', '\n', '"', '\'', '`', '\\', '$', '(', ')', '[', '{', ';', '|', '@', '#', '→', '\u{feff}', '\u{7f}'];

/// Every statement of every query file (`dataset`, `rules`, `wait` lines and expected rows are not statements).
fn corpus() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("queries");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "test"))
        .collect();
    files.extend(std::fs::read_dir(dir.join("rules")).unwrap().map(|e| e.unwrap().path()));
    files.sort();
    let mut out = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let mut i = 0;
        while i < lines.len() {
            let header = lines[i].trim();
            i += 1;
            if !(header.starts_with("statement") || header.starts_with("query") || header == "plan") {
                continue;
            }
            let mut stmt = Vec::new();
            while i < lines.len() && !lines[i].trim().is_empty() && lines[i].trim_end() != "----" {
                stmt.push(lines[i]);
                i += 1;
            }
            while i < lines.len() && !lines[i].trim().is_empty() {
                i += 1;
            }
            let stmt = stmt.join("\n");
            let upper = stmt.to_uppercase();
            // Statements that remove the graph under test, or wait on background jobs, are left out.
            if upper.contains("DROP SPACE")
                || upper.contains("CLEAR SPACE")
                || upper.contains("SUBMIT JOB")
                || upper.contains("USE ")
            {
                continue;
            }
            out.push(stmt);
        }
    }
    out
}

/// Tokens with the spacing that followed each, so joining them gives the statement back.
fn tokens(s: &str) -> Vec<String> {
    let chars: Vec<char> = s.chars().collect();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let start = i;
        let c = chars[i];
        if c == '"' || c == '\'' {
            i += 1;
            while i < chars.len() && chars[i] != c {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i = (i + 1).min(chars.len());
        } else if c.is_alphanumeric() || c == '_' || c == '$' {
            i += 1;
            while i < chars.len()
                && (chars[i].is_alphanumeric()
                    || chars[i] == '_'
                    || chars[i] == '.'
                    || chars[i] == '-' && chars[i - 1] == '$')
            {
                i += 1;
            }
        } else {
            i += 1;
        }
        while i < chars.len() && chars[i].is_whitespace() {
            i += 1;
        }
        out.push(chars[start..i.min(chars.len())].iter().collect());
    }
    out
}

fn pick<'a>(rng: &mut Rng, xs: &'a [&'a str]) -> &'a str {
    xs[rng.below(xs.len() as u64) as usize]
}

/// What a token is, for mutations that keep a statement's shape: a token is swapped for another of its kind.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    Number,
    Str,
    Word,
    Symbol,
}

fn kind(token: &str) -> Kind {
    let t = token.trim();
    match t.chars().next() {
        Some('"' | '\'') => Kind::Str,
        Some(c) if c.is_ascii_digit() => Kind::Number,
        Some(c) if c.is_alphanumeric() || c == '_' || c == '$' => Kind::Word,
        _ => Kind::Symbol,
    }
}

/// Names (tags, edges, properties, functions, variables), numbers and strings of the corpus, by kind, plus the
/// extreme numbers. Keywords (any word the corpus spells in capitals) and symbols are left out: swapping those
/// mostly makes syntax errors, which the other mutations make plenty of.
fn pools(corpus: &[String]) -> std::collections::HashMap<Kind, Vec<String>> {
    let all: Vec<String> = corpus.iter().flat_map(|s| tokens(s)).map(|t| t.trim().to_string()).collect();
    let keywords: std::collections::HashSet<String> =
        all.iter().filter(|t| t.len() > 1 && t.chars().all(|c| c.is_ascii_uppercase() || c == '_')).cloned().collect();
    let mut pools: std::collections::HashMap<Kind, std::collections::BTreeSet<String>> = Default::default();
    for t in all.into_iter().chain(EXTREME_NUMBERS.iter().map(|s| s.to_string())) {
        let k = kind(&t);
        if k == Kind::Symbol || k == Kind::Word && keywords.contains(&t.to_uppercase()) {
            continue;
        }
        pools.entry(k).or_default().insert(t);
    }
    pools.into_iter().map(|(k, v)| (k, v.into_iter().collect())).collect()
}

/// One or two tokens of a statement from `bases` replaced by others of the same kind: mostly still parses, so it
/// reaches the validator and the executor with names, values and operators they did not expect there.
fn mutate_in_kind(rng: &mut Rng, bases: &[String], pools: &std::collections::HashMap<Kind, Vec<String>>) -> String {
    let base = &bases[rng.below(bases.len() as u64) as usize];
    let mut toks = tokens(base);
    let open: Vec<usize> = (0..toks.len())
        .filter(|&i| pools.get(&kind(&toks[i])).is_some_and(|p| p.contains(&toks[i].trim().to_string())))
        .collect();
    for _ in 0..1 + rng.below(2) {
        let Some(&at) = open.get(rng.below(open.len().max(1) as u64) as usize) else { break };
        let t = &toks[at];
        let pool = &pools[&kind(t)];
        let spacing = &t[t.trim_end().len()..];
        toks[at] =
            format!("{}{}", pool[rng.below(pool.len() as u64) as usize], if spacing.is_empty() { "" } else { spacing });
    }
    toks.concat()
}

/// A mutation of a statement from `bases`, spliced with tokens of `corpus`.
fn mutate(rng: &mut Rng, bases: &[String], corpus: &[String]) -> String {
    let base = &bases[rng.below(bases.len() as u64) as usize];
    let mut toks = tokens(base);
    for _ in 0..1 + rng.below(3) {
        if toks.is_empty() {
            toks.push(format!("{} ", pick(rng, DICTIONARY)));
        }
        let n = toks.len() as u64;
        let at = rng.below(n) as usize;
        match rng.below(10) {
            0 => {
                toks.remove(at);
            }
            1 => {
                let t = toks[at].clone();
                toks.insert(at, t);
            }
            2 => {
                let other = rng.below(n) as usize;
                toks.swap(at, other);
            }
            3 => toks[at] = format!("{} ", pick(rng, DICTIONARY)),
            4 => toks.insert(at, format!(" {} ", pick(rng, DICTIONARY))),
            5 => {
                let donor = tokens(&corpus[rng.below(corpus.len() as u64) as usize]);
                let from = rng.below(donor.len().max(1) as u64) as usize;
                toks.truncate(at);
                toks.extend(donor.into_iter().skip(from));
            }
            6 => {
                let numbers: Vec<usize> = (0..toks.len()).filter(|&i| toks[i].trim().parse::<f64>().is_ok()).collect();
                let i = if numbers.is_empty() { at } else { numbers[rng.below(numbers.len() as u64) as usize] };
                toks[i] = format!("{} ", pick(rng, EXTREME_NUMBERS));
            }
            7 => toks.truncate(at),
            8 => {
                let c = STRAY[rng.below(STRAY.len() as u64) as usize];
                let t = &mut toks[at];
                let cut =
                    t.char_indices().map(|(i, _)| i).nth(rng.below(t.chars().count() as u64) as usize).unwrap_or(0);
                t.insert(cut, c);
            }
            _ => {
                let other = &corpus[rng.below(corpus.len() as u64) as usize];
                let glue = pick(rng, &[" | ", "; ", " UNION ", " MINUS ", "EXPLAIN ", "PROFILE "]);
                if glue.ends_with(' ') && !glue.starts_with(' ') {
                    toks.insert(0, glue.to_string());
                } else {
                    toks.push(format!("{glue}{other}"));
                }
            }
        }
    }
    toks.concat()
}

enum Outcome {
    Answered { ok: bool, message: String },
    Panicked(String),
}

/// One database on one thread with the server's stack size; statements go in, outcomes come out.
fn start_worker(db: Database) -> (mpsc::Sender<String>, mpsc::Receiver<Outcome>) {
    let (stmt_tx, stmt_rx) = mpsc::channel::<String>();
    let (out_tx, out_rx) = mpsc::channel();
    std::thread::Builder::new()
        .stack_size(16 << 20)
        .spawn(move || {
            let params = Params::new();
            for stmt in stmt_rx {
                let mut session = Session { space: Some("nba".into()), ..Session::default() };
                let r =
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| db.execute(&mut session, &stmt, &params)));
                let outcome = match r {
                    Ok(Ok(_)) => Outcome::Answered { ok: true, message: String::new() },
                    Ok(Err(e)) => Outcome::Answered { ok: false, message: e.message },
                    Err(p) => Outcome::Panicked(
                        p.downcast_ref::<String>()
                            .cloned()
                            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                            .unwrap_or_default(),
                    ),
                };
                if out_tx.send(outcome).is_err() {
                    return;
                }
            }
        })
        .unwrap();
    (stmt_tx, out_rx)
}

#[test]
fn mutated_statements_never_panic_or_hang() {
    let seed: u64 = std::env::var("QUIVER_MUTATION_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x5eed_0f_9a11);
    let count: usize = std::env::var("QUIVER_MUTATIONS").ok().and_then(|s| s.parse().ok()).unwrap_or(20_000);
    let corpus = corpus();
    assert!(corpus.len() > 500, "the query files hold only {} statements", corpus.len());

    let mut db = Database::in_memory();
    db.engine.limits = Limits { timeout: DEADLINE, memory_bytes: 256 << 20 };
    quiver_server::loader::load(&db, &quiver_tests::datasets_dir().join("nba")).unwrap();
    let (tx, rx) = start_worker(db);

    // Most mutations are refused by the parser or the validator; starting four in five from statements the
    // graph answers as they are keeps enough of them executing.
    let mut answered = Vec::new();
    for stmt in &corpus {
        tx.send(stmt.clone()).unwrap();
        if let Outcome::Answered { ok: true, .. } =
            rx.recv_timeout(DEADLINE + SLACK).expect("an original statement hangs")
        {
            answered.push(stmt.clone());
        }
    }
    assert!(answered.len() > 200, "only {} of the originals run on nba", answered.len());

    let pools = pools(&corpus);
    let mut rng = Rng(seed);
    let (mut ok, mut refused, mut slowest) = (0usize, 0usize, Duration::ZERO);
    let mut failures = Vec::new();
    for n in 0..count {
        let bases = if rng.below(5) == 0 { &corpus } else { &answered };
        let stmt =
            if rng.below(2) == 0 { mutate(&mut rng, bases, &corpus) } else { mutate_in_kind(&mut rng, bases, &pools) };
        let started = Instant::now();
        tx.send(stmt.clone()).unwrap();
        match rx.recv_timeout(DEADLINE + SLACK) {
            Err(_) => panic!(
                "seed {seed}, mutation {n}: no answer after {:?} to\n{stmt}\n\nfailures before it:\n{}",
                DEADLINE + SLACK,
                failures.join("\n\n")
            ),
            Ok(Outcome::Panicked(msg)) => failures.push(format!("mutation {n}: panic `{msg}` on\n{stmt}")),
            Ok(Outcome::Answered { ok: true, .. }) => ok += 1,
            Ok(Outcome::Answered { ok: false, message }) => {
                refused += 1;
                if std::env::var_os("QUIVER_MUTATION_SHOW").is_some() && n % 500 == 0 {
                    eprintln!("REFUSED {stmt}\n   => {message}");
                }
                if message.contains("internal error") || message.is_empty() {
                    failures.push(format!("mutation {n}: error without a reason `{message}` on\n{stmt}"));
                }
            }
        }
        slowest = slowest.max(started.elapsed());
    }
    eprintln!(
        "{count} mutated statements from {} originals ({} of them answered on nba; seed {seed}): {ok} answered, {refused} refused, slowest {slowest:?}",
        corpus.len(),
        answered.len()
    );
    assert!(failures.is_empty(), "seed {seed}: {} failure(s):\n{}", failures.len(), failures.join("\n\n"));

    // The database still answers after all that (no lock left poisoned, no thread stuck).
    tx.send("GO FROM \"Tony Parker\" OVER teammate YIELD teammate._dst AS d | ORDER BY $-.d | LIMIT 1".into()).unwrap();
    match rx.recv_timeout(DEADLINE + SLACK).unwrap() {
        Outcome::Answered { ok: true, .. } => {}
        Outcome::Answered { message, .. } => panic!("the database refuses a plain GO afterwards: {message}"),
        Outcome::Panicked(msg) => panic!("the database panics on a plain GO afterwards: {msg}"),
    }
}
