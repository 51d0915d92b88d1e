package bench

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

var rewrite = flag.Bool("rewrite", false, "rewrite testdata/schema_keys.txt from the current Report type")

// exampleReport has every field set, including one sample with ITL gaps and
// an error kind, so that every key of the schema appears.
func exampleReport() *Report {
	sample := Sample{ID: 0, OK: true, TTFTMs: 10, TPOTMs: 2, E2EMs: 20, ITLMs: []float64{2, 2},
		MaxTokens: 6, PromptTokens: 5, PromptTokensSource: SourceUsage, OutputTokens: 6, OutputTokensSource: SourceUsage, Chunks: 6, HTTPStatus: 200}
	failed := Sample{ID: 1, ErrorKind: "http_500", Error: "bench: HTTP 500", HTTPStatus: 500, E2EMs: 1}
	samples := []Sample{sample, failed}
	return &Report{
		SchemaVersion: SchemaVersion, Tool: "splash bench", StartedAt: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC),
		Config: RunConfig{BaseURL: "http://127.0.0.1:8080", Model: "m", API: "chat", Workload: "synthetic",
			InputLen: "5", OutputLen: "6", Load: "concurrency", Requests: 2, Seed: 1, IgnoreEOS: "auto", SLO: SLO{TTFTMs: 100}},
		Steps: []StepResult{{Summary: Summarize(samples, time.Second, SLO{TTFTMs: 100}), Samples: samples}},
	}
}

// schemaKeys lists every key path of v's JSON form ("steps[].summary.ttft_ms.p50").
// The keys inside error_kinds are data (error kind names), not schema.
func schemaKeys(t *testing.T, v any) []string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var tree any
	if err := json.Unmarshal(b, &tree); err != nil {
		t.Fatal(err)
	}
	var keys []string
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, child := range v {
				p := strings.TrimPrefix(path+"."+k, ".")
				keys = append(keys, p)
				if k != "error_kinds" {
					walk(p, child)
				}
			}
		case []any:
			if len(v) > 0 {
				walk(path+"[]", v[0])
			}
		}
	}
	walk("", tree)
	slices.Sort(keys)
	return slices.Compact(keys)
}

// TestSchemaIsStable fails when a JSON key is added, renamed or removed. If
// the change is meant, update the schema in doc.go (and SchemaVersion if a
// key was renamed or removed), then run go test ./bench -run Schema -rewrite.
func TestSchemaIsStable(t *testing.T) {
	got := schemaKeys(t, exampleReport())
	golden := filepath.Join("testdata", "schema_keys.txt")
	if *rewrite {
		if err := os.WriteFile(golden, []byte(strings.Join(got, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Fields(string(b))
	if !slices.Equal(got, want) {
		t.Errorf("report keys changed:\n got %v\nwant %v", got, want)
	}
}

// TestSchemaIsDocumented checks that doc.go names every key of the report.
func TestSchemaIsDocumented(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range schemaKeys(t, exampleReport()) {
		leaf := k[strings.LastIndex(k, ".")+1:]
		leaf = strings.TrimSuffix(leaf, "[]")
		if !strings.Contains(string(doc), leaf) {
			t.Errorf("doc.go does not document %q (%s)", leaf, k)
		}
	}
}

func TestReportRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.json")
	want := exampleReport()
	if err := WriteReport(path, want); err != nil {
		t.Fatal(err)
	}
	got, err := ReadReport(path)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(want)
	b, _ := json.Marshal(got)
	if string(a) != string(b) {
		t.Errorf("round trip changed the report:\n%s\n%s", a, b)
	}
	// A report from another schema version is refused, not misread.
	want.SchemaVersion = SchemaVersion + 1
	if err := WriteReport(path, want); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadReport(path); err == nil {
		t.Error("ReadReport accepted a report of another schema version")
	}
}

func TestTableAndComparison(t *testing.T) {
	a := exampleReport()
	b := exampleReport()
	b.Steps[0].Summary.OutputTokensPerS *= 2
	b.Steps[0].Summary.TTFT.P50 *= 2
	b.Config.InputLen = "7"
	var table strings.Builder
	if err := WriteTable(&table, a); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"c=0", "TTFT mean/p50/p99", "http_500×1", "goodput: completed requests/s meeting ttft=100ms"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
	var cmp strings.Builder
	if err := WriteComparison(&cmp, a, b, "a.json", "b.json"); err != nil {
		t.Fatal(err)
	}
	out := cmp.String()
	if !strings.Contains(out, `warning: runs differ in input length: "5" vs "7"`) {
		t.Errorf("comparison lacks the comparability warning:\n%s", out)
	}
	lineWith := func(metric string) string {
		for l := range strings.SplitSeq(out, "\n") {
			if strings.Contains(l, metric) {
				return strings.Join(strings.Fields(l), " ")
			}
		}
		return ""
	}
	if got := lineWith("out tok/s"); !strings.HasSuffix(got, "2.00 B") {
		t.Errorf("out tok/s row = %q, want ratio 2.00 with B better", got)
	}
	if got := lineWith("TTFT p50"); !strings.HasSuffix(got, "2.00 A") {
		t.Errorf("TTFT p50 row = %q, want ratio 2.00 with A better", got)
	}
}
