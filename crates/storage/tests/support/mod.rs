//! Schema builders shared by the storage tests.

use quiver_api::{
    NeighborsRequest, PropDef, PropSelection, SchemaDesc, SchemaKind, SchemaRef, SchemaVersion, SpaceDesc, VidType,
};
use quiver_common::{PropType, Value};
use std::sync::Arc;

pub fn prop(name: &str, ty: PropType) -> PropDef {
    PropDef { name: name.into(), ty, nullable: true, default: None, comment: None }
}

/// A tag or edge type with these versions (version `i` = `versions[i]`) and an optional TTL (duration, column).
pub fn schema(
    kind: SchemaKind,
    id: i32,
    name: &str,
    versions: Vec<Vec<PropDef>>,
    ttl: Option<(i64, &str)>,
) -> SchemaRef {
    Arc::new(SchemaDesc {
        kind,
        id,
        name: name.into(),
        versions: versions
            .into_iter()
            .enumerate()
            .map(|(i, props)| SchemaVersion { version: i as u32, props })
            .collect(),
        ttl_duration: ttl.map_or(0, |t| t.0),
        ttl_col: ttl.map_or(String::new(), |t| t.1.to_string()),
        comment: None,
    })
}

/// A neighbour read of every edge of `types` under `vids`, unfiltered and unlimited.
pub fn neighbors(vids: &[Value], types: &[(i32, SchemaRef)], props: PropSelection) -> NeighborsRequest {
    NeighborsRequest {
        vids: vids.to_vec(),
        edge_types: types.to_vec(),
        props,
        filter: None,
        limit: None,
        budget: quiver_common::budget::Budget::unlimited(),
    }
}

/// A space `g` of two partitions with INT64 VIDs.
pub fn int_space(id: u32) -> SpaceDesc {
    SpaceDesc { id, name: "g".into(), partition_num: 2, replica_factor: 1, vid_type: VidType::Int64, comment: None }
}
