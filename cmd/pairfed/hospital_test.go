package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/model"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/protocol"
)

// writePatients writes n synthetic records in the layout of
// data/testdata/patients.csv (schemas/patients-example.json): an ID
// column, text categorical columns (one with a type outside the schema's
// list, counted as admission=other), missing values ("" and "?") and text
// labels; the label depends on age, bmi, admission and blood pressure.
func writePatients(t *testing.T, path string, n int, seed uint64, first int) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 7))
	var b strings.Builder
	b.WriteString("patient_id,age,sex,bmi,admission,systolic_bp,readmitted\n")
	adm := []string{"elective", "emergency", "transfer", "day-case"}
	missing := func(s string) string {
		switch r.IntN(20) {
		case 0:
			return ""
		case 1:
			return "?"
		}
		return s
	}
	for i := range n {
		age := 18 + r.IntN(80)
		sex := []string{"F", "M"}[r.IntN(2)]
		bmi := 15 + 30*r.Float64()
		a := adm[r.IntN(4)]
		bp := 90 + r.IntN(110)
		z := 0.04*float64(age-55) + 0.08*(bmi-30) + 0.02*float64(bp-140) + map[string]float64{"emergency": 1}[a] + r.NormFloat64()
		label := "no"
		if z > 0.3 {
			label = "yes"
		}
		fmt.Fprintf(&b, "P%05d,%s,%s,%s,%s,%s,%s\n", first+i, missing(strconv.Itoa(age)), missing(sex), missing(strconv.FormatFloat(bmi, 'f', 1, 64)),
			missing(a), missing(strconv.Itoa(bp)), label)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Must-show 1, end to end: a coordinator and three hospital workers (each
// with its own CSV export: an ID column, text categorical columns, missing
// values, text labels; each started with the federation's schema and
// --impute schema — a worker reads its file when it starts, and text
// columns and --impute schema need a schema there), a private job (the default private algorithm, ε = 1)
// carrying schemas/patients-example.json, then `job model` with no
// --feature-bounds: the artefact carries the job's map. `pairfed score` on
// new records gives, bit for bit, the scores the coordinator's evaluator
// computes (the test file read with the job's schema, the sites' map, the
// model's inner products), and `pairfed evaluate` on the coordinator's
// test file prints exactly the AUC the job reported.
func TestHospitalEndToEnd(t *testing.T) {
	root := t.TempDir()
	schema := "../../schemas/patients-example.json"
	test, fresh := filepath.Join(root, "test.csv"), filepath.Join(root, "new.csv")
	writePatients(t, test, 300, 100, 90000)
	writePatients(t, fresh, 40, 101, 95000)
	sites := []string{"north", "south", "east"}
	for i, s := range sites {
		writePatients(t, filepath.Join(root, s+".csv"), 400, uint64(i+1), 10000*(i+1))
	}
	var logs syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	var procs []*proc
	defer func() {
		cancel()
		for _, p := range procs {
			select {
			case <-p.done:
			case <-time.After(20 * time.Second):
				t.Error("a process did not stop")
			}
		}
		if t.Failed() {
			t.Logf("log:\n%s", logs.String())
		}
	}()
	state := filepath.Join(root, "coord")
	coord := startPairfed(ctx, &logs, "coordinator", "--listen", "127.0.0.1:0", "--federation", "h", "--state", state,
		"--test", test, "--feature-bounds", schema, "--impute", "schema", "--min-sites", "3", "--tick", "10ms")
	procs = append(procs, coord)
	urlRE := regexp.MustCompile(`listening on (nats://\S+)`)
	waitFor(t, 15*time.Second, "the coordinator's URL", func() bool {
		select {
		case <-coord.done:
			t.Fatalf("the coordinator stopped: %v", coord.err)
		default:
		}
		return urlRE.MatchString(coord.stdout.String())
	})
	url := urlRE.FindStringSubmatch(coord.stdout.String())[1]
	for _, s := range sites {
		procs = append(procs, startPairfed(ctx, &logs, "worker", "--nats", url, "--federation", "h", "--site", s,
			"--data", filepath.Join(root, s+".csv"), "--feature-bounds", schema, "--impute", "schema",
			"--state", filepath.Join(root, "site-"+s), "--tick", "10ms", "--heartbeat", "50ms"))
	}
	waitFor(t, 15*time.Second, "the three sites to join", func() bool {
		for _, p := range procs {
			select {
			case <-p.done:
				t.Fatalf("a process stopped: %v\n%s", p.err, p.stderr.String())
			default:
			}
		}
		l := logs.String()
		return strings.Contains(l, "site north joined") && strings.Contains(l, "site south joined") && strings.Contains(l, "site east joined")
	})
	p, code := runPairfed(t, &logs, 90*time.Second, "job", "submit", "--nats", url, "--federation", "h", "--job", "ward-1",
		"--epsilon", "1", "--feature-bounds", schema, "--min-sites", "3", "--wait", "--json")
	out := p.stdout.String()
	if code != 0 || !topPrivate(t, out) {
		t.Fatalf("job: exit %d, %v\n%s", code, p.err, out)
	}
	var rep struct {
		Algorithm string                 `json:"algorithm"`
		AUC       struct{ Mean float64 } `json:"auc"`
		NTest     int                    `json:"n_test"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.NTest != 300 || !(rep.AUC.Mean > 0.6) {
		t.Fatalf("job report: %v, n_test %d, AUC %v\n%s", err, rep.NTest, rep.AUC.Mean, out)
	}

	// The artefact, asked over NATS, with no --feature-bounds.
	mpath := filepath.Join(root, "ward-1.model.json")
	p, code = runPairfed(t, &logs, 60*time.Second, "job", "model", "--nats", url, "--federation", "h", "--out", mpath, "ward-1")
	if code != 0 || !strings.Contains(p.stderr.String(), "ready for pairfed score/evaluate") {
		t.Fatalf("job model: exit %d, %v\n%s", code, p.err, p.stderr.String())
	}
	m, err := readModelFile(mpath)
	if err != nil {
		t.Fatal(err)
	}
	if !m.Certificate.Private || m.Preprocessing.Scale != "bounds" || m.Preprocessing.Schema == nil || m.D != 9 {
		t.Fatalf("artefact: private %v, scale %s, d %d", m.Certificate.Private, m.Preprocessing.Scale, m.D)
	}

	// The coordinator's scoring of the new records: its evaluator's path
	// (the file read with the job's schema and --impute schema, the
	// sites' map for the algorithm, pairwise inner products).
	coordScores := func(path string) ([]float64, *pairwise.Dataset) {
		s, err := data.LoadSchema(schema)
		if err != nil {
			t.Fatal(err)
		}
		opt := data.Options{Impute: "schema"}
		if _, err := s.Apply(&opt); err != nil {
			t.Fatal(err)
		}
		tab, err := data.Load(path, opt)
		if err != nil {
			t.Fatal(err)
		}
		R := m.Preprocessing.Radius
		var ds *pairwise.Dataset
		if fedalgo.CentresPrivately(m.Algorithm.Name) {
			ds = s.Scaler().Divide(R).Apply(tab.Dataset)
		} else if ds, _, err = data.Clip(s.Scaler().Apply(tab.Dataset), R); err != nil {
			t.Fatal(err)
		}
		return pairwise.ScoresTo(make([]float64, ds.N), m.Weights, ds), ds
	}
	want, _ := coordScores(fresh)
	p, code = runPairfed(t, &logs, 30*time.Second, "score", "--model", mpath, "--data", fresh)
	if code != 0 {
		t.Fatalf("score: exit %d, %v\n%s", code, p.err, p.stderr.String())
	}
	rows, err := csv.NewReader(strings.NewReader(p.stdout.String())).ReadAll()
	if err != nil || len(rows) != len(want)+1 {
		t.Fatalf("score output: %v, %d rows for %d records\n%s", err, len(rows), len(want), p.stdout.String())
	}
	for i, w := range want {
		got, err := strconv.ParseFloat(rows[i+1][1], 64)
		if err != nil || math.Float64bits(got) != math.Float64bits(w) {
			t.Errorf("record %d: pairfed score %s, the coordinator's scoring %v", i+1, rows[i+1][1], w)
		}
	}

	// evaluate on the coordinator's test file: the job's AUC exactly (and
	// the evaluator's computation from the scores above).
	s, ds := coordScores(test)
	if a := pairwise.AUC(s, ds.Y); a != rep.AUC.Mean {
		t.Errorf("the coordinator's AUC recomputed %v, the job reported %v", a, rep.AUC.Mean)
	}
	p, code = runPairfed(t, &logs, 30*time.Second, "evaluate", "--model", mpath, "--data", test, "--json")
	var ev struct {
		AUC *float64 `json:"auc"`
		N   int      `json:"n"`
	}
	if code != 0 || json.Unmarshal([]byte(p.stdout.String()), &ev) != nil || ev.AUC == nil {
		t.Fatalf("evaluate: exit %d, %v\n%s%s", code, p.err, p.stdout.String(), p.stderr.String())
	}
	if *ev.AUC != rep.AUC.Mean || ev.N != 300 {
		t.Errorf("pairfed evaluate: AUC %v on n = %d; the job reported %v on %d", *ev.AUC, ev.N, rep.AUC.Mean, rep.NTest)
	}
	t.Logf("job %s: AUC %v on %d; evaluate %v; %d records scored; first score %s", rep.Algorithm, rep.AUC.Mean, rep.NTest, *ev.AUC, len(want), rows[1][1])
	// A private job of several phases (K = ⌈log₂ n_min⌉): its best phase on the coordinator's
	// test file is an artefact of its own (job model --best), labelled as
	// a selection on the evaluator's data, and evaluates to the best
	// phase's AUC exactly.
	p, code = runPairfed(t, &logs, 90*time.Second, "job", "submit", "--nats", url, "--federation", "h", "--job", "ward-2",
		"--algo", "fed-dp-local-sgd", "--epsilon", "1", "--feature-bounds", schema, "--min-sites", "3", "--wait", "--json")
	if code != 0 || !topPrivate(t, p.stdout.String()) {
		t.Fatalf("ward-2: exit %d, %v\n%s", code, p.err, p.stdout.String())
	}
	p, code = runPairfed(t, &logs, 30*time.Second, "job", "status", "--nats", url, "--federation", "h", "ward-2")
	var st protocol.JobStatus
	if code != 0 || json.Unmarshal([]byte(p.stdout.String()), &st) != nil || st.BestPhase < 1 || len(st.PhaseAUC) != st.Phases || st.BestAUC != slices.Max(st.PhaseAUC) {
		t.Fatalf("ward-2 status: exit %d: best phase %d (%v) of phase AUCs %v", code, st.BestPhase, st.BestAUC, st.PhaseAUC)
	}
	t.Logf("ward-2: %d phases, phase AUCs %v, best phase %d, final AUC %v", st.Phases, st.PhaseAUC, st.BestPhase, st.AUC)
	best := filepath.Join(root, "ward-2.best.json")
	p, code = runPairfed(t, &logs, 30*time.Second, "job", "model", "--nats", url, "--federation", "h", "--best", "--out", best, "ward-2")
	if code != 0 || !strings.Contains(p.stderr.String(), "best-phase model") {
		t.Fatalf("job model --best: exit %d, %v\n%s", code, p.err, p.stderr.String())
	}
	bm, err := readModelFile(best)
	if err != nil || !slices.Equal(bm.Weights, st.BestModel) || !bm.Certificate.Private || !strings.Contains(bm.Algorithm.Release, "selected on the coordinator's evaluation set") {
		t.Fatalf("best artefact: %v; release %q", err, bm.Algorithm.Release)
	}
	p, code = runPairfed(t, &logs, 30*time.Second, "evaluate", "--model", best, "--data", test, "--json")
	if code != 0 || json.Unmarshal([]byte(p.stdout.String()), &ev) != nil || *ev.AUC != st.BestAUC {
		t.Errorf("evaluate of the best model: %v, want the best phase's %v (exit %d)", ev.AUC, st.BestAUC, code)
	}
	if _, err := os.Stat(filepath.Join(state, "jobs", "ward-2.best.model.json")); err != nil {
		t.Errorf("the coordinator saved no best artefact: %v", err)
	}
	// The artefact in the state directory is the same model.
	saved, err := model.Decode(mustOpen(t, filepath.Join(state, "jobs", "ward-1.model.json")), "saved")
	if err != nil || saved.Preprocessing.Schema == nil || fmt.Sprint(saved.Weights) != fmt.Sprint(m.Weights) {
		t.Errorf("saved artefact: %v", err)
	}
}

func mustOpen(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// A worker compares the job's schema with its own feature by feature; with
// categorical columns (one schema entry, several one-hot features) this
// once indexed past the entries and crashed the worker on the
// announcement. Identical schemas decide the same records; a changed
// category list is named.
func TestSchemaDiffCategorical(t *testing.T) {
	b, err := os.ReadFile("../../schemas/patients-example.json")
	if err != nil {
		t.Fatal(err)
	}
	read := func(text string) *data.Schema {
		s, err := data.ReadSchema(strings.NewReader(text), "test")
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a := read(string(b))
	if d := schemaDiff(a, read(string(b))); d != "" {
		t.Errorf("identical schemas differ: %s", d)
	}
	other := read(strings.Replace(string(b), `"categories": ["F", "M"]`, `"categories": ["F", "M", "X"]`, 1))
	if d := schemaDiff(a, other); d == "" {
		t.Error("a different category list is not named")
	}
	renamed := read(strings.Replace(string(b), `"categories": ["F", "M"]`, `"categories": ["F", "W"]`, 1))
	if d := schemaDiff(a, renamed); !strings.Contains(d, `feature 3 is named "sex=M" here, "sex=W" in the job`) {
		t.Errorf("a renamed category: %q", d)
	}
}
