package main

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/splash-inference/splash/model/testmodel"
)

// TestServeDiskCacheAcrossRestart: with --max-cache-disk, a conversation
// resent to a restarted server over the same --cache-dir is served from
// the disk tier (cached_tokens, /metrics' disk hit tokens) with the same
// greedy answer; the plan names the disk tier.
func TestServeDiskCacheAcrossRestart(t *testing.T) {
	dir, cache := t.TempDir(), t.TempDir()
	if err := testmodel.Write(dir, testmodel.Tiny("qwen3")); err != nil {
		t.Fatal(err)
	}
	system := strings.Repeat("You are a careful coding agent. ", 20)
	ask := func(addr string) (string, int64) {
		oc := openai.NewClient(option.WithBaseURL("http://"+addr+"/v1/"), option.WithAPIKey("x"), option.WithMaxRetries(0))
		res, err := oc.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
			Messages:  []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(system), openai.UserMessage("hello")},
			MaxTokens: openai.Int(4), Temperature: openai.Float(0),
		})
		if err != nil {
			t.Fatal(err)
		}
		return res.Choices[0].Message.Content, res.Usage.PromptTokensDetails.CachedTokens
	}
	var answers []string
	for run := range 2 {
		addr, _, logs, stop := startServeLogs(t, "--model", dir, "--cache-dir", cache, "--max-cache-disk", "64M")
		text, cached := ask(addr)
		answers = append(answers, text)
		if !strings.Contains(logs.String(), "prefix cache on disk") {
			t.Fatalf("run %d: the plan does not name the disk tier:\n%s", run, logs.String())
		}
		hits := diskHitTokens(t, addr)
		if run == 0 && (cached != 0 || hits != 0) {
			t.Fatalf("a cold server served %d cached tokens, %d from disk", cached, hits)
		}
		if run == 1 && (cached < 100 || hits < 100) {
			t.Fatalf("after a restart: %d cached tokens, %d from disk, want the system prompt's", cached, hits)
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}
	}
	if answers[0] != answers[1] {
		t.Fatalf("answers differ: cold %q, from disk %q", answers[0], answers[1])
	}
}

func diskHitTokens(t *testing.T, addr string) int64 {
	t.Helper()
	res, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	m := regexp.MustCompile(`(?m)^splash_prefix_cache_disk_hit_tokens_total (\d+)$`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("/metrics has no disk hit tokens:\n%s", b)
	}
	n, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return n
}

func TestMaxCacheDiskFlag(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want int64
		ok   bool
	}{{"", 0, true}, {"0", 0, true}, {"8G", 8 << 30, true}, {"512M", 512 << 20, true}, {"-1G", 0, false}, {"lots", 0, false}} {
		f := serveFlags{maxCacheDisk: tc.v}
		got, err := f.diskCacheBytes()
		if (err == nil) != tc.ok || got != tc.want {
			t.Fatalf("--max-cache-disk %q: %d, %v", tc.v, got, err)
		}
	}
}
