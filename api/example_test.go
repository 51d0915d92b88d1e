package api_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/goccy/go-json"
	"github.com/splash-inference/splash/api"
	"github.com/splash-inference/splash/api/internal/fake"
)

// A server with the fake engine answering one Chat Completions request.
func Example() {
	srv, err := api.New(api.Options{
		Engine: fake.New(), Tokenizer: fake.Tokenizer{}, Template: fake.Template{},
		ModelID: "demo", ContextLength: 4096,
	})
	if err != nil {
		panic(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go srv.Serve(ln)
	defer srv.Shutdown(context.Background())

	res, err := http.Post("http://"+ln.Addr().String()+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"messages":[{"role":"user","content":"hi"}],"max_tokens":12}`))
	if err != nil {
		panic(err)
	}
	defer res.Body.Close()
	var out struct {
		Choices []struct {
			Message struct {
				Content          string `json:"content"`
				ReasoningContent string `json:"reasoning_content"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
	}
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		panic(err)
	}
	c := out.Choices[0]
	fmt.Printf("reasoning: %q\nanswer: %q\nfinish: %s\n", c.Message.ReasoningContent, c.Message.Content, c.FinishReason)
	// Output:
	// reasoning: "Let me think about it."
	// answer: "Hello there, this"
	// finish: length
}
