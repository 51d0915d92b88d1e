package model

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/splash-inference/splash/metal"
)

func stImage(header string, body int) []byte {
	b := make([]byte, 8, 8+len(header)+body)
	binary.LittleEndian.PutUint64(b, uint64(len(header)))
	b = append(b, header...)
	return append(b, make([]byte, body)...)
}

func TestParseSafetensors(t *testing.T) {
	good := `{"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},"b":{"dtype":"BF16","shape":[4],"data_offsets":[24,32]}}`
	for _, tc := range []struct {
		name string
		data []byte
		want string // error substring; "" for success
	}{
		{"good", stImage(good, 32), ""},
		{"too short", []byte{1, 2, 3}, "too short"},
		{"header beyond file", stImage(good, 32)[:40], "exceeds the file"},
		{"bad json", stImage(`{"a":`, 0), "bad safetensors header"},
		{"offsets beyond data (truncated)", stImage(good, 20), "outside"},
		{"size mismatch", stImage(`{"a":{"dtype":"F32","shape":[2,3],"data_offsets":[0,20]}}`, 24), "needs 24 bytes"},
		{"overlap", stImage(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}`, 12), "overlap"},
		{"reversed offsets", stImage(`{"a":{"dtype":"F32","shape":[0],"data_offsets":[8,4]}}`, 12), "outside"},
		{"negative dim", stImage(`{"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,0]}}`, 0), "negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts, _, err := parseSafetensors(tc.data, "x.safetensors")
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if a := ts["a"]; a.Rows != 2 || a.Cols != 3 || a.DType != metal.F32 || len(a.Data) != 24 {
					t.Fatalf("tensor a = %+v", a)
				}
				if b := ts["b"]; b.Rows != 1 || b.Cols != 4 || b.DType != metal.BF16 {
					t.Fatalf("tensor b = %+v", b)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}

func TestParseSafetensorsUnsupportedTensorsFailOnUse(t *testing.T) {
	img := stImage(`{"i":{"dtype":"I64","shape":[1],"data_offsets":[0,8]},"c":{"dtype":"F32","shape":[1,2,1,1],"data_offsets":[8,16]},`+
		`"experts":{"dtype":"F32","shape":[2,3,1],"data_offsets":[16,40]}}`, 40)
	ts, bad, err := parseSafetensors(img, "x")
	if err != nil {
		t.Fatal(err)
	}
	// Stacked matrices (experts, a convolution's (channels, 1, width)) are one matrix of their rows.
	if c := ts["experts"]; c == nil || c.Rows != 6 || c.Cols != 1 {
		t.Errorf("tensor experts = %+v, want 6×1", c)
	}
	set := newTensorSet()
	set.tensors, set.bad = ts, bad
	for name, want := range map[string]string{"i": "dtype I64", "c": "only 1-D, 2-D and 3-D", "zz": "no tensor zz"} {
		if _, err := set.Tensor(name); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("tensor %s: error %v, want %q", name, err, want)
		}
	}
}

func TestWriteSafetensorsRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	a, _ := metal.Quantize(metal.BF16, []float32{1, 2, 3, 4, 5, 6}, 2, 3)
	if err := writeSafetensors(&buf, []STTensor{{Name: "z", DType: metal.F32, Shape: []int{1}, Data: []byte{0, 0, 128, 63}},
		{Name: "a", DType: metal.BF16, Shape: []int{2, 3}, Data: a.Data}}); err != nil {
		t.Fatal(err)
	}
	if hl := binary.LittleEndian.Uint64(buf.Bytes()); hl%8 != 0 {
		t.Fatalf("header length %d not padded to 8", hl)
	}
	ts, _, err := parseSafetensors(buf.Bytes(), "rt")
	if err != nil {
		t.Fatal(err)
	}
	if got := ts["a"].Dequantize(); got[5] != 6 || ts["z"].Dequantize()[0] != 1 {
		t.Fatalf("round trip: %v %v", got, ts["z"].Dequantize())
	}
}

func TestParseHFConfig(t *testing.T) {
	for _, tc := range []struct {
		name, json string
		check      func(*Config) bool
		wantErr    string
	}{
		{"defaults", `{"architectures":["LlamaForCausalLM"],"hidden_size":64,"num_attention_heads":4,"eos_token_id":2}`,
			func(c *Config) bool {
				return c.HeadDim == 16 && c.NumKeyValueHeads == 4 && c.RopeTheta == 10000 && c.RMSNormEps == 1e-6 && !c.TieWordEmbeddings && len(c.EOSTokenID) == 1 && c.EOSTokenID[0] == 2
			}, ""},
		{"eos list and explicit head_dim", `{"architectures":["Qwen3ForCausalLM"],"hidden_size":64,"num_attention_heads":4,"head_dim":32,"eos_token_id":[1,2],"bos_token_id":null,"tie_word_embeddings":true}`,
			func(c *Config) bool {
				return c.HeadDim == 32 && len(c.EOSTokenID) == 2 && c.BOSTokenID == nil && c.TieWordEmbeddings
			}, ""},
		{"no architectures", `{"hidden_size":64}`, nil, "architectures"},
		{"bad eos", `{"architectures":["X"],"eos_token_id":"x"}`, nil, "eos_token_id"},
		{"not json", `{`, nil, "config.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseHFConfig([]byte(tc.json))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || !tc.check(c) {
				t.Fatalf("config %+v, err %v", c, err)
			}
		})
	}
}
