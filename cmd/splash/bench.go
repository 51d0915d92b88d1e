package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/peterbourgon/ff/v4"

	"github.com/splash-inference/splash/bench"
	"github.com/splash-inference/splash/bench/plot"
)

// benchFlags are the flags of `splash bench`.
type benchFlags struct {
	baseURL, apiKey, model, api string
	workload, file              string
	inputLen, outputLen         string
	turns, turnLen              string
	sharedPrefix                int
	concurrency, rate           string
	maxConcurrency, requests    int
	duration, timeout           time.Duration
	slo, ignoreEOS              string
	seed                        uint64
	jsonPath                    string
	plots, compare              []string
	quiet                       bool
}

const defaultConcurrency = "1,2,4,8,16,32,64"

func newBenchCmd(s *stdio) *ff.Command {
	var f benchFlags
	fs := ff.NewFlagSet("bench")
	fs.StringVar(&f.baseURL, 0, "base-url", "http://127.0.0.1:8080", "server to measure (with or without /v1)")
	fs.StringVar(&f.apiKey, 0, "api-key", "", "API key, sent as a bearer token (and x-api-key for messages)")
	fs.StringVar(&f.model, 0, "model", "", "model name (default: the first one GET /v1/models lists)")
	fs.StringEnumVar(&f.api, 0, "api", "API to stream: chat, completions or messages (Anthropic)", "chat", "completions", "messages")
	fs.StringEnumVar(&f.workload, 0, "workload", "synthetic, agent (multi-turn sessions) or file (JSONL, see --file)", "synthetic", "agent", "file")
	fs.StringVar(&f.file, 0, "file", "", "JSONL file of requests (implies --workload file)")
	fs.StringVar(&f.inputLen, 0, "input-len", "256", "prompt tokens (agent: first context): N, MIN:MAX or normal:MEAN,SD")
	fs.StringVar(&f.outputLen, 0, "output-len", "128", "output tokens (max_tokens): N, MIN:MAX or normal:MEAN,SD")
	fs.StringVar(&f.turns, 0, "turns", "4", "agent: turns per session")
	fs.StringVar(&f.turnLen, 0, "turn-len", "64", "agent: tokens of each new user message")
	fs.IntVar(&f.sharedPrefix, 0, "shared-prefix", 0, "leading prompt tokens shared by every request (a common system prompt)")
	fs.StringVar(&f.concurrency, 0, "concurrency", "", "concurrency sweep, e.g. 1,2,4 (default "+defaultConcurrency+")")
	fs.StringVar(&f.rate, 0, "rate", "", "request-rate sweep in requests/s with Poisson arrivals, e.g. 1,2,4")
	fs.IntVar(&f.maxConcurrency, 0, "max-concurrency", 0, "rate sweep: cap on requests in flight (0: none)")
	fs.IntVar(&f.requests, 0, "requests", 200, "per step: stop issuing after this many requests (0: no limit)")
	fs.DurationVar(&f.duration, 0, "duration", 2*time.Minute, "per step: stop issuing after this long (0: no limit)")
	fs.DurationVar(&f.timeout, 0, "timeout", 5*time.Minute, "per request, from send to end of stream")
	fs.StringVar(&f.slo, 0, "slo", "", "goodput objective, e.g. ttft=500ms,tpot=50ms,e2e=10s")
	fs.StringEnumVar(&f.ignoreEOS, 0, "ignore-eos", "send ignore_eos: auto (drop it if rejected), on or off", "auto", "on", "off")
	fs.Uint64Var(&f.seed, 0, "seed", 0, "seed of the workload and arrival times")
	fs.StringVar(&f.jsonPath, 0, "json", "", "write the report (every sample and per-step summaries) to this JSON file")
	fs.StringListVar(&f.plots, 0, "plot", "throughput and latency chart to write, .svg or .png (repeatable)")
	fs.StringListVar(&f.compare, 0, "compare", "compare two JSON reports: --compare A.json B.json (no run)")
	fs.BoolVar(&f.quiet, 0, "quiet", "no progress bar")
	return &ff.Command{
		Name:      "bench",
		Usage:     "splash bench [FLAGS]",
		ShortHelp: "measure an OpenAI- or Anthropic-compatible server (TTFT, TPOT, ITL, throughput)",
		LongHelp: `Runs a concurrency or request-rate sweep against any server that streams the
OpenAI or Anthropic API (Splash, llama.cpp, vLLM, Ollama, LM Studio) and
reports vLLM-style metrics per step. The same command against two servers
gives comparable reports; --compare prints two of them side by side.`,
		Flags: fs,
		Exec: func(ctx context.Context, args []string) error {
			if len(f.compare) > 0 { // --compare A.json B.json: B.json is an argument
				return runCompare(s, append(f.compare, args...), f.plots)
			}
			if len(args) > 0 {
				return fmt.Errorf("bench: unexpected arguments %q", args)
			}
			return runBench(ctx, s, f)
		},
	}
}

// runBench runs a sweep and writes its table, report and plots. Ctrl-C ends
// the run early and still writes the steps measured so far.
func runBench(ctx context.Context, s *stdio, f benchFlags) error {
	cfg, rc, err := benchConfig(f)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	if cfg.Target.Model == "" {
		if cfg.Target.Model, err = bench.DiscoverModel(ctx, f.baseURL, f.apiKey); err != nil {
			return err
		}
		rc.Model = cfg.Target.Model
	}
	var bar *bench.ProgressBar
	if !f.quiet {
		bar = bench.NewProgressBar(s.err)
		cfg.Progress = bar.Update
	}
	report := &bench.Report{SchemaVersion: bench.SchemaVersion, Tool: "splash bench", StartedAt: time.Now().UTC(), Config: rc}
	steps, runErr := bench.Run(ctx, cfg)
	if bar != nil {
		bar.Finish()
	}
	report.Steps = steps
	if len(steps) == 0 {
		return runErr
	}
	if err := bench.WriteTable(s.out, report); err != nil {
		return err
	}
	if f.jsonPath != "" {
		if err := bench.WriteReport(f.jsonPath, report); err != nil {
			return err
		}
	}
	for _, p := range f.plots {
		if err := plot.WriteFile(p, plot.Run{Name: cfg.Target.Model + " @ " + f.baseURL, Report: report}); err != nil {
			return err
		}
	}
	if runErr != nil {
		return runErr
	}
	for _, st := range steps {
		if st.Summary.Completed > 0 {
			return nil
		}
	}
	return errors.New("bench: no request completed; see the errors above")
}

// benchConfig turns flags into a run configuration and its record.
func benchConfig(f benchFlags) (bench.Config, bench.RunConfig, error) {
	var cfg bench.Config
	api, err := bench.ParseAPI(f.api)
	if err != nil {
		return cfg, bench.RunConfig{}, err
	}
	ignoreEOS, err := bench.ParseIgnoreEOS(f.ignoreEOS)
	if err != nil {
		return cfg, bench.RunConfig{}, err
	}
	slo, err := bench.ParseSLO(f.slo)
	if err != nil {
		return cfg, bench.RunConfig{}, err
	}
	var inputLen, outputLen, turns, turnLen bench.Length
	for _, l := range []struct {
		flag, spec string
		dst        *bench.Length
	}{{"input-len", f.inputLen, &inputLen}, {"output-len", f.outputLen, &outputLen}, {"turns", f.turns, &turns}, {"turn-len", f.turnLen, &turnLen}} {
		if *l.dst, err = bench.ParseLength(l.spec); err != nil {
			return cfg, bench.RunConfig{}, fmt.Errorf("--%s: %w", l.flag, err)
		}
	}

	workload := f.workload
	if f.file != "" {
		workload = "file"
	}
	switch workload {
	case "synthetic":
		cfg.Workload = bench.Synthetic{InputLen: inputLen, OutputLen: outputLen, SharedPrefix: f.sharedPrefix}
	case "agent":
		cfg.Workload = bench.AgentSessions{InputLen: inputLen, OutputLen: outputLen, TurnLen: turnLen, Turns: turns, SharedPrefix: f.sharedPrefix}
	case "file":
		if f.file == "" {
			return cfg, bench.RunConfig{}, errors.New("bench: --workload file needs --file")
		}
		if cfg.Workload, err = bench.LoadFile(f.file, outputLen); err != nil {
			return cfg, bench.RunConfig{}, err
		}
	}

	load := "concurrency"
	switch {
	case f.rate != "" && f.concurrency != "":
		return cfg, bench.RunConfig{}, errors.New("bench: give --concurrency or --rate, not both")
	case f.rate != "":
		load = "rate"
		cfg.Load.Steps, err = bench.ParseRateSteps(f.rate)
	default:
		c := f.concurrency
		if c == "" {
			c = defaultConcurrency
		}
		cfg.Load.Steps, err = bench.ParseConcurrencySteps(c)
	}
	if err != nil {
		return cfg, bench.RunConfig{}, err
	}
	if f.requests < 0 || f.duration < 0 || (f.requests == 0 && f.duration == 0) {
		return cfg, bench.RunConfig{}, errors.New("bench: each step needs a bound: --requests or --duration")
	}
	cfg.Load.Requests, cfg.Load.Duration, cfg.Load.MaxConcurrency = f.requests, f.duration, f.maxConcurrency
	cfg.Target = bench.Target{BaseURL: f.baseURL, APIKey: f.apiKey, Model: f.model, API: api, IgnoreEOS: ignoreEOS, Timeout: f.timeout}
	cfg.SLO, cfg.Seed = slo, f.seed

	rc := bench.RunConfig{
		BaseURL: f.baseURL, Model: f.model, API: string(api), Workload: cfg.Workload.Name(), File: f.file,
		InputLen: inputLen.String(), OutputLen: outputLen.String(), SharedPrefix: f.sharedPrefix,
		Load: load, Requests: f.requests, DurationS: f.duration.Seconds(), TimeoutS: f.timeout.Seconds(),
		Seed: f.seed, IgnoreEOS: string(ignoreEOS), SLO: slo,
	}
	if workload == "agent" {
		rc.Turns, rc.TurnLen = turns.String(), turnLen.String()
	}
	return cfg, rc, nil
}

// runCompare prints two reports side by side and optionally plots both.
func runCompare(s *stdio, files []string, plots []string) error {
	if len(files) != 2 {
		return fmt.Errorf("bench: --compare takes two reports, got %d", len(files))
	}
	a, err := bench.ReadReport(files[0])
	if err != nil {
		return err
	}
	b, err := bench.ReadReport(files[1])
	if err != nil {
		return err
	}
	if err := bench.WriteComparison(s.out, a, b, files[0], files[1]); err != nil {
		return err
	}
	for _, p := range plots {
		if err := plot.WriteFile(p, plot.Run{Name: files[0], Report: a}, plot.Run{Name: files[1], Report: b}); err != nil {
			return err
		}
	}
	return nil
}
