package bench

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseLength(t *testing.T) {
	tests := []struct {
		in       string
		ok       bool
		min, max int // bounds every sample must respect
	}{
		{"128", true, 128, 128},
		{"128:512", true, 128, 512},
		{" 5 : 5 ", true, 5, 5},
		{"normal:100,10", true, 1, 1 << 30},
		{"0", false, 0, 0},
		{"9:3", false, 0, 0},
		{"abc", false, 0, 0},
		{"normal:100", false, 0, 0},
		{"normal:0,1", false, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			l, err := ParseLength(tt.in)
			if (err == nil) != tt.ok {
				t.Fatalf("ParseLength(%q) error = %v, want ok=%v", tt.in, err, tt.ok)
			}
			if !tt.ok {
				return
			}
			rng := newRNG(1)
			seen := map[int]bool{}
			for range 2000 {
				n := l.Sample(rng)
				if n < tt.min || n > tt.max {
					t.Fatalf("sample %d outside [%d, %d]", n, tt.min, tt.max)
				}
				seen[n] = true
			}
			if tt.min < tt.max && len(seen) < 10 {
				t.Errorf("only %d distinct samples from %q", len(seen), tt.in)
			}
		})
	}
}

func TestNormalLengthMean(t *testing.T) {
	l, _ := ParseLength("normal:200,20")
	rng := newRNG(3)
	sum := 0
	for range 4000 {
		sum += l.Sample(rng)
	}
	if mean := float64(sum) / 4000; mean < 198 || mean > 202 {
		t.Errorf("mean = %v, want about 200", mean)
	}
}

func TestSyntheticIsSeededAndSized(t *testing.T) {
	w := Synthetic{InputLen: FixedLength(100), OutputLen: mustLength(t, "10:20"), SharedPrefix: 30}
	a, b, c := w.Source(5), w.Source(5), w.Source(6)
	var firstA, firstC Job
	for i := range 20 {
		ja, _ := a.Next()
		jb, _ := b.Next()
		jc, _ := c.Next()
		if i == 0 {
			firstA, firstC = ja, jc
		}
		if !reflect.DeepEqual(ja, jb) {
			t.Fatalf("job %d differs between sources with the same seed", i)
		}
		text := ja.Turns[0].Messages[0].Content
		if n := countWords(text); n != 100 {
			t.Errorf("prompt has %d words, want 100", n)
		}
		if mt := ja.Turns[0].MaxTokens; mt < 10 || mt > 20 {
			t.Errorf("max tokens %d outside 10:20", mt)
		}
		prefix := strings.Join(strings.Fields(text)[:30], " ")
		if prefix != sharedPrefix(30) {
			t.Errorf("job %d does not start with the shared prefix", i)
		}
	}
	if reflect.DeepEqual(firstA, firstC) {
		t.Error("different seeds gave the same job")
	}
}

func TestAgentSessionsShape(t *testing.T) {
	w := AgentSessions{InputLen: FixedLength(50), OutputLen: FixedLength(8), TurnLen: FixedLength(12), Turns: mustLength(t, "2:4"), SharedPrefix: 20}
	src := w.Source(1)
	for range 10 {
		job, _ := src.Next()
		if n := len(job.Turns); n < 2 || n > 4 {
			t.Fatalf("%d turns, want 2..4", n)
		}
		first := job.Turns[0].Messages
		if len(first) != 2 || first[0].Role != "system" || countWords(first[0].Content) != 50 || countWords(first[1].Content) != 12 {
			t.Fatalf("first turn = %+v, want a 50-word system prompt and a 12-word user message", first)
		}
		for _, turn := range job.Turns[1:] {
			if len(turn.Messages) != 1 || turn.Messages[0].Role != "user" || turn.MaxTokens != 8 {
				t.Fatalf("later turn = %+v", turn)
			}
		}
	}
}

func TestParseJSONL(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []Job
		wantErr string
	}{
		{
			name: "prompts, messages and sessions",
			in: `{"prompt": "hello there", "max_tokens": 5}

{"session": "s", "messages": [{"role": "system", "content": "sys"}, {"role": "user", "content": "a"}]}
{"messages": [{"role": "user", "content": "solo"}]}
{"session": "s", "messages": [{"role": "user", "content": "b"}], "max_tokens": 7}
`,
			want: []Job{
				{Turns: []Turn{{Messages: []Message{{"user", "hello there"}}, MaxTokens: 5}}},
				{Turns: []Turn{
					{Messages: []Message{{"system", "sys"}, {"user", "a"}}},
					{Messages: []Message{{"user", "b"}}, MaxTokens: 7},
				}},
				{Turns: []Turn{{Messages: []Message{{"user", "solo"}}}}},
			},
		},
		{name: "bad json", in: "{\n", wantErr: "line 1"},
		{name: "neither prompt nor messages", in: `{"max_tokens": 3}`, wantErr: "needs prompt or messages"},
		{name: "both", in: `{"prompt": "x", "messages": [{"role":"user","content":"y"}]}`, wantErr: "both"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseJSONL(strings.NewReader(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("jobs = %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestFileSourceReplaysOnceAndFillsMaxTokens(t *testing.T) {
	jobs, err := parseJSONL(strings.NewReader(`{"prompt": "a"}` + "\n" + `{"prompt": "b", "max_tokens": 3}`))
	if err != nil {
		t.Fatal(err)
	}
	w := &FileRequests{Jobs: jobs, OutputLen: FixedLength(9)}
	src := w.Source(1)
	j1, ok1 := src.Next()
	j2, ok2 := src.Next()
	_, ok3 := src.Next()
	if !ok1 || !ok2 || ok3 {
		t.Fatalf("ok = %v %v %v, want true true false", ok1, ok2, ok3)
	}
	if j1.Turns[0].MaxTokens != 9 || j2.Turns[0].MaxTokens != 3 {
		t.Errorf("max tokens = %d, %d; want 9 (default) and 3 (file)", j1.Turns[0].MaxTokens, j2.Turns[0].MaxTokens)
	}
	if w.Jobs[0].Turns[0].MaxTokens != 0 {
		t.Error("source modified the loaded jobs")
	}
}

func TestParseSLO(t *testing.T) {
	tests := []struct {
		in   string
		want SLO
		ok   bool
	}{
		{"", SLO{}, true},
		{"ttft=500ms,tpot=50", SLO{TTFTMs: 500, TPOTMs: 50}, true},
		{"e2e=2s", SLO{E2EMs: 2000}, true},
		{"e2el=1500", SLO{E2EMs: 1500}, true},
		{"itl=5", SLO{}, false},
		{"ttft", SLO{}, false},
		{"ttft=-1", SLO{}, false},
		{"ttft=fast", SLO{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseSLO(tt.in)
			if (err == nil) != tt.ok || got != tt.want {
				t.Fatalf("ParseSLO(%q) = %+v, %v; want %+v, ok=%v", tt.in, got, err, tt.want, tt.ok)
			}
		})
	}
}

func TestEndpoint(t *testing.T) {
	tests := []struct {
		api  API
		base string
		want string
	}{
		{APIChat, "http://h:1", "http://h:1/v1/chat/completions"},
		{APIChat, "http://h:1/v1/", "http://h:1/v1/chat/completions"},
		{APICompletions, "http://h:1/", "http://h:1/v1/completions"},
		{APIMessages, "http://h:1/v1", "http://h:1/v1/messages"},
	}
	for _, tt := range tests {
		if got := tt.api.endpoint(tt.base); got != tt.want {
			t.Errorf("%s endpoint(%q) = %q, want %q", tt.api, tt.base, got, tt.want)
		}
	}
}

func TestDecodeOpenAIChunks(t *testing.T) {
	tests := []struct {
		name, data string
		want       streamUpdate
		wantErr    bool
	}{
		{"content", `{"choices":[{"delta":{"content":"hi"}}]}`, streamUpdate{text: "hi"}, false},
		{"reasoning counts as output", `{"choices":[{"delta":{"reasoning_content":"hm"}}]}`, streamUpdate{text: "hm"}, false},
		{"completions text", `{"choices":[{"text":"yo"}]}`, streamUpdate{text: "yo"}, false},
		{"role-only first chunk", `{"choices":[{"delta":{"role":"assistant"}}]}`, streamUpdate{}, false},
		{"usage", `{"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":34}}`, streamUpdate{promptTokens: 12, outputTokens: 34}, false},
		{"done", "[DONE]", streamUpdate{done: true}, false},
		{"error", `{"error":{"message":"boom"}}`, streamUpdate{}, true},
		{"garbage", `{nope`, streamUpdate{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeOpenAI(tt.data)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Fatalf("decodeOpenAI = %+v, %v; want %+v, err=%v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func mustLength(t *testing.T, s string) Length {
	t.Helper()
	l, err := ParseLength(s)
	if err != nil {
		t.Fatal(err)
	}
	return l
}
