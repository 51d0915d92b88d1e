package jinja

import (
	"strings"
	"testing"
)

func TestRender(t *testing.T) {
	for _, tc := range []struct {
		tpl  string
		vars string // JSON object
		want string
	}{
		{"{{ 'a' + 'b' ~ 1 }}", `{}`, "ab1"},
		{"{{ 7 // 2 }} {{ 7 % 3 }} {{ 2 ** 3 }} {{ 7 / 2 }} {{ -3 // 2 }}", `{}`, "3 1 8 3.5 -2"},
		{"{{ x[::-1] }} {{ x[1:] }} {{ x[-1] }} {{ s[::-1] }}", `{"x":[1,2,3],"s":"abc"}`, "[3, 2, 1] [2, 3] 3 cba"},
		{"{% for a, b in d.items() %}{{ a }}={{ b }};{% endfor %}", `{"d":{"z":1,"a":2}}`, "z=1;a=2;"},
		{"{% for x in l if x > 1 %}{{ loop.index }}/{{ loop.length }}{{ ',' if not loop.last }}{% else %}none{% endfor %}", `{"l":[1,2,3]}`, "1/2,2/2"},
		{"{% for x in l %}{% else %}empty{% endfor %}", `{"l":[]}`, "empty"},
		{"{% set ns = namespace(n=0) %}{% for x in l %}{% set ns.n = ns.n + x %}{% endfor %}{{ ns.n }}", `{"l":[1,2,3]}`, "6"},
		{"{% set y = 1 %}{% for x in l %}{% set y = x %}{% endfor %}{{ y }}", `{"l":[5]}`, "1"},
		{"{{ m.a is defined }} {{ m.b is defined }} {{ m.a is string }} {{ n is none }} {{ m is mapping }}", `{"m":{"a":"x"},"n":null}`, "true false true true true"},
		{"{{ ' x '.strip() }}|{{ 'a,b'.split(',') }}|{{ 'abc'.startswith('ab') }}|{{ '--a--'.lstrip('-') }}|{{ 'Hi'.upper() }}", `{}`, "x|[\"a\", \"b\"]|true|a--|HI"},
		{"{{ d | tojson }}", `{"d":{"b":[1,"é",null,true],"a":1.5}}`, `{"b": [1, "é", null, true], "a": 1.5}`},
		{"{{ d | tojson(indent=2) }}", `{"d":{"a":[1]}}`, "{\n  \"a\": [\n    1\n  ]\n}"},
		{"{{ x | default('d') }} {{ l | length }} {{ l | join('-') }} {{ l | first }} {{ l | last }}", `{"l":[1,2]}`, "d 2 1-2 1 2"},
		{"{{ l | selectattr('on') | map(attribute='n') | join }}", `{"l":[{"n":"a","on":true},{"n":"b","on":false}]}`, "a"},
		{"{{ 'yes' if 'b' in 'abc' else 'no' }} {{ 2 not in [1] }}", `{}`, "yes true"},
		{"{% macro greet(name, p='!') %}hi {{ name }}{{ p }}{% endmacro %}{{ greet('x') }}{{ greet('y', p='?') }}", `{}`, "hi x!hi y?"},
		{"  {% if true %}\n  yes\n  {% endif %}\n", `{}`, "  yes\n"},
		{"a  {%- if true -%}  b  {%- endif -%}  c", `{}`, "abc"},
		{"{# comment #}x{% raw %}{{ y }}{% endraw %}", `{}`, "x{{ y }}"},
		{"{{ none }}|{{ true }}|{{ 1.0 }}|{{ undefined_var }}", `{}`, "|true|1.0|"},
		{"{{ range(3) | list }} {{ [1,2] + [3] }}", `{}`, "[0, 1, 2] [1, 2, 3]"},
	} {
		v, err := DecodeJSON([]byte(tc.vars))
		if err != nil {
			t.Fatal(err)
		}
		vars := map[string]Value{}
		for _, k := range v.(*Map).Keys() {
			vars[k], _ = v.(*Map).Get(k)
		}
		tpl, err := Parse(tc.tpl)
		if err != nil {
			t.Errorf("%q: %v", tc.tpl, err)
			continue
		}
		got, err := tpl.Render(vars)
		if err != nil {
			t.Errorf("%q: %v", tc.tpl, err)
			continue
		}
		if got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.tpl, got, tc.want)
		}
	}
}

func TestErrorsNameTheLine(t *testing.T) {
	for _, tc := range []struct{ tpl, want string }{
		{"ok\n{% if x %}\nno end", "line 3: unexpected end of template"},
		{"{{ 1 +  }}", "line 1"},
		{"a\nb\n{{ x.y() }}", "line 3"},
		{"{% for %}", "line 1"},
		{"{{ 'a' - 1 }}", "unsupported operand"},
		{"{% set x.y = 1 %}", "not a namespace"},
		{"{{ raise_exception('no') }}", "no"},
		{"{{ x | nosuchfilter }}", "unknown filter"},
		{"{{ 'a", "unclosed"},
	} {
		tpl, err := Parse(tc.tpl)
		if err == nil {
			_, err = tpl.Render(map[string]Value{})
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.tpl, err, tc.want)
		}
	}
}
