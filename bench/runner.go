package bench

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Config is one benchmark run: a target, a workload and a load sweep.
type Config struct {
	Target   Target
	Workload Workload
	Load     Load
	SLO      SLO
	Seed     uint64
	// Progress, if set, is called after every finished request (from one
	// goroutine at a time).
	Progress func(Progress)
}

// Progress is the state of the running step.
type Progress struct {
	StepIndex, Steps int
	Step             Step
	Done, Errors     int           // requests finished in this step, and how many failed
	Requests         int           // the step's request bound (0: none)
	Elapsed          time.Duration // since the step started
	Duration         time.Duration // the step's time bound (0: none)
}

// StepResult is one measured step.
type StepResult struct {
	Summary Summary  `json:"summary"`
	Samples []Sample `json:"samples"`
}

// Run runs every step of the sweep in order and returns their results. Each
// step draws its jobs from a source seeded with Seed+step index, so the same
// command sends the same requests to every server it is pointed at. Cancelling
// ctx ends the run early; the steps finished so far are returned with the
// context's error.
func Run(ctx context.Context, cfg Config) ([]StepResult, error) {
	if err := cfg.Load.validate(); err != nil {
		return nil, err
	}
	client := NewClient(cfg.Target)
	defer client.Close()
	var results []StepResult
	for i, step := range cfg.Load.Steps {
		r := &stepRun{
			client: client, load: cfg.Load, step: step, index: i,
			source: cfg.Workload.Source(cfg.Seed + uint64(i)), seed: cfg.Seed + uint64(i),
			progress: cfg.Progress,
		}
		samples, wall := r.run(ctx)
		sum := Summarize(samples, wall, cfg.SLO)
		sum.Concurrency, sum.Rate = step.Concurrency, step.Rate
		results = append(results, StepResult{Summary: sum, Samples: samples})
		if err := ctx.Err(); err != nil {
			return results, fmt.Errorf("bench: run interrupted: %w", err)
		}
	}
	return results, nil
}

// stepRun is the state of one step while it runs.
type stepRun struct {
	client   *Client
	load     Load
	step     Step
	index    int
	source   Source
	seed     uint64
	progress func(Progress)

	start    time.Time
	deadline time.Time // zero when the step has no duration bound
	issued   atomic.Int64
	sessions atomic.Int64

	mu      sync.Mutex // guards samples and done counts
	samples []Sample
	errors  int
}

// run drives the step and returns its samples (ordered by issue) and wall time.
func (r *stepRun) run(ctx context.Context) ([]Sample, time.Duration) {
	r.start = time.Now()
	if r.load.Duration > 0 {
		r.deadline = r.start.Add(r.load.Duration)
	}
	if r.step.Rate > 0 {
		r.runRate(ctx)
	} else {
		r.runConcurrency(ctx)
	}
	wall := time.Since(r.start)
	slices.SortFunc(r.samples, func(a, b Sample) int { return a.ID - b.ID })
	return r.samples, wall
}

// runConcurrency keeps Concurrency jobs going: each worker runs a job to its
// end and takes the next, until the bounds are reached.
func (r *stepRun) runConcurrency(ctx context.Context) {
	var wg sync.WaitGroup
	for range r.step.Concurrency {
		wg.Go(func() {
			for r.mayIssue(ctx) {
				job, ok := r.source.Next()
				if !ok || !r.runJob(ctx, job, nil) {
					return
				}
			}
		})
	}
	wg.Wait()
}

// runRate starts jobs at Poisson arrival times (exponential gaps with mean
// 1/Rate, from a seeded RNG), each on its own goroutine. Arrival times are
// absolute offsets from the step start, so sleep overshoot does not drift
// the rate.
func (r *stepRun) runRate(ctx context.Context) {
	rng := newRNG(r.seed ^ 0xa55a)
	var slots chan struct{}
	if r.load.MaxConcurrency > 0 {
		slots = make(chan struct{}, r.load.MaxConcurrency)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	var at time.Duration
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		timer.Reset(time.Until(r.start.Add(at)))
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		if !r.mayIssue(ctx) {
			return
		}
		job, ok := r.source.Next()
		if !ok {
			return
		}
		wg.Go(func() { r.runJob(ctx, job, slots) })
		at += time.Duration(rng.ExpFloat64() / r.step.Rate * float64(time.Second))
	}
}

// mayIssue reports whether the step's bounds still allow a new request.
func (r *stepRun) mayIssue(ctx context.Context) bool {
	if ctx.Err() != nil {
		return false
	}
	if !r.deadline.IsZero() && !time.Now().Before(r.deadline) {
		return false
	}
	return r.load.Requests <= 0 || r.issued.Load() < int64(r.load.Requests)
}

// reserve claims the next request id, or returns false when the request
// bound is reached.
func (r *stepRun) reserve(ctx context.Context) (int, bool) {
	if ctx.Err() != nil || (!r.deadline.IsZero() && !time.Now().Before(r.deadline)) {
		return 0, false
	}
	id := r.issued.Add(1) - 1
	if r.load.Requests > 0 && id >= int64(r.load.Requests) {
		return 0, false
	}
	return int(id), true
}

// runJob runs a job's turns in order, growing the conversation by each
// answer. slots, if not nil, bounds requests in flight. It returns false
// when the step's bounds stopped it early.
func (r *stepRun) runJob(ctx context.Context, job Job, slots chan struct{}) bool {
	session := int(r.sessions.Add(1) - 1)
	var history []Message
	for turn, t := range job.Turns {
		id, ok := r.reserve(ctx)
		if !ok {
			return false
		}
		history = append(history, t.Messages...)
		if slots != nil {
			slots <- struct{}{}
		}
		sent := time.Now()
		res := r.client.send(ctx, history, t.MaxTokens)
		if slots != nil {
			<-slots
		}
		res.ID, res.Session, res.Turn = id, session, turn
		res.StartMs = ms(sent.Sub(r.start))
		if !res.OK {
			res.E2EMs = ms(time.Since(sent))
		}
		if res.ITLMs == nil {
			res.ITLMs = []float64{} // the report always has an array here
		}
		r.record(res.Sample)
		if !res.OK {
			return true // a broken session cannot go on; take the next job
		}
		history = append(history, Message{Role: "assistant", Content: res.answer})
	}
	return true
}

func (r *stepRun) record(s Sample) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.samples = append(r.samples, s)
	if !s.OK {
		r.errors++
	}
	if r.progress != nil {
		r.progress(Progress{
			StepIndex: r.index, Steps: len(r.load.Steps), Step: r.step,
			Done: len(r.samples), Errors: r.errors, Requests: r.load.Requests,
			Elapsed: time.Since(r.start), Duration: r.load.Duration,
		})
	}
}
