//! Constants evaluated with NebulaGraph's checks and messages, shared by the validator and the statements that run
//! whole: VIDs and edge keys, and how a YIELD column and an input reference read in messages.

use crate::context::ParamContext;
use crate::Params;
use quiver_api::*;
use quiver_common::eval::eval;
use quiver_common::expr::Expr;
use quiver_common::{QError, QResult, Value};
use quiver_syntax::ast::{EdgeKey, YieldColumn};

/// Where a VID is used decides NebulaGraph's message for one of the wrong type.
#[derive(Clone, Copy)]
pub(crate) enum VidUse {
    /// INSERT, UPDATE, DELETE.
    Mutation,
    /// FETCH PROP ON tags, and the constant start VIDs of a GO.
    Start,
    /// FETCH PROP ON an edge type.
    FetchEdge { dst: bool },
}

pub(crate) fn eval_vid(space: &SpaceDesc, e: &Expr, params: &Params, usage: VidUse) -> QResult<Value> {
    let v = eval(e, &ParamContext { params })?;
    if !space.vid_type_matches(&v) {
        return Err(QError::semantic(match usage {
            VidUse::Mutation => format!("Wrong vertex id type: {e}"),
            VidUse::Start => {
                format!("Vid should be a {}", if space.vid_type == VidType::Int64 { "INT64" } else { "FIXED_STRING" })
            }
            VidUse::FetchEdge { dst } => format!(
                "the {} should be type of {}, but was`{}'",
                if dst { "dst" } else { "src" },
                space.vid_value_type(),
                v.type_name().to_uppercase()
            ),
        }));
    }
    space.check_vid_len(&v)?;
    Ok(v)
}

pub(crate) fn eval_edge_key(
    space: &SpaceDesc,
    k: &EdgeKey,
    edge_type: i32,
    params: &Params,
    fetch: bool,
) -> QResult<EdgeKeyVal> {
    let usage = |dst| if fetch { VidUse::FetchEdge { dst } } else { VidUse::Mutation };
    let src = eval_vid(space, &k.src, params, usage(false))?;
    let dst = eval_vid(space, &k.dst, params, usage(true))?;
    let rank = match &k.rank {
        None => 0,
        Some(e) => match eval(e, &ParamContext { params })? {
            Value::Int(r) => r,
            other => return Err(QError::semantic(format!("Invalid rank `{other}', expected an integer"))),
        },
    };
    Ok(EdgeKeyVal { src, edge_type, rank, dst })
}

/// A YIELD column as NebulaGraph prints it in messages: the expression and its alias.
pub(crate) fn column_text(c: &YieldColumn) -> String {
    match &c.alias {
        Some(a) => format!("{} AS {a}", c.expr),
        None => c.expr.to_string(),
    }
}

/// Whether an expression reads a pipe (`$-.c`) or a variable (`$v.c`).
pub(crate) fn reads_input(e: &Expr) -> bool {
    e.any(&|x| matches!(x, Expr::InputProp(_) | Expr::VarProp { .. }))
}
