//! NebulaGraph's geo predicates, distances and centroids (`GeoFunction.cpp`, `Geography.cpp`), on the unit
//! sphere as S2 computes them: vertices are S2 points, edges great-circle arcs, a polygon is the set of points
//! inside an odd number of its (normalized) rings.
//!
//! Every geometric decision is one of the `s2` crate's robust primitives (`crossing_sign`,
//! `edge_or_vertex_crossing`, `ordered_ccw`, `distance_from_segment`, `point_area`, `true_centroid`, cells). What is
//! written here only combines them the way S2's `S2Loop`, `S2Polygon` and `S2Polyline` do, which the crate does not
//! port; each function names the S2 method it follows.

use super::{Coord, Geography};
use s2::cell::Cell;
use s2::cellid::CellID;
use s2::edge_crossings::{crossing_sign, edge_or_vertex_crossing, Crossing};
use s2::edgeutil::distance_from_segment;
use s2::latlng::LatLng;
use s2::point::{ordered_ccw, point_area, true_centroid, Point};
use s2::predicates::{robust_sign, Direction};
use std::f64::consts::PI;

/// `S2Earth::RadiusMeters()`: the radius NebulaGraph's distances are measured on.
pub const EARTH_RADIUS_METERS: f64 = 6_371_010.0;

/// `S2LatLng::FromDegrees(y, x).ToPoint()`.
pub fn point(c: &Coord) -> Point {
    Point::from(LatLng::from_degrees(c.y, c.x))
}

/// `S2LatLng(p)` in degrees, as `S1Angle::degrees()` converts (`(180 / pi) * radians`).
pub fn coord(p: &Point) -> Coord {
    let v = &p.0;
    let lat = v.z.atan2((v.x * v.x + v.y * v.y).sqrt());
    let lng = v.y.atan2(v.x);
    Coord::new((180.0 / PI) * lng, (180.0 / PI) * lat)
}

/// A ring as an `S2Loop`: its vertices (the closing repeat dropped) and whether S2's fixed origin is inside.
#[derive(Debug, Clone)]
pub struct Loop {
    pub vertices: Vec<Point>,
    origin_inside: bool,
}

impl Loop {
    /// The loop of a closed ring, normalized as `S2Loop::Normalize` does (a loop encloses at most half the
    /// sphere, so a ring's orientation does not matter).
    pub fn new(ring: &[Coord]) -> Loop {
        let n = ring.len().saturating_sub(1);
        let mut l = Loop::oriented(ring[..n].iter().map(point).collect());
        if l.area() > 2.0 * PI {
            l.vertices.reverse();
            l = Loop::oriented(l.vertices);
        }
        l
    }

    /// `S2Loop::InitOriginAndBound`: whether the origin is inside follows from whether vertex 1 is, which the
    /// orientation of its two edges decides.
    fn oriented(vertices: Vec<Point>) -> Loop {
        let mut l = Loop { vertices, origin_inside: false };
        if l.vertices.len() >= 3 {
            let v = &l.vertices;
            let v1_inside = ordered_ccw(&v[1].ortho(), &v[0], &v[2], &v[1]);
            if v1_inside != l.contains(&v[1]) {
                l.origin_inside = true;
            }
        }
        l
    }

    /// `S2Loop::Contains(S2Point)` by brute force: the parity of the crossings of the arc from the origin to `p`.
    pub fn contains(&self, p: &Point) -> bool {
        let origin = Point::origin();
        let mut inside = self.origin_inside;
        for (a, b) in self.edges() {
            inside ^= edge_or_vertex_crossing(&origin, p, a, b);
        }
        inside
    }

    /// The loop's edges, the closing one included.
    pub fn edges(&self) -> impl Iterator<Item = (&Point, &Point)> {
        let n = self.vertices.len();
        (0..n).map(move |i| (&self.vertices[i], &self.vertices[(i + 1) % n]))
    }

    /// The area on the left of the loop's edges, in steradians, as the sum of a fan of signed triangles
    /// (`S2Loop::GetArea`).
    fn area(&self) -> f64 {
        let v = &self.vertices;
        let mut sum = 0.0;
        for i in 1..v.len().saturating_sub(1) {
            let a = point_area(&v[0], &v[i], &v[i + 1]);
            sum += match robust_sign(&v[0], &v[i], &v[i + 1]) {
                Direction::CounterClockwise => a,
                Direction::Clockwise => -a,
                Direction::Indeterminate => 0.0,
            };
        }
        if sum < 0.0 {
            sum + 4.0 * PI
        } else {
            sum
        }
    }
}

/// A geography in S2 points: what every function below works on.
#[derive(Debug, Clone)]
pub enum Shape {
    Point(Point),
    Line(Vec<Point>),
    Polygon(Vec<Loop>),
}

impl Shape {
    pub fn new(g: &Geography) -> Shape {
        match g {
            Geography::Point(c) => Shape::Point(point(c)),
            Geography::LineString(cs) => Shape::Line(cs.iter().map(point).collect()),
            Geography::Polygon(rings) => Shape::Polygon(rings.iter().map(|r| Loop::new(r)).collect()),
        }
    }

    /// Every edge of the shape (none for a point).
    pub fn edges(&self) -> Vec<(&Point, &Point)> {
        match self {
            Shape::Point(_) => Vec::new(),
            Shape::Line(v) => v.windows(2).map(|w| (&w[0], &w[1])).collect(),
            Shape::Polygon(loops) => loops.iter().flat_map(|l| l.edges()).collect(),
        }
    }

    /// Every vertex of the shape.
    pub fn vertices(&self) -> Vec<&Point> {
        match self {
            Shape::Point(p) => vec![p],
            Shape::Line(v) => v.iter().collect(),
            Shape::Polygon(loops) => loops.iter().flat_map(|l| l.vertices.iter()).collect(),
        }
    }

    /// `S2Polygon::Contains(S2Point)`: inside an odd number of rings (a hole's points are inside two).
    pub fn polygon_contains(loops: &[Loop], p: &Point) -> bool {
        loops.iter().filter(|l| l.contains(p)).count() % 2 == 1
    }

    /// Whether the shape meets the leaf cell of `p` (`MayIntersect(S2Cell(p))`, as NebulaGraph tests a point
    /// against a line or polygon).
    fn meets_leaf_of(&self, p: &Point) -> bool {
        let cell = Cell::from(CellID::from(p));
        self.intersects_cell(&cell)
    }

    /// Whether the shape meets `cell` (S2's `MayIntersect(S2Cell)`): a vertex or an edge in it, or, for a polygon,
    /// its center inside.
    pub fn intersects_cell(&self, cell: &Cell) -> bool {
        match self {
            Shape::Point(p) => cell.contains_point(p),
            Shape::Line(_) | Shape::Polygon(_) => {
                if self.edges().into_iter().any(|(a, b)| edge_meets_cell(a, b, cell)) {
                    return true;
                }
                matches!(self, Shape::Polygon(l) if Shape::polygon_contains(l, &cell.center()))
            }
        }
    }

    /// Whether a polygon holds all of `cell` (S2's `Contains(S2Cell)`); false for points and lines.
    pub fn contains_cell(&self, cell: &Cell) -> bool {
        let Shape::Polygon(loops) = self else { return false };
        let corners = cell.vertices();
        corners.iter().all(|c| Shape::polygon_contains(loops, c))
            && !self.edges().into_iter().any(|(a, b)| edge_meets_cell(a, b, cell))
    }
}

/// Whether edge `ab` has a point in `cell`: an end inside, or a crossing with one of the cell's four edges (which
/// are great-circle arcs too).
fn edge_meets_cell(a: &Point, b: &Point, cell: &Cell) -> bool {
    if cell.contains_point(a) || cell.contains_point(b) {
        return true;
    }
    let v = cell.vertices();
    (0..4).any(|k| crossing_sign(a, b, &v[k], &v[(k + 1) % 4]) != Crossing::DoNotCross)
}

/// Whether two edges share a point (S2's `CrossingSign >= 0`: a crossing or a shared vertex).
fn edges_touch(a: (&Point, &Point), b: (&Point, &Point)) -> bool {
    crossing_sign(a.0, a.1, b.0, b.1) != Crossing::DoNotCross
}

fn any_edges_touch(x: &Shape, y: &Shape) -> bool {
    let ey = y.edges();
    x.edges().into_iter().any(|a| ey.iter().any(|b| edges_touch(a, *b)))
}

/// `S2Polyline::FindValidationError`: no two adjacent vertices identical or antipodal.
pub fn check_line(coords: &[Coord]) -> Result<(), String> {
    let v: Vec<Point> = coords.iter().map(point).collect();
    for (i, w) in v.windows(2).enumerate() {
        if w[0] == w[1] || w[0].0 == w[1].0 * -1.0 {
            return Err(format!(
                "FindValidationError, S2 Errorcode: 1, message: Vertices {i} and {} are identical or antipodal",
                i + 1
            ));
        }
    }
    Ok(())
}

/// `S2Polygon::FindValidationError`: each ring has three distinct vertices, none repeated, no two of its edges
/// cross, and no two rings cross.
pub fn check_polygon(rings: &[Vec<Coord>]) -> Result<(), String> {
    let loops: Vec<Loop> = rings.iter().map(|r| Loop::new(r)).collect();
    for (i, l) in loops.iter().enumerate() {
        let v = &l.vertices;
        if v.len() < 3 {
            return Err(format!("FindValidationError, S2 Errorcode: 1, message: Loop {i}: Non-empty loops must have at least 3 vertices"));
        }
        for a in 0..v.len() {
            for b in a + 1..v.len() {
                if v[a] == v[b] {
                    return Err(format!(
                        "FindValidationError, S2 Errorcode: 1, message: Loop {i}: Duplicate vertices: {a} and {b}"
                    ));
                }
            }
        }
        let edges: Vec<_> = l.edges().collect();
        for a in 0..edges.len() {
            for b in a + 2..edges.len() {
                if a == 0 && b == edges.len() - 1 {
                    continue;
                }
                if crossing_sign(edges[a].0, edges[a].1, edges[b].0, edges[b].1) == Crossing::Cross {
                    return Err(format!(
                        "FindValidationError, S2 Errorcode: 1, message: Loop {i}: Edge {a} crosses edge {b}"
                    ));
                }
            }
        }
    }
    for i in 0..loops.len() {
        for j in i + 1..loops.len() {
            for a in loops[i].edges() {
                if loops[j].edges().any(|b| crossing_sign(a.0, a.1, b.0, b.1) == Crossing::Cross) {
                    return Err(format!("FindValidationError, S2 Errorcode: 1, message: Loop {i} crosses loop {j}"));
                }
            }
        }
    }
    Ok(())
}

/// `GeoFunction::intersects`.
pub fn intersects(a: &Geography, b: &Geography) -> bool {
    let (x, y) = (Shape::new(a), Shape::new(b));
    shapes_intersect(&x, &y)
}

fn shapes_intersect(x: &Shape, y: &Shape) -> bool {
    match (x, y) {
        (Shape::Point(p), Shape::Point(q)) => CellID::from(p) == CellID::from(q),
        (Shape::Point(p), other) | (other, Shape::Point(p)) => other.meets_leaf_of(p),
        (Shape::Line(_), Shape::Line(_)) => any_edges_touch(x, y),
        (Shape::Polygon(loops), other @ Shape::Line(_)) | (other @ Shape::Line(_), Shape::Polygon(loops)) => {
            other.vertices().into_iter().any(|p| Shape::polygon_contains(loops, p)) || any_edges_touch(x, y)
        }
        (Shape::Polygon(la), Shape::Polygon(lb)) => {
            any_edges_touch(x, y)
                || y.vertices().into_iter().any(|p| Shape::polygon_contains(la, p))
                || x.vertices().into_iter().any(|p| Shape::polygon_contains(lb, p))
        }
    }
}

/// Angle (radians) within which a point is on an edge, for `covers` of shared boundaries (S2's `NearlyCovers`
/// takes 1e-15; rounding of a computed middle needs a little more).
const ON_EDGE: f64 = 1e-14;

fn on_boundary(loops: &[Loop], p: &Point) -> bool {
    loops.iter().flat_map(|l| l.edges()).any(|(a, b)| distance_from_segment(p, a, b).rad() <= ON_EDGE)
}

fn on_line(line: &[Point], p: &Point) -> bool {
    line.windows(2).any(|w| distance_from_segment(p, &w[0], &w[1]).rad() <= ON_EDGE)
}

/// The middle of edge `ab` (unit length).
fn midpoint(a: &Point, b: &Point) -> Point {
    (a + b).normalize()
}

/// `GeoFunction::covers`: `a` holds all of `b`.
pub fn covers(a: &Geography, b: &Geography) -> bool {
    let (x, y) = (Shape::new(a), Shape::new(b));
    match (&x, &y) {
        (Shape::Point(p), Shape::Point(q)) => p == q,
        (Shape::Point(_), _) => false,
        (Shape::Line(_), Shape::Point(q)) => x.meets_leaf_of(q),
        // S2Polyline::NearlyCovers (either direction): every vertex and every edge's middle of `b` on `a`.
        (Shape::Line(l), Shape::Line(m)) => {
            m.iter().all(|p| on_line(l, p)) && m.windows(2).all(|w| on_line(l, &midpoint(&w[0], &w[1])))
        }
        (Shape::Line(_), Shape::Polygon(_)) => false,
        (Shape::Polygon(loops), Shape::Point(q)) => Shape::polygon_contains(loops, q),
        // S2Polygon::Contains: no edge of `b` crosses the boundary, and its vertices and edge middles are inside
        // or on the boundary.
        (Shape::Polygon(loops), Shape::Line(_) | Shape::Polygon(_)) => {
            let inside = |p: &Point| Shape::polygon_contains(loops, p) || on_boundary(loops, p);
            let ex = x.edges();
            let edges_inside = y.edges().into_iter().all(|(p, q)| {
                inside(p)
                    && inside(q)
                    && inside(&midpoint(p, q))
                    && !ex.iter().any(|(c, d)| crossing_sign(p, q, c, d) == Crossing::Cross)
            });
            // A ring of `a` strictly inside polygon `b` (a hole of `a` in it) leaves part of `b` uncovered.
            let ring_inside = match &y {
                Shape::Polygon(inner) => {
                    x.vertices().into_iter().any(|v| Shape::polygon_contains(inner, v) && !on_boundary(inner, v))
                }
                _ => false,
            };
            edges_inside && !ring_inside
        }
    }
}

/// `GeoFunction::distance`, in meters: 0 when the shapes meet, else the shortest great-circle distance between
/// them (from a vertex of one to an edge of the other, or between two points).
pub fn distance(a: &Geography, b: &Geography) -> f64 {
    let (x, y) = (Shape::new(a), Shape::new(b));
    distance_angle(&x, &y) * EARTH_RADIUS_METERS
}

fn distance_angle(x: &Shape, y: &Shape) -> f64 {
    if let (Shape::Point(p), Shape::Point(q)) = (x, y) {
        return p.distance(q).rad();
    }
    let inside = |s: &Shape, p: &Point| matches!(s, Shape::Polygon(l) if Shape::polygon_contains(l, p));
    if x.vertices().into_iter().any(|p| inside(y, p))
        || y.vertices().into_iter().any(|p| inside(x, p))
        || any_edges_touch(x, y)
    {
        return 0.0;
    }
    let one_way = |from: &Shape, to: &Shape| -> f64 {
        let edges = to.edges();
        let mut best = f64::INFINITY;
        for p in from.vertices() {
            for (a, b) in &edges {
                best = best.min(distance_from_segment(p, a, b).rad());
            }
        }
        best
    };
    one_way(x, y).min(one_way(y, x))
}

/// `GeoFunction::dWithin`.
pub fn dwithin(a: &Geography, b: &Geography, meters: f64, exclusive: bool) -> bool {
    let d = distance(a, b);
    if exclusive {
        d < meters
    } else {
        d <= meters
    }
}

/// The zero vector, where centroid sums start (not a point on the sphere).
const ZERO: Point = Point(s2::r3::vector::Vector { x: 0.0, y: 0.0, z: 0.0 });

/// `S2::TrueCentroid(a, b)` of an edge: toward its middle, with length twice the sine of half its angle.
fn edge_centroid(a: &Point, b: &Point) -> Point {
    let vdiff = a - b;
    let vsum = a + b;
    let (sin2, cos2) = (vdiff.0.norm2(), vsum.0.norm2());
    if cos2 == 0.0 {
        return ZERO;
    }
    vsum * (sin2 / cos2).sqrt()
}

/// `Geography::centroid`: a point is its own; a line's is `S2Polyline::GetCentroid` (edge centroids summed); a
/// polygon's `S2Polygon::GetCentroid` (its rings' triangle fans, holes subtracted).
pub fn centroid(g: &Geography) -> Coord {
    if let Geography::Point(c) = g {
        return *c;
    }
    match Shape::new(g) {
        Shape::Point(_) => unreachable!("points returned above"),
        Shape::Line(v) => {
            let mut sum = ZERO;
            for w in v.windows(2) {
                sum = sum + edge_centroid(&w[0], &w[1]);
            }
            coord(&sum)
        }
        Shape::Polygon(loops) => {
            let mut sum = ZERO;
            for (i, l) in loops.iter().enumerate() {
                let v = &l.vertices;
                let mut c = ZERO;
                for k in 1..v.len().saturating_sub(1) {
                    c = c + true_centroid(&v[0], &v[k], &v[k + 1]);
                }
                // A ring inside an odd number of the others is a hole.
                let depth = loops.iter().enumerate().filter(|(j, o)| *j != i && o.contains(&v[0])).count();
                sum = if depth % 2 == 1 { sum - c } else { sum + c };
            }
            coord(&sum)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(wkt: &str) -> Geography {
        Geography::from_wkt(wkt).unwrap()
    }

    #[test]
    fn a_ring_is_the_same_polygon_either_way_round() {
        let ccw = g("POLYGON((0 0, 2 0, 2 2, 0 2, 0 0))");
        let cw = g("POLYGON((0 0, 0 2, 2 2, 2 0, 0 0))");
        for poly in [&ccw, &cw] {
            assert!(covers(poly, &g("POINT(1 1)")));
            assert!(!covers(poly, &g("POINT(3 1)")));
            assert!(!covers(poly, &g("POINT(-179 -60)")));
        }
    }

    #[test]
    fn a_hole_is_not_covered() {
        let p = g("POLYGON((0 0, 4 0, 4 4, 0 4, 0 0), (1 1, 3 1, 3 3, 1 3, 1 1))");
        assert!(!covers(&p, &g("POINT(2 2)")));
        assert!(covers(&p, &g("POINT(0.5 0.5)")));
        assert!(!intersects(&p, &g("LINESTRING(1.5 1.5, 2.5 2.5)")));
        assert!(intersects(&p, &g("LINESTRING(0.5 0.5, 2.5 2.5)")));
    }

    #[test]
    fn distances_are_great_circle_meters() {
        // Ten degrees of one meridian: 10 * pi / 180 radians of the S2 earth.
        let d = distance(&g("POINT(20 10)"), &g("POINT(20 20)"));
        assert!((d - 10.0 * PI / 180.0 * EARTH_RADIUS_METERS).abs() < 1e-6, "{d}");
        assert_eq!(distance(&g("POINT(1 1)"), &g("POLYGON((0 0, 2 0, 2 2, 0 2, 0 0))")), 0.0);
        let to_line = distance(&g("POINT(0 1)"), &g("LINESTRING(-1 0, 1 0)"));
        assert!((to_line - PI / 180.0 * EARTH_RADIUS_METERS).abs() < 1e-6, "{to_line}");
    }

    #[test]
    fn a_polygon_covers_itself_and_its_inner_lines() {
        let p = g("POLYGON((0 0, 2 0, 2 2, 0 2, 0 0))");
        assert!(covers(&p, &p));
        assert!(covers(&p, &g("LINESTRING(0.5 0.5, 1.5 1.5)")));
        assert!(!covers(&p, &g("LINESTRING(0.5 0.5, 2.5 1.5)")));
        assert!(covers(&g("LINESTRING(0 0, 2 0, 4 0)"), &g("LINESTRING(3 0, 1 0)")));
    }
}
