//! Named bounds on everything that can grow. Units last in names.

/// Longest statement text accepted, in bytes.
pub const STATEMENT_BYTES_MAX: usize = 4 * 1024 * 1024;
/// Tallest expression tree the parser accepts (NebulaGraph's `max_expression_depth`), counting both brackets and
/// chains of operators (`1+1+...+1` is as tall as it has terms). Every pass over an expression recurses once per
/// level, so this bounds their stack; the bracket nesting the parser itself recurses through is bounded by it too.
pub const EXPR_DEPTH_MAX: usize = 512;
/// Deepest nesting of lists, sets and maps in a value the evaluator builds (`[[1]]` is 2 deep). Cloning, dropping,
/// comparing, hashing and printing a value recurse once per level; literals are bounded by `EXPR_DEPTH_MAX`, but
/// `reduce()` can nest a value one level per element (`reduce(a = [], x IN range(1, 100000) | [a])`), so every list,
/// set or map the evaluator builds deeper than this is refused.
pub const VALUE_DEPTH_MAX: usize = 512;
/// Tallest tree of sentences joined by pipes, set operations and assignments (or nested in brackets) in one
/// statement. Planning and execution recurse once per level (a sentence becomes a few plan operators).
pub const SENTENCE_DEPTH_MAX: usize = 256;
/// Most reading clauses (MATCH, OPTIONAL MATCH, UNWIND, WITH; each further comma-separated pattern of a MATCH
/// counts as one) in one MATCH statement. Validation, planning and execution go through a plan a few operators per
/// clause deep, so this bounds their stack and their time before anything is planned.
pub const MATCH_CLAUSES_MAX: usize = 128;
/// Most hops (edge patterns) in all the patterns of one statement, pattern predicates included.
pub const PATTERN_HOPS_MAX: usize = 256;
/// Most operators in one statement's plan, checked as it is built (the clause, hop and sentence bounds keep real
/// plans far below it; this bounds what a pass over a plan may meet whatever combination produced it).
pub const PLAN_NODES_MAX: usize = 16_384;
/// Stack of every thread that parses, plans or runs a statement (the server's runtime threads). The depth bounds
/// above keep every recursive pass within half of it; tests check that at the bounds.
pub const QUERY_THREAD_STACK_BYTES: usize = 16 << 20;
/// Most statements in one request.
pub const STATEMENTS_PER_REQUEST_MAX: usize = 10_000;
/// Longest FIXED_STRING VID a space may declare.
pub const VID_BYTES_MAX: usize = 256;
/// Highest space id the catalog hands out: the keys of space id `u32::MAX` hold every Raft group's log and state
/// (`raft::keys`), so no graph key may start with it.
pub const SPACE_ID_MAX: u32 = u32::MAX - 1;
/// Longest user name, in characters (NebulaGraph's).
pub const USERNAME_CHARS_MAX: usize = 16;
/// Longest password, in characters (NebulaGraph's).
pub const PASSWORD_CHARS_MAX: usize = 24;
/// Most partitions a space may have.
pub const PARTITIONS_MAX: u32 = 1024;
/// Most properties in one tag or edge type.
pub const PROPS_PER_SCHEMA_MAX: usize = 1024;
/// Longest string property value, in bytes.
pub const STRING_PROP_BYTES_MAX: usize = 16 * 1024 * 1024;
/// Longest list a function such as `range()` may build.
pub const LIST_LEN_MAX: usize = 10_000_000;
/// Longest comment on a space, tag or edge type, in bytes.
pub const COMMENT_BYTES_MAX: usize = 256;
/// Longest regular expression source accepted by `=~`, in bytes, and the compiled size limit.
pub const REGEX_BYTES_MAX: usize = 4096;
pub const REGEX_COMPILED_BYTES_MAX: usize = 1 << 20;
/// Largest HTTP request body, in bytes.
pub const HTTP_BODY_BYTES_MAX: usize = 64 * 1024 * 1024;
/// Largest JSON answer (the HTTP API, the graph protocol's `executeJson`), in bytes: a larger result is answered
/// with an error naming this bound rather than held whole a second time as text.
pub const HTTP_RESPONSE_BYTES_MAX: usize = 128 << 20;
/// Bytes of a string column an index keeps (`CREATE INDEX ... (name(len))`), as NebulaGraph's limit.
pub const INDEX_STRING_LEN_MAX: u32 = 256;
/// Rows per INSERT statement the dataset loader generates.
pub const LOADER_ROWS_PER_INSERT_MAX: usize = 256;
/// How many bad rows `quiver import` reports in full (the rest are only counted).
pub const IMPORT_BAD_ROWS_SHOWN_MAX: usize = 20;
/// OR branches a LOOKUP's WHERE may expand to; beyond it one full index scan and a re-check of every row are used.
pub const LOOKUP_BRANCHES_MAX: usize = 64;
/// Point ranges one branch of a LOOKUP's WHERE may expand its `IN` lists to.
pub const LOOKUP_POINTS_MAX: usize = 1024;
/// Tags with more rows are not kept in the vertex property cache.
pub const VCACHE_ROWS_MAX: i64 = 16_000_000;
/// Path-count vectors (one `u64` per vertex of a space) longer than this are freed after a walk, not kept per thread
/// for the next one: 8 MiB each, at most two per thread.
pub const TALLY_POOLED_VERTICES_MAX: usize = 1 << 20;
/// Edge types with more edges are not kept in the edge property cache.
pub const ECACHE_EDGES_MAX: i64 = 16_000_000;
/// Graph-protocol values nest (lists of maps of lists ...); a decoder refuses deeper ones.
pub const WIRE_VALUE_DEPTH_MAX: usize = 64;
/// Raft messages between hosts larger than this are refused; a write whose log entry would not fit in one is
/// refused before it is proposed, and appends larger than this are split.
pub const RAFT_FRAME_BYTES_MAX: usize = 64 << 20;
/// Largest snapshot of one Raft group a host accepts (snapshots are held in memory whole for now: see
/// docs/design/cluster.md, "Snapshots").
pub const RAFT_SNAPSHOT_BYTES_MAX: usize = 4 << 30;
/// Raft requests one connection may have in flight on the receiving host.
pub const RAFT_REQUESTS_IN_FLIGHT_MAX: usize = 256;
/// Connections a host serves on threads of their own (a `ServiceClient`'s, which ask one request at a time); further
/// ones are served as the others are, on the runtime.
pub const SEQUENTIAL_CONNECTIONS_MAX: usize = 64;
/// Graph-protocol frames larger than this are refused, unless the server is configured otherwise (`--max-frame-mb`).
pub const FRAME_BYTES_MAX: usize = 64 << 20;
/// Vertices of one geography value (all rings together). Validity checks and predicates compare edges pairwise, so
/// this bounds their cost; NebulaGraph has no limit.
pub const GEO_VERTICES_MAX: usize = 4096;
/// Cells `S2_CoveringCellIds` returns at most, whatever its `max_cells` asks (a geo index takes at most 32).
pub const GEO_COVERING_CELLS_MAX: usize = 1024;
/// Cells of its `min_level` (a hard floor) a `S2_CoveringCellIds` region may span, estimated from its bounding cap;
/// a finer floor answers BAD_DATA instead of enumerating them (NebulaGraph has no limit).
pub const GEO_COVERING_MIN_LEVEL_CELLS_MAX: f64 = 65536.0;
/// The largest `offset + count` a TopN's bound is pushed below a MATCH's last node for (`TopNFilter` keeps that many
/// distinct key prefixes in a sorted list).
pub const TOPN_BOUND_KEEP_MAX: usize = 1024;
/// Verified passwords the server remembers (by salted hash) to skip hashing them again; past it the memory starts
/// over.
pub const AUTH_VERIFIED_MAX: usize = 10_000;
