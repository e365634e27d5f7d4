package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/pairfed/pairfed/coordinator"
)

// Image sizes in pixels at PlotDPI. The wide plots have the size of the
// sweep plots (sweep.PlotWidth × sweep.PlotHeight); the ROC curve is
// square.
const (
	PlotWidth  = 900
	PlotHeight = 540
	ROCSize    = 600
	PlotDPI    = 96
)

// Names of the images Render draws.
const (
	ImagePhaseAUC = "auc_per_phase.png"
	ImageSpent    = "privacy_spent.png"
	ImageROC      = "roc.png"
)

func pixels(px int) vg.Length { return vg.Length(px) / PlotDPI * vg.Inch }

var (
	dashed = []vg.Length{vg.Points(6), vg.Points(3)}
	dotted = []vg.Length{vg.Points(2), vg.Points(3)}
	grey   = color.Gray{Y: 0x70}
)

// renderPNG draws p on a w × h canvas, with leg (when not nil) to the right
// of the axes, as the sweep plots are laid out.
func renderPNG(p *plot.Plot, leg *plot.Legend, w, h int) ([]byte, error) {
	c := vgimg.NewWith(vgimg.UseWH(pixels(w), pixels(h)), vgimg.UseDPI(PlotDPI))
	dc := draw.New(c)
	lw := vg.Length(0)
	if leg != nil {
		lw = min(leg.Rectangle(dc).Size().X+vg.Points(12), dc.Size().X*0.45)
	}
	p.Draw(draw.Crop(dc, vg.Points(4), -lw, vg.Points(4), -vg.Points(6)))
	if leg != nil {
		leg.Draw(draw.Crop(dc, dc.Size().X-lw+vg.Points(6), 0, 0, -vg.Points(36)))
	}
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func newLegend() *plot.Legend {
	leg := plot.NewLegend()
	leg.Top, leg.Left = true, true
	leg.Padding = vg.Points(4)
	return &leg
}

func hline(y, x0, x1 float64, col color.Color, dashes []vg.Length) (*plotter.Line, error) {
	l, err := plotter.NewLine(plotter.XYs{{X: x0, Y: y}, {X: x1, Y: y}})
	if err != nil {
		return nil, err
	}
	l.Color, l.Width, l.Dashes = col, vg.Points(1.2), dashes
	return l, nil
}

// intTicks marks integers (phases) with a step that keeps at most ~12.
type intTicks struct{}

func (intTicks) Ticks(lo, hi float64) []plot.Tick {
	first, last := math.Ceil(lo), math.Floor(hi)
	step := 1.0
	for (last-first)/step > 12 {
		step *= 2
	}
	var t []plot.Tick
	for v := first; v <= last; v += step {
		t = append(t, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', 0, 64)})
	}
	return t
}

// phaseAUCPlot draws the test AUC after each phase, the chance level and,
// when known, the AUC of the job's final model.
func phaseAUCPlot(job string, aucs []float64, final float64, haveFinal bool) ([]byte, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Test AUC after each phase: job %s", job)
	p.X.Label.Text = "phase"
	p.Y.Label.Text = "test AUC (coordinator's model after the phase)"
	pts := make(plotter.XYs, len(aucs))
	lo, hi := 0.5, 0.5
	for i, a := range aucs {
		pts[i] = plotter.XY{X: float64(i + 1), Y: a}
		lo, hi = min(lo, a), max(hi, a)
	}
	if haveFinal {
		lo, hi = min(lo, final), max(hi, final)
	}
	pad := max(0.02, 0.08*(hi-lo))
	p.Y.Min, p.Y.Max = max(0, lo-pad), min(1, hi+pad)
	p.X.Min, p.X.Max = 0.5, float64(len(aucs))+0.5
	p.X.Tick.Marker = intTicks{}
	p.Y.Tick.Marker = niceTicks{}
	p.Add(plotter.NewGrid())
	leg := newLegend()
	chance, err := hline(0.5, p.X.Min, p.X.Max, grey, dashed)
	if err != nil {
		return nil, err
	}
	p.Add(chance)
	leg.Add("chance (0.5)", chance)
	if haveFinal {
		fl, err := hline(final, p.X.Min, p.X.Max, plotutil.Color(1), dotted)
		if err != nil {
			return nil, err
		}
		p.Add(fl)
		leg.Add("final model "+strconv.FormatFloat(final, 'f', 4, 64), fl)
	}
	line, scatter, err := plotter.NewLinePoints(pts)
	if err != nil {
		return nil, err
	}
	line.Color, line.Width = plotutil.Color(0), vg.Points(1.5)
	scatter.Color, scatter.Shape, scatter.Radius = plotutil.Color(0), draw.CircleGlyph{}, vg.Points(4)
	p.Add(line, scatter)
	leg.Add("after phase k", line, scatter)
	return renderPNG(p, leg, PlotWidth, PlotHeight)
}

// niceTicks marks the multiples of the smallest step of the form 1, 2 or
// 5 × 10^k that cuts [lo, hi] into at most 8 intervals.
type niceTicks struct{}

func (niceTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return []plot.Tick{{Value: lo, Label: strconv.FormatFloat(lo, 'g', 4, 64)}}
	}
	mag := math.Pow(10, math.Floor(math.Log10((hi-lo)/8)))
	step := 10 * mag
	for _, m := range []float64{1, 2, 5} {
		if (hi-lo)/(m*mag) <= 8 {
			step = m * mag
			break
		}
	}
	prec := max(0, -int(math.Floor(math.Log10(step)+1e-9)))
	var t []plot.Tick
	for i := math.Ceil(lo/step - 1e-9); i*step <= hi+1e-9*step; i++ {
		v := i * step
		t = append(t, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', prec, 64)})
	}
	return t
}

// timeTicks marks round times (a 1-2-5 ladder of seconds up to days),
// labelled in UTC.
type timeTicks struct{}

var timeSteps = []float64{1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 2 * 3600, 3 * 3600, 6 * 3600, 12 * 3600,
	86400, 2 * 86400, 7 * 86400, 14 * 86400, 30 * 86400, 91 * 86400, 365 * 86400}

func (timeTicks) Ticks(lo, hi float64) []plot.Tick {
	span := hi - lo
	step := timeSteps[len(timeSteps)-1]
	for _, s := range timeSteps {
		if span/s <= 8 {
			step = s
			break
		}
	}
	format := "15:04:05"
	switch {
	case step >= 86400:
		format = "2006-01-02"
	case span >= 86400:
		format = "01-02 15:04"
	case step >= 60:
		format = "15:04"
	}
	var t []plot.Tick
	for v := math.Ceil(lo/step) * step; v <= hi; v += step {
		t = append(t, plot.Tick{Value: v, Label: time.Unix(int64(v), 0).UTC().Format(format)})
	}
	return t
}

func unix(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

// spentPlot draws, for each site in sites, its cumulative ε over time as
// composed by the coordinator's ledger (steps at each job's first charge),
// its budget as a dashed line of the same colour when it has one, and a
// dotted vertical line at jobTime (the report's job) when it is not zero.
func spentPlot(job string, sites []string, series map[string][]SpendPoint, budgets map[string]coordinator.Budget, jobTime time.Time) ([]byte, error) {
	var tlo, thi float64 = math.Inf(1), math.Inf(-1)
	ymax := 0.0
	for _, s := range sites {
		for _, pt := range series[s] {
			x := unix(pt.Time)
			tlo, thi = min(tlo, x), max(thi, x)
			ymax = max(ymax, pt.Epsilon)
		}
		if b, ok := budgets[s]; ok {
			ymax = max(ymax, b.Epsilon)
		}
	}
	if math.IsInf(tlo, 0) {
		return nil, fmt.Errorf("report: no ledger charges to plot")
	}
	pad := max(1, 0.05*(thi-tlo))
	x0, x1 := tlo-pad, thi+pad
	if ymax <= 0 {
		ymax = 1
	}
	p := plot.New()
	p.Title.Text = "Privacy spent per site over time (coordinator's ledger)"
	p.X.Label.Text = "time (UTC)"
	p.Y.Label.Text = "ε spent: max within a job, sum across jobs"
	p.X.Min, p.X.Max = x0, x1
	p.Y.Min, p.Y.Max = 0, ymax*1.1
	p.X.Tick.Marker = timeTicks{}
	p.Add(plotter.NewGrid())
	leg := newLegend()
	for i, s := range sites {
		col := plotutil.Color(i)
		pts := plotter.XYs{{X: x0, Y: 0}}
		for _, pt := range series[s] {
			pts = append(pts, plotter.XY{X: unix(pt.Time), Y: pt.Epsilon})
		}
		pts = append(pts, plotter.XY{X: x1, Y: pts[len(pts)-1].Y})
		line, err := plotter.NewLine(pts)
		if err != nil {
			return nil, err
		}
		line.StepStyle = plotter.PostStep
		// Sites that spent alike draw on top of each other: each line is
		// thinner than the one before it, so that every one stays visible
		// as a coloured edge of the lines drawn over it.
		line.Color, line.Width = col, vg.Points(2+1.5*float64(min(len(sites)-1-i, 6)))
		p.Add(line)
		leg.Add("site "+s, line)
		if b, ok := budgets[s]; ok {
			bl, err := hline(b.Epsilon, x0, x1, col, dashed)
			if err != nil {
				return nil, err
			}
			p.Add(bl)
			leg.Add(fmt.Sprintf("%s budget ε = %s", s, strconv.FormatFloat(b.Epsilon, 'g', 6, 64)), bl)
		}
	}
	if !jobTime.IsZero() {
		x := unix(jobTime)
		vl, err := plotter.NewLine(plotter.XYs{{X: x, Y: 0}, {X: x, Y: p.Y.Max}})
		if err != nil {
			return nil, err
		}
		vl.Color, vl.Width, vl.Dashes = grey, vg.Points(1), dotted
		p.Add(vl)
		leg.Add("job "+job+" charged", vl)
	}
	return renderPNG(p, leg, PlotWidth, PlotHeight)
}

// tenthTicks marks 0, 0.1, …, 1.
type tenthTicks struct{}

func (tenthTicks) Ticks(_, _ float64) []plot.Tick {
	t := make([]plot.Tick, 11)
	for i := range t {
		t[i] = plot.Tick{Value: float64(i) / 10, Label: strconv.FormatFloat(float64(i)/10, 'f', 1, 64)}
	}
	return t
}

// rocPlot draws the ROC curve and the diagonal of a random scorer.
func rocPlot(job string, r *ROC) ([]byte, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("ROC of the final model of job %s (AUC %.4f)", job, r.AUC)
	p.X.Label.Text = "false positive rate"
	p.Y.Label.Text = "true positive rate"
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 1, 0, 1
	p.X.Tick.Marker, p.Y.Tick.Marker = tenthTicks{}, tenthTicks{}
	p.Add(plotter.NewGrid())
	diag, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 1}})
	if err != nil {
		return nil, err
	}
	diag.Color, diag.Width, diag.Dashes = grey, vg.Points(1), dashed
	pts := make(plotter.XYs, len(r.FPR))
	for i := range r.FPR {
		pts[i] = plotter.XY{X: r.FPR[i], Y: r.TPR[i]}
	}
	curve, err := plotter.NewLine(pts)
	if err != nil {
		return nil, err
	}
	curve.Color, curve.Width = plotutil.Color(0), vg.Points(2)
	p.Add(diag, curve)
	p.Legend.Top, p.Legend.Left = false, false
	p.Legend.XOffs, p.Legend.YOffs = -vg.Points(8), vg.Points(8)
	p.Legend.Add(fmt.Sprintf("final model (n = %d: %d positive, %d negative)", r.Positives+r.Negatives, r.Positives, r.Negatives), curve)
	p.Legend.Add("random scorer", diag)
	return renderPNG(p, nil, ROCSize, ROCSize)
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
