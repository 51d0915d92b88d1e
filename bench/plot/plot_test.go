package plot

import (
	"bytes"
	"encoding/xml"
	"image/png"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/splash-inference/splash/bench"
)

func report(load string, levels []float64, outPerS func(x float64) float64) *bench.Report {
	r := &bench.Report{SchemaVersion: bench.SchemaVersion, Config: bench.RunConfig{Load: load, Workload: "synthetic", API: "chat", InputLen: "128", OutputLen: "64"}}
	for _, x := range levels {
		var s bench.Summary
		if load == "rate" {
			s.Rate = x
		} else {
			s.Concurrency = int(x)
		}
		s.OutputTokensPerS = outPerS(x)
		s.TTFT = bench.Latency{P50: 10 * x, P99: 20 * x}
		s.TPOT = bench.Latency{P50: 5 + x, P99: 8 + x}
		s.E2E = bench.Latency{P50: 100 + x, P99: 150 + x}
		r.Steps = append(r.Steps, bench.StepResult{Summary: s})
	}
	return r
}

func TestNiceTicks(t *testing.T) {
	tests := []struct {
		max  float64
		want []float64
	}{
		{0, []float64{0, 1}},
		{1, []float64{0, 0.2, 0.4, 0.6000000000000001, 0.8, 1}},
		{97, []float64{0, 20, 40, 60, 80, 100}},
		{1234, []float64{0, 250, 500, 750, 1000, 1250}},
	}
	for _, tt := range tests {
		got := niceTicks(tt.max)
		if !slices.Equal(got, tt.want) {
			t.Errorf("niceTicks(%v) = %v, want %v", tt.max, got, tt.want)
		}
		if got[len(got)-1] < tt.max {
			t.Errorf("niceTicks(%v) ends below max", tt.max)
		}
	}
}

func TestXScale(t *testing.T) {
	b := box{0, 0, 124, 100} // 100 px of plotting width after the 12 px pads
	log := newXScale([]float64{1, 2, 4, 8, 16})
	if !log.log {
		t.Fatal("a 1..16 sweep should use a log scale")
	}
	for i, x := range []float64{1, 2, 4, 8, 16} {
		if got, want := log.at(x, b), 12+25*float64(i); got < want-1e-9 || got > want+1e-9 {
			t.Errorf("log at(%v) = %v, want %v (evenly spaced doublings)", x, got, want)
		}
	}
	lin := newXScale([]float64{1, 2, 3})
	if lin.log || lin.at(2, b) != 62 {
		t.Errorf("linear scale: log=%v at(2)=%v, want false, 62", lin.log, lin.at(2, b))
	}
}

func TestSVGIsWellFormedAndDrawsEveryPoint(t *testing.T) {
	levels := []float64{1, 2, 4, 8}
	a := report("concurrency", levels, func(x float64) float64 { return 100 * x })
	b := report("concurrency", levels, func(x float64) float64 { return 80 * x })
	var buf bytes.Buffer
	if err := WriteSVG(&buf, Run{"splash <A>", a}, Run{"llama.cpp", b}); err != nil {
		t.Fatal(err)
	}
	circles, texts := 0, []string{}
	dec := xml.NewDecoder(&buf)
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			if el.Name.Local == "circle" {
				circles++
			}
		case xml.CharData:
			if s := strings.TrimSpace(string(el)); s != "" {
				texts = append(texts, s)
			}
		}
	}
	// A marker per step, panel and run, and one per run in the legend.
	if want := len(levels)*len(panels)*2 + 2; circles != want {
		t.Errorf("%d circles, want %d", circles, want)
	}
	joined := strings.Join(texts, "|")
	for _, want := range []string{"Output tokens/s", "TTFT (ms)", "TPOT (ms)", "E2E latency (ms)", "concurrency (requests in flight)", "splash <A>", "llama.cpp"} {
		if !strings.Contains(joined, want) {
			t.Errorf("SVG text lacks %q", want)
		}
	}
}

func TestPNGDrawsEachRunInItsColour(t *testing.T) {
	levels := []float64{0.5, 1, 2}
	a := report("rate", levels, func(x float64) float64 { return 50 * x })
	b := report("rate", levels, func(x float64) float64 { return 60 * x })
	path := filepath.Join(t.TempDir(), "chart.png")
	if err := WriteFile(path, Run{"a", a}, Run{"b", b}); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WritePNG(&buf, Run{"a", a}, Run{"b", b}); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if got := img.Bounds().Size(); got.X != width || got.Y != height {
		t.Fatalf("size %v, want %dx%d", got, width, height)
	}
	counts := map[[3]uint32]int{}
	for y := 0; y < height; y++ {
		for x := 0; x < width; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			counts[[3]uint32{r >> 8, g >> 8, b >> 8}]++
		}
	}
	for i := range 2 {
		c := palette[i]
		if n := counts[[3]uint32{uint32(c.R), uint32(c.G), uint32(c.B)}]; n < 200 {
			t.Errorf("run %d colour covers %d pixels, want its lines drawn", i, n)
		}
	}
	if counts[[3]uint32{0x22, 0x22, 0x22}] < 1000 {
		t.Error("little black ink: axes and text missing")
	}
}

func TestPlotRefusesBadInput(t *testing.T) {
	c := report("concurrency", []float64{1, 2}, func(x float64) float64 { return x })
	r := report("rate", []float64{1, 2}, func(x float64) float64 { return x })
	var buf bytes.Buffer
	if err := WriteSVG(&buf, Run{"c", c}, Run{"r", r}); err == nil {
		t.Error("mixing rate and concurrency sweeps should fail")
	}
	if err := WriteSVG(&buf); err == nil {
		t.Error("no runs should fail")
	}
	if err := WriteFile(filepath.Join(t.TempDir(), "x.gif"), Run{"c", c}); err == nil {
		t.Error("an unknown extension should fail")
	}
}
