// Command checkdemo checks that a checkpoint written by
// scripts/train-demo/train.py loads with Splash's loaders (the hybrid
// loader for a Qwen3.5 model, the registry's for a dense one) and that its
// logits on the held-out snippet of check.json match the ones torch
// computed, within a relative error (largest difference over largest
// logit) of -tol, with the same argmax at every position.
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
// dumped, and those logits.
type check struct {
	Tokens    []int32     `json:"tokens"`
	Positions []int       `json:"positions"`
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
	vocab := src.Config.VocabSize
	worst := 0.0
	for j, want := range c.Logits {
		got := logits[j*vocab : (j+1)*vocab]
		if len(want) != vocab {
			return fmt.Errorf("check.json position %d has %d logits, the model %d", c.Positions[j], len(want), vocab)
		}
		maxDiff, maxRef := 0.0, 0.0
		for i, w := range want {
			maxDiff = math.Max(maxDiff, math.Abs(float64(got[i])-w))
			maxRef = math.Max(maxRef, math.Abs(w))
		}
		worst = math.Max(worst, maxDiff/maxRef)
		if a, b := argmax(got), argmax(want); a != b {
			return fmt.Errorf("position %d: argmax %d, torch's %d", c.Positions[j], a, b)
		}
	}
	if worst > tol {
		return fmt.Errorf("logits differ from torch's by %.3g relative, more than %g", worst, tol)
	}
	fmt.Printf("%s: %s loads; logits of %d held-out positions match torch's within %.2g relative, same argmax\n",
		dir, src.Config.Architecture, len(c.Positions), worst)
	return nil
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
