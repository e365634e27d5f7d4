package sweep

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Plot size: PlotWidth × PlotHeight pixels at PlotDPI.
const (
	PlotWidth  = 900
	PlotHeight = 540
	PlotDPI    = 96
)

// valueTicks marks exactly the given values (the grid's ε or n), labelled
// with their shortest decimal form.
type valueTicks []float64

func (v valueTicks) Ticks(min, max float64) []plot.Tick {
	var t []plot.Tick
	for _, x := range v {
		if x >= min && x <= max {
			t = append(t, plot.Tick{Value: x, Label: fmtG(x)})
		}
	}
	return t
}

// stepTicks marks the multiples of the smallest "nice" step (1, 2, 2.5
// or 5 × 10^k) that cuts the axis range into at most 10 intervals.
type stepTicks struct{}

func (stepTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return []plot.Tick{{Value: lo, Label: strconv.FormatFloat(lo, 'g', 4, 64)}}
	}
	span := hi - lo
	mag := math.Pow(10, math.Floor(math.Log10(span/5)))
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if step = m * mag; span/step <= 10 {
			break
		}
	}
	prec := max(0, int(-math.Floor(math.Log10(step)+1e-9)))
	if m := step / math.Pow(10, math.Floor(math.Log10(step)+1e-9)); math.Abs(m-2.5) < 1e-9 {
		prec++
	}
	var t []plot.Tick
	for i := math.Ceil(lo/step - 1e-9); i*step <= hi+1e-9*step; i++ {
		v := i * step
		if v == 0 {
			v = 0 // not −0
		}
		t = append(t, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', prec, 64)})
	}
	return t
}

// errPoints are means with ± std error bars.
type errPoints struct {
	plotter.XYs
	plotter.YErrors
}

// WritePlot draws one grid as a PNG of PlotWidth × PlotHeight pixels:
// for the ε grid the metric against ε (log scale) with ±std error bars,
// one line per private algorithm and a dashed horizontal line with a
// ±std band per non-private one; for the size grid the metric against n,
// one line per algorithm. The legend is drawn to the right of the axes.
func (r *Result) WritePlot(w io.Writer, grid string) error {
	p := plot.New()
	leg := plot.NewLegend()
	leg.Top, leg.Left = true, true
	leg.Padding = vg.Points(4)
	m := r.MetricLabel()
	algos, by := r.rowsOf(grid)
	if len(algos) == 0 {
		return fmt.Errorf("sweep: no %s grid to plot", grid)
	}
	p.Y.Label.Text = m
	p.Y.Tick.Marker = stepTicks{}
	var xs []float64
	switch grid {
	case GridEpsilon:
		xs = r.Epsilons
		p.Title.Text = fmt.Sprintf("%s vs ε: %s (mean ± std over %d runs)", m, r.Dataset, r.Runs)
		p.X.Label.Text = "ε (log scale)"
		p.X.Scale = plot.LogScale{}
	case GridSize:
		for _, n := range r.Sizes {
			xs = append(xs, float64(n))
		}
		p.Title.Text = fmt.Sprintf("%s vs n: %s (mean ± std over %d runs)", m, r.Dataset, r.Runs)
		p.X.Label.Text = "training records n"
		if r.SizeEpsilon > 0 {
			p.X.Label.Text += " (private algorithms at ε = " + fmtG(r.SizeEpsilon) + ")"
		}
	default:
		return fmt.Errorf("sweep: unknown grid %q", grid)
	}
	if len(xs) == 0 {
		return fmt.Errorf("sweep: no x values to plot the %s grid over", grid)
	}
	lo, hi := slices.Min(xs), slices.Max(xs)
	if grid == GridEpsilon {
		p.X.Min, p.X.Max = lo/1.25, hi*1.25
	} else {
		pad := 0.05 * math.Max(hi-lo, 1)
		p.X.Min, p.X.Max = lo-pad, hi+pad
	}
	p.X.Tick.Marker = valueTicks(xs)
	p.Add(plotter.NewGrid())

	// Series drawn at each x are dodged sideways a little so that their
	// error bars do not hide each other.
	var series []string
	for _, a := range algos {
		if !(grid == GridEpsilon && by[a][0].NonPrivate()) {
			series = append(series, a)
		}
	}
	dodge := func(a string, x float64) float64 {
		k := slices.Index(series, a)
		off := float64(k) - float64(len(series)-1)/2
		if grid == GridEpsilon {
			return x * math.Pow(hi/lo*1.5625, 0.012*off)
		}
		return x + 0.012*off*(p.X.Max-p.X.Min)
	}

	for i, a := range algos {
		rows := by[a]
		col := plotutil.Color(i)
		name := a
		if grid == GridEpsilon && rows[0].NonPrivate() {
			// A horizontal reference: the mean as a dashed line over the
			// whole ε axis, the ±std band shaded.
			row := rows[0]
			band, err := plotter.NewPolygon(plotter.XYs{{X: p.X.Min, Y: row.Mean - row.Std}, {X: p.X.Max, Y: row.Mean - row.Std},
				{X: p.X.Max, Y: row.Mean + row.Std}, {X: p.X.Min, Y: row.Mean + row.Std}})
			if err != nil {
				return err
			}
			band.Color = translucent(col)
			band.LineStyle.Width = 0
			line, err := plotter.NewLine(plotter.XYs{{X: p.X.Min, Y: row.Mean}, {X: p.X.Max, Y: row.Mean}})
			if err != nil {
				return err
			}
			line.Color = col
			line.Width = vg.Points(1.5)
			line.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
			p.Add(band, line)
			leg.Add(name+" (non-private)", line)
			continue
		}
		pts := errPoints{}
		for _, row := range rows {
			x := row.Epsilon
			if grid == GridSize {
				x = float64(row.N)
			}
			pts.XYs = append(pts.XYs, plotter.XY{X: dodge(a, x), Y: row.Mean})
			pts.YErrors = append(pts.YErrors, struct{ Low, High float64 }{row.Std, row.Std})
		}
		line, scatter, err := plotter.NewLinePoints(pts.XYs)
		if err != nil {
			return err
		}
		line.Color = col
		line.Width = vg.Points(1.5)
		scatter.Color = col
		scatter.Shape = plotutil.Shape(i)
		bars, err := plotter.NewYErrorBars(pts)
		if err != nil {
			return err
		}
		bars.Color = col
		p.Add(line, scatter, bars)
		if grid == GridSize && rows[0].NonPrivate() {
			name += " (non-private)"
		}
		leg.Add(name, line, scatter)
	}

	c := vgimg.NewWith(vgimg.UseWH(pixels(PlotWidth), pixels(PlotHeight)), vgimg.UseDPI(PlotDPI))
	dc := draw.New(c)
	// The legend gets the width of its widest entry on the right.
	lw := leg.Rectangle(dc).Size().X + vg.Points(12)
	lw = min(lw, dc.Size().X*0.45)
	p.Draw(draw.Crop(dc, vg.Points(4), -lw, vg.Points(4), -vg.Points(6)))
	legArea := draw.Crop(dc, dc.Size().X-lw+vg.Points(6), 0, 0, -vg.Points(36))
	leg.Draw(legArea)
	_, err := vgimg.PngCanvas{Canvas: c}.WriteTo(w)
	return err
}

// pixels converts a pixel count at PlotDPI to a length.
func pixels(px int) vg.Length { return vg.Length(px) / PlotDPI * vg.Inch }

// translucent returns c with alpha ≈ 0.18 (premultiplied).
func translucent(c color.Color) color.Color {
	r, g, b, _ := c.RGBA()
	const a = 0.18
	return color.RGBA64{R: uint16(float64(r) * a), G: uint16(float64(g) * a), B: uint16(float64(b) * a), A: uint16(math.Round(a * 0xffff))}
}
