//! `quiver console`: an interactive shell (line editing, history, multi-line statements ended by `;`) and a
//! non-interactive runner (`-e`, `-f`) over the HTTP API.
//!
//! **Architecture invariant:** the console depends only on the public HTTP API, never on server crates.

use serde_json::{json, Value as J};
use std::fmt::Write as _;

pub struct Client {
    url: String,
    agent: ureq::Agent,
    pub space: Option<String>,
    /// `Authorization` header value, when the server has authorization on.
    authorization: Option<String>,
}

/// The outcome of one statement as the console shows it.
pub struct Outcome {
    pub text: String,
    pub ok: bool,
}

impl Client {
    pub fn new(addr: &str) -> Client {
        let agent = ureq::AgentBuilder::new().timeout_connect(std::time::Duration::from_secs(5)).build();
        Client { url: format!("http://{addr}/api/v1/exec"), agent, space: None, authorization: None }
    }

    /// Signs every request in as `user` (HTTP basic auth), for a server with `--enable-authorize`.
    pub fn with_credentials(mut self, user: &str, password: &str) -> Client {
        use base64ct::Encoding;
        self.authorization =
            Some(format!("Basic {}", base64ct::Base64::encode_string(format!("{user}:{password}").as_bytes())));
        self
    }

    /// Sends one request and renders its result.
    pub fn run(&mut self, stmt: &str) -> Outcome {
        let body = json!({"stmt": stmt, "space": self.space});
        let started = std::time::Instant::now();
        let mut request = self.agent.post(&self.url);
        if let Some(a) = &self.authorization {
            request = request.set("Authorization", a);
        }
        let resp: J = match request.send_json(body) {
            Ok(r) => match r.into_json() {
                Ok(j) => j,
                Err(e) => return Outcome { text: format!("[ERROR]: bad response: {e}"), ok: false },
            },
            Err(ureq::Error::Status(_, r)) => match r.into_json() {
                Ok(j) => j,
                Err(e) => return Outcome { text: format!("[ERROR]: bad response: {e}"), ok: false },
            },
            Err(e) => {
                return Outcome { text: format!("[ERROR]: cannot reach the server at {}: {e}", self.url), ok: false }
            }
        };
        let total_us = started.elapsed().as_micros();
        // A request refused before running (a sign-in that failed) has errors but no results.
        if resp.get("results").is_none() {
            let e = &resp["errors"][0];
            let code = e["code"].as_i64().unwrap_or(-1);
            return Outcome {
                text: format!("[ERROR ({code})]: {}", e["message"].as_str().unwrap_or("unknown error")),
                ok: false,
            };
        }
        let result = &resp["results"][0];
        if let Some(s) = result["spaceName"].as_str() {
            self.space = Some(s.to_string());
        }
        let code = result["errors"]["code"].as_i64().unwrap_or(-1);
        if code != 0 {
            let msg = result["errors"]["message"].as_str().unwrap_or("unknown error");
            return Outcome { text: format!("[ERROR ({code})]: {msg}"), ok: false };
        }
        let latency = result["latencyInUs"].as_u64().unwrap_or(0);
        let columns: Vec<String> = result["columns"]
            .as_array()
            .map(|c| c.iter().map(|v| v.as_str().unwrap_or("").to_string()).collect())
            .unwrap_or_default();
        let rows: Vec<Vec<String>> = result["data"]
            .as_array()
            .map(|d| {
                d.iter()
                    .map(|r| {
                        let row = r["row"].as_array().cloned().unwrap_or_default();
                        let meta = r["meta"].as_array().cloned().unwrap_or_default();
                        row.iter().enumerate().map(|(i, v)| render(v, meta.get(i).unwrap_or(&J::Null))).collect()
                    })
                    .collect()
            })
            .unwrap_or_default();
        let mut text = String::new();
        if columns.is_empty() {
            let _ = write!(text, "Execution succeeded (time spent {latency}/{total_us} us)");
        } else {
            text.push_str(&table(&columns, &rows));
            let _ = write!(text, "Got {} rows (time spent {latency}/{total_us} us)", rows.len());
        }
        if let Some(plan) = profile_table(&result["planDesc"]) {
            let _ = write!(text, "\n\nExecution Plan\n{plan}");
        }
        Outcome { text, ok: true }
    }
}

/// The plan of a PROFILE as a table (EXPLAIN's plan already is the result's rows), or `None` without one.
pub fn profile_table(plan: &J) -> Option<String> {
    let nodes = plan["planNodeDescs"].as_array()?;
    if !nodes.iter().any(|n| n.get("profiles").is_some()) {
        return None;
    }
    let columns: Vec<String> =
        ["id", "name", "dependencies", "profiling data", "operator info"].iter().map(|c| c.to_string()).collect();
    let rows: Vec<Vec<String>> = nodes
        .iter()
        .map(|n| {
            let deps = n["dependencies"]
                .as_array()
                .map(|d| d.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(","))
                .unwrap_or_default();
            let p = &n["profiles"][0];
            let profile = format!(
                "rows: {}, execTime: {}us, totalTime: {}us",
                p["rows"], p["execDurationInUs"], p["totalDurationInUs"]
            );
            let info = n["description"]
                .as_array()
                .map(|d| {
                    d.iter()
                        .map(|kv| {
                            format!("{}: {}", kv["key"].as_str().unwrap_or(""), kv["value"].as_str().unwrap_or(""))
                        })
                        .collect::<Vec<_>>()
                        .join("; ")
                })
                .unwrap_or_default();
            vec![n["id"].to_string(), n["name"].as_str().unwrap_or("").to_string(), deps, profile, info]
        })
        .collect();
    Some(table(&columns, &rows))
}

/// Renders a JSON value the way NebulaGraph's console prints values (nebula-go's `ValueWrapper.String`): strings
/// quoted, NULL as `__NULL__`, vertices as `("vid" :tag{...})`, edges as `[:type "src"->"dst" @rank {...}]` in their
/// stored direction, paths as `<("a" ...)-[:type@rank {...}]->("b" ...)<-[:type@rank {...}]-("c" ...)>`. Lists are
/// rendered element by element with each element's `meta` entry.
pub fn render(v: &J, meta: &J) -> String {
    match meta.get("type").and_then(J::as_str) {
        Some("vertex") => render_vertex(v, meta),
        Some("edge") => {
            let id = &meta["id"];
            // A negative type is an edge read against its stored direction: `src` is where it was read from.
            let (src, dst) =
                if id["type"].as_i64().unwrap_or(0) < 0 { (&id["dst"], &id["src"]) } else { (&id["src"], &id["dst"]) };
            format!(
                "[:{} {}->{} @{} {}]",
                id["name"].as_str().unwrap_or(""),
                render(src, &J::Null),
                render(dst, &J::Null),
                id["ranking"],
                render_props(v)
            )
        }
        _ => match (v, meta) {
            (J::Array(items), J::Array(metas)) if is_path(items, metas) => render_path(items, metas),
            (J::Array(items), _) => format!(
                "[{}]",
                items
                    .iter()
                    .enumerate()
                    .map(|(i, x)| render(x, meta.get(i).unwrap_or(&J::Null)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            (J::Null, _) => "__NULL__".into(),
            (J::String(s), _) => format!("{s:?}"),
            (J::Object(_), _) => render_props(v),
            (other, _) => other.to_string(),
        },
    }
}

/// `("vid" :tag{p: 1} :other{})` from a vertex's `tag.prop` object and its `meta` entry.
fn render_vertex(v: &J, meta: &J) -> String {
    let mut tags: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    if let Some(m) = v.as_object() {
        for (k, val) in m {
            let (tag, prop) = k.split_once('.').unwrap_or(("", k));
            tags.entry(tag.to_string()).or_default().push(format!("{prop}: {}", render(val, &J::Null)));
        }
    }
    let mut s = format!("({}", render(&meta["id"], &J::Null));
    for (t, props) in tags {
        let _ = write!(s, " :{t}{{{}}}", props.join(", "));
    }
    s.push(')');
    s
}

/// `{k: v, ...}` from a JSON object of properties.
fn render_props(v: &J) -> String {
    let props = v
        .as_object()
        .map(|m| m.iter().map(|(k, x)| format!("{k}: {}", render(x, &J::Null))).collect::<Vec<_>>().join(", "))
        .unwrap_or_default();
    format!("{{{props}}}")
}

/// Is this row entry a path? `executeJson` writes a path as an array (NebulaGraph's `Path::toJson` and
/// `getMetaData`) just as it writes a list, so a path is recognised by its meta: vertex, edge, vertex, ... with each
/// edge's id leading from the vertex before it to the vertex after it. A path of one vertex and no step is an array
/// of one vertex entry, which is rendered as the list it cannot be told apart from.
fn is_path(items: &[J], metas: &[J]) -> bool {
    let kind = |m: &J| m.get("type").and_then(J::as_str).map(str::to_string);
    items.len() == metas.len()
        && metas.len() >= 3
        && metas.len() % 2 == 1
        && metas.iter().enumerate().all(|(i, m)| kind(m).as_deref() == Some(if i % 2 == 0 { "vertex" } else { "edge" }))
        && (1..metas.len())
            .step_by(2)
            .all(|i| metas[i]["id"]["src"] == metas[i - 1]["id"] && metas[i]["id"]["dst"] == metas[i + 1]["id"])
}

fn render_path(items: &[J], metas: &[J]) -> String {
    let mut s = format!("<{}", render_vertex(&items[0], &metas[0]));
    for i in (1..items.len()).step_by(2) {
        let id = &metas[i]["id"];
        let (open, close) = if id["type"].as_i64().unwrap_or(0) < 0 { ("<-[", "]-") } else { ("-[", "]->") };
        let _ = write!(
            s,
            "{open}:{}@{} {}{close}{}",
            id["name"].as_str().unwrap_or(""),
            id["ranking"],
            render_props(&items[i]),
            render_vertex(&items[i + 1], &metas[i + 1])
        );
    }
    s.push('>');
    s
}

/// An aligned text table.
pub fn table(columns: &[String], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = columns.iter().map(|c| c.chars().count()).collect();
    for r in rows {
        for (i, cell) in r.iter().enumerate() {
            if i < widths.len() {
                widths[i] = widths[i].max(cell.chars().count());
            }
        }
    }
    let line = format!("+{}+\n", widths.iter().map(|w| "-".repeat(w + 2)).collect::<Vec<_>>().join("+"));
    let fmt_row = |cells: &[String]| {
        let mut s = String::from("|");
        for (i, w) in widths.iter().enumerate() {
            let c = cells.get(i).map(String::as_str).unwrap_or("");
            let _ = write!(s, " {c}{} |", " ".repeat(w - c.chars().count()));
        }
        s.push('\n');
        s
    };
    let mut out = line.clone();
    out.push_str(&fmt_row(columns));
    out.push_str(&line);
    for r in rows {
        out.push_str(&fmt_row(r));
    }
    if !rows.is_empty() {
        out.push_str(&line);
    }
    out
}

/// Splits a script into requests at `;` outside quotes, backquotes, `#` comments and braces (`EXPLAIN { a; b }`). A
/// variable's assignment (`$a = ...;`) stays in one request with the statements after it up to the first that is
/// not an assignment: a variable lives as long as its request.
pub fn split_statements(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut open = false;
    for stmt in split_at_semicolons(text) {
        match out.last_mut() {
            Some(last) if open => {
                last.push_str("; ");
                last.push_str(&stmt);
            }
            _ => out.push(stmt.clone()),
        }
        open = is_assignment(&stmt);
    }
    out
}

/// Whether a statement assigns a variable: `$name =` (not `==`).
fn is_assignment(stmt: &str) -> bool {
    let Some(rest) = stmt.strip_prefix('$') else { return false };
    let rest = rest.trim_start_matches(|c: char| c.is_alphanumeric() || c == '_').trim_start();
    rest.starts_with('=') && !rest.starts_with("==")
}

fn split_at_semicolons(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = text.chars().peekable();
    let mut quote: Option<char> = None;
    let mut braces = 0usize;
    while let Some(c) = chars.next() {
        match quote {
            Some(q) => {
                cur.push(c);
                if c == '\\' {
                    if let Some(n) = chars.next() {
                        cur.push(n);
                    }
                } else if c == q {
                    quote = None;
                }
            }
            None => match c {
                '"' | '\'' | '`' => {
                    quote = Some(c);
                    cur.push(c);
                }
                '#' => {
                    for n in chars.by_ref() {
                        if n == '\n' {
                            break;
                        }
                    }
                }
                '{' => {
                    braces += 1;
                    cur.push(c);
                }
                '}' => {
                    braces = braces.saturating_sub(1);
                    cur.push(c);
                }
                ';' if braces > 0 => cur.push(c),
                ';' => {
                    if !cur.trim().is_empty() {
                        out.push(cur.trim().to_string());
                    }
                    cur.clear();
                }
                _ => cur.push(c),
            },
        }
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

/// Runs statements one by one, printing each result; stops at the first error. Returns whether all succeeded. A
/// reader that goes away (`quiver console -e ... | head`) ends the script quietly rather than in a panic.
pub fn run_script(client: &mut Client, text: &str) -> bool {
    use std::io::Write;
    for stmt in split_statements(text) {
        let out = client.run(&stmt);
        if out.ok {
            if writeln!(std::io::stdout(), "{}\n", out.text).is_err() {
                return true;
            }
        } else {
            eprintln!("{}", out.text);
            return false;
        }
    }
    true
}

/// The interactive shell.
pub fn repl(client: &mut Client) -> Result<(), String> {
    let mut rl = rustyline::DefaultEditor::new().map_err(|e| e.to_string())?;
    let history = std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".quiver_history"));
    if let Some(h) = &history {
        let _ = rl.load_history(h);
    }
    println!("Welcome to Quiver. Statements end with `;`. Type `:exit` or press Ctrl-D to leave.\n");
    let mut buf = String::new();
    loop {
        let space = client.space.clone().unwrap_or_default();
        let prompt = if buf.is_empty() { format!("(root@quiver) [{space}]> ") } else { "-> ".to_string() };
        match rl.readline(&prompt) {
            Ok(line) => {
                let t = line.trim();
                if buf.is_empty()
                    && (t == ":exit"
                        || t == ":quit"
                        || t.eq_ignore_ascii_case("exit")
                        || t.eq_ignore_ascii_case("quit"))
                {
                    break;
                }
                buf.push_str(&line);
                buf.push('\n');
                if !t.ends_with(';') {
                    continue;
                }
                let _ = rl.add_history_entry(buf.trim());
                for stmt in split_statements(&buf) {
                    let out = client.run(&stmt);
                    println!("{}\n", out.text);
                }
                buf.clear();
            }
            Err(rustyline::error::ReadlineError::Interrupted) => buf.clear(),
            Err(_) => break,
        }
    }
    if let Some(h) = &history {
        let _ = rl.save_history(h);
    }
    println!("Bye!");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_outside_quotes() {
        assert_eq!(split_statements("YIELD \";\"; USE x ;; # c;\nYIELD 1"), vec!["YIELD \";\"", "USE x", "YIELD 1"]);
        assert_eq!(
            split_statements("EXPLAIN { YIELD 1; YIELD {a: 1} }; YIELD 2"),
            vec!["EXPLAIN { YIELD 1; YIELD {a: 1} }", "YIELD 2"]
        );
        assert_eq!(
            split_statements("USE s; $a = YIELD 1 AS x; $b = YIELD 2 AS y; YIELD $a.x == $b.y; YIELD 3"),
            vec!["USE s", "$a = YIELD 1 AS x; $b = YIELD 2 AS y; YIELD $a.x == $b.y", "YIELD 3"]
        );
    }

    #[test]
    fn profile_plans_are_tables_and_explain_plans_are_not_repeated() {
        let profiled = json!({"planNodeDescs": [
            {"id": 1, "name": "Limit", "dependencies": [0], "description": [{"key": "count", "value": "1"}], "profiles": [{"rows": 1, "execDurationInUs": 3, "totalDurationInUs": 9}]},
            {"id": 0, "name": "Go", "dependencies": [], "description": [], "profiles": [{"rows": 2, "execDurationInUs": 6, "totalDurationInUs": 6}]}
        ]});
        let t = profile_table(&profiled).unwrap();
        assert!(
            t.contains("| 1  | Limit | 0            | rows: 1, execTime: 3us, totalTime: 9us | count: 1      |"),
            "{t}"
        );
        let explained = json!({"planNodeDescs": [{"id": 0, "name": "Go", "dependencies": [], "description": []}]});
        assert_eq!(profile_table(&explained), None);
        assert_eq!(profile_table(&J::Null), None);
    }

    #[test]
    fn renders_aligned_table() {
        let t = table(&["a".into(), "bb".into()], &[vec!["\"xyz\"".into(), "1".into()]]);
        assert_eq!(t, "+-------+----+\n| a     | bb |\n+-------+----+\n| \"xyz\" | 1  |\n+-------+----+\n");
    }

    #[test]
    fn renders_vertices_edges_and_paths_as_nebula_console() {
        let v = json!({"player.age": 42, "player.name": "Tim Duncan"});
        let vm = json!({"type": "vertex", "id": "Tim Duncan"});
        assert_eq!(render(&v, &vm), r#"("Tim Duncan" :player{age: 42, name: "Tim Duncan"})"#);
        let e = json!({"likeness": 95});
        let em = json!({"type": "edge", "id": {"src": "Tim Duncan", "dst": "Tony Parker", "type": 5, "name": "like", "ranking": 0}});
        assert_eq!(render(&e, &em), r#"[:like "Tim Duncan"->"Tony Parker" @0 {likeness: 95}]"#);
        // Read reversely: printed in the stored direction.
        let rm = json!({"type": "edge", "id": {"src": "Tony Parker", "dst": "Manu Ginobili", "type": -5, "name": "like", "ranking": 0}});
        assert_eq!(render(&e, &rm), r#"[:like "Manu Ginobili"->"Tony Parker" @0 {likeness: 95}]"#);
        // A path: the rows and meta of NebulaGraph's `Path::toJson` and `getMetaData`.
        let row = json!([v, e, {"player.age": 36}, e, {}]);
        let meta =
            json!([vm, em, {"type": "vertex", "id": "Tony Parker"}, rm, {"type": "vertex", "id": "Manu Ginobili"}]);
        assert_eq!(
            render(&row, &meta),
            r#"<("Tim Duncan" :player{age: 42, name: "Tim Duncan"})-[:like@0 {likeness: 95}]->("Tony Parker" :player{age: 36})<-[:like@0 {likeness: 95}]-("Manu Ginobili")>"#
        );
        // A list of vertices keeps each element's meta; a list whose edge does not join its vertices is no path.
        assert_eq!(
            render(&json!([v, {}]), &json!([vm, {"type": "vertex", "id": 3}])),
            r#"[("Tim Duncan" :player{age: 42, name: "Tim Duncan"}), (3)]"#
        );
        let not_joined = json!([vm, rm, {"type": "vertex", "id": "Tony Parker"}]);
        assert!(render(&json!([v, e, {}]), &not_joined).starts_with('['));
        assert_eq!(render(&json!([1, null, "a"]), &json!([null, null, null])), r#"[1, __NULL__, "a"]"#);
        assert_eq!(render(&json!({"k": [1]}), &J::Null), "{k: [1]}");
    }
}
