//! The catalog trait: spaces, tags and edge types, users and their roles.

use crate::index::{IndexDesc, IndexRef, IndexState, JobInfo, NewJob};
use crate::schema::{PropDef, SchemaKind, SchemaRef, SpaceDesc, VidType};
use quiver_common::QResult;
use std::sync::Arc;

/// A change to a schema, applied as one new schema version.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub enum SchemaChange {
    Add(Vec<PropDef>),
    Change(Vec<PropDef>),
    Drop(Vec<String>),
}

#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct SchemaOptionsChange {
    pub ttl_duration: Option<i64>,
    pub ttl_col: Option<String>,
    pub comment: Option<String>,
}

/// NebulaGraph's roles, from the most to the least allowed. GOD is the root user's alone and is not granted; the
/// others are granted per space.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
pub enum Role {
    God,
    Admin,
    Dba,
    User,
    Guest,
}

impl Role {
    pub fn name(self) -> &'static str {
        match self {
            Role::God => "GOD",
            Role::Admin => "ADMIN",
            Role::Dba => "DBA",
            Role::User => "USER",
            Role::Guest => "GUEST",
        }
    }
}

/// The user every catalog has from its first start, with the GOD role (NebulaGraph's `root`, password `nebula`).
pub const ROOT_USER: &str = "root";

/// A user as the catalog keeps it: the password only as its argon2id hash.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct UserDesc {
    pub name: String,
    pub password_hash: String,
    /// The role granted in each space, by space id.
    pub roles: std::collections::BTreeMap<u32, Role>,
}

impl UserDesc {
    pub fn is_god(&self) -> bool {
        self.name == ROOT_USER
    }

    /// The role this user has in `space`: GOD everywhere for root.
    pub fn role_in(&self, space: u32) -> Option<Role> {
        if self.is_god() {
            Some(Role::God)
        } else {
            self.roles.get(&space).copied()
        }
    }
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct NewSpace {
    pub name: String,
    pub partition_num: u32,
    pub replica_factor: u32,
    pub vid_type: VidType,
    pub comment: Option<String>,
}

pub trait Catalog: Send + Sync {
    /// Returns `Ok(false)` when the space exists and `if_not_exists` is set.
    fn create_space(&self, space: NewSpace, if_not_exists: bool) -> QResult<bool>;
    /// Removes the space from the catalog and returns it (its data is removed by storage).
    fn drop_space(&self, name: &str, if_exists: bool) -> QResult<Option<Arc<SpaceDesc>>>;
    fn space(&self, name: &str) -> QResult<Arc<SpaceDesc>>;
    fn spaces(&self) -> Vec<Arc<SpaceDesc>>;

    #[allow(clippy::too_many_arguments)]
    fn create_schema(
        &self,
        space: &SpaceDesc,
        kind: SchemaKind,
        name: &str,
        props: Vec<PropDef>,
        ttl_duration: i64,
        ttl_col: String,
        comment: Option<String>,
        if_not_exists: bool,
    ) -> QResult<bool>;
    fn alter_schema(
        &self,
        space: &SpaceDesc,
        kind: SchemaKind,
        name: &str,
        changes: Vec<SchemaChange>,
        options: SchemaOptionsChange,
    ) -> QResult<()>;
    fn drop_schema(
        &self,
        space: &SpaceDesc,
        kind: SchemaKind,
        name: &str,
        if_exists: bool,
    ) -> QResult<Option<SchemaRef>>;
    /// A tag or edge type by name; the error is NebulaGraph's not-found error.
    fn schema(&self, space: &SpaceDesc, kind: SchemaKind, name: &str) -> QResult<SchemaRef>;
    fn schema_by_id(&self, space: &SpaceDesc, kind: SchemaKind, id: i32) -> Option<SchemaRef>;
    fn schemas(&self, space: &SpaceDesc, kind: SchemaKind) -> Vec<SchemaRef>;

    /// Adds an index (its `id` is assigned here) in state [`IndexState::Building`]. Returns `Ok(None)` when an index
    /// of that name exists and `if_not_exists` is set.
    fn create_index(&self, space: &SpaceDesc, index: IndexDesc, if_not_exists: bool) -> QResult<Option<IndexRef>>;
    fn drop_index(&self, space: &SpaceDesc, kind: SchemaKind, name: &str, if_exists: bool)
        -> QResult<Option<IndexRef>>;
    fn set_index_state(&self, space: &SpaceDesc, id: i32, state: IndexState) -> QResult<()>;
    /// Every index of the space, tag and edge, in creation order.
    fn indexes(&self, space: &SpaceDesc) -> Vec<IndexRef>;

    /// Adds a user; `Ok(false)` when one of that name exists and `if_not_exists` is set.
    fn create_user(&self, name: &str, password_hash: String, if_not_exists: bool) -> QResult<bool>;
    /// Replaces a user's password hash.
    fn set_password(&self, name: &str, password_hash: String) -> QResult<()>;
    /// Removes a user; `Ok(false)` when there is none and `if_exists` is set.
    fn drop_user(&self, name: &str, if_exists: bool) -> QResult<bool>;
    fn user(&self, name: &str) -> Option<UserDesc>;
    /// Every user, by name.
    fn users(&self) -> Vec<UserDesc>;
    /// Grants `role` in `space` to a user, replacing the role it had there.
    fn grant(&self, name: &str, space: u32, role: Role) -> QResult<()>;
    /// Takes back the user's role in `space`, which must be `role`.
    fn revoke(&self, name: &str, space: u32, role: Role) -> QResult<()>;

    /// The job records a cluster's meta service keeps (the embedded storage keeps its own jobs), by id.
    fn job_records(&self) -> Vec<JobRecord>;
    /// Records a new job of `space_id`, QUEUE, under the next job id (ids are never reused); returns its record.
    fn add_job(&self, space_id: u32, job: NewJob) -> QResult<JobRecord>;
    /// Replaces job `new.job.id`'s record with `new` if the stored one is still `seen` (a compare-and-set, so two
    /// graph services never both take a job, and a runner learns of a STOP JOB); whether it did.
    fn swap_job(&self, seen: &JobRecord, new: JobRecord) -> QResult<bool>;
}

/// A job as a cluster's job manager keeps it in the meta service: the job, and which graph service runs it until
/// when (a lease it renews while it runs; once it lapses another graph service takes the job over).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct JobRecord {
    pub job: JobInfo,
    /// The runner's name while the job is RUNNING.
    pub runner: Option<String>,
    /// Milliseconds since the Unix epoch until which `runner` holds the job.
    pub lease_until_ms: u64,
}
