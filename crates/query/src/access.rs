//! Who may run what, with authorization on (`--enable-authorize`): NebulaGraph's permission table
//! (`PermissionCheck`, `PermissionManager`). Each statement falls in one class; the class and the user's role in
//! the session's current space decide. With authorization off everything is allowed, as in NebulaGraph.
//!
//! | class | allowed | error |
//! |---|---|---|
//! | write space (spaces, snapshots, configs, hosts, zones) | GOD | `No permission to write space.` |
//! | write schema (tags, edges, indexes) | GOD; ADMIN, DBA in the space | `No permission to write schema.` |
//! | write user (CREATE/ALTER/DROP USER) | GOD | `No permission to write user.` |
//! | write data (INSERT, UPDATE, DELETE; jobs) | GOD; ADMIN, DBA, USER in the space | `No permission to write data.` |
//! | read schema or data (queries, DESC TAG/EDGE/INDEX) | any role in the space | `No permission to read schema/data.` |
//! | read space (USE, DESC SPACE, SHOW CREATE SPACE, SHOW ROLES IN) | any role in that space | `No permission to read space.` |
//! | GOD only (SHOW USERS, SHOW SNAPSHOTS) | GOD | `No permission to show users/snapshots/serviceClients` |
//! | grant or revoke | GOD; ADMIN of the space for DBA, USER, GUEST; never GOD, never oneself | below |
//! | read the current space (SHOW TAGS, SHOW STATS, SHOW JOBS, ...) | any role in it | `No permission to read space.` |
//! | each statement of an EXPLAIN or PROFILE | as that statement | |
//! | everyone (SHOW QUERIES, KILL QUERY, SHOW SESSIONS, SHOW HOSTS, SHOW SPACES) | | |
//! | CHANGE PASSWORD | oneself, or GOD | `No permission to change the password of another user.` |
//!
//! SHOW SESSIONS and SHOW QUERIES show a non-GOD user only their own; KILL SESSION and KILL QUERY of another
//! user's are GOD's alone; SHOW SPACES lists a non-GOD user only the spaces they have a role in. NebulaGraph lets a
//! space's SHOW statements go unchecked (the USE that chose the space was checked) and lets anyone run CHANGE
//! PASSWORD for any user; here both are checked, since a request can name its space without a USE (the HTTP API)
//! and a password guess through CHANGE PASSWORD would escape the sign-in lockout.

use crate::{QueryEngine, Session};
use quiver_api::{Role, UserDesc};
use quiver_common::{QError, QResult};
use quiver_syntax::ast::Statement;

enum Class<'a> {
    Everyone,
    WriteSpace,
    WriteSchema,
    WriteUser,
    WriteData,
    ReadData,
    ReadSpace(String),
    /// Any role in the session's current space.
    ReadCurrentSpace,
    GodOnly,
    /// Reads data, and each of these parts needs its own class too (a pipe, an assignment, a set operation, a
    /// PROFILE).
    Parts(bool, Vec<&'a Statement>),
}

fn class(stmt: &Statement) -> Class<'_> {
    use Statement as S;
    match stmt {
        S::CreateSpace { .. }
        | S::CreateSpaceAs { .. }
        | S::DropSpace { .. }
        | S::ClearSpace { .. }
        | S::CreateSnapshot
        | S::DropSnapshot(_)
        | S::ShowConfigs(_)
        | S::GetConfig { .. }
        | S::SetConfig { .. }
        | S::ShowZones
        | S::AddHosts { .. }
        | S::DropHosts(_)
        | S::DescribeZone(_) => Class::WriteSpace,
        S::CreateSchema { .. }
        | S::AlterSchema { .. }
        | S::DropSchema { .. }
        | S::CreateIndex { .. }
        | S::DropIndex { .. } => Class::WriteSchema,
        S::CreateUser { .. } | S::AlterUser { .. } | S::DropUser { .. } => Class::WriteUser,
        S::InsertVertices { .. }
        | S::InsertEdges { .. }
        | S::Update { .. }
        | S::DeleteVertices { .. }
        | S::DeleteTags { .. }
        | S::DeleteEdges { .. }
        | S::RebuildIndex { .. }
        | S::SubmitJob(_)
        | S::StopJob(_)
        | S::RecoverJob(_) => Class::WriteData,
        S::UseSpace(space) | S::DescribeSpace(space) | S::ShowCreateSpace(space) | S::ShowRoles(space) => {
            Class::ReadSpace(space.clone())
        }
        S::ShowUsers | S::ShowSnapshots => Class::GodOnly,
        S::DescribeSchema { .. }
        | S::DescribeIndex { .. }
        | S::FetchVertices { .. }
        | S::FetchEdges { .. }
        | S::Yield { .. }
        | S::YieldJoin { .. }
        | S::Go { .. }
        | S::FindPath { .. }
        | S::GetSubgraph { .. }
        | S::Lookup { .. }
        | S::Match(_)
        | S::Unwind { .. }
        | S::OrderBy { .. }
        | S::Limit { .. }
        | S::GroupBy { .. } => Class::ReadData,
        // A piped UPDATE writes: each part is checked too.
        S::Pipe(a, b) | S::SetOp { left: a, right: b, .. } => Class::Parts(true, vec![a, b]),
        S::Assign { statement, .. } => Class::Parts(true, vec![statement]),
        // PROFILE runs its statements; EXPLAIN runs nothing but validates them against the space's schema, so it
        // is checked as PROFILE is (a user without a role in a space could otherwise probe its tag, property and
        // index names).
        S::Explain { body, .. } => Class::Parts(false, body.iter().collect()),
        // Grants are checked with their space and role known (`QueryEngine::check_grant`); user reads with their
        // target (`check_read_user`); sessions and queries by what they show or kill.
        S::Grant { .. }
        | S::Revoke { .. }
        | S::DescribeUser(_)
        | S::ChangePassword { .. }
        | S::ShowSessions(_)
        | S::KillSession(_)
        | S::ShowQueries { .. }
        | S::KillQuery { .. }
        | S::ShowHosts(_)
        | S::ShowCharset
        | S::ShowCollation
        | S::ShowMetaLeader
        | S::ShowSpaces
        | S::Unsupported(_)
        | S::Refused(_) => Class::Everyone,
        // NebulaGraph leaves these to the USE that chose the space; a space can also come with a request (the HTTP
        // API's `space`), so they need a role in it here.
        S::ShowParts(_)
        | S::ShowSchemas(_)
        | S::ShowCreateSchema { .. }
        | S::ShowIndexes { .. }
        | S::ShowCreateIndex { .. }
        | S::ShowIndexStatus(_)
        | S::ShowJobs
        | S::ShowJob(_)
        | S::ShowStats => Class::ReadCurrentSpace,
    }
}

impl QueryEngine {
    /// The session's user, when authorization is on (`None` when it is off: everything is allowed).
    pub(crate) fn acting_user(&self, session: &Session) -> Option<UserDesc> {
        if !self.authorize {
            return None;
        }
        // A user dropped while signed in keeps its session but holds no role any more.
        Some(self.catalog.user(&session.user).unwrap_or_else(|| UserDesc {
            name: session.user.clone(),
            password_hash: String::new(),
            roles: Default::default(),
        }))
    }

    /// Whether the session's user is GOD (always, with authorization off).
    pub(crate) fn is_god(&self, session: &Session) -> bool {
        self.acting_user(session).is_none_or(|u| u.is_god())
    }

    /// Refuses `stmt` if the session's user may not run it (see the module doc).
    pub(crate) fn check_access(&self, session: &Session, stmt: &Statement) -> QResult<()> {
        let Some(user) = self.acting_user(session) else { return Ok(()) };
        self.check_class(session, &user, class(stmt))
    }

    fn check_class(&self, session: &Session, user: &UserDesc, class: Class<'_>) -> QResult<()> {
        if let Class::Parts(reads, parts) = class {
            if reads {
                self.check_class(session, user, Class::ReadData)?;
            }
            for s in parts {
                self.check_class(session, user, self::class(s))?;
            }
            return Ok(());
        }
        if user.is_god() {
            return Ok(());
        }
        let in_current = || -> Option<Role> {
            let name = session.space.as_ref()?;
            let space = self.catalog.space(name).ok()?;
            user.role_in(space.id)
        };
        match class {
            Class::Everyone => Ok(()),
            Class::WriteSpace => Err(QError::permission("No permission to write space.")),
            Class::WriteUser => Err(QError::permission("No permission to write user.")),
            Class::GodOnly => Err(QError::permission("No permission to show users/snapshots/serviceClients")),
            Class::WriteSchema => match in_current() {
                Some(Role::Admin | Role::Dba) => Ok(()),
                _ => Err(QError::permission("No permission to write schema.")),
            },
            Class::WriteData => match in_current() {
                Some(Role::Admin | Role::Dba | Role::User) => Ok(()),
                _ => Err(QError::permission("No permission to write data.")),
            },
            Class::ReadData => match in_current() {
                Some(_) => Ok(()),
                None => Err(QError::permission("No permission to read schema/data.")),
            },
            Class::ReadCurrentSpace => match in_current() {
                Some(_) => Ok(()),
                // Without a space the statement reports that itself.
                None if session.space.is_none() => Ok(()),
                None => Err(QError::permission("No permission to read space.")),
            },
            Class::ReadSpace(name) => {
                // A space that does not exist is reported as such by the statement itself.
                let Ok(space) = self.catalog.space(&name) else { return Ok(()) };
                match user.role_in(space.id) {
                    Some(_) => Ok(()),
                    None => Err(QError::permission("No permission to read space.")),
                }
            }
            Class::Parts(..) => unreachable!("handled above"),
        }
    }

    /// GRANT and REVOKE of `role` in space `space_id` to `target` (NebulaGraph's `canWriteRole`).
    pub(crate) fn check_grant(&self, session: &Session, role: Role, space_id: u32, target: &str) -> QResult<()> {
        if role == Role::God {
            return Err(QError::permission("No permission to grant/revoke god user."));
        }
        let Some(user) = self.acting_user(session) else { return Ok(()) };
        if user.name == target {
            return Err(QError::permission("No permission to grant/revoke yourself."));
        }
        if user.is_god() {
            return Ok(());
        }
        match user.role_in(space_id) {
            Some(Role::Admin) if role != Role::Admin => Ok(()),
            Some(r) => Err(QError::permission(format!("No permission to grant/revoke `{}' to `{target}'.", r.name()))),
            None => Err(QError::permission("No permission to write grant/revoke role.")),
        }
    }

    /// The rows of `ds` a non-GOD user may see: those of their own (`user_column` is theirs).
    pub(crate) fn own_rows(&self, session: &Session, ds: crate::DataSet, user_column: &str) -> crate::DataSet {
        if self.is_god(session) {
            return ds;
        }
        let Some(c) = ds.column_index(user_column) else { return ds };
        let mine = quiver_common::Value::str(session.user.clone());
        let keep: Vec<usize> = (0..ds.len()).filter(|&r| *ds.value(r, c) == mine).collect();
        ds.gather(&keep)
    }

    /// CHANGE PASSWORD: one's own, or GOD's for anyone.
    pub(crate) fn check_change_password(&self, session: &Session, target: &str) -> QResult<()> {
        match self.acting_user(session) {
            Some(u) if !u.is_god() && u.name != target => {
                Err(QError::permission("No permission to change the password of another user."))
            }
            _ => Ok(()),
        }
    }

    /// SHOW SPACES: the spaces a non-GOD user has a role in.
    pub(crate) fn visible_space(&self, session: &Session, space_id: u32) -> bool {
        self.acting_user(session).is_none_or(|u| u.role_in(space_id).is_some())
    }

    /// DESC USER: GOD, or the user themself.
    pub(crate) fn check_read_user(&self, session: &Session, target: &str) -> QResult<()> {
        match self.acting_user(session) {
            Some(u) if !u.is_god() && u.name != target => {
                Err(QError::permission(format!("No permission to read user `{target}'.")))
            }
            _ => Ok(()),
        }
    }
}
