package figure

import (
	"fmt"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg/draw"
)

// TestStylesDiffer: the 14 algorithms' series differ in colour, and in
// marker and dash.
func TestStylesDiffer(t *testing.T) {
	colours, looks := map[string]int{}, map[string]int{}
	for i := range 14 {
		c, s, d := Style(i)
		colours[fmt.Sprint(c)]++
		looks[fmt.Sprintf("%T %v", s, d)]++
	}
	if len(colours) != 14 || len(looks) != 14 {
		t.Errorf("%d colours and %d marker-and-dash looks for 14 series", len(colours), len(looks))
	}
}

func TestPlainTicks(t *testing.T) {
	for x, want := range map[float64]string{1250: "1250", 0.5: "0.5", 20000: "20000", 0.1 + 0.2: "0.3", 175: "175", 1e6: "1000000"} {
		if got := Plain(x); got != want {
			t.Errorf("Plain(%v) = %q, want %q", x, got, want)
		}
	}
	for _, tk := range (PlainTicks{plot.DefaultTicks{}}).Ticks(170, 330) {
		if tk.Label != "" && tk.Label != Plain(tk.Value) {
			t.Errorf("tick %v labelled %q", tk.Value, tk.Label)
		}
	}
}

// TestLegendWidth: the column is wider than the text as the plot's font
// measures it, by the fallback font's margin.
func TestLegendWidth(t *testing.T) {
	p := plot.New()
	l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 1}, {X: 1, Y: 2}})
	if err != nil {
		t.Fatal(err)
	}
	p.Legend.Add("floor L3Cache (183 ns; host moved: 117-191 ns)", l)
	r := p.Legend.Rectangle(draw.Canvas{})
	if w := LegendWidth(p.Legend); w < (r.Max.X-r.Min.X)*1.2 {
		t.Errorf("legend width %v for text %v wide", w, r.Max.X-r.Min.X)
	}
}
