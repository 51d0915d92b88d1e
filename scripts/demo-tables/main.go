// Command demo-tables measures a trained splash-demo (scripts/train-demo)
// through the splash binary and prints markdown tables, for the README:
//
//	go run ./scripts/demo-tables quality -splash BIN -target CHECKPOINT -corpus CORPUS.jsonl
//	go run ./scripts/demo-tables speculation -splash BIN [-model PACKAGE] -corpus CORPUS.jsonl
//
// quality: held-out bits per byte through `splash generate --echo
// --logprobs` for every weight type × KV cache type. speculation: mean
// accepted length and tokens/s of greedy completions of held-out Go
// source at several concurrencies, for each --spec, against served
// `splash serve`s. The held-out text is the training corpus's held-out
// Go source (packages never trained on).
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "quality":
		err = runQuality(os.Args[2:])
	case "speculation":
		err = runSpeculation(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "demo-tables:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: demo-tables quality|speculation [FLAGS] (-h for the flags)")
	os.Exit(2)
}

// commonFlags are the flags both tables take.
type commonFlags struct {
	splash, corpus string
	threads        int
}

func (c *commonFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.splash, "splash", "bin/splash", "the splash binary")
	fs.StringVar(&c.corpus, "corpus", "bin/demo-model/corpus.jsonl", "the training run's corpus.jsonl")
	fs.IntVar(&c.threads, "threads", 1, "compute threads of each splash run")
}

// heldOutCode returns the texts of the corpus's held-out Go source files,
// in corpus order.
func heldOutCode(corpus string) ([]string, error) {
	f, err := os.Open(corpus)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var texts []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var d struct{ Split, Kind, Text string }
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			return nil, fmt.Errorf("%s: %w", corpus, err)
		}
		if d.Split == "heldout" && d.Kind == "code" {
			texts = append(texts, d.Text)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(texts) == 0 {
		return nil, fmt.Errorf("%s has no held-out Go source", corpus)
	}
	return texts, nil
}

// splitList parses a comma-separated list.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// intList parses a comma-separated list of positive integers.
func intList(s string) ([]int, error) {
	var out []int
	for _, p := range splitList(s) {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive integer", p)
		}
		out = append(out, n)
	}
	return out, nil
}
