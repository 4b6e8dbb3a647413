//! nGQL text to syntax trees: a lexer, the statement AST and a recursive-descent parser.
//!
//! **Architecture invariant:** this crate knows nothing of the catalog, storage or the network. It turns text into
//! [`ast::Statement`]s or a `SyntaxError` and nothing else; names are checked later, by the query layer.

pub mod ast;
pub mod lexer;
pub mod parser;

pub use parser::{parse, parse_with_params};
