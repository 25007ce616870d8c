package figure

// The look the plots share: a colour, marker and dash for each series
// (fourteen algorithms need fourteen colours), tick labels as plain
// numbers, and the width a legend needs whatever font the viewer draws
// its text with.

import (
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// palette is 16 colours told apart on white (the darker Tableau 20 and
// six of its companions); series i takes palette[i%16].
var palette = [...]color.RGBA{
	{0x1f, 0x77, 0xb4, 0xff}, {0xff, 0x7f, 0x0e, 0xff}, {0x2c, 0xa0, 0x2c, 0xff}, {0xd6, 0x27, 0x28, 0xff},
	{0x94, 0x67, 0xbd, 0xff}, {0x8c, 0x56, 0x4b, 0xff}, {0xe3, 0x77, 0xc2, 0xff}, {0x7f, 0x7f, 0x7f, 0xff},
	{0xbc, 0xbd, 0x22, 0xff}, {0x17, 0xbe, 0xcf, 0xff}, {0x39, 0x3b, 0x79, 0xff}, {0x63, 0x79, 0x39, 0xff},
	{0x84, 0x3c, 0x39, 0xff}, {0x7b, 0x41, 0x73, 0xff}, {0xe7, 0xba, 0x52, 0xff}, {0x31, 0x82, 0xbd, 0xff},
}

// shapes are the series' markers; the ring is left for the winners.
var shapes = [...]draw.GlyphDrawer{draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.CrossGlyph{},
	draw.BoxGlyph{}, draw.PyramidGlyph{}, draw.PlusGlyph{}}

// Style is series i's look: its own colour for the first 16 series, a
// marker that cycles over seven shapes, and a line solid for the first
// seven series and dashed for the next, so that no two of the first 16
// series look alike in colour, and none of the first 14 in marker and
// dash.
func Style(i int) (c color.Color, shape draw.GlyphDrawer, dashes []vg.Length) {
	c, shape = palette[i%len(palette)], shapes[i%len(shapes)]
	if (i/len(shapes))%2 == 1 {
		dashes = []vg.Length{vg.Points(4), vg.Points(2)}
	}
	return c, shape, dashes
}

// PlainTicks labels the major ticks of Marker as plain numbers: 1250,
// 0.5, 20000 (not 1250.00 or 2e+04).
type PlainTicks struct{ Marker plot.Ticker }

// Ticks returns Marker's ticks between min and max, relabelled.
func (t PlainTicks) Ticks(min, max float64) []plot.Tick {
	ts := t.Marker.Ticks(min, max)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = Plain(ts[i].Value)
		}
	}
	return ts
}

// Plain writes x with no exponent and no trailing zeros, rounded to six
// significant digits (0.30000000000000004 is 0.3).
func Plain(x float64) string {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	scale := math.Pow(10, 5-math.Floor(math.Log10(math.Abs(x))))
	return strconv.FormatFloat(math.Round(x*scale)/scale, 'f', -1, 64)
}

// FallbackWidth is how much wider than the plot's own font (Liberation,
// which vg measures text with) a viewer's substitute may draw the same
// text: DejaVu, the usual fallback where Liberation is not installed, is
// up to about a fifth wider.
const FallbackWidth = 1.25

// LegendWidth is the width of the column leg needs beside a plot: its
// entries as the plot's font measures them, widened by FallbackWidth, so
// that no entry is cut off where the viewer draws another font.
func LegendWidth(leg plot.Legend) vg.Length {
	r := leg.Rectangle(draw.Canvas{})
	w := r.Max.X - r.Min.X
	if w <= 0 {
		return 0
	}
	return w * FallbackWidth
}
