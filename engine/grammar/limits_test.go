package grammar

import (
	"context"
	"errors"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// enumBomb is the schema of issue 40: n integer enum values whose exponent
// would make an exact rational parse materialise 10^999999 each.
func enumBomb(n int) []byte {
	return []byte(`{"type":"integer","enum":[` + strings.TrimSuffix(strings.Repeat("1e999999,", n), ",") + `]}`)
}

func TestIsInteger(t *testing.T) {
	tests := []struct {
		num  string
		want bool
	}{
		{"0", true}, {"-0", true}, {"12", true}, {"1.0", true}, {"1.50e1", true}, {"1e999999", true},
		{"-2.5E+3", true}, {"0.0e-5", true}, {"100e-2", true}, {"1e99999999999999999999", true},
		{"1.5", false}, {"15e-1", false}, {"1e-1", false}, {"100e-3", false}, {"1e-99999999999999999999", false},
		{"0.001", false}, {"-7.25", false},
	}
	for _, tt := range tests {
		if got := isInteger(tt.num); got != tt.want {
			t.Errorf("isInteger(%s) = %v, want %v", tt.num, got, tt.want)
		}
	}
}

// TestCompileLimits checks each limit's error names what is too large, and
// that the enum bomb is refused by the enum-size check before any
// value is looked at.
func TestCompileLimits(t *testing.T) {
	deep := strings.Repeat(`{"type":"array","items":`, 130) + `{}` + strings.Repeat(`}`, 130)
	// A type list compiles its keywords once per type: 2^depth subschemas.
	typeBomb := `{}`
	for range 20 {
		typeBomb = `{"type":["object","object"],"properties":{"a":` + typeBomb + `}}`
	}
	longEnum := `{"enum":["` + strings.Repeat("x", 1<<16) + `"]}`
	tests := []struct {
		name   string
		schema string
		limits Limits
		want   string
	}{
		{"enum bomb", string(enumBomb(250)), Limits{}, "more than 64 enum values"},
		{"schema bytes", `{"type":"string","description":"` + strings.Repeat("x", 2048) + `"}`, Limits{SchemaBytes: 1024}, "bytes exceeds the limit of 1024"},
		{"number length", `{"type":"integer","enum":[1` + strings.Repeat("0", 100) + `]}`, Limits{}, "a number of 101 characters exceeds the limit of 64"},
		{"nesting", deep, Limits{}, "nesting depth exceeds the limit of 128"},
		{"subschemas", typeBomb, Limits{}, "the number of subschemas to compile exceeds the limit of 16384"},
		{"literal bytes", `{"type":["object","object","object","object","object"],"properties":{"a":` + longEnum + `}}`, Limits{LiteralBytes: 1 << 18}, "the bytes of enum and const values exceeds the limit of 262144"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := CompileContext(context.Background(), []byte(tt.schema), tt.limits)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

// TestEnumOfHugeIntegersCompiles: values like 1e999999 within the enum
// limit are recognised as integers from their text.
func TestEnumOfHugeIntegersCompiles(t *testing.T) {
	g, err := Compile([]byte(`{"type":"integer","enum":[1e999999,2.5,1.5e1]}`))
	if err != nil {
		t.Fatal(err)
	}
	for doc, want := range map[string]bool{"1e999999": true, "1.5e1": true, "2.5": false} {
		m := NewMatcher(g)
		if got := m.Advance([]byte(doc)) && m.CanEnd(); got != want {
			t.Errorf("%s accepted = %v, want %v", doc, got, want)
		}
	}
}

// TestNoArbitraryPrecision: the compiler never parses numbers into
// arbitrary-precision values (whose cost grows with the exponent), by
// construction: the package does not import math/big.
func TestNoArbitraryPrecision(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			if path, _ := strconv.Unquote(imp.Path.Value); path == "math/big" {
				t.Errorf("%s imports math/big", name)
			}
		}
	}
}

func TestCompileStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var props []string
	for i := range 300 {
		props = append(props, `"p`+strconv.Itoa(i)+`":{"type":"array","items":{"type":"string"}}`)
	}
	schema := `{"anyOf":[` + strings.Repeat(`{"type":"object","properties":{`+strings.Join(props[:60], ",")+`}},`, 5) + `{}]}`
	_, err := CompileContext(ctx, []byte(schema), Limits{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}

func TestSchemaCache(t *testing.T) {
	c := NewSchemaCache(2, Limits{})
	a, b, bad := []byte(`{"type":"string"}`), []byte(`{"type":"integer"}`), enumBomb(250)
	g1, err := c.Compile(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	if g2, _ := c.Compile(context.Background(), a); g2 != g1 {
		t.Error("a repeated schema was compiled again")
	}
	_, err1 := c.Compile(context.Background(), bad)
	_, err2 := c.Compile(context.Background(), bad)
	if err1 == nil || err1 != err2 {
		t.Errorf("a repeated bad schema: errors %v and %v, want the same cached error", err1, err2)
	}
	if _, err := c.Compile(context.Background(), b); err != nil { // evicts a, the least recently used
		t.Fatal(err)
	}
	if g3, _ := c.Compile(context.Background(), a); g3 == g1 || c.Len() != 2 {
		t.Errorf("after eviction: same grammar %v, %d entries; want a new one, 2 entries", g3 == g1, c.Len())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	big := []byte(`{"anyOf":[` + strings.Repeat(`{"type":"array","items":{"type":"string"}},`, 300) + `{}]}`)
	if _, err := c.Compile(ctx, big); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	if g, err := c.Compile(context.Background(), big); g == nil || err != nil {
		t.Errorf("a cancelled compilation was cached: %v", err)
	}
}

// BenchmarkCompileEnumBomb compiles issue 40's schema: 250 integer enum
// values 1e999999 (refused by the enum-size check), and 60 of them
// (compiled, each recognised as an integer from its text).
func BenchmarkCompileEnumBomb(b *testing.B) {
	for _, n := range []int{250, 60} {
		schema := enumBomb(n)
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				_, _ = Compile(schema)
			}
		})
	}
}
