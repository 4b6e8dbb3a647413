//! Plan descriptions: what EXPLAIN shows and PROFILE fills in, in NebulaGraph's `PlanDescription` structure
//! (nodes root first, each with an id, a name, its dependencies, key-value operator info and profiling stats),
//! and its renderings as rows and as a Graphviz digraph.

use super::{CountOutput, Op, PlanNode};
use crate::validator::Start;
use crate::DataSet;
use quiver_api::PropSelection;
use quiver_common::Value;
use quiver_syntax::ast::{Direction, FromClause, GoStatement, PatternDirection, PlanFormat};
use std::collections::HashMap;

#[derive(Debug, Clone, PartialEq, Default)]
pub struct PlanDesc {
    /// Root first.
    pub nodes: Vec<PlanNodeDesc>,
    pub format: String,
    pub optimize_time_us: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PlanNodeDesc {
    pub id: i64,
    pub name: String,
    pub output_var: String,
    pub description: Vec<(String, String)>,
    pub profile: Option<ProfileStats>,
    pub dependencies: Vec<i64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ProfileStats {
    pub rows: u64,
    /// Time in the operator itself.
    pub exec_duration_us: u64,
    /// Time including its inputs.
    pub total_duration_us: u64,
}

/// Profiling stats by node address, filled by the executor.
pub(crate) type Profiles = HashMap<usize, ProfileStats>;

pub(crate) fn node_key(n: &PlanNode) -> usize {
    n as *const PlanNode as usize
}

impl PlanDesc {
    pub(crate) fn of(
        plans: &[&PlanNode],
        format: PlanFormat,
        profiles: Option<&Profiles>,
        optimize_time_us: u64,
    ) -> PlanDesc {
        let mut nodes = Vec::new();
        let mut next_id = 0i64;
        for p in plans {
            number(p, &mut next_id, profiles, &mut nodes);
        }
        nodes.reverse();
        let format = match format {
            PlanFormat::Row => "row",
            PlanFormat::Dot => "dot",
            PlanFormat::DotStruct => "dot:struct",
            PlanFormat::Tck => "tck",
        };
        PlanDesc { nodes, format: format.into(), optimize_time_us }
    }

    /// The rows EXPLAIN returns: one per operator (`row`, `tck`), or the digraph in one cell (`dot`).
    pub fn to_data_set(&self) -> DataSet {
        if self.format != "row" && self.format != "tck" {
            return DataSet::new(vec!["plan".into()], vec![vec![Value::str(self.to_dot())]]);
        }
        let columns = ["id", "name", "dependencies", "profiling data", "operator info"];
        let rows = self
            .nodes
            .iter()
            .map(|n| {
                let deps = n.dependencies.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(",");
                let profile = n
                    .profile
                    .map(|p| {
                        format!(
                            "rows: {}, execTime: {}us, totalTime: {}us",
                            p.rows, p.exec_duration_us, p.total_duration_us
                        )
                    })
                    .unwrap_or_default();
                let info = n.description.iter().map(|(k, v)| format!("{k}: {v}")).collect::<Vec<_>>().join("\n");
                vec![
                    Value::Int(n.id),
                    Value::str(n.name.clone()),
                    Value::str(deps),
                    Value::str(profile),
                    Value::str(info),
                ]
            })
            .collect();
        DataSet::new(columns.iter().map(|c| c.to_string()).collect(), rows)
    }

    pub fn to_dot(&self) -> String {
        let mut s = String::from("digraph exec_plan {\n\trankdir=BT;\n");
        for n in &self.nodes {
            let mut label = format!("{}_{}", n.name, n.id);
            for (k, v) in &n.description {
                label.push_str(&format!("\\n{k}: {}", v.replace('"', "\\\"")));
            }
            if let Some(p) = n.profile {
                label.push_str(&format!("\\nrows: {}, execTime: {}us", p.rows, p.exec_duration_us));
            }
            s.push_str(&format!("\t\"{}_{}\"[label=\"{label}\", shape=box];\n", n.name, n.id));
        }
        for n in &self.nodes {
            for d in &n.dependencies {
                let dep = self.nodes.iter().find(|x| x.id == *d).expect("dependency listed");
                s.push_str(&format!("\t\"{}_{}\"->\"{}_{}\";\n", dep.name, dep.id, n.name, n.id));
            }
        }
        s.push('}');
        s
    }

    /// An indented tree, root first, `Name {key: value; ...}` per line: the plan shape tests compare.
    pub fn to_tree(&self) -> Vec<String> {
        let mut out = Vec::new();
        let roots: Vec<i64> = self
            .nodes
            .iter()
            .filter(|n| !self.nodes.iter().any(|m| m.dependencies.contains(&n.id)))
            .map(|n| n.id)
            .collect();
        for r in roots.into_iter().rev() {
            self.tree_lines(r, 0, &mut out);
        }
        out
    }

    fn tree_lines(&self, id: i64, depth: usize, out: &mut Vec<String>) {
        let n = self.nodes.iter().find(|n| n.id == id).expect("node listed");
        let info = n.description.iter().map(|(k, v)| format!("{k}: {v}")).collect::<Vec<_>>().join("; ");
        let info = if info.is_empty() { String::new() } else { format!(" {{{info}}}") };
        out.push(format!("{}{}{info}", "  ".repeat(depth), n.name));
        for d in &n.dependencies {
            self.tree_lines(*d, depth + 1, out);
        }
    }
}

/// Numbers `n`'s subtree children first, appending descriptions (leaves first); returns `n`'s id.
fn number(n: &PlanNode, next: &mut i64, profiles: Option<&Profiles>, out: &mut Vec<PlanNodeDesc>) -> i64 {
    let mut deps = Vec::new();
    if let Some(i) = &n.input {
        deps.push(number(i, next, profiles, out));
    }
    for b in &n.branches {
        deps.push(number(b, next, profiles, out));
    }
    let id = *next;
    *next += 1;
    out.push(PlanNodeDesc {
        id,
        name: n.name().to_string(),
        output_var: format!("__{}_{id}", n.name()),
        description: describe(&n.op),
        profile: profiles.map(|p| p.get(&node_key(n)).copied().unwrap_or_default()),
        dependencies: deps,
    });
    id
}

fn join<T: std::fmt::Display>(items: impl IntoIterator<Item = T>) -> String {
    items.into_iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", ")
}

fn describe_go(g: &GoStatement, d: &mut Vec<(String, String)>) {
    let from = match &g.from {
        FromClause::Vids(v) => join(v),
        FromClause::Ref(e) => e.to_string(),
    };
    d.push(("from".into(), from));
    let over = g.over.edges.as_ref().map(join).unwrap_or_else(|| "*".into());
    let dir = match g.over.direction {
        Direction::Out => "",
        Direction::Reversely => " REVERSELY",
        Direction::Bidirect => " BIDIRECT",
    };
    d.push(("over".into(), format!("{over}{dir}")));
    if g.min_steps != g.max_steps {
        d.push(("steps".into(), format!("{} TO {}", g.min_steps, g.max_steps)));
    } else if g.max_steps != 1 {
        d.push(("steps".into(), g.max_steps.to_string()));
    }
}

fn describe_node(n: &crate::validator::BoundNode, d: &mut Vec<(String, String)>) {
    if !n.tags.is_empty() {
        d.push(("tags".into(), join(n.tags.iter().map(|t| &t.name))));
    }
    if !n.props.is_empty() {
        d.push(("vertex filter".into(), join(n.props.iter().map(|(t, p, v)| format!("{t}.{p} == {v}")))));
    }
}

/// An edge type walked with its direction: `like` out, `-like` in.
fn signed_name(et: i32, name: &str) -> String {
    if et < 0 {
        format!("-{name}")
    } else {
        name.to_string()
    }
}

fn describe(op: &Op) -> Vec<(String, String)> {
    let mut d: Vec<(String, String)> = Vec::new();
    match op {
        Op::Statement(_) | Op::SetOp(_) | Op::GetVertices(_) | Op::GetEdges(_) => {}
        Op::Go(g) => {
            describe_go(&g.go.stmt, &mut d);
            if let Some(f) = &g.storage_filter {
                d.push(("storage filter".into(), f.to_string()));
            }
            if let Some(f) = &g.go.stmt.filter {
                d.push(("filter".into(), f.to_string()));
            }
            match &g.props {
                None => {}
                Some(PropSelection::None) => d.push(("edge props".into(), "none".into())),
                Some(PropSelection::All) => d.push(("edge props".into(), "all".into())),
                Some(PropSelection::Only(p)) => d.push(("edge props".into(), join(p))),
            }
            if let Some(l) = g.limit {
                d.push(("storage limit".into(), l.to_string()));
            }
            if let (Some(t), Some(y)) = (&g.top, &g.go.stmt.yield_clause) {
                let keys = t
                    .keys
                    .iter()
                    .map(|&(i, asc)| format!("{} {}", y.columns[i].name(), if asc { "ASC" } else { "DESC" }));
                d.push(("keep first".into(), format!("{} by {}", t.keep, join(keys))));
            }
            d.push(("columns".into(), join(g.go.columns())));
        }
        Op::Project { yield_clause, filter } => {
            if let Some(f) = filter {
                d.push(("filter".into(), f.to_string()));
            }
            d.push(("columns".into(), join(yield_clause.columns.iter().map(|c| c.name()))));
        }
        Op::Sort(f) | Op::TopN { factors: f, .. } => {
            d.push((
                "factors".into(),
                join(f.iter().map(|(e, asc)| format!("{e} {}", if *asc { "ASC" } else { "DESC" }))),
            ));
            if let Op::TopN { offset, count, .. } = op {
                d.push(("offset".into(), offset.to_string()));
                d.push(("count".into(), count.to_string()));
            }
        }
        Op::TopNFilter { keys, keep } => {
            d.push((
                "keys".into(),
                join(keys.iter().map(|(c, asc)| format!("$-.{c} {}", if *asc { "ASC" } else { "DESC" }))),
            ));
            d.push(("keep".into(), keep.to_string()));
        }
        Op::Limit { offset, count } => {
            d.push(("offset".into(), offset.to_string()));
            d.push(("count".into(), count.to_string()));
        }
        Op::Aggregate { keys, yield_clause } => {
            d.push(("group keys".into(), join(keys)));
            d.push(("columns".into(), join(yield_clause.columns.iter().map(|c| c.name()))));
        }
        Op::Assign(v) => d.push(("var".into(), v.clone())),
        Op::VarJoin { left, right, left_col, right_col } => {
            d.push(("hashKeys".into(), format!("${left}.{left_col}")));
            d.push(("probeKeys".into(), format!("${right}.{right_col}")));
        }
        Op::Argument => {}
        Op::StartVertices(s) => {
            d.push(("node".into(), s.node.column.clone()));
            match &s.start {
                Start::Ids { vids, .. } => d.push(("vids".into(), vids.to_string())),
                Start::Index(p) => d.push(("index".into(), join(p.scans.iter().map(crate::validator::describe_scan)))),
                Start::ScanTag(t) => d.push(("tag".into(), t.name.clone())),
                Start::ScanAll | Start::Bound => {}
            }
            if let Some(props) = &s.props {
                d.push(("props".into(), if props.is_empty() { "tags only".into() } else { join(props) }));
            }
            describe_node(&s.node, &mut d);
        }
        Op::Traverse(t) => {
            d.push(("from".into(), t.from.clone()));
            d.push(("edge".into(), t.edge.column.clone()));
            d.push(("types".into(), join(t.edge.types.iter().map(|s| &s.name))));
            let dir = match t.walked_direction() {
                PatternDirection::Both => "both",
                PatternDirection::Out => "out",
                PatternDirection::In => "in",
            };
            d.push(("direction".into(), dir.into()));
            if let Some((min, max)) = t.edge.range {
                d.push(("steps".into(), format!("{min}..{}", max.map_or(String::new(), |m| m.to_string()))));
            }
            if !t.edge.props.is_empty() {
                d.push(("edge filter".into(), join(t.edge.props.iter().map(|(k, v)| format!("{k} == {v}")))));
            }
            if !t.edge_props {
                d.push(("edge props".into(), "none".into()));
            }
            d.push(("to".into(), t.to.clone()));
        }
        Op::AppendVertices(a) => {
            d.push(("node".into(), a.node.column.clone()));
            if a.node.bound {
                d.push(("bound".into(), "yes".into()));
            }
            if !a.columns.is_empty() {
                let read = a.columns.iter().map(|c| format!("{}.{} as {}", c.tag.name, c.prop, c.column));
                d.push(("columns".into(), join(read)));
            } else if a.id_only && a.exist {
                d.push(("props".into(), "none, existence known".into()));
            } else if a.id_only {
                d.push(("props".into(), "none".into()));
            } else if let Some(props) = &a.props {
                d.push(("props".into(), if props.is_empty() { "tags only".into() } else { join(props) }));
            }
            if a.tags_narrowed {
                d.push(("of tags".into(), join(a.tags.iter().map(|t| t.name.clone()))));
            }
            describe_node(&a.node, &mut d);
            if let Some(keep) = &a.keep {
                d.push(("keep".into(), join(keep)));
            }
        }
        Op::Filter(f) => d.push(("condition".into(), f.to_string())),
        Op::BuildPath(p) => d.push(("path".into(), p.alias.clone())),
        Op::ShortestPath(s) => {
            d.push(("from".into(), s.from.clone()));
            d.push(("to".into(), s.to.clone()));
            d.push(("edge".into(), s.edge.column.clone()));
            d.push(("edge types".into(), join(s.signed_types().iter().map(|(t, e)| signed_name(*t, &e.name)))));
            if let Some((min, max)) = s.edge.range {
                d.push(("steps".into(), format!("{min}..{}", max.map_or(String::new(), |m| m.to_string()))));
            }
            d.push(("paths".into(), if s.single { "one per pair" } else { "all shortest" }.into()));
        }
        Op::Repeat { column } => d.push(("count".into(), column.clone())),
        Op::Unwind { expr, alias, .. } => d.push(("unwind".into(), format!("{expr} AS {alias}"))),
        Op::OptionalJoin { columns } => d.push(("columns".into(), join(columns))),
        Op::PatternApply { anti, .. } => d.push(("anti".into(), anti.to_string())),
        Op::RollUpApply { keys, column } => {
            d.push(("keys".into(), join(keys)));
            d.push(("column".into(), column.clone()));
        }
        Op::Lookup(p) => {
            d.push(("schema".into(), p.schema.name.clone()));
            d.push((
                "index".into(),
                if p.scans.is_empty() {
                    "none (no row can match)".into()
                } else {
                    join(p.scans.iter().map(crate::validator::describe_scan))
                },
            ));
            if p.fetch {
                d.push(("read rows".into(), "yes".into()));
                if let Some(f) = &p.filter {
                    d.push(("filter".into(), f.to_string()));
                }
            }
            d.push(("columns".into(), join(p.yield_clause.columns.iter().map(|c| c.name()))));
        }
        Op::FindPath(f) => {
            let ends = |e: &crate::validator::Ends| match e {
                crate::validator::Ends::Vids(v) => join(v),
                crate::validator::Ends::Column(c) => c.to_string(),
            };
            d.push(("from".into(), ends(&f.from)));
            d.push(("to".into(), ends(&f.to)));
            d.push(("kind".into(), format!("{:?}", f.kind)));
            d.push(("edge types".into(), join(f.edges.iter().map(|(t, s)| signed_name(*t, &s.name)))));
            if let Some(w) = &f.filter {
                d.push(("filter".into(), w.to_string()));
            }
            d.push(("steps".into(), f.max_steps.to_string()));
            if let Some(l) = f.limit {
                d.push(("limit".into(), l.to_string()));
            }
            d.push(("with prop".into(), f.with_prop.to_string()));
            d.push(("columns".into(), f.column.clone()));
        }
        Op::Subgraph(g) => {
            d.push((
                "from".into(),
                match &g.from {
                    crate::validator::Ends::Vids(v) => join(v),
                    crate::validator::Ends::Column(c) => c.to_string(),
                },
            ));
            d.push(("steps".into(), g.steps.to_string()));
            d.push(("edge types".into(), join(g.edges.iter().map(|(t, s)| signed_name(*t, &s.name)))));
            if let Some(w) = &g.edge_filter {
                d.push(("edge filter".into(), w.to_string()));
            }
            if let Some(w) = &g.tag_filter {
                d.push(("vertex filter".into(), w.to_string()));
            }
            d.push(("with prop".into(), g.with_prop.to_string()));
            d.push(("columns".into(), join(g.columns.iter().map(|(c, _)| c))));
        }
        Op::PathCount(p) => {
            d.push(("start".into(), p.start.clone()));
            d.push(("hops".into(), join(&p.described)));
            match &p.output {
                CountOutput::Count { column } => d.push(("count".into(), column.clone())),
                CountOutput::GroupCount { columns } => d.push(("columns".into(), join(columns.iter().map(|(c, _)| c)))),
                CountOutput::EdgeGroupCount { edge: Some(edge), props, node, paths, .. } => {
                    d.push(("columns".into(), join([edge, node, paths])));
                    d.push(("edge props".into(), if *props { "all" } else { "none" }.into()));
                }
                CountOutput::EdgeGroupCount { edge: None, columns, node, paths, .. } => {
                    let read = columns.iter().map(|(p, c)| format!("{p} as {c}"));
                    d.push(("columns".into(), join(read.chain([node.clone(), paths.clone()]))));
                }
            }
        }
        Op::Expand(e) => {
            for (i, g) in e.gos.iter().enumerate() {
                let mut hop = Vec::new();
                describe_go(&g.stmt, &mut hop);
                d.push((
                    format!("go {}", i + 1),
                    hop.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" "),
                ));
            }
            match &e.output {
                CountOutput::Count { column } => d.push(("count".into(), column.clone())),
                CountOutput::GroupCount { columns } => d.push(("columns".into(), join(columns.iter().map(|(c, _)| c)))),
                CountOutput::EdgeGroupCount { .. } => unreachable!("GO chains count far ends"),
            }
        }
    }
    d
}
