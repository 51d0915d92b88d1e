package main

import (
	"strings"
	"testing"

	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/metal/cpu"
	"github.com/splash-inference/splash/model/testmodel"
)

func TestAutoKVType(t *testing.T) {
	fast := func(t metal.KVType) float64 {
		if t == metal.KVBF16 {
			return 1.46
		}
		return 1
	}
	same := func(metal.KVType) float64 { return 1 }
	for _, tc := range []struct {
		name      string
		blockSize int
		dims      []int
		speedup   func(metal.KVType) float64
		want      metal.KVType
		why       string
	}{
		{"fast bf16", 32, []int{128}, fast, metal.KVBF16, "1.46×"},
		{"fast bf16 with a draft", 16, []int{128, 64}, fast, metal.KVBF16, "1.46×"},
		{"no faster", 32, []int{128}, same, metal.KVF16, "no faster"},
		{"no backend", 32, []int{128}, nil, metal.KVF16, "no faster"},
		{"heads of 16", 32, []int{16}, fast, metal.KVF16, "heads of 16"},
		{"a draft's heads of 16", 32, []int{128, 16}, fast, metal.KVF16, "heads of 16"},
		{"blocks of 12", 12, []int{128}, fast, metal.KVF16, "blocks of 12"},
	} {
		got, why := autoKVType(tc.blockSize, tc.dims, tc.speedup)
		if got != tc.want || !strings.Contains(why, tc.why) {
			t.Errorf("%s: got %v (%q), want %v (%q)", tc.name, got, why, tc.want, tc.why)
		}
	}
}

// TestServeKVCacheTypeAuto: without --kv-cache-type the plan names the
// type auto chose and why: bf16 for heads of 32 where this CPU's kernels
// compute bf16 attention faster, f16 for heads of 16 and with the portable
// kernels; and the server answers on it.
func TestServeKVCacheTypeAuto(t *testing.T) {
	be := cpu.New(1)
	fastBF16 := be.AttentionSpeedup(metal.KVBF16) > be.AttentionSpeedup(metal.KVF16)
	be.Close()
	for _, tc := range []struct {
		headDim int
		args    []string
		want    string
	}{
		{32, nil, map[bool]string{true: "bf16", false: "f16"}[fastBF16]},
		{32, []string{"--portable-kernels"}, "f16"},
		{16, nil, "f16"},
	} {
		dir := t.TempDir()
		spec := testmodel.Tiny("qwen3")
		spec.HeadDim = tc.headDim
		if err := testmodel.Write(dir, spec); err != nil {
			t.Fatal(err)
		}
		addr, _, logs, stop := startServeLogs(t, append([]string{"--model", dir}, tc.args...)...)
		var resp struct {
			Choices []struct{ Text string }
			Usage   struct {
				CompletionTokens int `json:"completion_tokens"`
			}
		}
		postJSON(t, "http://"+addr+"/v1/completions", `{"prompt":"hello","max_tokens":4,"temperature":0,"ignore_eos":true}`, &resp)
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(logs.String(), "KV cache type      "+tc.want+" (auto: ") {
			t.Errorf("heads of %d %v: want a %s cache chosen by auto in the plan:\n%s", tc.headDim, tc.args, tc.want, logs.String())
		}
		if len(resp.Choices) != 1 || resp.Usage.CompletionTokens != 4 {
			t.Errorf("heads of %d %v: completion %+v", tc.headDim, tc.args, resp)
		}
	}
}
