package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// runSpeculation serves the model once per --spec and, at each
// concurrency, sends every held-out prompt as a greedy completion
// (temperature 0, ignore_eos), then prints each spec's mean accepted length
// per verified block and output tokens/s, with the single-stream speedup
// over --spec off and whether its greedy completions equal off's.
func runSpeculation(args []string) error {
	var c commonFlags
	fs := flag.NewFlagSet("speculation", flag.ExitOnError)
	c.register(fs)
	pkg := fs.String("model", "", "the package to serve (default: the binary's embedded splash-demo)")
	specs := fs.String("specs", "dflash,draft,ngram,off", "--spec values measured")
	concs := fs.String("concurrency", "1,4,16", "requests in flight")
	prompts := fs.Int("prompts", 16, "held-out prompts (each sent once per concurrency)")
	promptBytes := fs.Int("prompt-bytes", 600, "prompt length: each held-out file's start, cut at a line end")
	maxTokens := fs.Int("max-tokens", 64, "tokens generated per request")
	fixed := fs.Bool("fixed", false, "serve with --spec-fixed: every step verifies a whole block (the draft's acceptance per block, not what adaptive verification chooses to verify)")
	fs.Parse(args)
	conc, err := intList(*concs)
	if err != nil {
		return fmt.Errorf("-concurrency: %w", err)
	}
	texts, err := heldOutCode(c.corpus)
	if err != nil {
		return err
	}
	ps := promptsOf(texts, *prompts, *promptBytes)
	var rows []specRow
	var offOut []string
	for _, spec := range splitList(*specs) {
		res, outs, err := measureSpec(c, *pkg, spec, *fixed, conc, ps, *maxTokens)
		if err != nil {
			fmt.Fprintf(os.Stderr, "--spec %s: %v\n", spec, err)
			rows = append(rows, specRow{spec: spec, err: err})
			continue
		}
		if spec == "off" {
			offOut = outs
		}
		rows = append(rows, specRow{spec: spec, res: res, outs: outs})
	}
	printSpecTable(rows, offOut, conc, len(ps), *maxTokens)
	return nil
}

// promptsOf takes the start of each of the first n texts, cut after the
// last line end within size bytes.
func promptsOf(texts []string, n, size int) []string {
	var ps []string
	for _, t := range texts {
		if len(ps) == n {
			break
		}
		p := t[:min(size, len(t))]
		if i := strings.LastIndexByte(p, '\n'); i > 0 {
			p = p[:i+1]
		}
		ps = append(ps, p)
	}
	return ps
}

type specRow struct {
	spec string
	err  error
	res  []stepResult // per concurrency
	outs []string     // the single-stream completions
}

// stepResult is one concurrency's measurement.
type stepResult struct {
	tokens       int
	seconds      float64
	meanAccepted float64 // tokens per verified block: generated/(generated−accepted)
}

// measureSpec starts `splash serve --spec spec` (with --spec-fixed when
// fixed), runs the prompts at every concurrency and stops it.
func measureSpec(c commonFlags, pkg, spec string, fixed bool, conc []int, ps []string, maxTokens int) ([]stepResult, []string, error) {
	port, err := freePort()
	if err != nil {
		return nil, nil, err
	}
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	args := []string{"serve", "--host", "127.0.0.1", "--port", strconv.Itoa(port), "--spec", spec, "--threads", strconv.Itoa(c.threads)}
	if fixed && spec != "off" {
		args = append(args, "--spec-fixed")
	}
	if pkg != "" {
		args = append(args, "--model", pkg)
	}
	cmd := exec.Command(c.splash, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	exited := make(chan struct{}) // closed when the server has exited
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	defer func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	}()
	if err := waitReady(base, exited); err != nil {
		if err == errExited {
			err = fmt.Errorf("splash serve exited: %v", waitErr)
		}
		return nil, nil, fmt.Errorf("%w (%s)", err, lastLine(stderr.String()))
	}
	var res []stepResult
	var outs []string
	for _, n := range conc {
		before, err := scrape(base)
		if err != nil {
			return nil, nil, err
		}
		start := time.Now()
		texts, tokens, err := complete(base, ps, n, maxTokens)
		if err != nil {
			return nil, nil, err
		}
		secs := time.Since(start).Seconds()
		after, err := scrape(base)
		if err != nil {
			return nil, nil, err
		}
		gen := after["splash_generation_tokens_total"] - before["splash_generation_tokens_total"]
		acc := after["splash_spec_accepted_tokens_total"] - before["splash_spec_accepted_tokens_total"]
		r := stepResult{tokens: tokens, seconds: secs}
		if gen > acc {
			r.meanAccepted = float64(gen) / float64(gen-acc)
		}
		res = append(res, r)
		if n == conc[0] {
			outs = texts
		}
		fmt.Fprintf(os.Stderr, "--spec %s, concurrency %d: %d tokens in %.1f s, mean accepted length %.2f\n", spec, n, tokens, secs, r.meanAccepted)
	}
	return res, outs, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

var errExited = errors.New("splash serve exited")

// waitReady polls GET /v1/models until the server answers, it exits
// (errExited), or a minute passes.
func waitReady(base string, exited <-chan struct{}) error {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return errExited
		case <-time.After(200 * time.Millisecond):
		}
		if resp, err := http.Get(base + "/v1/models"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
	}
	return fmt.Errorf("splash serve did not answer within a minute")
}

// scrape reads the server's Prometheus counters.
func scrape(base string) (map[string]int64, error) {
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	m := map[string]int64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		name, v, ok := strings.Cut(sc.Text(), " ")
		if !ok || strings.HasPrefix(name, "#") {
			continue
		}
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			m[name] = n
		}
	}
	return m, sc.Err()
}

// complete sends every prompt as a greedy completion with n in flight and
// returns the texts in prompt order and the tokens generated.
func complete(base string, ps []string, n, maxTokens int) ([]string, int, error) {
	texts := make([]string, len(ps))
	counts := make([]int, len(ps))
	errs := make([]error, len(ps))
	next := make(chan int)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				texts[i], counts[i], errs[i] = completion(base, ps[i], maxTokens)
			}
		}()
	}
	for i := range ps {
		next <- i
	}
	close(next)
	wg.Wait()
	total := 0
	for i := range ps {
		if errs[i] != nil {
			return nil, 0, errs[i]
		}
		total += counts[i]
	}
	return texts, total, nil
}

func completion(base, prompt string, maxTokens int) (string, int, error) {
	body, _ := json.Marshal(map[string]any{"model": "", "prompt": prompt, "max_tokens": maxTokens, "temperature": 0, "ignore_eos": true})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", base+"/v1/completions", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", 0, err
	}
	defer resp.Body.Close()
	var out struct {
		Choices []struct {
			Text string `json:"text"`
		} `json:"choices"`
		Usage struct {
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
	}
	if resp.StatusCode != http.StatusOK {
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		return "", 0, fmt.Errorf("POST /v1/completions: %s: %s", resp.Status, b.String())
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || len(out.Choices) != 1 {
		return "", 0, fmt.Errorf("POST /v1/completions: bad answer (%v)", err)
	}
	return out.Choices[0].Text, out.Usage.CompletionTokens, nil
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	return s[strings.LastIndexByte(s, '\n')+1:]
}

// printSpecTable prints one row per spec and concurrency.
func printSpecTable(rows []specRow, offOut []string, conc []int, prompts, maxTokens int) {
	var offTPS float64
	for _, r := range rows {
		if r.spec == "off" && r.err == nil {
			offTPS = float64(r.res[0].tokens) / r.res[0].seconds
		}
	}
	fmt.Printf("Greedy completions of %d held-out Go source prompts, %d tokens each:\n\n", prompts, maxTokens)
	fmt.Printf("| --spec | concurrency | mean accepted length | tokens/s | single-stream speedup | greedy output = off |\n|---|---|---|---|---|---|\n")
	for _, r := range rows {
		if r.err != nil {
			fmt.Printf("| %s | | | | | not measured: %s |\n", r.spec, r.err)
			continue
		}
		same := "n/a"
		if offOut != nil {
			k := 0
			for i := range r.outs {
				if r.outs[i] == offOut[i] {
					k++
				}
			}
			same = fmt.Sprintf("%d/%d", k, len(r.outs))
		}
		for i, s := range r.res {
			tps := float64(s.tokens) / s.seconds
			speedup := ""
			if i == 0 && offTPS > 0 {
				speedup = fmt.Sprintf("%.2f×", tps/offTPS)
			}
			fmt.Printf("| %s | %d | %.2f | %.0f | %s | %s |\n", r.spec, conc[i], s.meanAccepted, tps, speedup, same)
		}
	}
}
