//go:build integration

package integration

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/model"
	"github.com/pairfed/pairfed/pairwise"
)

// hospitalCSV writes n synthetic records in the layout of
// schemas/patients-example.json: an ID column, text categorical columns
// (one type outside the schema's list: admission=other), missing values
// ("" and "?") and text labels.
func hospitalCSV(t *testing.T, path string, n int, seed uint64, first int) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 13))
	var b strings.Builder
	b.WriteString("patient_id,age,sex,bmi,admission,systolic_bp,readmitted\n")
	adm := []string{"elective", "emergency", "transfer", "day-case"}
	miss := func(s string) string {
		switch r.IntN(25) {
		case 0:
			return ""
		case 1:
			return "?"
		}
		return s
	}
	for i := range n {
		age, bmi, a, bp := 18+r.IntN(80), 15+30*r.Float64(), adm[r.IntN(4)], 90+r.IntN(110)
		z := 0.04*float64(age-55) + 0.08*(bmi-30) + 0.02*float64(bp-140) + map[string]float64{"emergency": 1}[a] + r.NormFloat64()
		label := map[bool]string{true: "yes", false: "no"}[z > 0.3]
		fmt.Fprintf(&b, "H%05d,%s,%s,%s,%s,%s,%s\n", first+i, miss(strconv.Itoa(age)), miss([]string{"F", "M"}[r.IntN(2)]),
			miss(strconv.FormatFloat(bmi, 'f', 1, 64)), miss(a), miss(strconv.Itoa(bp)), label)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Must-show 1 with real processes: a coordinator and three hospital
// workers (separate pairfed processes over NATS), each with its own CSV
// export; a private job with the default algorithm carrying
// schemas/patients-example.json; `job model` (no --feature-bounds) →
// `score` on new records equals the coordinator's evaluator's scoring bit
// for bit, and `evaluate` on the coordinator's test file prints the job's
// AUC exactly. Then jobs as objects: a job that cannot start is listed
// queued, cancelled, and listed failed "cancelled by …".
func TestHospitalAcrossProcesses(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	bin := pairfed(t)
	dir := t.TempDir()
	schema, _ := filepath.Abs("../schemas/patients-example.json")
	test, fresh := filepath.Join(dir, "test.csv"), filepath.Join(dir, "new.csv")
	hospitalCSV(t, test, 300, 50, 90000)
	hospitalCSV(t, fresh, 50, 51, 95000)
	coord := start(t, ctx, dir, "coordinator", bin, "coordinator", "--listen", "127.0.0.1:0", "--state", filepath.Join(dir, "coord"),
		"--test", test, "--feature-bounds", schema, "--impute", "schema", "--min-sites", "3")
	out := waitFor(t, ctx, coord.stdout, "listening on ", 1)
	url := strings.TrimSpace(strings.TrimPrefix(strings.SplitN(out, "\n", 2)[0], "listening on "))
	for i, h := range []string{"north", "south", "east"} {
		csvPath := filepath.Join(dir, h+".csv")
		hospitalCSV(t, csvPath, 400, uint64(i+1), 10000*(i+1))
		start(t, ctx, dir, h, bin, "worker", "--nats", url, "--site", h, "--data", csvPath, "--feature-bounds", schema,
			"--impute", "schema", "--state", filepath.Join(dir, "site-"+h))
	}
	waitFor(t, ctx, coord.stderr, "joined the federation", 3)

	out = run(t, ctx, "job", "submit", "--nats", url, "--job", "ward-1", "--feature-bounds", schema, "--epsilon", "1",
		"--min-sites", "3", "--wait", "--json", "--timeout", "90s")
	var rep struct {
		Status string                 `json:"status"`
		AUC    struct{ Mean float64 } `json:"auc"`
		NTest  int                    `json:"n_test"`
	}
	if err := json.Unmarshal([]byte(out[strings.Index(out, "{"):]), &rep); err != nil || rep.Status != "completed" || rep.NTest != 300 {
		t.Fatalf("job: %v\n%s", err, out)
	}
	mpath := filepath.Join(dir, "ward-1.json")
	run(t, ctx, "job", "model", "--nats", url, "--out", mpath, "ward-1")
	f, err := os.Open(mpath)
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.Decode(f, mpath)
	f.Close()
	if err != nil || !m.Certificate.Private || m.Scorable() != nil {
		t.Fatalf("artefact: %v (private %v, scorable %v)", err, m.Certificate.Private, m.Scorable())
	}

	// The coordinator's evaluator's scoring of the new records.
	s, err := data.LoadSchema(schema)
	if err != nil {
		t.Fatal(err)
	}
	opt := data.Options{Impute: "schema"}
	if _, err := s.Apply(&opt); err != nil {
		t.Fatal(err)
	}
	tab, err := data.Load(fresh, opt)
	if err != nil {
		t.Fatal(err)
	}
	var ds *pairwise.Dataset
	if fedalgo.CentresPrivately(m.Algorithm.Name) {
		ds = s.Scaler().Divide(m.Preprocessing.Radius).Apply(tab.Dataset)
	} else if ds, _, err = data.Clip(s.Scaler().Apply(tab.Dataset), m.Preprocessing.Radius); err != nil {
		t.Fatal(err)
	}
	want := pairwise.ScoresTo(make([]float64, ds.N), m.Weights, ds)
	cmd := exec.CommandContext(ctx, bin, "score", "--model", mpath, "--data", fresh)
	sout, err := cmd.Output()
	if err != nil {
		t.Fatalf("score: %v", err)
	}
	rows, err := csv.NewReader(strings.NewReader(string(sout))).ReadAll()
	if err != nil || len(rows) != len(want)+1 {
		t.Fatalf("score output: %v, %d rows\n%s", err, len(rows), sout)
	}
	for i, w := range want {
		if got, err := strconv.ParseFloat(rows[i+1][1], 64); err != nil || math.Float64bits(got) != math.Float64bits(w) {
			t.Errorf("record %d: score %s, the coordinator's %v", i+1, rows[i+1][1], w)
		}
	}
	cmd = exec.CommandContext(ctx, bin, "evaluate", "--model", mpath, "--data", test, "--json")
	eout, err := cmd.Output()
	var ev struct {
		AUC *float64 `json:"auc"`
	}
	if err != nil || json.Unmarshal(eout, &ev) != nil || ev.AUC == nil || *ev.AUC != rep.AUC.Mean {
		t.Errorf("evaluate: %v, AUC %v; the job reported %v\n%s", err, ev.AUC, rep.AUC.Mean, eout)
	}
	t.Logf("ward-1: AUC %v (job) = %v (evaluate); %d new records scored bit for bit", rep.AUC.Mean, *ev.AUC, len(want))

	// Jobs as objects.
	// ward-9's cancel key (job submit --cancel-key-out): only it, or the
	// coordinator's admin key, cancels the job.
	key9 := filepath.Join(dir, "ward-9.key")
	run(t, ctx, "job", "submit", "--nats", url, "--job", "ward-9", "--algo", "fed-avg", "--min-sites", "4", "--cancel-key-out", key9)
	list := func() []map[string]any {
		var l struct{ Jobs []map[string]any }
		if err := json.Unmarshal([]byte(run(t, ctx, "job", "list", "--nats", url, "--json")), &l); err != nil {
			t.Fatal(err)
		}
		return l.Jobs
	}
	l := list()
	if len(l) != 2 || l[0]["job"] != "ward-1" || l[0]["private"] != true || l[1]["status"] != "queued" {
		t.Fatalf("job list: %v", l)
	}
	if out := run(t, ctx, "job", "cancel", "--nats", url, "--cancel-key", "@"+key9, "ward-9"); !strings.Contains(out, "cancelled by c-") {
		t.Errorf("job cancel: %s", out)
	}
	if l := list(); l[1]["status"] != "failed" || !strings.HasPrefix(fmt.Sprint(l[1]["reason"]), "cancelled by c-") {
		t.Errorf("after the cancel: %v", l[1])
	}
}
