package bench

import "time"

// Summary is the per-step result, with metrics defined as vLLM's serving
// benchmark defines them. Latency metrics cover completed requests only;
// throughputs divide by the step's wall time (first send to last response).
type Summary struct {
	Concurrency     int     `json:"concurrency"`      // requests kept in flight; 0 for a rate step
	Rate            float64 `json:"rate"`             // Poisson arrival rate, requests/s; 0 for a concurrency step
	MeanConcurrency float64 `json:"mean_concurrency"` // observed: sum of request latencies / duration
	DurationS       float64 `json:"duration_s"`

	Requests  int            `json:"requests"`  // issued
	Completed int            `json:"completed"` // ended with a full stream
	Errors    int            `json:"errors"`    // requests − completed
	ErrorKind map[string]int `json:"error_kinds"`

	InputTokens        int    `json:"input_tokens"`  // over completed requests
	OutputTokens       int    `json:"output_tokens"` // over completed requests
	PromptTokensSource string `json:"prompt_tokens_source"`
	OutputTokensSource string `json:"output_tokens_source"` // "usage", "chunks", "mixed" or "none"

	RequestThroughput float64 `json:"request_throughput"` // completed requests/s
	OutputTokensPerS  float64 `json:"output_tokens_per_s"`
	TotalTokensPerS   float64 `json:"total_tokens_per_s"` // (input + output tokens)/s
	Goodput           float64 `json:"goodput"`            // requests/s meeting the SLO (all completed when none is set)

	TTFT Latency `json:"ttft_ms"`
	TPOT Latency `json:"tpot_ms"` // over requests with at least 2 output tokens
	ITL  Latency `json:"itl_ms"`  // over the gaps of all requests pooled
	E2E  Latency `json:"e2e_ms"`
}

// Summarize computes a step's summary from its samples and wall time.
func Summarize(samples []Sample, duration time.Duration, slo SLO) Summary {
	s := Summary{Requests: len(samples), ErrorKind: map[string]int{}, DurationS: duration.Seconds()}
	var ttft, tpot, itl, e2e []float64
	var good int
	var latencySum float64
	promptSources, outputSources := map[string]int{}, map[string]int{}
	for _, x := range samples {
		latencySum += x.E2EMs
		if !x.OK {
			s.Errors++
			s.ErrorKind[x.ErrorKind]++
			continue
		}
		s.Completed++
		s.InputTokens += x.PromptTokens
		s.OutputTokens += x.OutputTokens
		promptSources[x.PromptTokensSource]++
		outputSources[x.OutputTokensSource]++
		ttft = append(ttft, x.TTFTMs)
		e2e = append(e2e, x.E2EMs)
		itl = append(itl, x.ITLMs...)
		if x.OutputTokens > 1 {
			tpot = append(tpot, x.TPOTMs)
		}
		if slo.met(x) {
			good++
		}
	}
	s.PromptTokensSource = sourceOf(promptSources)
	s.OutputTokensSource = sourceOf(outputSources)
	s.TTFT, s.TPOT, s.ITL, s.E2E = summarize(ttft), summarize(tpot), summarize(itl), summarize(e2e)
	if secs := duration.Seconds(); secs > 0 {
		s.RequestThroughput = float64(s.Completed) / secs
		s.OutputTokensPerS = float64(s.OutputTokens) / secs
		s.TotalTokensPerS = float64(s.InputTokens+s.OutputTokens) / secs
		s.Goodput = float64(good) / secs
		s.MeanConcurrency = latencySum / 1000 / secs
	}
	return s
}

// sourceOf names where a step's token counts came from.
func sourceOf(counts map[string]int) string {
	switch len(counts) {
	case 0:
		return "none"
	case 1:
		for k := range counts {
			return k
		}
	}
	return "mixed"
}
