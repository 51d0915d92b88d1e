package api

// Completions response shapes, non-streaming and streaming.

// completion is a "text_completion" object (also each streamed chunk).
type completion struct {
	ID      string             `json:"id"`
	Object  string             `json:"object"`
	Created int64              `json:"created"`
	Model   string             `json:"model"`
	Choices []completionChoice `json:"choices"`
	Usage   *openAIUsage       `json:"usage,omitempty"`
}

type completionChoice struct {
	Text         string              `json:"text"`
	Index        int                 `json:"index"`
	Logprobs     *completionLogprobs `json:"logprobs"`
	FinishReason *string             `json:"finish_reason"`
}

// completionLogprobs is the legacy parallel-arrays logprobs shape. The
// first prompt token of an echo has no probability: null in token_logprobs
// as in vLLM, but {} rather than vLLM's null in top_logprobs, because the
// official Go SDK rejects a null inside that array.
type completionLogprobs struct {
	Tokens        []string             `json:"tokens"`
	TokenLogprobs []*float64           `json:"token_logprobs"`
	TopLogprobs   []map[string]float64 `json:"top_logprobs"`
	TextOffset    []int                `json:"text_offset"`
}

// logprobTrack builds completionLogprobs, keeping the running text offset.
type logprobTrack struct {
	offset int
}

// add appends tokens to lp (allocating it when nil) and returns it.
func (t *logprobTrack) add(lp *completionLogprobs, tokens []TokenLogprob) *completionLogprobs {
	if lp == nil {
		lp = &completionLogprobs{Tokens: []string{}, TokenLogprobs: []*float64{}, TopLogprobs: []map[string]float64{}, TextOffset: []int{}}
	}
	for _, tok := range tokens {
		v := tok.Logprob
		top := make(map[string]float64, len(tok.Top))
		for _, alt := range tok.Top {
			top[alt.Token] = alt.Logprob
		}
		lp.Tokens = append(lp.Tokens, tok.Token)
		lp.TokenLogprobs = append(lp.TokenLogprobs, &v)
		lp.TopLogprobs = append(lp.TopLogprobs, top)
		lp.TextOffset = append(lp.TextOffset, t.offset)
		t.offset += len(tok.Token)
	}
	return lp
}

// addUnscored appends the first prompt token, which has no probability.
func (t *logprobTrack) addUnscored(lp *completionLogprobs, token string) *completionLogprobs {
	lp = t.add(lp, nil)
	lp.Tokens = append(lp.Tokens, token)
	lp.TokenLogprobs = append(lp.TokenLogprobs, nil)
	lp.TopLogprobs = append(lp.TopLogprobs, map[string]float64{})
	lp.TextOffset = append(lp.TextOffset, t.offset)
	t.offset += len(token)
	return lp
}

// echoLogprobs returns the prompt part of an echo's logprobs.
func (s *Server) echoLogprobs(t *logprobTrack, prompt []int32, scored []TokenLogprob) *completionLogprobs {
	lp := t.addUnscored(nil, s.opts.Tokenizer.Decode(prompt[:1], false))
	return t.add(lp, scored)
}

// completionResponse builds the non-streaming response.
func (s *Server) completionResponse(id string, created int64, p *completionsPlan, r *result) completion {
	choices := make([]completionChoice, len(r.choices))
	for i, c := range r.choices {
		var lp *completionLogprobs
		if p.gen.Logprobs {
			var t logprobTrack
			if p.gen.PromptLogprobs {
				lp = s.echoLogprobs(&t, p.gen.Prompt, r.promptLogprobs)
			}
			lp = t.add(lp, c.logprobs)
		}
		reason := string(c.finish)
		choices[i] = completionChoice{Text: p.echo + c.text, Index: i, Logprobs: lp, FinishReason: &reason}
	}
	u := toOpenAIUsage(r.usage)
	return completion{ID: id, Object: "text_completion", Created: created, Model: s.opts.ModelID, Choices: choices, Usage: &u}
}

// completionsStream writes text_completion chunks, a chunk with the
// finish_reason per choice, an optional usage chunk and "data: [DONE]".
type completionsStream struct {
	s              *Server
	id             string
	created        int64
	plan           *completionsPlan
	echoed         []bool
	tracks         []logprobTrack
	promptLogprobs []TokenLogprob // from the first event, for every choice's echo
}

func newCompletionsStream(s *Server, id string, created int64, p *completionsPlan) *completionsStream {
	return &completionsStream{s: s, id: id, created: created, plan: p, echoed: make([]bool, p.gen.N), tracks: make([]logprobTrack, p.gen.N)}
}

func (c *completionsStream) chunk(choices []completionChoice, usage *openAIUsage) completion {
	return completion{ID: c.id, Object: "text_completion", Created: c.created, Model: c.s.opts.ModelID, Choices: choices, Usage: usage}
}

func (c *completionsStream) begin(*sseWriter) {}

func (c *completionsStream) event(w *sseWriter, ev Event) {
	if ev.Choice < 0 || ev.Choice >= len(c.echoed) {
		return
	}
	if ev.PromptLogprobs != nil {
		c.promptLogprobs = ev.PromptLogprobs
	}
	text := ev.Text
	track := &c.tracks[ev.Choice]
	var lp *completionLogprobs
	if !c.echoed[ev.Choice] {
		c.echoed[ev.Choice] = true
		text = c.plan.echo + text
		if c.plan.gen.PromptLogprobs {
			lp = c.s.echoLogprobs(track, c.plan.gen.Prompt, c.promptLogprobs)
		}
	}
	if c.plan.gen.Logprobs && len(ev.Logprobs) > 0 {
		lp = track.add(lp, ev.Logprobs)
	}
	if text != "" || lp != nil {
		w.send("", c.chunk([]completionChoice{{Text: text, Index: ev.Choice, Logprobs: lp}}, nil))
	}
	if ev.FinishReason != "" {
		reason := string(ev.FinishReason)
		w.send("", c.chunk([]completionChoice{{Index: ev.Choice, FinishReason: &reason}}, nil))
	}
}

func (c *completionsStream) end(w *sseWriter, usage Usage) {
	if c.plan.includeUsage {
		u := toOpenAIUsage(usage)
		w.send("", c.chunk([]completionChoice{}, &u))
	}
	w.done()
}

func (c *completionsStream) fail(w *sseWriter, err error) {
	w.send("", errorBody(dialectOpenAI, asAPIError(err)))
	w.done()
}

func (c *completionsStream) ping(w *sseWriter) { w.comment("ping") }
