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
use quiver_common::limits::{EXPR_DEPTH_MAX, QUERY_THREAD_STACK_BYTES, SENTENCE_DEPTH_MAX, STATEMENT_BYTES_MAX};
use quiver_common::rng::Rng;
use quiver_common::Value;
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
// Kept as written, several to a line: rustfmt puts each item of a table of strings this long on a line of its own.
#[rustfmt::skip]
const DICTIONARY: &[&str] = &[
    "GO", "FROM", "OVER", "YIELD", "STEPS", "TO", "REVERSELY", "BIDIRECT", "WHERE", "LIMIT", "SAMPLE", "OFFSET",
    "ORDER BY", "GROUP BY", "ASC", "DESC", "DISTINCT", "AS", "|", ";", ",", ".", "$-", "$-.id", "$^", "$$", "$var",
    "$a", "$p", "(", ")", "[", "]", "{", "}", "*", "+", "-", "/", "%", "==", "!=", "<", ">=", "=~", "AND", "OR", "XOR",
    "NOT", "IN", "CONTAINS", "STARTS WITH", "IS NULL", "IS NOT EMPTY", "CASE", "WHEN", "THEN", "ELSE", "END", "NULL",
    "EMPTY", "true", "false", "UNION", "UNION ALL", "INTERSECT", "MINUS", "EXPLAIN", "PROFILE", "FORMAT=\"dot\"",
    "FETCH PROP ON", "LOOKUP ON", "INSERT VERTEX", "INSERT EDGE", "VALUES", "UPDATE", "UPSERT", "SET", "DELETE",
    "VERTEX", "EDGE", "TAG", "WITH EDGE", "IF NOT EXISTS", "SHOW", "DESCRIBE", "MATCH", "RETURN", "USE", "COUNT(*)",
    "count", "collect", "sum", "avg", "std", "bit_xor", "id($$)", "src(edge)", "properties($^)", "vertex", "edge",
    "like", "serve", "teammate", "player", "team", "like.likeness", "$$.player.name", "$^.player.age", "like._dst",
    "\"Tim Duncan\"", "\"\"", "'x'", "hash(\"a\")", "0", "1", "-1", "3", "100000000", "9223372036854775807",
    "-9223372036854775808", "9223372036854775808", "1e308", "-0.0", "0x7fffffffffffffff", "date(\"2020-02-30\")",
    "datetime()", "duration({years: 1})", "timestamp(\"1970-01-01T00:00:00\")", "range(1, 100000000)", "[1,2,3][-9]",
    "\"\\u0000\"", "é", "🦀",
];

// One line, as above.
#[rustfmt::skip]
const EXTREME_NUMBERS: &[&str] = &[
    "0", "-1", "9223372036854775807", "-9223372036854775808", "99999999999999999999", "1e308", "-1e-308", "4294967296",
    "2147483648", "100000000",
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
            // Statements that remove the graph under test, wait on background jobs, or change the engine's own
            // bounds (UPDATE CONFIGS: a mutated memory bound of a few bytes fails every later query) are left out.
            if upper.contains("DROP SPACE")
                || upper.contains("CONFIGS")
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
    Answered { ok: bool, message: String, rows: Vec<Vec<Value>> },
    Panicked(String),
}

/// The `nba` graph with the deadline and memory bound of these tests, on a worker thread.
fn nba_worker() -> (mpsc::Sender<String>, mpsc::Receiver<Outcome>) {
    let db = Database::in_memory();
    db.engine.set_limits(Limits { timeout: DEADLINE, memory_bytes: 256 << 20 });
    quiver_server::loader::load(&db, &quiver_tests::datasets_dir().join("nba")).unwrap();
    start_worker(db)
}

/// One database on one thread with the server's stack size; statements go in, outcomes come out.
fn start_worker(db: Database) -> (mpsc::Sender<String>, mpsc::Receiver<Outcome>) {
    let (stmt_tx, stmt_rx) = mpsc::channel::<String>();
    let (out_tx, out_rx) = mpsc::channel();
    std::thread::Builder::new()
        .stack_size(QUERY_THREAD_STACK_BYTES)
        .spawn(move || {
            let params = Params::new();
            for stmt in stmt_rx {
                let mut session = Session { space: Some("nba".into()), ..Session::default() };
                let r =
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| db.execute(&mut session, &stmt, &params)));
                let outcome = match r {
                    Ok(Ok(d)) => Outcome::Answered { ok: true, message: String::new(), rows: d.into_rows() },
                    Ok(Err(e)) => Outcome::Answered { ok: false, message: e.message, rows: Vec::new() },
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
    let seed: u64 = std::env::var("QUIVER_MUTATION_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x005e_ed0f_9a11);
    let count: usize = std::env::var("QUIVER_MUTATIONS").ok().and_then(|s| s.parse().ok()).unwrap_or(20_000);
    let corpus = corpus();
    assert!(corpus.len() > 500, "the query files hold only {} statements", corpus.len());

    let (tx, rx) = nba_worker();

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
            Ok(Outcome::Answered { ok: false, message, .. }) => {
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

// ---- long and deep statements ----
//
// Generated, not mutated: chains of every operator, set operation and pipe, and nested literals, calls, CASEs and
// brackets, each at the lengths just below, at and just above the parser's bound (`EXPR_DEPTH_MAX` for an
// expression's height, `SENTENCE_DEPTH_MAX` for a statement's tree of pipes and set operations) and far above it.
// They run on the worker above (a query thread's stack, the same deadline); within the bounds they must answer,
// with the right rows where those are known, and above them come back as the parser's depth error.

/// Every binary operator the parser knows, as written between two operands.
// Several to a line: rustfmt puts each item of a table of strings this long on a line of its own.
#[rustfmt::skip]
const BINARY_OPERATORS: &[&str] = &[
    "+", "-", "*", "/", "%", "==", "!=", "<>", "<", "<=", ">", ">=", "=~", "IN", "NOT IN", "CONTAINS", "NOT CONTAINS",
    "STARTS WITH", "ENDS WITH", "NOT STARTS WITH", "NOT ENDS WITH", "AND", "OR", "XOR", "&&", "||",
];

/// The operands chained: a constant of each kind, properties of the source and destination vertices and of the edge
/// (only in a GO), and lists. A list literal is a node above its items, so it stands two high.
#[derive(Clone, Copy, PartialEq)]
enum Operand {
    Int,
    Str,
    Bool,
    Prop,
    List,
}

impl Operand {
    const ALL: [Operand; 5] = [Operand::Int, Operand::Str, Operand::Bool, Operand::Prop, Operand::List];

    fn text(self, i: usize) -> &'static str {
        match self {
            Operand::Int => "1",
            Operand::Str => "\"ab\"",
            Operand::Bool => "true",
            Operand::Prop => ["$$.player.name", "$^.player.age", "like.likeness"][i % 3],
            Operand::List => "[1, 2]",
        }
    }

    fn height(self) -> usize {
        if self == Operand::List {
            2
        } else {
            1
        }
    }
}

/// Where a generated expression stands in its statement.
#[derive(Clone, Copy, Debug)]
enum Place {
    /// `YIELD e AS c`
    Yield,
    /// `GO FROM "Tim Duncan" OVER like YIELD e AS c`: evaluated once per edge.
    GoYield,
    /// `GO FROM "Tim Duncan" OVER like WHERE e YIELD like._dst AS id`
    GoWhere,
}

impl Place {
    /// The statement around `e`, and the byte where `e` starts in it.
    fn around(self, e: &str) -> (String, usize) {
        let (before, after) = match self {
            Place::Yield => ("YIELD ", " AS c"),
            Place::GoYield => ("GO FROM \"Tim Duncan\" OVER like YIELD ", " AS c"),
            Place::GoWhere => ("GO FROM \"Tim Duncan\" OVER like WHERE ", " YIELD like._dst AS id"),
        };
        (format!("{before}{e}{after}"), before.len())
    }
}

/// What a generated statement must come back as.
enum Expect {
    /// The parser's error for an expression over `EXPR_DEPTH_MAX`, quoting the statement from byte `at` (where the
    /// outermost expression starts).
    ExprTooDeep { at: usize },
    /// The parser's error for a sentence tree over `SENTENCE_DEPTH_MAX`, quoting the statement from byte `at`.
    SentenceTooDeep { at: usize },
    /// Rows, or an error with a reason other than depth (a type error, an unknown function).
    Parsed,
    /// Rows, any.
    Answered,
    /// An error starting with this.
    Refused(String),
    /// These rows in any order, each as its values joined by ", ".
    Rows(Vec<String>),
}

/// Which bound a family of statements runs into.
#[derive(Clone, Copy)]
enum Bound {
    Expr,
    Sentence,
}

fn expr_too_deep() -> String {
    format!("SyntaxError: The above expression's depth exceeds the maximum depth:{EXPR_DEPTH_MAX} near `")
}

fn sentence_too_deep() -> String {
    format!(
        "SyntaxError: The above statement's pipes and set operations exceed the maximum depth:{SENTENCE_DEPTH_MAX} near `"
    )
}

/// At most 300 characters of `s`, for messages.
fn head(s: &str) -> String {
    if s.chars().count() <= 300 {
        return s.to_string();
    }
    format!("{}... ({} bytes)", s.chars().take(300).collect::<String>(), s.len())
}

/// Each row as its values joined by ", ".
fn render(rows: &[Vec<Value>]) -> Vec<String> {
    rows.iter().map(|r| r.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(", ")).collect()
}

fn rows(value: impl ToString, n: usize) -> Expect {
    Expect::Rows(vec![value.to_string(); n])
}

/// `n` items joined by `sep`.
fn join<'a>(n: usize, sep: &str, item: impl Fn(usize) -> &'a str) -> String {
    let mut s = String::new();
    for i in 0..n {
        if i > 0 {
            s.push_str(sep);
        }
        s.push_str(item(i));
    }
    s
}

/// `inner` inside `n` of `open` ... `close`.
fn nest(open: &str, inner: &str, close: &str, n: usize) -> String {
    format!("{}{inner}{}", open.repeat(n), close.repeat(n))
}

/// Whether `outcome` is what `expect` asks for.
fn check(expect: &Expect, stmt: &str, outcome: Outcome) -> Result<(), String> {
    let (ok, message, rows) = match outcome {
        Outcome::Panicked(msg) => return Err(format!("panic `{msg}`")),
        Outcome::Answered { ok, message, rows } => (ok, message, rows),
    };
    if !ok && (message.is_empty() || message.contains("internal error")) {
        return Err(format!("error without a reason `{message}`"));
    }
    let refused_as = |prefix: String, at: usize| {
        if ok {
            return Err(format!("answered {} row(s), expected `{prefix}...'`", rows.len()));
        }
        let Some(near) = message.strip_prefix(&prefix).and_then(|m| m.strip_suffix('\'')) else {
            return Err(format!("refused as `{}`, expected `{prefix}...'`", head(&message)));
        };
        // The quoted text is where the tree that is too deep starts, at most 80 bytes of it.
        if near.is_empty() || near.len() > 80 || !stmt[at..].starts_with(near) {
            return Err(format!("the depth error quotes `{near}`, not the start of the tree `{}`", head(&stmt[at..])));
        }
        Ok(())
    };
    match expect {
        Expect::ExprTooDeep { at } => refused_as(expr_too_deep(), *at),
        Expect::SentenceTooDeep { at } => refused_as(sentence_too_deep(), *at),
        _ if !ok && message.contains("the maximum depth:") => Err(format!("refused within the bound: {message}")),
        Expect::Refused(prefix) if !ok && message.starts_with(prefix.as_str()) => Ok(()),
        Expect::Refused(prefix) => {
            Err(format!("{} row(s) or `{}` where `{prefix}...` was expected", rows.len(), head(&message)))
        }
        Expect::Parsed => Ok(()),
        _ if !ok => Err(format!("refused: {}", head(&message))),
        Expect::Answered => Ok(()),
        Expect::Rows(want) => {
            let (mut got, mut want) = (render(&rows), want.clone());
            got.sort();
            want.sort();
            if got == want {
                Ok(())
            } else {
                Err(format!("rows {} where {} were expected", head(&format!("{got:?}")), head(&format!("{want:?}"))))
            }
        }
    }
}

/// Generated statements through the nba worker, one at a time; a hang stops the test at once, every other failure is
/// collected. `QUIVER_MUTATION_SHOW` prints each statement before it is sent (so a crash of the process names it).
struct Prober {
    tx: mpsc::Sender<String>,
    rx: mpsc::Receiver<Outcome>,
    failures: Vec<String>,
    sent: usize,
    /// Statements answered with rows, refused for a reason other than depth, and refused for depth.
    answered: usize,
    refused: usize,
    too_deep: usize,
    slowest: (Duration, String),
    show: bool,
}

impl Prober {
    fn new() -> Prober {
        let (tx, rx) = nba_worker();
        let show = std::env::var_os("QUIVER_MUTATION_SHOW").is_some();
        Prober {
            tx,
            rx,
            failures: Vec::new(),
            sent: 0,
            answered: 0,
            refused: 0,
            too_deep: 0,
            slowest: (Duration::ZERO, String::new()),
            show,
        }
    }

    fn ask(&mut self, family: &str, stmt: &str) -> Outcome {
        // All within the statement limit but one, a byte over it on purpose.
        assert!(stmt.len() <= STATEMENT_BYTES_MAX + 1, "{family}: a generated statement is {} bytes", stmt.len());
        if self.show {
            eprintln!("{family} ({} bytes): {}", stmt.len(), head(stmt));
        }
        let started = Instant::now();
        self.tx.send(stmt.to_string()).unwrap();
        let outcome = self.rx.recv_timeout(DEADLINE + SLACK).unwrap_or_else(|_| {
            panic!("{family}: no answer after {:?} to\n{}", DEADLINE + SLACK, head(stmt));
        });
        self.sent += 1;
        match &outcome {
            Outcome::Answered { ok: true, .. } => self.answered += 1,
            Outcome::Answered { message, .. } if message.contains("the maximum depth:") => self.too_deep += 1,
            Outcome::Answered { .. } => self.refused += 1,
            Outcome::Panicked(_) => {}
        }
        if started.elapsed() > self.slowest.0 {
            self.slowest = (started.elapsed(), format!("{family}: {}", head(stmt)));
        }
        outcome
    }

    /// The rows of a statement that must answer.
    fn rows_of(&mut self, stmt: &str) -> Vec<String> {
        match self.ask("setup", stmt) {
            Outcome::Answered { ok: true, rows, .. } => render(&rows),
            Outcome::Answered { message, .. } => panic!("{stmt}: {message}"),
            Outcome::Panicked(msg) => panic!("{stmt}: panic {msg}"),
        }
    }

    fn probe(&mut self, family: &str, stmt: &str, expect: Expect) {
        let outcome = self.ask(family, stmt);
        if let (true, Outcome::Answered { ok: false, message, .. }) = (self.show, &outcome) {
            eprintln!("    => {}", head(message));
        }
        if let Err(why) = check(&expect, stmt, outcome) {
            self.failures.push(format!("{family}, {} bytes: {why}\n    on {}", stmt.len(), head(stmt)));
        }
    }

    /// A family at the lengths just below, at and just above its bound (`longest` is the longest it may be) and at
    /// `far`: `make(n)` gives the statement of length `n` and the byte where its bounded tree starts, `within(n)`
    /// what it answers while within the bound.
    fn around(
        &mut self,
        family: &str,
        bound: Bound,
        longest: usize,
        far: usize,
        make: impl Fn(usize) -> (String, usize),
        within: impl Fn(usize) -> Expect,
    ) {
        for n in [longest - 1, longest, longest + 1, far] {
            let (stmt, at) = make(n);
            let expect = match bound {
                _ if n <= longest => within(n),
                Bound::Expr => Expect::ExprTooDeep { at },
                Bound::Sentence => Expect::SentenceTooDeep { at },
            };
            self.probe(&format!("{family} x{n}"), &stmt, expect);
        }
    }

    /// Fails on the failures collected; then the database must still answer.
    fn finish(mut self, what: &str) {
        eprintln!(
            "{what}: {} statements, {} answered, {} refused for depth, {} for another reason; slowest {:?} ({})",
            self.sent, self.answered, self.too_deep, self.refused, self.slowest.0, self.slowest.1
        );
        assert!(self.failures.is_empty(), "{} failure(s):\n{}", self.failures.len(), self.failures.join("\n"));
        assert_eq!(self.rows_of("YIELD 1"), vec!["1"], "the database still answers afterwards");
    }
}

/// Terms in a chain far above the expression bound.
const FAR_TERMS: usize = 30_000;
/// Sentences in a chain far above the sentence bound (10,000 pipes or set operations).
const FAR_SENTENCES: usize = 10_001;
/// Brackets, lists, calls or CASEs nested far above the bounds.
const FAR_NESTING: usize = 100_000;

/// The value of a chain of `n` operands with `op` between them, where it is known.
fn chain_value(op: &str, operand: Operand, n: usize) -> Option<String> {
    Some(match (op, operand) {
        ("+", Operand::Int) => n.to_string(),
        ("-", Operand::Int) => (2 - n as i64).to_string(),
        ("*" | "/", Operand::Int) => "1".to_string(),
        ("%", Operand::Int) => "0".to_string(),
        ("+", Operand::Str) => format!("\"{}\"", "ab".repeat(n)),
        ("+", Operand::List) => format!("[{}]", vec!["1, 2"; n].join(", ")),
        ("AND" | "&&" | "OR" | "||" | "==", Operand::Bool) => "true".to_string(),
        // true XOR true is false, and so is true != true: the value turns at each step.
        ("XOR" | "!=" | "<>", Operand::Bool) => (n % 2 == 1).to_string(),
        _ => return None,
    })
}

/// `e op e op ... op e`, left-deep: as tall as it is long.
fn binary_chains(p: &mut Prober) {
    for op in BINARY_OPERATORS {
        for operand in Operand::ALL {
            let places: &[Place] =
                if operand == Operand::Prop { &[Place::GoYield, Place::GoWhere] } else { &[Place::Yield] };
            for &place in places {
                let sep = format!(" {op} ");
                p.around(
                    &format!("chain of {op} over {} in {place:?}", operand.text(0)),
                    Bound::Expr,
                    EXPR_DEPTH_MAX + 1 - operand.height(),
                    FAR_TERMS,
                    |n| place.around(&join(n, &sep, |i| operand.text(i))),
                    |n| match chain_value(op, operand, n) {
                        Some(v) => rows(v, 1),
                        None => Expect::Parsed,
                    },
                );
            }
        }
    }
}

/// Postfix chains (`x[0]`, `x[0..3]`, `x.a`, `x IS NULL`) and prefix chains (`NOT`, `!`, `-`, `+`).
fn postfix_and_prefix_chains(p: &mut Prober) {
    // (base, its height, what follows it n times, where, the value if known)
    let postfix: &[(&str, usize, &str, Place, Option<&str>)] = &[
        ("[1, 2, 3]", 2, "[0..3]", Place::Yield, Some("[1, 2, 3]")),
        ("[1, 2, 3]", 2, "[..3]", Place::Yield, Some("[1, 2, 3]")),
        ("[1]", 2, "[0]", Place::Yield, None),
        ("{a: 1}", 2, ".a", Place::Yield, None),
        ("$$.player.name", 1, "[0..1]", Place::GoYield, None),
        ("$^.player.name", 1, ".a", Place::GoYield, None),
        ("1", 1, " IS NULL", Place::Yield, Some("false")),
        ("1", 1, " IS NOT NULL", Place::Yield, Some("true")),
        ("1", 1, " IS EMPTY", Place::Yield, Some("false")),
        ("1", 1, " IS NOT EMPTY", Place::Yield, Some("true")),
        ("like.likeness", 1, " IS NOT NULL", Place::GoWhere, None),
    ];
    for &(base, height, suffix, place, value) in postfix {
        // Each suffix is a node above the base.
        p.around(
            &format!("{base} then {suffix}"),
            Bound::Expr,
            EXPR_DEPTH_MAX - height,
            FAR_TERMS,
            |n| place.around(&format!("{base}{}", suffix.repeat(n))),
            |_| value.map_or(Expect::Parsed, |v| rows(v, 1)),
        );
    }
    // (prefix, operand, its height, the value after an odd number of prefixes, after an even number)
    let prefix: &[(&str, &str, usize, &str, &str)] = &[
        ("NOT ", "true", 1, "false", "true"),
        ("! ", "true", 1, "false", "true"),
        ("- ", "(1)", 1, "-1", "1"),
        ("+ ", "(1)", 1, "1", "1"),
        // `-1` is a negation of the literal 1 (NebulaGraph prints it `-(1)`), so the last `-` is a node too.
        ("- ", "1", 1, "-1", "1"),
        ("NOT ", "$$.player.age > 40", 2, "", ""),
    ];
    for &(pre, operand, height, odd, even) in prefix {
        let place = if operand.contains('$') { Place::GoWhere } else { Place::Yield };
        p.around(
            &format!("{pre}then {operand}"),
            Bound::Expr,
            EXPR_DEPTH_MAX - height,
            FAR_TERMS,
            |n| place.around(&format!("{}{operand}", pre.repeat(n))),
            |n| match place {
                Place::Yield => rows(if n % 2 == 1 { odd } else { even }, 1),
                _ => Expect::Answered,
            },
        );
    }
    // Chains in brackets add up: `(1+...+1) * (1+...+1)` is one higher than each side.
    p.around(
        "bracketed chains",
        Bound::Expr,
        EXPR_DEPTH_MAX - 1,
        FAR_TERMS,
        |n| {
            let side = join(n, " + ", |_| "1");
            Place::Yield.around(&format!("({side}) * ({side})"))
        },
        |n| rows(n * n, 1),
    );
}

/// What a set operation or pipe joins, and how.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Shape {
    /// `s J s J ... J s`
    Chain,
    /// `(s) J (s) J ... J (s)`
    EachBracketed,
    /// `(s J s J ... J s)`
    Bracketed,
    /// `s J (s J (s J ... (s)))`: as tall, and as deeply bracketed, as it is long.
    RightNested,
    /// `$v = s J ... J s; YIELD $v.c AS c`: the assignment is one more level.
    Assigned,
}

const JOINTS: &[&str] = &[" UNION ", " UNION ALL ", " UNION DISTINCT ", " INTERSECT ", " MINUS ", " | "];

/// `n` sentences joined by `joint` in `shape`: `first`, then `rest`.
fn sentences(shape: Shape, joint: &str, first: &str, rest: &str, column: &str, n: usize) -> String {
    let item = |i: usize| if i == 0 { first } else { rest };
    match shape {
        Shape::Chain => join(n, joint, item),
        Shape::EachBracketed => format!("({})", join(n, &format!("){joint}("), item)),
        Shape::Bracketed => format!("({})", join(n, joint, item)),
        Shape::RightNested => format!("{}{}", join(n, &format!("{joint}("), item), ")".repeat(n - 1)),
        Shape::Assigned => format!("$v = {}; YIELD $v.{column} AS {column}", join(n, joint, item)),
    }
}

/// Pipes and set operations over `YIELD` and `GO` sentences of nba, in every shape; nested bracketed sentences; and
/// both bounds in one statement.
fn sentence_chains(p: &mut Prober) {
    const GO: &str = "GO FROM \"Tim Duncan\" OVER like YIELD like._dst AS id";
    let go_rows = p.rows_of(GO);
    let mut go_distinct = go_rows.clone();
    go_distinct.sort();
    go_distinct.dedup();
    assert!(!go_rows.is_empty());
    for joint in JOINTS {
        let pipe = joint.trim() == "|";
        // (first, rest, column, what n of them answer)
        type Answer<'a> = Box<dyn Fn(Shape, usize) -> Expect + 'a>;
        let bases: [(&str, &str, &str, Answer); 2] = [
            (
                "YIELD 1 AS a",
                if pipe { "YIELD $-.a + 1 AS a" } else { "YIELD 1 AS a" },
                "a",
                Box::new(|shape, n| match joint.trim() {
                    "UNION ALL" => rows(1, n),
                    "MINUS" if shape == Shape::RightNested => rows(1, n % 2),
                    "MINUS" => rows(1, (n == 1) as usize),
                    "|" if shape == Shape::RightNested => Expect::Answered,
                    "|" => rows(n, 1),
                    _ => rows(1, 1),
                }),
            ),
            (
                GO,
                if pipe { "GO FROM $-.id OVER like YIELD DISTINCT like._dst AS id" } else { GO },
                "id",
                Box::new(|shape, n| match joint.trim() {
                    "UNION ALL" => Expect::Rows((0..n).flat_map(|_| go_rows.iter().cloned()).collect()),
                    "MINUS" if shape == Shape::RightNested => Expect::Answered,
                    "MINUS" => Expect::Rows(Vec::new()),
                    "|" => Expect::Answered,
                    _ => Expect::Rows(go_distinct.clone()),
                }),
            ),
        ];
        for (first, rest, column, answer) in &bases {
            for shape in [Shape::Chain, Shape::EachBracketed, Shape::Bracketed, Shape::RightNested, Shape::Assigned] {
                let longest = if shape == Shape::Assigned { SENTENCE_DEPTH_MAX - 1 } else { SENTENCE_DEPTH_MAX };
                let family = format!("{} of `{}`", joint.trim(), first.split(' ').next().unwrap());
                p.around(
                    &format!("{family} {}", format!("{shape:?}").to_lowercase()),
                    Bound::Sentence,
                    longest,
                    FAR_SENTENCES,
                    |n| (sentences(shape, joint, first, rest, column, n), 0),
                    |n| answer(shape, n),
                );
            }
        }
    }
    // A sentence in brackets in brackets: the outermost sentence is one level, each bracket another.
    p.around(
        "bracketed sentence",
        Bound::Sentence,
        SENTENCE_DEPTH_MAX - 1,
        FAR_NESTING,
        |n| (nest("(", "YIELD 1 AS a", ")", n), 0),
        |_| rows(1, 1),
    );
    p.around(
        "bracketed GO",
        Bound::Sentence,
        SENTENCE_DEPTH_MAX - 1,
        FAR_NESTING,
        |n| (nest("(", GO, ")", n), 0),
        |_| Expect::Rows(go_rows.clone()),
    );
    // Both bounds at once: the longest chain of sentences, each holding the tallest expression.
    let tallest = format!("YIELD {} AS a", join(EXPR_DEPTH_MAX, "+", |_| "1"));
    let both = join(SENTENCE_DEPTH_MAX, " UNION ", |_| &tallest);
    p.probe("both bounds", &both, rows(EXPR_DEPTH_MAX, 1));
    let over = format!("{both} UNION YIELD 1 AS a");
    p.probe("both bounds, one sentence more", &over, Expect::SentenceTooDeep { at: 0 });
    let over = format!(
        "{} UNION YIELD {} AS a",
        join(SENTENCE_DEPTH_MAX - 1, " UNION ", |_| &tallest),
        join(EXPR_DEPTH_MAX + 1, "+", |_| "1")
    );
    let at = over.rfind("YIELD").unwrap() + "YIELD ".len();
    p.probe("both bounds, one term more", &over, Expect::ExprTooDeep { at });
}

/// Lists, sets and maps of tens of thousands of items, calls with thousands of arguments, up to a list as long as a
/// statement may be.
fn wide_literals(p: &mut Prober) {
    let go_rows = p.rows_of("GO FROM \"Tim Duncan\" OVER like YIELD like._dst AS id").len();
    for n in [10_000, 50_000] {
        let ones = join(n, ", ", |_| "1");
        p.probe("wide list", &format!("YIELD size([{ones}]) AS n"), rows(n, 1));
        p.probe("wide set", &format!("YIELD size({{{ones}}}) AS n"), rows(1, 1));
        p.probe("wide list of strings", &format!("YIELD size([{}]) AS n", join(n, ", ", |_| "\"ab\"")), rows(n, 1));
        p.probe("wide list of lists", &format!("YIELD size([{}]) AS n", join(n, ", ", |_| "[1, [true]]")), rows(n, 1));
        let props = join(n, ", ", |i| Operand::Prop.text(i));
        p.probe(
            "wide list of properties",
            &format!("GO FROM \"Tim Duncan\" OVER like YIELD size([{props}]) AS n"),
            rows(n, go_rows),
        );
        let distinct: Vec<String> = (0..n).map(|i| i.to_string()).collect();
        p.probe("wide set of distinct items", &format!("YIELD size({{{}}}) AS n", distinct.join(", ")), rows(n, 1));
        let map: Vec<String> = (0..n).map(|i| format!("k{i}: {i}")).collect();
        p.probe("wide map", &format!("YIELD size({{{}}}) AS n", map.join(", ")), rows(n, 1));
        p.probe("wide map, one key", &format!("YIELD {{{}}} AS m", join(n, ", ", |_| "a: 1")), Expect::Parsed);
        p.probe("wide YIELD", &format!("YIELD {}", join(n / 10, ", ", |_| "1 AS a")), Expect::Parsed);
    }
    for n in [1_000, 5_000] {
        let nulls = join(n - 1, ", ", |_| "NULL");
        p.probe("coalesce of many", &format!("YIELD coalesce({nulls}, 7) AS c"), rows(7, 1));
        let strings = join(n, ", ", |_| "\"ab\"");
        p.probe("concat of many", &format!("YIELD size(concat({strings})) AS n"), rows(2 * n, 1));
        let ones = join(n, ", ", |_| "1");
        for f in ["abs", "hash", "size", "count", "collect", "no_such_function", "date", "udf_is_in"] {
            p.probe(&format!("{f} of many"), &format!("YIELD {f}({ones}) AS c"), Expect::Parsed);
        }
    }
    // As long as a statement may be: 4 MiB of `1, `. It takes most of the deadline in a debug build, so running out
    // of time is an answer here too.
    let n = (STATEMENT_BYTES_MAX - 100) / 3;
    let longest = format!("YIELD size([{}]) AS n", join(n, ", ", |_| "1"));
    p.probe("list at the statement limit", &longest, Expect::Parsed);
    let over = format!("{longest}{}", " ".repeat(STATEMENT_BYTES_MAX + 1 - longest.len()));
    p.probe(
        "a byte over the statement limit",
        &over,
        Expect::Refused(format!("SyntaxError: statement longer than {STATEMENT_BYTES_MAX} bytes")),
    );
}

/// A nesting: its opening, its innermost expression, its closing, the nodes each level adds, and what an accepted
/// one answers.
type Nesting = (&'static str, &'static str, &'static str, usize, fn(usize) -> Expect);

/// Lists in lists, maps in maps, sets in sets, calls in calls, CASE in CASE and brackets in brackets.
fn deep_literals(p: &mut Prober) {
    let nests: &[Nesting] = &[
        ("[", "1", "]", 1, |n| rows(nest("[", "1", "]", n), 1)),
        ("{a: ", "1", "}", 1, |n| rows(nest("{a: ", "1", "}", n), 1)),
        ("{", "1", "}", 1, |n| rows(nest("{", "1", "}", n), 1)),
        ("[1, ", "2", "]", 1, |n| rows(nest("[1, ", "2", "]", n), 1)),
        ("abs(", "1", ")", 1, |_| rows(1, 1)),
        ("coalesce(NULL, ", "1", ")", 1, |_| rows(1, 1)),
        ("CASE WHEN true THEN ", "1", " END", 1, |_| rows(1, 1)),
        ("CASE WHEN false THEN 0 ELSE ", "1", " END", 1, |_| rows(1, 1)),
        ("CASE ", "1", " WHEN 1 THEN 1 END", 1, |_| rows(1, 1)),
        // A call around a list, a subscript after a list: two nodes a level.
        ("size([", "1", "])", 2, |_| rows(1, 1)),
        ("[", "1", "][0]", 2, |_| rows(1, 1)),
    ];
    for &(open, inner, close, per_level, within) in nests {
        p.around(
            &format!("nested {open}{inner}{close}"),
            Bound::Expr,
            (EXPR_DEPTH_MAX - 1) / per_level,
            FAR_NESTING,
            |n| Place::Yield.around(&nest(open, inner, close, n)),
            within,
        );
    }
    // Brackets add no node, but each is a level of the parser's recursion, as deep as a call.
    p.around(
        "nested brackets",
        Bound::Expr,
        EXPR_DEPTH_MAX - 1,
        FAR_NESTING,
        |n| Place::Yield.around(&nest("(", "1", ")", n)),
        |_| rows(1, 1),
    );
    p.around(
        "nested calls over a property",
        Bound::Expr,
        EXPR_DEPTH_MAX - 1,
        FAR_NESTING,
        |n| Place::GoYield.around(&nest("abs(", "$^.player.age", ")", n)),
        |_| Expect::Answered,
    );
    p.around(
        "nested brackets in WHERE",
        Bound::Expr,
        EXPR_DEPTH_MAX - 1,
        FAR_NESTING,
        |n| Place::GoWhere.around(&nest("(", "like.likeness > 90", ")", n)),
        |_| Expect::Answered,
    );
}

#[test]
fn long_expression_chains_are_bounded() {
    let mut p = Prober::new();
    binary_chains(&mut p);
    postfix_and_prefix_chains(&mut p);
    p.finish("expression chains");
}

#[test]
fn long_sentence_chains_are_bounded() {
    let mut p = Prober::new();
    sentence_chains(&mut p);
    p.finish("sentence chains");
}

#[test]
fn wide_and_deep_literals_are_bounded() {
    let mut p = Prober::new();
    wide_literals(&mut p);
    deep_literals(&mut p);
    p.finish("wide and deep literals");
}
