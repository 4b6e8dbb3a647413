//! Seeded, deterministic datasets, written as CSV files with a mapping (`config.yaml`) for `quiver import`; the
//! peers read the same CSV files.
//!
//! - `social`: LDBC-like. `person(first_name, last_name, gender, birthday, creation_date)` and `knows(time)`;
//!   out-degrees follow a discrete Pareto law (alpha 2, a long tail of super-connected persons); birthdays are
//!   `yyyymmdd` and times `yyyymmddHHMMSSmmm` integers as in LDBC's CSV files.
//! - `ldbc-sf01`: the real LDBC SNB SF0.1 persons and knows edges, converted to the `social` files.
//! - `ldbc-snb-test`: the complete LDBC SNB Interactive v1 test network (persons, messages, forums, places and the
//!   edges between them that the short reads IS1-IS7 walk), converted to the `snb` files ([`snb`]).
//! - `ragedb`: RageDB's shape, persons LIKE `k` distinct random items with a double `weight`.

use quiver_common::rng::Rng;
use std::fmt::Write as _;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Persons, knows edges.
#[derive(Debug, Clone, Copy)]
pub struct SocialScale {
    pub persons: u64,
    pub knows: u64,
}

pub fn social_scale(name: &str) -> Option<SocialScale> {
    Some(match name {
        "sf0.1" => SocialScale { persons: 1_500, knows: 15_000 },
        "sf1" => SocialScale { persons: 10_000, knows: 180_000 },
        "sf10" => SocialScale { persons: 65_000, knows: 1_900_000 },
        "sf100" => SocialScale { persons: 450_000, knows: 20_000_000 },
        _ => return None,
    })
}

#[derive(Debug, Clone, Copy)]
pub struct RageScale {
    pub persons: u64,
    pub items: u64,
    pub likes_per_person: u64,
}

/// A generated dataset: where its files and mapping are, and the VIDs queries start from.
#[derive(Debug, Clone)]
pub struct Dataset {
    pub name: String,
    pub space: String,
    pub dir: PathBuf,
    pub vertices: u64,
    pub edges: u64,
    /// Start vertices, drawn with the dataset's seed from vertices with at least one out-edge.
    pub starts: Vec<i64>,
    /// The messages the message reads (IS4-IS7) start from, drawn with the seed (empty but for `snb`).
    pub message_starts: Vec<i64>,
}

impl Dataset {
    pub fn mapping(&self) -> PathBuf {
        self.dir.join("config.yaml")
    }
}

fn io_err(path: &Path, e: std::io::Error) -> String {
    format!("{}: {e}", path.display())
}

fn create(path: &Path) -> Result<BufWriter<std::fs::File>, String> {
    std::fs::File::create(path).map(|f| BufWriter::with_capacity(1 << 20, f)).map_err(|e| io_err(path, e))
}

const FIRST: &[&str] = &[
    "Mahinda", "Carmen", "Hossein", "Jan", "Ali", "Wei", "Chen", "Ana", "Jie", "Yang", "Abdul", "Jun", "Ivan", "Maria",
    "Karl", "Otto", "Rahul", "Eva", "Mehmet", "Lin", "Anh", "Bryn", "John", "Zhang", "Ken", "Luis", "Marc", "Hans",
];
const LAST: &[&str] = &[
    "Perera",
    "Lepland",
    "Forouhar",
    "Zakrzewski",
    "Khan",
    "Wang",
    "Li",
    "Garcia",
    "Liu",
    "Yamada",
    "Rahman",
    "Kim",
    "Ivanov",
    "Silva",
    "Muller",
    "Schmidt",
    "Sharma",
    "Nagy",
    "Yilmaz",
    "Nguyen",
    "Davies",
    "Smith",
    "Tanaka",
    "Costa",
];

const SOCIAL_MAPPING: &str = r#"space:
  name: {space}
  partitionNum: {parts}
  replicaFactor: 1
  vidType: INT64
schema: |
  CREATE TAG IF NOT EXISTS person(first_name string, last_name string, gender string, birthday int, creation_date int);
  CREATE EDGE IF NOT EXISTS knows(time int);
files:
  - path: ./person.csv
    withHeader: true
    vertex:
      vid: { index: 0, type: int }
      tags:
        - name: person
          props:
            - { name: first_name, type: string, index: 1 }
            - { name: last_name, type: string, index: 2 }
            - { name: gender, type: string, index: 3 }
            - { name: birthday, type: int, index: 4 }
            - { name: creation_date, type: int, index: 5 }
  - path: ./knows.csv
    withHeader: true
    edge:
      name: knows
      srcVID: { index: 0, type: int }
      dstVID: { index: 1, type: int }
      props:
        - { name: time, type: int, index: 2 }
"#;

const RAGE_MAPPING: &str = r#"space:
  name: {space}
  partitionNum: {parts}
  replicaFactor: 1
  vidType: INT64
schema: |
  CREATE TAG IF NOT EXISTS person(id int);
  CREATE TAG IF NOT EXISTS item(id int);
  CREATE EDGE IF NOT EXISTS likes(weight double);
files:
  - path: ./person.csv
    withHeader: true
    vertex:
      vid: { index: 0, type: int }
      tags:
        - name: person
          props:
            - { name: id, type: int, index: 0 }
  - path: ./item.csv
    withHeader: true
    vertex:
      vid: { index: 0, type: int }
      tags:
        - name: item
          props:
            - { name: id, type: int, index: 0 }
  - path: ./likes.csv
    withHeader: true
    edge:
      name: likes
      srcVID: { index: 0, type: int }
      dstVID: { index: 1, type: int }
      props:
        - { name: weight, type: double, index: 2 }
"#;

/// Partitions of the benchmark spaces (NebulaGraph's test used 24 on its cluster; one machine needs fewer).
const PARTS: u32 = 8;

fn write_mapping(dir: &Path, template: &str, space: &str) -> Result<(), String> {
    let path = dir.join("config.yaml");
    std::fs::write(&path, template.replace("{space}", space).replace("{parts}", &PARTS.to_string()))
        .map_err(|e| io_err(&path, e))
}

fn finish(w: BufWriter<std::fs::File>, path: &Path) -> Result<(), String> {
    w.into_inner().map_err(|e| io_err(path, e.into_error()))?.sync_all().map_err(|e| io_err(path, e))
}

fn date(r: &mut Rng, from_year: u64, years: u64) -> u64 {
    (from_year + r.below(years)) * 10_000 + (1 + r.below(12)) * 100 + 1 + r.below(28)
}

fn stamp(r: &mut Rng) -> u64 {
    date(r, 2010, 3) * 1_000_000_000
        + r.below(24) * 10_000_000
        + r.below(60) * 100_000
        + r.below(60) * 1_000
        + r.below(1000)
}

/// Draws `n` start vertices among those with out-edges.
fn draw_starts(r: &mut Rng, with_edges: &[i64], n: usize) -> Vec<i64> {
    (0..n).map(|_| with_edges[r.below(with_edges.len() as u64) as usize]).collect()
}

/// The LDBC-like social graph at `scale`, in `dir`.
pub fn social(dir: &Path, scale: SocialScale, seed: u64, starts: usize) -> Result<Dataset, String> {
    std::fs::create_dir_all(dir).map_err(|e| io_err(dir, e))?;
    let mut r = Rng(seed | 1);
    let p = dir.join("person.csv");
    let mut w = create(&p)?;
    writeln!(w, "id,first_name,last_name,gender,birthday,creation_date").map_err(|e| io_err(&p, e))?;
    // Person ids spread like LDBC's (sparse, large), so VIDs hash over partitions the same way.
    let id = |i: u64| (i * 1_099_511_627_776 / 1_000_000 + i) as i64;
    for i in 0..scale.persons {
        let gender = if r.below(2) == 0 { "male" } else { "female" };
        let (f, l) = (FIRST[r.below(FIRST.len() as u64) as usize], LAST[r.below(LAST.len() as u64) as usize]);
        let (b, c) = (date(&mut r, 1980, 20), stamp(&mut r));
        writeln!(w, "{},{f},{l},{gender},{b},{c}", id(i)).map_err(|e| io_err(&p, e))?;
    }
    finish(w, &p)?;
    // Pareto(alpha = 2) out-degrees with mean knows/persons, capped; then scaled so the total is exact.
    let mean = scale.knows as f64 / scale.persons as f64;
    let cap = (scale.persons - 1).min(20_000) as f64;
    let mut degrees: Vec<u64> = (0..scale.persons)
        .map(|_| {
            let u = (r.next() >> 11) as f64 / (1u64 << 53) as f64;
            ((mean / 2.0) / (1.0 - u).max(1e-12).sqrt()).min(cap) as u64
        })
        .collect();
    let sum: u64 = degrees.iter().sum();
    let mut total = 0;
    for d in degrees.iter_mut() {
        *d = ((*d as f64 * scale.knows as f64 / sum.max(1) as f64) as u64).min(cap as u64);
        total += *d;
    }
    let mut i = 0;
    while total < scale.knows {
        if degrees[i] < cap as u64 {
            degrees[i] += 1;
            total += 1;
        }
        i = (i + 1) % degrees.len();
    }
    let k = dir.join("knows.csv");
    let mut w = create(&k)?;
    writeln!(w, "src,dst,time").map_err(|e| io_err(&k, e))?;
    let mut line = String::new();
    let mut with_edges = Vec::new();
    for (src, &d) in degrees.iter().enumerate() {
        if d > 0 {
            with_edges.push(id(src as u64));
        }
        let mut seen = std::collections::HashSet::with_capacity(d as usize);
        while (seen.len() as u64) < d {
            let dst = r.below(scale.persons);
            if dst != src as u64 && seen.insert(dst) {
                line.clear();
                let _ = writeln!(line, "{},{},{}", id(src as u64), id(dst), stamp(&mut r));
                w.write_all(line.as_bytes()).map_err(|e| io_err(&k, e))?;
            }
        }
    }
    finish(w, &k)?;
    let space = "social".to_string();
    write_mapping(dir, SOCIAL_MAPPING, &space)?;
    let starts = draw_starts(&mut r, &with_edges, starts);
    Ok(Dataset {
        name: format!("social-{}", quiver_server::progress::human(scale.knows as f64)),
        space,
        dir: dir.to_path_buf(),
        vertices: scale.persons,
        edges: scale.knows,
        starts,
        message_starts: Vec::new(),
    })
}

/// The real LDBC SF0.1 persons and knows edges (from `src`, `|`-separated, Neo4j-import headers on some files)
/// converted into the `social` files in `dir`.
pub fn ldbc(src: &Path, dir: &Path, seed: u64, starts: usize) -> Result<Dataset, String> {
    std::fs::create_dir_all(dir).map_err(|e| io_err(dir, e))?;
    let read = |name: &str| -> Result<Vec<Vec<String>>, String> {
        let path = src.join(name);
        let text = std::fs::read_to_string(&path).map_err(|e| io_err(&path, e))?;
        Ok(text
            .lines()
            .filter(|l| !l.is_empty() && !l.contains(":ID") && !l.contains(":START_ID"))
            .map(|l| l.split('|').map(str::to_string).collect())
            .collect())
    };
    let persons = read("Person.csv")?;
    let p = dir.join("person.csv");
    let mut w = create(&p)?;
    writeln!(w, "id,first_name,last_name,gender,birthday,creation_date").map_err(|e| io_err(&p, e))?;
    for f in &persons {
        if f.len() < 6 {
            return Err(format!("{}: a person line with {} fields", src.join("Person.csv").display(), f.len()));
        }
        writeln!(w, "{},{},{},{},{},{}", f[0], f[1], f[2], f[3], f[4], f[5]).map_err(|e| io_err(&p, e))?;
    }
    finish(w, &p)?;
    let k = dir.join("knows.csv");
    let mut w = create(&k)?;
    writeln!(w, "src,dst,time").map_err(|e| io_err(&k, e))?;
    let mut edges = 0;
    let mut with_edges = Vec::new();
    for name in ["Person_knows_Person.csv", "Person_knows_Person_1.csv"] {
        for f in read(name)? {
            if f.len() < 3 {
                return Err(format!("{}: a knows line with {} fields", src.join(name).display(), f.len()));
            }
            writeln!(w, "{},{},{}", f[0], f[1], f[2]).map_err(|e| io_err(&k, e))?;
            with_edges.push(f[0].parse::<i64>().map_err(|_| format!("{name}: person id `{}'", f[0]))?);
            edges += 1;
        }
    }
    finish(w, &k)?;
    with_edges.sort_unstable();
    with_edges.dedup();
    write_mapping(dir, SOCIAL_MAPPING, "ldbc")?;
    let starts = draw_starts(&mut Rng(seed | 1), &with_edges, starts);
    Ok(Dataset {
        name: "ldbc-sf0.1".into(),
        space: "ldbc".into(),
        dir: dir.to_path_buf(),
        vertices: persons.len() as u64,
        edges,
        starts,
        message_starts: Vec::new(),
    })
}

/// RageDB's person-LIKES-item graph.
pub fn ragedb(dir: &Path, scale: RageScale, seed: u64, starts: usize) -> Result<Dataset, String> {
    std::fs::create_dir_all(dir).map_err(|e| io_err(dir, e))?;
    let mut r = Rng(seed | 1);
    let item_id = |i: u64| (scale.persons + i) as i64;
    let p = dir.join("person.csv");
    let mut w = create(&p)?;
    writeln!(w, "id").map_err(|e| io_err(&p, e))?;
    for i in 0..scale.persons {
        writeln!(w, "{i}").map_err(|e| io_err(&p, e))?;
    }
    finish(w, &p)?;
    let it = dir.join("item.csv");
    let mut w = create(&it)?;
    writeln!(w, "id").map_err(|e| io_err(&it, e))?;
    for i in 0..scale.items {
        writeln!(w, "{}", item_id(i)).map_err(|e| io_err(&it, e))?;
    }
    finish(w, &it)?;
    let l = dir.join("likes.csv");
    let mut w = create(&l)?;
    writeln!(w, "src,dst,weight").map_err(|e| io_err(&l, e))?;
    let k = scale.likes_per_person.min(scale.items);
    let mut line = String::new();
    let mut chosen = vec![false; scale.items as usize];
    let mut picked = Vec::with_capacity(k as usize);
    for person in 0..scale.persons {
        picked.clear();
        while (picked.len() as u64) < k {
            let i = r.below(scale.items);
            if !chosen[i as usize] {
                chosen[i as usize] = true;
                picked.push(i);
            }
        }
        for &i in &picked {
            chosen[i as usize] = false;
            line.clear();
            let _ = writeln!(line, "{person},{},{:.3}", item_id(i), r.below(100_000) as f64 / 1000.0);
            w.write_all(line.as_bytes()).map_err(|e| io_err(&l, e))?;
        }
    }
    finish(w, &l)?;
    let space = "ragedb".to_string();
    write_mapping(dir, RAGE_MAPPING, &space)?;
    let persons: Vec<i64> = (0..scale.persons as i64).collect();
    let starts = draw_starts(&mut r, &persons, starts);
    Ok(Dataset {
        name: format!("ragedb-{}", quiver_server::progress::human((scale.persons * k) as f64)),
        space,
        dir: dir.to_path_buf(),
        vertices: scale.persons + scale.items,
        edges: scale.persons * k,
        starts,
        message_starts: Vec::new(),
    })
}

const SNB_MAPPING: &str = r#"space:
  name: {space}
  partitionNum: {parts}
  replicaFactor: 1
  vidType: INT64
schema: |
  CREATE TAG IF NOT EXISTS person(first_name string, last_name string, gender string, birthday int, creation_date int, location_ip string, browser_used string);
  CREATE TAG IF NOT EXISTS message(creation_date int, content string, length int, is_post bool);
  CREATE TAG IF NOT EXISTS post(language string);
  CREATE TAG IF NOT EXISTS forum(title string, creation_date int);
  CREATE TAG IF NOT EXISTS place(name string);
  CREATE EDGE IF NOT EXISTS knows(creation_date int);
  CREATE EDGE IF NOT EXISTS has_creator();
  CREATE EDGE IF NOT EXISTS reply_of();
  CREATE EDGE IF NOT EXISTS container_of();
  CREATE EDGE IF NOT EXISTS has_moderator();
  CREATE EDGE IF NOT EXISTS is_located_in();
files:
{files}"#;

/// The vertex files of [`snb`]: the file (and tag) name and its property columns after the id, in order.
const SNB_VERTEX_FILES: &[(&str, &[(&str, &str)])] = &[
    (
        "person",
        &[
            ("first_name", "string"),
            ("last_name", "string"),
            ("gender", "string"),
            ("birthday", "int"),
            ("creation_date", "int"),
            ("location_ip", "string"),
            ("browser_used", "string"),
        ],
    ),
    ("message", &[("creation_date", "int"), ("content", "string"), ("length", "int"), ("is_post", "bool")]),
    ("post", &[("language", "string")]),
    ("forum", &[("title", "string"), ("creation_date", "int")]),
    ("place", &[("name", "string")]),
];

/// A `files:` entry of the mapping for a `|`-separated file with a header: a vertex file of one tag or an edge file
/// (`edge`), named `name`, its ids first (the VID, or source and destination), then `props`.
fn mapping_entry(out: &mut String, name: &str, edge: bool, props: &[(&str, &str)]) {
    let _ = writeln!(out, "  - path: ./{name}.csv\n    withHeader: true\n    delimiter: \"|\"");
    let (first, indent) = if edge {
        let _ = writeln!(
            out,
            "    edge:\n      name: {name}\n      srcVID: {{ index: 0, type: int }}\n      dstVID: {{ index: 1, type: int }}"
        );
        (2, "      ")
    } else {
        let _ = writeln!(out, "    vertex:\n      vid: {{ index: 0, type: int }}\n      tags:\n        - name: {name}");
        (1, "          ")
    };
    if props.is_empty() {
        return;
    }
    let _ = writeln!(out, "{indent}props:");
    for (i, (p, ty)) in props.iter().enumerate() {
        let _ = writeln!(out, "{indent}  - {{ name: {p}, type: {ty}, index: {} }}", first + i);
    }
}

/// The edge files of [`snb`] without properties: (edge type, LDBC file, the source's and the destination's
/// [`SnbKind`]).
const SNB_PLAIN_EDGES: &[(&str, &str, SnbKind, SnbKind)] = &[
    ("has_creator", "post_hasCreator_person", SnbKind::Message, SnbKind::Person),
    ("has_creator", "comment_hasCreator_person", SnbKind::Message, SnbKind::Person),
    ("reply_of", "comment_replyOf_post", SnbKind::Message, SnbKind::Message),
    ("reply_of", "comment_replyOf_comment", SnbKind::Message, SnbKind::Message),
    ("container_of", "forum_containerOf_post", SnbKind::Forum, SnbKind::Message),
    ("has_moderator", "forum_hasModerator_person", SnbKind::Forum, SnbKind::Person),
    ("is_located_in", "person_isLocatedIn_place", SnbKind::Person, SnbKind::Place),
];

/// The entity kinds of the SNB network whose LDBC ids overlap (a person, a forum and a place may share an id): each
/// kind's ids are moved into a range of its own, `kind * 10^14 + id`, the same in every system's files.
#[derive(Debug, Clone, Copy)]
pub enum SnbKind {
    Person = 1,
    Message = 2,
    Forum = 3,
    Place = 4,
}

impl SnbKind {
    pub fn vid(self, ldbc_id: i64) -> i64 {
        self as i64 * 100_000_000_000_000 + ldbc_id
    }
}

/// The complete LDBC SNB Interactive v1 test network (`src`: its `vanilla/` CSV files, `|`-separated with headers,
/// epoch-millisecond dates) converted into `|`-separated files in `dir`, one per vertex kind and edge type, with
/// the ids of [`SnbKind::vid`]:
///
/// - `person.csv`: `id|first_name|last_name|gender|birthday|creation_date|location_ip|browser_used`
/// - `message.csv`: `id|creation_date|content|length|is_post`, posts and comments. `content` is LDBC's content, or
///   the image file of a post without content: the short reads return `coalesce(content, imageFile)`, and folding
///   it into the file keeps every system's answer free of how it reads an empty field.
/// - `post.csv`: `id|language`, the posts (Quiver gives them a second tag, `post`).
/// - `forum.csv`: `id|title|creation_date`; `place.csv`: `id|name`.
/// - `knows.csv`: `src|dst|creation_date` (LDBC stores each friendship once; the reads walk it both ways).
/// - `has_creator.csv` (message to person), `reply_of.csv` (comment to message), `container_of.csv` (forum to
///   post), `has_moderator.csv` (forum to person), `is_located_in.csv` (person to place): `src|dst`.
///
/// Starts: persons with a knows edge, and messages with at least one reply, drawn with the seed.
pub fn snb(src: &Path, dir: &Path, seed: u64, starts: usize) -> Result<Dataset, String> {
    std::fs::create_dir_all(dir).map_err(|e| io_err(dir, e))?;
    let read = |name: &str| -> Result<Vec<Vec<String>>, String> {
        let sub = if ["place", "organisation", "tag", "tagclass"].contains(&name) { "static" } else { "dynamic" };
        let path = src.join(sub).join(format!("{name}_0_0.csv"));
        let text = std::fs::read_to_string(&path).map_err(|e| io_err(&path, e))?;
        Ok(text.lines().skip(1).filter(|l| !l.is_empty()).map(|l| l.split('|').map(str::to_string).collect()).collect())
    };
    let field = |row: &[String], i: usize, name: &str| -> Result<String, String> {
        row.get(i).cloned().ok_or_else(|| format!("{name}: a line with {} fields", row.len()))
    };
    let id = |row: &[String], i: usize, name: &str, kind: SnbKind| -> Result<i64, String> {
        let f = field(row, i, name)?;
        f.parse::<i64>().map(|v| kind.vid(v)).map_err(|_| format!("{name}: id `{f}'"))
    };
    let mut vertices = 0u64;
    let mut edges = 0u64;
    let file = |name: &str, header: &str, lines: Vec<String>| -> Result<u64, String> {
        let path = dir.join(format!("{name}.csv"));
        let mut w = create(&path)?;
        writeln!(w, "{header}").map_err(|e| io_err(&path, e))?;
        for l in &lines {
            writeln!(w, "{l}").map_err(|e| io_err(&path, e))?;
        }
        finish(w, &path)?;
        Ok(lines.len() as u64)
    };
    // person: id|firstName|lastName|gender|birthday|creationDate|locationIP|browserUsed|language|email
    let mut lines = Vec::new();
    for r in read("person")? {
        let f = |i| field(&r, i, "person");
        let v = id(&r, 0, "person", SnbKind::Person)?;
        lines.push(format!("{v}|{}|{}|{}|{}|{}|{}|{}", f(1)?, f(2)?, f(3)?, f(4)?, f(5)?, f(6)?, f(7)?));
    }
    vertices +=
        file("person", "id|first_name|last_name|gender|birthday|creation_date|location_ip|browser_used", lines)?;
    // post: id|imageFile|creationDate|locationIP|browserUsed|language|content|length
    let (mut messages, mut posts) = (Vec::new(), Vec::new());
    for r in read("post")? {
        let f = |i| field(&r, i, "post");
        let v = id(&r, 0, "post", SnbKind::Message)?;
        let content = if f(6)?.is_empty() { f(1)? } else { f(6)? };
        messages.push(format!("{v}|{}|{content}|{}|true", f(2)?, f(7)?));
        posts.push(format!("{v}|{}", f(5)?));
    }
    // comment: id|creationDate|locationIP|browserUsed|content|length
    for r in read("comment")? {
        let f = |i| field(&r, i, "comment");
        let v = id(&r, 0, "comment", SnbKind::Message)?;
        messages.push(format!("{v}|{}|{}|{}|false", f(1)?, f(4)?, f(5)?));
    }
    vertices += file("message", "id|creation_date|content|length|is_post", messages)?;
    file("post", "id|language", posts)?;
    let mut lines = Vec::new();
    for r in read("forum")? {
        let v = id(&r, 0, "forum", SnbKind::Forum)?;
        lines.push(format!("{v}|{}|{}", field(&r, 1, "forum")?, field(&r, 2, "forum")?));
    }
    vertices += file("forum", "id|title|creation_date", lines)?;
    let mut lines = Vec::new();
    for r in read("place")? {
        lines.push(format!("{}|{}", id(&r, 0, "place", SnbKind::Place)?, field(&r, 1, "place")?));
    }
    vertices += file("place", "id|name", lines)?;
    let (mut lines, mut with_edges) = (Vec::new(), Vec::new());
    for r in read("person_knows_person")? {
        let (a, b) = (id(&r, 0, "knows", SnbKind::Person)?, id(&r, 1, "knows", SnbKind::Person)?);
        lines.push(format!("{a}|{b}|{}", field(&r, 2, "knows")?));
        with_edges.extend([a, b]);
    }
    edges += file("knows", "src|dst|creation_date", lines)?;
    let mut files = String::new();
    for (name, props) in SNB_VERTEX_FILES {
        mapping_entry(&mut files, name, false, props);
    }
    mapping_entry(&mut files, "knows", true, &[("creation_date", "int")]);
    let mut by_type: Vec<(&str, Vec<String>)> = Vec::new();
    let mut replied = Vec::new();
    for &(edge, ldbc, from, to) in SNB_PLAIN_EDGES {
        let mut lines = Vec::new();
        for r in read(ldbc)? {
            let (a, b) = (id(&r, 0, ldbc, from)?, id(&r, 1, ldbc, to)?);
            if edge == "reply_of" {
                replied.push(b);
            }
            lines.push(format!("{a}|{b}"));
        }
        match by_type.iter_mut().find(|(e, _)| *e == edge) {
            Some((_, all)) => all.extend(lines),
            None => by_type.push((edge, lines)),
        }
    }
    for (edge, lines) in by_type {
        edges += file(edge, "src|dst", lines)?;
        mapping_entry(&mut files, edge, true, &[]);
    }
    let mapping = dir.join("config.yaml");
    std::fs::write(
        &mapping,
        SNB_MAPPING.replace("{space}", "snb").replace("{parts}", &PARTS.to_string()).replace("{files}", &files),
    )
    .map_err(|e| io_err(&mapping, e))?;
    with_edges.sort_unstable();
    with_edges.dedup();
    let mut r = Rng(seed | 1);
    let person_starts = draw_starts(&mut r, &with_edges, starts);
    // Messages with a reply, so IS7 compares rows rather than empty answers.
    replied.sort_unstable();
    replied.dedup();
    let message_starts = draw_starts(&mut r, &replied, starts);
    Ok(Dataset {
        name: "ldbc-snb-test".into(),
        space: "snb".into(),
        dir: dir.to_path_buf(),
        vertices,
        edges,
        starts: person_starts,
        message_starts,
    })
}
