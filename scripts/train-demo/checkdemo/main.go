// Command checkdemo checks that a checkpoint written by
// scripts/train-demo/train.py loads with Splash's loaders (the hybrid
// loader for a Qwen3.5 model, the registry's for a dense one) and that its
// logits on the held-out snippet of check.json match the ones torch
// computed, within a relative error (largest difference over largest
// logit) of -tol, with the same argmax at every position. A DFlash draft
// is checked against the target beside it (DIR/../target): it must fit the
// target's config, and its logits for check.json's block must match.
//
//	go run ./scripts/train-demo/checkdemo DIR...
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/metal/cpu"
	"github.com/splash-inference/splash/model"
)

// check is check.json: the snippet, the positions whose logits torch
// dumped, and those logits. A DFlash draft's has no positions: its tokens
// are a context and the anchor after it, Features the target's features
// at the context's positions, and Logits the block's proposals'.
type check struct {
	Tokens    []int32     `json:"tokens"`
	Positions []int       `json:"positions"`
	Features  []float32   `json:"features"`
	Logits    [][]float64 `json:"logits"`
}

func main() {
	tol := flag.Float64("tol", 1e-3, "largest relative error allowed")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: checkdemo [-tol X] DIR...")
		os.Exit(2)
	}
	be := cpu.New(1)
	defer be.Close()
	failed := false
	for _, dir := range flag.Args() {
		if err := checkDir(dir, be, *tol); err != nil {
			fmt.Fprintf(os.Stderr, "checkdemo: %s: %v\n", dir, err)
			failed = true
		}
	}
	if failed {
		os.Exit(1)
	}
}

func checkDir(dir string, be metal.Backend, tol float64) error {
	raw, err := os.ReadFile(filepath.Join(dir, "check.json"))
	if err != nil {
		return err
	}
	var c check
	if err := json.Unmarshal(raw, &c); err != nil {
		return fmt.Errorf("check.json: %w", err)
	}
	if c.Features != nil {
		return checkDFlash(dir, &c, be, tol)
	}
	if len(c.Positions) != len(c.Logits) || len(c.Tokens) == 0 || c.Positions[0] != len(c.Tokens)-len(c.Positions) {
		return fmt.Errorf("check.json: want logits of the last positions of the tokens")
	}
	src, err := model.Open(dir, model.OpenOptions{})
	if err != nil {
		return err
	}
	defer src.Close()
	logits, err := forward(src, be, c.Tokens, len(c.Positions))
	if err != nil {
		return err
	}
	worst, err := compareLogits(logits, c.Logits, src.Config.VocabSize, tol, "position", c.Positions[0])
	if err != nil {
		return err
	}
	fmt.Printf("%s: %s loads; logits of %d held-out positions match torch's within %.2g relative, same argmax\n",
		dir, src.Config.Architecture, len(c.Positions), worst)
	return nil
}

// compareLogits compares got, rows of vocab logits, with torch's, row j
// named what first+j in errors; it returns the worst relative error.
func compareLogits(got []float32, want [][]float64, vocab int, tol float64, what string, first int) (float64, error) {
	if len(got) != len(want)*vocab {
		return 0, fmt.Errorf("%d logits, check.json has %d rows of %d", len(got), len(want), vocab)
	}
	worst := 0.0
	for j, w := range want {
		g := got[j*vocab : (j+1)*vocab]
		if len(w) != vocab {
			return 0, fmt.Errorf("check.json %s %d has %d logits, the model %d", what, first+j, len(w), vocab)
		}
		maxDiff, maxRef := 0.0, 0.0
		for i, x := range w {
			maxDiff = math.Max(maxDiff, math.Abs(float64(g[i])-x))
			maxRef = math.Max(maxRef, math.Abs(x))
		}
		worst = math.Max(worst, maxDiff/maxRef)
		if a, b := argmax(g), argmax(w); a != b {
			return 0, fmt.Errorf("%s %d: argmax %d, torch's %d", what, first+j, a, b)
		}
	}
	if worst > tol {
		return 0, fmt.Errorf("logits differ from torch's by %.3g relative, more than %g", worst, tol)
	}
	return worst, nil
}

// forward runs tokens as one prompt from position 0 and returns the
// logits of the last n, through the hybrid model or the dense registry.
func forward(src *model.Source, be metal.Backend, tokens []int32, n int) ([]float32, error) {
	cfg := src.Config
	const block = 16
	blocks := make([]int32, (len(tokens)+block-1)/block)
	for i := range blocks {
		blocks[i] = int32(i)
	}
	row := model.Row{Tokens: tokens, Blocks: blocks, Logits: n}
	if cfg.Hybrid != nil {
		m, err := model.NewHybridModel(cfg, src.Tensors, be)
		if err != nil {
			return nil, err
		}
		out, err := m.ForwardState(row, m.NewState(), m.NewKVCache(len(blocks), block, metal.KVF32))
		return slices.Clone(out), err
	}
	m, err := src.Build(be)
	if err != nil {
		return nil, err
	}
	out, err := m.Forward(&model.Batch{Rows: []model.Row{row}}, m.NewKVCache(len(blocks), block, metal.KVF32))
	return slices.Clone(out), err
}

// argmax is the index of v's largest element, the first of equals.
func argmax[T float32 | float64](v []T) int {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return best
}
