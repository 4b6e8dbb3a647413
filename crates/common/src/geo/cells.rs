//! S2 cells of geographies: `S2_CellIdFromPoint`, `S2_CoveringCellIds`, and the entries and scan ranges of a geo
//! index, as NebulaGraph's `GeoIndex.cpp` computes them. The covering is the `s2` crate's `RegionCoverer`, run over
//! the shape itself (its cells are tested against the shape's edges), so a covering is as tight as S2's.

use super::sphere::{self, Shape, EARTH_RADIUS_METERS};
use super::{Coord, Geography};
use s2::cap::Cap;
use s2::cell::Cell;
use s2::cellid::CellID;
use s2::rect_bounder::RectBounder;
use s2::region::{Region, RegionCoverer};
use s2::s1::angle::{Angle, Rad};

/// Levels and cell count of a covering: NebulaGraph's `RegionCoverParams` (defaults 0, 30, 8), which a geo index
/// takes from its `s2_max_level` and `s2_max_cells`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CoverParams {
    pub min_level: u8,
    pub max_level: u8,
    pub max_cells: usize,
}

impl Default for CoverParams {
    fn default() -> Self {
        CoverParams { min_level: 0, max_level: 30, max_cells: 8 }
    }
}

/// A shape as an S2 region, for the coverer.
#[derive(Clone)]
struct ShapeRegion(Shape);

impl Region for ShapeRegion {
    fn cap_bound(&self) -> Cap {
        if let Shape::Point(p) = &self.0 {
            return Cap::from_center_angle(p, &Angle::from(Rad(0.0)));
        }
        // A polygon around a pole is not bounded by its vertices' rectangle.
        if let Shape::Polygon(loops) = &self.0 {
            let pole = |z: f64| s2::point::Point(s2::r3::vector::Vector { x: 0.0, y: 0.0, z });
            if Shape::polygon_contains(loops, &pole(1.0)) || Shape::polygon_contains(loops, &pole(-1.0)) {
                return Cap::full();
            }
        }
        let mut bound: Option<s2::rect::Rect> = None;
        let mut add = |chain: &mut dyn Iterator<Item = &s2::point::Point>| {
            let mut b = RectBounder::new();
            chain.for_each(|p| b.add_point(p));
            let r = b.get_bound();
            bound = Some(match bound.take() {
                None => r,
                Some(prev) => prev.union(&r),
            });
        };
        match &self.0 {
            Shape::Line(v) => add(&mut v.iter()),
            Shape::Polygon(loops) => {
                for l in loops {
                    add(&mut l.vertices.iter().chain(l.vertices.first()));
                }
            }
            Shape::Point(_) => unreachable!("handled above"),
        }
        bound.map(|r| r.cap_bound()).unwrap_or_else(Cap::empty)
    }

    fn contains_cell(&self, cell: &Cell) -> bool {
        self.0.contains_cell(cell)
    }

    fn intersects_cell(&self, cell: &Cell) -> bool {
        self.0.intersects_cell(cell)
    }
}

/// What a covering is computed for: a shape, or a cap (a point with a buffer, or a shape's bound with one).
#[derive(Clone)]
enum Query {
    Shape(ShapeRegion),
    Cap(Cap),
}

impl Region for Query {
    fn cap_bound(&self) -> Cap {
        match self {
            Query::Shape(s) => s.cap_bound(),
            Query::Cap(c) => c.cap_bound(),
        }
    }

    fn contains_cell(&self, cell: &Cell) -> bool {
        match self {
            Query::Shape(s) => s.contains_cell(cell),
            Query::Cap(c) => c.contains_cell(cell),
        }
    }

    fn intersects_cell(&self, cell: &Cell) -> bool {
        match self {
            Query::Shape(s) => s.intersects_cell(cell),
            Query::Cap(c) => c.intersects_cell(cell),
        }
    }
}

/// The region of `g` grown by `meters` (none for 0): a cap around a point; around another shape, the cap of its
/// bound grown by the distance (coarser than S2's buffered region, so a superset).
fn query(g: &Geography, meters: f64) -> Query {
    let shape = Shape::new(g);
    if meters <= 0.0 {
        return Query::Shape(ShapeRegion(shape));
    }
    let grow = Angle::from(Rad(meters / EARTH_RADIUS_METERS));
    match &shape {
        Shape::Point(p) => Query::Cap(Cap::from_center_angle(p, &grow)),
        _ => {
            let bound = ShapeRegion(shape.clone()).cap_bound();
            if bound.is_full() {
                return Query::Cap(bound);
            }
            let r = Angle::from(Rad(bound.radius().rad() + grow.rad()));
            Query::Cap(Cap::from_center_angle(bound.center(), &r))
        }
    }
}

fn cover(region: &Query, p: CoverParams) -> Vec<CellID> {
    let coverer =
        RegionCoverer { min_level: p.min_level, max_level: p.max_level, level_mod: 1, max_cells: p.max_cells };
    coverer.covering(region).0
}

/// `S2_CellIdFromPoint`: the cell of `c` at `level` (0..=30), as NebulaGraph returns it (the u64 id's bits as an
/// int64).
pub fn cell_id_from_point(c: &Coord, level: u8) -> i64 {
    let leaf = CellID::from(&sphere::point(c));
    let id = if level >= 30 { leaf } else { leaf.parent(level as u64) };
    id.0 as i64
}

/// `S2_CoveringCellIds`: a covering of `g`, grown by `buffer_meters`, as int64s.
pub fn covering_cell_ids(g: &Geography, params: CoverParams, buffer_meters: f64) -> Vec<i64> {
    // Without a buffer a point is its leaf cell, whatever the levels (GeoFunction::s2CoveringCellIds).
    if let (Geography::Point(c), true) = (g, buffer_meters == 0.0) {
        return vec![CellID::from(&sphere::point(c)).0 as i64];
    }
    cover(&query(g, buffer_meters), params).into_iter().map(|c| c.0 as i64).collect()
}

/// Roughly how many cells of `level` a covering of `g` grown by `buffer_meters` holds at least (the area of the
/// region's bounding cap over a cell's average area): a covering's `min_level` is a hard floor, so a fine level
/// over a large region would otherwise enumerate billions of cells.
pub fn cells_at_level(g: &Geography, buffer_meters: f64, level: u8) -> f64 {
    if let (Geography::Point(_), true) = (g, buffer_meters == 0.0) {
        return 1.0;
    }
    let area = query(g, buffer_meters).cap_bound().area();
    let cell = 4.0 * std::f64::consts::PI / (6.0 * 4f64.powi(i32::from(level)));
    area / cell
}

/// `GeoIndex::indexCells`: the cells a geo index files a value under (a point's leaf cell, else a covering).
pub fn index_cells(g: &Geography, params: CoverParams) -> Vec<u64> {
    match g {
        Geography::Point(c) => vec![CellID::from(&sphere::point(c)).0],
        _ => cover(&query(g, 0.0), params).into_iter().map(|c| c.0).collect(),
    }
}

/// `GeoIndex::intersects` / `dWithin`: the id ranges (inclusive) of a geo index that hold every value meeting
/// `g` grown by `meters`. Each covering cell's descendants are a range; a value filed under an ancestor of a
/// covering cell is found by that ancestor's exact id (not needed when the index holds only points, which are
/// filed under leaves).
pub fn scan_ranges(g: &Geography, meters: f64, params: CoverParams, points_only: bool) -> Vec<(u64, u64)> {
    let cells = match (g, meters <= 0.0) {
        (Geography::Point(c), true) => vec![CellID::from(&sphere::point(c))],
        _ => cover(&query(g, meters), params),
    };
    let mut ranges: Vec<(u64, u64)> = cells.iter().map(|c| (c.range_min().0, c.range_max().0)).collect();
    if !points_only {
        let mut seen = std::collections::HashSet::new();
        for c in &cells {
            for level in (params.min_level as u64..c.level()).rev() {
                let parent = c.parent(level);
                if !seen.insert(parent.0) {
                    break;
                }
                ranges.push((parent.0, parent.0));
            }
        }
    }
    ranges.sort_unstable();
    ranges
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(wkt: &str) -> Geography {
        Geography::from_wkt(wkt).unwrap()
    }

    fn found(index: &[u64], ranges: &[(u64, u64)]) -> bool {
        index.iter().any(|c| ranges.iter().any(|(lo, hi)| lo <= c && c <= hi))
    }

    #[test]
    fn a_query_finds_every_shape_it_meets() {
        let params = CoverParams::default();
        let q = g("POLYGON((0 0, 3 0, 3 3, 0 3, 0 0))");
        let ranges = scan_ranges(&q, 0.0, params, false);
        for inside in ["POINT(1 1)", "LINESTRING(-1 1, 1 1)", "POLYGON((2 2, 5 2, 5 5, 2 2))", "POINT(3 1.5)"] {
            assert!(found(&index_cells(&g(inside), params), &ranges), "{inside}");
        }
        let near = scan_ranges(&g("POINT(10 10)"), 200_000.0, params, false);
        assert!(found(&index_cells(&g("POINT(11 10)"), params), &near));
    }

    #[test]
    fn cell_ids_are_s2s() {
        // The face-0 cell of (0, 0) at level 0 is id 1 << 60; every level keeps the point's leaf as a descendant.
        assert_eq!(cell_id_from_point(&Coord::new(0.0, 0.0), 0), 1 << 60);
        let leaf = cell_id_from_point(&Coord::new(1.0, 2.0), 30) as u64;
        let l10 = CellID(cell_id_from_point(&Coord::new(1.0, 2.0), 10) as u64);
        assert!(l10.range_min().0 <= leaf && leaf <= l10.range_max().0);
        assert!(covering_cell_ids(&g("LINESTRING(0 0, 1 1)"), CoverParams::default(), 0.0).len() <= 8);
    }
}
