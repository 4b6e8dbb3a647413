//! Users and roles: CREATE/ALTER/DROP USER, CHANGE PASSWORD, GRANT, REVOKE, SHOW USERS, SHOW ROLES IN, DESC USER,
//! with NebulaGraph's checks, errors and columns. Passwords reach the catalog only as argon2id hashes.

use crate::{DataSet, QueryEngine, Session};
use quiver_api::{Role, ROOT_USER};
use quiver_common::limits::{PASSWORD_CHARS_MAX, USERNAME_CHARS_MAX};
use quiver_common::{password, QError, QResult, Value};
use quiver_syntax::ast::Statement;

fn role_of(name: &str) -> Role {
    match name {
        "GOD" => Role::God,
        "ADMIN" => Role::Admin,
        "DBA" => Role::Dba,
        "USER" => Role::User,
        _ => Role::Guest,
    }
}

fn check_name(name: &str) -> QResult<()> {
    if name.chars().count() > USERNAME_CHARS_MAX {
        return Err(QError::semantic(format!("Username exceed maximum length {USERNAME_CHARS_MAX} characters.")));
    }
    Ok(())
}

fn check_password(what: &str, p: &str) -> QResult<()> {
    if p.chars().count() > PASSWORD_CHARS_MAX {
        return Err(QError::semantic(format!("{what} exceed maximum length {PASSWORD_CHARS_MAX} characters.")));
    }
    Ok(())
}

fn hashed(p: &str) -> QResult<String> {
    password::hash(p).map_err(QError::execution)
}

impl QueryEngine {
    pub(crate) fn user_statement(&self, session: &Session, stmt: &Statement) -> QResult<DataSet> {
        let catalog = &self.catalog;
        match stmt {
            Statement::CreateUser { name, password, if_not_exists } => {
                check_name(name)?;
                check_password("Password", password)?;
                catalog.create_user(name, hashed(password)?, *if_not_exists)?;
            }
            Statement::AlterUser { name, password } => {
                check_name(name)?;
                check_password("Password", password)?;
                if catalog.user(name).is_none() {
                    return Err(QError::execution("User not existed!"));
                }
                catalog.set_password(name, hashed(password)?)?;
            }
            Statement::DropUser { name, if_exists } => {
                if name == ROOT_USER {
                    return Err(QError::semantic("Can't drop root user."));
                }
                catalog.drop_user(name, *if_exists)?;
            }
            Statement::ChangePassword { name, old, new } => {
                check_password("Password", old)?;
                check_password("New password", new)?;
                self.check_change_password(session, name)?;
                let user = catalog.user(name).ok_or_else(|| QError::execution("User not existed!"))?;
                if !password::verify(old, &user.password_hash) {
                    return Err(QError::execution("Invalid password!"));
                }
                catalog.set_password(name, hashed(new)?)?;
            }
            Statement::Grant { role, space, user } | Statement::Revoke { role, space, user } => {
                let grant = matches!(stmt, Statement::Grant { .. });
                let role = role_of(role);
                if grant && user == ROOT_USER && role != Role::God {
                    return Err(QError::semantic(format!("User '{ROOT_USER}' is GOD, cannot be granted.")));
                }
                if !grant && role == Role::God {
                    return Err(QError::permission("Permission denied"));
                }
                let space = catalog.space(space)?;
                self.check_grant(session, role, space.id, user)?;
                if grant {
                    catalog.grant(user, space.id, role)?;
                } else {
                    catalog.revoke(user, space.id, role)?;
                }
            }
            Statement::ShowUsers => {
                let mut ds = DataSet::with_columns(&["Account"]);
                for u in catalog.users() {
                    ds.push_row([Value::str(u.name)]);
                }
                return Ok(ds);
            }
            Statement::ShowRoles(space) => {
                let space = catalog.space(space)?;
                let mut ds = DataSet::with_columns(&["Account", "Role Type"]);
                for u in catalog.users() {
                    if let Some(r) = u.roles.get(&space.id) {
                        ds.push_row([Value::str(u.name.clone()), Value::str(r.name())]);
                    }
                }
                return Ok(ds);
            }
            Statement::DescribeUser(name) => {
                self.check_read_user(session, name)?;
                let user = catalog.user(name).ok_or_else(|| QError::execution("User not existed!"))?;
                let mut ds = DataSet::with_columns(&["role", "space"]);
                // The root user is GOD everywhere, listed as NebulaGraph lists it: one row, no space.
                if name == "root" {
                    ds.push_row([Value::str("GOD"), Value::str("")]);
                }
                let spaces = catalog.spaces();
                for (id, r) in &user.roles {
                    let space = spaces.iter().find(|s| s.id == *id).map(|s| s.name.clone()).unwrap_or_default();
                    ds.push_row([Value::str(r.name()), Value::str(space)]);
                }
                return Ok(ds);
            }
            _ => unreachable!("not a user statement"),
        }
        Ok(DataSet::empty())
    }
}
