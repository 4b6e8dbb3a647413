//! Path patterns of openCypher's MATCH (`(a:tag {p: 1})-[e:t*1..2]->(b)`), shared by the parser's statement tree
//! and by expressions, where a pattern is a predicate (`WHERE (v)-[:like]->()`).

use crate::expr::Expr;
use std::fmt;

/// The direction of an edge in a pattern: `-[]->`, `<-[]-`, or `-[]-` / `<-[]->` (either).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum PatternDirection {
    Out,
    In,
    Both,
}

/// `*`, `*n`, `*m..n`, `*..n`, `*m..` on a pattern edge: how many steps it may take (`max: None` is unbounded).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StepRange {
    pub min: u32,
    pub max: Option<u32>,
}

/// `{name: expr, ...}` on a node, a label or an edge of a pattern, in the order written.
pub type PropMap = Vec<(String, Expr)>;

/// `(alias:tag1{...}:tag2 {props})` in a pattern.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct NodePattern {
    pub alias: Option<String>,
    /// Tags, each with the property map written right after it.
    pub labels: Vec<(String, Option<PropMap>)>,
    pub props: Option<PropMap>,
}

/// `-[alias:t1|t2*range {props}]->` in a pattern.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct EdgePattern {
    pub alias: Option<String>,
    pub types: Vec<String>,
    pub direction: PatternDirection,
    /// `None`: exactly one step.
    pub range: Option<StepRange>,
    pub props: Option<PropMap>,
}

/// Which paths a path pattern stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum PathKind {
    All,
    /// `shortestPath(...)`.
    Shortest,
    /// `allShortestPaths(...)`.
    AllShortest,
}

/// `[alias =] (node) -[edge]- (node) ...`: `nodes` has one more item than `edges`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PathPattern {
    pub alias: Option<String>,
    pub kind: PathKind,
    pub nodes: Vec<NodePattern>,
    pub edges: Vec<EdgePattern>,
}

fn write_props(f: &mut fmt::Formatter<'_>, props: &PropMap) -> fmt::Result {
    crate::value::write_entries(f, props.iter().map(|(k, v)| (k, v)))
}

impl fmt::Display for NodePattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("(")?;
        if let Some(a) = &self.alias {
            f.write_str(a)?;
        }
        for (label, props) in &self.labels {
            write!(f, ":{label}")?;
            if let Some(p) = props {
                write_props(f, p)?;
            }
        }
        if let Some(p) = &self.props {
            write_props(f, p)?;
        }
        f.write_str(")")
    }
}

impl fmt::Display for EdgePattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.direction == PatternDirection::In { "<-[" } else { "-[" })?;
        if let Some(a) = &self.alias {
            f.write_str(a)?;
        }
        for (i, t) in self.types.iter().enumerate() {
            f.write_str(if i == 0 { ":" } else { "|" })?;
            f.write_str(t)?;
        }
        if let Some(r) = self.range {
            write!(f, "*{}..", r.min)?;
            if let Some(m) = r.max {
                write!(f, "{m}")?;
            }
        }
        if let Some(p) = &self.props {
            write_props(f, p)?;
        }
        f.write_str(if self.direction == PatternDirection::Out { "]->" } else { "]-" })
    }
}

impl fmt::Display for PathPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(a) = &self.alias {
            write!(f, "{a} = ")?;
        }
        let (open, close) = match self.kind {
            PathKind::All => ("", ""),
            PathKind::Shortest => ("shortestPath(", ")"),
            PathKind::AllShortest => ("allShortestPaths(", ")"),
        };
        f.write_str(open)?;
        for (i, n) in self.nodes.iter().enumerate() {
            write!(f, "{n}")?;
            if let Some(e) = self.edges.get(i) {
                write!(f, "{e}")?;
            }
        }
        f.write_str(close)
    }
}
