package toolcall

import (
	"reflect"
	"strings"
	"testing"
)

// want is a compact description of expected segments: "text:..." for plain
// text, "call:name args" for a call, "bad:reason-substring" for malformed.
type recorded struct {
	name   string
	output string
	want   []string
}

var outputs = []recorded{
	{
		name:   "text only",
		output: "The weather in Paris is mild. Use <b>tags</b> freely: <tool and <tool_cal are text.",
		want:   []string{"text:The weather in Paris is mild. Use <b>tags</b> freely: <tool and <tool_cal are text."},
	},
	{
		name:   "qwen single call",
		output: "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"unit\": \"celsius\"}}\n</tool_call>",
		want:   []string{"text:Let me check.\n", `call:get_weather {"city":"Paris","unit":"celsius"}`},
	},
	{
		name: "two calls and text around",
		output: "<tool_call>\n{\"name\": \"a\", \"arguments\": {}}\n</tool_call>\n<tool_call>\n" +
			"{\"name\": \"b\", \"arguments\": {\"x\": [1, 2], \"s\": \"</tool\"}}\n</tool_call>\nDone.",
		want: []string{`call:a {}`, "text:\n", `call:b {"x":[1,2],"s":"</tool"}`, "text:\nDone."},
	},
	{
		name:   "duplicated closing tag",
		output: "<tool_call>{\"name\": \"a\", \"arguments\": {\"k\": 1}}</tool_call>\n</tool_call>after",
		want:   []string{`call:a {"k":1}`, "text:after"},
	},
	{
		name:   "missing closing tag at end",
		output: "Calling.<tool_call>\n{\"name\": \"a\", \"arguments\": {\"k\": \"v\"}}\n",
		want:   []string{"text:Calling.", `call:a {"k":"v"}`},
	},
	{
		name:   "missing closing tag before the next call",
		output: "<tool_call>{\"name\": \"a\", \"arguments\": {}}\n<tool_call>{\"name\": \"b\", \"arguments\": {}}</tool_call>",
		want:   []string{`call:a {}`, `call:b {}`},
	},
	{
		name:   "unterminated and incomplete",
		output: "<tool_call>{\"name\": \"a\", \"argum",
		want:   []string{"bad:unterminated tool call"},
	},
	{
		name:   "invalid JSON body",
		output: "x<tool_call>{name: a}</tool_call>y",
		want:   []string{"text:x", "bad:invalid JSON", "text:y"},
	},
	{
		name:   "missing name and bad arguments",
		output: "<tool_call>{\"arguments\": {}}</tool_call><tool_call>{\"name\": \"a\", \"arguments\": [1]}</tool_call>",
		want:   []string{"bad:missing name", "bad:arguments is not a JSON object"},
	},
	{
		name:   "arguments as an encoded string",
		output: "<tool_call>{\"name\": \"a\", \"arguments\": \"{\\\"q\\\": 1}\"}</tool_call>",
		want:   []string{`call:a {"q":1}`},
	},
	{
		name:   "partial tag at the end is text",
		output: "ends with <tool_c",
		want:   []string{"text:ends with <tool_c"},
	},
	{
		name: "tags inside argument strings",
		output: "<tool_call>\n{\"arguments\": {\"notes\": [\"a<tool_call> b</tool_call>\\\"</tool_call>\"]}, \"name\": \"lookup\"}\n</tool_call>" +
			"<tool_call>{\"name\": \"b\", \"arguments\": {\"s\": \"\\\\\"}}</tool_call>",
		want: []string{`call:lookup {"notes":["a<tool_call> b</tool_call>\"</tool_call>"]}`, `call:b {"s":"\\"}`},
	},
	{
		name:   "a string that never closes holds the rest",
		output: "<tool_call>{\"name\": \"a\", \"arguments\": {\"s\": \"x</tool_call> more",
		want:   []string{"bad:unterminated tool call"},
	},
	{
		name:   "partial closing tag after a call",
		output: "<tool_call>{\"name\": \"a\"}</tool_call> </tool",
		want:   []string{`call:a {}`, "text: </tool"},
	},
}

// describe turns segments into the want notation, merging adjacent plain
// text, which streaming may cut anywhere.
func describe(segs []Segment) []string {
	var out []string
	for _, s := range segs {
		switch {
		case s.Call != nil:
			out = append(out, "call:"+s.Call.Name+" "+string(s.Call.Arguments))
		case s.Malformed != "":
			if !strings.HasPrefix(s.Text, openTag) {
				out = append(out, "bad text lost its tag: "+s.Text)
			}
			out = append(out, "bad:"+s.Malformed)
		default:
			if n := len(out); n > 0 && strings.HasPrefix(out[n-1], "text:") {
				out[n-1] += s.Text
			} else {
				out = append(out, "text:"+s.Text)
			}
		}
	}
	return out
}

func matches(got, want []string) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if strings.HasPrefix(want[i], "bad:") {
			if !strings.HasPrefix(got[i], "bad:") || !strings.Contains(got[i], want[i][4:]) {
				return false
			}
		} else if got[i] != want[i] {
			return false
		}
	}
	return true
}

func TestParse(t *testing.T) {
	for _, r := range outputs {
		t.Run(r.name, func(t *testing.T) {
			if got := describe(Parse(r.output)); !matches(got, r.want) {
				t.Errorf("Parse:\n got %q\nwant %q", got, r.want)
			}
		})
	}
}

// TestStreamingMatchesParse splits every recorded output at every byte
// boundary (two chunks), and also feeds it one byte at a time.
func TestStreamingMatchesParse(t *testing.T) {
	for _, r := range outputs {
		t.Run(r.name, func(t *testing.T) {
			whole := describe(Parse(r.output))
			for i := 0; i <= len(r.output); i++ {
				var p Parser
				segs := append(p.Feed(r.output[:i]), p.Feed(r.output[i:])...)
				segs = append(segs, p.Flush()...)
				if got := describe(segs); !reflect.DeepEqual(got, whole) {
					t.Fatalf("split at %d:\n got %q\nwant %q", i, got, whole)
				}
			}
			var p Parser
			var segs []Segment
			for i := range len(r.output) {
				segs = append(segs, p.Feed(r.output[i:i+1])...)
			}
			segs = append(segs, p.Flush()...)
			if got := describe(segs); !reflect.DeepEqual(got, whole) {
				t.Fatalf("byte by byte:\n got %q\nwant %q", got, whole)
			}
		})
	}
}

// TestTextIsNotHeldBack checks the streaming promise: plain text comes out
// as soon as it cannot be the start of a tag.
func TestTextIsNotHeldBack(t *testing.T) {
	var p Parser
	if got := describe(p.Feed("hello <tool")); !reflect.DeepEqual(got, []string{"text:hello "}) {
		t.Fatalf("got %q", got)
	}
	if got := describe(p.Feed("box")); !reflect.DeepEqual(got, []string{"text:<toolbox"}) {
		t.Fatalf("got %q", got)
	}
	if got := p.Feed(`<tool_call>{"name":"a"`); len(got) != 0 {
		t.Fatalf("call body emitted before it closed: %q", describe(got))
	}
}
