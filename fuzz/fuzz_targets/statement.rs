//! Any text as a request to the query engine, over a small graph (string VIDs, two tags, an edge type with a
//! rank, an index, a dangling edge; beside it a space of INT64 VIDs with some of the same names, so a sentence checked
//! against the wrong space is reachable): it must be answered or refused, never panic or hang. Each input gets a fresh
//! in-memory database, so inputs do not see each other's writes.
//!
//! An input whose first byte is 0xF8 or above (no UTF-8 text starts with one, so no text input is taken from the
//! text mode) is not run as text: the bytes after it choose a long or deep statement, which is built: chains of
//! every binary operator over operands of every kind, postfix and prefix chains, nested brackets, lists, maps, sets,
//! calls and CASEs, chains of pipes and set operations in every shape, wide literals, up to far beyond the parser's
//! bounds. Such a statement runs on a thread with a query thread's stack, and besides never panicking or hanging it
//! must come back as the parser's depth error exactly when its tree is taller than the bounds, and any error it
//! comes back with must give a reason. `QUIVER_FUZZ_SHOW=1` prints each generated statement (its first 300
//! characters) and what it must come back as.
#![no_main]

use libfuzzer_sys::fuzz_target;
use quiver_common::budget::Limits;
use quiver_common::limits::{EXPR_DEPTH_MAX, QUERY_THREAD_STACK_BYTES, SENTENCE_DEPTH_MAX, STATEMENT_BYTES_MAX};
use quiver_kv::MemEngine;
use quiver_meta::MetaStore;
use quiver_query::{Params, QueryEngine, Session};
use quiver_storage::EmbeddedStorage;
use std::sync::Arc;
use std::time::Duration;

const SETUP: &str = r#"
CREATE SPACE g(partition_num=3, vid_type=FIXED_STRING(16));
USE g;
CREATE TAG person(name string, age int DEFAULT 20, born date NULL);
CREATE TAG team(name string NOT NULL);
CREATE EDGE like(likeness double, since timestamp NULL);
CREATE EDGE serve(start_year int, end_year int);
CREATE TAG INDEX person_age ON person(age);
INSERT VERTEX person(name, age, born) VALUES "a":("Ann", 30, date("1990-01-02")), "b":("Bob", 25, NULL), "c":("Cy", 41, NULL);
INSERT VERTEX team(name) VALUES "t":("Team");
INSERT EDGE like(likeness, since) VALUES "a"->"b":(90.5, 0), "b"->"c":(70.0, NULL), "c"->"a":(80.0, 1), "a"->"b"@7:(1.0, 2), "c"->"ghost":(5.0, 3);
INSERT EDGE serve(start_year, end_year) VALUES "a"->"t":(2000, 2010), "b"->"t":(2005, 2020);
CREATE SPACE h(partition_num=2, vid_type=INT64);
USE h;
CREATE TAG person(name string, age int DEFAULT 20, born date NULL);
CREATE EDGE like(likeness double, since timestamp NULL);
INSERT VERTEX person(name, age) VALUES 1:("One", 1), 2:("Two", 2);
INSERT EDGE like(likeness, since) VALUES 1->2:(1.0, 0);
USE g
"#;

/// A first byte from here up chooses a generated statement.
const GENERATED: u8 = 0xF8;

fuzz_target!(|data: &[u8]| {
    match data.split_first() {
        Some((&first, rest)) if first >= GENERATED => generated(rest),
        _ => text(data),
    }
});

/// A fresh database holding the small graph, and a session using it.
fn database() -> (QueryEngine, Session) {
    let kv = Arc::new(MemEngine::new());
    let meta = Arc::new(MetaStore::open(kv.clone()).unwrap());
    let storage = Arc::new(EmbeddedStorage::new(kv));
    storage.set_catalog(meta.clone());
    let engine = QueryEngine::new(meta, storage);
    engine.set_limits(Limits { timeout: Duration::from_secs(1), memory_bytes: 64 << 20 });
    let mut session = Session::default();
    engine.execute(&mut session, SETUP, &Params::new()).expect("the setup runs");
    (engine, session)
}

/// The input as the text of a request.
fn text(data: &[u8]) {
    let Ok(stmt) = std::str::from_utf8(data) else { return };
    let (engine, mut session) = database();
    let _ = engine.execute(&mut session, stmt, &Params::new());
}

/// A statement built from the input, run on a query thread, and its answer checked against its tree's height.
fn generated(data: &[u8]) {
    let mut bytes = Bytes { data, at: 0 };
    let (stmt, expect) = build(&mut bytes);
    let expect = if stmt.len() > STATEMENT_BYTES_MAX { Expect::TooLong } else { expect };
    if std::env::var_os("QUIVER_FUZZ_SHOW").is_some() {
        eprintln!("{expect:?} ({} bytes): {}", stmt.len(), head(&stmt));
    }
    std::thread::Builder::new()
        .stack_size(QUERY_THREAD_STACK_BYTES)
        .spawn(move || {
            let (engine, mut session) = database();
            let result = engine.execute(&mut session, &stmt, &Params::new());
            check(&stmt, expect, result.err().map(|e| e.message));
        })
        .unwrap()
        .join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
}

/// What a generated statement must come back as.
#[derive(Clone, Copy, Debug)]
enum Expect {
    /// Rows, or an error other than the depth errors.
    Within,
    /// The parser's error for an expression taller than `EXPR_DEPTH_MAX` (or nested deeper).
    ExprTooDeep,
    /// The parser's error for a sentence tree taller than `SENTENCE_DEPTH_MAX` (or nested deeper).
    SentenceTooDeep,
    /// Longer than `STATEMENT_BYTES_MAX`.
    TooLong,
}

fn check(stmt: &str, expect: Expect, error: Option<String>) {
    let prefix = match expect {
        Expect::Within => None,
        Expect::ExprTooDeep => {
            Some(format!("SyntaxError: The above expression's depth exceeds the maximum depth:{EXPR_DEPTH_MAX} near `"))
        }
        Expect::SentenceTooDeep => Some(format!(
            "SyntaxError: The above statement's pipes and set operations exceed the maximum depth:{SENTENCE_DEPTH_MAX} near `"
        )),
        Expect::TooLong => Some(format!("SyntaxError: statement longer than {STATEMENT_BYTES_MAX} bytes")),
    };
    let shown = head(stmt);
    match (prefix, error) {
        (None, None) => {}
        (None, Some(message)) => {
            assert!(
                !message.is_empty() && !message.contains("internal error"),
                "an error without a reason `{message}` on\n{shown}"
            );
            assert!(!message.contains("the maximum depth:"), "refused within the bounds: {message}\non\n{shown}");
        }
        (Some(prefix), None) => panic!("answered, where `{prefix}...` was expected, on\n{shown}"),
        (Some(prefix), Some(message)) => {
            assert!(message.starts_with(&prefix), "`{}` where `{prefix}...` was expected, on\n{shown}", head(&message))
        }
    }
}

/// At most 300 characters of `s`.
fn head(s: &str) -> String {
    if s.chars().count() <= 300 {
        return s.to_string();
    }
    format!("{}... ({} bytes)", s.chars().take(300).collect::<String>(), s.len())
}

/// The input's bytes, read in turn; past the end they start over (zeros if there are none), so a short input still
/// chooses every item of a long statement.
struct Bytes<'a> {
    data: &'a [u8],
    at: usize,
}

impl Bytes<'_> {
    fn byte(&mut self) -> u8 {
        if self.data.is_empty() {
            return 0;
        }
        let b = self.data[self.at % self.data.len()];
        self.at += 1;
        b
    }

    fn coin(&mut self) -> bool {
        self.byte() & 1 == 0
    }

    fn below(&mut self, n: usize) -> usize {
        self.byte() as usize % n
    }

    fn pick<'t, T>(&mut self, xs: &'t [T]) -> &'t T {
        &xs[self.below(xs.len())]
    }

    fn u16(&mut self) -> usize {
        (self.byte() as usize) << 8 | self.byte() as usize
    }

    /// A length of a family that meets its bound at about `bound` items: within a few of it, short, up to three times
    /// it, or up to `far`.
    fn length(&mut self, bound: usize, far: usize) -> usize {
        match self.byte() % 4 {
            0 => (bound + self.below(9)).saturating_sub(4).max(1),
            1 => 1 + self.below(64),
            2 => 1 + self.u16() % (3 * bound),
            _ => 1 + self.u16() * far / 65_536,
        }
    }
}

/// The statement and what it must come back as, from one of the families.
fn build(b: &mut Bytes) -> (String, Expect) {
    match b.below(7) {
        0 => binary_chain(b),
        1 => postfix_chain(b),
        2 => prefix_chain(b),
        3 => nested(b),
        4 => sentences(b),
        5 => wide(b),
        _ => sentences_of_chains(b),
    }
}

/// An expression's height and its deepest nesting (how many sub-expressions the parser recursed into on the way
/// down to its deepest part, the outermost counted): over `EXPR_DEPTH_MAX`, either is refused.
fn expr_expect(height: usize, nesting: usize) -> Expect {
    if height > EXPR_DEPTH_MAX || nesting > EXPR_DEPTH_MAX {
        Expect::ExprTooDeep
    } else {
        Expect::Within
    }
}

/// Where an expression goes: in a YIELD, a GO's YIELD (properties of the vertices and the edge are known there) or a
/// GO's WHERE.
fn place(b: &mut Bytes, e: &str) -> String {
    match b.below(3) {
        0 => format!("YIELD {e} AS c"),
        1 => format!("GO FROM \"a\" OVER like YIELD {e} AS c"),
        _ => format!("GO FROM \"a\" OVER like WHERE {e} YIELD like._dst AS id"),
    }
}

/// The binary operators by precedence, lowest first: a chain of operators of one level is left-deep, as tall as it
/// is long.
// One level a line: rustfmt puts each item of a table of strings this long on a line of its own.
#[rustfmt::skip]
const LEVELS: &[&[&str]] = &[
    &["OR", "XOR", "||"],
    &["AND", "&&"],
    &["==", "!=", "<>", "<", "<=", ">", ">=", "=~", "IN", "NOT IN", "CONTAINS", "NOT CONTAINS", "STARTS WITH",
        "ENDS WITH", "NOT STARTS WITH", "NOT ENDS WITH"],
    &["+", "-"],
    &["*", "/", "%"],
];

/// Operands with their heights and nesting (a bracket, list or call is one level of the parser's recursion).
const OPERANDS: &[(&str, usize, usize)] = &[
    ("1", 1, 1),
    ("\"ab\"", 1, 1),
    ("true", 1, 1),
    ("NULL", 1, 1),
    ("1.5", 1, 1),
    ("$$.person.name", 1, 1),
    ("$^.person.age", 1, 1),
    ("like.likeness", 1, 1),
    ("like._dst", 1, 1),
    ("[1, 2]", 2, 2),
    ("(1 + 2)", 2, 2),
    // `-1` is a negation over `1` (only i64::MIN is a negative literal): the call is three high.
    ("abs(-1)", 3, 2),
    ("{a: 1}", 2, 2),
];

/// `e op e op ... e` with the operators of one precedence level, all one or mixed, over operands all one or mixed.
fn binary_chain(b: &mut Bytes) -> (String, Expect) {
    let level = *b.pick(LEVELS);
    let (one_op, one_operand) = (b.coin(), b.coin());
    let (op0, operand0) = (*b.pick(level), *b.pick(OPERANDS));
    let n = b.length(EXPR_DEPTH_MAX, 100_000);
    let mut e = String::new();
    let (mut height, mut nesting) = (0, 0);
    for i in 0..n {
        let (text, h, d) = if one_operand { operand0 } else { *b.pick(OPERANDS) };
        if i > 0 {
            e.push(' ');
            e.push_str(if one_op { op0 } else { b.pick(level) });
            e.push(' ');
            height += 1;
        }
        e.push_str(text);
        height = height.max(h + (i > 0) as usize);
        nesting = nesting.max(d);
    }
    (place(b, &e), expr_expect(height, nesting))
}

/// A base followed by subscripts, slices and attributes, then by IS [NOT] NULL|EMPTY: each a node above the last.
fn postfix_chain(b: &mut Bytes) -> (String, Expect) {
    let (base, h) =
        *b.pick(&[("[1, 2, 3]", 2), ("{a: 1}", 2), ("$$.person.name", 1), ("$^.person.age", 1), ("like._dst", 1)]);
    let n = b.length(EXPR_DEPTH_MAX, 100_000);
    let postfixes = b.below(n + 1);
    let mut e = base.to_string();
    // A node is one above the taller of its base and its index (`-1` is a negation over `1`: two high), so an
    // index can be taller than the chain below it only near the base.
    let mut height = h;
    for i in 0..n {
        let (text, index) = if i < postfixes {
            *b.pick(&[("[0]", 1), ("[0..1]", 1), ("[..2]", 1), ("[-1]", 2), (".a", 0), (".name", 0)])
        } else {
            *b.pick(&[(" IS NULL", 0), (" IS NOT NULL", 0), (" IS EMPTY", 0), (" IS NOT EMPTY", 0)])
        };
        e.push_str(text);
        height = height.max(index) + 1;
    }
    // A subscript's index is parsed one level down.
    let nesting = if postfixes > 0 { 2 } else { 1 };
    (place(b, &e), expr_expect(height, nesting))
}

/// `NOT ... NOT` then `-`, `+` and `!` in any order, then an operand: each prefix a node above the next, except that
/// `-` right before an integer is part of it.
fn prefix_chain(b: &mut Bytes) -> (String, Expect) {
    let nots = if b.coin() { b.length(EXPR_DEPTH_MAX, 100_000) } else { 0 };
    let unary = if nots == 0 || b.coin() { b.length(EXPR_DEPTH_MAX, 100_000) } else { 0 };
    let one = b.coin();
    let first = *b.pick(&["- ", "+ ", "! "]);
    let mut e = "NOT ".repeat(nots);
    let mut last = "";
    for _ in 0..unary {
        last = if one { first } else { b.pick(&["- ", "+ ", "! "]) };
        e.push_str(last);
    }
    let (operand, h, d) =
        *b.pick(&[("true", 1, 1), ("(1)", 1, 2), ("1", 1, 1), ("$^.person.age", 1, 1), ("[1]", 2, 2)]);
    e.push_str(operand);
    let folded = (last == "- " && operand == "1") as usize;
    (place(b, &e), expr_expect(nots + unary + h - folded, d))
}

/// Wrappers one inside another: (opening, closing, levels of recursion, nodes) each adds.
const WRAPPERS: &[(&str, &str, usize, usize)] = &[
    ("(", ")", 1, 0),
    ("[", "]", 1, 1),
    ("[1, ", "]", 1, 1),
    ("{a: ", "}", 1, 1),
    ("{", "}", 1, 1),
    ("abs(", ")", 1, 1),
    ("coalesce(NULL, ", ")", 1, 1),
    ("CASE WHEN true THEN ", " END", 1, 1),
    ("CASE WHEN false THEN 0 ELSE ", " END", 1, 1),
    ("CASE ", " WHEN 1 THEN 1 END", 1, 1),
    ("size([", "])", 2, 2),
    ("-(", ")", 1, 1),
    ("NOT (", ")", 1, 1),
    ("[", "][0]", 1, 2),
];

/// Brackets, lists, maps, sets, calls and CASEs nested, all one kind or mixed, around a short chain.
fn nested(b: &mut Bytes) -> (String, Expect) {
    let n = b.length(EXPR_DEPTH_MAX, 200_000);
    let one = b.coin();
    let first = *b.pick(WRAPPERS);
    let (mut open, mut close) = (String::new(), Vec::new());
    let (mut nesting, mut height) = (1, 0);
    for _ in 0..n {
        let (o, c, d, h) = if one { first } else { *b.pick(WRAPPERS) };
        open.push_str(o);
        close.push(c);
        nesting += d;
        height += h;
    }
    let terms = 1 + b.below(8);
    let inner = vec!["1"; terms].join(" + ");
    close.reverse();
    let e = format!("{open}{inner}{}", close.concat());
    (place(b, &e), expr_expect(height + terms, nesting))
}

/// Set operations and the pipe, as written between two sentences.
const JOINTS: &[&str] = &[" UNION ", " UNION ALL ", " UNION DISTINCT ", " INTERSECT ", " MINUS ", " | "];

/// Sentences: (the first, one after a pipe, one after a set operation).
const SENTENCES: &[(&str, &str, &str)] = &[
    ("YIELD 1 AS a", "YIELD $-.a + 1 AS a", "YIELD 1 AS a"),
    (
        "GO FROM \"a\" OVER like YIELD like._dst AS id",
        "GO FROM $-.id OVER like YIELD like._dst AS id",
        "GO FROM \"b\" OVER like YIELD like._dst AS id",
    ),
    (
        "FETCH PROP ON person \"a\" YIELD person.name AS n",
        "YIELD $-.n AS n",
        "FETCH PROP ON person \"c\" YIELD person.name AS n",
    ),
    (
        "LOOKUP ON person WHERE person.age > 20 YIELD id(vertex) AS id",
        "GO FROM $-.id OVER serve YIELD serve._dst AS id",
        "GO FROM \"c\" OVER like REVERSELY YIELD like._dst AS id",
    ),
];

fn sentence_expect(height: usize, nesting: usize) -> Expect {
    if height > SENTENCE_DEPTH_MAX || nesting > SENTENCE_DEPTH_MAX {
        Expect::SentenceTooDeep
    } else {
        Expect::Within
    }
}

/// `n` sentences joined by pipes and set operations (all one joint or mixed), in a chain, each in brackets, all in
/// brackets, nested to the right, or assigned to a variable.
fn sentences(b: &mut Bytes) -> (String, Expect) {
    let (first, after_pipe, after_set) = *b.pick(SENTENCES);
    let n = b.length(SENTENCE_DEPTH_MAX, 20_000);
    let one = b.coin();
    let joint0 = *b.pick(JOINTS);
    let joints: Vec<&str> = (1..n).map(|_| if one { joint0 } else { b.pick(JOINTS) }).collect();
    let item = |i: usize| match i {
        0 => first,
        _ if joints[i - 1] == " | " => after_pipe,
        _ => after_set,
    };
    // Pipes bind tighter than set operations: a run of piped sentences is as tall as it is long, and each set
    // operation stands one above the taller of its sides.
    let mut groups = vec![1usize];
    for j in &joints {
        if *j == " | " {
            *groups.last_mut().unwrap() += 1;
        } else {
            groups.push(1);
        }
    }
    let chain_height = groups[1..].iter().fold(groups[0], |h, &g| h.max(g) + 1);
    let mut s = String::new();
    let shape = b.below(5);
    for i in 0..n {
        if i > 0 {
            s.push_str(joints[i - 1]);
        }
        match shape {
            1 => s.push_str(&format!("({})", item(i))),
            3 if i > 0 => s.push_str(&format!("({}", item(i))),
            _ => s.push_str(item(i)),
        }
    }
    match shape {
        // `(s) J (s) ...`: a bracket is a level of the parser's recursion, not a node.
        1 => (s, sentence_expect(chain_height, 2)),
        2 => (format!("({s})"), sentence_expect(chain_height, 2)),
        // `s J (s J (s ...))`: as tall and as deeply bracketed as it is long.
        3 => (format!("{s}{}", ")".repeat(n - 1)), sentence_expect(n, n)),
        // The assignment is one more node.
        4 => (format!("$v = {s}; YIELD $v.a AS a"), sentence_expect(chain_height + 1, 1)),
        _ => (s, sentence_expect(chain_height, 1)),
    }
}

/// Lists, sets, maps, call arguments and YIELD columns of many items.
fn wide(b: &mut Bytes) -> (String, Expect) {
    let n = b.length(65_536, 1 << 20);
    let one = b.coin();
    const ITEMS: &[&str] = &["1", "\"ab\"", "true", "NULL", "[1]", "$$.person.name", "-1.5", "{a: 1}"];
    let item0 = *b.pick(ITEMS);
    let kind = b.below(6);
    let mut items = Vec::with_capacity(n);
    for i in 0..n {
        let item = if one { item0 } else { b.pick(ITEMS) };
        items.push(match kind {
            2 => format!("k{i}: {item}"),
            3 => format!("a: {item}"),
            5 => format!("{item} AS c{i}"),
            _ => item.to_string(),
        });
    }
    let items = items.join(", ");
    let function = *b.pick(&["coalesce", "concat", "abs", "hash", "no_such_function", "count"]);
    let stmt = match kind {
        0 => place(b, &format!("size([{items}])")),
        1 => place(b, &format!("{{{items}}}")),
        2 | 3 => place(b, &format!("size({{{items}}})")),
        4 => place(b, &format!("{function}({items})")),
        _ => format!("YIELD {items}"),
    };
    (stmt, Expect::Within)
}

/// A chain of sentences, each holding a chain of `+`: both bounds in one statement. The first sentence is parsed
/// whole before any set operation, so an expression too tall is what is refused when both are.
fn sentences_of_chains(b: &mut Bytes) -> (String, Expect) {
    let terms = b.length(EXPR_DEPTH_MAX, 4_000);
    let n = b.length(SENTENCE_DEPTH_MAX, 1_000);
    let joint = *b.pick(JOINTS);
    let chain = vec!["1"; terms].join("+");
    let sentence = format!("YIELD {chain} AS a");
    let stmt = vec![sentence.as_str(); n].join(joint);
    let expect = match expr_expect(terms, 1) {
        Expect::Within => sentence_expect(n, 1),
        too_deep => too_deep,
    };
    (stmt, expect)
}
