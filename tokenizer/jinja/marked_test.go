package jinja

import (
	"strings"
	"testing"
)

// showSpans writes text with its content spans between ‹ and ›.
func showSpans(text string, spans []Span) string {
	var b strings.Builder
	at := 0
	for _, sp := range spans {
		b.WriteString(text[at:sp.Start] + "‹" + text[sp.Start:sp.End] + "›")
		at = sp.End
	}
	b.WriteString(text[at:])
	return b.String()
}

// TestContentMarks renders templates over content variables: the output is
// the same text as without marks, and exactly the bytes that came from the
// content are marked, whatever string operations the template applied.
func TestContentMarks(t *testing.T) {
	for _, tc := range []struct {
		tpl  string
		vars string // JSON object, all of it content
		want string // the output with content between ‹ and ›
	}{
		{"a{{ c }}b", `{"c":"hi"}`, "a‹hi›b"},
		{"{{ c + '|' }}{{ '|' ~ c }}{{ c ~ 1 }}", `{"c":"x"}`, "‹x›||‹xx›1"},
		{"{{ c[1:3] }} {{ c[0] }} {{ c[::-1] }} {{ c[-1] }}", `{"c":"héllo"}`, "‹él› ‹h› ‹olléh› ‹o›"},
		{"{{ c.split('</think>')[-1].lstrip('\\n') }}|{{ c.split('</think>')[0].rstrip('\\n').split('<think>')[-1] }}", `{"c":"<think>r\n</think>\n\nans"}`, "‹ans›|‹r›"},
		{"{{ c.strip() }}|{{ c | trim }}|{{ c.strip(' x') }}", `{"c":"  xyx  "}`, "‹xyx›|‹xyx›|‹y›"},
		{"{{ c.replace('a', '<b>') }}|{{ 'a-b'.replace('-', c) }}|{{ c | replace('a', '') }}|{{ c.replace('', '.') }}", `{"c":"xay"}`, "‹x›<b>‹y›|a‹xay›b|‹xy›|.‹x›.‹a›.‹y›."},
		{"{{ [c, 'k'] | join(',') }}|{{ c.join(['1', '2']) }}|{{ c.split() }}|{{ c.split('a', 1) }}", `{"c":"a a"}`, "‹a a›,k|1‹a a›2|[\"‹a›\", \"‹a›\"]|[\"\", \"‹ a›\"]"},
		{"{{ c | tojson }}|{{ m | tojson }}|{{ m }}", `{"c":"a\"b","m":{"k<":"v","n":1}}`, `"‹a\"b›"|{"‹k<›": "‹v›", "‹n›": 1}|{"‹k<›": "‹v›", "‹n›": 1}`},
		{"{% for k, v in m.items() %}{{ k }}={{ v }};{% endfor %}{% for k in m %}{{ k }}{% endfor %}{{ m.keys() | join }}{{ m | dictsort | first | first }}", `{"m":{"b":"1","a":"2"}}`, "‹b›=‹1›;‹a›=‹2›;‹babaa›"},
		{"{% set x %}[{{ c }}]{% endset %}{{ x }}{% macro f(a) %}<{{ a }}>{% endmacro %}{{ f(c) }}", `{"c":"q"}`, "[‹q›]<‹q›>"},
		{"{{ c | upper }} {{ c.lower() }} {{ c | title }} {{ c | capitalize }} {{ c * 2 }} {{ c | e }} {{ c | reverse }}", `{"c":"aB<"}`, "‹AB<› ‹ab<› ‹Ab<› ‹Ab<› ‹aB<aB<› ‹aB&lt;› ‹<Ba›"},
		{"{{ c | indent(2) }}|{{ c | string }}", `{"c":"a\nb\n\nc"}`, "‹a\n›  ‹b\n\n›  ‹c›|‹a\nb\n\nc›"},
		{"{{ c is string }} {{ c == 'hi' }} {{ 'h' in c }} {{ c | length }} {{ c.startswith('h') }} {{ c in ['hi'] }} {{ c < 'z' }} {{ c is lower }}", `{"c":"hi"}`, "true true true 2 true true true true"},
		{"{% set d = {c: 1} %}{{ d | tojson }}{{ d[c] }}{{ d.hi }}", `{"c":"hi"}`, `{"‹hi›": 1}11`},
		{"{% if c %}{{ l | map('upper') | join }}{{ l | first }}{% endif %}", `{"c":"y","l":["a","b"]}`, "‹ABa›"},
		{"{{ c ~ '' }}{{ '' }}", `{"c":""}`, ""},
		{"{{ c | int + 1 }}", `{"c":" 41 "}`, "42"},
	} {
		v, err := DecodeJSON([]byte(tc.vars))
		if err != nil {
			t.Fatal(err)
		}
		tpl, err := Parse(tc.tpl)
		if err != nil {
			t.Fatalf("%s: %v", tc.tpl, err)
		}
		plainVars, contentVars := map[string]Value{}, map[string]Value{}
		for _, k := range v.(*Map).Keys() {
			x, _ := v.(*Map).Get(k)
			plainVars[k], contentVars[k] = x, MarkContent(x)
		}
		want, err := tpl.Render(plainVars)
		if err != nil {
			t.Fatalf("%s: %v", tc.tpl, err)
		}
		got, spans, err := tpl.RenderContent(contentVars)
		if err != nil {
			t.Fatalf("%s: %v", tc.tpl, err)
		}
		if got != want {
			t.Errorf("%s: text %q with marks, %q without", tc.tpl, got, want)
		}
		if s := showSpans(got, spans); s != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.tpl, s, tc.want)
		}
		for i, sp := range spans {
			if sp.Start >= sp.End || i > 0 && spans[i-1].End >= sp.Start {
				t.Errorf("%s: spans %v are not sorted, disjoint and apart", tc.tpl, spans)
			}
		}
	}
}

// TestTemplateTextIsNotContent: with no content variables nothing is
// marked, and MarkContent leaves its argument unmarked.
func TestTemplateTextIsNotContent(t *testing.T) {
	tpl, err := Parse("<|im_start|>{{ m.role }}\n{{ m | tojson }}<|im_end|>")
	if err != nil {
		t.Fatal(err)
	}
	m := NewMap()
	m.Set("role", "user")
	_ = MarkContent(m)
	out, spans, err := tpl.RenderContent(map[string]Value{"m": m})
	if err != nil || len(spans) != 0 {
		t.Fatalf("%q: spans %v, error %v", out, spans, err)
	}
}
