package tokenizer

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// repoFile returns the path of a file relative to the repository root.
func repoFile(t testing.TB, rel string) string {
	t.Helper()
	dir, _ := os.Getwd()
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, rel)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test directory")
		}
		dir = parent
	}
}

var loaded sync.Map // name → *Tokenizer, shared by the tests of this package

func vendored(t testing.TB, name string) *Tokenizer {
	t.Helper()
	if tk, ok := loaded.Load(name); ok {
		return tk.(*Tokenizer)
	}
	tk, err := Load(repoFile(t, filepath.Join("testdata", name+"-tokenizer")))
	if err != nil {
		t.Fatal(err)
	}
	loaded.Store(name, tk)
	return tk
}

type fixture struct {
	Text        string  `json:"text"`
	IDs         []int32 `json:"ids"`
	Decoded     string  `json:"decoded"`
	DecodedSkip string  `json:"decoded_skip"`
}

func fixtures(t testing.TB, name string) []fixture {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "fixtures-"+name+".json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var fx []fixture
	if err := json.NewDecoder(zr).Decode(&fx); err != nil {
		t.Fatal(err)
	}
	return fx
}

// TestConformance compares ids and decoded text with the reference Rust
// implementation of Hugging Face tokenizers, on a corpus of code, prose in
// many scripts, emoji sequences, whitespace runs, digits and special tokens.
func TestConformance(t *testing.T) {
	for _, name := range []string{"qwen3", "llama3"} {
		t.Run(name, func(t *testing.T) {
			tk := vendored(t, name)
			fx := fixtures(t, name)
			if len(fx) < 100 {
				t.Fatalf("only %d fixtures", len(fx))
			}
			for i, f := range fx {
				got := tk.Encode(f.Text, true)
				if fmt.Sprint(got) != fmt.Sprint(f.IDs) {
					t.Errorf("case %d %q:\n got %v\nwant %v", i, f.Text, got, f.IDs)
					continue
				}
				if d := tk.Decode(f.IDs, false); d != f.Decoded {
					t.Errorf("case %d: decode %q, want %q", i, d, f.Decoded)
				}
				if d := tk.Decode(f.IDs, true); d != f.DecodedSkip {
					t.Errorf("case %d: decode skipping special %q, want %q", i, d, f.DecodedSkip)
				}
			}
		})
	}
}

// TestRoundTrip: decode(encode(s)) == s (after the tokenizer's own
// normalisation) for every corpus line.
func TestRoundTrip(t *testing.T) {
	for _, name := range []string{"qwen3", "llama3"} {
		tk := vendored(t, name)
		for _, f := range fixtures(t, name) {
			want := f.Text
			if tk.normalizer != nil {
				want = tk.normalizer.normalize(want)
			}
			if got := tk.Decode(tk.Encode(f.Text, true), false); got != want {
				t.Errorf("%s: round trip of %q gave %q", name, f.Text, got)
			}
		}
	}
}

func TestSpecialTokensAsText(t *testing.T) {
	tk := vendored(t, "qwen3")
	parsed := tk.Encode("a<|im_end|>b", true)
	plain := tk.Encode("a<|im_end|>b", false)
	if len(parsed) != 3 || parsed[1] != 151645 {
		t.Fatalf("parsed %v", parsed)
	}
	for _, id := range plain {
		if tk.IsSpecial(id) {
			t.Fatalf("special token %d in %v with parsing off", id, plain)
		}
	}
	if tk.Decode(plain, false) != "a<|im_end|>b" {
		t.Fatal("plain encoding does not round-trip")
	}
	if eos := tk.EOS(); !contains(eos, 151645) || !contains(eos, 151643) {
		t.Fatalf("EOS %v", eos)
	}
}

func TestStreamDecoderMatchesDecode(t *testing.T) {
	for _, name := range []string{"qwen3", "llama3"} {
		tk := vendored(t, name)
		for _, f := range fixtures(t, name) {
			for _, skip := range []bool{false, true} {
				d := tk.NewStreamDecoder(skip)
				var sb strings.Builder
				for _, id := range f.IDs {
					s := d.Add(id)
					if strings.ContainsRune(s, '\uFFFD') && !strings.ContainsRune(tk.Decode(f.IDs, skip), '\uFFFD') {
						t.Fatalf("%s: streaming emitted a partial character for %q", name, f.Text)
					}
					sb.WriteString(s)
				}
				sb.WriteString(d.Flush())
				if want := tk.Decode(f.IDs, skip); sb.String() != want {
					t.Fatalf("%s: stream %q, whole %q", name, sb.String(), want)
				}
			}
		}
	}
}

// FuzzStreamDecoder feeds arbitrary token sequences (including ones that
// split and mangle UTF-8) one at a time and checks the stream against
// whole-sequence decoding.
func FuzzStreamDecoder(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6})
	f.Add([]byte("\xf0\x9f\x98\x80 emoji"))
	f.Add([]byte{0xff, 0x00, 0x10, 0x20, 0xe2, 0x82})
	tk := vendored(f, "qwen3")
	f.Fuzz(func(t *testing.T, data []byte) {
		var ids []int32
		for i := 0; i+1 < len(data); i += 2 {
			ids = append(ids, int32(data[i])<<8|int32(data[i+1])%int32(tk.VocabSize()))
		}
		// byte-level single-byte tokens mangle UTF-8 most: mix them in
		for _, b := range data {
			ids = append(ids, tk.byteIDs[b])
		}
		d := tk.NewStreamDecoder(false)
		var sb strings.Builder
		for _, id := range ids {
			sb.WriteString(d.Add(id))
		}
		sb.WriteString(d.Flush())
		if want := tk.Decode(ids, false); sb.String() != want {
			t.Fatalf("stream %q != whole %q", sb.String(), want)
		}
	})
}

func TestUnsupportedComponentsFailAtLoad(t *testing.T) {
	base := `{"added_tokens":[],"normalizer":null,"pre_tokenizer":{"type":"ByteLevel","add_prefix_space":false,"use_regex":true},
	"post_processor":null,"decoder":{"type":"ByteLevel"},"model":{"type":"BPE","vocab":%s,"merges":[]}}`
	vocab := map[string]int{}
	bl := newByteLevel()
	for c := 0; c < 256; c++ {
		vocab[string(bl.toRune[c])] = c
	}
	v, _ := json.Marshal(vocab)
	good := fmt.Sprintf(base, v)
	if _, err := FromJSON([]byte(good), nil); err != nil {
		t.Fatalf("minimal byte-level tokenizer: %v", err)
	}
	for _, tc := range []struct{ from, to, want string }{
		{`"type":"BPE"`, `"type":"Unigram"`, "Unigram"},
		{`"normalizer":null`, `"normalizer":{"type":"Precompiled"}`, "Precompiled"},
		{`"normalizer":null`, `"normalizer":{"type":"Sequence","normalizers":[{"type":"NFC"},{"type":"BertNormalizer"}]}`, "BertNormalizer"},
		{`"normalizer":null`, `"normalizer":{"type":"Replace","pattern":{"Regex":"a(?=b)"},"content":""}`, "look-around"},
		{`"normalizer":null`, `"normalizer":{"type":"Replace","pattern":{"Regex":"\\s+"},"content":""}`, `\s`},
		{`"decoder":{"type":"ByteLevel"}`, `"decoder":{"type":"WordPiece"}`, "WordPiece"},
		{`"pre_tokenizer":{"type":"ByteLevel","add_prefix_space":false,"use_regex":true}`,
			`"pre_tokenizer":{"type":"Split","pattern":{"Regex":"\\w+"},"behavior":"Isolated"}`, "Split pattern"},
		{`"merges":[]`, `"merges":[],"byte_fallback":true`, "byte_fallback"},
	} {
		_, err := FromJSON([]byte(strings.Replace(good, tc.from, tc.to, 1)), nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to name %q", tc.to, err, tc.want)
		}
	}
}

// BenchmarkEncode measures encode throughput on about 1 MB of the mixed
// corpus, one goroutine.
func BenchmarkEncode(b *testing.B) {
	for _, name := range []string{"qwen3", "llama3"} {
		b.Run(name, func(b *testing.B) {
			var texts []string
			for _, f := range fixtures(b, name) {
				texts = append(texts, f.Text)
			}
			benchEncode(b, vendored(b, name), texts)
		})
	}
}

// benchEncode measures encoding about 1 MB of texts joined by newlines,
// one goroutine.
func benchEncode(b *testing.B, tk *Tokenizer, texts []string) {
	var sb strings.Builder
	for sb.Len() < 1<<20 {
		for _, t := range texts {
			sb.WriteString(t)
			sb.WriteByte('\n')
		}
	}
	text := sb.String()
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tk.Encode(text, true)
	}
}
