//! Space, tag and edge-type statements.

use crate::{DataSet, QueryEngine};
use quiver_api::{
    coerce, IndexDesc, IndexState, NewSpace, PropDef, SchemaChange, SchemaKind, SchemaOptionsChange, SpaceDesc, VidType,
};
use quiver_common::eval::eval_const;
use quiver_common::limits::{COMMENT_BYTES_MAX, PARTITIONS_MAX, VID_BYTES_MAX};
use quiver_common::value::write_quoted;
use quiver_common::{PropType, QError, QResult, Value};
use quiver_syntax::ast::{self, AlterOp, PropSpec, Statement, VidTypeSpec};

/// NebulaGraph's default `partition_num` (3.6 and later), unless `--default-parts-num` says otherwise.
pub const DEFAULT_PARTITION_NUM: u32 = 10;

pub(crate) fn kind_of(k: ast::SchemaKind) -> SchemaKind {
    match k {
        ast::SchemaKind::Tag => SchemaKind::Tag,
        ast::SchemaKind::Edge => SchemaKind::Edge,
    }
}

fn check_comment(c: &Option<String>) -> QResult<()> {
    match c {
        Some(c) if c.len() > COMMENT_BYTES_MAX => {
            Err(QError::semantic(format!("Comment is longer than {COMMENT_BYTES_MAX} bytes")))
        }
        _ => Ok(()),
    }
}

/// Turns a property declaration into a catalog entry, checking that its DEFAULT fits its type.
fn prop_def(spec: &PropSpec) -> QResult<PropDef> {
    let mut def = PropDef {
        name: spec.name.clone(),
        ty: spec.ty,
        nullable: spec.nullable,
        default: None,
        comment: spec.comment.clone(),
    };
    if let Some(e) = &spec.default {
        let v = eval_const(e)?;
        // A DEFAULT must be a value of the property's type; NULL only for a nullable property. Unlike a written
        // value, a float default of an integer property is refused, not rounded, and an integer default of a float
        // one, not widened (NebulaGraph's SchemaUtil::checkType).
        let integer = matches!(def.ty, PropType::Int8 | PropType::Int16 | PropType::Int32 | PropType::Int64);
        let float = matches!(def.ty, PropType::Float | PropType::Double);
        if (integer && matches!(v, Value::Float(_))) || (float && matches!(v, Value::Int(_))) {
            return Err(QError::execution("Invalid param!"));
        }
        let coerced = coerce(&def, v).map_err(|_| QError::execution("Invalid param!"))?;
        def.default = match (def.ty, e) {
            // A string constant is kept cut to a fixed string's length, as NebulaGraph keeps it (DESC shows it so).
            (PropType::FixedString(_), quiver_common::expr::Expr::Const(Value::String(_))) => {
                let e = quiver_common::expr::Expr::Const(coerced);
                Some((e.to_string(), e))
            }
            _ => Some((e.to_string(), e.clone())),
        };
    }
    check_comment(&spec.comment)?;
    Ok(def)
}

fn default_text(def: &PropDef) -> Value {
    match &def.default {
        None => Value::Empty,
        Some((text, e)) => match e {
            quiver_common::expr::Expr::Const(v) => v.clone(),
            // A call is shown as written (`now()` is evaluated per row), except the pure geo constructors, which
            // NebulaGraph folds into the geography they make.
            _ => match eval_const(e) {
                Ok(v) if !matches!(e, quiver_common::expr::Expr::Function { .. }) => v,
                Ok(v @ Value::Geography(_)) => v,
                _ => Value::str(text.clone()),
            },
        },
    }
}

impl QueryEngine {
    /// Gives the empty space `new` every tag, edge type and index of `old`; the indexes are ready at once, as
    /// there is nothing to build them from.
    fn copy_schemas(&self, old: &SpaceDesc, new: &SpaceDesc) -> QResult<()> {
        for kind in [SchemaKind::Tag, SchemaKind::Edge] {
            for s in self.catalog.schemas(old, kind) {
                let props = s.latest().props.clone();
                let (ttl, col, comment) = (s.ttl_duration, s.ttl_col.clone(), s.comment.clone());
                self.catalog.create_schema(new, kind, &s.name, props, ttl, col, comment, false)?;
            }
        }
        for index in self.catalog.indexes(old) {
            let schema = self.catalog.schema(new, index.kind, &index.schema_name)?;
            let copy = IndexDesc { schema_id: schema.id, state: IndexState::Ready, ..(*index).clone() };
            if let Some(created) = self.catalog.create_index(new, copy, false)? {
                self.catalog.set_index_state(new, created.id, IndexState::Ready)?;
            }
        }
        Ok(())
    }

    pub(crate) fn space_statement(&self, stmt: &Statement) -> QResult<DataSet> {
        match stmt {
            Statement::CreateSpace {
                if_not_exists,
                name,
                partition_num,
                replica_factor,
                vid_type,
                charset,
                collate,
                comment,
            } => {
                check_charset(charset.as_deref(), collate.as_deref())?;
                let parts = partition_num.unwrap_or(i64::from(self.default_parts_num));
                if parts <= 0 || parts > PARTITIONS_MAX as i64 {
                    return Err(QError::semantic(format!(
                        "partition_num must be between 1 and {PARTITIONS_MAX}, got {parts}"
                    )));
                }
                let replicas = replica_factor.unwrap_or(1);
                if replicas <= 0 {
                    return Err(QError::semantic(format!("replica_factor must be positive, got {replicas}")));
                }
                let vid_type = match vid_type {
                    None => return Err(QError::semantic("space vid_type must be specified explicitly")),
                    Some(VidTypeSpec::Int64) => VidType::Int64,
                    Some(VidTypeSpec::FixedString(n)) => {
                        if *n <= 0 || *n > VID_BYTES_MAX as i64 {
                            return Err(QError::semantic(format!(
                                "Only support fixed string vid type with length between 1 and {VID_BYTES_MAX}, got {n}"
                            )));
                        }
                        VidType::FixedString(*n as u32)
                    }
                };
                check_comment(comment)?;
                let space = NewSpace {
                    name: name.clone(),
                    partition_num: parts as u32,
                    replica_factor: replicas as u32,
                    vid_type,
                    comment: comment.clone(),
                };
                self.catalog.create_space(space, *if_not_exists)?;
                Ok(DataSet::empty())
            }
            Statement::CreateSpaceAs { if_not_exists, name, from } => {
                let old = self.catalog.space(from)?;
                let space = NewSpace {
                    name: name.clone(),
                    partition_num: old.partition_num,
                    replica_factor: old.replica_factor,
                    vid_type: old.vid_type,
                    comment: old.comment.clone(),
                };
                if !self.catalog.create_space(space, *if_not_exists)? {
                    return Ok(DataSet::empty());
                }
                // The copy is whole or absent: a failure part way drops the new space again.
                let new = self.catalog.space(name)?;
                if let Err(e) = self.copy_schemas(&old, &new) {
                    let _ = self.catalog.drop_space(name, true);
                    return Err(e);
                }
                Ok(DataSet::empty())
            }
            Statement::DropSpace { if_exists, name } => {
                if let Some(space) = self.catalog.drop_space(name, *if_exists)? {
                    self.storage.clear_space(&space)?;
                }
                Ok(DataSet::empty())
            }
            Statement::ClearSpace { if_exists, name } => {
                match self.catalog.space(name) {
                    Ok(space) => self.storage.clear_space(&space)?,
                    Err(_) if *if_exists => {}
                    // NebulaGraph's meta service answers E_SPACE_NOT_FOUND here (its graph service's own lookup,
                    // the `SpaceName` text, is not made).
                    Err(_) => return Err(QError::execution("SpaceNotFound: Space not existed!")),
                }
                Ok(DataSet::empty())
            }
            Statement::ShowSpaces => {
                let mut ds = DataSet::with_columns(&["Name"]);
                let mut names: Vec<String> = self.catalog.spaces().iter().map(|s| s.name.clone()).collect();
                names.sort();
                names.into_iter().for_each(|n| ds.push_row([Value::str(n)]));
                Ok(ds)
            }
            Statement::DescribeSpace(name) => {
                let s = self.catalog.space(name)?;
                let mut ds = DataSet::with_columns(&[
                    "ID",
                    "Name",
                    "Partition Number",
                    "Replica Factor",
                    "Charset",
                    "Collate",
                    "Vid Type",
                    "Comment",
                ]);
                ds.push_row([
                    Value::Int(s.id as i64),
                    Value::str(s.name.clone()),
                    Value::Int(s.partition_num as i64),
                    Value::Int(s.replica_factor as i64),
                    Value::str("utf8"),
                    Value::str("utf8_bin"),
                    Value::str(s.vid_type.name()),
                    s.comment.clone().map(Value::str).unwrap_or(Value::Empty),
                ]);
                Ok(ds)
            }
            Statement::ShowCreateSpace(name) => {
                let s = self.catalog.space(name)?;
                let mut ds = DataSet::with_columns(&["Space", "Create Space"]);
                ds.push_row([Value::str(s.name.clone()), Value::str(show_create_space(&s))]);
                Ok(ds)
            }
            _ => unreachable!("not a space statement"),
        }
    }

    pub(crate) fn schema_statement(&self, space: &SpaceDesc, stmt: &Statement) -> QResult<DataSet> {
        match stmt {
            Statement::CreateSchema { kind, if_not_exists, name, props, options } => {
                let defs = props.iter().map(prop_def).collect::<QResult<Vec<_>>>()?;
                check_comment(&options.comment)?;
                self.catalog.create_schema(
                    space,
                    kind_of(*kind),
                    name,
                    defs,
                    options.ttl_duration.unwrap_or(0),
                    options.ttl_col.clone().unwrap_or_default(),
                    options.comment.clone(),
                    *if_not_exists,
                )?;
                Ok(DataSet::empty())
            }
            Statement::AlterSchema { kind, name, ops, options } => {
                let mut named = std::collections::HashSet::new();
                let mut changes = Vec::new();
                for op in ops {
                    // NebulaGraph's `validateSchemaOpts`: a column is named once across the statement's changes.
                    let names: Vec<&String> = match op {
                        AlterOp::Add(specs) | AlterOp::Change(specs) => specs.iter().map(|p| &p.name).collect(),
                        AlterOp::Drop(names) => names.iter().collect(),
                    };
                    if let Some(dup) = names.into_iter().find(|n| !named.insert(*n)) {
                        return Err(QError::semantic(format!("Duplicate column name `{dup}'")));
                    }
                    // NebulaGraph's `validateColumns` for ALTER: an added or changed column that may not be NULL
                    // needs a default, which the rows written before it get.
                    if let AlterOp::Add(specs) | AlterOp::Change(specs) = op {
                        if let Some(p) = specs.iter().find(|p| !p.nullable && p.default.is_none()) {
                            return Err(QError::semantic(format!(
                                "Column `{}' must have a default value if it's not nullable",
                                p.name
                            )));
                        }
                    }
                    changes.push(match op {
                        AlterOp::Add(specs) => SchemaChange::Add(specs.iter().map(prop_def).collect::<QResult<_>>()?),
                        AlterOp::Change(specs) => {
                            SchemaChange::Change(specs.iter().map(prop_def).collect::<QResult<_>>()?)
                        }
                        AlterOp::Drop(names) => SchemaChange::Drop(names.clone()),
                    });
                }
                check_comment(&options.comment)?;
                let opts = SchemaOptionsChange {
                    ttl_duration: options.ttl_duration,
                    ttl_col: options.ttl_col.clone(),
                    comment: options.comment.clone(),
                };
                self.catalog.alter_schema(space, kind_of(*kind), name, changes, opts)?;
                Ok(DataSet::empty())
            }
            Statement::DropSchema { kind, if_exists, name } => {
                if let Some(schema) = self.catalog.drop_schema(space, kind_of(*kind), name, *if_exists)? {
                    self.storage.drop_schema_data(space, &schema)?;
                }
                Ok(DataSet::empty())
            }
            Statement::ShowSchemas(kind) => {
                let mut ds = DataSet::with_columns(&["Name"]);
                let mut names: Vec<String> =
                    self.catalog.schemas(space, kind_of(*kind)).iter().map(|s| s.name.clone()).collect();
                names.sort();
                names.into_iter().for_each(|n| ds.push_row([Value::str(n)]));
                Ok(ds)
            }
            Statement::DescribeSchema { kind, name } => {
                let schema =
                    self.catalog.schema(space, kind_of(*kind), name).map_err(|_| kind_of(*kind).not_existed())?;
                let mut ds = DataSet::with_columns(&["Field", "Type", "Null", "Default", "Comment"]);
                for p in &schema.latest().props {
                    ds.push_row([
                        Value::str(p.name.clone()),
                        Value::str(p.ty.name()),
                        Value::str(if p.nullable { "YES" } else { "NO" }),
                        default_text(p),
                        p.comment.clone().map(Value::str).unwrap_or(Value::Empty),
                    ]);
                }
                Ok(ds)
            }
            Statement::ShowCreateSchema { kind, name } => {
                let schema =
                    self.catalog.schema(space, kind_of(*kind), name).map_err(|_| kind_of(*kind).not_existed())?;
                let (c1, c2) = match kind {
                    ast::SchemaKind::Tag => ("Tag", "Create Tag"),
                    ast::SchemaKind::Edge => ("Edge", "Create Edge"),
                };
                let mut text = format!("CREATE {} `{}` (\n", kind.keyword(), schema.name);
                let props = &schema.latest().props;
                for (i, p) in props.iter().enumerate() {
                    text.push_str(&format!(
                        " `{}` {} {}",
                        p.name,
                        p.ty.name(),
                        if p.nullable { "NULL" } else { "NOT NULL" }
                    ));
                    if let Some((t, _)) = &p.default {
                        text.push_str(&format!(" DEFAULT {t}"));
                    }
                    if let Some(c) = &p.comment {
                        text.push_str(" COMMENT ");
                        write_quoted(&mut text, c).expect("string write");
                    }
                    text.push_str(if i + 1 < props.len() { ",\n" } else { "\n" });
                }
                text.push_str(&format!(") ttl_duration = {}, ttl_col = ", schema.ttl_duration));
                write_quoted(&mut text, &schema.ttl_col).expect("string write");
                // NebulaGraph's `SchemaUtil::toShowCreateSchema`: the comment only when one was given.
                if let Some(c) = &schema.comment {
                    text.push_str(", comment = ");
                    write_quoted(&mut text, c).expect("string write");
                }
                let mut ds = DataSet::with_columns(&[c1, c2]);
                ds.push_row([Value::str(schema.name.clone()), Value::str(text)]);
                Ok(ds)
            }
            _ => unreachable!("not a schema statement"),
        }
    }
}

fn show_create_space(s: &SpaceDesc) -> String {
    let mut text = format!(
        "CREATE SPACE `{}` (partition_num = {}, replica_factor = {}, charset = utf8, collate = utf8_bin, vid_type = {})",
        s.name,
        s.partition_num,
        s.replica_factor,
        s.vid_type.name()
    );
    // NebulaGraph's `ShowCreateSpaceExecutor`: `comment = '...'`, in single quotes.
    if let Some(c) = &s.comment {
        text.push_str(" comment = '");
        for ch in c.chars() {
            if matches!(ch, '\'' | '\\') {
                text.push('\\');
            }
            text.push(ch);
        }
        text.push('\'');
    }
    text
}

/// NebulaGraph's `CharsetInfo` checks of `CREATE SPACE`'s `charset` and `collate`: utf8 with utf8_bin is all there is.
fn check_charset(charset: Option<&str>, collate: Option<&str>) -> QResult<()> {
    if let Some(c) = charset.filter(|c| *c != "utf8") {
        return Err(QError::execution(format!("Charset `{c}' not support")));
    }
    if let Some(c) = collate.filter(|c| *c != "utf8_bin") {
        return Err(QError::execution(format!("Collation `{c}' not support")));
    }
    Ok(())
}
