package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/splash-inference/splash/tokenizer"
)

// The table's axes: weight types of `splash pack --quant` and KV cache
// types of `splash generate --kv-cache-type`.
var (
	weightTypes = []string{"f32", "bf16", "q8", "q4"}
	kvTypes     = []string{"f32", "f16", "bf16", "q8"}
)

// runQuality packs the target at every weight type and prints held-out
// bits per byte for each KV cache type: windows of -context+1 tokens
// spread evenly over the held-out source joined by <|endoftext|> (as
// train.py's held-out loss), every token after a window's first scored by
// `splash generate --echo --logprobs 0`.
func runQuality(args []string) error {
	var c commonFlags
	fs := flag.NewFlagSet("quality", flag.ExitOnError)
	c.register(fs)
	target := fs.String("target", "bin/demo-model/target", "the target's Hugging Face checkpoint")
	windows := fs.Int("windows", 32, "held-out windows scored")
	context := fs.Int("context", 256, "tokens predicted per window (the training context)")
	fs.Parse(args)
	tok, err := tokenizer.Load(*target)
	if err != nil {
		return err
	}
	texts, err := heldOutCode(c.corpus)
	if err != nil {
		return err
	}
	ws, err := heldOutWindows(tok, texts, *windows, *context)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "demo-quality-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bits := map[[2]string]float64{}
	for _, q := range weightTypes {
		pkg := filepath.Join(tmp, q)
		if out, err := exec.Command(c.splash, "pack", "--quant", q, *target, pkg).CombinedOutput(); err != nil {
			return fmt.Errorf("splash pack --quant %s: %v\n%s", q, err, out)
		}
		for _, kv := range kvTypes {
			b, err := bitsPerByte(c.splash, pkg, kv, c.threads, tok, ws)
			if err != nil {
				return fmt.Errorf("weights %s, KV cache %s: %w", q, kv, err)
			}
			bits[[2]string{q, kv}] = b
			fmt.Fprintf(os.Stderr, "weights %s, KV cache %s: %.4f bits per byte\n", q, kv, b)
		}
		os.RemoveAll(pkg)
	}
	n := 0
	for _, w := range ws {
		n += len(w) - 1
	}
	fmt.Printf("Held-out Go source, bits per byte (%d windows, %d tokens scored; `splash generate --echo --logprobs 0`):\n\n", len(ws), n)
	fmt.Printf("| weights \\ KV cache | %s |\n|---|%s\n", strings.Join(kvTypes, " | "), strings.Repeat("---|", len(kvTypes)))
	for _, q := range weightTypes {
		fmt.Printf("| %s |", q)
		for _, kv := range kvTypes {
			fmt.Printf(" %.4f |", bits[[2]string{q, kv}])
		}
		fmt.Println()
	}
	return nil
}

// heldOutWindows joins the texts' tokens, each followed by <|endoftext|>,
// and returns n windows of context+1 tokens spread evenly over them.
func heldOutWindows(tok *tokenizer.Tokenizer, texts []string, n, context int) ([][]int32, error) {
	eot, ok := tok.TokenID("<|endoftext|>")
	if !ok {
		return nil, fmt.Errorf("the tokenizer has no <|endoftext|>")
	}
	var stream []int32
	for _, t := range texts {
		stream = append(append(stream, tok.Encode(t, false)...), eot)
	}
	fit := (len(stream) - 1) / context
	if fit == 0 {
		return nil, fmt.Errorf("held-out source of %d tokens is shorter than a window", len(stream))
	}
	n = min(n, fit)
	step := fit / n
	ws := make([][]int32, n)
	for i := range ws {
		at := i * step * context
		ws[i] = stream[at : at+context+1]
	}
	return ws, nil
}

// bitsPerByte scores every window with the package pkg and KV cache kv:
// the nats of every token after the first over the bytes they stand for.
func bitsPerByte(splash, pkg, kv string, threads int, tok *tokenizer.Tokenizer, ws [][]int32) (float64, error) {
	nats, nbytes := 0.0, 0
	for _, w := range ws {
		ids := make([]string, len(w))
		for i, id := range w {
			ids[i] = strconv.Itoa(int(id))
		}
		cmd := exec.Command(splash, "generate", "--model", pkg, "--prompt-ids", strings.Join(ids, ","), "--echo", "--logprobs", "0",
			"--json", "--max-tokens", "0", "--kv-cache-type", kv, "--threads", strconv.Itoa(threads))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return 0, fmt.Errorf("splash generate: %v\n%s", err, stderr.String())
		}
		var res struct {
			Tokens []struct {
				ID      int32    `json:"id"`
				Logprob *float64 `json:"logprob"`
			} `json:"tokens"`
		}
		if err := json.Unmarshal(out, &res); err != nil {
			return 0, fmt.Errorf("splash generate --json: %w", err)
		}
		if len(res.Tokens) != len(w) {
			return 0, fmt.Errorf("splash generate echoed %d tokens of a %d-token prompt", len(res.Tokens), len(w))
		}
		for i, t := range res.Tokens[1:] {
			if t.Logprob == nil || t.ID != w[i+1] {
				return 0, fmt.Errorf("prompt token %d: id %d (want %d) without a logprob", i+1, t.ID, w[i+1])
			}
			nats -= *t.Logprob
			nbytes += len(tok.TokenBytes(t.ID))
		}
	}
	return nats / math.Ln2 / float64(nbytes), nil
}
