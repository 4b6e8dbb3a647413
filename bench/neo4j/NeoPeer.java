// The Neo4j peer of `quiver bench`: Neo4j 5.26.30 embedded (pinned in pom.xml). bench/peers.py runs it as
//
//     java -cp CLASSPATH NeoPeer SPEC.json OUT.json
//
// and reads OUT.json in the shape the Python peers produce ({"load": ..., "workloads": {w: {"latencies_ms",
// "digests"}}}). Digests are computed here as crates/bench/src/workloads.rs computes them, except for the
// workloads whose answer is a short list of rows (the spec's `raw` ones and `*rage-recommend`): for those the rows
// are written as they are ({"raw": rows, "liked": ids}) and peers.py digests them with its own code. The spec also
// gives each workload's start vertices (`workload_starts`: messages for the SNB message reads, else persons).
//
// Loading: the CSV files are read here and written through the core API (nodes, then relationships) in
// transactions of 50,000 entities, with an index on the id of each label looked up by id (person, item, message)
// created first; that is Neo4j's fastest load path short of its offline `neo4j-admin database import`. The `snb`
// network's posts are messages with is_post (no post label), as in the other peers.
//
// The Cypher statements come in the spec from peers.py (the ones Kuzu and ladybug run, but for the RageDB walk:
// one MATCH pattern never reuses a relationship in Neo4j, so peers.py writes it as three MATCH clauses, which lets a
// walk reuse the edge it came in on, as every other system counts it; and for the MATCH forms (`match*`), whose
// relationship-isomorphic semantics Neo4j has by default: Kuzu and ladybug get the same pattern with their
// relationships spelled out as pairwise distinct, Neo4j the pattern alone).
import java.io.BufferedReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.graphdb.Entity;
import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.graphdb.Label;
import org.neo4j.graphdb.Node;
import org.neo4j.graphdb.RelationshipType;
import org.neo4j.graphdb.Result;
import org.neo4j.graphdb.Transaction;
import org.neo4j.io.ByteUnit;

public final class NeoPeer {
    static final long MOD = 1_000_000_007L;
    static final int TX_BATCH = 50_000;

    public static void main(String[] args) throws Exception {
        ObjectMapper json = new ObjectMapper();
        Map<String, Object> spec = json.readValue(Path.of(args[0]).toFile(), new TypeReference<Map<String, Object>>() {});
        json.writeValue(Path.of(args[1]).toFile(), run(spec));
    }

    static DatabaseManagementService open(Path home) {
        return new DatabaseManagementServiceBuilder(home)
                .setConfig(GraphDatabaseSettings.pagecache_memory, ByteUnit.gibiBytes(4))
                .build();
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> run(Map<String, Object> spec) throws IOException {
        String kind = (String) spec.get("kind");
        Path dir = Path.of((String) spec.get("dir"));
        Path home = Path.of((String) spec.get("work"), "neo4j");
        deleteTree(home);
        Map<String, List<Object>> startsOf = (Map<String, List<Object>>) spec.get("workload_starts");
        List<Object> raw = (List<Object>) spec.get("raw");
        List<Object> workloads = (List<Object>) spec.get("workloads");
        double budget = ((Number) spec.getOrDefault("budget_s", 1e9)).doubleValue();
        int warmup = ((Number) spec.getOrDefault("warmup", 0)).intValue();
        Map<String, String> qs = (Map<String, String>) spec.get("queries");
        String edgeCount = (String) spec.get("edge_count_query");
        String likedQuery = (String) spec.get("liked_query");
        String firstW = (String) workloads.get(0);
        Map<String, Object> first = Map.of("v", startsOf.get(firstW).get(0), "u", partner(startsOf.get(firstW), 0));
        String firstQ = qs.get(firstW);

        long rss0 = rss();
        long t0 = System.nanoTime();
        DatabaseManagementService dbms = open(home);
        GraphDatabaseService db = dbms.database(GraphDatabaseSettings.DEFAULT_DATABASE_NAME);
        if (kind.equals("social")) {
            loadSocial(db, dir);
        } else if (kind.equals("snb")) {
            loadSnb(db, dir);
        } else {
            loadRage(db, dir);
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        long edges = ((Number) query(db, edgeCount, Map.of()).get(0).get(0)).longValue();
        query(db, firstQ, first);
        long rss = Math.max(0, rss() - rss0);
        dbms.shutdown();
        long disk = treeBytes(home);
        t0 = System.nanoTime();
        dbms = open(home);
        db = dbms.database(GraphDatabaseSettings.DEFAULT_DATABASE_NAME);
        query(db, firstQ, first);
        double restart = (System.nanoTime() - t0) / 1e9;

        Map<String, Object> load = new LinkedHashMap<>();
        load.put("edges", edges);
        load.put("seconds", seconds);
        load.put("edges_per_s", edges / Math.max(seconds, 1e-9));
        load.put("disk_bytes", disk);
        load.put("rss_bytes", rss);
        load.put("restart_s", restart);
        load.put("system", "neo4j");
        load.put("dataset", spec.get("dataset"));

        Map<String, Object> ws = new LinkedHashMap<>();
        for (Object wo : workloads) {
            String w = (String) wo;
            List<Object> starts = startsOf.get(w);
            List<Object> lat = new ArrayList<>();
            List<Object> digests = new ArrayList<>();
            double spent = 0;
            // Warm-up, untimed, as Quiver's: every start (`warmup` of them) once, until half the budget is spent.
            long warm = System.nanoTime();
            for (int i = 0; i < Math.min(warmup, starts.size()); i++) {
                Object v = starts.get(i);
                if ((System.nanoTime() - warm) / 1e9 > budget / 2) {
                    break;
                }
                Map<String, Object> p = Map.of("v", v, "u", partner(starts, i));
                if (w.endsWith("rage-recommend") || raw.contains(w)) {
                    query(db, qs.get(w), p);
                } else {
                    digest(w, db, qs.get(w), p);
                }
            }
            for (int i = 0; i < starts.size(); i++) {
                Object v = starts.get(i);
                long t = System.nanoTime();
                Map<String, Object> p = Map.of("v", v, "u", partner(starts, i));
                Object digest;
                if (w.endsWith("rage-recommend")) {
                    List<Object> liked = new ArrayList<>();
                    for (List<Object> r : query(db, likedQuery, p)) {
                        liked.add(r.get(0));
                    }
                    digest = Map.of("raw", query(db, qs.get(w), p), "liked", liked);
                } else if (raw.contains(w)) {
                    // A few rows: digested by peers.py.
                    digest = Map.of("raw", query(db, qs.get(w), p));
                } else {
                    digest = digest(w, db, qs.get(w), p);
                }
                double ms = (System.nanoTime() - t) / 1e6;
                lat.add(ms);
                digests.add(digest);
                spent += ms / 1000.0;
                if (spent > budget) {
                    break;
                }
            }
            ws.put(w, Map.of("latencies_ms", lat, "digests", digests));
        }
        dbms.shutdown();
        return Map.of("load", load, "workloads", ws);
    }

    /** The other end of the path searches from the i-th start (as workloads.rs's `partner`). */
    static Object partner(List<Object> starts, int i) {
        for (int k = 1; k < starts.size(); k++) {
            Object u = starts.get((i + k) % starts.size());
            if (!u.equals(starts.get(i))) {
                return u;
            }
        }
        return starts.get(i);
    }

    // ------------------------------------------------------------------ running queries

    static List<List<Object>> query(GraphDatabaseService db, String q, Map<String, Object> params) {
        try (Transaction tx = db.beginTx(); Result r = tx.execute(q, params)) {
            List<String> cols = r.columns();
            List<List<Object>> rows = new ArrayList<>();
            while (r.hasNext()) {
                Map<String, Object> row = r.next();
                List<Object> out = new ArrayList<>(cols.size());
                for (String c : cols) {
                    out.add(row.get(c));
                }
                rows.add(out);
            }
            tx.commit();
            return rows;
        }
    }

    /** The digest of workloads.rs, computed while streaming (GO answers can be large). */
    static Object digest(String w, GraphDatabaseService db, String q, Map<String, Object> params) {
        try (Transaction tx = db.beginTx(); Result r = tx.execute(q, params)) {
            String col = r.columns().get(0);
            Object d;
            if (w.equals("go2-count-over-all") || w.endsWith("rage-3hop-count")) {
                d = Map.of("count", ((Number) r.next().get(col)).longValue());
            } else {
                long n = 0;
                long sum = 0;
                while (r.hasNext()) {
                    n++;
                    sum = (sum + digestValue(r.next().get(col))) % MOD;
                }
                d = Map.of("rows", n, "sum", sum);
            }
            tx.commit();
            return d;
        }
    }

    static long digestValue(Object v) {
        if (v instanceof Long || v instanceof Integer) {
            return Math.floorMod(((Number) v).longValue(), MOD);
        }
        if (v instanceof String) {
            String s = (String) v;
            return s.codePointCount(0, s.length());
        }
        return 0;
    }

    // ------------------------------------------------------------------ loading

    static final Label PERSON = Label.label("person");
    static final Label ITEM = Label.label("item");
    static final Label MESSAGE = Label.label("message");
    static final Label FORUM = Label.label("forum");
    static final Label PLACE = Label.label("place");

    static void createIndex(GraphDatabaseService db, String label) {
        try (Transaction tx = db.beginTx()) {
            tx.execute("CREATE INDEX " + label + "_id IF NOT EXISTS FOR (n:" + label + ") ON (n.id)");
            tx.commit();
        }
    }

    static void awaitIndexes(GraphDatabaseService db) {
        try (Transaction tx = db.beginTx()) {
            tx.schema().awaitIndexesOnline(30, TimeUnit.MINUTES);
            tx.commit();
        }
    }

    interface RowSink {
        void row(Transaction tx, String[] f);
    }

    /** Reads a CSV file (fields separated by `sep`, no quoting) with a header line, calling `sink` per row in
     *  transactions of TX_BATCH rows. */
    static void eachRow(GraphDatabaseService db, Path file, String sep, RowSink sink) {
        Pattern split = Pattern.compile(Pattern.quote(sep));
        try (BufferedReader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            r.readLine();
            Transaction tx = db.beginTx();
            int n = 0;
            String line;
            while ((line = r.readLine()) != null) {
                sink.row(tx, split.split(line, -1));
                if (++n == TX_BATCH) {
                    tx.commit();
                    tx.close();
                    tx = db.beginTx();
                    n = 0;
                }
            }
            tx.commit();
            tx.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The property columns of a file, in order: each `name` (a string) or `name:long`, `name:double`, `name:bool`
     *  (parsed), as {name} or {name, type}. */
    static String[][] columns(String[] props) {
        return Arrays.stream(props).map(p -> p.split(":")).toArray(String[][]::new);
    }

    /** Sets the properties of a row's columns from `first` on. */
    static void setProps(Entity e, String[][] props, String[] f, int first) {
        for (int i = 0; i < props.length; i++) {
            String[] p = props[i];
            String s = f[first + i];
            e.setProperty(p[0], p.length == 1 ? s
                    : switch (p[1]) {
                        case "long" -> Long.parseLong(s);
                        case "double" -> Double.parseDouble(s);
                        case "bool" -> Boolean.parseBoolean(s);
                        default -> throw new IllegalArgumentException(String.join(":", p));
                    });
        }
    }

    /** A node per row: `id` from the first column, then `props` (as `columns`). Returns the ids' node ids. */
    @SuppressWarnings("removal")
    static Map<Long, Long> nodes(GraphDatabaseService db, Path file, String sep, Label label, String... props) {
        Map<Long, Long> ids = new HashMap<>();
        String[][] cols = columns(props);
        eachRow(db, file, sep, (tx, f) -> {
            Node n = tx.createNode(label);
            long id = Long.parseLong(f[0]);
            n.setProperty("id", id);
            setProps(n, cols, f, 1);
            ids.put(id, n.getId());
        });
        return ids;
    }

    /** A relationship per row, from the `src` node of the first column to the `dst` node of the second, then
     *  `props` (as `columns`). */
    @SuppressWarnings("removal")
    static void edges(GraphDatabaseService db, Path file, String sep, Map<Long, Long> src, Map<Long, Long> dst,
                      String type, String... props) {
        RelationshipType t = RelationshipType.withName(type);
        String[][] cols = columns(props);
        eachRow(db, file, sep, (tx, f) -> {
            Node a = tx.getNodeById(src.get(Long.parseLong(f[0])));
            Node b = tx.getNodeById(dst.get(Long.parseLong(f[1])));
            setProps(a.createRelationshipTo(b, t), cols, f, 2);
        });
    }

    static void loadSocial(GraphDatabaseService db, Path dir) {
        createIndex(db, "person");
        Map<Long, Long> persons = nodes(db, dir.resolve("person.csv"), ",", PERSON,
                "first_name", "last_name", "gender", "birthday:long", "creation_date:long");
        edges(db, dir.resolve("knows.csv"), ",", persons, persons, "knows", "time:long");
        awaitIndexes(db);
    }

    static void loadRage(GraphDatabaseService db, Path dir) {
        createIndex(db, "person");
        createIndex(db, "item");
        Map<Long, Long> persons = nodes(db, dir.resolve("person.csv"), ",", PERSON);
        Map<Long, Long> items = nodes(db, dir.resolve("item.csv"), ",", ITEM);
        edges(db, dir.resolve("likes.csv"), ",", persons, items, "likes", "weight:double");
        awaitIndexes(db);
    }

    /** The LDBC SNB test network (`|`-separated; gen.rs's `snb`), as peers.py's SNB_NODES and SNB_EDGES. */
    static void loadSnb(GraphDatabaseService db, Path dir) {
        createIndex(db, "person");
        createIndex(db, "message");
        Map<Long, Long> persons = nodes(db, dir.resolve("person.csv"), "|", PERSON, "first_name", "last_name", "gender",
                "birthday:long", "creation_date:long", "location_ip", "browser_used");
        Map<Long, Long> messages = nodes(db, dir.resolve("message.csv"), "|", MESSAGE,
                "creation_date:long", "content", "length:long", "is_post:bool");
        Map<Long, Long> forums = nodes(db, dir.resolve("forum.csv"), "|", FORUM, "title", "creation_date:long");
        Map<Long, Long> places = nodes(db, dir.resolve("place.csv"), "|", PLACE, "name");
        edges(db, dir.resolve("knows.csv"), "|", persons, persons, "knows", "creation_date:long");
        edges(db, dir.resolve("has_creator.csv"), "|", messages, persons, "has_creator");
        edges(db, dir.resolve("reply_of.csv"), "|", messages, messages, "reply_of");
        edges(db, dir.resolve("container_of.csv"), "|", forums, messages, "container_of");
        edges(db, dir.resolve("has_moderator.csv"), "|", forums, persons, "has_moderator");
        edges(db, dir.resolve("is_located_in.csv"), "|", persons, places, "is_located_in");
        awaitIndexes(db);
    }

    // ------------------------------------------------------------------ files and memory

    static long rss() {
        try {
            for (String l : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (l.startsWith("VmRSS:")) {
                    return Long.parseLong(l.split("\\s+")[1]) * 1024;
                }
            }
        } catch (IOException e) {
            // no /proc: no figure
        }
        return 0;
    }

    static long treeBytes(Path p) throws IOException {
        if (!Files.exists(p)) {
            return 0;
        }
        try (var s = Files.walk(p)) {
            return s.filter(Files::isRegularFile).mapToLong(f -> f.toFile().length()).sum();
        }
    }

    static void deleteTree(Path p) throws IOException {
        if (!Files.exists(p)) {
            return;
        }
        try (var s = Files.walk(p)) {
            s.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        }
    }
}
