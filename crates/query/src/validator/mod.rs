//! The validator (binder): a sentence's names resolved against the catalog once, its constants evaluated and its
//! semantic errors raised before anything runs. Its output, a [`BoundSentence`], is what the planner, the optimizer
//! and the executors read; they never look a name up again. See `docs/design/query.md`.
//!
//! **Invariant:** the validator reads the catalog and the request (parameters, variables), never storage.

mod fetch;
mod go;
mod lookup;
mod r#match;
mod path;
mod types;

pub(crate) use fetch::{BoundFetchEdges, BoundFetchVertices, EdgeKeys, VertexIds};
pub(crate) use go::{BoundGo, VertexProps};
pub(crate) use path::{BoundFindPath, BoundSubgraph, Ends, SubgraphColumn};

use crate::request::Request;
use crate::QueryEngine;
pub(crate) use lookup::{describe_scan, scan_name, LookupPlan};
use quiver_api::{SchemaKind, SpaceDesc, VidType};
use quiver_common::expr::Expr;
use quiver_common::{QError, QResult};
use quiver_syntax::ast::{SetOp, Statement, YieldClause, YieldColumn, YieldJoin};
pub(crate) use r#match::{BoundEdge, BoundMatch, BoundNode, BoundPath, BoundProjection, MatchStage, Start};
use std::sync::Arc;

/// Whether `e` reads nothing but constants and parameters, so it can be evaluated before anything runs.
pub(crate) fn is_constant(e: &Expr) -> bool {
    !e.any(&|x| {
        matches!(
            x,
            Expr::LabelProp { .. }
                | Expr::EdgeMetaProp { .. }
                | Expr::SrcProp { .. }
                | Expr::DstProp { .. }
                | Expr::InputProp(_)
                | Expr::VarProp { .. }
                | Expr::Label(_)
                | Expr::Vertex(_)
                | Expr::Edge
                | Expr::Aggregate { .. }
                | Expr::Pattern(_)
        )
    })
}

/// An inner join of two variables' rows on one column of each, and the YIELD over the joined rows.
pub(crate) struct BoundJoin {
    pub left: String,
    pub right: String,
    pub left_col: String,
    pub right_col: String,
    /// Reads `$-.a.c` for `$a.c`; each column keeps the name it was written with.
    pub yield_clause: YieldClause,
}

/// A sentence with its names resolved.
pub(crate) enum BoundSentence {
    Go(Box<BoundGo>),
    FindPath(Box<BoundFindPath>),
    GetSubgraph(Box<BoundSubgraph>),
    /// LOOKUP, with the index ranges chosen.
    Lookup(Box<LookupPlan>),
    FetchVertices(Box<BoundFetchVertices>),
    FetchEdges(Box<BoundFetchEdges>),
    /// Standalone or piped `YIELD [WHERE]`.
    Yield {
        yield_clause: YieldClause,
        filter: Option<Expr>,
    },
    /// nGQL's `UNWIND expr AS alias` sentence: one row per item, of the one column `alias`.
    Unwind {
        expr: Expr,
        alias: String,
    },
    /// `YIELD ... FROM $a INNER JOIN $b ON ...`: the join's rows have one column per column of each variable, named
    /// `a.c` and `b.c`, which the YIELD (rewritten) reads as input columns.
    Join(Box<BoundJoin>),
    OrderBy(Vec<(Expr, bool)>),
    Limit {
        offset: Expr,
        count: Expr,
    },
    GroupBy {
        keys: Vec<Expr>,
        yield_clause: YieldClause,
    },
    Pipe(Box<BoundSentence>, Box<BoundSentence>),
    SetOp {
        op: SetOp,
        left: Box<BoundSentence>,
        right: Box<BoundSentence>,
    },
    Assign {
        var: String,
        sentence: Box<BoundSentence>,
    },
    /// An openCypher MATCH (or a statement of UNWIND, WITH and RETURN alone).
    Match(Box<BoundMatch>),
    /// Run whole by the statement executor, which checks it itself (DDL, DML, admin).
    Statement(Statement),
}

/// The columns of a sentence's input (`$-`), when they are known before it runs (`None`: a statement whose
/// columns only its run tells).
pub(crate) type Columns = Option<Vec<String>>;

impl BoundSentence {
    /// The columns this sentence outputs, given its input's.
    pub fn columns(&self, input: &Columns) -> Columns {
        let names = |y: &YieldClause| Some(y.columns.iter().map(|c| c.name()).collect());
        match self {
            BoundSentence::Go(g) => Some(g.columns()),
            BoundSentence::FindPath(f) => Some(vec![f.column.clone()]),
            BoundSentence::GetSubgraph(g) => Some(g.columns.iter().map(|(c, _)| c.clone()).collect()),
            BoundSentence::Lookup(l) => names(&l.yield_clause),
            BoundSentence::FetchVertices(f) => names(&f.yield_clause),
            BoundSentence::FetchEdges(f) => names(&f.yield_clause),
            BoundSentence::Yield { yield_clause, .. } | BoundSentence::GroupBy { yield_clause, .. } => {
                names(yield_clause)
            }
            BoundSentence::Join(j) => names(&j.yield_clause),
            BoundSentence::Unwind { alias, .. } => Some(vec![alias.clone()]),
            BoundSentence::OrderBy(_) | BoundSentence::Limit { .. } => input.clone(),
            BoundSentence::Pipe(left, right) => right.columns(&left.columns(input)),
            BoundSentence::SetOp { left, .. } => left.columns(input),
            BoundSentence::Assign { .. } => Some(Vec::new()),
            BoundSentence::Match(m) => names(&m.ret.yield_clause),
            BoundSentence::Statement(_) => None,
        }
    }
}

/// The first bare name in `e` that no list comprehension, predicate or reduce of it binds (a name nGQL's
/// sentences other than MATCH cannot resolve).
pub(crate) fn unbound_label(e: &Expr) -> Option<String> {
    let mut bound = Vec::new();
    e.visit(&mut |x| match x {
        Expr::ListComprehension { var, .. } | Expr::Predicate { var, .. } => bound.push(var.clone()),
        Expr::Reduce(r) => bound.extend([r.acc.clone(), r.var.clone()]),
        _ => {}
    });
    let mut unbound = None;
    e.visit(&mut |x| {
        if let Expr::Label(name) = x {
            if unbound.is_none() && !bound.contains(name) {
                unbound = Some(name.clone());
            }
        }
    });
    unbound
}

/// NebulaGraph's DeducePropsVisitor, which its YIELD, GO and GROUP BY validators run: `uuid()` (and, where
/// `labels` says so, a bare name) is an expression it cannot say what it reads.
fn check_props_deducible<'e>(exprs: impl IntoIterator<Item = &'e Expr>, labels: bool) -> QResult<()> {
    for e in exprs {
        let mut refused = None;
        e.visit(&mut |x| {
            if refused.is_none()
                && matches!(x, Expr::Function { name, args } if args.is_empty() && name.eq_ignore_ascii_case("uuid"))
            {
                refused = Some(x.to_string());
            }
        });
        if refused.is_none() && labels {
            refused = unbound_label(e);
        }
        if let Some(what) = refused {
            return Err(QError::semantic(format!("Not supported expression `{what}' for props deduction.")));
        }
    }
    Ok(())
}

/// What a sentence's expressions read from outside it: the piped input, and the variables (distinct, in order).
pub(crate) fn sources<'e>(exprs: impl IntoIterator<Item = &'e Expr>) -> (bool, Vec<String>) {
    let (mut input, mut vars) = (false, Vec::<String>::new());
    for e in exprs {
        e.visit(&mut |x| match x {
            Expr::InputProp(_) => input = true,
            Expr::VarProp { var, .. } if !vars.contains(var) => vars.push(var.clone()),
            _ => {}
        });
    }
    (input, vars)
}

/// NebulaGraph's GroupByValidator (`validateGroup`, `checkAggExpr`, `groupClauseSemanticCheck`): each key reads
/// the input or a variable and is an arithmetic, a cast, a call, a CASE or a column; no aggregate nests another;
/// the sentence reads its input or one variable; and a column that aggregates nothing contains a key.
fn check_group_by(keys: &[Expr], y: &YieldClause) -> QResult<()> {
    use quiver_common::expr::BinaryOp as B;
    for k in keys {
        let kind_ok = matches!(
            k,
            Expr::Binary { op: B::Add | B::Sub | B::Mul | B::Div | B::Mod, .. }
                | Expr::Cast { .. }
                | Expr::Function { .. }
                | Expr::InputProp(_)
                | Expr::VarProp { .. }
                | Expr::Case { .. }
        );
        if k.has_aggregate() || !k.reads_input() || !kind_ok {
            return Err(QError::semantic(format!("Group `{k}' invalid")));
        }
    }
    for c in &y.columns {
        let mut nested = None;
        c.expr.visit(&mut |e| {
            if let Expr::Aggregate { arg: Some(arg), .. } = e {
                if nested.is_none() && arg.has_aggregate() {
                    nested = Some(e.to_string());
                }
            }
        });
        if let Some(agg) = nested {
            return Err(QError::semantic(format!("Aggregate function nesting is not allowed: `{agg}'")));
        }
    }
    let exprs = || keys.iter().chain(y.columns.iter().map(|c| &c.expr));
    if exprs().any(|e| e.any(&|x| matches!(x, Expr::SrcProp { .. } | Expr::DstProp { .. }))) {
        return Err(QError::semantic("Only support input and variable in GroupBy sentence."));
    }
    match sources(exprs()) {
        (true, vars) if !vars.is_empty() => {
            return Err(QError::semantic("Not support both input and variable in GroupBy sentence."))
        }
        (_, vars) if vars.len() > 1 => return Err(QError::semantic("Only one variable allowed to use.")),
        _ => {}
    }
    if !keys.is_empty() {
        for c in y.columns.iter().filter(|c| !c.expr.has_aggregate() && c.expr.reads_input()) {
            if !c.expr.any(&|e| keys.contains(e)) {
                return Err(QError::semantic(format!(
                    "Yield non-agg expression `{}' must be functionally dependent on items in GROUP BY clause",
                    c.expr
                )));
            }
        }
    }
    Ok(())
}

/// NebulaGraph's YieldValidator and OrderByValidator: a sentence reads its input or one variable, not both.
fn check_one_source<'e>(exprs: impl IntoIterator<Item = &'e Expr>) -> QResult<()> {
    match sources(exprs) {
        (true, vars) if !vars.is_empty() => Err(QError::semantic("Not support both input and variable.")),
        _ => Ok(()),
    }
}

/// What a sentence is validated against: the catalog (through the engine), the current space, and the request
/// (its parameters, and the columns of the variables assigned so far).
pub(crate) struct Validator<'a> {
    pub engine: &'a QueryEngine,
    pub space: Option<Arc<SpaceDesc>>,
    pub req: &'a Request<'a>,
}

impl Validator<'_> {
    /// The current space, or NebulaGraph's error for a sentence that needs one.
    fn space(&self) -> QResult<&Arc<SpaceDesc>> {
        self.space.as_ref().ok_or_else(|| QError::semantic("Space was not chosen."))
    }

    /// Binds a statement with no piped input; its assignments' columns are recorded in `assigned`.
    pub fn statement(&self, stmt: &Statement, assigned: &mut Vec<(String, Vec<String>)>) -> QResult<BoundSentence> {
        self.sentence(stmt, &Some(Vec::new()), assigned)
    }

    /// Binds `stmt`, whose input has the columns `input`: the parts of a pipe and of a set operation left to
    /// right, each `$-.c` and `$v.c` checked against the columns known.
    fn sentence(
        &self,
        stmt: &Statement,
        input: &Columns,
        assigned: &mut Vec<(String, Vec<String>)>,
    ) -> QResult<BoundSentence> {
        Ok(match stmt {
            Statement::Go(g) => {
                check_props_deducible(g.yield_clause.iter().flat_map(|y| y.columns.iter().map(|c| &c.expr)), false)?;
                let bound = self.go(g, input)?;
                let exprs = g.yield_clause.iter().flat_map(|y| y.columns.iter().map(|c| &c.expr));
                let from = match &g.from {
                    quiver_syntax::ast::FromClause::Ref(e) => Some(e),
                    _ => None,
                };
                self.check_refs(from.into_iter().chain(exprs.clone()).chain(g.filter.iter()), input, assigned)?;
                self.check_types(g.filter.iter().chain(exprs))?;
                if let Some(filter) = &g.filter {
                    self.check_condition(filter)?;
                }
                BoundSentence::Go(Box::new(bound))
            }
            Statement::FindPath(f) => {
                let bound = self.find_path(f)?;
                self.check_types(f.filter.iter())?;
                let refs = [&f.from, &f.to].into_iter().filter_map(|e| match e {
                    quiver_syntax::ast::FromClause::Ref(e) => Some(e),
                    _ => None,
                });
                self.check_refs(refs, input, assigned)?;
                BoundSentence::FindPath(Box::new(bound))
            }
            Statement::GetSubgraph(g) => {
                let bound = self.get_subgraph(g)?;
                self.check_types(g.filter.iter())?;
                if let quiver_syntax::ast::FromClause::Ref(e) = &g.from {
                    self.check_refs([e], input, assigned)?;
                }
                BoundSentence::GetSubgraph(Box::new(bound))
            }
            Statement::Lookup(l) => {
                self.check_params_defined(l.filter.iter(), assigned)?;
                let bound = self.lookup(l)?;
                let yields = l.yield_clause.iter().flat_map(|y| y.columns.iter().map(|c| &c.expr));
                self.check_types(l.filter.iter().chain(yields))?;
                BoundSentence::Lookup(Box::new(bound))
            }
            Statement::FetchVertices { tags, vids, yield_clause } => {
                // A column its input lacks (`$-.*` too) is found before what a FETCH's YIELD may read.
                self.check_refs(yield_clause.columns.iter().map(|c| &c.expr), input, assigned)?;
                let bound = self.fetch_vertices(tags.as_deref(), vids, yield_clause)?;
                self.check_types(yield_clause.columns.iter().map(|c| &c.expr))?;
                self.check_refs(vids.iter(), input, assigned)?;
                BoundSentence::FetchVertices(Box::new(bound))
            }
            Statement::FetchEdges { edge, keys, yield_clause } => {
                self.check_refs(yield_clause.columns.iter().map(|c| &c.expr), input, assigned)?;
                let bound = self.fetch_edges(edge, keys, yield_clause)?;
                self.check_types(yield_clause.columns.iter().map(|c| &c.expr))?;
                let exprs = keys.iter().flat_map(|k| [Some(&k.src), Some(&k.dst), k.rank.as_ref()]).flatten();
                self.check_refs(exprs, input, assigned)?;
                BoundSentence::FetchEdges(Box::new(bound))
            }
            Statement::Yield { yield_clause, filter } => {
                check_props_deducible(yield_clause.columns.iter().map(|c| &c.expr), false)?;
                self.check_yield_tags(yield_clause.columns.iter().map(|c| &c.expr).chain(filter.iter()))?;
                // A YIELD that aggregates is validated as a GROUP BY first (NebulaGraph's implicit GroupByValidator).
                if yield_clause.columns.iter().any(|c| c.expr.has_aggregate()) {
                    check_group_by(&[], yield_clause)?;
                }
                check_one_source(yield_clause.columns.iter().map(|c| &c.expr).chain(filter.iter()))?;
                if sources(yield_clause.columns.iter().map(|c| &c.expr).chain(filter.iter())).1.len() > 1 {
                    return Err(QError::semantic("Only one variable allowed to use."));
                }
                let yield_clause = self.expand_stars(yield_clause, input, assigned)?;
                self.check_refs(yield_clause.columns.iter().map(|c| &c.expr).chain(filter.iter()), input, assigned)?;
                self.check_types(filter.iter().chain(yield_clause.columns.iter().map(|c| &c.expr)))?;
                BoundSentence::Yield { yield_clause, filter: filter.clone() }
            }
            Statement::YieldJoin(j) => BoundSentence::Join(Box::new(self.yield_join(j, assigned)?)),
            Statement::Unwind { expr, alias } => {
                // NebulaGraph's UnwindValidator: only constants, functions and the piped input's columns.
                let refused = expr.any(&|e| {
                    matches!(
                        e,
                        Expr::SrcProp { .. }
                            | Expr::DstProp { .. }
                            | Expr::VarProp { .. }
                            | Expr::Label(_)
                            | Expr::LabelProp { .. }
                            | Expr::Aggregate { .. }
                    )
                });
                if refused {
                    return Err(QError::semantic(format!("Not support `{expr}' in UNWIND sentence.")));
                }
                self.check_refs([expr], input, assigned)?;
                self.check_types([expr])?;
                BoundSentence::Unwind { expr: expr.clone(), alias: alias.clone() }
            }
            Statement::OrderBy(f) => {
                // NebulaGraph's OrderByValidator: each factor is a column of the input or of a variable.
                if let Some((e, _)) = f.iter().find(|(e, _)| !matches!(e, Expr::InputProp(_) | Expr::VarProp { .. })) {
                    return Err(QError::semantic(format!("Order by with invalid expression `{e}'")));
                }
                check_one_source(f.iter().map(|(e, _)| e))?;
                self.check_refs(f.iter().map(|(e, _)| e), input, assigned)?;
                self.check_types(f.iter().map(|(e, _)| e))?;
                match self.order_var(f, input, assigned)? {
                    Some(sorted) => sorted,
                    None => BoundSentence::OrderBy(f.clone()),
                }
            }
            Statement::Limit { offset, count } => BoundSentence::Limit { offset: offset.clone(), count: count.clone() },
            Statement::GroupBy { keys, yield_clause } => {
                let exprs = || keys.iter().chain(yield_clause.columns.iter().map(|c| &c.expr));
                check_group_by(keys, yield_clause)?;
                check_props_deducible(exprs(), true)?;
                self.check_refs(exprs(), input, assigned)?;
                self.check_types(exprs())?;
                BoundSentence::GroupBy { keys: keys.clone(), yield_clause: yield_clause.clone() }
            }
            Statement::Pipe(left, right) => {
                let left = self.sentence(left, input, assigned)?;
                // A sentence's input has distinct column names (NebulaGraph's `checkDuplicateColName`).
                // (After the right side's own checks, as NebulaGraph finds a column it lacks first.)
                let bound_right = self.sentence(right, &left.columns(input), assigned)?;
                if let Some(cols) = left.columns(input) {
                    for (i, c) in cols.iter().enumerate() {
                        if cols[..i].contains(c) {
                            return Err(QError::semantic(format!("Duplicate Column Name : `{c}'")));
                        }
                    }
                }
                self.check_piped_vid(stmt, right)?;
                BoundSentence::Pipe(Box::new(left), Box::new(bound_right))
            }
            Statement::SetOp { op, left, right } => {
                // As in NebulaGraph, a set operation piped into reads no input: its sides start afresh.
                let none: Columns = Some(Vec::new());
                let left = self.sentence(left, &none, assigned)?;
                let right = self.sentence(right, &none, assigned)?;
                if let (Some(l), Some(r)) = (left.columns(&none), right.columns(&none)) {
                    if l.len() != r.len() {
                        return Err(QError::semantic("number of columns to UNION/INTERSECT/MINUS must be same"));
                    }
                    // NebulaGraph's SetValidator: the columns are matched by name as well as by position.
                    if l != r {
                        return Err(QError::semantic(
                            "different column names to UNION/INTERSECT/MINUS are not supported",
                        ));
                    }
                }
                BoundSentence::SetOp { op: *op, left: Box::new(left), right: Box::new(right) }
            }
            Statement::Assign { var, statement } => {
                if assigned.iter().any(|(v, _)| v == var) {
                    return Err(QError::semantic(format!("Variable `{var}' already exists")));
                }
                let sentence = self.sentence(statement, input, assigned)?;
                if let Some(columns) = sentence.columns(input) {
                    assigned.push((var.clone(), columns));
                }
                BoundSentence::Assign { var: var.clone(), sentence: Box::new(sentence) }
            }
            Statement::Match(m) => {
                let wheres = m.clauses.iter().filter_map(|c| match c {
                    quiver_syntax::ast::MatchClause::Match { filter, .. } => filter.as_ref(),
                    _ => None,
                });
                self.check_params_defined(wheres.clone(), assigned)?;
                // NebulaGraph's MatchValidator types the WHERE: one known to be no boolean (nor NULL, EMPTY or a
                // list) is refused before anything runs; one known only at run time is checked per row.
                for w in wheres {
                    let ty = types::deduce(w, self.space.as_ref().map(|s| s.vid_type), &|_| None)?;
                    if !matches!(ty, types::Ty::Bool | types::Ty::Null | types::Ty::Empty | types::Ty::List) {
                        return Err(QError::semantic(format!("`{w}', expected Boolean, but was `{}'", ty.name())));
                    }
                }
                // A pattern's property values are folded first (NebulaGraph's "filter evaluable"): `{age: "24"-1}`
                // is ``Type error `("24"-1)'``.
                for c in &m.clauses {
                    if let quiver_syntax::ast::MatchClause::Match { paths, .. } = c {
                        for p in paths {
                            let maps = p
                                .nodes
                                .iter()
                                .flat_map(|n| n.labels.iter().filter_map(|(_, m)| m.as_ref()).chain(&n.props));
                            for (_, e) in maps.chain(p.edges.iter().filter_map(|e| e.props.as_ref())).flatten() {
                                types::fold_type_error(e)?;
                            }
                        }
                    }
                }
                let bound = self.match_statement(m)?;
                self.check_types(m.clauses.iter().flat_map(|c| c.exprs()).chain(m.ret.exprs()))?;
                BoundSentence::Match(Box::new(bound))
            }
            other => BoundSentence::Statement(other.clone()),
        })
    }

    /// NebulaGraph's checks of `YIELD ... FROM $a INNER JOIN $b ON $a.x == $b.y` (YieldValidator::validateJoin),
    /// with its messages, and the YIELD rewritten to read the joined rows.
    fn yield_join(&self, j: &YieldJoin, assigned: &[(String, Vec<String>)]) -> QResult<BoundJoin> {
        let (Expr::VarProp { var: lvar, prop: lcol }, Expr::VarProp { var: rvar, prop: rcol }) = &j.on else {
            unreachable!("the parser takes `$v.c' on both sides")
        };
        if j.left == j.right {
            return Err(QError::semantic("do not support self-join."));
        }
        for (var, side, cond) in [(&j.left, lvar, &j.on.0), (&j.right, rvar, &j.on.1)] {
            if var != side {
                return Err(QError::semantic(format!(
                    "`{var}' should be consistent with join condition variable `{cond}'."
                )));
            }
        }
        let columns = |var: &str| {
            self.var_columns(var, assigned).ok_or_else(|| QError::semantic(format!("variable: `{var}' not exist")))
        };
        let (lcols, rcols) = (columns(&j.left)?, columns(&j.right)?);
        for l in lcols.iter().filter(|l| *l != lcol) {
            if let Some(r) = rcols.iter().find(|r| *r != rcol && *r == l) {
                return Err(QError::semantic(format!(
                    "column name `{l}' of ${} and column name `{r}' of ${} are the same, please rename it to a non-duplicate column name.",
                    j.left, j.right
                )));
            }
        }
        let exprs = j.yield_clause.columns.iter().map(|c| &c.expr);
        self.check_refs(exprs.chain([&j.on.0, &j.on.1]), &Some(Vec::new()), assigned)?;
        let sides = [j.left.as_str(), j.right.as_str()];
        let columns = j
            .yield_clause
            .columns
            .iter()
            .map(|c| {
                let mut expr = c.expr.clone();
                expr.visit_mut(&mut |e| {
                    if let Expr::VarProp { var, prop } = e {
                        if sides.contains(&var.as_str()) {
                            *e = Expr::InputProp(format!("{var}.{prop}"));
                        }
                    }
                });
                YieldColumn { expr, alias: Some(c.name()) }
            })
            .collect();
        Ok(BoundJoin {
            left: j.left.clone(),
            right: j.right.clone(),
            left_col: lcol.clone(),
            right_col: rcol.clone(),
            yield_clause: YieldClause { distinct: j.yield_clause.distinct, columns },
        })
    }

    /// A standalone `ORDER BY $v.c` (no pipe in front): the rows of `$v`, its columns, sorted; planned as
    /// `YIELD $v.c1 AS c1, ... | ORDER BY $-.c`. `None` for any other ORDER BY.
    fn order_var(
        &self,
        factors: &[(Expr, bool)],
        input: &Columns,
        assigned: &[(String, Vec<String>)],
    ) -> QResult<Option<BoundSentence>> {
        if !input.as_ref().is_some_and(|c| c.is_empty()) {
            return Ok(None);
        }
        let mut var = None;
        for (e, _) in factors {
            if let Expr::VarProp { var: v, .. } = e {
                var.get_or_insert(v.clone());
            }
        }
        let Some(var) = var else { return Ok(None) };
        let Some(columns) = self.var_columns(&var, assigned) else { return Ok(None) };
        let columns = columns
            .iter()
            .map(|c| YieldColumn { expr: Expr::VarProp { var: var.clone(), prop: c.clone() }, alias: Some(c.clone()) })
            .collect();
        let mut sorted = factors.to_vec();
        for (e, _) in &mut sorted {
            e.visit_mut(&mut |x| {
                if let Expr::VarProp { var: v, prop } = x {
                    if *v == var {
                        *x = Expr::InputProp(std::mem::take(prop));
                    }
                }
            });
        }
        let rows = BoundSentence::Yield { yield_clause: YieldClause { distinct: false, columns }, filter: None };
        Ok(Some(BoundSentence::Pipe(Box::new(rows), Box::new(BoundSentence::OrderBy(sorted)))))
    }

    /// `yield_clause` with each `$-.*` column replaced by one `$-.c` per input column and each `$v.*` by one `$v.c`
    /// per column of `$v`, as NebulaGraph's YIELD does.
    fn expand_stars(
        &self,
        yield_clause: &YieldClause,
        input: &Columns,
        assigned: &[(String, Vec<String>)],
    ) -> QResult<YieldClause> {
        let mut columns = Vec::with_capacity(yield_clause.columns.len());
        for c in &yield_clause.columns {
            let expanded: Vec<Expr> = match &c.expr {
                Expr::InputProp(p) if p == "*" => match input {
                    Some(cols) => cols.iter().map(|c| Expr::InputProp(c.clone())).collect(),
                    None => return Err(QError::not_supported("`$-.*' after a statement whose columns are not known")),
                },
                Expr::VarProp { var, prop } if prop == "*" => match self.var_columns(var, assigned) {
                    Some(cols) => cols.iter().map(|c| Expr::VarProp { var: var.clone(), prop: c.clone() }).collect(),
                    None => return Err(QError::semantic(format!("variable `{var}' not exists."))),
                },
                _ => {
                    columns.push(c.clone());
                    continue;
                }
            };
            columns.extend(expanded.into_iter().map(|expr| YieldColumn { expr, alias: None }));
        }
        Ok(YieldClause { distinct: yield_clause.distinct, columns })
    }

    /// The columns of variable `var`: as assigned earlier in the request, or as the request's variable holds them.
    fn var_columns(&self, var: &str, assigned: &[(String, Vec<String>)]) -> Option<Vec<String>> {
        match assigned.iter().rev().find(|(v, _)| v == var) {
            Some((_, cols)) => Some(cols.clone()),
            None => self.req.vars.get(var).map(|d| d.columns().to_vec()),
        }
    }

    /// A DELETE VERTEX, DELETE TAG or UPDATE VERTEX whose VID is a piped column of a type other than the space's
    /// VID type, as its producer's YIELD deduces it, is NebulaGraph's semantic error (its validators'
    /// `deduceExprType` of the reference). A column of unknown type is let through, to be checked per row.
    fn check_piped_vid(&self, pipe: &Statement, right: &Statement) -> QResult<()> {
        let Statement::Pipe(left, _) = pipe else { return Ok(()) };
        let vid = match right {
            Statement::DeleteVertices { vids, .. } | Statement::DeleteTags { vids, .. } => vids.first(),
            Statement::Update { target: quiver_syntax::ast::UpdateTarget::Vertex { vids, .. }, .. } => vids.first(),
            _ => None,
        };
        let (Some(vid @ Expr::InputProp(col)), Some(space)) = (vid, &self.space) else { return Ok(()) };
        let ty = self.column_type(left, col);
        let want = if space.vid_type == VidType::Int64 { types::Ty::Int } else { types::Ty::String };
        // A NULL column skips its rows, as an unknown one is checked per row.
        if matches!(ty, types::Ty::Empty | types::Ty::Null) || ty == want {
            return Ok(());
        }
        Err(QError::semantic(format!("The vid `{vid}' should be type of `{}', but was `{}'", want.name(), ty.name())))
    }

    /// The type of column `col` of what `stmt` outputs, as its YIELD deduces it; `__EMPTY__` when not known.
    fn column_type(&self, stmt: &Statement, col: &str) -> types::Ty {
        let yields = match stmt {
            Statement::Pipe(_, right) => return self.column_type(right, col),
            Statement::Go(g) => g.yield_clause.as_ref(),
            Statement::Lookup(l) => l.yield_clause.as_ref(),
            Statement::Yield { yield_clause, .. }
            | Statement::GroupBy { yield_clause, .. }
            | Statement::FetchVertices { yield_clause, .. }
            | Statement::FetchEdges { yield_clause, .. } => Some(yield_clause),
            _ => None,
        };
        let Some(column) = yields.and_then(|y| y.columns.iter().find(|c| c.name() == col)) else {
            return types::Ty::Empty;
        };
        let vid = self.space.as_ref().map(|s| s.vid_type);
        types::deduce(&column.expr, vid, &|x| self.space.as_ref().and_then(|s| self.prop_type(s, x)))
            .unwrap_or(types::Ty::Empty)
    }

    /// Deduces the types of `exprs` (see [`types`]), raising the errors their types alone decide.
    fn check_types<'e>(&self, exprs: impl IntoIterator<Item = &'e Expr>) -> QResult<()> {
        let Some(space) = &self.space else { return types::check(exprs, None, &|_| None) };
        types::check(exprs, Some(space.vid_type), &|e| self.prop_type(space, e))
    }

    /// A WHERE whose type is known to be other than boolean is NebulaGraph's semantic error (its GoValidator's
    /// `deduceExprType` of the filter).
    fn check_condition(&self, e: &Expr) -> QResult<()> {
        let vid = self.space.as_ref().map(|s| s.vid_type);
        let ty = types::deduce(e, vid, &|x| self.space.as_ref().and_then(|s| self.prop_type(s, x)))?;
        if matches!(ty, types::Ty::Bool | types::Ty::Null | types::Ty::Empty) {
            return Ok(());
        }
        Err(QError::semantic(format!("`{e}', expected boolean, but was `{}'", ty.name())))
    }

    /// A `$name` in a WHERE of LOOKUP or MATCH that is neither a parameter nor a variable: NebulaGraph's parser
    /// takes both there, and its validator names the undefined ones (a variable's condition is refused later).
    fn check_params_defined<'e>(
        &self,
        exprs: impl IntoIterator<Item = &'e Expr>,
        assigned: &[(String, Vec<String>)],
    ) -> QResult<()> {
        let mut undefined: Vec<&str> = Vec::new();
        for e in exprs {
            e.visit(&mut |x| {
                if let Expr::Param(p) = x {
                    let known = self.req.params.contains_key(p.as_str()) || self.var_columns(p, assigned).is_some();
                    if !known && !undefined.contains(&p.as_str()) {
                        undefined.push(p);
                    }
                }
            });
        }
        if undefined.is_empty() {
            return Ok(());
        }
        Err(QError::semantic(format!("Undefined parameters: {}", undefined.join(", "))))
    }

    /// A YIELD's `$^.t.p` or `$$.t.p` names a tag of the current space (NebulaGraph's DeducePropsVisitor looks
    /// the tag up before the YIELD is refused for reading no input), else `TagNotFound`.
    fn check_yield_tags<'e>(&self, exprs: impl IntoIterator<Item = &'e Expr>) -> QResult<()> {
        for e in exprs {
            let mut tags = Vec::new();
            e.visit(&mut |x| {
                if let Expr::SrcProp { tag, .. } | Expr::DstProp { tag, .. } = x {
                    tags.push(tag);
                }
            });
            for tag in tags {
                let known =
                    self.space.as_ref().is_some_and(|s| self.engine.catalog.schema(s, SchemaKind::Tag, tag).is_ok());
                if !known {
                    return Err(QError::execution(format!("TagNotFound: TagName `{tag}`")));
                }
            }
        }
        Ok(())
    }

    /// The declared type of the schema property `e` reads, if it names one.
    fn prop_type(&self, space: &SpaceDesc, e: &Expr) -> Option<quiver_common::types::PropType> {
        let catalog = &self.engine.catalog;
        let prop = |kind: SchemaKind, schema: &str, prop: &str| {
            let s = catalog.schema(space, kind, schema).ok()?;
            let latest = s.latest();
            latest.prop_index(prop).map(|i| latest.props[i].ty)
        };
        // `label.p` is an edge's property in a GO and a FETCH of edges, a tag's in a FETCH or LOOKUP of vertices; a
        // name is not both a tag and an edge type.
        match e {
            Expr::SrcProp { tag, prop: p } | Expr::DstProp { tag, prop: p } => prop(SchemaKind::Tag, tag, p),
            Expr::LabelProp { label, prop: p } => {
                prop(SchemaKind::Edge, label, p).or_else(|| prop(SchemaKind::Tag, label, p))
            }
            _ => None,
        }
    }

    /// Checks every `$-.c` against the input's columns and every `$v.c` against the variable's, where known, with
    /// NebulaGraph's messages.
    fn check_refs<'e>(
        &self,
        exprs: impl IntoIterator<Item = &'e Expr>,
        input: &Columns,
        assigned: &[(String, Vec<String>)],
    ) -> QResult<()> {
        let var_columns = |var: &str| self.var_columns(var, assigned);
        for e in exprs {
            let mut err = None;
            e.visit(&mut |x| {
                if err.is_some() {
                    return;
                }
                match x {
                    Expr::InputProp(col) if input.as_ref().is_some_and(|cols| !cols.contains(col)) => {
                        err = Some(QError::semantic(format!("`$-.{col}', not exist prop `{col}'")));
                    }
                    Expr::VarProp { var, prop } => match var_columns(var) {
                        None => err = Some(QError::semantic(format!("`${var}.{prop}', not exist variable `{var}'"))),
                        Some(cols) if !cols.contains(prop) => {
                            err = Some(QError::semantic(format!("`${var}.{prop}', not exist prop `{prop}'")))
                        }
                        // A variable read has distinct column names, as a piped input (`checkDuplicateColName`).
                        Some(cols) => {
                            let dup = cols.iter().enumerate().find(|(i, c)| cols[..*i].contains(c));
                            if let Some((_, c)) = dup {
                                err = Some(QError::semantic(format!("Duplicate Column Name : `{c}'")));
                            }
                        }
                    },
                    _ => {}
                }
            });
            if let Some(e) = err {
                return Err(e);
            }
        }
        Ok(())
    }
}
