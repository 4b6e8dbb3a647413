//! Recursive-descent parser for nGQL statements and expressions.

use crate::ast::*;
use crate::lexer::{lex, near_error, near_text, Tok, Token};
use quiver_common::expr::{BinaryOp, CastTo, EdgeMeta, Expr, Quantifier, Reduce, UnaryOp, VertexRef};
use quiver_common::geo::GeoShape;
use quiver_common::limits::{
    EXPR_DEPTH_MAX, MATCH_CLAUSES_MAX, PATTERN_HOPS_MAX, SENTENCE_DEPTH_MAX, STATEMENTS_PER_REQUEST_MAX,
    STATEMENT_BYTES_MAX,
};
use quiver_common::{functions, ItemType, PropType, QError, QResult, Value};
use std::collections::HashMap;

/// The functions whose names are keywords in NebulaGraph's grammar (they print in lower case, however written).
const KEYWORD_FUNCTIONS: &[&str] =
    &["timestamp", "date", "time", "datetime", "tags", "sign", "duration", "left", "right", "exists"];

/// Words that cannot be used as names without backquotes.
const RESERVED: &[&str] = &[
    "ADD",
    "ALTER",
    "AND",
    "AS",
    "ASC",
    "BY",
    "CASE",
    "CHANGE",
    "CREATE",
    "DELETE",
    "DESC",
    "DESCRIBE",
    "DISTINCT",
    "DROP",
    "EDGE",
    "EDGES",
    "EXISTS",
    "EXPLAIN",
    "FALSE",
    "FETCH",
    "FROM",
    "GET",
    "GO",
    "IF",
    "IN",
    "INSERT",
    "INTERSECT",
    "IS",
    "LOOKUP",
    "MATCH",
    "MINUS",
    "NOT",
    "NULL",
    "OF",
    "ON",
    "OR",
    "ORDER",
    "OVER",
    "PROP",
    "REVERSELY",
    "SET",
    "SHOW",
    "STEP",
    "STEPS",
    "TAG",
    "TAGS",
    "TO",
    "TRUE",
    "UNION",
    "UPDATE",
    "UPSERT",
    "USE",
    "VERTEX",
    "VERTICES",
    "WHEN",
    "WHERE",
    "WITH",
    "XOR",
    "YIELD",
];

/// Parses a request: one or more statements separated by `;`.
pub fn parse(src: &str) -> QResult<Vec<Statement>> {
    parse_request(src, None)
}

/// Parses a request whose query parameters are `params`. As in NebulaGraph, a bare `$name` that is not one of
/// them is a syntax error (`$name.col` is a variable's column).
/// Whether two symbols are the same: compared inline, byte by byte (they are one to three bytes, and a call to
/// `memcmp` per comparison was a fifth of parsing).
#[inline]
fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

pub fn parse_with_params(src: &str, params: &[&str]) -> QResult<Vec<Statement>> {
    parse_request(src, Some(params))
}

fn parse_request(src: &str, params: Option<&[&str]>) -> QResult<Vec<Statement>> {
    if src.len() > STATEMENT_BYTES_MAX {
        return Err(QError::syntax(format!("statement longer than {STATEMENT_BYTES_MAX} bytes")));
    }
    let tokens = lex(src)?;
    let params = params.map(|p| p.iter().map(|s| s.to_string()).collect());
    let mut p = Parser::new(src, tokens, params);
    let mut out = Vec::new();
    loop {
        while p.eat_sym(";") {}
        if p.at_eof() {
            break;
        }
        if out.len() >= STATEMENTS_PER_REQUEST_MAX {
            return Err(QError::syntax(format!("more than {STATEMENTS_PER_REQUEST_MAX} statements in one request")));
        }
        p.hops = 0;
        if out.is_empty() && (p.peek_kw("EXPLAIN") || p.peek_kw("PROFILE")) {
            out.push(p.explain()?);
        } else {
            out.push(p.sentence()?);
        }
        if p.at_eof() {
            break;
        }
        if !p.eat_sym(";") {
            return Err(p.error_here());
        }
    }
    if out.is_empty() {
        return Err(QError::new(
            quiver_common::ErrorCode::StatementEmpty,
            "StatementEmpty: the request has no statement",
        ));
    }
    Ok(out)
}

/// Parses a single expression (used for DEFAULT values kept in the catalog).
pub fn parse_expr(src: &str) -> QResult<Expr> {
    let tokens = lex(src)?;
    let mut p = Parser::new(src, tokens, None);
    let e = p.expr()?;
    if !p.at_eof() {
        return Err(p.error_here());
    }
    Ok(e)
}

/// An expression with its height: the nodes on its longest path from the root down.
type Tree = (Expr, usize);

/// A relational operator: `IS [NOT] NULL` and `IS [NOT] EMPTY` (postfix), or a binary one.
enum RelOp {
    Is(UnaryOp),
    Binary(BinaryOp),
}

struct Parser<'a> {
    src: &'a str,
    tokens: Vec<Token>,
    pos: usize,
    depth: usize,
    /// Where the outermost expression being parsed starts, for the depth error.
    expr_start: usize,
    /// Sentences nested around the one being parsed, and where the outermost starts.
    sentence_depth: usize,
    sentence_start: usize,
    /// Hops in the patterns of the statement being parsed (see `PATTERN_HOPS_MAX`).
    hops: usize,
    /// The request's parameter names, when known: a bare `$name` must be one of them.
    params: Option<Vec<String>>,
    /// The loop variables (and accumulators) of the comprehensions, predicate functions and `reduce()`s around the
    /// expression being parsed, each with how many of them bind it: `x.name` on one of them is an attribute of its
    /// value, not a property of a tag or edge type `x` (as NebulaGraph rewrites it).
    bound: HashMap<String, usize>,
    /// The tokens of the last bracketed expression parsed: its `(` and the one after its `)`.
    last_paren: Option<(usize, usize)>,
    /// The first token of the left operand of the last `IN` parsed, and the `IN`'s.
    last_in: (usize, usize),
    /// Whether a YIELD or RETURN column is being parsed: a bare `$name` there that is no parameter is NebulaGraph's
    /// `Direct output of variable is prohibited`, of the whole column.
    in_column: bool,
}

impl<'a> Parser<'a> {
    fn new(src: &'a str, tokens: Vec<Token>, params: Option<Vec<String>>) -> Parser<'a> {
        Parser {
            src,
            tokens,
            pos: 0,
            depth: 0,
            expr_start: 0,
            sentence_depth: 0,
            sentence_start: 0,
            hops: 0,
            params,
            bound: HashMap::new(),
            last_paren: None,
            last_in: (0, 0),
            in_column: false,
        }
    }

    fn peek(&self) -> &Tok {
        &self.tokens[self.pos].tok
    }

    fn peek_at(&self, n: usize) -> &Tok {
        &self.tokens[(self.pos + n).min(self.tokens.len() - 1)].tok
    }

    fn at_eof(&self) -> bool {
        matches!(self.peek(), Tok::Eof)
    }

    /// Steps past the current token (never past the end).
    fn bump(&mut self) {
        if self.pos < self.tokens.len() - 1 {
            self.pos += 1;
        }
    }

    /// The current token, stepped past.
    fn next_tok(&mut self) -> Tok {
        let t = self.peek().clone();
        self.bump();
        t
    }

    fn error_here(&self) -> QError {
        self.error_at(self.pos)
    }

    /// The syntax error at token `pos`.
    fn error_at(&self, pos: usize) -> QError {
        let mut t = &self.tokens[pos];
        // At the end of the input NebulaGraph's scanner still holds the last token's location, and quotes it as
        // for any token (so `MATCH (v:player{name:"abc"})` is near `)'), when nothing follows that token.
        if t.tok == Tok::Eof && pos > 0 && self.tokens[pos - 1].end == self.src.len() {
            t = &self.tokens[pos - 1];
        }
        near_error(self.src, t.start, t.end)
    }

    fn peek_kw(&self, kw: &str) -> bool {
        matches!(self.peek(), Tok::Ident(s) if s.eq_ignore_ascii_case(kw))
    }

    fn peek_kw_at(&self, n: usize, kw: &str) -> bool {
        matches!(self.peek_at(n), Tok::Ident(s) if s.eq_ignore_ascii_case(kw))
    }

    fn eat_kw(&mut self, kw: &str) -> bool {
        if self.peek_kw(kw) {
            self.bump();
            true
        } else {
            false
        }
    }

    /// Whether the sentence being parsed ends here: at the request's end, a `;`, a pipe, a closing bracket or brace,
    /// or a set operation.
    fn at_sentence_end(&self) -> bool {
        self.at_eof()
            || [";", "|", ")", "}"].iter().any(|s| self.peek_sym(s))
            || ["UNION", "INTERSECT", "MINUS"].iter().any(|w| self.peek_kw(w))
    }

    fn expect_kw(&mut self, kw: &str) -> QResult<()> {
        if self.eat_kw(kw) {
            Ok(())
        } else {
            Err(self.error_here())
        }
    }

    fn peek_sym_at(&self, n: usize, sym: &str) -> bool {
        matches!(self.peek_at(n), Tok::Sym(s) if same(s, sym))
    }

    fn peek_sym(&self, sym: &str) -> bool {
        matches!(self.peek(), Tok::Sym(s) if same(s, sym))
    }

    fn eat_sym(&mut self, sym: &str) -> bool {
        if self.peek_sym(sym) {
            self.bump();
            true
        } else {
            false
        }
    }

    fn expect_sym(&mut self, sym: &str) -> QResult<()> {
        if self.eat_sym(sym) {
            Ok(())
        } else {
            Err(self.error_here())
        }
    }

    /// A name: a non-reserved word or a backquoted name.
    fn name(&mut self) -> QResult<String> {
        let s = match self.peek() {
            Tok::Ident(s) if !is_reserved(s) => name_of(s),
            Tok::Quoted(s) if !s.is_empty() => s.clone(),
            _ => return Err(self.error_here()),
        };
        self.bump();
        Ok(s)
    }

    fn string_lit(&mut self) -> QResult<String> {
        let Tok::Str(s) = self.peek() else { return Err(self.error_here()) };
        let s = s.clone();
        self.bump();
        Ok(s)
    }

    /// A `fixed_string(n)` or index field's length: 1 to 32,767 (an int16), as NebulaGraph's grammar takes it.
    fn length_lit(&mut self) -> QResult<i64> {
        let at = self.pos;
        let n = self.int_lit()?;
        if !(1..=i16::MAX as i64).contains(&n) {
            let t = &self.tokens[at];
            let near = crate::lexer::near_text(self.src, t.start, t.end);
            return Err(QError::syntax(format!("Out of range: near `{near}'")));
        }
        Ok(n)
    }

    fn int_lit(&mut self) -> QResult<i64> {
        let neg = self.eat_sym("-");
        match self.peek().clone() {
            Tok::Int(v) => {
                let v = if neg { -v } else { v };
                if v > i64::MAX as i128 || v < i64::MIN as i128 {
                    // NebulaGraph's scanner refuses an integer literal past 64 bits itself.
                    let t = &self.tokens[self.pos];
                    return Err(QError::syntax(format!("Out of range: near `{}'", &self.src[t.start..t.end])));
                }
                self.bump();
                Ok(v as i64)
            }
            _ => Err(self.error_here()),
        }
    }

    fn if_not_exists(&mut self) -> QResult<bool> {
        if self.peek_kw("IF") {
            self.bump();
            self.expect_kw("NOT")?;
            self.expect_kw("EXISTS")?;
            return Ok(true);
        }
        Ok(false)
    }

    fn if_exists(&mut self) -> QResult<bool> {
        if self.eat_kw("IF") {
            self.expect_kw("EXISTS")?;
            return Ok(true);
        }
        Ok(false)
    }

    /// `EXPLAIN|PROFILE [FORMAT="..."] sentence` or `{ sentence; ... }`.
    fn explain(&mut self) -> QResult<Statement> {
        let profile = self.peek_kw("PROFILE");
        self.bump();
        let mut format = PlanFormat::Row;
        if self.eat_kw("FORMAT") {
            self.expect_sym("=")?;
            let Tok::Str(f) = self.peek().clone() else {
                return Err(self.error_here());
            };
            self.bump();
            format = match f.to_lowercase().as_str() {
                "row" => PlanFormat::Row,
                "dot" => PlanFormat::Dot,
                "dot:struct" => PlanFormat::DotStruct,
                "tck" => PlanFormat::Tck,
                _ => {
                    return Err(QError::syntax(format!(
                        "Invalid explain/profile format type: \"{f}\", only following values are supported: row,dot,dot:struct,tck"
                    )))
                }
            };
        }
        let mut body = Vec::new();
        if self.eat_sym("{") {
            loop {
                while self.eat_sym(";") {}
                if self.peek_sym("}") && !body.is_empty() {
                    self.bump();
                    break;
                }
                body.push(self.sentence()?);
                if !self.peek_sym("}") && !self.peek_sym(";") {
                    return Err(self.error_here());
                }
            }
        } else {
            body.push(self.sentence()?);
        }
        Ok(Statement::Explain { profile, format, body })
    }

    /// `$var = set_sentence` or a set sentence.
    fn sentence(&mut self) -> QResult<Statement> {
        Ok(self.sentence_tree()?.0)
    }

    // Sentences nest through pipes, set operations, assignments and brackets, and each returns its height as
    // expressions do: the planner, the optimizer and the executor recurse once per level, so a chain of 10,000
    // UNIONs must be refused while it is parsed, before it is a tree.

    fn sentence_tree(&mut self) -> QResult<(Statement, usize)> {
        if self.sentence_depth == 0 {
            self.sentence_start = self.tokens[self.pos].start;
        }
        self.sentence_depth += 1;
        if self.sentence_depth > SENTENCE_DEPTH_MAX {
            return Err(self.sentence_too_deep());
        }
        let r = self.assignment();
        self.sentence_depth -= 1;
        r
    }

    fn assignment(&mut self) -> QResult<(Statement, usize)> {
        if let (Tok::Var(var), Tok::Sym("=")) = (self.peek().clone(), self.peek_at(1).clone()) {
            self.bump();
            self.bump();
            let first = self.pos;
            let (statement, h) = self.set_sentence()?;
            // NebulaGraph's `assignment_sentence` takes a `set_sentence`: no MATCH, USE, INSERT or DDL.
            if !composable(&statement) {
                return Err(self.error_at(first));
            }
            if self.params.as_ref().is_some_and(|known| known.contains(&var)) {
                let t = &self.tokens[first - 2];
                return Err(QError::syntax(format!(
                    "Variable definition conflicts with a parameter near `{}'",
                    &self.src[t.start..t.end]
                )));
            }
            return Ok((Statement::Assign { var, statement: Box::new(statement) }, self.sentence_above(h)?));
        }
        self.set_sentence()
    }

    fn sentence_too_deep(&self) -> QError {
        QError::syntax(format!(
            "The above statement's pipes and set operations exceed the maximum depth:{SENTENCE_DEPTH_MAX} near `{}'",
            self.near_from(self.sentence_start)
        ))
    }

    /// The height of a sentence node above children whose tallest is `below` high, if within the bound.
    fn sentence_above(&self, below: usize) -> QResult<usize> {
        one_above(below, SENTENCE_DEPTH_MAX).ok_or_else(|| self.sentence_too_deep())
    }

    /// Piped sentences joined by UNION [ALL|DISTINCT], INTERSECT and MINUS, left to right.
    ///
    /// As NebulaGraph's grammar has it, both sides are traverse sentences (GO, FETCH, LOOKUP, YIELD, ...: see
    /// [`composable`]) or both are MATCH sentences; anything else is a syntax error at the operator or at the side
    /// that may not stand there.
    fn set_sentence(&mut self) -> QResult<(Statement, usize)> {
        let (mut left, mut height) = self.piped()?;
        // What the left side is, decided once: each operation keeps it (its right side must be of the same kind).
        let (left_match, left_composable) = (match_tree(&left), composable(&left));
        loop {
            let at_op = self.pos;
            let op = if self.eat_kw("UNION") {
                if self.eat_kw("ALL") {
                    SetOp::UnionAll
                } else {
                    self.eat_kw("DISTINCT");
                    SetOp::Union
                }
            } else if self.eat_kw("INTERSECT") {
                SetOp::Intersect
            } else if self.eat_kw("MINUS") {
                SetOp::Minus
            } else {
                return Ok((left, height));
            };
            if !left_match && !left_composable {
                return Err(self.error_at(at_op));
            }
            let first = self.pos;
            let (right, h) = self.piped()?;
            if left_match != match_tree(&right) || !(left_match || composable(&right)) {
                return Err(self.error_at(first));
            }
            height = self.sentence_above(height.max(h))?;
            left = Statement::SetOp { op, left: Box::new(left), right: Box::new(right) };
        }
    }

    /// Sentences joined by `|`. Only traverse sentences pipe (see [`composable`]): `USE s | ...` would run the
    /// right side in a space it was not checked against.
    fn piped(&mut self) -> QResult<(Statement, usize)> {
        let first = self.pos;
        let (mut left, mut height) = self.bracketed()?;
        // A LIMIT only follows a pipe (NebulaGraph's `piped_sentence PIPE limit_sentence`).
        if matches!(left, Statement::Limit { .. }) {
            return Err(self.error_at(first));
        }
        // A pipe of composable sentences is composable: only the first needs its own check.
        if self.peek_sym("|") && !composable(&left) {
            return Err(self.error_here());
        }
        while self.eat_sym("|") {
            let first = self.pos;
            let (right, h) = self.bracketed()?;
            if !composable(&right) {
                return Err(self.error_at(first));
            }
            height = self.sentence_above(height.max(h))?;
            left = Statement::Pipe(Box::new(left), Box::new(right));
        }
        Ok((left, height))
    }

    /// A sentence in brackets (no node of its own), or a statement.
    fn bracketed(&mut self) -> QResult<(Statement, usize)> {
        if self.eat_sym("(") {
            let first = self.pos;
            let inner = self.sentence_tree()?;
            // `L_PAREN set_sentence R_PAREN`: a bracketed sentence is a traverse sentence.
            if !composable(&inner.0) {
                return Err(self.error_at(first));
            }
            self.expect_sym(")")?;
            return Ok(inner);
        }
        Ok((self.statement()?, 1))
    }

    fn statement(&mut self) -> QResult<Statement> {
        let Tok::Ident(word) = self.peek().clone() else {
            return Err(self.error_here());
        };
        if let Some(what) = self.unsupported_form() {
            self.skip_to_statement_end();
            return Ok(Statement::Unsupported(what));
        }
        if self.peek_kw("ADD") && self.peek_kw_at(1, "HOSTS") {
            self.bump();
            self.bump();
            let hosts = self.comma_separated(Parser::host_addr)?;
            let zone = if self.eat_kw("INTO") {
                self.expect_kw("NEW")?;
                self.expect_kw("ZONE")?;
                Some(self.string_lit()?)
            } else {
                None
            };
            return Ok(Statement::AddHosts { hosts, zone });
        }
        if self.peek_kw("DROP") && self.peek_kw_at(1, "HOSTS") {
            self.bump();
            self.bump();
            return Ok(Statement::DropHosts(self.comma_separated(Parser::host_addr)?));
        }
        match word.to_uppercase().as_str() {
            "CREATE" => self.create(),
            "DROP" => self.drop(),
            "CLEAR" => {
                self.bump();
                self.expect_kw("SPACE")?;
                let if_exists = self.if_exists()?;
                Ok(Statement::ClearSpace { if_exists, name: self.name()? })
            }
            "USE" => {
                self.bump();
                Ok(Statement::UseSpace(self.name()?))
            }
            "SHOW" => self.show(),
            "DESCRIBE" | "DESC" => {
                self.bump();
                if self.eat_kw("SPACE") {
                    return Ok(Statement::DescribeSpace(self.name()?));
                }
                if self.eat_kw("ZONE") {
                    return Ok(Statement::DescribeZone(self.name()?));
                }
                if self.eat_kw("USER") {
                    return Ok(Statement::DescribeUser(self.name()?));
                }
                let kind = self.schema_kind()?;
                if self.eat_kw("INDEX") {
                    return Ok(Statement::DescribeIndex { kind, name: self.name()? });
                }
                Ok(Statement::DescribeSchema { kind, name: self.name()? })
            }
            "LOOKUP" => self.lookup(),
            "REBUILD" => {
                self.bump();
                let kind = self.schema_kind()?;
                self.expect_kw("INDEX")?;
                let names =
                    if matches!(self.peek(), Tok::Ident(_)) { self.comma_separated(Parser::name)? } else { Vec::new() };
                Ok(Statement::RebuildIndex { kind, names })
            }
            "SUBMIT" => {
                self.bump();
                self.expect_kw("JOB")?;
                let spec = if self.eat_kw("COMPACT") {
                    JobSpec::Compact
                } else if self.eat_kw("FLUSH") {
                    JobSpec::Flush
                } else if self.eat_kw("STATS") {
                    JobSpec::Stats
                } else if matches!(self.peek(), Tok::Ident(_)) {
                    let Tok::Ident(w) = self.peek().clone() else { unreachable!() };
                    self.skip_to_statement_end();
                    return Ok(Statement::Unsupported(format!("SUBMIT JOB {}", w.to_uppercase())));
                } else {
                    return Err(self.error_here());
                };
                Ok(Statement::SubmitJob(spec))
            }
            "STOP" => {
                self.bump();
                self.expect_kw("JOB")?;
                Ok(Statement::StopJob(self.int_lit()?))
            }
            "RECOVER" => {
                self.bump();
                self.expect_kw("JOB")?;
                // `RECOVER JOB id, ...`: only those of the failed and stopped jobs.
                let ids = if matches!(self.peek(), Tok::Int(_)) {
                    self.comma_separated(Parser::int_lit)?
                } else {
                    Vec::new()
                };
                Ok(Statement::RecoverJob(ids))
            }
            "ALTER" => self.alter(),
            "INSERT" => self.insert(),
            "UPDATE" if self.peek_kw_at(1, "CONFIGS") => self.set_config(),
            "UPDATE" | "UPSERT" => self.update(),
            "DELETE" => self.delete(),
            "FETCH" => self.fetch(),
            "YIELD" => {
                let start = self.pos;
                let yield_clause = self.yield_clause()?;
                if self.peek_kw("FROM") {
                    return self.yield_join(yield_clause, start);
                }
                // An aggregate in its WHERE is NebulaGraph's syntax error, as in MATCH's.
                let filter = if self.peek_kw("WHERE") { Some(self.match_where()?) } else { None };
                Ok(Statement::Yield { yield_clause, filter })
            }
            "GO" => self.go(),
            "ORDER" => {
                self.bump();
                self.expect_kw("BY")?;
                let mut factors = Vec::new();
                loop {
                    let e = self.expr()?;
                    let asc = if self.eat_kw("DESC") {
                        false
                    } else {
                        self.eat_kw("ASC");
                        true
                    };
                    factors.push((e, asc));
                    if !self.eat_sym(",") {
                        break;
                    }
                }
                Ok(Statement::OrderBy(factors))
            }
            // NebulaGraph's `limit_sentence` takes integer literals (`legal_integer`) only.
            "LIMIT" => {
                self.bump();
                let first = self.legal_integer()?;
                if self.eat_sym(",") {
                    let count = self.legal_integer()?;
                    return Ok(Statement::Limit { offset: first, count });
                }
                let offset = if self.eat_kw("OFFSET") { self.legal_integer()? } else { Expr::Const(Value::Int(0)) };
                Ok(Statement::Limit { offset, count: first })
            }
            "OFFSET" => {
                self.bump();
                let offset = self.legal_integer()?;
                self.expect_kw("LIMIT")?;
                Ok(Statement::Limit { offset, count: self.legal_integer()? })
            }
            "GROUP" => {
                self.bump();
                self.expect_kw("BY")?;
                let keys = self.comma_separated(Parser::expr)?;
                // Its YIELD is part of the grammar, not left to the validator.
                if !self.peek_kw("YIELD") {
                    return Err(self.error_here());
                }
                let yield_clause = self.yield_clause()?;
                Ok(Statement::GroupBy { keys, yield_clause })
            }
            // A standalone openCypher RETURN (no MATCH) is a YIELD; clients ping sessions with `RETURN "..."`.
            "RETURN" => {
                self.bump();
                let yield_clause = self.projection()?;
                Ok(Statement::Yield { yield_clause, filter: None })
            }
            "MATCH" | "OPTIONAL" | "UNWIND" | "WITH" => self.match_statement(),
            "FIND" => self.find_path(),
            "GET" if self.peek_kw_at(1, "SUBGRAPH") => self.get_subgraph(),
            "GET" if self.peek_kw_at(1, "CONFIGS") => {
                self.bump();
                self.bump();
                let (module, name) = self.config_item()?;
                Ok(Statement::GetConfig { module, name })
            }
            "KILL" if self.peek_kw_at(1, "QUERY") => self.kill_query(),
            "KILL" if self.peek_kw_at(1, "SESSION") || self.peek_kw_at(1, "SESSIONS") => {
                self.bump();
                self.bump();
                Ok(Statement::KillSession(self.expr()?))
            }
            "GRANT" | "REVOKE" => {
                self.bump();
                let grant = word.eq_ignore_ascii_case("GRANT");
                self.eat_kw("ROLE");
                let role = self.role_name()?;
                self.expect_kw("ON")?;
                let space = self.name()?;
                self.expect_kw(if grant { "TO" } else { "FROM" })?;
                let user = self.name()?;
                Ok(if grant { Statement::Grant { role, space, user } } else { Statement::Revoke { role, space, user } })
            }
            "CHANGE" if self.peek_kw_at(1, "PASSWORD") => {
                self.bump();
                self.bump();
                let name = self.name()?;
                self.expect_kw("FROM")?;
                let old = self.string_lit()?;
                self.expect_kw("TO")?;
                Ok(Statement::ChangePassword { name, old, new: self.string_lit()? })
            }
            "GET" | "KILL" | "BALANCE" => {
                self.skip_to_statement_end();
                Ok(Statement::Unsupported(word.to_uppercase()))
            }
            _ => Err(self.error_here()),
        }
    }

    // ---- openCypher: MATCH, OPTIONAL MATCH, UNWIND, WITH, RETURN (NebulaGraph's `match_sentence`) ----

    /// Reading clauses, then RETURN.
    /// `FROM $a [INNER|LEFT|RIGHT|OUTER] JOIN $b [ON $a.x == $b.y]` after a YIELD's columns (the YIELD's first token
    /// at `start`). Only the inner join with ON is supported, as in NebulaGraph.
    fn yield_join(&mut self, yield_clause: YieldClause, start: usize) -> QResult<Statement> {
        if yield_clause.columns.iter().any(|c| c.expr.has_aggregate()) {
            return Err(self.aggregate_in_yield(start));
        }
        self.expect_kw("FROM")?;
        let Tok::Var(left) = self.next_tok() else {
            self.pos -= 1;
            return Err(self.error_here());
        };
        let inner = if self.eat_kw("JOIN") {
            false
        } else {
            let inner = self.peek_kw("INNER");
            // NebulaGraph's `join_mode`: INNER, LEFT, RIGHT, OUTER, SEMI or ANTI.
            let mode = ["LEFT", "RIGHT", "OUTER", "SEMI", "ANTI"].iter().any(|m| self.peek_kw(m));
            if !(inner || mode) {
                return Err(self.error_here());
            }
            self.bump();
            self.expect_kw("JOIN")?;
            inner
        };
        let Tok::Var(right) = self.next_tok() else {
            self.pos -= 1;
            return Err(self.error_here());
        };
        if !inner {
            // The cross join has no ON; the other outer joins need one, as the grammar has it.
            if !self.peek_kw("ON") && !self.at_eof() && !self.peek_sym(";") && !self.peek_sym("|") {
                return Err(self.error_here());
            }
            return Err(QError::semantic("only support inner join."));
        }
        self.expect_kw("ON")?;
        let var_prop = |p: &mut Self| -> QResult<Expr> {
            match p.outermost(Parser::unary)?.0 {
                e @ Expr::VarProp { .. } => Ok(e),
                _ => Err(p.error_here()),
            }
        };
        let l = var_prop(self)?;
        self.expect_sym("==")?;
        let r = var_prop(self)?;
        Ok(Statement::YieldJoin(Box::new(YieldJoin { yield_clause, left, right, on: (l, r) })))
    }

    fn match_statement(&mut self) -> QResult<Statement> {
        let start = self.tokens[self.pos].start;
        let mut clauses = Vec::new();
        // Clauses and patterns so far, against `MATCH_CLAUSES_MAX`.
        let mut count = 0usize;
        let mut count_one = |p: &Self| {
            count += 1;
            if count > MATCH_CLAUSES_MAX {
                return Err(QError::syntax(format!(
                    "The MATCH statement has more than {MATCH_CLAUSES_MAX} clauses and patterns near `{}'",
                    p.near_from(start)
                )));
            }
            Ok(())
        };
        loop {
            if self.peek_kw("MATCH") || self.peek_kw("OPTIONAL") {
                count_one(self)?;
                let optional = self.eat_kw("OPTIONAL");
                self.expect_kw("MATCH")?;
                let mut paths = vec![self.path_pattern()?];
                while self.eat_sym(",") {
                    count_one(self)?;
                    paths.push(self.path_pattern()?);
                }
                let filter = if self.peek_kw("WHERE") {
                    let start = self.tokens[self.pos].start;
                    // A `$name` that is no parameter parses there (the validator names it undefined).
                    let outer = std::mem::replace(&mut self.in_column, true);
                    let e = self.match_where();
                    self.in_column = outer;
                    let e = e?;
                    if optional {
                        let end = self.tokens[self.pos.saturating_sub(1)].end.max(start);
                        let text = crate::lexer::truncate(&self.src[start..end], 80);
                        return Err(QError::syntax(format!(
                            "Where clause in optional match is not supported. near `{text}'"
                        )));
                    }
                    Some(e)
                } else {
                    None
                };
                clauses.push(MatchClause::Match { optional, paths, filter });
            } else if self.peek_kw("UNWIND") {
                count_one(self)?;
                self.bump();
                let expr = self.expr()?;
                self.expect_kw("AS")?;
                let alias = self.name()?;
                // Alone, up to the sentence's end, it is nGQL's UNWIND sentence (`... | UNWIND $-.l AS x`).
                if clauses.is_empty() && self.at_sentence_end() {
                    return Ok(Statement::Unwind { expr, alias });
                }
                clauses.push(MatchClause::Unwind { expr, alias });
            } else if self.peek_kw("WITH") {
                count_one(self)?;
                self.bump();
                clauses.push(MatchClause::With(self.match_projection(true)?));
            } else if self.eat_kw("RETURN") {
                let ret = self.match_projection(false)?;
                return Ok(Statement::Match(Box::new(MatchStatement { clauses, ret })));
            } else {
                return Err(self.error_here());
            }
        }
    }

    /// `WHERE cond` of MATCH, WITH or GO; an aggregate there is NebulaGraph's syntax error.
    fn match_where(&mut self) -> QResult<Expr> {
        self.bump();
        let start = self.tokens[self.pos].start;
        let e = self.expr()?;
        if e.has_aggregate() {
            let end = self.tokens[self.pos.saturating_sub(1)].end.max(start);
            let text = crate::lexer::truncate(&self.src[start..end], 80);
            return Err(QError::syntax(format!("Invalid use of aggregating function in where clause. near `{text}'")));
        }
        Ok(e)
    }

    /// The items of RETURN or WITH (`*` or a list), then ORDER BY, SKIP, LIMIT and, for WITH, WHERE.
    fn match_projection(&mut self, with: bool) -> QResult<Projection> {
        let distinct = self.peek_kw("DISTINCT");
        let star = distinct && matches!(self.peek_at(1), Tok::Sym("*")) || self.peek_sym("*");
        let items = if star {
            self.eat_kw("DISTINCT");
            self.bump();
            // `*, more items`.
            if self.eat_sym(",") {
                Some(self.projection()?)
            } else {
                None
            }
        } else {
            Some(self.projection()?)
        };
        let mut order_by = Vec::new();
        if self.eat_kw("ORDER") {
            self.expect_kw("BY")?;
            loop {
                let e = self.expr()?;
                let asc = if self.eat_kw("DESC") || self.eat_kw("DESCENDING") {
                    false
                } else {
                    let _ = self.eat_kw("ASC") || self.eat_kw("ASCENDING");
                    true
                };
                order_by.push((e, asc));
                if !self.eat_sym(",") {
                    break;
                }
            }
        }
        let skip = if self.eat_kw("SKIP") { Some(self.expr()?) } else { None };
        let limit = if self.eat_kw("LIMIT") { Some(self.expr()?) } else { None };
        let filter = if with && self.peek_kw("WHERE") { Some(self.match_where()?) } else { None };
        Ok(Projection { star, items, distinct, order_by, skip, limit, filter })
    }

    /// `[alias =] pattern`, `shortestPath(pattern)` or `allShortestPaths(pattern)`.
    fn path_pattern(&mut self) -> QResult<PathPattern> {
        let alias = if matches!(self.peek(), Tok::Ident(_) | Tok::Quoted(_)) && self.peek_sym_at(1, "=") {
            let a = self.name()?;
            self.bump();
            Some(a)
        } else {
            None
        };
        let kind = if self.peek_kw("shortestPath") && self.peek_sym_at(1, "(") {
            PathKind::Shortest
        } else if self.peek_kw("allShortestPaths") && self.peek_sym_at(1, "(") {
            PathKind::AllShortest
        } else {
            PathKind::All
        };
        if kind != PathKind::All {
            self.bump();
            self.bump();
        }
        let mut nodes = vec![self.node_pattern()?];
        let mut edges = Vec::new();
        while self.peek_sym("-") || self.peek_sym("<-") || self.peek_sym("--") {
            self.hops += 1;
            if self.hops > PATTERN_HOPS_MAX {
                return Err(QError::syntax(format!(
                    "The statement's patterns have more than {PATTERN_HOPS_MAX} hops near `{}'",
                    self.near_from(self.tokens[self.pos].start)
                )));
            }
            edges.push(self.edge_pattern()?);
            nodes.push(self.node_pattern()?);
        }
        if kind != PathKind::All {
            self.expect_sym(")")?;
        }
        Ok(PathPattern { alias, kind, nodes, edges })
    }

    /// Whether the `(` here opens a path pattern rather than a bracketed expression: a node's contents (nothing, a
    /// name, `:label`, `{props}`) up to its `)`, then the start of an edge (`--`, `-[`, `<-[`, `<--`).
    fn pattern_follows(&self) -> bool {
        let node_like = match self.peek_at(1) {
            Tok::Sym(")") | Tok::Sym(":") => true,
            Tok::Ident(_) | Tok::Quoted(_) => matches!(self.peek_at(2), Tok::Sym(")") | Tok::Sym(":") | Tok::Sym("{")),
            _ => false,
        };
        if !node_like {
            return false;
        }
        let mut depth = 0usize;
        let mut i = 0;
        loop {
            match self.peek_at(i) {
                Tok::Sym("(") | Tok::Sym("{") | Tok::Sym("[") => depth += 1,
                Tok::Sym(")") | Tok::Sym("}") | Tok::Sym("]") => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                Tok::Eof => return false,
                _ => {}
            }
            i += 1;
        }
        matches!(
            (self.peek_at(i + 1), self.peek_at(i + 2)),
            (Tok::Sym("--"), _) | (Tok::Sym("-"), Tok::Sym("[")) | (Tok::Sym("<-"), Tok::Sym("[" | "-" | "--"))
        )
    }

    /// `(alias :tag {props} ... {props})`.
    fn node_pattern(&mut self) -> QResult<NodePattern> {
        let open = self.pos;
        self.expect_sym("(")?;
        let mut node = NodePattern::default();
        if matches!(self.peek(), Tok::Ident(_) | Tok::Quoted(_)) {
            node.alias = Some(self.name()?);
        }
        while self.eat_sym(":") {
            let label = self.name()?;
            let props = if self.peek_sym("{") { Some(self.pattern_props()?) } else { None };
            node.labels.push((label, props));
        }
        if self.peek_sym("{") {
            node.props = Some(self.pattern_props()?);
        }
        if !self.peek_sym(")") && node.labels.is_empty() && node.props.is_none() {
            return Err(self.invalid_node(open));
        }
        self.expect_sym(")")?;
        Ok(node)
    }

    /// At a node pattern that is no alias, label or property map: NebulaGraph's grammar reads a parenthesized
    /// expression there and refuses any but a bare name, as "Invalid node pattern" near the whole `(...)`; when
    /// no expression parses either, the syntax error where it stops.
    #[inline(never)]
    fn invalid_node(&mut self, open: usize) -> QError {
        let here = self.error_here();
        let after_alias = self.pos;
        self.pos = open + 1;
        let parsed = self.expr().is_ok() && self.peek_sym(")");
        if !parsed {
            self.pos = after_alias;
            return here;
        }
        let (start, end) = (self.tokens[open].start, self.tokens[self.pos].end);
        let text = crate::lexer::truncate(&self.src[start..end], 80);
        QError::syntax(format!("Invalid node pattern near `{text}'"))
    }

    /// `-[...]->`, `<-[...]-`, `-[...]-`, `<-[...]->`, and the same without brackets (`-->`, `<--`, `--`, `<-->`).
    fn edge_pattern(&mut self) -> QResult<EdgePattern> {
        // `--` is one token, as in NebulaGraph (so `1 -- 2` is no expression): `--` and `-->` without brackets.
        if self.eat_sym("--") {
            let direction = if self.eat_sym(">") { PatternDirection::Out } else { PatternDirection::Both };
            return Ok(EdgePattern { alias: None, types: Vec::new(), direction, range: None, props: None });
        }
        let left = if self.eat_sym("<-") {
            true
        } else {
            self.expect_sym("-")?;
            false
        };
        let mut edge =
            EdgePattern { alias: None, types: Vec::new(), direction: PatternDirection::Both, range: None, props: None };
        if self.eat_sym("[") {
            if matches!(self.peek(), Tok::Ident(_) | Tok::Quoted(_)) {
                edge.alias = Some(self.name()?);
            }
            if self.eat_sym(":") {
                loop {
                    edge.types.push(self.name()?);
                    if !self.eat_sym("|") {
                        break;
                    }
                    self.eat_sym(":");
                }
            }
            if self.eat_sym("*") {
                edge.range = Some(self.step_range()?);
            }
            if self.peek_sym("{") {
                edge.props = Some(self.pattern_props()?);
            }
            self.expect_sym("]")?;
        }
        let right = if self.eat_sym("->") {
            true
        } else {
            self.expect_sym("-")?;
            false
        };
        edge.direction = match (left, right) {
            (false, true) => PatternDirection::Out,
            (true, false) => PatternDirection::In,
            _ => PatternDirection::Both,
        };
        Ok(edge)
    }

    /// After `*`: nothing (one or more steps), `n`, `m..n`, `..n` or `m..`.
    fn step_range(&mut self) -> QResult<StepRange> {
        let bound = |p: &mut Self| -> QResult<Option<u32>> {
            match p.peek().clone() {
                Tok::Int(v) => {
                    p.bump();
                    u32::try_from(v).map(Some).map_err(|_| QError::syntax(format!("Out of range: near `{v}'")))
                }
                Tok::Sym("-") => Err(QError::syntax(format!(
                    "Expected an unsigned integer. near `{}'",
                    crate::lexer::truncate(&p.src[p.tokens[p.pos].start..], 8)
                ))),
                _ => Ok(None),
            }
        };
        let min = bound(self)?;
        if self.eat_sym("..") {
            let max = bound(self)?;
            return Ok(StepRange { min: min.unwrap_or(1), max });
        }
        Ok(match min {
            Some(n) => StepRange { min: n, max: Some(n) },
            None => StepRange { min: 1, max: None },
        })
    }

    /// `{name: expr, ...}` of a node or an edge.
    fn pattern_props(&mut self) -> QResult<PropMap> {
        match self.tree()?.0 {
            Expr::Map(items) => Ok(items),
            _ => Err(self.error_here()),
        }
    }

    /// Skips a statement Quiver does not run yet, so the request still reports a clear error for it.
    /// The name of a NebulaGraph statement Quiver recognises and does not run, if the next one is such: the
    /// cluster's topology (hosts, zones, placement on zones) and the Elasticsearch listener and text service of
    /// full-text search, and the HDFS download and ingest. Each is refused whole with a "not supported" error rather
    /// than a syntax error in the middle.
    fn unsupported_form(&self) -> Option<String> {
        const FORMS: &[&[&str]] = &[
            &["ADD", "LISTENER"],
            &["REMOVE", "LISTENER"],
            &["SIGN", "IN", "TEXT"],
            &["SIGN", "OUT", "TEXT"],
            &["DROP", "ZONE"],
            &["MERGE", "ZONE"],
            &["DIVIDE", "ZONE"],
            &["RENAME", "ZONE"],
            &["ALTER", "SPACE"],
            &["DROP", "FULLTEXT"],
            &["REBUILD", "FULLTEXT"],
            &["DOWNLOAD", "HDFS"],
            &["INGEST"],
        ];
        let form = FORMS.iter().find(|f| f.iter().enumerate().all(|(i, kw)| self.peek_kw_at(i, kw)))?;
        Some(form.join(" "))
    }

    /// `"ip":port`, as ADD HOSTS and DROP HOSTS write a host: `ip:port`.
    fn host_addr(&mut self) -> QResult<String> {
        let ip = self.string_lit()?;
        self.expect_sym(":")?;
        let port = self.int_lit()?;
        Ok(format!("{ip}:{port}"))
    }

    fn skip_to_statement_end(&mut self) {
        while !self.at_eof() && !self.peek_sym(";") {
            self.bump();
        }
    }

    fn schema_kind(&mut self) -> QResult<SchemaKind> {
        if self.eat_kw("TAG") {
            Ok(SchemaKind::Tag)
        } else if self.eat_kw("EDGE") {
            Ok(SchemaKind::Edge)
        } else {
            Err(self.error_here())
        }
    }

    fn create(&mut self) -> QResult<Statement> {
        self.expect_kw("CREATE")?;
        if self.eat_kw("SPACE") {
            return self.create_space();
        }
        if (self.peek_kw("TAG") || self.peek_kw("EDGE")) && self.peek_kw_at(1, "INDEX") {
            return self.create_index();
        }
        if self.eat_kw("SNAPSHOT") {
            return Ok(Statement::CreateSnapshot);
        }
        if self.eat_kw("USER") {
            let if_not_exists = self.if_not_exists()?;
            let name = self.name()?;
            let password = if self.eat_kw("WITH") {
                self.expect_kw("PASSWORD")?;
                self.string_lit()?
            } else {
                String::new()
            };
            return Ok(Statement::CreateUser { name, password, if_not_exists });
        }
        if self.peek_kw("FULLTEXT") {
            let what =
                format!("CREATE {}", self.src[self.tokens[self.pos].start..self.tokens[self.pos].end].to_uppercase());
            self.skip_to_statement_end();
            return Ok(Statement::Unsupported(what));
        }
        let kind = self.schema_kind()?;
        let if_not_exists = self.if_not_exists()?;
        let name = self.name()?;
        self.expect_sym("(")?;
        let mut props = Vec::new();
        if !self.eat_sym(")") {
            loop {
                props.push(self.prop_spec()?);
                if self.eat_sym(")") {
                    break;
                }
                self.expect_sym(",")?;
                // A trailing comma before `)` is allowed here (not in ALTER), as NebulaGraph's grammar has it.
                if self.eat_sym(")") {
                    break;
                }
            }
        }
        let options = self.schema_options()?;
        Ok(Statement::CreateSchema { kind, if_not_exists, name, props, options })
    }

    fn create_index(&mut self) -> QResult<Statement> {
        let kind = self.schema_kind()?;
        self.expect_kw("INDEX")?;
        let if_not_exists = self.if_not_exists()?;
        let name = self.name()?;
        self.expect_kw("ON")?;
        let schema = self.name()?;
        self.expect_sym("(")?;
        let mut fields = Vec::new();
        if !self.eat_sym(")") {
            loop {
                let name = self.name()?;
                let len = if self.eat_sym("(") {
                    let n = self.length_lit()?;
                    self.expect_sym(")")?;
                    Some(n)
                } else {
                    None
                };
                fields.push(IndexFieldSpec { name, len });
                if self.eat_sym(")") {
                    break;
                }
                self.expect_sym(",")?;
            }
        }
        let (mut s2_max_level, mut s2_max_cells) = (None, None);
        if self.eat_kw("WITH") {
            self.expect_sym("(")?;
            loop {
                let level = if self.eat_kw("S2_MAX_LEVEL") {
                    true
                } else if self.eat_kw("S2_MAX_CELLS") {
                    false
                } else {
                    return Err(self.error_here());
                };
                self.expect_sym("=")?;
                let (start, end) = (self.tokens[self.pos].start, self.tokens[self.pos].end);
                let n = self.int_lit()?;
                // NebulaGraph's parser checks the ranges (parser.yy, index_param_item), "near" the number's text.
                let (name, lo, hi) = if level { ("s2_max_level", 0, 30) } else { ("s2_max_cells", 1, 32) };
                if !(lo..=hi).contains(&n) {
                    return Err(QError::syntax(format!(
                        "'{name}' value must be between {lo} and {hi} inclusive near `{}'",
                        near_text(self.src, start, end)
                    )));
                }
                if level {
                    s2_max_level = Some(n as u8);
                } else {
                    s2_max_cells = Some(n as u8);
                }
                if self.eat_sym(")") {
                    break;
                }
                self.expect_sym(",")?;
            }
        }
        let comment = if self.eat_kw("COMMENT") {
            self.eat_sym("=");
            Some(self.string_lit()?)
        } else {
            None
        };
        Ok(Statement::CreateIndex { kind, if_not_exists, name, schema, fields, s2_max_level, s2_max_cells, comment })
    }

    fn lookup(&mut self) -> QResult<Statement> {
        self.expect_kw("LOOKUP")?;
        self.expect_kw("ON")?;
        let schema = self.name()?;
        // A variable parses there, as in NebulaGraph's grammar; the validator refuses the condition it is in.
        let filter = if self.eat_kw("WHERE") {
            let outer = std::mem::replace(&mut self.in_column, true);
            let filter = self.expr();
            self.in_column = outer;
            Some(filter?)
        } else {
            None
        };
        let yield_clause = if self.peek_kw("YIELD") { Some(self.yield_clause()?) } else { None };
        Ok(Statement::Lookup(Box::new(LookupStatement { schema, filter, yield_clause })))
    }

    fn create_space(&mut self) -> QResult<Statement> {
        let if_not_exists = self.if_not_exists()?;
        let name = self.name()?;
        if self.eat_kw("AS") {
            return Ok(Statement::CreateSpaceAs { if_not_exists, name, from: self.name()? });
        }
        let (mut partition_num, mut replica_factor, mut vid_type) = (None, None, None);
        let (mut charset, mut collate) = (None, None);
        if self.eat_sym("(") {
            loop {
                let Tok::Ident(opt) = self.peek().clone() else {
                    return Err(self.error_here());
                };
                match opt.to_lowercase().as_str() {
                    "partition_num" => {
                        self.bump();
                        self.expect_sym("=")?;
                        partition_num = Some(self.int_lit()?);
                    }
                    "replica_factor" => {
                        self.bump();
                        self.expect_sym("=")?;
                        replica_factor = Some(self.int_lit()?);
                    }
                    "vid_type" => {
                        self.bump();
                        self.expect_sym("=")?;
                        vid_type = Some(self.vid_type()?);
                    }
                    which @ ("charset" | "collate") => {
                        self.bump();
                        self.expect_sym("=")?;
                        let Tok::Ident(value) = self.next_tok() else {
                            return Err(self.error_here());
                        };
                        let value = Some(value.to_ascii_lowercase());
                        if which == "charset" {
                            charset = value;
                        } else {
                            collate = value;
                        }
                    }
                    "atomic_edge" => {
                        self.bump();
                        self.expect_sym("=")?;
                        self.bump();
                    }
                    _ => return Err(self.error_here()),
                }
                if self.eat_sym(")") {
                    break;
                }
                self.expect_sym(",")?;
            }
        }
        // `ON zone, ...`: placement on zones, which a cluster's topology decides.
        if self.peek_kw("ON") {
            self.skip_to_statement_end();
            return Ok(Statement::Refused("Create space with zone is unsupported".into()));
        }
        let comment = if self.eat_kw("COMMENT") {
            self.expect_sym("=")?;
            Some(self.string_lit()?)
        } else {
            None
        };
        Ok(Statement::CreateSpace {
            if_not_exists,
            name,
            partition_num,
            replica_factor,
            vid_type,
            charset,
            collate,
            comment,
        })
    }

    fn vid_type(&mut self) -> QResult<VidTypeSpec> {
        let Tok::Ident(t) = self.peek().clone() else {
            return Err(self.error_here());
        };
        match t.to_lowercase().as_str() {
            "int" | "int64" => {
                self.bump();
                Ok(VidTypeSpec::Int64)
            }
            "fixed_string" => {
                self.bump();
                self.expect_sym("(")?;
                let n = self.int_lit()?;
                self.expect_sym(")")?;
                Ok(VidTypeSpec::FixedString(n))
            }
            _ => Err(self.error_here()),
        }
    }

    fn prop_type(&mut self) -> QResult<PropType> {
        let Tok::Ident(t) = self.peek().clone() else {
            return Err(self.error_here());
        };
        let ty = match t.to_lowercase().as_str() {
            "bool" => PropType::Bool,
            "int8" => PropType::Int8,
            "int16" => PropType::Int16,
            "int32" => PropType::Int32,
            "int64" | "int" => PropType::Int64,
            "float" => PropType::Float,
            "double" => PropType::Double,
            "string" => PropType::String,
            "date" => PropType::Date,
            "time" => PropType::Time,
            "datetime" => PropType::DateTime,
            "timestamp" => PropType::Timestamp,
            "duration" => PropType::Duration,
            "fixed_string" => {
                self.bump();
                self.expect_sym("(")?;
                let n = self.length_lit()?;
                self.expect_sym(")")?;
                return Ok(PropType::FixedString(n as u16));
            }
            "geography" => {
                self.bump();
                if !self.eat_sym("(") {
                    return Ok(PropType::Geography(None));
                }
                let Tok::Ident(shape) = self.peek().clone() else { return Err(self.error_here()) };
                let shape = GeoShape::parse(&shape).ok_or_else(|| self.error_here())?;
                self.bump();
                self.expect_sym(")")?;
                return Ok(PropType::Geography(Some(shape)));
            }
            // NebulaGraph's `List< string|int|float >` and `Set< ... >`.
            kind @ ("list" | "set") => {
                self.bump();
                self.expect_sym("<")?;
                let Tok::Ident(item) = self.peek().clone() else { return Err(self.error_here()) };
                let item = match item.to_lowercase().as_str() {
                    "string" => ItemType::String,
                    "int" => ItemType::Int,
                    "float" => ItemType::Float,
                    _ => return Err(self.error_here()),
                };
                self.bump();
                self.expect_sym(">")?;
                return Ok(if kind == "list" { PropType::List(item) } else { PropType::Set(item) });
            }
            _ => return Err(self.error_here()),
        };
        self.bump();
        Ok(ty)
    }

    fn prop_spec(&mut self) -> QResult<PropSpec> {
        let name = self.name()?;
        let ty = self.prop_type()?;
        let mut spec = PropSpec { name, ty, nullable: true, default: None, comment: None };
        loop {
            if self.eat_kw("NULL") {
                spec.nullable = true;
            } else if self.peek_kw("NOT") && self.peek_kw_at(1, "NULL") {
                self.bump();
                self.bump();
                spec.nullable = false;
            } else if self.eat_kw("DEFAULT") {
                spec.default = Some(self.expr()?);
            } else if self.eat_kw("COMMENT") {
                spec.comment = Some(self.string_lit()?);
            } else {
                break;
            }
        }
        Ok(spec)
    }

    fn schema_options(&mut self) -> QResult<SchemaOptions> {
        let mut opts = SchemaOptions::default();
        loop {
            if self.eat_kw("TTL_DURATION") {
                self.expect_sym("=")?;
                // An unsigned integer in NebulaGraph's grammar: `-1` is a syntax error.
                if self.peek_sym("-") {
                    return Err(self.error_here());
                }
                opts.ttl_duration = Some(self.int_lit()?);
            } else if self.eat_kw("TTL_COL") {
                self.expect_sym("=")?;
                opts.ttl_col = Some(self.string_lit()?);
            } else if self.eat_kw("COMMENT") {
                self.expect_sym("=")?;
                opts.comment = Some(self.string_lit()?);
            } else {
                break;
            }
            self.eat_sym(",");
        }
        Ok(opts)
    }

    /// GOD, ADMIN, DBA, USER or GUEST, upper-cased.
    fn role_name(&mut self) -> QResult<String> {
        for role in ["GOD", "ADMIN", "DBA", "USER", "GUEST"] {
            if self.eat_kw(role) {
                return Ok(role.to_string());
            }
        }
        Err(self.error_here())
    }

    fn alter(&mut self) -> QResult<Statement> {
        self.expect_kw("ALTER")?;
        if self.eat_kw("USER") {
            let name = self.name()?;
            self.expect_kw("WITH")?;
            self.expect_kw("PASSWORD")?;
            return Ok(Statement::AlterUser { name, password: self.string_lit()? });
        }
        let kind = self.schema_kind()?;
        let name = self.name()?;
        let mut ops = Vec::new();
        loop {
            if self.eat_kw("ADD") {
                ops.push(AlterOp::Add(self.prop_spec_list()?));
            } else if self.eat_kw("CHANGE") {
                ops.push(AlterOp::Change(self.prop_spec_list()?));
            } else if self.eat_kw("DROP") {
                self.expect_sym("(")?;
                let names = self.comma_separated(Parser::name)?;
                self.expect_sym(")")?;
                ops.push(AlterOp::Drop(names));
            } else {
                break;
            }
            if !self.eat_sym(",") {
                break;
            }
        }
        let options = self.schema_options()?;
        if ops.is_empty() && options == SchemaOptions::default() {
            return Err(self.error_here());
        }
        Ok(Statement::AlterSchema { kind, name, ops, options })
    }

    fn prop_spec_list(&mut self) -> QResult<Vec<PropSpec>> {
        self.expect_sym("(")?;
        let specs = self.comma_separated(Parser::prop_spec)?;
        self.expect_sym(")")?;
        Ok(specs)
    }

    fn drop(&mut self) -> QResult<Statement> {
        self.expect_kw("DROP")?;
        if self.eat_kw("SNAPSHOT") {
            return Ok(Statement::DropSnapshot(self.name()?));
        }
        if self.eat_kw("SPACE") {
            let if_exists = self.if_exists()?;
            return Ok(Statement::DropSpace { if_exists, name: self.name()? });
        }
        if self.eat_kw("USER") {
            let if_exists = self.if_exists()?;
            return Ok(Statement::DropUser { if_exists, name: self.name()? });
        }
        if (self.peek_kw("TAG") || self.peek_kw("EDGE")) && self.peek_kw_at(1, "INDEX") {
            let kind = self.schema_kind()?;
            self.expect_kw("INDEX")?;
            let if_exists = self.if_exists()?;
            return Ok(Statement::DropIndex { kind, if_exists, name: self.name()? });
        }
        let kind = self.schema_kind()?;
        let if_exists = self.if_exists()?;
        Ok(Statement::DropSchema { kind, if_exists, name: self.name()? })
    }

    fn show(&mut self) -> QResult<Statement> {
        self.expect_kw("SHOW")?;
        if self.eat_kw("SPACES") {
            return Ok(Statement::ShowSpaces);
        }
        if self.eat_kw("USERS") {
            return Ok(Statement::ShowUsers);
        }
        if self.eat_kw("ROLES") {
            self.expect_kw("IN")?;
            return Ok(Statement::ShowRoles(self.name()?));
        }
        if self.peek_kw("LOCAL") && self.peek_kw_at(1, "SESSIONS") {
            self.bump();
        }
        if self.peek_kw("LOCAL") && self.peek_kw_at(1, "QUERIES") {
            self.bump();
            self.bump();
            return Ok(Statement::ShowQueries { local: true });
        }
        if self.eat_kw("QUERIES") {
            return Ok(Statement::ShowQueries { local: false });
        }
        if self.eat_kw("SESSIONS") {
            return Ok(Statement::ShowSessions(None));
        }
        if self.eat_kw("SESSION") {
            let Tok::Int(id) = self.peek().clone() else {
                return Err(self.error_here());
            };
            let Ok(id) = i64::try_from(id) else {
                return Err(self.error_here());
            };
            self.bump();
            return Ok(Statement::ShowSessions(Some(id)));
        }
        if self.eat_kw("TAGS") {
            return Ok(Statement::ShowSchemas(SchemaKind::Tag));
        }
        if self.eat_kw("HOSTS") {
            let role = [("GRAPH", HostRole::Graph), ("META", HostRole::Meta), ("AGENT", HostRole::Agent)]
                .into_iter()
                .find(|(w, _)| self.eat_kw(w))
                .map(|(_, r)| r);
            let role = match role {
                None if self.eat_kw("STORAGE") => {
                    if self.peek_kw("LISTENER") {
                        self.skip_to_statement_end();
                        return Ok(Statement::Unsupported("SHOW HOSTS STORAGE LISTENER".into()));
                    }
                    Some(HostRole::Storage)
                }
                r => r,
            };
            return Ok(Statement::ShowHosts(role));
        }
        if self.peek_kw("PARTS") || self.peek_kw("PART") {
            let plural = self.eat_kw("PARTS");
            if !plural {
                self.bump();
            }
            if matches!(self.peek(), Tok::Int(_)) {
                return Ok(Statement::ShowParts(Some(self.comma_separated(Parser::int_lit)?)));
            }
            if !plural {
                return Err(self.error_here());
            }
            return Ok(Statement::ShowParts(None));
        }
        if self.eat_kw("CONFIGS") {
            return Ok(Statement::ShowConfigs(self.config_module()));
        }
        for (word, stmt) in [
            ("SNAPSHOTS", Statement::ShowSnapshots),
            ("CHARSET", Statement::ShowCharset),
            ("COLLATION", Statement::ShowCollation),
            ("ZONES", Statement::ShowZones),
        ] {
            if self.eat_kw(word) {
                return Ok(stmt);
            }
        }
        if self.peek_kw("META") && self.peek_kw_at(1, "LEADER") {
            self.bump();
            self.bump();
            return Ok(Statement::ShowMetaLeader);
        }
        if (self.peek_kw("TAG") || self.peek_kw("EDGE"))
            && (self.peek_kw_at(1, "INDEXES") || self.peek_kw_at(1, "INDEX"))
        {
            let kind = self.schema_kind()?;
            if self.eat_kw("INDEXES") {
                let by = if self.eat_kw("BY") { Some(self.name()?) } else { None };
                return Ok(Statement::ShowIndexes { kind, by });
            }
            self.expect_kw("INDEX")?;
            self.expect_kw("STATUS")?;
            return Ok(Statement::ShowIndexStatus(kind));
        }
        if self.eat_kw("JOBS") {
            return Ok(Statement::ShowJobs);
        }
        if self.eat_kw("JOB") {
            return Ok(Statement::ShowJob(self.int_lit()?));
        }
        if self.eat_kw("STATS") {
            return Ok(Statement::ShowStats);
        }
        if self.eat_kw("EDGES") {
            return Ok(Statement::ShowSchemas(SchemaKind::Edge));
        }
        if self.eat_kw("CREATE") {
            if self.eat_kw("SPACE") {
                return Ok(Statement::ShowCreateSpace(self.name()?));
            }
            if (self.peek_kw("TAG") || self.peek_kw("EDGE")) && self.peek_kw_at(1, "INDEX") {
                let kind = self.schema_kind()?;
                self.expect_kw("INDEX")?;
                return Ok(Statement::ShowCreateIndex { kind, name: self.name()? });
            }
            let kind = self.schema_kind()?;
            return Ok(Statement::ShowCreateSchema { kind, name: self.name()? });
        }
        if matches!(self.peek(), Tok::Ident(_)) {
            let Tok::Ident(w) = self.peek().clone() else { unreachable!() };
            self.skip_to_statement_end();
            return Ok(Statement::Unsupported(format!("SHOW {}", w.to_uppercase())));
        }
        Err(self.error_here())
    }

    fn insert(&mut self) -> QResult<Statement> {
        self.expect_kw("INSERT")?;
        if self.eat_kw("VERTEX") {
            let if_not_exists = self.if_not_exists()?;
            // Index entries are kept right whether or not IGNORE_EXISTED_INDEX is written.
            self.eat_kw("IGNORE_EXISTED_INDEX");
            let mut tags = Vec::new();
            if !self.peek_kw("VALUES") {
                loop {
                    let tag = self.name()?;
                    let props = if self.eat_sym("(") { Some(self.name_list_until(")")?) } else { None };
                    tags.push((tag, props));
                    if !self.eat_sym(",") {
                        break;
                    }
                }
            }
            self.expect_kw("VALUES")?;
            let mut rows = Vec::new();
            loop {
                let vid = self.expr()?;
                self.expect_sym(":")?;
                let values = self.value_tuple()?;
                rows.push(VertexRow { vid, values });
                if !self.eat_sym(",") {
                    break;
                }
            }
            return Ok(Statement::InsertVertices { if_not_exists, tags, rows });
        }
        self.expect_kw("EDGE")?;
        let if_not_exists = self.if_not_exists()?;
        self.eat_kw("IGNORE_EXISTED_INDEX");
        let edge = self.name()?;
        let props = if self.eat_sym("(") { Some(self.name_list_until(")")?) } else { None };
        self.expect_kw("VALUES")?;
        let mut rows = Vec::new();
        loop {
            let key = self.edge_key()?;
            self.expect_sym(":")?;
            let values = self.value_tuple()?;
            rows.push(EdgeRow { key, values });
            if !self.eat_sym(",") {
                break;
            }
        }
        Ok(Statement::InsertEdges { if_not_exists, edge, props, rows })
    }

    fn name_list_until(&mut self, close: &str) -> QResult<Vec<String>> {
        let mut names = Vec::new();
        if self.eat_sym(close) {
            return Ok(names);
        }
        loop {
            names.push(self.name()?);
            if self.eat_sym(close) {
                return Ok(names);
            }
            self.expect_sym(",")?;
        }
    }

    fn value_tuple(&mut self) -> QResult<Vec<Expr>> {
        self.expect_sym("(")?;
        let mut values = Vec::new();
        if self.eat_sym(")") {
            return Ok(values);
        }
        loop {
            values.push(self.expr()?);
            if self.eat_sym(")") {
                return Ok(values);
            }
            self.expect_sym(",")?;
        }
    }

    /// A VID in a key position: a literal, `hash(...)`, or another constant expression, but not a comparison.
    fn vid_expr(&mut self) -> QResult<Expr> {
        // A bare `$var` or query parameter is NebulaGraph's friendlier syntax error (its `vid` rule's VARIABLE
        // branch): a VID is a constant, an expression of constants, or a column read.
        if let (Tok::Var(_), false) = (self.peek(), self.peek_sym_at(1, ".")) {
            let t = &self.tokens[self.pos];
            let name = &self.src[t.start + 1..t.end];
            let what = if self.params.as_ref().is_some_and(|p| p.iter().any(|n| n == name)) {
                "Parameter"
            } else {
                "Variable"
            };
            return Err(QError::syntax(format!("{what} is not supported in vid near `{}'", &self.src[t.start..t.end])));
        }
        Ok(self.outermost(Parser::additive)?.0)
    }

    fn edge_key(&mut self) -> QResult<EdgeKey> {
        let src = self.vid_expr()?;
        self.expect_sym("->")?;
        let dst = self.vid_expr()?;
        let rank = if self.eat_sym("@") { Some(self.outermost(Parser::unary)?.0) } else { None };
        Ok(EdgeKey { src, dst, rank })
    }

    /// One or more `item`s separated by commas.
    fn comma_separated<T>(&mut self, item: fn(&mut Self) -> QResult<T>) -> QResult<Vec<T>> {
        let mut items = vec![item(self)?];
        while self.eat_sym(",") {
            items.push(item(self)?);
        }
        Ok(items)
    }

    /// `*` (as `None`) or a comma-separated list of names.
    fn names_or_star(&mut self) -> QResult<Option<Vec<String>>> {
        if self.eat_sym("*") {
            return Ok(None);
        }
        self.comma_separated(Parser::name).map(Some)
    }

    /// The vertex IDs of a FETCH or DELETE: a list of constants, or one column of a pipe or a variable
    /// (NebulaGraph: "only constant list or single column of data is allowed in piped FETCH clause").
    fn vid_source(&mut self) -> QResult<Vec<Expr>> {
        if matches!(self.peek(), Tok::InputRef | Tok::Var(_)) && matches!(self.peek_at(1), Tok::Sym(".")) {
            let column = self.vid_expr()?;
            if self.peek_sym(",") {
                return Err(self.error_here());
            }
            return Ok(vec![column]);
        }
        self.comma_separated(Parser::vid_expr)
    }

    /// `KILL QUERY (session = s, plan = p)` or `(plan = p)`, in either order (NebulaGraph's
    /// `query_unique_identifier`).
    fn kill_query(&mut self) -> QResult<Statement> {
        self.bump();
        self.bump();
        self.expect_sym("(")?;
        let (mut session, mut plan) = (None, None);
        loop {
            let slot = if self.peek_kw("SESSION") {
                &mut session
            } else if self.peek_kw("PLAN") {
                &mut plan
            } else {
                return Err(self.error_here());
            };
            if slot.is_some() {
                return Err(self.error_here());
            }
            self.bump();
            self.expect_sym("=")?;
            *slot = Some(self.expr()?);
            if !self.eat_sym(",") {
                break;
            }
        }
        let Some(plan) = plan else { return Err(self.error_here()) };
        self.expect_sym(")")?;
        Ok(Statement::KillQuery { session, plan })
    }

    /// `GRAPH`, `META` or `STORAGE`, if one is next.
    fn config_module(&mut self) -> Option<ConfigModule> {
        [("GRAPH", ConfigModule::Graph), ("META", ConfigModule::Meta), ("STORAGE", ConfigModule::Storage)]
            .into_iter()
            .find(|(w, _)| self.eat_kw(w))
            .map(|(_, m)| m)
    }

    /// A setting's name, `module:name` or `name` (NebulaGraph's `get_config_item`).
    fn config_item(&mut self) -> QResult<(Option<ConfigModule>, String)> {
        let module = if self.peek_sym_at(1, ":") { self.config_module() } else { None };
        if module.is_some() {
            self.expect_sym(":")?;
        }
        Ok((module, self.name()?))
    }

    /// `UPDATE CONFIGS [module:]name = expr` or `= {key = expr, ...}` (NebulaGraph's `set_config_item`).
    fn set_config(&mut self) -> QResult<Statement> {
        self.bump();
        self.bump();
        let (module, name) = self.config_item()?;
        self.expect_sym("=")?;
        let value = if self.eat_sym("{") {
            let mut items = Vec::new();
            loop {
                let key = self.name()?;
                self.expect_sym("=")?;
                items.push((key, self.expr()?));
                if !self.eat_sym(",") {
                    break;
                }
            }
            self.expect_sym("}")?;
            Expr::Map(items)
        } else {
            self.expr()?
        };
        Ok(Statement::SetConfig { module, name, value })
    }

    fn update(&mut self) -> QResult<Statement> {
        let upsert = self.peek_kw("UPSERT");
        self.bump();
        // NebulaGraph 1.0's forms, `UPDATE VERTEX vid SET tag.prop = ...` and `UPDATE EDGE a->b[@r] OF e SET ...`,
        // are kept: the vertex's tag is the one every SET item names.
        // With ON, a list of VIDs or edge keys (`vid_list`, `edge_keys`), or one reference to a pipe or variable.
        let reads_input = |e: &Expr| matches!(e, Expr::InputProp(_) | Expr::VarProp { .. });
        let mut target = if self.eat_kw("VERTEX") {
            if self.eat_kw("ON") {
                let tag = self.name()?;
                let mut vids = vec![self.vid_expr()?];
                while !reads_input(&vids[0]) && self.eat_sym(",") {
                    vids.push(self.vid_expr()?);
                }
                UpdateTarget::Vertex { tag, vids }
            } else {
                UpdateTarget::Vertex { tag: String::new(), vids: vec![self.vid_expr()?] }
            }
        } else {
            self.expect_kw("EDGE")?;
            if self.eat_kw("ON") {
                let edge = self.name()?;
                let mut keys = vec![self.edge_key()?];
                while !reads_input(&keys[0].src) && self.eat_sym(",") {
                    keys.push(self.edge_key()?);
                }
                UpdateTarget::Edge { edge, keys }
            } else {
                let key = self.edge_key()?;
                self.expect_kw("OF")?;
                UpdateTarget::Edge { edge: self.name()?, keys: vec![key] }
            }
        };
        self.expect_kw("SET")?;
        let mut set = Vec::new();
        let mut schemas = Vec::new();
        loop {
            let mut prop = self.name()?;
            // `tag.prop = ...` names the schema; with ON it must be the one named there.
            let mut schema = String::new();
            if self.eat_sym(".") {
                schema = std::mem::replace(&mut prop, self.name()?);
            }
            if !schemas.contains(&schema) {
                schemas.push(schema);
            }
            self.expect_sym("=")?;
            set.push((prop, self.expr()?));
            if !self.eat_sym(",") {
                break;
            }
        }
        if let UpdateTarget::Vertex { tag, .. } = &mut target {
            if tag.is_empty() {
                match &schemas[..] {
                    [one] if !one.is_empty() => *tag = one.clone(),
                    [_] => {
                        return Err(QError::semantic(
                            "`UPDATE VERTEX vid SET ...' needs its tag: write `SET tag.prop = ...' or `UPDATE VERTEX ON tag vid'",
                        ))
                    }
                    _ => {
                        schemas.sort();
                        return Err(QError::semantic(format!("Multi schema name: {}", schemas.join(","))));
                    }
                }
            }
        }
        let when = if self.eat_kw("WHEN") { Some(self.expr()?) } else { None };
        let yield_clause = if self.peek_kw("YIELD") { Some(self.yield_clause()?) } else { None };
        Ok(Statement::Update { upsert, target, set, when, yield_clause })
    }

    fn delete(&mut self) -> QResult<Statement> {
        self.expect_kw("DELETE")?;
        if self.eat_kw("VERTEX") {
            let vids = self.vid_source()?;
            let with_edge = if self.eat_kw("WITH") {
                self.expect_kw("EDGE")?;
                true
            } else {
                false
            };
            return Ok(Statement::DeleteVertices { vids, with_edge });
        }
        if self.eat_kw("TAG") {
            let tags = self.names_or_star()?;
            self.expect_kw("FROM")?;
            return Ok(Statement::DeleteTags { tags, vids: self.vid_source()? });
        }
        self.expect_kw("EDGE")?;
        let edge = self.name()?;
        let keys = self.comma_separated(Parser::edge_key)?;
        Ok(Statement::DeleteEdges { edge, keys })
    }

    fn go(&mut self) -> QResult<Statement> {
        self.expect_kw("GO")?;
        let (min_steps, max_steps) = self.step_range_clause()?.unwrap_or((1, 1));
        self.expect_kw("FROM")?;
        let from = self.path_ends()?;
        self.expect_kw("OVER")?;
        let edges = self.names_or_star()?;
        let direction = self.direction();
        let filter = if self.peek_kw("WHERE") { Some(self.match_where()?) } else { None };
        let yield_at = self.pos;
        let yield_clause = if self.peek_kw("YIELD") { Some(self.yield_clause()?) } else { None };
        // An aggregate in a GO's YIELD is NebulaGraph's syntax error (its `go_sentence` takes no aggregate).
        if yield_clause.as_ref().is_some_and(|y| y.columns.iter().any(|c| c.expr.has_aggregate())) {
            return Err(self.aggregate_in_yield(yield_at));
        }
        let bounds = if (self.peek_kw("SAMPLE") || self.peek_kw("LIMIT")) && matches!(self.peek_at(1), Tok::Sym("[")) {
            let sample = self.eat_kw("SAMPLE");
            if !sample {
                self.expect_kw("LIMIT")?;
            }
            let at = self.pos;
            self.expect_sym("[")?;
            let counts = self.comma_separated(Parser::expr)?;
            self.expect_sym("]")?;
            // NebulaGraph's `truncate_clause`: a SAMPLE list may not read a parameter (a LIMIT list may).
            let mut param = false;
            counts.iter().for_each(|c| c.visit(&mut |x| param |= matches!(x, Expr::Param(_))));
            if param && sample {
                let text = &self.src[self.tokens[at].start..self.tokens[self.pos - 1].end];
                return Err(QError::syntax(format!("Parameter is not supported in sample clause near `{text}'")));
            }
            Some(StepBounds { sample, counts })
        } else {
            None
        };
        Ok(Statement::Go(Box::new(GoStatement {
            min_steps,
            max_steps,
            from,
            over: OverClause { edges, direction },
            filter,
            yield_clause,
            bounds,
        })))
    }

    /// `FROM vids` (GO, FIND PATH, GET SUBGRAPH) or `TO vids`: constants, or one column of the input or of a
    /// variable.
    fn path_ends(&mut self) -> QResult<FromClause> {
        if matches!(self.peek(), Tok::InputRef | Tok::Var(_)) && matches!(self.peek_at(1), Tok::Sym(".")) {
            return Ok(FromClause::Ref(self.vid_expr()?));
        }
        Ok(FromClause::Vids(self.comma_separated(Parser::vid_expr)?))
    }

    /// `n STEP|STEPS` after a step count was read.
    fn steps_word(&mut self) -> QResult<()> {
        if !self.eat_kw("STEPS") {
            self.expect_kw("STEP")?;
        }
        Ok(())
    }

    /// `n STEPS` (as `(n, n)`) or `m TO n STEPS` of GO and GET SUBGRAPH, when one is written here.
    fn step_range_clause(&mut self) -> QResult<Option<(u32, u32)>> {
        if !matches!(self.peek(), Tok::Int(_)) {
            return Ok(None);
        }
        let min = self.step_count()?;
        let max = if self.eat_kw("TO") { self.step_count()? } else { min };
        self.steps_word()?;
        Ok(Some((min, max)))
    }

    /// A non-negative step count; one past `u32::MAX` walks as far as `u32::MAX` steps do (in NebulaGraph a
    /// 64-bit count is cut to 32 bits: its `GO 10000000000000 STEPS` walks until nothing is left, as here).
    fn step_count(&mut self) -> QResult<u32> {
        let Tok::Int(n) = self.peek().clone() else {
            return Err(self.error_here());
        };
        self.bump();
        if n < 0 {
            return Err(QError::syntax(format!("Out of range: near `{n}'")));
        }
        Ok(u32::try_from(n).unwrap_or(u32::MAX))
    }

    fn find_path(&mut self) -> QResult<Statement> {
        self.expect_kw("FIND")?;
        let kind = if self.eat_kw("SHORTEST") {
            PathSearch::Shortest
        } else if self.eat_kw("SINGLE") {
            self.expect_kw("SHORTEST")?;
            PathSearch::SingleShortest
        } else if self.eat_kw("ALL") {
            PathSearch::All
        } else {
            self.expect_kw("NOLOOP")?;
            PathSearch::NoLoop
        };
        self.expect_kw("PATH")?;
        let with_prop = self.with_prop()?;
        self.expect_kw("FROM")?;
        let from = self.path_ends()?;
        self.expect_kw("TO")?;
        let to = self.path_ends()?;
        self.expect_kw("OVER")?;
        // Edge aliases (`OVER like AS l`) are accepted and ignored, as NebulaGraph does.
        let edges = if self.eat_sym("*") {
            None
        } else {
            Some(self.comma_separated(|p| {
                let name = p.name()?;
                if p.eat_kw("AS") {
                    p.name()?;
                }
                Ok(name)
            })?)
        };
        let direction = self.direction();
        let filter = if self.peek_kw("WHERE") { Some(self.where_condition()?) } else { None };
        let upto = if self.eat_kw("UPTO") {
            let n = self.step_count()?;
            self.steps_word()?;
            n
        } else {
            5
        };
        let yield_clause = if self.peek_kw("YIELD") { Some(self.yield_clause()?) } else { None };
        Ok(Statement::FindPath(Box::new(FindPathStatement {
            kind,
            with_prop,
            from,
            to,
            over: OverClause { edges, direction },
            filter,
            upto,
            yield_clause,
        })))
    }

    /// `REVERSELY`, `BIDIRECT`, or nothing (out-edges) after an OVER clause.
    fn direction(&mut self) -> Direction {
        if self.eat_kw("REVERSELY") {
            Direction::Reversely
        } else if self.eat_kw("BIDIRECT") {
            Direction::Bidirect
        } else {
            Direction::Out
        }
    }

    /// `WITH PROP`, or nothing.
    fn with_prop(&mut self) -> QResult<bool> {
        if !self.eat_kw("WITH") {
            return Ok(false);
        }
        self.expect_kw("PROP")?;
        Ok(true)
    }

    /// `WHERE cond` of FIND PATH and GET SUBGRAPH: an aggregate there is NebulaGraph's syntax error; a parameter
    /// the request does not have is left to the validator ("Undefined parameters: ...").
    fn where_condition(&mut self) -> QResult<Expr> {
        let known = self.params.take();
        let e = self.match_where();
        self.params = known;
        e
    }

    fn get_subgraph(&mut self) -> QResult<Statement> {
        self.expect_kw("GET")?;
        self.expect_kw("SUBGRAPH")?;
        let with_prop = self.with_prop()?;
        let (min_steps, max_steps) = self.step_range_clause()?.unwrap_or((1, 1));
        self.expect_kw("FROM")?;
        let from = self.path_ends()?;
        let mut lists: [Vec<SubgraphEdge>; 3] = Default::default();
        for (i, word) in ["IN", "OUT", "BOTH"].into_iter().enumerate() {
            if self.eat_kw(word) {
                lists[i] = self.comma_separated(|p| {
                    let name = p.name()?;
                    let renamed = p.eat_kw("AS");
                    if renamed {
                        p.name()?;
                    }
                    Ok(SubgraphEdge { name, renamed })
                })?;
            }
        }
        let [in_edges, out_edges, both_edges] = lists;
        let filter = if self.peek_kw("WHERE") { Some(self.where_condition()?) } else { None };
        let yield_clause = if self.peek_kw("YIELD") { Some(self.yield_clause()?) } else { None };
        Ok(Statement::GetSubgraph(Box::new(SubgraphStatement {
            with_prop,
            min_steps,
            max_steps,
            from,
            in_edges,
            out_edges,
            both_edges,
            filter,
            yield_clause,
        })))
    }

    fn fetch(&mut self) -> QResult<Statement> {
        self.expect_kw("FETCH")?;
        self.expect_kw("PROP")?;
        self.expect_kw("ON")?;
        let tags = self.names_or_star()?;
        // An edge fetch is recognized by its `->` after the first key.
        let save = self.pos;
        let is_edge = tags.as_ref().is_some_and(|t| t.len() == 1) && {
            let probe = self.vid_expr().is_ok() && self.peek_sym("->");
            self.pos = save;
            probe
        };
        if is_edge {
            let edge = tags.expect("checked").remove(0);
            let keys = self.comma_separated(Parser::edge_key)?;
            let yield_clause = self.fetch_yield()?;
            return Ok(Statement::FetchEdges { edge, keys, yield_clause });
        }
        let vids = self.vid_source()?;
        let yield_clause = self.fetch_yield()?;
        Ok(Statement::FetchVertices { tags, vids, yield_clause })
    }

    /// A FETCH's YIELD; at the end of the sentence, none: a clause of no column, which the validator refuses after
    /// it has looked up the tags or the edge type (NebulaGraph's order: `TagNotFound` before `Missing yield
    /// clause.`). A YIELD written out has at least one column.
    fn fetch_yield(&mut self) -> QResult<YieldClause> {
        if !self.peek_kw("YIELD") && self.at_sentence_end() {
            return Ok(YieldClause { distinct: false, columns: Vec::new() });
        }
        self.required_yield()
    }

    fn required_yield(&mut self) -> QResult<YieldClause> {
        if !self.peek_kw("YIELD") {
            // NebulaGraph's grammar takes the sentence without it, and its validator refuses it.
            if self.at_sentence_end() {
                return Err(QError::semantic("Missing yield clause."));
            }
            return Err(self.error_here());
        }
        self.yield_clause()
    }

    fn yield_clause(&mut self) -> QResult<YieldClause> {
        self.expect_kw("YIELD")?;
        self.projection()
    }

    /// The column list after `YIELD` or a standalone `RETURN`.
    fn projection(&mut self) -> QResult<YieldClause> {
        let distinct = self.eat_kw("DISTINCT");
        let mut columns = Vec::new();
        loop {
            let start = &self.tokens[self.pos];
            let (start_pos, start_end) = (start.start, start.end);
            // FIND PATH's `path` and GET SUBGRAPH's `vertices` and `edges` are keywords there, not expressions.
            let keyword = ["PATH", "VERTICES", "EDGES"]
                .into_iter()
                .find(|w| self.peek_kw(w) && !matches!(self.peek_at(1), Tok::Sym("." | "(" | "[")));
            let expr = match keyword {
                Some(w) => {
                    self.bump();
                    Expr::Label(w.to_string())
                }
                None => {
                    let outer = std::mem::replace(&mut self.in_column, true);
                    let expr = self.expr();
                    self.in_column = outer;
                    expr?
                }
            };
            // NebulaGraph's `yield_column`: a column may read a parameter, never a variable itself.
            if let Some(known) = &self.params {
                let mut variable = false;
                expr.visit(&mut |x| variable |= matches!(x, Expr::Param(p) if !known.contains(p)));
                if variable {
                    let end = self.tokens[self.pos.saturating_sub(1)].end.max(start_pos);
                    let text = &self.src[start_pos..end];
                    return Err(QError::syntax(format!("Direct output of variable is prohibited near `{text}'")));
                }
            }
            let alias = if self.eat_kw("AS") { Some(self.name()?) } else { None };
            // A bare `vertex`, `edge`, `$^` or `$$` column needs a name, as in NebulaGraph's grammar.
            let bare = match &expr {
                Expr::Vertex(VertexRef::Current) => Some("vertex"),
                Expr::Vertex(VertexRef::Src) => Some("$^"),
                Expr::Vertex(VertexRef::Dst) => Some("$$"),
                Expr::Edge => Some("edge"),
                Expr::Label(l) if l == "PATH" => Some("path"),
                Expr::Label(l) if l == "VERTICES" => Some("vertices"),
                Expr::Label(l) if l == "EDGES" => Some("edges"),
                _ => None,
            };
            if let (Some(word), None) = (bare, &alias) {
                let text = &self.src[start_pos..start_end];
                return Err(QError::syntax(format!("please add alias when using `{word}'. near `{text}'")));
            }
            columns.push(YieldColumn { expr, alias });
            if !self.eat_sym(",") {
                break;
            }
        }
        Ok(YieldClause { distinct, columns })
    }

    // ---- expressions, lowest precedence first ----
    //
    // Every expression function returns its tree with the tree's height (nodes on the longest path down), and
    // refuses a node that would stand higher than `EXPR_DEPTH_MAX`. The loops below build left-deep chains
    // (`1+1+...+1`) without recursing, so the nesting guard alone would let them grow as tall as the text is long,
    // and every later pass over the tree (binding, evaluation, `Display`, `Clone`, `Drop`) recurses once per level.

    pub fn expr(&mut self) -> QResult<Expr> {
        Ok(self.tree()?.0)
    }

    /// An expression and its height.
    fn tree(&mut self) -> QResult<Tree> {
        let mut tree = self.outermost(Parser::or_expr)?;
        while self.peek_sym("?") {
            tree = self.conditional(tree)?;
        }
        Ok(tree)
    }

    /// `cond ? then : else` after `cond`, the loosest operator (left-associative, as NebulaGraph's grammar has it):
    /// `then` is any expression, `else` one of the next level up. Not a level of its own in the descent, which
    /// would add a frame to every level of nesting, and out of line, so that `tree`'s frame stays small.
    #[inline(never)]
    fn conditional(&mut self, (cond, hc): Tree) -> QResult<Tree> {
        self.expect_sym("?")?;
        let (then, ht) = self.tree()?;
        self.expect_sym(":")?;
        let (other, he) = self.outermost(Parser::or_expr)?;
        let case =
            Expr::Case { operand: None, whens: vec![(cond, then)], default: Some(Box::new(other)), ternary: true };
        self.node(case, hc.max(ht).max(he))
    }

    /// `f` one level deeper, noting where the outermost expression starts when this is it.
    fn outermost(&mut self, f: fn(&mut Self) -> QResult<Tree>) -> QResult<Tree> {
        if self.depth == 0 {
            self.expr_start = self.tokens[self.pos].start;
        }
        self.nested(f)
    }

    /// Runs `f` one nesting level deeper, refusing input nested beyond `EXPR_DEPTH_MAX`. This guards the parser's own
    /// stack, which the height check cannot (it runs on the way back up): every recursion into a sub-expression
    /// passes through here, and prefix operators are looped over, not recursed through.
    fn nested(&mut self, f: fn(&mut Self) -> QResult<Tree>) -> QResult<Tree> {
        self.depth += 1;
        if self.depth > EXPR_DEPTH_MAX {
            return Err(self.too_deep());
        }
        let r = f(self);
        self.depth -= 1;
        r
    }

    /// NebulaGraph's error for an expression over `max_expression_depth`, near the expression's first 80 bytes.
    fn too_deep(&self) -> QError {
        QError::syntax(format!(
            "The above expression's depth exceeds the maximum depth:{EXPR_DEPTH_MAX} near `{}'",
            self.near_from(self.expr_start)
        ))
    }

    /// The source from `start` to the end of the current token, as NebulaGraph quotes it after `near` (80 bytes).
    fn near_from(&self, start: usize) -> &str {
        let end = self.tokens[self.pos].end.max(start);
        crate::lexer::truncate(&self.src[start..end], 80)
    }

    /// The height of a node above children whose tallest is `below` high, if within the bound.
    fn above(&self, below: usize) -> QResult<usize> {
        one_above(below, EXPR_DEPTH_MAX).ok_or_else(|| self.too_deep())
    }

    /// `e` as a node above children whose tallest is `below` high.
    fn node(&self, e: Expr, below: usize) -> QResult<Tree> {
        Ok((e, self.above(below)?))
    }

    fn binary(&self, op: BinaryOp, (lhs, hl): Tree, (rhs, hr): Tree) -> QResult<Tree> {
        self.node(Expr::binary(op, lhs, rhs), hl.max(hr))
    }

    fn unary_node(&self, op: UnaryOp, (operand, h): Tree) -> QResult<Tree> {
        self.node(Expr::unary(op, operand), h)
    }

    /// Expressions as a list, with the height of the tallest.
    fn trees_until(&mut self, close: &str) -> QResult<(Vec<Expr>, usize)> {
        let mut items = Vec::new();
        let mut height = 0;
        if !self.eat_sym(close) {
            loop {
                let (e, h) = self.tree()?;
                items.push(e);
                height = height.max(h);
                if self.eat_sym(close) {
                    break;
                }
                self.expect_sym(",")?;
            }
        }
        Ok((items, height))
    }

    fn or_expr(&mut self) -> QResult<Tree> {
        let mut lhs = self.and_expr()?;
        loop {
            let op = if self.eat_kw("OR") || self.eat_sym("||") {
                BinaryOp::Or
            } else if self.eat_kw("XOR") {
                BinaryOp::Xor
            } else {
                return Ok(lhs);
            };
            let rhs = self.and_expr()?;
            lhs = self.binary(op, lhs, rhs)?;
        }
    }

    fn and_expr(&mut self) -> QResult<Tree> {
        let mut lhs = self.not_expr()?;
        while self.eat_kw("AND") || self.eat_sym("&&") {
            let rhs = self.not_expr()?;
            lhs = self.binary(BinaryOp::And, lhs, rhs)?;
        }
        Ok(lhs)
    }

    /// `NOT ... NOT x`: the prefixes are counted, not recursed through, so any number of them is safe.
    fn not_expr(&mut self) -> QResult<Tree> {
        let mut nots = 0usize;
        while self.eat_kw("NOT") {
            nots += 1;
        }
        let mut tree = self.relational()?;
        for _ in 0..nots {
            tree = self.unary_node(UnaryOp::Not, tree)?;
        }
        Ok(tree)
    }

    fn relational(&mut self) -> QResult<Tree> {
        let start = self.pos;
        let mut lhs = self.additive()?;
        loop {
            let op_at = self.pos;
            match self.relational_op()? {
                None => return Ok(lhs),
                Some(RelOp::Is(op)) => lhs = self.unary_node(op, lhs)?,
                Some(RelOp::Binary(op)) => {
                    let rhs = self.additive()?;
                    if op == BinaryOp::In {
                        self.last_in = (start, op_at);
                    }
                    lhs = self.binary(op, lhs, rhs)?;
                }
            }
        }
    }

    /// The relational operator here, consumed (`IS [NOT] NULL`, `NOT IN`, `STARTS WITH`, ...). Kept out of
    /// `relational`, whose frame stands under every level of a nested expression, with its temporaries.
    fn relational_op(&mut self) -> QResult<Option<RelOp>> {
        if self.eat_kw("IS") {
            let not = self.eat_kw("NOT");
            let op = if self.eat_kw("NULL") {
                if not {
                    UnaryOp::IsNotNull
                } else {
                    UnaryOp::IsNull
                }
            } else if self.eat_kw("EMPTY") {
                if not {
                    UnaryOp::IsNotEmpty
                } else {
                    UnaryOp::IsEmpty
                }
            } else {
                return Err(self.error_here());
            };
            return Ok(Some(RelOp::Is(op)));
        }
        let op = match self.peek() {
            Tok::Sym("==") => BinaryOp::Eq,
            Tok::Sym("!=") | Tok::Sym("<>") => BinaryOp::Ne,
            Tok::Sym("<") => BinaryOp::Lt,
            Tok::Sym("<=") => BinaryOp::Le,
            Tok::Sym(">") => BinaryOp::Gt,
            Tok::Sym(">=") => BinaryOp::Ge,
            Tok::Sym("=~") => BinaryOp::Regex,
            Tok::Ident(w) => {
                // Compared in place: an upper-cased copy of the word after every operand cost an allocation.
                const WORDS: [(&str, BinaryOp, BinaryOp); 4] = [
                    ("IN", BinaryOp::In, BinaryOp::NotIn),
                    ("CONTAINS", BinaryOp::Contains, BinaryOp::NotContains),
                    ("STARTS", BinaryOp::StartsWith, BinaryOp::NotStartsWith),
                    ("ENDS", BinaryOp::EndsWith, BinaryOp::NotEndsWith),
                ];
                let find = |w: &str| WORDS.iter().find(|(k, ..)| k.eq_ignore_ascii_case(w));
                if w.eq_ignore_ascii_case("NOT") {
                    match self.peek_at(1) {
                        Tok::Ident(w2) => match find(w2) {
                            Some(&(_, _, negated)) => negated,
                            None => return Ok(None),
                        },
                        _ => return Ok(None),
                    }
                } else {
                    match find(w) {
                        Some(&(_, op, _)) => op,
                        None => return Ok(None),
                    }
                }
            }
            _ => return Ok(None),
        };
        if matches!(op, BinaryOp::NotIn | BinaryOp::NotContains | BinaryOp::NotStartsWith | BinaryOp::NotEndsWith) {
            self.bump();
        }
        self.bump();
        if matches!(op, BinaryOp::StartsWith | BinaryOp::NotStartsWith | BinaryOp::EndsWith | BinaryOp::NotEndsWith) {
            self.expect_kw("WITH")?;
        }
        Ok(Some(RelOp::Binary(op)))
    }

    fn additive(&mut self) -> QResult<Tree> {
        let mut lhs = self.multiplicative()?;
        loop {
            // NebulaGraph's scanner reads `]-` written together as one token (a pattern's `]-`), so `[2,3]-[3]` is
            // its syntax error there, while `[2,3] - [3]` is a subtraction.
            if self.peek_sym("-") && self.pos > 0 {
                let (before, minus) = (&self.tokens[self.pos - 1], &self.tokens[self.pos]);
                if before.tok == Tok::Sym("]") && before.end == minus.start {
                    return Err(QError::syntax("syntax error near `]-'"));
                }
            }
            let op = if self.eat_sym("+") {
                BinaryOp::Add
            } else if self.eat_sym("-") {
                BinaryOp::Sub
            } else {
                return Ok(lhs);
            };
            let rhs = self.multiplicative()?;
            lhs = self.binary(op, lhs, rhs)?;
        }
    }

    fn multiplicative(&mut self) -> QResult<Tree> {
        let mut lhs = self.unary()?;
        loop {
            let op = if self.eat_sym("*") {
                BinaryOp::Mul
            } else if self.eat_sym("/") {
                BinaryOp::Div
            } else if self.eat_sym("%") {
                BinaryOp::Mod
            } else {
                return Ok(lhs);
            };
            let rhs = self.unary()?;
            lhs = self.binary(op, lhs, rhs)?;
        }
    }

    /// Prefix `-`, `+` and `!` applied to a postfix expression. Like NOT, the prefixes are counted in a loop.
    fn unary(&mut self) -> QResult<Tree> {
        let mut prefixes = Vec::new();
        let mut tree = loop {
            if self.eat_sym("-") {
                // `-9223372036854775808` is i64::MIN itself, the one literal with no positive counterpart; any
                // other `-x` stays a negation, which NebulaGraph prints as `-(x)`.
                if let Tok::Int(v) = self.peek().clone() {
                    if v == -(i64::MIN as i128) && !matches!(self.peek_at(1), Tok::Sym("[") | Tok::Sym(".")) {
                        self.bump();
                        break (Expr::Const(Value::Int(i64::MIN)), 1);
                    }
                }
                prefixes.push(UnaryOp::Minus);
            } else if self.eat_sym("+") {
                prefixes.push(UnaryOp::Plus);
            } else if self.eat_sym("!") {
                prefixes.push(UnaryOp::Not);
            } else {
                break self.postfix()?;
            }
        };
        for op in prefixes.into_iter().rev() {
            tree = self.unary_node(op, tree)?;
        }
        Ok(tree)
    }

    fn postfix(&mut self) -> QResult<Tree> {
        let mut tree = self.primary()?;
        loop {
            if self.eat_sym("[") {
                tree = self.subscript(tree)?;
            } else if self.peek_sym(".") && matches!(self.peek_at(1), Tok::Ident(_) | Tok::Quoted(_)) {
                self.bump();
                let name = self.any_name()?;
                let (base, h) = tree;
                tree = self.node(Expr::Attribute { base: Box::new(base), name }, h)?;
            } else {
                return Ok(tree);
            }
        }
    }

    /// NebulaGraph's syntax error for an aggregate in the YIELD whose keyword is token `start` (a GO's, a join's),
    /// quoting the columns up to here.
    fn aggregate_in_yield(&self, start: usize) -> QError {
        let t = &self.tokens[start + 1];
        QError::syntax(format!(
            "Invalid use of aggregating function in yield clause. near `{}'",
            crate::lexer::truncate(&self.src[t.start..self.tokens[self.pos - 1].end], 80)
        ))
    }

    /// An unsigned integer literal (NebulaGraph's `legal_integer`), as a constant.
    fn legal_integer(&mut self) -> QResult<Expr> {
        match self.peek().clone() {
            Tok::Int(v) if v <= i64::MAX as i128 => {
                self.bump();
                Ok(Expr::Const(Value::Int(v as i64)))
            }
            _ => Err(self.error_here()),
        }
    }

    /// `base[index]`, `base[lo..hi]` (either bound optional), after the `[`.
    fn subscript(&mut self, (base, height): Tree) -> QResult<Tree> {
        let mut below = height;
        let lo = if self.peek_sym("..") {
            None
        } else {
            let (x, h) = self.tree()?;
            below = below.max(h);
            Some(Box::new(x))
        };
        if !self.eat_sym("..") {
            self.expect_sym("]")?;
            let Some(index) = lo else { unreachable!("`[..` is a slice") };
            return self.node(Expr::Subscript { base: Box::new(base), index }, below);
        }
        let hi = if self.peek_sym("]") {
            None
        } else {
            let (x, h) = self.tree()?;
            below = below.max(h);
            Some(Box::new(x))
        };
        self.expect_sym("]")?;
        self.node(Expr::Slice { base: Box::new(base), lo, hi }, below)
    }

    /// A name after `.`: reserved words are allowed there (`e._dst`, `$$.player.name`).
    fn any_name(&mut self) -> QResult<String> {
        match self.next_tok() {
            Tok::Ident(s) | Tok::Quoted(s) => Ok(s),
            _ => {
                self.pos -= 1;
                Err(self.error_here())
            }
        }
    }

    fn primary(&mut self) -> QResult<Tree> {
        let (e, below) = self.primary_node()?;
        self.node(e, below)
    }

    /// A primary expression and the height of its tallest child (0 for a leaf). The arms that recurse are kept
    /// here and the rest in their own functions: a paren level passes through this frame, and a debug build gives
    /// every local of every arm its own slot.
    fn primary_node(&mut self) -> QResult<Tree> {
        if self.peek_sym("(") && self.pattern_follows() {
            // A path pattern as a predicate (`WHERE (v)-[:like]->()`); each expression in its property maps was
            // bounded as it was parsed.
            let p = self.path_pattern()?;
            return Ok((Expr::Pattern(Box::new(p)), 0));
        }
        if self.peek_sym("(") && self.cast_follows() {
            return self.cast();
        }
        if self.eat_sym("(") {
            let open = self.pos - 1;
            let (e, h) = self.tree()?;
            self.expect_sym(")")?;
            self.last_paren = Some((open, self.pos));
            // Brackets add no node: the inner tree stands where it is.
            return Ok((e, h - 1));
        }
        // `list[...]`, `set{...}` and `map{...}` name their kind; the brackets alone already tell it.
        if self.peek_kw("LIST") && self.peek_sym_at(1, "[") {
            self.bump();
        }
        if (self.peek_kw("SET") || self.peek_kw("MAP")) && self.peek_sym_at(1, "{") {
            return self.typed_braces();
        }
        if self.eat_sym("[") {
            return self.list_or_comprehension();
        }
        if self.eat_sym("{") {
            return self.braces();
        }
        if let Tok::Ident(word) = self.peek() {
            if word.eq_ignore_ascii_case("CASE") {
                self.bump();
                return self.case_expr();
            }
            let literal = ["TRUE", "FALSE", "NULL"].iter().any(|w| word.eq_ignore_ascii_case(w));
            if !literal && matches!(self.peek_at(1), Tok::Sym("(")) {
                let Tok::Ident(name) = self.next_tok() else { unreachable!("peeked a name") };
                // Not in `call`: its frame would stand between the levels of a nested one.
                if let Some(quantifier) = Quantifier::from_name(&name) {
                    return self.predicate(quantifier);
                }
                if name.eq_ignore_ascii_case("reduce") {
                    return self.reduce();
                }
                return self.call(name);
            }
        }
        // A back-quoted name before `(` is a call too (`` `timestamp`("...") ``), never a quantifier or `reduce`.
        if matches!(self.peek(), Tok::Quoted(_)) && matches!(self.peek_at(1), Tok::Sym("(")) {
            let Tok::Quoted(name) = self.next_tok() else { unreachable!("peeked a name") };
            return self.call(name);
        }
        self.leaf()
    }

    /// Whether a cast `(type)` starts here.
    fn cast_follows(&self) -> bool {
        self.cast_type().is_some()
    }

    /// `(type)x`, which binds tighter than any operator but the prefixes and postfixes of `x` itself (out of line:
    /// see `primary_node`).
    #[inline(never)]
    fn cast(&mut self) -> QResult<Tree> {
        let (to, close) = self.cast_type().expect("a cast follows");
        for _ in 0..=close {
            self.bump();
        }
        let (operand, h) = self.nested(Parser::unary)?;
        Ok((Expr::Cast { to, operand: Box::new(operand) }, h))
    }

    /// At `(type)`, a cast's type and the offset of its `)`.
    fn cast_type(&self) -> Option<(CastTo, usize)> {
        let Tok::Ident(word) = self.peek_at(1) else { return None };
        let to = match word.to_ascii_lowercase().as_str() {
            "bool" => CastTo::Bool,
            "int" | "int8" | "int16" | "int32" | "int64" | "timestamp" => CastTo::Int,
            "float" | "double" => CastTo::Float,
            "string" | "fixed_string" => CastTo::String,
            "date" => CastTo::Date,
            "time" => CastTo::Time,
            "datetime" => CastTo::DateTime,
            "duration" => CastTo::Duration,
            "geography" => CastTo::Geography,
            _ => return None,
        };
        // `fixed_string(n)` and `geography(point)` carry an argument.
        let close = if self.peek_sym_at(2, "(") && self.peek_sym_at(4, ")") { 5 } else { 2 };
        self.peek_sym_at(close, ")").then_some((to, close))
    }

    /// `set{...}` or `map{...}`, either of which may be empty (out of line: see `primary_node`).
    #[inline(never)]
    fn typed_braces(&mut self) -> QResult<Tree> {
        let set = self.peek_kw("SET");
        self.bump();
        let open = self.pos;
        self.expect_sym("{")?;
        if self.eat_sym("}") {
            return Ok((if set { Expr::Set(vec![]) } else { Expr::Map(vec![]) }, 0));
        }
        let (e, h) = self.braces()?;
        if set != matches!(e, Expr::Set(_)) {
            self.pos = open;
            return Err(self.error_here());
        }
        Ok((e, h))
    }

    /// A map `{k: v, ...}` or a set `{a, ...}`, after its `{`.
    fn braces(&mut self) -> QResult<Tree> {
        // An empty `{}` is neither a set nor a map until `SET` or `MAP` names it (NebulaGraph's grammar).
        if self.peek_sym("}") {
            return Err(self.error_here());
        }
        let is_map = matches!(self.peek(), Tok::Ident(_) | Tok::Quoted(_) | Tok::Str(_))
            && matches!(self.peek_at(1), Tok::Sym(":"));
        if is_map {
            let mut items = Vec::new();
            let mut height = 0;
            loop {
                let key = match self.next_tok() {
                    Tok::Ident(s) | Tok::Quoted(s) | Tok::Str(s) => s,
                    _ => {
                        self.pos -= 1;
                        return Err(self.error_here());
                    }
                };
                self.expect_sym(":")?;
                let (value, h) = self.tree()?;
                items.push((key, value));
                height = height.max(h);
                if self.eat_sym("}") {
                    break;
                }
                self.expect_sym(",")?;
            }
            return Ok((Expr::Map(items), height));
        }
        let (items, h) = self.trees_until("}")?;
        Ok((Expr::Set(items), h))
    }

    /// A leaf: a literal, a name or a reference, none of which holds another expression.
    fn leaf(&mut self) -> QResult<Tree> {
        let tok = self.peek().clone();
        match tok {
            Tok::Int(v) => {
                if v > i64::MAX as i128 {
                    return Err(QError::syntax(format!("Out of range: near `{v}'")));
                }
                self.bump();
                Ok((Expr::Const(Value::Int(v as i64)), 0))
            }
            Tok::Float(f) => {
                self.bump();
                Ok((Expr::Const(Value::Float(f)), 0))
            }
            Tok::Str(s) => {
                self.bump();
                Ok((Expr::Const(Value::str(s)), 0))
            }
            Tok::SrcRef | Tok::DstRef => {
                self.bump();
                let which = if tok == Tok::SrcRef { VertexRef::Src } else { VertexRef::Dst };
                if self.peek_sym(".") {
                    self.bump();
                    let tag = self.any_name()?;
                    self.expect_sym(".")?;
                    let prop = self.any_name()?;
                    let e = match which {
                        VertexRef::Src => Expr::SrcProp { tag, prop },
                        _ => Expr::DstProp { tag, prop },
                    };
                    return Ok((e, 0));
                }
                // Bare, `$^` and `$$` are only a call's one argument (`id($$)`) or a YIELD column (`$$ AS v`), as
                // in NebulaGraph's grammar (`argument_list`, `yield_column`).
                let sole_argument = self.pos >= 3
                    && matches!(self.tokens[self.pos - 2].tok, Tok::Sym("("))
                    && matches!(&self.tokens[self.pos - 3].tok, Tok::Ident(w) if !is_reserved(w) || KEYWORD_FUNCTIONS.iter().any(|f| w.eq_ignore_ascii_case(f)))
                    && self.peek_sym(")");
                let column = self.peek_kw("AS")
                    || matches!(self.peek(), Tok::Sym(",") | Tok::Sym("|") | Tok::Sym(";") | Tok::Eof);
                if !sole_argument && !column {
                    return Err(self.error_here());
                }
                Ok((Expr::Vertex(which), 0))
            }
            Tok::InputRef => {
                self.bump();
                self.expect_sym(".")?;
                // `$-.*`: every input column (a YIELD expands it).
                if self.eat_sym("*") {
                    return Ok((Expr::InputProp("*".into()), 0));
                }
                Ok((Expr::InputProp(self.any_name()?), 0))
            }
            Tok::Var(v) => {
                self.bump();
                if self.peek_sym(".") && matches!(self.peek_at(1), Tok::Ident(_) | Tok::Quoted(_)) {
                    self.bump();
                    let prop = self.any_name()?;
                    // `$p.a` of a query parameter `p` is an attribute of its value (a map's entry).
                    if self.params.as_ref().is_some_and(|known| known.contains(&v)) {
                        let base = Box::new(Expr::Param(v));
                        return self.node(Expr::Attribute { base, name: prop }, 0);
                    }
                    return Ok((Expr::VarProp { var: v, prop }, 0));
                }
                if self.peek_sym(".") && self.peek_sym_at(1, "*") {
                    self.bump();
                    self.bump();
                    return Ok((Expr::VarProp { var: v, prop: "*".into() }, 0));
                }
                if !self.in_column && self.params.as_ref().is_some_and(|known| !known.contains(&v)) {
                    return Err(self.error_here());
                }
                Ok((Expr::Param(v), 0))
            }
            Tok::Quoted(name) => {
                self.bump();
                self.after_name(name)
            }
            Tok::Ident(word) => {
                // The words that are values here, compared in place (no upper-cased copy per name).
                let is = |w: &str| word.eq_ignore_ascii_case(w);
                let value = if is("TRUE") {
                    Some(Expr::Const(Value::Bool(true)))
                } else if is("FALSE") {
                    Some(Expr::Const(Value::Bool(false)))
                } else if is("NULL") {
                    Some(Expr::Const(Value::NULL))
                } else if is("VERTEX") {
                    Some(Expr::Vertex(VertexRef::Current))
                } else if is("EDGE") {
                    Some(Expr::Edge)
                } else {
                    None
                };
                if let Some(e) = value {
                    self.bump();
                    return Ok((e, 0));
                }
                if is_reserved(&word) {
                    return Err(self.error_here());
                }
                self.bump();
                self.after_name(word)
            }
            _ => Err(self.error_here()),
        }
    }

    /// `name`, `name.prop` (tag or edge property) or `name._dst` (edge metadata).
    fn after_name(&mut self, name: String) -> QResult<Tree> {
        if self.peek_sym(".") && matches!(self.peek_at(1), Tok::Ident(_) | Tok::Quoted(_)) {
            self.bump();
            let prop = self.any_name()?;
            if self.bound.contains_key(&name) {
                // An attribute of a loop variable's value, above the name.
                let (base, h) = self.node(Expr::Label(name), 0)?;
                return Ok((Expr::Attribute { base: Box::new(base), name: prop }, h));
            }
            if let Some(meta) = EdgeMeta::from_name(&prop) {
                return Ok((Expr::EdgeMetaProp { edge: name, meta }, 0));
            }
            return Ok((Expr::LabelProp { label: name, prop }, 0));
        }
        Ok((Expr::Label(name), 0))
    }

    fn call(&mut self, name: String) -> QResult<Tree> {
        let name_token = self.pos - 1;
        // The functions whose names are keywords in NebulaGraph's grammar print in lower case, however written.
        let lower = name.to_ascii_lowercase();
        let name = if KEYWORD_FUNCTIONS.contains(&lower.as_str()) { lower } else { name };
        self.expect_sym("(")?;
        if functions::is_aggregate(&name) && (self.peek_kw("DISTINCT") || self.peek_sym("*")) {
            let distinct = self.eat_kw("DISTINCT");
            if self.eat_sym("*") {
                self.expect_sym(")")?;
                if !name.eq_ignore_ascii_case("count") {
                    return Err(QError::syntax(format!("Could not apply aggregation function on `*` near `{name}'")));
                }
                return Ok((Expr::Aggregate { name, arg: None, distinct }, 0));
            }
            let (arg, h) = self.tree()?;
            self.expect_sym(")")?;
            return Ok((Expr::Aggregate { name, arg: Some(Box::new(arg)), distinct }, h));
        }
        let args_start = self.pos;
        let (args, h) = self.trees_until(")")?;
        self.resolve_call(name, name_token, args_start, args, h)
    }

    /// A call's parsed arguments resolved to what it is (out of line: `call` is a frame of every level of nested
    /// calls, and a debug build gives each local here a slot there).
    #[inline(never)]
    fn resolve_call(
        &self,
        name: String,
        name_token: usize,
        args_start: usize,
        mut args: Vec<Expr>,
        h: usize,
    ) -> QResult<Tree> {
        // An aggregate's name with one argument is the aggregate; with any other number, the scalar function of
        // that name (`bit_and(a, b)`), as NebulaGraph's grammar resolves it.
        if functions::is_aggregate(&name) && args.len() == 1 {
            // NebulaGraph's `findInnerRandFunction`: an aggregate of a random value is refused as it is parsed.
            let mut random = false;
            args[0].visit(&mut |e| {
                random |= matches!(e, Expr::Function { name, .. }
                    if ["rand", "rand32", "rand64"].iter().any(|r| name.eq_ignore_ascii_case(r)));
            });
            if random {
                let (a, b) = (&self.tokens[args_start], &self.tokens[self.pos.saturating_sub(2)]);
                return Err(QError::syntax(format!(
                    "Can't use non-deterministic (random) functions inside of aggregate functions near `{}'",
                    &self.src[a.start..b.end.max(a.start)]
                )));
            }
            let arg = args.pop().map(Box::new);
            return Ok((Expr::Aggregate { name, arg, distinct: false }, h));
        }
        if name.eq_ignore_ascii_case("exists")
            && !matches!(&args[..], [Expr::Attribute { .. } | Expr::LabelProp { .. } | Expr::Subscript { .. }])
        {
            let (a, b) = (&self.tokens[args_start], &self.tokens[self.pos.saturating_sub(2)]);
            return Err(QError::syntax(format!(
                "The exists only accept LabelAttribute, Attribute and Subscript near `{}'",
                &self.src[a.start..b.end.max(a.start)]
            )));
        }
        // NebulaGraph's full-text predicate of LOOKUP's WHERE, which needs an Elasticsearch listener.
        if name.eq_ignore_ascii_case("es_query") {
            return Err(QError::not_supported("`ES_QUERY' (full-text search)"));
        }
        if !functions::accepts(&name, args.len()) {
            let t = &self.tokens[name_token];
            return Err(QError::syntax(format!("Unknown function  near `{}'", &self.src[t.start..t.end])));
        }
        Ok((Expr::Function { name, args }, h))
    }

    /// A list `[a, b]` or a list comprehension `[x IN l WHERE c | m]`, after the `[`. As in NebulaGraph's grammar the
    /// first item is parsed as an expression, and is the head of a comprehension when it is `x IN l` followed by
    /// `WHERE` or `|`; so `[x IN l]` stays a list of one boolean. (Split in three so that each level of a nested list
    /// or comprehension keeps only two small frames here.)
    fn list_or_comprehension(&mut self) -> QResult<Tree> {
        if self.eat_sym("]") {
            return Ok((Expr::List(vec![]), 0));
        }
        let start = self.pos;
        let first = self.tree()?;
        if (self.peek_kw("WHERE") || self.peek_sym("|")) && self.is_loop_head(&first.0, start, "list comprehension")? {
            return self.comprehension(first);
        }
        self.list_items(first)
    }

    /// The rest of a list after its first item.
    fn list_items(&mut self, (first, mut height): Tree) -> QResult<Tree> {
        let mut items = vec![first];
        while !self.eat_sym("]") {
            self.expect_sym(",")?;
            items.push(*self.subtree(&mut height)?);
        }
        Ok((Expr::List(items), height))
    }

    /// Whether `e`, parsed from token `start` up to here, is the head `x IN l` of a list comprehension or predicate
    /// function (`what`): an `IN` not in brackets. One whose left side is not a name is NebulaGraph's syntax error.
    fn is_loop_head(&self, e: &Expr, start: usize, what: &str) -> QResult<bool> {
        match e {
            _ if self.last_paren == Some((start, self.pos)) => Ok(false),
            Expr::Binary { op: BinaryOp::In, lhs, .. } if matches!(**lhs, Expr::Label(_)) => Ok(true),
            Expr::Binary { op: BinaryOp::In, .. } => {
                let (from, at) = self.last_in;
                let (start, end) = (self.tokens[from].start, self.tokens[at - 1].end);
                let text = if end > start + 1 {
                    crate::lexer::truncate(&self.src[start..end], 80)
                } else {
                    crate::lexer::truncate(&self.src[start..], 8)
                };
                Err(QError::syntax(format!("The loop variable must be a label in {what} near `{text}'")))
            }
            _ => Ok(false),
        }
    }

    /// The loop variable, the list and the list's height of a head `is_loop_head` accepted.
    fn split_loop_head((e, height): Tree) -> (String, Expr, usize) {
        let Expr::Binary { op: BinaryOp::In, lhs, rhs } = e else { unreachable!("checked by is_loop_head") };
        let Expr::Label(var) = *lhs else { unreachable!("checked by is_loop_head") };
        // The `IN` node stands one above the taller of the name (1) and the list.
        (var, *rhs, height - 1)
    }

    fn bind(&mut self, name: &str) {
        *self.bound.entry(name.to_string()).or_default() += 1;
    }

    fn unbind(&mut self, name: &str) {
        if let Some(n) = self.bound.get_mut(name) {
            *n -= 1;
            if *n == 0 {
                self.bound.remove(name);
            }
        }
    }

    // The comprehension, predicate and reduce parsers below stand between the levels of a nested one, as `call`
    // and `trees_until` do for nested calls: they keep few locals (a debug build gives each its own slot), build
    // their node on the heap as they read it, and recurse through `subtree`.

    /// A sub-expression, raising `height` to its height.
    fn subtree(&mut self, height: &mut usize) -> QResult<Box<Expr>> {
        let (e, h) = self.tree()?;
        *height = (*height).max(h);
        Ok(Box::new(e))
    }

    /// A sub-expression in which `names` are bound.
    fn bound_subtree(&mut self, names: &[&str], height: &mut usize) -> QResult<Box<Expr>> {
        names.iter().for_each(|n| self.bind(n));
        let e = self.subtree(height);
        names.iter().for_each(|n| self.unbind(n));
        e
    }

    /// The rest of `[var IN list WHERE filter | mapping]`, from the `WHERE` or `|`.
    fn comprehension(&mut self, head: Tree) -> QResult<Tree> {
        let (var, list, mut height) = Parser::split_loop_head(head);
        let filter = if self.eat_kw("WHERE") { Some(self.bound_subtree(&[&var], &mut height)?) } else { None };
        let mapping = if self.eat_sym("|") { Some(self.bound_subtree(&[&var], &mut height)?) } else { None };
        self.expect_sym("]")?;
        Ok((Expr::ListComprehension { var, list: Box::new(list), filter, mapping }, height))
    }

    /// `all(x IN l WHERE c)`, `any`, `single`, `none`, from the `(`.
    fn predicate(&mut self, quantifier: Quantifier) -> QResult<Tree> {
        self.expect_sym("(")?;
        let start = self.pos;
        let first = self.tree()?;
        if !self.peek_kw("WHERE") || !self.is_loop_head(&first.0, start, "predicate functions")? {
            return Err(self.error_here());
        }
        let (var, list, mut height) = Parser::split_loop_head(first);
        self.bump();
        let filter = self.bound_subtree(&[&var], &mut height)?;
        self.expect_sym(")")?;
        Ok((Expr::Predicate { quantifier, var, list: Box::new(list), filter }, height))
    }

    /// `reduce(acc = init, x IN l | m)`, from the `(`.
    fn reduce(&mut self) -> QResult<Tree> {
        let placeholder = || Expr::Const(Value::NULL);
        let mut r = Box::new(Reduce {
            acc: String::new(),
            init: placeholder(),
            var: String::new(),
            list: placeholder(),
            mapping: placeholder(),
        });
        let height = self.reduce_parts(&mut r)?;
        Ok((Expr::Reduce(r), height))
    }

    fn reduce_parts(&mut self, r: &mut Reduce) -> QResult<usize> {
        let mut height = 0;
        self.expect_sym("(")?;
        r.acc = self.name()?;
        self.expect_sym("=")?;
        r.init = *self.subtree(&mut height)?;
        self.expect_sym(",")?;
        r.var = self.name()?;
        self.expect_kw("IN")?;
        r.list = *self.subtree(&mut height)?;
        self.expect_sym("|")?;
        r.mapping = *self.bound_subtree(&[&r.acc, &r.var], &mut height)?;
        self.expect_sym(")")?;
        Ok(height)
    }

    fn case_expr(&mut self) -> QResult<Tree> {
        let mut height = 0;
        let mut sub = |p: &mut Self| -> QResult<Box<Expr>> {
            let (e, h) = p.tree()?;
            height = height.max(h);
            Ok(Box::new(e))
        };
        let operand = if self.peek_kw("WHEN") { None } else { Some(sub(self)?) };
        let mut whens = Vec::new();
        while self.eat_kw("WHEN") {
            let w = sub(self)?;
            self.expect_kw("THEN")?;
            let t = sub(self)?;
            whens.push((*w, *t));
        }
        if whens.is_empty() {
            return Err(self.error_here());
        }
        let default = if self.eat_kw("ELSE") { Some(sub(self)?) } else { None };
        self.expect_kw("END")?;
        Ok((Expr::Case { operand, whens, default, ternary: false }, height))
    }
}

/// The height of a node above children whose tallest is `below` high, unless that is over `max`.
/// Whether `s` is what NebulaGraph's grammar calls a `traverse_sentence` (or pipes and set operations of them): a
/// sentence that may stand in a pipe, a set operation, an assignment or brackets. USE, INSERT, DDL, user and job
/// statements and MATCH may not: each runs only as a statement of its own, so it is checked (access, schema, VID
/// type) against the space it runs in.
fn composable(s: &Statement) -> bool {
    use Statement as S;
    match s {
        S::Pipe(l, r) | S::SetOp { left: l, right: r, .. } => composable(l) && composable(r),
        S::Go(_)
        | S::Lookup(_)
        | S::GroupBy { .. }
        | S::OrderBy(_)
        | S::Limit { .. }
        | S::FetchVertices { .. }
        | S::FetchEdges { .. }
        | S::FindPath(_)
        | S::Yield { .. }
        | S::YieldJoin(_)
        | S::GetSubgraph(_)
        | S::DeleteVertices { .. }
        | S::DeleteTags { .. }
        | S::DeleteEdges { .. }
        | S::Update { .. }
        | S::ShowQueries { .. }
        | S::KillQuery { .. }
        | S::DescribeUser(_)
        | S::Unwind { .. }
        | S::KillSession(_)
        | S::ShowHosts(_)
        | S::ShowSpaces
        | S::ShowParts(_)
        | S::ShowSchemas(_)
        | S::ShowIndexes { .. }
        | S::ShowUsers
        | S::ShowRoles(_)
        | S::ShowConfigs(_)
        | S::ShowCreateSpace(_)
        | S::ShowCreateSchema { .. }
        | S::ShowCreateIndex { .. }
        | S::ShowIndexStatus(_)
        | S::ShowSnapshots
        | S::ShowCharset
        | S::ShowCollation
        | S::ShowZones
        | S::ShowStats
        | S::ShowSessions(_)
        | S::ShowMetaLeader
        // Not in NebulaGraph's grammar (its `admin_job_sentence`), but they only read the current space's jobs.
        | S::ShowJobs
        | S::ShowJob(_) => true,
        _ => false,
    }
}

/// Whether `s` is a MATCH sentence or a set operation of them (NebulaGraph's `match_sentences`).
fn match_tree(s: &Statement) -> bool {
    match s {
        Statement::Match(_) => true,
        Statement::SetOp { left, right, .. } => match_tree(left) && match_tree(right),
        _ => false,
    }
}

fn one_above(below: usize, max: usize) -> Option<usize> {
    (below < max).then_some(below + 1)
}

/// NebulaGraph's `unreserved_keyword`s: words of its grammar that are names too, and then names in lower case however
/// written (`CREATE TAG t(ACCOUNT string)` has the property `account`). Sorted, for a binary search.
const UNRESERVED_KEYWORDS: &[&str] = &[
    "ACCOUNT",
    "ADMIN",
    "AGENT",
    "ALL",
    "ALLSHORTESTPATHS",
    "ANALYZER",
    "ANY",
    "ATOMIC_EDGE",
    "AUTO",
    "BIDIRECT",
    "BOTH",
    "CHARSET",
    "CLEAR",
    "CLIENTS",
    "COLLATE",
    "COLLATION",
    "COMMENT",
    "CONFIGS",
    "CONTAINS",
    "DATA",
    "DBA",
    "DEFAULT",
    "DIVIDE",
    "ELASTICSEARCH",
    "ELSE",
    "END",
    "ENDS",
    "ES_QUERY",
    "FORCE",
    "FORMAT",
    "FULLTEXT",
    "GOD",
    "GRAPH",
    "GROUP",
    "GROUPS",
    "GUEST",
    "HDFS",
    "HOST",
    "HOSTS",
    "HTTP",
    "HTTPS",
    "INTO",
    "JOB",
    "JOBS",
    "KILL",
    "LEADER",
    "LIMIT",
    "LINESTRING",
    "LISTENER",
    "LOCAL",
    "MERGE",
    "META",
    "NEW",
    "NOLOOP",
    "NONE",
    "OFFSET",
    "OPTIONAL",
    "OUT",
    "PART",
    "PARTITION_NUM",
    "PARTS",
    "PASSWORD",
    "PLAN",
    "POINT",
    "POLYGON",
    "PROFILE",
    "QUERIES",
    "QUERY",
    "REDUCE",
    "RENAME",
    "REPLICA_FACTOR",
    "RESET",
    "ROLE",
    "ROLES",
    "S2_MAX_CELLS",
    "S2_MAX_LEVEL",
    "SAMPLE",
    "SEARCH",
    "SERVICE",
    "SESSION",
    "SESSIONS",
    "SHORTEST",
    "SHORTESTPATH",
    "SIGN",
    "SINGLE",
    "SKIP",
    "SNAPSHOT",
    "SNAPSHOTS",
    "SPACE",
    "SPACES",
    "STARTS",
    "STATS",
    "STATUS",
    "STORAGE",
    "SUBGRAPH",
    "TEXT",
    "TEXT_SEARCH",
    "THEN",
    "TOP",
    "TTL_COL",
    "TTL_DURATION",
    "USER",
    "USERS",
    "UUID",
    "VALUE",
    "VALUES",
    "VID_TYPE",
    "ZONE",
    "ZONES",
];

/// `word` as a name: an unreserved keyword in lower case, any other word as written.
fn name_of(word: &str) -> String {
    let keyword =
        UNRESERVED_KEYWORDS.binary_search_by(|r| r.bytes().cmp(word.bytes().map(|b| b.to_ascii_uppercase()))).is_ok();
    if keyword {
        word.to_ascii_lowercase()
    } else {
        word.to_string()
    }
}

/// Whether `word` is reserved, in any case: a binary search of `RESERVED`, which is sorted (a test holds it so).
fn is_reserved(word: &str) -> bool {
    RESERVED.binary_search_by(|r| r.bytes().cmp(word.bytes().map(|b| b.to_ascii_uppercase()))).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserved_words_are_sorted_and_found_in_any_case() {
        assert!(RESERVED.windows(2).all(|w| w[0] < w[1]), "RESERVED must stay sorted for is_reserved");
        assert!(UNRESERVED_KEYWORDS.windows(2).all(|w| w[0] < w[1]), "UNRESERVED_KEYWORDS must stay sorted");
        assert_eq!(
            (name_of("ACCOUNT"), name_of("Status"), name_of("Accounts")),
            ("account".into(), "status".into(), "Accounts".into())
        );
        for w in RESERVED {
            assert!(is_reserved(w) && is_reserved(&w.to_lowercase()), "{w}");
        }
        for w in ["player", "ADDS", "A", "", "YIELDS", "Xor_"] {
            assert!(!is_reserved(w), "{w}");
        }
    }
    use quiver_common::limits::QUERY_THREAD_STACK_BYTES;

    fn one(src: &str) -> Statement {
        let mut v = parse(src).unwrap();
        assert_eq!(v.len(), 1);
        v.remove(0)
    }

    fn col(src: &str) -> String {
        match one(&format!("YIELD {src}")) {
            Statement::Yield { yield_clause, .. } => yield_clause.columns[0].name(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn canonical_column_names() {
        assert_eq!(col("1+1"), "(1+1)");
        assert_eq!(col("like.likeness > 90"), "(like.likeness>90)");
        assert_eq!(col("id(vertex)"), "id(VERTEX)");
        assert_eq!(col("\"a\" + 'b'"), "(\"a\"+\"b\")");
        assert_eq!(col("NOT true AND x IS NULL"), "(!(true) AND x IS NULL)");
        assert_eq!(col("-x"), "-(x)");
        assert_eq!(col("$$.player.name"), "$$.player.name");
        assert_eq!(col("[1, 2][0]"), "[1,2][0]");
        // As NebulaGraph's AggregateExpression: the name as written.
        assert_eq!(col("count(*)"), "count(*)");
        assert_eq!(col("COUNT(*)"), "COUNT(*)");
        assert_eq!(col("1 IN [1,2]"), "(1 IN [1,2])");
        assert_eq!(col("CASE WHEN 1 > 0 THEN 'y' ELSE 'n' END"), "CASE WHEN (1>0) THEN \"y\" ELSE \"n\" END");
    }

    #[test]
    fn precedence() {
        assert_eq!(col("1 + 2 * 3"), "(1+(2*3))");
        assert_eq!(col("1 < 2 AND 2 < 3 OR false"), "(((1<2) AND (2<3)) OR false)");
        assert_eq!(col("-9223372036854775808"), "-9223372036854775808");
    }

    #[test]
    fn syntax_errors_say_near() {
        let e = parse("CREATE TAGG t()").unwrap_err();
        assert_eq!(e.message, "SyntaxError: syntax error near `TAGG'");
        let e = parse("YIELD 1 +").unwrap_err();
        assert_eq!(e.message, "SyntaxError: syntax error near `+'");
        let e = parse("YIELD 1 + ").unwrap_err();
        assert_eq!(e.message, "SyntaxError: syntax error at end of input");
        let e = parse("").unwrap_err();
        assert_eq!(e.code, quiver_common::ErrorCode::StatementEmpty);
    }

    #[test]
    fn deep_nesting_is_refused_not_crashed() {
        on_half_query_stack(|| {
            let src = format!("YIELD {}1{}", "(".repeat(100_000), ")".repeat(100_000));
            assert!(parse(&src).is_err());
            let src = format!("YIELD {}1", "-".repeat(100_000));
            assert!(parse(&src).is_err());
            let src = format!("YIELD {}true", "NOT ".repeat(100_000));
            assert!(parse(&src).is_err());
        });
    }

    /// Runs `f` on a thread with half the stack a query thread has, so the bounds are shown to leave room.
    fn on_half_query_stack<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
        std::thread::Builder::new().stack_size(QUERY_THREAD_STACK_BYTES / 2).spawn(f).unwrap().join().unwrap()
    }

    /// The height of an expression tree, walked without recursion.
    fn height(e: &Expr) -> usize {
        let mut tallest = 0;
        let mut stack = vec![(e, 1)];
        while let Some((e, h)) = stack.pop() {
            tallest = tallest.max(h);
            e.for_each_child(&mut |c| stack.push((c, h + 1)));
        }
        tallest
    }

    #[test]
    fn chains_of_operators_are_as_tall_as_they_are_long() {
        on_half_query_stack(|| {
            let too_deep = |text: &str| {
                format!("SyntaxError: The above expression's depth exceeds the maximum depth:{EXPR_DEPTH_MAX} near `{text}'")
            };
            for op in [
                "+",
                "-",
                "*",
                "/",
                "%",
                "==",
                "!=",
                "<",
                ">=",
                "AND",
                "OR",
                "XOR",
                "CONTAINS",
                "STARTS WITH",
                "IN",
                "=~",
            ] {
                // A chain of n terms is n high: the longest one accepted is EXPR_DEPTH_MAX terms.
                let chain = |n: usize| vec!["1"; n].join(&format!(" {op} "));
                let Statement::Yield { yield_clause, .. } = one(&format!("YIELD {}", chain(EXPR_DEPTH_MAX))) else {
                    panic!()
                };
                assert_eq!(height(&yield_clause.columns[0].expr), EXPR_DEPTH_MAX, "{op}");
                let long = chain(30_000);
                let near = &long[..80];
                assert_eq!(error(&format!("YIELD {long}")), too_deep(near), "{op}");
                assert!(error(&format!("YIELD {}", chain(EXPR_DEPTH_MAX + 1)))
                    .starts_with("SyntaxError: The above expression's depth"));
            }
            // Postfix chains, IS NULL chains and strings chain the same way.
            for src in ["[1]", "[0..1]", ".a", " IS NULL", " IS NOT EMPTY", "+\"ab\""] {
                let text = format!("YIELD x{}", src.repeat(EXPR_DEPTH_MAX + 1));
                assert!(error(&text).starts_with("SyntaxError: The above expression's depth"), "{src}");
            }
            // Nested brackets, lists and calls count one level each; plain brackets none.
            let nested = |open: &str, close: &str, n: usize| format!("YIELD {}1{}", open.repeat(n), close.repeat(n));
            assert!(parse(&nested("abs(", ")", EXPR_DEPTH_MAX - 1)).is_ok());
            assert!(parse(&nested("[", "]", EXPR_DEPTH_MAX - 1)).is_ok());
            assert!(
                error(&nested("abs(", ")", EXPR_DEPTH_MAX)).starts_with("SyntaxError: The above expression's depth")
            );
            assert!(
                error(&nested("(", ")", EXPR_DEPTH_MAX + 1)).starts_with("SyntaxError: The above expression's depth")
            );
            // Chains inside brackets inside chains add up.
            let inner = vec!["1"; 300].join("+");
            assert!(parse(&format!("YIELD ({inner}) + 1")).is_ok());
            assert!(error(&format!("YIELD (({inner}) + {inner}) * 2 - ({inner})"))
                .starts_with("SyntaxError: The above expression's depth"));
            let mixed = format!("YIELD ({inner}) * ({inner}) AND 1");
            let Statement::Yield { yield_clause, .. } = one(&mixed) else { panic!() };
            assert_eq!(height(&yield_clause.columns[0].expr), 302);
        });
    }

    fn matched(src: &str) -> MatchStatement {
        match one(src) {
            Statement::Match(m) => *m,
            other => panic!("not a MATCH: {other:?}"),
        }
    }

    #[test]
    fn match_patterns_parse_as_nebula_graph_writes_them() {
        let m = matched(
            r#"MATCH p = (v:player:bachelor {name: "Tim Duncan"})-[e:like|:serve*1..3 {likeness: 90}]->(t) WHERE id(v) == "x" RETURN DISTINCT v, e AS rel ORDER BY rel DESC SKIP 1 LIMIT 2"#,
        );
        let [MatchClause::Match { optional: false, paths, filter: Some(_) }] = m.clauses.as_slice() else {
            panic!("{m:?}")
        };
        let path = &paths[0];
        assert_eq!(
            (path.alias.as_deref(), path.kind, path.nodes.len(), path.edges.len()),
            (Some("p"), PathKind::All, 2, 1)
        );
        let v = &path.nodes[0];
        assert_eq!(v.alias.as_deref(), Some("v"));
        assert_eq!(v.labels.iter().map(|(l, _)| l.as_str()).collect::<Vec<_>>(), ["player", "bachelor"]);
        assert!(v.labels[1].1.is_some() && v.props.is_none(), "the map follows the last label");
        let e = &path.edges[0];
        assert_eq!(
            (e.alias.as_deref(), e.types.clone(), e.direction),
            (Some("e"), vec!["like".to_string(), "serve".to_string()], PatternDirection::Out)
        );
        assert_eq!(e.range, Some(StepRange { min: 1, max: Some(3) }));
        assert!(e.props.is_some());
        assert!(
            m.ret.distinct
                && m.ret.order_by.len() == 1
                && !m.ret.order_by[0].1
                && m.ret.skip.is_some()
                && m.ret.limit.is_some()
        );
        assert_eq!(m.ret.items.as_ref().unwrap().columns.iter().map(|c| c.name()).collect::<Vec<_>>(), ["v", "rel"]);

        // Every arrow, with and without brackets.
        for (arrow, dir) in [
            ("-->", PatternDirection::Out),
            ("<--", PatternDirection::In),
            ("--", PatternDirection::Both),
            ("<-->", PatternDirection::Both),
            ("-[]->", PatternDirection::Out),
            ("<-[]-", PatternDirection::In),
            ("-[]-", PatternDirection::Both),
            ("<-[]->", PatternDirection::Both),
        ] {
            let m = matched(&format!("MATCH (a){arrow}(b) RETURN a"));
            let MatchClause::Match { paths, .. } = &m.clauses[0] else { panic!() };
            assert_eq!(paths[0].edges[0].direction, dir, "{arrow}");
        }
        // Step ranges.
        for (range, want) in [
            ("*", (1, None)),
            ("*2", (2, Some(2))),
            ("*..3", (1, Some(3))),
            ("*2..", (2, None)),
            ("*0..1", (0, Some(1))),
        ] {
            let m = matched(&format!("MATCH (a)-[{range}]->(b) RETURN a"));
            let MatchClause::Match { paths, .. } = &m.clauses[0] else { panic!() };
            assert_eq!(paths[0].edges[0].range, Some(StepRange { min: want.0, max: want.1 }), "{range}");
        }
        // Several clauses, patterns and paths; shortest paths.
        let m = matched("OPTIONAL MATCH (a), (b)-->(c) UNWIND [1, 2] AS x WITH DISTINCT a, x ORDER BY x LIMIT 3 WHERE x > 1 MATCH p = shortestPath((a)-[*..5]-(c)) RETURN *");
        assert_eq!(m.clauses.len(), 4);
        assert!(matches!(&m.clauses[0], MatchClause::Match { optional: true, paths, .. } if paths.len() == 2));
        assert!(matches!(&m.clauses[1], MatchClause::Unwind { alias, .. } if alias == "x"));
        assert!(matches!(&m.clauses[2], MatchClause::With(w) if w.distinct && w.filter.is_some() && w.limit.is_some()));
        assert!(matches!(&m.clauses[3], MatchClause::Match { paths, .. } if paths[0].kind == PathKind::Shortest));
        assert!(m.ret.items.is_none());
        assert!(matches!(one("UNWIND [1, 2] AS x RETURN x"), Statement::Match(_)));
        assert!(matches!(one("WITH 1 AS a RETURN a"), Statement::Match(_)));
        // A standalone RETURN is still a YIELD.
        assert!(matches!(one("RETURN 1"), Statement::Yield { .. }));
        // `--` is an edge, not a comment (it has not been one since NebulaGraph 2.0).
        assert!(error("YIELD 1 -- a comment in NebulaGraph 1.x").starts_with("SyntaxError"));
    }

    #[test]
    fn match_errors_are_nebula_graph_s() {
        assert_eq!(
            error("OPTIONAL MATCH (v)-->(w) WHERE v.player.age > 1 RETURN v"),
            "SyntaxError: Where clause in optional match is not supported. near `WHERE v.player.age > 1'"
        );
        assert_eq!(
            error("MATCH (v)-[*-1]->(w) RETURN v"),
            "SyntaxError: Expected an unsigned integer. near `-1]->(w)'"
        );
        assert_eq!(error("MATCH (v) RETURN"), "SyntaxError: syntax error near `RETURN'");
        assert_eq!(error("MATCH (v)-[e]->(w)"), "SyntaxError: syntax error near `)'");
        assert_eq!(error("MATCH (v)-[e]>(w) RETURN v"), "SyntaxError: syntax error near `>(w) RET'");
        assert_eq!(error("MATCH v RETURN v"), "SyntaxError: syntax error near `v RETURN'");
    }

    #[test]
    fn chains_of_sentences_are_bounded() {
        on_half_query_stack(|| {
            let too_deep = |text: &str| {
                format!("SyntaxError: The above statement's pipes and set operations exceed the maximum depth:{SENTENCE_DEPTH_MAX} near `{text}'")
            };
            for joint in [" UNION ", " UNION ALL ", " INTERSECT ", " MINUS ", " | "] {
                let chain = |n: usize| vec!["YIELD 1 AS a"; n].join(joint);
                assert!(parse(&chain(SENTENCE_DEPTH_MAX)).is_ok(), "{joint}");
                let long = chain(10_000);
                assert_eq!(error(&long), too_deep(&long[..80]), "{joint}");
                assert!(error(&chain(SENTENCE_DEPTH_MAX + 1)).starts_with("SyntaxError: The above statement's"));
            }
            let bracketed = |n: usize| format!("{}YIELD 1 AS a{}", "(".repeat(n), ")".repeat(n));
            // The outermost sentence is one level, each bracket around it another.
            assert!(parse(&bracketed(SENTENCE_DEPTH_MAX - 1)).is_ok());
            assert!(error(&bracketed(SENTENCE_DEPTH_MAX)).starts_with("SyntaxError: The above statement's"));
            assert!(error(&bracketed(100_000)).starts_with("SyntaxError: The above statement's"));
            let assigned = format!("$v = {}", vec!["YIELD 1 AS a"; SENTENCE_DEPTH_MAX].join(" UNION "));
            assert!(error(&assigned).starts_with("SyntaxError: The above statement's"));
        });
    }

    #[test]
    fn insert_edges_with_rank() {
        match one("INSERT EDGE serve(start_year) VALUES \"a\"->\"b\"@-1:(2001), 1->2:(3)") {
            Statement::InsertEdges { rows, .. } => {
                assert_eq!(rows.len(), 2);
                let minus_one = Expr::unary(UnaryOp::Minus, Expr::Const(Value::Int(1)));
                assert_eq!(rows[0].key.rank, Some(minus_one));
            }
            other => panic!("{other:?}"),
        }
    }

    fn error(src: &str) -> String {
        match parse(src) {
            Ok(_) => panic!("parsed: {}", crate::lexer::truncate(src, 200)),
            Err(e) => e.message,
        }
    }

    #[test]
    fn input_limits_are_errors_not_crashes() {
        on_half_query_stack(input_limits);
    }

    fn input_limits() {
        let deep = format!("YIELD {}1{}", "(".repeat(EXPR_DEPTH_MAX + 5), ")".repeat(EXPR_DEPTH_MAX + 5));
        let near = format!("{}1", "(".repeat(EXPR_DEPTH_MAX));
        assert_eq!(
            error(&deep),
            format!(
                "SyntaxError: The above expression's depth exceeds the maximum depth:{EXPR_DEPTH_MAX} near `{}'",
                &near[..80]
            )
        );
        let deep_unary = format!("YIELD {}1", "- ".repeat(100_000));
        assert!(error(&deep_unary).contains("exceeds the maximum depth"), "{}", error(&deep_unary));
        let many = "YIELD 1;".repeat(STATEMENTS_PER_REQUEST_MAX + 1);
        assert_eq!(
            error(&many),
            format!("SyntaxError: more than {STATEMENTS_PER_REQUEST_MAX} statements in one request")
        );
        let long = format!("YIELD \"{}\"", "x".repeat(STATEMENT_BYTES_MAX));
        assert_eq!(error(&long), format!("SyntaxError: statement longer than {STATEMENT_BYTES_MAX} bytes"));
    }

    #[test]
    fn clause_and_hop_counts_are_bounded() {
        let unwinds = |n: usize| {
            let clauses: String = (0..n).map(|i| format!("UNWIND [1] AS x{i} ")).collect();
            format!("{clauses}RETURN 1 AS one")
        };
        assert!(parse(&unwinds(MATCH_CLAUSES_MAX)).is_ok());
        let e = error(&unwinds(MATCH_CLAUSES_MAX + 1));
        assert!(
            e.starts_with(&format!(
                "SyntaxError: The MATCH statement has more than {MATCH_CLAUSES_MAX} clauses and patterns near `UNWIND"
            )),
            "{e}"
        );
        // 15,000 clauses (the statement that overflowed the stack) stop at the bound too, as do MATCH and WITH.
        assert!(error(&unwinds(15_000)).contains("more than"));
        let matches = format!("{}RETURN v", "MATCH (v) ".repeat(MATCH_CLAUSES_MAX + 1));
        assert!(error(&matches).contains("more than"));
        let withs = format!("MATCH (v) {}RETURN v", "WITH v WHERE true ".repeat(MATCH_CLAUSES_MAX));
        assert!(error(&withs).contains("more than"));
        let patterns = format!("MATCH {} RETURN 1", vec!["(v)"; MATCH_CLAUSES_MAX + 1].join(", "));
        assert!(error(&patterns).contains("more than"));
        let hops = |n: usize| format!("MATCH (v0){} RETURN v0", "-[:like]->()".repeat(n));
        assert!(parse(&hops(PATTERN_HOPS_MAX)).is_ok());
        assert_eq!(
            error(&hops(PATTERN_HOPS_MAX + 1)),
            format!("SyntaxError: The statement's patterns have more than {PATTERN_HOPS_MAX} hops near `-'")
        );
        assert!(error(&hops(30_000)).contains("hops"));
        // Hops are counted over a statement's patterns together, pattern predicates included, and afresh for the
        // next statement.
        let half = "-->()".repeat(PATTERN_HOPS_MAX / 2 + 1);
        assert!(error(&format!("MATCH (a){half} WHERE (a){half} RETURN a")).contains("hops"));
        assert!(parse(&format!("{}; {}", hops(PATTERN_HOPS_MAX), hops(PATTERN_HOPS_MAX))).is_ok());
    }

    #[test]
    fn only_traverse_sentences_pipe_as_in_nebula_graph() {
        // USE, INSERT, DDL and MATCH stand only as statements of their own: in a pipe, a set operation or an
        // assignment the right side would run in a space, or with a schema, it was not checked against.
        assert_eq!(error("USE s1 | INSERT VERTEX t() VALUES 1:()"), "SyntaxError: syntax error near `| INSERT'");
        assert_eq!(error("YIELD 1 AS a | USE s1"), "SyntaxError: syntax error near `USE'");
        assert_eq!(
            error("GO FROM 1 OVER e YIELD dst(edge) AS d | INSERT VERTEX t() VALUES 1:()"),
            "SyntaxError: syntax error near `INSERT'"
        );
        assert_eq!(error("$a = USE s1"), "SyntaxError: syntax error near `USE'");
        assert_eq!(error("$a = CREATE TAG t()"), "SyntaxError: syntax error near `CREATE'");
        assert_eq!(error("YIELD 1 AS a UNION USE s1"), "SyntaxError: syntax error near `USE'");
        assert_eq!(error("USE s1 UNION YIELD 1 AS a"), "SyntaxError: syntax error near `UNION'");
        assert_eq!(error("(USE s1) | YIELD 1 AS a"), "SyntaxError: syntax error near `USE'");
        assert_eq!(error("MATCH (v) RETURN v | YIELD 1 AS a"), "SyntaxError: syntax error near `| YIELD '");
        assert_eq!(error("YIELD 1 AS a UNION MATCH (v) RETURN v"), "SyntaxError: syntax error near `MATCH'");
        assert_eq!(error("SUBMIT JOB STATS | YIELD 1 AS a"), "SyntaxError: syntax error near `| YIELD '");
        // What NebulaGraph's `traverse_sentence` takes still pipes: reads, DELETE and UPDATE of piped rows, SHOW.
        for ok in [
            "GO FROM 1 OVER e YIELD dst(edge) AS d | DELETE VERTEX $-.d",
            "LOOKUP ON t YIELD id(vertex) AS id | UPDATE VERTEX ON t $-.id SET n = 1",
            "LOOKUP ON t YIELD id(vertex) AS id | UPSERT VERTEX ON t $-.id SET n = 1",
            "SHOW SPACES | YIELD $-.Name AS n",
            "$a = GO FROM 1 OVER e YIELD dst(edge) AS d; YIELD $a.d AS d",
            "(YIELD 1 AS a UNION YIELD 2 AS a) | ORDER BY $-.a | LIMIT 1",
            "MATCH (v) RETURN v UNION MATCH (w) RETURN w",
            "SHOW JOBS | YIELD $-.Status AS s",
        ] {
            assert!(parse(ok).is_ok(), "{ok}: {:?}", parse(ok).err());
        }
    }

    #[test]
    fn comprehensions_reduce_and_predicates() {
        assert_eq!(col("[x IN range(1, 5) WHERE x > 2 | x * 10]"), "[x IN range(1,5) WHERE (x>2) | (x*10)]");
        assert_eq!(col("[x IN [1,2] WHERE x > 1]"), "[x IN [1,2] WHERE (x>1)]");
        assert_eq!(col("[x in [1,2]|x]"), "[x IN [1,2] | x]");
        assert_eq!(col("reduce(s = 0, x IN [1, 2] | s + x)"), "reduce(s = 0, x IN [1,2] | (s+x))");
        assert_eq!(col("ALL(n IN range(1, 5) WHERE n > 2)"), "all(n IN range(1,5) WHERE (n>2))");
        assert_eq!(col("Any(n IN [1] where true)"), "any(n IN [1] WHERE true)");
        assert_eq!(col("single(n IN [1] WHERE true)"), "single(n IN [1] WHERE true)");
        assert_eq!(col("NONE(n IN [1] WHERE true)"), "none(n IN [1] WHERE true)");
        // Without WHERE or `|` a bracket is a list, whatever its first item.
        assert_eq!(col("[x IN [1]]"), "[(x IN [1])]");
        assert_eq!(col("[1 IN [1] , 2]"), "[(1 IN [1]),2]");
        assert_eq!(col("[x, y]"), "[x,y]");
        assert_eq!(col("[]"), "[]");
        // The names stay names where they are not called.
        assert_eq!(col("all + any"), "(all+any)");
        assert_eq!(
            error("YIELD [1 IN [1] WHERE true]"),
            "SyntaxError: The loop variable must be a label in list comprehension near `1 IN [1]'"
        );
        assert_eq!(
            error("YIELD [a.b IN [1] | 1]"),
            "SyntaxError: The loop variable must be a label in list comprehension near `a.b'"
        );
        assert_eq!(
            error("YIELD none(-x IN [1] WHERE true)"),
            "SyntaxError: The loop variable must be a label in predicate functions near `-x'"
        );
        assert_eq!(error("YIELD [(x IN [1]) | 1]"), "SyntaxError: syntax error near `| 1]'");
        assert_eq!(error("YIELD [x IN [1] WHERE true | ]"), "SyntaxError: syntax error near `]'");
        assert_eq!(error("YIELD single(x IN [1])"), "SyntaxError: syntax error near `)'");
        assert_eq!(error("YIELD reduce(s = 0, x IN [1])"), "SyntaxError: syntax error near `)'");
        assert_eq!(error("YIELD reduce(s, x IN [1] | 1)"), "SyntaxError: syntax error near `, x IN ['");
        // The canonical text reads back as the same expression (it is what the catalog keeps of a DEFAULT).
        for src in [
            "[x IN [1, 2] WHERE x.a > 1 | [y IN x.b | y + x]]",
            "reduce(s = {a: 1}, m IN l | s.a + m.a)",
            "none(e IN [1] WHERE any(f IN [e] WHERE f.w IS NULL))",
        ] {
            let e = parse_expr(src).unwrap();
            assert_eq!(parse_expr(&e.to_string()).unwrap(), e, "{e}");
        }
    }

    /// The expression of `YIELD <src>`.
    fn expr_of(src: &str) -> Expr {
        match one(&format!("YIELD {src}")) {
            Statement::Yield { mut yield_clause, .. } => yield_clause.columns.remove(0).expr,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_loop_variable_is_a_value_where_it_is_bound() {
        let label = |n: &str| Box::new(Expr::Label(n.into()));
        let attr = |n: &str, a: &str| Expr::Attribute { base: label(n), name: a.into() };
        let prop = |l: &str, p: &str| Expr::LabelProp { label: l.into(), prop: p.into() };
        // `x.a` in the mapping and filter reads the element; `x.l` in the list, and `y.a`, are properties.
        let Expr::ListComprehension { list, filter, mapping, .. } = expr_of("[x IN x.l WHERE x._dst | x.a + y.a]")
        else {
            panic!()
        };
        assert_eq!(*list, prop("x", "l"));
        assert_eq!(filter.map(|f| *f), Some(attr("x", "_dst")));
        assert_eq!(mapping.map(|m| *m), Some(Expr::binary(BinaryOp::Add, attr("x", "a"), prop("y", "a"))));
        // After the comprehension the name is free again.
        let Expr::List(items) = expr_of("[[x IN [1] | x.a], x.a]") else { panic!() };
        assert_eq!(items[1], prop("x", "a"));
        // reduce binds both names in its mapping only.
        let Expr::Reduce(r) = expr_of("reduce(s = s.v, x IN x.l | s.v + x.v)") else { panic!() };
        assert_eq!((r.init, r.list), (prop("s", "v"), prop("x", "l")));
        assert_eq!(r.mapping, Expr::binary(BinaryOp::Add, attr("s", "v"), attr("x", "v")));
        let Expr::Predicate { quantifier, filter, .. } = expr_of("aNy(e IN [1] WHERE e.w > 1)") else { panic!() };
        assert_eq!(quantifier, Quantifier::Any);
        assert_eq!(*filter, Expr::binary(BinaryOp::Gt, attr("e", "w"), Expr::Const(Value::Int(1))));
    }

    #[test]
    fn nested_comprehensions_are_bounded() {
        on_half_query_stack(|| {
            // Each nests one node above the one inside it (`[]` and `1` stand one high), so n levels stand n + 1.
            let nests: [(&str, &str, &str); 5] = [
                ("[x IN [] | ", "1", "]"),
                ("[x IN [] WHERE ", "true", "]"),
                ("[x IN ", "[]", " | 1]"),
                ("reduce(a = 0, x IN [] | ", "1", ")"),
                ("all(x IN [] WHERE ", "true", ")"),
            ];
            for (open, inner, close) in nests {
                let nested = |n: usize| format!("YIELD {}{inner}{}", open.repeat(n), close.repeat(n));
                let Statement::Yield { yield_clause, .. } = one(&nested(EXPR_DEPTH_MAX - 1)) else { panic!() };
                assert_eq!(height(&yield_clause.columns[0].expr), EXPR_DEPTH_MAX, "{open}");
                for n in [EXPR_DEPTH_MAX, 100_000] {
                    assert!(
                        error(&nested(n)).starts_with("SyntaxError: The above expression's depth exceeds the maximum"),
                        "{open} {n}"
                    );
                }
            }
            // A chain inside a comprehension counts with it.
            let chain = vec!["x"; EXPR_DEPTH_MAX - 1].join("+");
            assert!(parse(&format!("YIELD [x IN [] | {chain}]")).is_ok());
            assert!(error(&format!("YIELD [x IN [] | {chain}+x]")).starts_with("SyntaxError: The above expression's"));
            assert!(error(&format!("YIELD reduce(s = {chain}+x, x IN [] | 1)"))
                .starts_with("SyntaxError: The above expression's"));
        });
    }

    /// Evaluates `YIELD <src>`'s expression.
    fn value_of(src: &str) -> QResult<Value> {
        quiver_common::eval::eval_const(&expr_of(src))
    }

    #[test]
    fn the_deepest_comprehensions_evaluate_on_half_a_query_stack() {
        on_half_query_stack(|| {
            // Each level stands one above its list `[1]` (two high) and its body: n levels stand n + 2.
            let n = EXPR_DEPTH_MAX - 2;
            let nested = |open: &str, inner: &str, close: &str| {
                let e = expr_of(&format!("{}{inner}{}", open.repeat(n), close.repeat(n)));
                assert_eq!(height(&e), EXPR_DEPTH_MAX, "{open}");
                quiver_common::eval::eval_const(&e).unwrap()
            };
            assert_eq!(nested("[x IN [1] | ", "x", "]").depth(), n);
            assert_eq!(nested("reduce(a = 0, x IN [1] | ", "a + x", ")"), Value::Int(1));
            assert_eq!(nested("all(x IN [1] WHERE ", "x > 0", ")"), Value::Bool(true));
            assert_eq!(nested("[x IN [1] WHERE ", "x > 0", "]"), Value::List(vec![Value::Int(1)]));
            // Other nestings evaluate through the same frames, one node a level.
            let n = EXPR_DEPTH_MAX - 1;
            let calls = expr_of(&format!("{}1{}", "abs(".repeat(n), ")".repeat(n)));
            assert_eq!(quiver_common::eval::eval_const(&calls).unwrap(), Value::Int(1));
            let lists = expr_of(&format!("{}1{}", "[".repeat(n), "]".repeat(n)));
            assert_eq!(quiver_common::eval::eval_const(&lists).unwrap().depth(), n);
            let cases = expr_of(&format!("{}1{}", "CASE WHEN true THEN ".repeat(n), " END".repeat(n)));
            assert_eq!(quiver_common::eval::eval_const(&cases).unwrap(), Value::Int(1));
        });
    }

    #[test]
    fn a_value_nested_one_level_a_step_is_refused_not_crashed() {
        // On a query thread's stack: past the bound nothing recurses over the value (dropping, printing).
        std::thread::Builder::new()
            .stack_size(QUERY_THREAD_STACK_BYTES)
            .spawn(|| {
                let too_deep = format!(
                    "SemanticError: `[acc]' would build a value nested deeper than {} levels",
                    quiver_common::limits::VALUE_DEPTH_MAX
                );
                let e = value_of("reduce(acc = [], x IN range(1, 100000) | [acc])").unwrap_err();
                assert_eq!(e.message, too_deep);
                let at_bound = value_of("reduce(acc = [], x IN range(1, 511) | [acc])").unwrap();
                assert_eq!(at_bound.depth(), quiver_common::limits::VALUE_DEPTH_MAX);
                assert_eq!(at_bound.to_string().len(), 2 * quiver_common::limits::VALUE_DEPTH_MAX);
                assert!(value_of("[reduce(acc = [], x IN range(1, 511) | [acc])]").is_err());
                // The outermost level built past the bound is the one named.
                let e = value_of("reduce(m = MAP{}, x IN range(1, 100000) | {k: [m]})").unwrap_err();
                assert!(e.message.starts_with("SemanticError: `{k:[m]}' would build"), "{}", e.message);
                // Concatenation keeps the depth of its deeper side; appending nests the appended value.
                assert_eq!(value_of("reduce(acc = [], x IN range(1, 2000) | acc + [x])").unwrap().depth(), 1);
                let e = value_of("reduce(acc = [], x IN range(1, 100000) | [1] + [acc])").unwrap_err();
                assert_eq!(e.message, too_deep);
                let e = value_of("reduce(acc = [], x IN range(1, 100000) | [1] + {k: acc})").unwrap_err();
                assert!(e.message.contains("would build a value nested deeper"), "{}", e.message);
            })
            .unwrap()
            .join()
            .unwrap();
    }

    #[test]
    fn bare_vertex_and_edge_columns_need_an_alias() {
        assert_eq!(error("YIELD vertex"), "SyntaxError: please add alias when using `vertex'. near `vertex'");
        assert_eq!(error("YIELD 1, EDGE"), "SyntaxError: please add alias when using `edge'. near `EDGE'");
        assert_eq!(error("YIELD $$"), "SyntaxError: please add alias when using `$$'. near `$$'");
        assert!(parse("YIELD vertex AS v, edge AS e").is_ok());
    }

    /// Query parameters as NebulaGraph's grammar takes them: `$p.a` reads an entry of parameter `p`'s value, a
    /// variable of a parameter's name is refused, and so is a parameter where a VID goes.
    #[test]
    fn parameters_are_values_and_not_variables() {
        let with = |src: &str| parse_with_params(src, &["p1", "p6"]);
        let Statement::Yield { yield_clause, .. } = &with("YIELD $p6.a.b AS v").unwrap()[0] else { panic!("a YIELD") };
        let Expr::Attribute { base, name } = &yield_clause.columns[0].expr else { panic!("an attribute") };
        assert_eq!(name, "b");
        assert!(matches!(&**base, Expr::Attribute { base, name } if name == "a" && **base == Expr::Param("p6".into())));
        let e = with("$p1 = GO FROM \"a\" OVER e YIELD dst(edge) AS d; YIELD 1").unwrap_err();
        assert_eq!(e.message, "SyntaxError: Variable definition conflicts with a parameter near `$p1'");
        assert!(with("$v = GO FROM \"a\" OVER e YIELD dst(edge) AS d; GO FROM $v.d OVER e YIELD 1 AS x").is_ok());
        let e = with("FETCH PROP ON t $p1 YIELD t.a").unwrap_err();
        assert_eq!(e.message, "SyntaxError: Parameter is not supported in vid near `$p1'");
        let e = with("GO 1 TO 2 STEPS FROM \"a\" OVER e YIELD dst(edge) AS d SAMPLE [1,$p1]").unwrap_err();
        assert_eq!(e.message, "SyntaxError: Parameter is not supported in sample clause near `[1,$p1]'");
        assert!(with("GO 1 TO 2 STEPS FROM \"a\" OVER e YIELD dst(edge) AS d LIMIT [1,$p1]").is_ok());
    }
}
