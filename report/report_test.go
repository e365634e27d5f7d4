package report

import (
	"bytes"
	"encoding/base64"
	"html"
	"image"
	"image/png"
	"math"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pairfed/pairfed/coordinator"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/protocol"
)

// synthetic returns n records of dimension d with a linear signal and
// scores rounded to a coarse grid, so that ties occur.
func synthetic(n, d int, seed uint64) (*pairwise.Dataset, []float64) {
	r := rand.New(rand.NewPCG(seed, 1))
	w := make([]float64, d)
	for j := range w {
		w[j] = r.NormFloat64()
	}
	x := make([]float64, n*d)
	y := make([]float64, n)
	for i := range n {
		var s float64
		for j := range d {
			v := math.Round((2*r.Float64()-1)*4) / 4 // coarse: many tied scores
			x[i*d+j] = v
			s += v * w[j]
		}
		y[i] = -1
		if s+0.8*r.NormFloat64() > 0 {
			y[i] = 1
		}
	}
	return pairwise.NewDense(x, y, d), w
}

func TestNewROCAreaIsTheAUC(t *testing.T) {
	for seed := range uint64(20) {
		ds, w := synthetic(50+int(seed)*37, 3, seed)
		r, err := NewROC(w, ds)
		if err != nil {
			t.Fatal(err)
		}
		// Exactly pairwise's AUC (same rational, computed on counts), and
		// the O(n²) definition up to rounding.
		if r.AUC != pairwise.LinearAUC(w, ds) || r.AUC != r.LinearAUC {
			t.Errorf("seed %d: ROC area %v, LinearAUC %v", seed, r.AUC, pairwise.LinearAUC(w, ds))
		}
		scores := pairwise.ScoresTo(make([]float64, ds.N), w, ds)
		if brute := pairwise.AUCBrute(scores, ds.Y); math.Abs(brute-r.AUC) > 1e-12 {
			t.Errorf("seed %d: ROC area %v, brute-force AUC %v", seed, r.AUC, brute)
		}
		if r.Positives+r.Negatives != ds.N || r.FPR[0] != 0 || r.TPR[0] != 0 || r.FPR[len(r.FPR)-1] != 1 || r.TPR[len(r.TPR)-1] != 1 {
			t.Errorf("seed %d: counts %d+%d of %d, curve %v … %v", seed, r.Positives, r.Negatives, ds.N, r.FPR[0], r.FPR[len(r.FPR)-1])
		}
		if len(r.FPR) >= ds.N+1 { // ties merge points
			t.Errorf("seed %d: %d points for %d records: no tied scores?", seed, len(r.FPR), ds.N)
		}
	}
}

func TestNewROCErrors(t *testing.T) {
	ds, w := synthetic(40, 3, 1)
	if _, err := NewROC(w[:2], ds); err == nil || !strings.Contains(err.Error(), "d = 3") {
		t.Errorf("wrong dimension: %v", err)
	}
	one := pairwise.NewDense([]float64{1, 2, 3}, []float64{1, 1, 1}, 1)
	if _, err := NewROC([]float64{1}, one); err == nil || !strings.Contains(err.Error(), "3 positive and 0 negative") {
		t.Errorf("one class: %v", err)
	}
}

// A random ledger of several jobs and sites: the last point of each site
// is coordinator.Spent's total, every job appears once per site, and the
// totals never decrease.
func TestSpendOverTimeComposesAsSpent(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	var charges []coordinator.Charge
	for j := range 12 {
		job := "job-" + strconv.Itoa(j)
		eps, delta := float64(1+r.IntN(8))/8, float64(1+r.IntN(4))*1e-4
		mech := "gaussian"
		if j%5 == 4 {
			eps, delta, mech = 0, 0, "none"
		}
		for _, site := range []string{"a", "b", "c"} {
			if r.IntN(3) == 0 {
				continue
			}
			for phase := range 1 + r.IntN(4) {
				charges = append(charges, coordinator.Charge{Key: coordinator.ChargeKey(job, site, phase), Site: site, Job: job, Phase: phase,
					Mechanism: mech, Epsilon: eps, Delta: delta, Private: mech != "none", Time: t0.Add(time.Duration(j*60+phase) * time.Second)})
			}
		}
	}
	r.Shuffle(len(charges), func(i, j int) { charges[i], charges[j] = charges[j], charges[i] })
	series := SpendOverTime(charges)
	for _, sp := range coordinator.Spent(charges) {
		pts := series[sp.Site]
		if len(pts) != sp.Jobs {
			t.Errorf("site %s: %d points for %d jobs", sp.Site, len(pts), sp.Jobs)
		}
		last := pts[len(pts)-1]
		if math.Abs(last.Epsilon-sp.Epsilon) > 1e-12 || math.Abs(last.Delta-sp.Delta) > 1e-15 {
			t.Errorf("site %s: last point (%v, %v), Spent (%v, %v)", sp.Site, last.Epsilon, last.Delta, sp.Epsilon, sp.Delta)
		}
		for i := 1; i < len(pts); i++ {
			if pts[i].Time.Before(pts[i-1].Time) || pts[i].Epsilon < pts[i-1].Epsilon {
				t.Errorf("site %s: point %d %v after %v", sp.Site, i, pts[i], pts[i-1])
			}
		}
	}
}

// fixture is a completed private job of sites a and b, the second of two
// jobs in the ledger; site a has a budget.
func fixture(t *testing.T) *Input {
	t.Helper()
	ds, w := synthetic(200, 3, 7)
	roc, err := NewROC(w, ds)
	if err != nil {
		t.Fatal(err)
	}
	roc.TestFile, roc.Scale = "test<1>.libsvm", "minmax"
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	var charges []coordinator.Charge
	add := func(job, site string, phase int, eps float64, at time.Duration, sigma float64) {
		charges = append(charges, coordinator.Charge{Key: coordinator.ChargeKey(job, site, phase), Site: site, Job: job, Phase: phase,
			Algo: "fed-dp-local-sgd", Mechanism: "gaussian", Sigma: sigma, Records: 60, Epsilon: eps, Delta: 1e-3, Private: true,
			Accountant: coordinator.AccountantRule, Time: t0.Add(at)})
	}
	add("first", "a", 0, 0.5, 0, 0)
	add("first", "b", 0, 0.5, 0, 0)
	add("first", "a", 1, 0.5, time.Second, 3.25)
	for _, s := range []string{"a", "b"} {
		add("second", s, 0, 1, 10*time.Minute, 0)
		add("second", s, 1, 1, 10*time.Minute+time.Second, 2.5)
		add("second", s, 2, 1, 10*time.Minute+2*time.Second, 1.25)
	}
	st := &protocol.JobStatus{Job: "second", Status: protocol.StatusCompleted, Algo: "fed-dp-local-sgd", Phases: 2,
		Sites: []string{"a", "b"}, Model: w, AUC: roc.AUC, TestRecords: ds.N, PhaseAUC: []float64{0.61234, 0.78901},
		Privacy: []protocol.SiteReport{
			{Site: "a", Records: 60, Epsilon: 1, Delta: 1e-3, Sigmas: []float64{2.5, 1.25}, Secure: true, CertifiedEpsilon: 0.99999, CertifiedDelta: 0.00099},
			{Site: "b", Records: 60, Epsilon: 1, Delta: 1e-3, Sigmas: []float64{2.5, 1.25}, Secure: true},
		},
		Announce: &protocol.JobAnnounce{Job: "second", Algo: "fed-dp-local-sgd", Task: "auc", Loss: "logistic", Params: 3, Phases: 2,
			Eta: 0.125, ParamRadius: 1, FeatureRadius: 1, Lambda: 0, Epsilon: 1, Delta: 1e-3, Seed: 42, Sites: []string{"a", "b"}}}
	return &Input{Status: st, Source: "state/jobs/second.json", Charges: charges,
		Budgets: map[string]coordinator.Budget{"a": {Epsilon: 3, Delta: 0.01}}, ROC: roc,
		Generated: time.Date(2025, 3, 2, 9, 30, 0, 0, time.UTC)}
}

var dataURI = regexp.MustCompile(`src="data:image/png;base64,([A-Za-z0-9+/=]+)"`)

// checkImages asserts that the page embeds exactly out.Images, each a PNG
// of its stated size with something drawn on it.
func checkImages(t *testing.T, out *Output, want map[string][2]int) {
	t.Helper()
	m := dataURI.FindAllSubmatch(out.HTML, -1)
	if len(m) != len(out.Images) || len(out.Images) != len(want) {
		t.Fatalf("%d embedded images, %d returned, want %d", len(m), len(out.Images), len(want))
	}
	for i, img := range out.Images {
		b, err := base64.StdEncoding.DecodeString(string(m[i][1]))
		if err != nil || !bytes.Equal(b, img.PNG) {
			t.Fatalf("image %d: embedded bytes differ from %s (%v)", i, img.Name, err)
		}
		size, ok := want[img.Name]
		if !ok {
			t.Fatalf("unexpected image %s", img.Name)
		}
		CheckPNG(t, img.Name, img.PNG, size[0], size[1])
		if img.Width != size[0] || img.Height != size[1] {
			t.Errorf("%s: declared %dx%d", img.Name, img.Width, img.Height)
		}
	}
}

// CheckPNG asserts that b is a PNG of w × h pixels that is not blank.
func CheckPNG(t *testing.T, name string, b []byte, w, h int) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if bd := img.Bounds(); bd.Dx() != w || bd.Dy() != h {
		t.Fatalf("%s: %dx%d pixels, want %dx%d", name, bd.Dx(), bd.Dy(), w, h)
	}
	if dark, coloured := inked(img); dark < 2000 || coloured < 200 {
		t.Fatalf("%s looks blank: %d dark, %d coloured pixels", name, dark, coloured)
	}
}

func inked(img image.Image) (dark, coloured int) {
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r < 0xc000 || g < 0xc000 || bl < 0xc000 {
				dark++
			}
			if max(r, g, bl)-min(r, g, bl) > 0x4000 {
				coloured++
			}
		}
	}
	return dark, coloured
}

func TestRenderCompletedJob(t *testing.T) {
	in := fixture(t)
	out, err := Render(in)
	if err != nil {
		t.Fatal(err)
	}
	page := string(out.HTML)
	for _, want := range []string{
		"<!DOCTYPE html>", "<title>pairfed report: job second</title>",
		`<span class="badge good" id="status">completed</span>`,
		`<span class="badge good" id="verdict">private</span>`,
		`<td id="sites">a, b</td>`, `<td id="dropped">none</td>`,
		// the test AUC and the phase AUCs
		`<td id="test-auc">` + strconv.FormatFloat(in.Status.AUC, 'f', 4, 64) + ` (n_test = 200)</td>`,
		`<td class="num">1</td><td class="num">0.6123</td>`, `<td class="num">2</td><td class="num">0.7890</td>`,
		// exact parameters
		`<td><code>eta</code></td><td class="mono">0.125</td>`, `<td><code>delta</code></td><td class="mono">0.001</td>`,
		`<td><code>seed</code></td><td class="mono">42</td>`, `<td><code>aggregation</code></td><td class="mono">weighted mean (default)</td>`,
		// requested vs certified (charged) guarantees; b states none
		`<tr><td>a</td><td class="num">60</td><td class="num">1</td><td class="num">0.001</td><td class="num">0.99999</td><td class="num">0.00099</td>`,
		`<tr><td>b</td><td class="num">60</td><td class="num">1</td><td class="num">0.001</td><td class="num">—</td><td class="num">—</td>`,
		"site a: record-level (ε, δ) = (1, 0.001) requested, (0.99999, 0.00099) certified and charged",
		// the sites' σ and the accountant
		`<tr><td>a</td><td class="num">2.5</td><td class="num">1.25</td></tr>`,
		`<span id="accountant">` + html.EscapeString(coordinator.AccountantRule) + `</span>`,
		// spent over both jobs: ε 0.5 + 1 for a and b; a's budget 3, remaining 1.5
		`<tr><td>a</td><td class="num">1</td><td class="num">1.5</td><td class="num">0.002</td><td class="num">3</td><td class="num">0.01</td><td class="num">1.5</td><td class="num">0.008</td><td class="num">2</td><td class="num">0</td></tr>`,
		`<tr><td>b</td><td class="num">1</td><td class="num">1.5</td><td class="num">0.002</td><td class="num">none</td><td class="num">none</td><td class="num">—</td><td class="num">—</td><td class="num">2</td><td class="num">0</td></tr>`,
		// this job's ledger entries (and not the first job's σ 3.25)
		`<tr><td>b</td><td class="num">2</td><td>gaussian</td><td class="num">1.25</td>`,
		`2025-03-01 12:10:02.000`,
		// ROC
		`<td class="mono" id="roc-auc">` + strconv.FormatFloat(in.ROC.AUC, 'g', -1, 64) + `</td>`,
		`<td class="mono" id="status-auc">` + strconv.FormatFloat(in.Status.AUC, 'g', -1, 64) + `</td>`,
		"test&lt;1&gt;.libsvm", // escaped
		"Generated by <code>pairfed report</code> at 2025-03-02T09:30:00Z",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	for _, bad := range []string{"3.25", "test<1>", "roc-mismatch", `id="incomplete"`, "ZgotmplZ", "http://", "https://", "<script"} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q", bad)
		}
	}
	checkImages(t, out, map[string][2]int{ImagePhaseAUC: {PlotWidth, PlotHeight}, ImageSpent: {PlotWidth, PlotHeight}, ImageROC: {ROCSize, ROCSize}})
}

// A status that does not match the ROC's test set is flagged; so is a
// site whose noise was not secure.
func TestRenderFlagsMismatchAndInsecureNoise(t *testing.T) {
	in := fixture(t)
	in.Status.AUC = 0.5
	in.Status.Privacy[1].Secure = false
	out, err := Render(in)
	if err != nil {
		t.Fatal(err)
	}
	page := string(out.HTML)
	for _, want := range []string{`id="roc-mismatch"`, `<span class="badge bad" id="verdict">NOT private</span>`, "site(s) b reported noise that is not private", "--scale none"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	v, why := Verdict(&protocol.JobStatus{Job: "j", Status: protocol.StatusCompleted, Algo: "fed-avg"}, nil)
	if v != VerdictNotPrivate || !strings.Contains(why[0], "fed-avg adds no noise") {
		t.Errorf("fed-avg: %s %v", v, why)
	}
}

// A refused job renders its status, its reason (escaped) and its
// parameters, says that it did not complete, and draws what exists.
func TestRenderIncompleteJob(t *testing.T) {
	in := fixture(t)
	st := in.Status
	st.Status, st.Reason = protocol.StatusFailed, `site <b>a</b> & "b" left: quorum 2 lost`
	st.Model, st.AUC, st.TestRecords, st.Privacy, st.Phases = nil, 0, 0, nil, 1
	st.PhaseAUC = st.PhaseAUC[:1]
	in.ROC, in.NoROC = nil, "No ROC curve: job second did not complete."
	out, err := Render(in)
	if err != nil {
		t.Fatal(err)
	}
	page := string(out.HTML)
	for _, want := range []string{
		`<span class="badge bad" id="status">failed</span>`, `id="incomplete">Job second did not complete (status failed)`,
		html.EscapeString(st.Reason), `<td><code>eta</code></td><td class="mono">0.125</td>`,
		`<span class="badge pending" id="verdict">no verdict</span>`, `id="no-roc">No ROC curve: job second did not complete.`,
		"not evaluated",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page, "<b>a</b>") || strings.Contains(page, `id="model"`) {
		t.Error("reason not escaped, or a model table for a failed job")
	}
	checkImages(t, out, map[string][2]int{ImagePhaseAUC: {PlotWidth, PlotHeight}, ImageSpent: {PlotWidth, PlotHeight}})

	// Refused before it started: no announcement, no ledger entry.
	in = &Input{Status: &protocol.JobStatus{Job: "late", Status: protocol.StatusRefused, Algo: "fed-dp-local-sgd", Refused: []string{"a"},
		Reason: "coordinator ledger: site a has spent …"}, Charges: fixture(t).Charges, NoROC: "none"}
	out, err = Render(in)
	if err != nil {
		t.Fatal(err)
	}
	page = string(out.HTML)
	for _, want := range []string{"no parameters were recorded", `<td id="refused">a</td>`, "The ledger holds no entry for this job.", "No AUC per phase was recorded"} {
		if !strings.Contains(page, want) {
			t.Errorf("refused job: page lacks %q", want)
		}
	}
	// Site a's spending over time is still drawn (it is this job's site).
	checkImages(t, out, map[string][2]int{ImageSpent: {PlotWidth, PlotHeight}})
}

func TestRenderRejectsInvalidStatus(t *testing.T) {
	if _, err := Render(&Input{Status: &protocol.JobStatus{Job: "../x", Status: protocol.StatusCompleted}}); err == nil {
		t.Error("an invalid job id was rendered")
	}
	if _, err := Render(&Input{}); err == nil {
		t.Error("no status was rendered")
	}
}
