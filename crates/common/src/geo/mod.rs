//! NebulaGraph's GEOGRAPHY values: points, linestrings and polygons on the sphere, with coordinates as
//! (longitude, latitude) in degrees.
//!
//! - this module: the value type, NebulaGraph's normalization and validity rules (`Geography.cpp`), WKT in and out
//!   (parsed by the `wkt` crate, written as `WKTWriter.cpp` writes) and WKB (the row codec's encoding);
//! - [`sphere`]: the predicates, distances and centroids of NebulaGraph's `GeoFunction.cpp`, computed with the `s2`
//!   crate's robust spherical primitives (edges are great-circle arcs, as in S2);
//! - [`cells`]: S2 cell ids and coverings, for `S2_CellIdFromPoint`, `S2_CoveringCellIds` and the geo index.
//!
//! See `docs/design/geography.md`.

pub mod cells;
pub mod functions;
pub mod sphere;

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

/// The shape a `geography(...)` property is declared with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub enum GeoShape {
    Point,
    LineString,
    Polygon,
}

impl GeoShape {
    /// The name in `geography(point)`, as `DESCRIBE TAG` prints it.
    pub fn name(self) -> &'static str {
        match self {
            GeoShape::Point => "point",
            GeoShape::LineString => "linestring",
            GeoShape::Polygon => "polygon",
        }
    }

    pub fn parse(name: &str) -> Option<GeoShape> {
        Some(match name.to_ascii_lowercase().as_str() {
            "point" => GeoShape::Point,
            "linestring" => GeoShape::LineString,
            "polygon" => GeoShape::Polygon,
            _ => return None,
        })
    }
}

/// A longitude (`x`) and latitude (`y`), in degrees.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Coord {
    pub x: f64,
    pub y: f64,
}

/// NebulaGraph's `kEpsilon`: coordinates closer than this in both axes are equal (`Coordinate::operator==`).
const COORD_EPSILON: f64 = 1e-8;

impl Coord {
    pub fn new(x: f64, y: f64) -> Coord {
        Coord { x, y }
    }

    /// `Coordinate::operator==`.
    pub fn approx_eq(&self, o: &Coord) -> bool {
        (self.x - o.x).abs() < COORD_EPSILON && (self.y - o.y).abs() < COORD_EPSILON
    }

    /// `Coordinate::isValid`.
    fn check(&self) -> Result<(), String> {
        if self.x.abs() > 180.0 || self.x.is_nan() {
            return Err(format!("Invalid longitude: {:.6}", self.x));
        }
        if self.y.abs() > 90.0 || self.y.is_nan() {
            return Err(format!("Invalid latitude: {:.6}", self.y));
        }
        Ok(())
    }
}

/// One geography value.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Geography {
    Point(Coord),
    /// At least two coordinates once valid.
    LineString(Vec<Coord>),
    /// Rings (the first the shell, the others holes), each closed (first == last) with at least four coordinates
    /// once valid.
    Polygon(Vec<Vec<Coord>>),
}

impl Geography {
    pub fn shape(&self) -> GeoShape {
        match self {
            Geography::Point(_) => GeoShape::Point,
            Geography::LineString(_) => GeoShape::LineString,
            Geography::Polygon(_) => GeoShape::Polygon,
        }
    }

    /// `ST_GeogFromText`: parses `text`, normalizes and validates the result (NebulaGraph's
    /// `Geography::fromWKT(wkt, true, true)`).
    pub fn from_wkt(text: &str) -> Result<Geography, String> {
        let mut g = parse_wkt(text)?;
        g.normalize();
        g.check().map_err(|e| format!("The geography {g} built from wkt {text} is invalid, error: {e}"))?;
        Ok(g)
    }

    /// NebulaGraph's normalization: adjacent duplicate coordinates (equal within `kEpsilon`) of lines and rings
    /// are removed.
    pub fn normalize(&mut self) {
        match self {
            Geography::Point(_) => {}
            Geography::LineString(c) => c.dedup_by(|a, b| a.approx_eq(b)),
            Geography::Polygon(rings) => rings.iter_mut().for_each(|r| r.dedup_by(|a, b| a.approx_eq(b))),
        }
    }

    /// `Geography::operator==`: the same shape and coordinates equal within `kEpsilon`.
    pub fn approx_eq(&self, other: &Geography) -> bool {
        let same = |a: &[Coord], b: &[Coord]| a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.approx_eq(y));
        match (self, other) {
            (Geography::Point(a), Geography::Point(b)) => a.approx_eq(b),
            (Geography::LineString(a), Geography::LineString(b)) => same(a, b),
            (Geography::Polygon(a), Geography::Polygon(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y))
            }
            _ => false,
        }
    }

    /// `Geography::isValid`: the coordinates' ranges, the counts, closed rings, and S2's validation of the shape
    /// (no adjacent identical or antipodal vertices, no self-intersecting rings, no crossing rings).
    pub fn check(&self) -> Result<(), String> {
        match self {
            Geography::Point(c) => c.check(),
            Geography::LineString(coords) => {
                if coords.len() < 2 {
                    return Err(format!(
                        "LineString contains {} coordinates, requires at least 2 coordinates",
                        coords.len()
                    ));
                }
                for (i, c) in coords.iter().enumerate() {
                    c.check().map_err(|e| format!("The {i}-th coordinate is invalid: {e}"))?;
                }
                sphere::check_line(coords)
            }
            Geography::Polygon(rings) => {
                for (i, ring) in rings.iter().enumerate() {
                    if ring.len() < 4 {
                        return Err(format!(
                            "Polygon's {i}-th LinearRing contains {} coordinates, requires at least 4",
                            ring.len()
                        ));
                    }
                    if ring.first() != ring.last() {
                        return Err(format!("Polygon's {i}-th LinearRing is not closed"));
                    }
                    for (j, c) in ring.iter().enumerate() {
                        c.check().map_err(|e| format!("The {j}-th coordinate of {i}-th LinearRing is invalid: {e}"))?;
                    }
                }
                sphere::check_polygon(rings)
            }
        }
    }

    pub fn is_valid(&self) -> bool {
        self.check().is_ok()
    }

    /// The text NebulaGraph's `WKTWriter` writes: `POINT(3 8)`, `LINESTRING(1 2, 3 4)`, `POLYGON((0 0, 1 0, 1 1,
    /// 0 0), (...))`.
    pub fn wkt(&self) -> String {
        self.to_string()
    }

    /// Well-known binary, little-endian, 2D: what the row codec stores and `ST_AsBinary` returns (as hex).
    pub fn to_wkb(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(21);
        out.push(1);
        let coord = |c: &Coord, out: &mut Vec<u8>| {
            out.extend_from_slice(&c.x.to_le_bytes());
            out.extend_from_slice(&c.y.to_le_bytes());
        };
        match self {
            Geography::Point(c) => {
                out.extend_from_slice(&1u32.to_le_bytes());
                coord(c, &mut out);
            }
            Geography::LineString(cs) => {
                out.extend_from_slice(&2u32.to_le_bytes());
                out.extend_from_slice(&(cs.len() as u32).to_le_bytes());
                cs.iter().for_each(|c| coord(c, &mut out));
            }
            Geography::Polygon(rings) => {
                out.extend_from_slice(&3u32.to_le_bytes());
                out.extend_from_slice(&(rings.len() as u32).to_le_bytes());
                for r in rings {
                    out.extend_from_slice(&(r.len() as u32).to_le_bytes());
                    r.iter().for_each(|c| coord(c, &mut out));
                }
            }
        }
        out
    }

    /// Reads well-known binary of a point, linestring or polygon (either byte order, 2D). Counts are checked
    /// against the bytes present before anything is allocated.
    pub fn from_wkb(bytes: &[u8]) -> Result<Geography, String> {
        let mut r = WkbReader { bytes, pos: 0, little: true };
        let g = r.geography()?;
        if let Geography::Polygon(rings) = &g {
            if rings.iter().map(Vec::len).sum::<usize>() > crate::limits::GEO_VERTICES_MAX {
                return Err(format!("More than {} vertices", crate::limits::GEO_VERTICES_MAX));
            }
        }
        if r.pos != bytes.len() {
            return Err("trailing bytes after the geometry".into());
        }
        Ok(g)
    }

    /// A total order for sorting and DISTINCT: by shape, then coordinates.
    pub fn total_cmp(&self, other: &Geography) -> Ordering {
        fn coords(a: &[Coord], b: &[Coord]) -> Ordering {
            for (x, y) in a.iter().zip(b) {
                let o = x.x.total_cmp(&y.x).then(x.y.total_cmp(&y.y));
                if o != Ordering::Equal {
                    return o;
                }
            }
            a.len().cmp(&b.len())
        }
        match (self, other) {
            (Geography::Point(a), Geography::Point(b)) => coords(&[*a], &[*b]),
            (Geography::LineString(a), Geography::LineString(b)) => coords(a, b),
            (Geography::Polygon(a), Geography::Polygon(b)) => {
                for (x, y) in a.iter().zip(b) {
                    let o = coords(x, y);
                    if o != Ordering::Equal {
                        return o;
                    }
                }
                a.len().cmp(&b.len())
            }
            _ => self.shape().cmp(&other.shape()),
        }
    }

    /// Feeds the shape and every coordinate's bits to `state` (equal geographies hash equal).
    pub fn hash_into<H: std::hash::Hasher>(&self, state: &mut H) {
        use std::hash::Hash;
        self.shape().hash(state);
        let mut coord = |c: &Coord| {
            c.x.to_bits().hash(state);
            c.y.to_bits().hash(state);
        };
        match self {
            Geography::Point(c) => coord(c),
            Geography::LineString(cs) => cs.iter().for_each(coord),
            Geography::Polygon(rings) => rings.iter().flatten().for_each(coord),
        }
    }
}

/// Parses WKT without normalizing or validating. Only 2D points, linestrings and polygons, as NebulaGraph's
/// `WKTReader` accepts; nesting is checked before the `wkt` crate's recursive parser sees the text, so no input
/// can take it deep.
pub fn parse_wkt(text: &str) -> Result<Geography, String> {
    if text.bytes().filter(|b| *b == b',').count() >= crate::limits::GEO_VERTICES_MAX {
        return Err(format!("More than {} vertices", crate::limits::GEO_VERTICES_MAX));
    }
    // NebulaGraph's WKT grammar has no `+` sign and nothing after the geometry; the `wkt` crate takes both.
    if text.contains('+') || !text.trim_end().ends_with(')') {
        return Err("Invalid wkt".into());
    }
    let mut depth = 0usize;
    for b in text.bytes() {
        match b {
            b'(' => {
                depth += 1;
                if depth > 2 {
                    return Err("Only 2-dimensional point, linestring and polygon are supported".into());
                }
            }
            b')' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    let parsed = wkt::Wkt::<f64>::from_str(text).map_err(|e| format!("Invalid wkt: {e}"))?;

    let coord = |c: &wkt::types::Coord<f64>| -> Result<Coord, String> {
        if c.z.is_some() || c.m.is_some() {
            return Err("Only 2-dimensional coordinates are supported".into());
        }
        Ok(Coord::new(c.x, c.y))
    };
    let line = |l: &wkt::types::LineString<f64>| -> Result<Vec<Coord>, String> { l.0.iter().map(coord).collect() };
    match &parsed.item {
        wkt::Geometry::Point(wkt::types::Point(Some(c))) => Ok(Geography::Point(coord(c)?)),
        wkt::Geometry::LineString(l) if !l.0.is_empty() => Ok(Geography::LineString(line(l)?)),
        wkt::Geometry::Polygon(p) if !p.0.is_empty() => {
            Ok(Geography::Polygon(p.0.iter().map(line).collect::<Result<_, _>>()?))
        }
        _ => Err("Only non-empty point, linestring and polygon are supported".into()),
    }
}

struct WkbReader<'a> {
    bytes: &'a [u8],
    pos: usize,
    little: bool,
}

impl WkbReader<'_> {
    fn take<const N: usize>(&mut self) -> Result<[u8; N], String> {
        let end = self.pos.checked_add(N).filter(|e| *e <= self.bytes.len()).ok_or("truncated wkb")?;
        let b: [u8; N] = self.bytes[self.pos..end].try_into().expect("length checked");
        self.pos = end;
        Ok(b)
    }

    fn u32(&mut self) -> Result<u32, String> {
        let b = self.take::<4>()?;
        Ok(if self.little { u32::from_le_bytes(b) } else { u32::from_be_bytes(b) })
    }

    fn f64(&mut self) -> Result<f64, String> {
        let b = self.take::<8>()?;
        Ok(if self.little { f64::from_le_bytes(b) } else { f64::from_be_bytes(b) })
    }

    fn coord(&mut self) -> Result<Coord, String> {
        Ok(Coord::new(self.f64()?, self.f64()?))
    }

    /// A count of items of at least `min_bytes` each, refused when the rest of the input cannot hold them.
    fn count(&mut self, min_bytes: usize) -> Result<usize, String> {
        let n = self.u32()? as usize;
        if n > crate::limits::GEO_VERTICES_MAX {
            return Err(format!("More than {} vertices", crate::limits::GEO_VERTICES_MAX));
        }
        if n.saturating_mul(min_bytes) > self.bytes.len() - self.pos {
            return Err("wkb count larger than its bytes".into());
        }
        Ok(n)
    }

    fn coords(&mut self) -> Result<Vec<Coord>, String> {
        let n = self.count(16)?;
        (0..n).map(|_| self.coord()).collect()
    }

    fn geography(&mut self) -> Result<Geography, String> {
        self.little = match self.take::<1>()?[0] {
            0 => false,
            1 => true,
            b => return Err(format!("bad wkb byte order {b}")),
        };
        match self.u32()? {
            1 => Ok(Geography::Point(self.coord()?)),
            2 => Ok(Geography::LineString(self.coords()?)),
            3 => {
                let n = self.count(4)?;
                Ok(Geography::Polygon((0..n).map(|_| self.coords()).collect::<Result<_, _>>()?))
            }
            t => Err(format!("unsupported wkb geometry type {t}")),
        }
    }
}

/// A double as folly's `to<std::string>` prints it: the shortest text that reads back to it, in exponent form
/// (`1E-7`) below 1e-6 and from 1e21 up (double-conversion's SHORTEST with its default decimal range).
fn write_double(f: &mut fmt::Formatter<'_>, v: f64) -> fmt::Result {
    let a = v.abs();
    if a != 0.0 && !(1e-6..1e21).contains(&a) {
        return f.write_str(&format!("{v:e}").replace('e', "E"));
    }
    write!(f, "{v}")
}

fn write_coords(f: &mut fmt::Formatter<'_>, cs: &[Coord]) -> fmt::Result {
    for (i, c) in cs.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write_double(f, c.x)?;
        f.write_str(" ")?;
        write_double(f, c.y)?;
    }
    Ok(())
}

impl fmt::Display for Geography {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Geography::Point(c) => {
                f.write_str("POINT(")?;
                write_coords(f, &[*c])?;
            }
            Geography::LineString(cs) => {
                f.write_str("LINESTRING(")?;
                write_coords(f, cs)?;
            }
            Geography::Polygon(rings) => {
                f.write_str("POLYGON(")?;
                for (i, r) in rings.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    f.write_str("(")?;
                    write_coords(f, r)?;
                    f.write_str(")")?;
                }
            }
        }
        f.write_str(")")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wkt_round_trips_in_nebula_notation() {
        for (text, out) in [
            ("POINT(3 8)", "POINT(3 8)"),
            ("point ( -1.5  2.25 )", "POINT(-1.5 2.25)"),
            ("LINESTRING(3 8, 4.7 73.23)", "LINESTRING(3 8, 4.7 73.23)"),
            ("Polygon((0 1, 1 2, 2 3, 0 1))", "POLYGON((0 1, 1 2, 2 3, 0 1))"),
        ] {
            assert_eq!(parse_wkt(text).unwrap().wkt(), out);
        }
        for bad in ["POINT EMPTY", "MULTIPOINT((1 2))", "POINT(1 2 3)", "POINT(1)", "GEOMETRYCOLLECTION(((((", ""] {
            assert!(parse_wkt(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn wkb_round_trips_and_refuses_lying_counts() {
        let g = Geography::from_wkt("POLYGON((0 0, 1 0, 1 1, 0 0), (0.1 0.1, 0.2 0.1, 0.2 0.2, 0.1 0.1))").unwrap();
        assert_eq!(Geography::from_wkb(&g.to_wkb()).unwrap(), g);
        let p = Geography::Point(Coord::new(1.0, 2.0));
        let hex: String = p.to_wkb().iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex, "0101000000000000000000f03f0000000000000040");
        let mut lying = Geography::LineString(vec![Coord::new(0.0, 0.0); 2]).to_wkb();
        lying[5..9].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(Geography::from_wkb(&lying).is_err());
        assert!(Geography::from_wkb(&[1, 1, 0, 0]).is_err());
    }

    #[test]
    fn validity_follows_nebula_rules() {
        assert!(Geography::from_wkt("LINESTRING(1 1, 1 1)").is_err());
        assert!(Geography::from_wkt("LINESTRING(1 1, 1 1, 2 2)").is_ok());
        assert!(Geography::from_wkt("POINT(181 0)").is_err());
        assert!(Geography::from_wkt("POINT(0 90.5)").is_err());
        assert!(Geography::from_wkt("POLYGON((0 0, 1 0, 1 1, 0 1))").is_err(), "not closed");
        assert!(Geography::from_wkt("POLYGON((0 0, 1 0, 0 0))").is_err(), "too few");
        assert!(Geography::from_wkt("POLYGON((0 0, 2 2, 2 0, 0 2, 0 0))").is_err(), "bow tie");
        assert!(Geography::from_wkt("POLYGON((0 0, 2 0, 2 2, 0 2, 0 0))").is_ok());
    }
}
