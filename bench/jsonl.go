package bench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"sync"
)

// FileRequests is a workload read from a JSONL file, one request per line:
//
//	{"prompt": "text", "max_tokens": 64}
//	{"messages": [{"role": "user", "content": "text"}]}
//	{"session": "a", "messages": [{"role": "user", "content": "next step"}]}
//
// A line has either "prompt" (sent as one user message, or as the raw prompt
// to the Completions API) or "messages". "max_tokens" is optional; without it
// OutputLen is used. Lines that share a "session" form one multi-turn job, in
// file order: each line's messages are appended to the conversation after the
// server's answer to the previous line, as in AgentSessions. The job starts at
// the place of the session's first line.
//
// Every step replays the file from the top and ends when it is exhausted (or
// earlier, at --requests or --duration); the file is never cycled, so no
// request hits the server's prefix cache by accident.
type FileRequests struct {
	Path      string
	Jobs      []Job
	OutputLen Length
}

// fileLine is the JSON shape of one line.
type fileLine struct {
	Session   string    `json:"session"`
	Prompt    *string   `json:"prompt"`
	Messages  []Message `json:"messages"`
	MaxTokens int       `json:"max_tokens"`
}

// LoadFile reads a JSONL workload. Output lengths missing from the file are
// drawn from outputLen (seeded per step).
func LoadFile(path string, outputLen Length) (*FileRequests, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	defer f.Close()
	jobs, err := parseJSONL(f)
	if err != nil {
		return nil, fmt.Errorf("bench: %s: %w", path, err)
	}
	if len(jobs) == 0 {
		return nil, fmt.Errorf("bench: %s: no requests", path)
	}
	return &FileRequests{Path: path, Jobs: jobs, OutputLen: outputLen}, nil
}

func parseJSONL(r io.Reader) ([]Job, error) {
	var jobs []Job
	sessions := map[string]int{} // session name -> index in jobs
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 0, 64<<10), 64<<20)
	for n := 1; s.Scan(); n++ {
		line := bytes.TrimSpace(s.Bytes())
		if len(line) == 0 {
			continue
		}
		var l fileLine
		if err := json.Unmarshal(line, &l); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		turn := Turn{Messages: l.Messages, MaxTokens: l.MaxTokens}
		switch {
		case l.Prompt != nil && l.Messages != nil:
			return nil, fmt.Errorf("line %d: has both prompt and messages", n)
		case l.Prompt != nil:
			turn.Messages = []Message{{Role: "user", Content: *l.Prompt}}
		case len(l.Messages) == 0:
			return nil, fmt.Errorf("line %d: needs prompt or messages", n)
		}
		if l.MaxTokens < 0 {
			return nil, fmt.Errorf("line %d: negative max_tokens", n)
		}
		if l.Session == "" {
			jobs = append(jobs, Job{Turns: []Turn{turn}})
			continue
		}
		i, ok := sessions[l.Session]
		if !ok {
			i = len(jobs)
			sessions[l.Session] = i
			jobs = append(jobs, Job{})
		}
		jobs[i].Turns = append(jobs[i].Turns, turn)
	}
	if err := s.Err(); err != nil {
		return nil, err
	}
	return jobs, nil
}

// Name implements Workload.
func (*FileRequests) Name() string { return "file" }

// Source implements Workload.
func (w *FileRequests) Source(seed uint64) Source {
	return &fileSource{jobs: w.Jobs, outputLen: w.OutputLen, rng: newRNG(seed)}
}

type fileSource struct {
	jobs      []Job
	outputLen Length

	mu   sync.Mutex // guards next and rng
	next int
	rng  *rand.Rand
}

func (s *fileSource) Next() (Job, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.next >= len(s.jobs) {
		return Job{}, false
	}
	src := s.jobs[s.next]
	s.next++
	job := Job{Turns: make([]Turn, len(src.Turns))}
	copy(job.Turns, src.Turns)
	for i := range job.Turns {
		if job.Turns[i].MaxTokens == 0 {
			job.Turns[i].MaxTokens = s.outputLen.Sample(s.rng)
		}
	}
	return job, true
}
