package plot

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"

	"github.com/splash-inference/splash/bench"
)

// Run is one report to draw, under a legend name.
type Run struct {
	Name   string
	Report *bench.Report
}

// anchor says where text sits relative to its point.
type anchor int

const (
	anchorStart anchor = iota
	anchorMiddle
	anchorEnd
)

// canvas is what a renderer draws on. Coordinates are pixels from the top
// left; text is placed by its baseline.
type canvas interface {
	line(x1, y1, x2, y2 float64, c color.RGBA, width float64, dashed bool)
	text(x, y float64, s string, size float64, a anchor, c color.RGBA)
	circle(x, y, r float64, c color.RGBA)
}

// Chart size and layout, in pixels.
const (
	width, height = 1000, 720
	margin        = 20
	titleH        = 40
	legendH       = 40
	panelPadL     = 64 // room for y tick labels
	panelPadB     = 44 // room for x tick labels and the axis name
	panelPadT     = 26 // room for the panel title
	panelGap      = 20
	fontSize      = 12
)

var (
	black = color.RGBA{0x22, 0x22, 0x22, 0xff}
	grey  = color.RGBA{0xdd, 0xdd, 0xdd, 0xff}
	white = color.RGBA{0xff, 0xff, 0xff, 0xff}
	// palette colours runs in order (colour-blind safe, Okabe–Ito).
	palette = [...]color.RGBA{
		{0x00, 0x72, 0xb2, 0xff}, {0xd5, 0x5e, 0x00, 0xff}, {0x00, 0x9e, 0x73, 0xff},
		{0xcc, 0x79, 0xa7, 0xff}, {0xe6, 0x9f, 0x00, 0xff}, {0x56, 0xb4, 0xe9, 0xff},
	}
)

// panel is one of the four small charts.
type panel struct {
	title  string
	lines  []metric // drawn per run; the first solid, the rest dashed
	legend string   // what solid and dashed mean, if there is a dashed line
}

type metric func(bench.Summary) float64

var panels = [...]panel{
	{title: "Output tokens/s", lines: []metric{func(s bench.Summary) float64 { return s.OutputTokensPerS }}},
	{title: "TTFT (ms)", lines: []metric{
		func(s bench.Summary) float64 { return s.TTFT.P50 }, func(s bench.Summary) float64 { return s.TTFT.P99 }}, legend: "p50 solid, p99 dashed"},
	{title: "TPOT (ms)", lines: []metric{
		func(s bench.Summary) float64 { return s.TPOT.P50 }, func(s bench.Summary) float64 { return s.TPOT.P99 }}, legend: "p50 solid, p99 dashed"},
	{title: "E2E latency (ms)", lines: []metric{
		func(s bench.Summary) float64 { return s.E2E.P50 }, func(s bench.Summary) float64 { return s.E2E.P99 }}, legend: "p50 solid, p99 dashed"},
}

// draw lays the chart of runs out on c.
func draw(c canvas, runs []Run) error {
	if len(runs) == 0 {
		return fmt.Errorf("plot: no runs to draw")
	}
	rate := runs[0].Report.IsRate()
	for _, r := range runs[1:] {
		if r.Report.IsRate() != rate {
			return fmt.Errorf("plot: cannot draw a rate sweep and a concurrency sweep on one chart")
		}
	}
	xName := "concurrency (requests in flight)"
	if rate {
		xName = "request rate (requests/s)"
	}
	xs := levels(runs)
	if len(xs) == 0 {
		return fmt.Errorf("plot: the reports have no steps")
	}
	xAxis := newXScale(xs)

	c.text(width/2, margin+16, "splash bench: "+title(runs), 16, anchorMiddle, black)
	pw := (width - 2*margin - panelGap) / 2.0
	ph := (height - 2*margin - titleH - legendH - panelGap) / 2.0
	for i, p := range panels {
		x0 := margin + float64(i%2)*(pw+panelGap)
		y0 := margin + titleH + float64(i/2)*(ph+panelGap)
		drawPanel(c, p, runs, xAxis, xName, box{x0 + panelPadL, y0 + panelPadT, x0 + pw, y0 + ph - panelPadB})
	}
	// Legend: one entry per run.
	ly := float64(height - margin - legendH/2)
	lx := float64(margin + panelPadL)
	for i, r := range runs {
		col := palette[i%len(palette)]
		c.line(lx, ly-4, lx+24, ly-4, col, 2.5, false)
		c.circle(lx+12, ly-4, 3, col)
		c.text(lx+30, ly, r.Name, fontSize, anchorStart, black)
		lx += 30 + float64(len(r.Name)+4)*7
	}
	return nil
}

// box is a plotting area.
type box struct{ x0, y0, x1, y1 float64 }

func drawPanel(c canvas, p panel, runs []Run, xAxis xScale, xName string, b box) {
	c.text(b.x0, b.y0-10, p.title, 13, anchorStart, black)
	if p.legend != "" {
		c.text(b.x1, b.y0-10, p.legend, 10, anchorEnd, black)
	}
	yMax := 0.0
	for _, r := range runs {
		for _, st := range r.Report.Steps {
			for _, m := range p.lines {
				yMax = math.Max(yMax, m(st.Summary))
			}
		}
	}
	yTicks := niceTicks(yMax)
	top := yTicks[len(yTicks)-1]
	toY := func(v float64) float64 { return b.y1 - v/top*(b.y1-b.y0) }
	for _, t := range yTicks {
		y := toY(t)
		c.line(b.x0, y, b.x1, y, grey, 1, false)
		c.text(b.x0-6, y+4, formatTick(t), fontSize, anchorEnd, black)
	}
	for _, x := range xAxis.ticks {
		px := xAxis.at(x, b)
		c.line(px, b.y1, px, b.y1+4, black, 1, false)
		c.text(px, b.y1+18, formatTick(x), fontSize, anchorMiddle, black)
	}
	c.line(b.x0, b.y0, b.x0, b.y1, black, 1, false)
	c.line(b.x0, b.y1, b.x1, b.y1, black, 1, false)
	c.text((b.x0+b.x1)/2, b.y1+36, xName, 11, anchorMiddle, black)

	for i, r := range runs {
		col := palette[i%len(palette)]
		steps := slices.Clone(r.Report.Steps)
		slices.SortFunc(steps, func(a, b bench.StepResult) int { return cmpFloat(level(a.Summary), level(b.Summary)) })
		for li, m := range p.lines {
			var px, py float64
			for si, st := range steps {
				x, y := xAxis.at(level(st.Summary), b), toY(m(st.Summary))
				if si > 0 {
					c.line(px, py, x, y, col, 2, li > 0)
				}
				if li == 0 {
					c.circle(x, y, 3, col)
				}
				px, py = x, y
			}
		}
	}
}

// level is a step's position on the x axis.
func level(s bench.Summary) float64 {
	if s.Rate > 0 {
		return s.Rate
	}
	return float64(s.Concurrency)
}

// levels returns the distinct load levels of all runs, sorted.
func levels(runs []Run) []float64 {
	var xs []float64
	for _, r := range runs {
		for _, st := range r.Report.Steps {
			xs = append(xs, level(st.Summary))
		}
	}
	slices.Sort(xs)
	return slices.Compact(xs)
}

// xScale maps load levels to pixels: logarithmic when the levels span a
// factor of 4 or more (sweeps are usually 1,2,4,…,64), else linear.
type xScale struct {
	log      bool
	min, max float64
	ticks    []float64
}

func newXScale(xs []float64) xScale {
	s := xScale{min: xs[0], max: xs[len(xs)-1], ticks: xs}
	s.log = s.min > 0 && s.max/s.min >= 4
	if len(xs) > 12 { // too many levels to label each one
		s.ticks = nil
		for i := 0; i < len(xs); i += (len(xs) + 7) / 8 {
			s.ticks = append(s.ticks, xs[i])
		}
	}
	return s
}

func (s xScale) at(x float64, b box) float64 {
	const pad = 12 // keep the end points off the axes
	w := b.x1 - b.x0 - 2*pad
	if s.max == s.min {
		return b.x0 + pad + w/2
	}
	f := (x - s.min) / (s.max - s.min)
	if s.log {
		f = math.Log(x/s.min) / math.Log(s.max/s.min)
	}
	return b.x0 + pad + f*w
}

// niceTicks returns 0 and about five round tick values covering max.
func niceTicks(max float64) []float64 {
	if !(max > 0) || math.IsInf(max, 0) {
		return []float64{0, 1}
	}
	raw := max / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var ticks []float64
	for v := 0.0; ; v += step {
		ticks = append(ticks, v)
		if v >= max {
			break
		}
	}
	return ticks
}

func formatTick(v float64) string {
	switch {
	case v == 0:
		return "0"
	case math.Abs(v) >= 10000:
		return strconv.FormatFloat(v/1000, 'f', -1, 64) + "k"
	case v == math.Trunc(v):
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

func title(runs []Run) string {
	r := runs[0].Report.Config
	return fmt.Sprintf("%s workload, %s API, input %s, output %s tokens", r.Workload, r.API, r.InputLen, r.OutputLen)
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
