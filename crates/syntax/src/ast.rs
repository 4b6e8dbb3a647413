//! Statement syntax trees. Names are unchecked here: the query layer validates them against the catalog.

use quiver_common::expr::Expr;
use quiver_common::PropType;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchemaKind {
    Tag,
    Edge,
}

impl SchemaKind {
    pub fn keyword(self) -> &'static str {
        match self {
            SchemaKind::Tag => "TAG",
            SchemaKind::Edge => "EDGE",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum VidTypeSpec {
    FixedString(i64),
    Int64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PropSpec {
    pub name: String,
    pub ty: PropType,
    pub nullable: bool,
    pub default: Option<Expr>,
    pub comment: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct SchemaOptions {
    pub ttl_duration: Option<i64>,
    pub ttl_col: Option<String>,
    pub comment: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum AlterOp {
    Add(Vec<PropSpec>),
    Change(Vec<PropSpec>),
    Drop(Vec<String>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct YieldColumn {
    pub expr: Expr,
    pub alias: Option<String>,
}

impl YieldColumn {
    /// The column name: the alias, or the expression's canonical text.
    pub fn name(&self) -> String {
        match &self.alias {
            Some(a) => a.clone(),
            None => self.expr.to_string(),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct YieldClause {
    pub distinct: bool,
    pub columns: Vec<YieldColumn>,
}

/// The role `SHOW HOSTS` lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostRole {
    Graph,
    Meta,
    Storage,
    Agent,
}

impl HostRole {
    /// As NebulaGraph prints it.
    pub fn name(self) -> &'static str {
        match self {
            HostRole::Graph => "GRAPH",
            HostRole::Meta => "META",
            HostRole::Storage => "STORAGE",
            HostRole::Agent => "AGENT",
        }
    }
}

/// The modules whose settings `SHOW | GET | UPDATE CONFIGS` name (NebulaGraph's `ConfigModule`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ConfigModule {
    Graph,
    Meta,
    Storage,
}

impl ConfigModule {
    /// As NebulaGraph prints it.
    pub fn name(self) -> &'static str {
        match self {
            ConfigModule::Graph => "GRAPH",
            ConfigModule::Meta => "META",
            ConfigModule::Storage => "STORAGE",
        }
    }
}

/// `YIELD columns FROM $left INNER JOIN $right ON $left.a == $right.b`: the pairs of rows of two variables whose
/// keys are equal, projected.
#[derive(Debug, Clone, PartialEq)]
pub struct YieldJoin {
    pub yield_clause: YieldClause,
    pub left: String,
    pub right: String,
    /// The ON condition's two sides, as written (`$left.a`, `$right.b`).
    pub on: (Expr, Expr),
}

/// `src -> dst [@rank]` of an edge.
#[derive(Debug, Clone, PartialEq)]
pub struct EdgeKey {
    pub src: Expr,
    pub dst: Expr,
    pub rank: Option<Expr>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct VertexRow {
    pub vid: Expr,
    pub values: Vec<Expr>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct EdgeRow {
    pub key: EdgeKey,
    pub values: Vec<Expr>,
}

/// What an UPDATE or UPSERT changes: one or more VIDs or edge keys of constants (`UPDATE VERTEX ON t "a", "b"`),
/// or one that reads a pipe or a variable (`$-.id`), which then stands alone.
#[derive(Debug, Clone, PartialEq)]
pub enum UpdateTarget {
    Vertex { tag: String, vids: Vec<Expr> },
    Edge { edge: String, keys: Vec<EdgeKey> },
}

impl UpdateTarget {
    /// How many vertices or edges it names.
    pub fn len(&self) -> usize {
        match self {
            UpdateTarget::Vertex { vids, .. } => vids.len(),
            UpdateTarget::Edge { keys, .. } => keys.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// One target per vertex or edge named, in order.
    pub fn each(&self) -> Vec<UpdateTarget> {
        match self {
            UpdateTarget::Vertex { tag, vids } => {
                vids.iter().map(|v| UpdateTarget::Vertex { tag: tag.clone(), vids: vec![v.clone()] }).collect()
            }
            UpdateTarget::Edge { edge, keys } => {
                keys.iter().map(|k| UpdateTarget::Edge { edge: edge.clone(), keys: vec![k.clone()] }).collect()
            }
        }
    }
}

/// Where a traversal starts: constant VIDs, or a column of the piped input (`$-.c`) or of a variable (`$v.c`).
#[derive(Debug, Clone, PartialEq)]
pub enum FromClause {
    Vids(Vec<Expr>),
    /// An `Expr::InputProp` or `Expr::VarProp`.
    Ref(Expr),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Out,
    Reversely,
    Bidirect,
}

#[derive(Debug, Clone, PartialEq)]
pub struct OverClause {
    /// `None` is `OVER *`.
    pub edges: Option<Vec<String>>,
    pub direction: Direction,
}

/// Which paths `FIND ... PATH` returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathSearch {
    Shortest,
    SingleShortest,
    All,
    NoLoop,
}

/// `FIND {SHORTEST | SINGLE SHORTEST | ALL | NOLOOP} PATH [WITH PROP] FROM .. TO .. OVER .. [WHERE ..] [UPTO n
/// STEPS] YIELD path AS p`.
#[derive(Debug, Clone, PartialEq)]
pub struct FindPathStatement {
    pub kind: PathSearch,
    pub with_prop: bool,
    pub from: FromClause,
    pub to: FromClause,
    pub over: OverClause,
    pub filter: Option<Expr>,
    /// `UPTO n STEPS`: 5 when not written.
    pub upto: u32,
    pub yield_clause: Option<YieldClause>,
}

/// One edge type of GET SUBGRAPH's `IN`/`OUT`/`BOTH` lists; `renamed` when written `e AS x` (refused).
#[derive(Debug, Clone, PartialEq)]
pub struct SubgraphEdge {
    pub name: String,
    pub renamed: bool,
}

/// `GET SUBGRAPH [WITH PROP] [n STEPS] FROM .. [IN ..] [OUT ..] [BOTH ..] [WHERE ..] YIELD [VERTICES AS a] [, EDGES
/// AS b]`.
#[derive(Debug, Clone, PartialEq)]
pub struct SubgraphStatement {
    pub with_prop: bool,
    /// `m TO n STEPS` as written; `n STEPS` is `n TO n`; 1 when not written.
    pub min_steps: u32,
    pub max_steps: u32,
    pub from: FromClause,
    pub in_edges: Vec<SubgraphEdge>,
    pub out_edges: Vec<SubgraphEdge>,
    pub both_edges: Vec<SubgraphEdge>,
    pub filter: Option<Expr>,
    pub yield_clause: Option<YieldClause>,
}

/// `SAMPLE [n, ...]` or `LIMIT [n, ...]` after a GO's YIELD: a bound per step.
#[derive(Debug, Clone, PartialEq)]
pub struct StepBounds {
    pub sample: bool,
    pub counts: Vec<Expr>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct GoStatement {
    /// `M TO N STEPS`; `N STEPS` is `N TO N`. Both as written (0 allowed).
    pub min_steps: u32,
    pub max_steps: u32,
    pub from: FromClause,
    pub over: OverClause,
    pub filter: Option<Expr>,
    pub yield_clause: Option<YieldClause>,
    pub bounds: Option<StepBounds>,
}

impl GoStatement {
    /// `N STEPS` (`0 TO N` counts as `1 TO N`): only the last step's edges are emitted.
    pub fn is_n_steps(&self) -> bool {
        self.min_steps.max(1) == self.max_steps
    }
}

/// One column of `CREATE TAG|EDGE INDEX ... ON s(col[(len)], ...)`.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexFieldSpec {
    pub name: String,
    pub len: Option<i64>,
}

/// `LOOKUP ON s [WHERE expr] YIELD ...`.
#[derive(Debug, Clone, PartialEq)]
pub struct LookupStatement {
    pub schema: String,
    pub filter: Option<Expr>,
    /// Required; its absence is reported by the validator, as NebulaGraph does.
    pub yield_clause: Option<YieldClause>,
}

/// What `SUBMIT JOB` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobSpec {
    Compact,
    Flush,
    Stats,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetOp {
    Union,
    UnionAll,
    Intersect,
    Minus,
}

pub use quiver_common::pattern::{
    EdgePattern, NodePattern, PathKind, PathPattern, PatternDirection, PropMap, StepRange,
};

/// The items of RETURN or WITH and what follows them.
#[derive(Debug, Clone, PartialEq)]
pub struct Projection {
    /// `*`: every named alias in scope, before `items`.
    pub star: bool,
    /// The items listed (`None` for a lone `*`).
    pub items: Option<YieldClause>,
    /// `DISTINCT` (also recorded in `items` when they are listed).
    pub distinct: bool,
    pub order_by: Vec<(Expr, bool)>,
    pub skip: Option<Expr>,
    pub limit: Option<Expr>,
    /// WITH's `WHERE`.
    pub filter: Option<Expr>,
}

/// One reading clause of a MATCH statement, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum MatchClause {
    Match { optional: bool, paths: Vec<PathPattern>, filter: Option<Expr> },
    Unwind { expr: Expr, alias: String },
    With(Projection),
}

impl MatchClause {
    /// The expressions written in the clause (its WHERE, its list, its items), not those in its patterns.
    pub fn exprs(&self) -> Vec<&Expr> {
        match self {
            MatchClause::Match { filter, .. } => filter.iter().collect(),
            MatchClause::Unwind { expr, .. } => vec![expr],
            MatchClause::With(p) => p.exprs(),
        }
    }
}

impl Projection {
    /// The expressions of the items, the WHERE and the ORDER BY keys.
    pub fn exprs(&self) -> Vec<&Expr> {
        let items = self.items.iter().flat_map(|y| y.columns.iter().map(|c| &c.expr));
        items.chain(self.filter.iter()).chain(self.order_by.iter().map(|(e, _)| e)).collect()
    }
}

/// An openCypher query in NebulaGraph's dialect: reading clauses, then RETURN.
#[derive(Debug, Clone, PartialEq)]
pub struct MatchStatement {
    pub clauses: Vec<MatchClause>,
    pub ret: Projection,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Statement {
    CreateSpace {
        if_not_exists: bool,
        name: String,
        partition_num: Option<i64>,
        replica_factor: Option<i64>,
        vid_type: Option<VidTypeSpec>,
        /// `charset = ...` and `collate = ...` as written, lower-cased.
        charset: Option<String>,
        collate: Option<String>,
        comment: Option<String>,
    },
    DropSpace {
        if_exists: bool,
        name: String,
    },
    ClearSpace {
        if_exists: bool,
        name: String,
    },
    UseSpace(String),
    ShowSpaces,
    /// `SHOW [LOCAL] SESSIONS` (`None`) or `SHOW SESSION id`.
    ShowSessions(Option<i64>),
    DescribeSpace(String),
    /// `SHOW HOSTS [GRAPH | META | STORAGE | AGENT]` (`None`: the storage hosts with their partitions).
    ShowHosts(Option<HostRole>),
    /// `SHOW PARTS [ids]`.
    ShowParts(Option<Vec<i64>>),
    /// `ADD HOSTS "ip":port, ... [INTO NEW ZONE "name"]`: storage hosts join the cluster.
    AddHosts {
        hosts: Vec<String>,
        zone: Option<String>,
    },
    /// `DROP HOSTS "ip":port, ...`.
    DropHosts(Vec<String>),
    ShowCharset,
    ShowCollation,
    /// `SHOW QUERIES` (every session's running queries) or `SHOW LOCAL QUERIES` (the current session's).
    ShowQueries {
        local: bool,
    },
    /// `KILL QUERY (session = s, plan = p)`, or `(plan = p)` for the current session's.
    KillQuery {
        session: Option<Expr>,
        plan: Expr,
    },
    /// `KILL SESSION expr` / `KILL SESSIONS expr`.
    KillSession(Expr),
    /// `SHOW CONFIGS [GRAPH | META | STORAGE]` (`None`: every module).
    ShowConfigs(Option<ConfigModule>),
    /// `GET CONFIGS [module:]name` (`None`: the graph and the storage module both).
    GetConfig {
        module: Option<ConfigModule>,
        name: String,
    },
    /// `UPDATE CONFIGS [module:]name = expr`, or `= {key = expr, ...}` (a [`Expr::Map`]).
    SetConfig {
        module: Option<ConfigModule>,
        name: String,
        value: Expr,
    },
    ShowMetaLeader,
    ShowZones,
    CreateSnapshot,
    DropSnapshot(String),
    ShowSnapshots,
    DescribeZone(String),
    /// `YIELD ... FROM $a INNER JOIN $b ON $a.x == $b.y`.
    YieldJoin(Box<YieldJoin>),
    /// nGQL's `UNWIND expr AS alias`, a sentence of its own (in a pipe): one row per item, of the one column
    /// `alias`. (MATCH's UNWIND clause is a [`MatchClause::Unwind`].)
    Unwind {
        expr: Expr,
        alias: String,
    },
    /// `CREATE SPACE [IF NOT EXISTS] name AS from`: a new, empty space with `from`'s options, tags, edge types and
    /// indexes.
    CreateSpaceAs {
        if_not_exists: bool,
        name: String,
        from: String,
    },
    ShowCreateSpace(String),
    CreateSchema {
        kind: SchemaKind,
        if_not_exists: bool,
        name: String,
        props: Vec<PropSpec>,
        options: SchemaOptions,
    },
    AlterSchema {
        kind: SchemaKind,
        name: String,
        ops: Vec<AlterOp>,
        options: SchemaOptions,
    },
    DropSchema {
        kind: SchemaKind,
        if_exists: bool,
        name: String,
    },
    ShowSchemas(SchemaKind),
    DescribeSchema {
        kind: SchemaKind,
        name: String,
    },
    ShowCreateSchema {
        kind: SchemaKind,
        name: String,
    },
    InsertVertices {
        if_not_exists: bool,
        /// Each tag with the properties written, in the order of the values; `None` (the tag named without a
        /// list) writes all of them, in the schema's order.
        tags: Vec<(String, Option<Vec<String>>)>,
        rows: Vec<VertexRow>,
    },
    InsertEdges {
        if_not_exists: bool,
        edge: String,
        /// As for a vertex's tag: `None` writes every property in the schema's order.
        props: Option<Vec<String>>,
        rows: Vec<EdgeRow>,
    },
    Update {
        upsert: bool,
        target: UpdateTarget,
        set: Vec<(String, Expr)>,
        when: Option<Expr>,
        yield_clause: Option<YieldClause>,
    },
    DeleteVertices {
        vids: Vec<Expr>,
        with_edge: bool,
    },
    /// `tags: None` is `DELETE TAG *`.
    DeleteTags {
        tags: Option<Vec<String>>,
        vids: Vec<Expr>,
    },
    DeleteEdges {
        edge: String,
        keys: Vec<EdgeKey>,
    },
    /// `tags: None` is `FETCH PROP ON *`.
    FetchVertices {
        tags: Option<Vec<String>>,
        vids: Vec<Expr>,
        yield_clause: YieldClause,
    },
    FetchEdges {
        edge: String,
        keys: Vec<EdgeKey>,
        yield_clause: YieldClause,
    },
    Yield {
        yield_clause: YieldClause,
        filter: Option<Expr>,
    },
    Go(Box<GoStatement>),
    FindPath(Box<FindPathStatement>),
    GetSubgraph(Box<SubgraphStatement>),
    /// `left | right`: `right` reads `left`'s rows as `$-`.
    Pipe(Box<Statement>, Box<Statement>),
    /// `$var = statement`: the rows are kept as `$var` for the rest of the request.
    Assign {
        var: String,
        statement: Box<Statement>,
    },
    SetOp {
        op: SetOp,
        left: Box<Statement>,
        right: Box<Statement>,
    },
    /// `ORDER BY expr [ASC|DESC], ...` over the piped input.
    OrderBy(Vec<(Expr, bool)>),
    /// `LIMIT [offset,] count` or `LIMIT count OFFSET offset` over the piped input.
    Limit {
        offset: Expr,
        count: Expr,
    },
    /// `GROUP BY keys YIELD columns` over the piped input.
    GroupBy {
        keys: Vec<Expr>,
        yield_clause: YieldClause,
    },
    /// `EXPLAIN|PROFILE [FORMAT="row"|"dot"|"dot:struct"] sentence` or `... { sentence; ... }`: only first in a
    /// request.
    Explain {
        profile: bool,
        format: PlanFormat,
        body: Vec<Statement>,
    },
    CreateIndex {
        kind: SchemaKind,
        if_not_exists: bool,
        name: String,
        schema: String,
        fields: Vec<IndexFieldSpec>,
        /// `WITH (s2_max_level = n, s2_max_cells = n)`.
        s2_max_level: Option<u8>,
        s2_max_cells: Option<u8>,
        comment: Option<String>,
    },
    DropIndex {
        kind: SchemaKind,
        if_exists: bool,
        name: String,
    },
    /// `SHOW TAG|EDGE INDEXES [BY s]`.
    ShowIndexes {
        kind: SchemaKind,
        by: Option<String>,
    },
    DescribeIndex {
        kind: SchemaKind,
        name: String,
    },
    ShowCreateIndex {
        kind: SchemaKind,
        name: String,
    },
    ShowIndexStatus(SchemaKind),
    /// `REBUILD TAG|EDGE INDEX [i, ...]`; an empty list is every index of that kind.
    RebuildIndex {
        kind: SchemaKind,
        names: Vec<String>,
    },
    Lookup(Box<LookupStatement>),
    SubmitJob(JobSpec),
    ShowJobs,
    ShowJob(i64),
    StopJob(i64),
    /// `RECOVER JOB [id, ...]`: the failed and stopped jobs (only those listed, when ids are given).
    RecoverJob(Vec<i64>),
    ShowStats,
    /// A statement the parser recognizes but Quiver does not run yet (named for the error message).
    /// `CREATE USER [IF NOT EXISTS] name [WITH PASSWORD 'p']` (an empty password without WITH).
    CreateUser {
        name: String,
        password: String,
        if_not_exists: bool,
    },
    /// `ALTER USER name WITH PASSWORD 'p'`.
    AlterUser {
        name: String,
        password: String,
    },
    DropUser {
        name: String,
        if_exists: bool,
    },
    /// `CHANGE PASSWORD name FROM 'old' TO 'new'`.
    ChangePassword {
        name: String,
        old: String,
        new: String,
    },
    /// `GRANT [ROLE] role ON space TO user`; `role` is GOD, ADMIN, DBA, USER or GUEST.
    Grant {
        role: String,
        space: String,
        user: String,
    },
    /// `REVOKE [ROLE] role ON space FROM user`.
    Revoke {
        role: String,
        space: String,
        user: String,
    },
    ShowUsers,
    /// `SHOW ROLES IN space`.
    ShowRoles(String),
    /// `DESC[RIBE] USER name`.
    DescribeUser(String),
    Unsupported(String),
    /// A statement NebulaGraph parses and its validator refuses with this semantic error.
    Refused(String),
    /// `MATCH ... RETURN ...` and the other openCypher reading clauses.
    Match(Box<MatchStatement>),
}

/// How EXPLAIN and PROFILE print a plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanFormat {
    Row,
    Dot,
    DotStruct,
    /// NebulaGraph's `tck`: the operators as rows, as its TCK's plan tables read them.
    Tck,
}
