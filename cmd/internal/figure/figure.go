// Package figure draws the tuner's plots with gonum/plot: a results file's
// curves (barriertune plot) and one bench run (bench --plot), and writes
// them as SVG or PNG with the legend in a column of its own.
package figure

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/barriertune/barriertune/cmd/internal/catalog"
	"github.com/barriertune/barriertune/cmd/internal/measure"
	"github.com/barriertune/barriertune/cmd/internal/outfile"
	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/results"
)

// Format checks that path ends in .svg or .png.
func Format(path string) error {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".svg", ".png":
		return nil
	}
	return fmt.Errorf("plot output %q: unknown format %q (accepted: .svg, .png)", path, filepath.Ext(path))
}

// Save writes p to path (.svg or .png): the plot 20 cm wide and, in a
// column to its right, its legend, so that the legend never covers the
// data (gonum draws it inside the data area).
func Save(p *plot.Plot, path string) error {
	if err := Format(path); err != nil {
		return err
	}
	leg := p.Legend
	p.Legend = plot.NewLegend() // no entries: p.Draw draws none
	defer func() { p.Legend = leg }()
	p.Title.Padding = max(p.Title.Padding, vg.Points(10)) // the top point clear of the title
	pad := vg.Points(10)
	lw := LegendWidth(leg) // room for a wider fallback font
	if lw > 0 {
		lw += 2 * pad
	}
	w, h := 20*vg.Centimeter+lw, 15*vg.Centimeter
	c, err := draw.NewFormattedCanvas(w, h, strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), "."))
	if err != nil {
		return fmt.Errorf("writing plot %s: %w", path, err)
	}
	dc := draw.New(c)
	if p.BackgroundColor != nil { // the legend's column too
		dc.SetColor(p.BackgroundColor)
		dc.Fill(dc.Rectangle.Path())
	}
	p.Draw(draw.Crop(dc, 0, -lw, 0, 0))
	if lw > 0 {
		la := draw.Crop(dc, w-lw+pad, 0, 0, 0)
		la.Max.Y -= p.Title.TextStyle.Rectangle(p.Title.Text).Max.Y + p.Title.Padding + pad
		leg.Top, leg.Left, leg.XOffs, leg.YOffs = true, true, 0, 0
		leg.Draw(la)
	}
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return fmt.Errorf("drawing plot %s: %w", path, err)
	}
	return outfile.Write("plot", path, b.Bytes(), 0o644)
}

// Headroom widens p's y range to [lo, hi] and a little beyond, so that
// no point sits on the frame and a floor below the data is drawn.
func Headroom(p *plot.Plot, lo, hi float64) {
	if !(lo > 0) || math.IsInf(hi, 0) {
		return
	}
	p.Y.Min, p.Y.Max = min(p.Y.Min, lo), max(p.Y.Max, hi)
	if _, log := p.Y.Scale.(plot.LogScale); log {
		p.Y.Min, p.Y.Max = p.Y.Min/1.15, p.Y.Max*1.15
		return
	}
	span := max(p.Y.Max-p.Y.Min, p.Y.Max*0.05)
	p.Y.Min, p.Y.Max = max(0, p.Y.Min-span*0.05), p.Y.Max+span*0.05
}

// LogAxis labels p's y ticks as plain numbers and makes the axis
// logarithmic when the values, all positive, span more than a factor of
// ten (lo and hi their extremes).
func LogAxis(p *plot.Plot, lo, hi float64) {
	p.Y.Tick.Marker = PlainTicks{Marker: plot.DefaultTicks{}}
	if lo > 0 && hi/lo > 10 {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = PlainTicks{Marker: plot.LogTicks{Prec: -1}}
	}
}

// floorLine is a floor as a dashed line across the whole x range (a line
// between the first and last thread count has no length when there is
// one count).
func floorLine(ns float64, i int) *plotter.Function {
	l := plotter.NewFunction(func(float64) float64 { return ns })
	l.Samples = 2
	l.Color = color.Gray{Y: uint8(40 + 40*(i%4))}
	l.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
	l.Width = vg.Points(1.5)
	return l
}

// Curves is each algorithm's best median per thread count. A candidate
// dropped early (twice as slow as the best after its first samples) is
// drawn with its fewer samples; one rejected (its time below what the
// machine allows) or with no positive time is not (LeftOut says why).
func Curves(f *results.File) (algs []string, pts map[string]plotter.XYs) {
	best := map[string]map[int]float64{}
	for _, t := range f.Threads {
		for _, m := range t.Measurements {
			if !drawable(m) {
				continue
			}
			if best[m.Algorithm] == nil {
				best[m.Algorithm] = map[int]float64{}
				algs = append(algs, m.Algorithm)
			}
			if v, ok := best[m.Algorithm][t.Threads]; !ok || m.MedianNs < v {
				best[m.Algorithm][t.Threads] = m.MedianNs
			}
		}
	}
	// Catalog order, unknown names (another version's) after.
	slices.SortStableFunc(algs, func(a, b string) int { return catalog.Rank(a) - catalog.Rank(b) })
	pts = map[string]plotter.XYs{}
	for _, a := range algs {
		var xys plotter.XYs
		for n, v := range best[a] {
			xys = append(xys, plotter.XY{X: float64(n), Y: v})
		}
		slices.SortFunc(xys, func(p, q plotter.XY) int { return int(p.X - q.X) })
		pts[a] = xys
	}
	return algs, pts
}

// drawable reports whether a measurement is a point of its algorithm's
// curve.
func drawable(m results.Measurement) bool {
	return m.Rejected == "" && m.MedianNs > 0 && !math.IsInf(m.MedianNs, 0)
}

// LeftOut names each algorithm the file measured that Curves does not
// draw, with why (in catalog order).
func LeftOut(f *results.File) []string {
	why := map[string]string{}
	drawn := map[string]bool{}
	var order []string
	for _, t := range f.Threads {
		for _, m := range t.Measurements {
			if drawable(m) {
				drawn[m.Algorithm] = true
				continue
			}
			if _, ok := why[m.Algorithm]; !ok {
				order = append(order, m.Algorithm)
				why[m.Algorithm] = fmt.Sprintf("no positive time at %d threads", t.Threads)
				if m.Rejected != "" {
					why[m.Algorithm] = fmt.Sprintf("rejected at %d threads: %s", t.Threads, m.Rejected)
				}
			}
		}
	}
	slices.SortStableFunc(order, func(a, b string) int { return catalog.Rank(a) - catalog.Rank(b) })
	var out []string
	for _, a := range order {
		if !drawn[a] {
			out = append(out, a+" ("+why[a]+")")
		}
	}
	return out
}

// droppedEarly reports the algorithms some of whose drawn points (the
// least median at a count) come from a candidate dropped early, with
// fewer samples.
func droppedEarly(f *results.File) map[string]bool {
	out := map[string]bool{}
	for _, t := range f.Threads {
		best := map[string]results.Measurement{}
		for _, m := range t.Measurements {
			if b, ok := best[m.Algorithm]; drawable(m) && (!ok || m.MedianNs < b.MedianNs) {
				best[m.Algorithm] = m
			}
		}
		for a, m := range best {
			if m.Dropped {
				out[a] = true
			}
		}
	}
	return out
}

// allowedCount is how many CPUs the check could use (the file's
// allowed_cpus), 0 when it does not say.
func allowedCount(f *results.File) int {
	set, err := cpuset.ParseList(f.Machine.AllowedCPUs)
	if err != nil {
		return 0
	}
	return set.Len()
}

// Results draws a results file: each algorithm's best median per thread
// count (Curves), the floors dashed, and the winners given (thread count,
// ns) ringed.
func Results(f *results.File, winners plotter.XYs) (*plot.Plot, error) {
	algs, pts := Curves(f)
	if len(algs) == 0 && len(winners) == 0 {
		return nil, fmt.Errorf("the results file has no measurements to plot; run `barriertune check`")
	}
	p := plot.New()
	p.Title.Text = "Barrier episode time on " + f.Machine.CPU.Name
	if f.Simulated {
		p.Title.Text = "PREDICTED by the cost model, not measured: barrier episode time on " + f.Machine.CPU.Name
	}
	if f.HostChange != "" {
		p.Title.Text += "\n(the host moved the CPUs during the check: ranked in the state most rounds saw)"
	}
	p.X.Label.Text = "threads"
	p.Y.Label.Text = "ns per episode (median)"
	p.Add(plotter.NewGrid())

	lo, hi := math.Inf(1), math.Inf(-1)
	xlo, xhi := math.Inf(1), math.Inf(-1)
	var ticks []plot.Tick
	seen := map[float64]bool{}
	note := func(xys plotter.XYs) {
		for _, q := range xys {
			lo, hi = min(lo, q.Y), max(hi, q.Y)
			xlo, xhi = min(xlo, q.X), max(xhi, q.X)
			if !seen[q.X] {
				seen[q.X] = true
				ticks = append(ticks, plot.Tick{Value: q.X, Label: fmt.Sprint(q.X)})
			}
		}
	}
	dropped := droppedEarly(f)
	for i, a := range algs {
		note(pts[a])
		line, points, err := plotter.NewLinePoints(pts[a])
		if err != nil {
			return nil, fmt.Errorf("plotting %s: %w", a, err)
		}
		line.Color, points.Shape, line.Dashes = Style(i)
		points.Color = line.Color
		p.Add(line, points)
		name := a
		if dropped[a] {
			name += " (dropped early: fewer samples)"
		}
		p.Legend.Add(name, line, points)
	}
	note(winners)
	for _, fl := range f.Floor {
		if fl.MedianNs > 0 {
			lo, hi = min(lo, fl.MedianNs), max(hi, fl.MedianNs)
		}
	}
	for i, fl := range f.Floor {
		if !(fl.MedianNs > 0) {
			continue
		}
		l := floorLine(fl.MedianNs, i)
		p.Add(l)
		name := fmt.Sprintf("floor %s (%.0f ns)", fl.Level, fl.MedianNs)
		if len(fl.States) > 1 {
			name = fmt.Sprintf("floor %s (%.0f ns; host moved: %.0f-%.0f ns)", fl.Level, fl.MedianNs, fl.States[0].MedianNs, fl.States[len(fl.States)-1].MedianNs)
		}
		p.Legend.Add(name, l)
	}
	if len(winners) > 0 {
		w, err := plotter.NewScatter(winners)
		if err != nil {
			return nil, err
		}
		w.GlyphStyle = draw.GlyphStyle{Color: color.Black, Radius: vg.Points(6), Shape: draw.RingGlyph{}}
		p.Add(w)
		p.Legend.Add("winner", w)
	}
	for _, l := range LeftOut(f) {
		p.Legend.Add("not drawn: " + l)
	}
	// Counts above the CPUs ran as goroutines (the Go scheduler's
	// switches): their ticks are starred and the legend says so.
	if n := allowedCount(f); n > 0 {
		starred := false
		for i := range ticks {
			if ticks[i].Value > float64(n) {
				ticks[i].Label += "*"
				starred = true
			}
		}
		if starred {
			p.Legend.Add(fmt.Sprintf("* more threads than the %d CPUs:", n))
			p.Legend.Add("  goroutines timed, not OS threads")
		}
	}
	LogAxis(p, lo, hi)
	slices.SortFunc(ticks, func(a, b plot.Tick) int { return int(a.Value - b.Value) })
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	if xhi/xlo >= 8 {
		p.X.Scale = plot.LogScale{}
	}
	p.X.Padding, p.Y.Padding = vg.Points(8), vg.Points(8)
	Headroom(p, lo, hi)
	return p, nil
}

// Bench draws one bench run under title: ns per episode for each
// algorithm of sorted (fastest first), the fastest ringed, the floor
// dashed.
func Bench(title string, sorted []measure.Result, floor *measure.PingPong) (*plot.Plot, error) {
	if len(sorted) == 0 {
		return nil, fmt.Errorf("nothing to plot")
	}
	p := plot.New()
	p.Title.Text = title
	if sorted[0].SkewNs > 0 {
		p.Title.Text += fmt.Sprintf(", last arrival %.0f ns late", sorted[0].SkewNs)
	}
	p.Y.Label.Text = "ns per episode (median, bar: 95% CI)"
	names := make([]string, len(sorted))
	var pts plotter.XYs
	var cis plotter.YErrors
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, r := range sorted {
		if !(r.MedianNs > 0) {
			continue // a skewed run can come out at or below zero
		}
		names[i] = r.Algorithm
		pts = append(pts, plotter.XY{X: float64(i), Y: r.MedianNs})
		cis = append(cis, struct{ Low, High float64 }{max(r.MedianNs-r.CILowNs, 0), max(r.CIHighNs-r.MedianNs, 0)})
		lo, hi = min(lo, r.CILowNs, r.MedianNs), max(hi, r.CIHighNs, r.MedianNs)
	}
	if len(pts) == 0 {
		return nil, fmt.Errorf("no positive times to plot")
	}
	for i, r := range sorted {
		names[i] = r.Algorithm
	}
	dots, err := plotter.NewScatter(pts)
	if err != nil {
		return nil, err
	}
	dots.GlyphStyle = draw.GlyphStyle{Color: palette[0], Radius: vg.Points(3), Shape: draw.CircleGlyph{}}
	bars, err := plotter.NewYErrorBars(struct {
		plotter.XYs
		plotter.YErrors
	}{pts, cis})
	if err != nil {
		return nil, err
	}
	bars.Color = palette[0]
	p.Add(plotter.NewGrid(), bars, dots)
	p.Legend.Add("median", dots)
	w, err := plotter.NewScatter(pts[:1])
	if err != nil {
		return nil, err
	}
	w.GlyphStyle = draw.GlyphStyle{Color: color.Black, Radius: vg.Points(6), Shape: draw.RingGlyph{}}
	p.Add(w)
	p.Legend.Add("fastest", w)
	if floor != nil && floor.MedianNs > 0 {
		l := floorLine(floor.MedianNs, 0)
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("floor CPU %d<->%d (%.0f ns)", floor.CPUs[0], floor.CPUs[1], floor.MedianNs), l)
		lo = min(lo, floor.MedianNs)
	}
	p.NominalX(names...)
	p.X.Tick.Label.Rotation = math.Pi / 4
	p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XRight, draw.YCenter
	LogAxis(p, lo, hi)
	Headroom(p, lo, hi)
	return p, nil
}

// Series is one named line of points.
type Series struct {
	Name   string
	Points plotter.XYs
}

// Skew draws bench --skew under title: each series' synchronisation time
// (median ns per episode minus the skew) against the skew, a line each.
func Skew(title string, series []Series) (*plot.Plot, error) {
	if len(series) == 0 || len(series[0].Points) == 0 {
		return nil, fmt.Errorf("nothing to plot")
	}
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "skew: the last thread's delay (ns)"
	p.Y.Label.Text = "synchronisation time (median ns per episode minus the skew)"
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, s := range series {
		for _, q := range s.Points {
			lo, hi = min(lo, q.Y), max(hi, q.Y)
		}
		line, dots, err := plotter.NewLinePoints(s.Points)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.Name, err)
		}
		line.Color, dots.Shape, line.Dashes = Style(i)
		dots.Color = line.Color
		p.Add(line, dots)
		p.Legend.Add(s.Name, line, dots)
	}
	p.Add(plotter.NewGrid())
	LogAxis(p, lo, hi)
	p.Legend.Top = true
	p.X.Padding, p.Y.Padding = vg.Points(8), vg.Points(8)
	return p, nil
}
