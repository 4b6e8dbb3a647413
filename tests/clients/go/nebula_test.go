// The real nebula-go client (v3.8.0, pinned in go.mod) against a Quiver started by this test. Expected rows are
// computed from the nba CSV files, never from Quiver's own output.
package clienttest

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	nebula "github.com/vesoft-inc/nebula-go/v3"
	ntypes "github.com/vesoft-inc/nebula-go/v3/nebula"
)

var port int

func repoRoot() string {
	wd, _ := os.Getwd()
	return filepath.Clean(filepath.Join(wd, "..", "..", ".."))
}

func datasets() string {
	if d := os.Getenv("QUIVER_DATASETS"); d != "" {
		return d
	}
	return filepath.Join(repoRoot(), "..", "shared", "data", "nebula-tck-datasets")
}

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// quiverBin is the quiver binary the tests run: QUIVER_BIN, or the debug build.
func quiverBin() string {
	if bin := os.Getenv("QUIVER_BIN"); bin != "" {
		return bin
	}
	return filepath.Join(repoRoot(), "target", "debug", "quiver")
}

// stopper stops a started process (SIGINT, then waits) and removes its directory.
func stopper(cmd *exec.Cmd, dir string) func() {
	return func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
		os.RemoveAll(dir)
	}
}

// startServer runs `quiver serve --demo` on free ports; it returns the graph port and a stop function.
func startServer(extra ...string) (int, func(), error) {
	bin := quiverBin()
	dir, err := os.MkdirTemp("", "quiver-go-")
	if err != nil {
		return 0, nil, err
	}
	httpPort, graphPort := freePort(), freePort()
	args := append([]string{"serve", "--data-dir", dir, "--http-addr", fmt.Sprintf("127.0.0.1:%d", httpPort),
		"--graph-addr", fmt.Sprintf("127.0.0.1:%d", graphPort), "--demo", "--datasets", datasets()}, extra...)
	cmd := exec.Command(bin, args...)
	if err := cmd.Start(); err != nil {
		return 0, nil, err
	}
	stop := stopper(cmd, dir)
	for i := 0; i < 600; i++ {
		if resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/api/v1/health", httpPort)); err == nil {
			resp.Body.Close()
			return graphPort, stop, nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	stop()
	return 0, nil, fmt.Errorf("quiver did not become ready")
}

// startPlayground runs `quiver playground --demo` (3 metads, 3 storage hosts, 1 graphd) in place of `quiver serve`
// when QUIVER_PLAYGROUND is set; it returns graphd's port and a stop function.
func startPlayground() (int, func(), error) {
	bin := quiverBin()
	dir, err := os.MkdirTemp("", "quiver-go-playground-")
	if err != nil {
		return 0, nil, err
	}
	offset := 3000 + os.Getpid()%20000
	cmd := exec.Command(bin, "playground", "--dir", dir, "--port-offset", fmt.Sprint(offset), "--demo",
		"--datasets", datasets())
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, nil, err
	}
	if err := cmd.Start(); err != nil {
		return 0, nil, err
	}
	stop := stopper(cmd, dir)
	graph := 0
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		words := strings.Fields(lines.Text())
		if len(words) >= 2 && words[0] == "graphd" {
			fmt.Sscanf(words[1][strings.LastIndex(words[1], ":")+1:], "%d", &graph)
		}
		if len(words) >= 2 && words[0] == "playground" && words[1] == "ready" {
			go io.Copy(io.Discard, out)
			return graph, stop, nil
		}
	}
	stop()
	return 0, nil, fmt.Errorf("the playground did not become ready")
}

func TestMain(m *testing.M) {
	start := startServer
	if os.Getenv("QUIVER_PLAYGROUND") != "" {
		start = func(...string) (int, func(), error) { return startPlayground() }
	}
	p, stop, err := start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	port = p
	code := m.Run()
	stop()
	os.Exit(code)
}

func csvRows(t *testing.T, name string) [][]string {
	f, err := os.Open(filepath.Join(datasets(), "nba", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows[1:]
}

// likesOf: "dst:likeness" of src's like edges, one per edge key, sorted.
func likesOf(t *testing.T, src string) []string {
	seen := map[string]string{}
	for _, r := range csvRows(t, "like.csv") {
		if r[0] == src {
			seen[r[1]] = r[2]
		}
	}
	var out []string
	for d, l := range seen {
		out = append(out, d+":"+l)
	}
	sort.Strings(out)
	return out
}

func pool(t *testing.T) *nebula.ConnectionPool {
	conf := nebula.GetDefaultConf()
	conf.MaxConnPoolSize = 40
	p, err := nebula.NewConnectionPool([]nebula.HostAddress{{Host: "127.0.0.1", Port: port}}, conf, nebula.DefaultLogger{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// session opens a pool and one session on the shared server.
func session(t *testing.T) (*nebula.ConnectionPool, *nebula.Session) {
	p := pool(t)
	s, err := p.GetSession("root", "nebula")
	if err != nil {
		p.Close()
		t.Fatal(err)
	}
	return p, s
}

func mustExec(t *testing.T, s *nebula.Session, stmt string) *nebula.ResultSet {
	r, err := s.Execute(stmt)
	if err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
	if !r.IsSucceed() {
		t.Fatalf("%s: %d %s", stmt, r.GetErrorCode(), r.GetErrorMsg())
	}
	return r
}

func TestGoWithTypedValues(t *testing.T) {
	p, s := session(t)
	defer p.Close()
	defer s.Release()
	mustExec(t, s, "USE nba")
	r := mustExec(t, s, `GO FROM "Tim Duncan" OVER like YIELD dst(edge) AS d, like.likeness AS l, edge AS e`)
	if strings.Join(r.GetColNames(), ",") != "d,l,e" || r.GetSpaceName() != "nba" {
		t.Fatalf("columns %v space %q", r.GetColNames(), r.GetSpaceName())
	}
	var got []string
	for i := 0; i < r.GetRowSize(); i++ {
		rec, _ := r.GetRowValuesByIndex(i)
		d, _ := rec.GetValueByColName("d")
		l, _ := rec.GetValueByColName("l")
		e, _ := rec.GetValueByColName("e")
		ds, err := d.AsString()
		if err != nil {
			t.Fatal(err)
		}
		li, err := l.AsInt()
		if err != nil {
			t.Fatal(err)
		}
		rel, err := e.AsRelationship()
		if err != nil {
			t.Fatal(err)
		}
		src, _ := rel.GetSrcVertexID().AsString()
		dst, _ := rel.GetDstVertexID().AsString()
		like, _ := rel.Properties()["likeness"].AsInt()
		if src != "Tim Duncan" || dst != ds || rel.GetEdgeName() != "like" || rel.GetRanking() != 0 || like != li {
			t.Fatalf("edge %s", rel.String())
		}
		got = append(got, ds+":"+strconv.FormatInt(li, 10))
	}
	sort.Strings(got)
	if want := likesOf(t, "Tim Duncan"); strings.Join(got, ",") != strings.Join(want, ",") || len(want) == 0 {
		t.Fatalf("got %v want %v", got, want)
	}

	r = mustExec(t, s, `FETCH PROP ON player, bachelor "Tim Duncan" YIELD vertex AS v`)
	rec, _ := r.GetRowValuesByIndex(0)
	v, _ := rec.GetValueByColName("v")
	node, err := v.AsNode()
	if err != nil {
		t.Fatal(err)
	}
	tags := node.GetTags()
	sort.Strings(tags)
	props, _ := node.Properties("bachelor")
	spec, _ := props["speciality"].AsString()
	if strings.Join(tags, ",") != "bachelor,player" || spec != "psychology" {
		t.Fatalf("vertex %s", node.String())
	}

	r = mustExec(t, s, `YIELD 2.5 AS f, NULL AS n, [1, 2] AS l, {a: "b"} AS m, date("2020-02-29") AS d`)
	rec, _ = r.GetRowValuesByIndex(0)
	f, _ := rec.GetValueByColName("f")
	n, _ := rec.GetValueByColName("n")
	l, _ := rec.GetValueByColName("l")
	m, _ := rec.GetValueByColName("m")
	d, _ := rec.GetValueByColName("d")
	fv, _ := f.AsFloat()
	lv, _ := l.AsList()
	mv, _ := m.AsMap()
	dv, _ := d.AsDate()
	mb, _ := mv["a"].AsString()
	if fv != 2.5 || !n.IsNull() || len(lv) != 2 || mb != "b" || dv.GetYear() != 2020 || dv.GetMonth() != 2 || dv.GetDay() != 29 {
		t.Fatalf("values %v %v %v %v %v", fv, n, lv, mv, dv)
	}

	// A like row has no serve.start_year: EMPTY, not NULL.
	r = mustExec(t, s, `GO FROM "Tim Duncan" OVER like, serve YIELD like.likeness AS l, serve.start_year AS y`)
	empties := 0
	for i := 0; i < r.GetRowSize(); i++ {
		rec, _ := r.GetRowValuesByIndex(i)
		y, _ := rec.GetValueByColName("y")
		if y.IsEmpty() {
			empties++
		} else if y.IsNull() {
			t.Fatal("serve.start_year on a like row is NULL, want EMPTY")
		}
	}
	if empties != len(likesOf(t, "Tim Duncan")) {
		t.Fatalf("%d EMPTY values", empties)
	}
}

func TestParametersJsonAndErrors(t *testing.T) {
	p, s := session(t)
	defer p.Close()
	defer s.Release()
	r, err := s.Execute(`GO FROM "x" OVER like YIELD dst(edge)`)
	if err != nil || r.GetErrorCode() != nebula.ErrorCode_E_SEMANTIC_ERROR || r.GetErrorMsg() != "SemanticError: Space was not chosen." {
		t.Fatalf("%v %d %q", err, r.GetErrorCode(), r.GetErrorMsg())
	}
	r, _ = s.Execute("CREATE TAGG x()")
	if r.GetErrorCode() != nebula.ErrorCode_E_SYNTAX_ERROR || !strings.HasPrefix(r.GetErrorMsg(), "SyntaxError:") {
		t.Fatalf("%d %q", r.GetErrorCode(), r.GetErrorMsg())
	}
	mustExec(t, s, "USE nba")
	// A parameter is not a VID (NebulaGraph's grammar), but it may stand in a WHERE.
	r, err = s.ExecuteWithParameter(`GO FROM $v OVER like YIELD dst(edge) AS d`, map[string]interface{}{"v": "Tim Duncan"})
	if err != nil || r.GetErrorCode() != nebula.ErrorCode_E_SYNTAX_ERROR || r.GetErrorMsg() != "SyntaxError: Parameter is not supported in vid near `$v'" {
		t.Fatalf("%v %d %q", err, r.GetErrorCode(), r.GetErrorMsg())
	}
	r, err = s.ExecuteWithParameter(`GO FROM "Tim Duncan" OVER like WHERE like.likeness > $n AND src(edge) == $v YIELD dst(edge) AS d`, map[string]interface{}{"v": "Tim Duncan", "n": 90})
	if err != nil || !r.IsSucceed() {
		t.Fatalf("%v %s", err, r.GetErrorMsg())
	}
	want := 0
	for _, x := range likesOf(t, "Tim Duncan") {
		if l, _ := strconv.Atoi(x[strings.LastIndex(x, ":")+1:]); l > 90 {
			want++
		}
	}
	if r.GetRowSize() != want || want == 0 {
		t.Fatalf("%d rows, want %d", r.GetRowSize(), want)
	}
	body, err := s.ExecuteJson(`YIELD 1 AS x`)
	if err != nil {
		t.Fatal(err)
	}
	var j map[string]interface{}
	if err := json.Unmarshal(body, &j); err != nil {
		t.Fatal(err)
	}
	res := j["results"].([]interface{})[0].(map[string]interface{})
	if fmt.Sprint(res["columns"]) != "[x]" || fmt.Sprint(res["data"]) != "[map[meta:[<nil>] row:[1]]]" {
		t.Fatalf("json %s", body)
	}
}

func TestConcurrentSessions(t *testing.T) {
	p := pool(t)
	defer p.Close()
	want := strings.Join(likesOf(t, "Tony Parker"), ",")
	var wg sync.WaitGroup
	errs := make(chan string, 32)
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := p.GetSession("root", "nebula")
			if err != nil {
				errs <- err.Error()
				return
			}
			defer s.Release()
			if r, err := s.Execute("USE nba"); err != nil || !r.IsSucceed() {
				errs <- "USE failed"
				return
			}
			for i := 0; i < 20; i++ {
				r, err := s.Execute(`GO FROM "Tony Parker" OVER like YIELD dst(edge) AS d, like.likeness AS l`)
				if err != nil || !r.IsSucceed() {
					errs <- fmt.Sprint(err)
					return
				}
				var got []string
				for k := 0; k < r.GetRowSize(); k++ {
					rec, _ := r.GetRowValuesByIndex(k)
					d, _ := rec.GetValueByIndex(0)
					l, _ := rec.GetValueByIndex(1)
					ds, _ := d.AsString()
					li, _ := l.AsInt()
					got = append(got, ds+":"+strconv.FormatInt(li, 10))
				}
				sort.Strings(got)
				if strings.Join(got, ",") != want {
					errs <- "wrong rows: " + strings.Join(got, ",")
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
}

func sessionPool(t *testing.T, port int) *nebula.SessionPool {
	conf, err := nebula.NewSessionPoolConf("root", "nebula", []nebula.HostAddress{{Host: "127.0.0.1", Port: port}}, "nba")
	if err != nil {
		t.Fatal(err)
	}
	sp, err := nebula.NewSessionPool(*conf, nebula.DefaultLogger{})
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

func TestSessionPool(t *testing.T) {
	sp := sessionPool(t, port)
	defer sp.Close()
	r, err := sp.Execute(`GO FROM "Tim Duncan" OVER like YIELD dst(edge) AS d`)
	if err != nil || !r.IsSucceed() || r.GetRowSize() != len(likesOf(t, "Tim Duncan")) {
		t.Fatalf("%v %v", err, r)
	}
}

// The session pool survives its sessions expiring on the server: it opens a new one, pings it with
// `RETURN "NEBULA GO PING"` and runs the statement again.
func TestSessionPoolRecoversFromExpiredSessions(t *testing.T) {
	p, stop, err := startServer("--session-idle-timeout-secs", "1")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	sp := sessionPool(t, p)
	defer sp.Close()
	want := len(likesOf(t, "Tim Duncan"))
	for round := 0; round < 2; round++ {
		r, err := sp.Execute(`GO FROM "Tim Duncan" OVER like YIELD dst(edge) AS d`)
		if err != nil || !r.IsSucceed() || r.GetRowSize() != want {
			t.Fatalf("round %d: %v %v", round, err, r)
		}
		time.Sleep(2500 * time.Millisecond)
	}
}

// pathParam: a (player) -like@0-> b, then c -like@2-> b walked against its direction: one step each way.
func pathParam() ntypes.Value {
	str := func(s string) *ntypes.Value { return &ntypes.Value{SVal: []byte(s)} }
	one, likeness := int64(1), int64(95)
	a := &ntypes.Vertex{Vid: str("a"), Tags: []*ntypes.Tag{{Name: []byte("player"), Props: map[string]*ntypes.Value{"age": {IVal: &one}}}}}
	b := &ntypes.Vertex{Vid: str("b"), Tags: []*ntypes.Tag{}}
	c := &ntypes.Vertex{Vid: str("c"), Tags: []*ntypes.Tag{{Name: []byte("team"), Props: map[string]*ntypes.Value{}}}}
	return ntypes.Value{PVal: &ntypes.Path{Src: a, Steps: []*ntypes.Step{
		{Dst: b, Type: 5, Name: []byte("like"), Ranking: 0, Props: map[string]*ntypes.Value{"likeness": {IVal: &likeness}}},
		{Dst: c, Type: -5, Name: []byte("like"), Ranking: 2, Props: map[string]*ntypes.Value{}},
	}}}
}

func nodeIDs(t *testing.T, nodes []*nebula.Node) string {
	var ids []string
	for _, n := range nodes {
		id, err := n.GetID().AsString()
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return strings.Join(ids, ",")
}

// relEnds: "src->dst@rank" of each relationship, in the stored direction as the client reports it.
func relEnds(rels []*nebula.Relationship) string {
	var out []string
	for _, r := range rels {
		src, _ := r.GetSrcVertexID().AsString()
		dst, _ := r.GetDstVertexID().AsString()
		out = append(out, fmt.Sprintf("%s->%s@%d", src, dst, r.GetRanking()))
	}
	return strings.Join(out, ",")
}

func TestPathParameterAndPathFunctions(t *testing.T) {
	p, s := session(t)
	defer p.Close()
	defer s.Release()
	r, err := s.ExecuteWithParameter(`YIELD $p AS p, toString($p) AS str, length($p) AS l, reversePath($p) AS rp, `+
		`nodes($p) AS n, relationships($p) AS r, endNode($p) AS e`, map[string]interface{}{"p": pathParam()})
	if err != nil || !r.IsSucceed() {
		t.Fatalf("%v %s", err, r.GetErrorMsg())
	}
	rec, _ := r.GetRowValuesByIndex(0)
	col := func(name string) *nebula.ValueWrapper {
		v, err := rec.GetValueByColName(name)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	path, err := col("p").AsPath()
	if err != nil {
		t.Fatal(err)
	}
	// Quiver prints a path as nebula-go (and so NebulaGraph's console) does.
	want := `<("a" :player{age: 1})-[:like@0 {likeness: 95}]->("b")<-[:like@2 {}]-("c" :team{})>`
	str, _ := col("str").AsString()
	if path.String() != want || str != want {
		t.Fatalf("path %s, toString %s", path.String(), str)
	}
	if path.GetPathLength() != 2 || nodeIDs(t, path.GetNodes()) != "a,b,c" || relEnds(path.GetRelationships()) != "a->b@0,c->b@2" {
		t.Fatalf("path %s: %s %s", path.String(), nodeIDs(t, path.GetNodes()), relEnds(path.GetRelationships()))
	}
	start, _ := path.GetStartNode()
	props, _ := start.Properties("player")
	if age, _ := props["age"].AsInt(); age != 1 || path.GetRelationships()[0].GetEdgeName() != "like" {
		t.Fatalf("path %s", path.String())
	}
	if l, _ := col("l").AsInt(); l != 2 {
		t.Fatalf("length %d", l)
	}
	rp, err := col("rp").AsPath()
	if err != nil || nodeIDs(t, rp.GetNodes()) != "c,b,a" || relEnds(rp.GetRelationships()) != "c->b@2,a->b@0" {
		t.Fatalf("reversePath %v %v", err, rp)
	}
	n, _ := col("n").AsList()
	rels, _ := col("r").AsList()
	end, err := col("e").AsNode()
	if len(n) != 3 || len(rels) != 2 || err != nil || end.String() != `("c" :team{})` {
		t.Fatalf("nodes %v relationships %v endNode %v %v", n, rels, end, err)
	}
	second, err := rels[1].AsRelationship()
	if err != nil || relEnds([]*nebula.Relationship{second}) != "c->b@2" {
		t.Fatalf("relationships()[1] %v %v", second, err)
	}
}

func TestMatchPathValues(t *testing.T) {
	p, s := session(t)
	defer p.Close()
	defer s.Release()
	mustExec(t, s, "USE nba")
	players := map[string]string{}
	for _, r := range csvRows(t, "player.csv") {
		players[r[0]] = r[1]
	}
	r := mustExec(t, s, `MATCH p = (v:player {name: "Tim Duncan"})-[e:like]->(w) RETURN p, v, e`)
	if strings.Join(r.GetColNames(), ",") != "p,v,e" {
		t.Fatalf("columns %v", r.GetColNames())
	}
	var got []string
	for i := 0; i < r.GetRowSize(); i++ {
		rec, _ := r.GetRowValuesByIndex(i)
		pv, _ := rec.GetValueByColName("p")
		vv, _ := rec.GetValueByColName("v")
		ev, _ := rec.GetValueByColName("e")
		path, err := pv.AsPath()
		if err != nil {
			t.Fatal(err)
		}
		node, err := vv.AsNode()
		if err != nil {
			t.Fatal(err)
		}
		rel, err := ev.AsRelationship()
		if err != nil {
			t.Fatal(err)
		}
		nodes := path.GetNodes()
		if path.GetPathLength() != 1 || len(nodes) != 2 || !nodes[0].IsEqualTo(node) {
			t.Fatalf("path %s, v %s", path.String(), node.String())
		}
		tags := node.GetTags()
		sort.Strings(tags)
		startTags := nodes[0].GetTags()
		sort.Strings(startTags)
		bachelor, _ := node.Properties("bachelor")
		spec, _ := bachelor["speciality"].AsString()
		if strings.Join(tags, ",") != "bachelor,player" || strings.Join(startTags, ",") != "bachelor,player" || spec != "psychology" {
			t.Fatalf("v %s, path start %s", node.String(), nodes[0].String())
		}
		dst, _ := nodes[1].GetID().AsString()
		endProps, err := nodes[1].Properties("player")
		if err != nil {
			t.Fatalf("path end %s: %v", nodes[1].String(), err)
		}
		if name, _ := endProps["name"].AsString(); name != players[dst] {
			t.Fatalf("path end %s", nodes[1].String())
		}
		step := path.GetRelationships()[0]
		for _, x := range []*nebula.Relationship{step, rel} {
			if relEnds([]*nebula.Relationship{x}) != "Tim Duncan->"+dst+"@0" || x.GetEdgeName() != "like" {
				t.Fatalf("relationship %s", x.String())
			}
		}
		like, _ := rel.Properties()["likeness"].AsInt()
		if stepLike, _ := step.Properties()["likeness"].AsInt(); stepLike != like {
			t.Fatalf("step %s, e %s", step.String(), rel.String())
		}
		got = append(got, dst+":"+strconv.FormatInt(like, 10))
	}
	sort.Strings(got)
	if want := likesOf(t, "Tim Duncan"); strings.Join(got, ",") != strings.Join(want, ",") || len(want) == 0 {
		t.Fatalf("got %v want %v", got, want)
	}
}

// FIND PATH and GET SUBGRAPH values: a path walked against its edge (Tony Parker likes Tim Duncan, found REVERSELY
// from Tim Duncan) with its vertices' tags (WITH PROP), and GET SUBGRAPH's lists of vertices and edges.
func TestFindPathAndSubgraphValues(t *testing.T) {
	p, s := session(t)
	defer p.Close()
	defer s.Release()
	mustExec(t, s, "USE nba")
	r := mustExec(t, s, `FIND SHORTEST PATH WITH PROP FROM "Tim Duncan" TO "Tony Parker" OVER like REVERSELY YIELD path AS p`)
	if r.GetRowSize() != 1 || strings.Join(r.GetColNames(), ",") != "p" {
		t.Fatalf("rows %d, columns %v", r.GetRowSize(), r.GetColNames())
	}
	rec, _ := r.GetRowValuesByIndex(0)
	pv, _ := rec.GetValueByColName("p")
	path, err := pv.AsPath()
	if err != nil {
		t.Fatal(err)
	}
	nodes := path.GetNodes()
	if path.GetPathLength() != 1 || len(nodes) != 2 {
		t.Fatalf("path %s", path.String())
	}
	tags := nodes[0].GetTags()
	sort.Strings(tags)
	if strings.Join(tags, ",") != "bachelor,player" {
		t.Fatalf("start %s", nodes[0].String())
	}
	if got := relEnds(path.GetRelationships()); got != "Tony Parker->Tim Duncan@0" {
		t.Fatalf("relationships %s", got)
	}
	r = mustExec(t, s, `GET SUBGRAPH 1 STEPS FROM "Yao Ming" OUT serve YIELD VERTICES AS v, EDGES AS e`)
	rec, _ = r.GetRowValuesByIndex(0)
	vv, _ := rec.GetValueByColName("v")
	ev, _ := rec.GetValueByColName("e")
	vs, err := vv.AsList()
	if err != nil || len(vs) != 1 {
		t.Fatalf("vertices %s", vv.String())
	}
	es, err := ev.AsList()
	if err != nil || len(es) == 0 {
		t.Fatalf("edges %s", ev.String())
	}
	for _, e := range es {
		rel, err := e.AsRelationship()
		if err != nil || rel.GetEdgeName() != "serve" {
			t.Fatalf("edge %s", e.String())
		}
		if src, _ := rel.GetSrcVertexID().AsString(); src != "Yao Ming" {
			t.Fatalf("edge %s", e.String())
		}
	}
}

// TestPasswordsWithAuthorization: a server started with --enable-authorize refuses wrong passwords and unknown users
// with NebulaGraph's errors, and signs in root with its password.
func TestPasswordsWithAuthorization(t *testing.T) {
	authPort, stop, err := startServer("--enable-authorize")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	p, err := nebula.NewConnectionPool([]nebula.HostAddress{{Host: "127.0.0.1", Port: authPort}}, nebula.GetDefaultConf(), nebula.DefaultLogger{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if _, err := p.GetSession("root", "wrong"); err == nil || !strings.Contains(err.Error(), "Invalid password") {
		t.Fatalf("a wrong password: %v", err)
	}
	if _, err := p.GetSession("nobody", "nebula"); err == nil || !strings.Contains(err.Error(), "User not exist") {
		t.Fatalf("an unknown user: %v", err)
	}
	s, err := p.GetSession("root", "nebula")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Release()
	r := mustExec(t, s, "SHOW USERS")
	if r.GetRowSize() != 1 {
		t.Fatalf("SHOW USERS: %d rows", r.GetRowSize())
	}
}
