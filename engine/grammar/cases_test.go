package grammar

// schemaCase is a schema with documents to check, valid and invalid alike:
// the reference validator decides which is which. Documents are written in
// the grammar's output form (compact, canonical keys), see doc.go.
type schemaCase struct {
	name   string
	schema string
	docs   []string
}

var schemaCases = []schemaCase{
	{
		name: "weather tool",
		schema: `{"type":"object","properties":{"city":{"type":"string"},
			"unit":{"type":"string","enum":["celsius","fahrenheit"]},"days":{"type":"integer"}},
			"required":["city"],"additionalProperties":false}`,
		docs: []string{
			`{"city":"Paris"}`, `{"city":"Paris","unit":"celsius"}`, `{"unit":"fahrenheit","city":""}`,
			`{"city":"Zürich","days":3}`, `{"city":"a\"b\\c\u00e9\n","days":-12}`,
			`{}`, `{"unit":"celsius"}`, `{"city":"Paris","unit":"kelvin"}`, `{"city":1}`,
			`{"city":"Paris","days":1.5}`, `{"city":"Paris","extra":1}`, `{"city":"Paris",}`,
			`{"city":"Paris"`, `{"city":"Par`, `{"cit`,
			`{"city":"Paris","days":01}`, `{"city":"Paris","days":-}`, `[]`, `"Paris"`, `null`,
			`{"city":"\x01"}`, `{"city":"\xff"}`, `{"city":"\xc3"}`, `{"city":"\ud83d\ude00"}`,
			`{"city":"\q"}`, `{"city":"\u12"}`, `{"city":"Paris"}x`, `{"city":"Paris"}}`,
		},
	},
	{
		name: "nested objects and arrays",
		schema: `{"type":"object","properties":{
			"user":{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"},
				"tags":{"type":"array","items":{"type":"string"},"maxItems":3}},"required":["name","age"]},
			"scores":{"type":"array","items":{"type":"number"},"minItems":1,"maxItems":4},
			"active":{"type":"boolean"},"note":{"type":"null"}},
			"required":["user","scores"]}`,
		docs: []string{
			`{"user":{"name":"a","age":1},"scores":[1]}`,
			`{"scores":[1.5,-2e3,0.25,4E+2],"user":{"age":0,"name":"","tags":[]},"active":true,"note":null}`,
			`{"user":{"name":"a","age":1,"tags":["x","y","z"]},"scores":[0],"active":false}`,
			`{"user":{"name":"a","age":1,"tags":["x","y","z","w"]},"scores":[0]}`,
			`{"user":{"name":"a","age":1},"scores":[]}`,
			`{"user":{"name":"a","age":1},"scores":[1,2,3,4,5]}`,
			`{"user":{"name":"a"},"scores":[1]}`,
			`{"user":{"name":"a","age":1},"scores":[1],"active":"yes"}`,
			`{"user":{"name":"a","age":1},"scores":[1],"note":false}`,
			`{"user":{"name":"a","age":1},"scores":[1,]}`,
			`{"user":{"name":"a","age":1},"scores":[1.]}`,
			`{"user":{"name":"a","age":1},"scores":[.5]}`,
			`{"user":{"name":"a","age":1},"scores":[1e]}`,
			`{"user":{"name":"a","age":1},"scores":[-0]}`,
			`{"user":{"name":"a","age":1},"scores":[tru]}`,
		},
	},
	{
		name: "anyOf and type lists",
		schema: `{"type":"object","properties":{
			"id":{"anyOf":[{"type":"string"},{"type":"integer"}]},
			"value":{"type":["number","null"]},
			"shape":{"anyOf":[
				{"type":"object","properties":{"kind":{"const":"circle"},"r":{"type":"number"}},"required":["kind","r"]},
				{"type":"object","properties":{"kind":{"const":"rect"},"w":{"type":"number"},"h":{"type":"number"}},"required":["kind","w","h"]}]}},
			"required":["id","shape"],"additionalProperties":false}`,
		docs: []string{
			`{"id":"x","shape":{"kind":"circle","r":1}}`,
			`{"id":7,"value":null,"shape":{"w":2,"kind":"rect","h":3}}`,
			`{"id":-7,"value":2.5,"shape":{"r":0,"kind":"circle"}}`,
			`{"id":true,"shape":{"kind":"circle","r":1}}`,
			`{"id":1.5,"shape":{"kind":"circle","r":1}}`,
			`{"id":"x","shape":{"kind":"circle","w":1,"h":2}}`,
			`{"id":"x","shape":{"kind":"rect","r":1}}`,
			`{"id":"x","shape":{"kind":"square","r":1}}`,
			`{"id":"x","value":"1","shape":{"kind":"circle","r":1}}`,
		},
	},
	{
		name: "enums of every type",
		schema: `{"type":"object","properties":{
			"e":{"enum":["a","ab",1,12,1.5,true,null,{"k":[1,2]},[]]},
			"s":{"type":"string","enum":["x","y",3]},
			"c":{"const":"exact <&> value"}},"additionalProperties":false}`,
		docs: []string{
			`{"e":"a"}`, `{"e":"ab"}`, `{"e":1}`, `{"e":12}`, `{"e":1.5}`, `{"e":true}`, `{"e":null}`,
			`{"e":{"k":[1,2]}}`, `{"e":[]}`, `{"s":"x","c":"exact <&> value"}`,
			`{"e":"b"}`, `{"e":"abc"}`, `{"e":123}`, `{"e":2}`, `{"e":false}`, `{"e":{"k":[1]}}`,
			`{"s":3}`, `{"s":"z"}`, `{"c":"exact"}`,
		},
	},
	{
		name: "free objects and untyped values",
		schema: `{"type":"object","properties":{
			"meta":{"type":"object"},
			"counts":{"type":"object","additionalProperties":{"type":"integer"}},
			"empty":{"type":"object","additionalProperties":false},
			"anything":{},
			"list":{"type":"array"}},"additionalProperties":false}`,
		docs: []string{
			`{"meta":{},"counts":{},"empty":{},"anything":null,"list":[]}`,
			`{"meta":{"a":{"b":[1,"2",{"c":null}]}},"counts":{"x":1,"y":-2}}`,
			`{"anything":[true,false,{"":""}],"list":[1,[2,[3]],"4"]}`,
			`{"anything":"s"}`, `{"anything":-1.5e-3}`,
			`{"counts":{"x":"1"}}`, `{"counts":{"x":1.5}}`, `{"empty":{"a":1}}`,
			`{"meta":[]}`, `{"list":{}}`, `{"meta":{"a"}}`, `{"meta":{"a":}}`, `{"meta":{1:2}}`,
		},
	},
	{
		name:   "anyOf objects sharing a property",
		schema: twoNames,
		docs: []string{`{"name":"x","a":1}`, `{"b":2,"name":""}`, `{"name":"x"}`, `{"name":"x","a":1,"b":2}`,
			`{"a":1}`, `{"name":"x","a":"1"}`},
	},
	{
		name: "string length bounds",
		schema: `{"type":"object","properties":{"code":{"type":"string","minLength":2,"maxLength":4},
			"nonempty":{"type":"string","minLength":1},"short":{"type":["string","null"],"maxLength":1}},
			"required":["code"],"additionalProperties":false}`,
		docs: []string{
			`{"code":"ab"}`, `{"code":"abcd"}`, `{"code":"é✓😀x"}`, `{"code":"\n\u00e9"}`, `{"code":"ab","nonempty":"x"}`,
			`{"code":"ab","short":""}`, `{"code":"ab","short":"é"}`, `{"code":"ab","short":null}`,
			`{"code":"a"}`, `{"code":"abcde"}`, `{"code":"é✓😀xy"}`, `{"code":"\n"}`, `{"code":"ab","nonempty":""}`,
			`{"code":"ab","short":"ab"}`, `{"code":"ab","short":"\t\t"}`,
		},
	},
	{
		name:   "top-level array",
		schema: `{"type":"array","items":{"type":"integer"},"minItems":2,"maxItems":3}`,
		docs:   []string{`[1,2]`, `[1,2,3]`, `[1]`, `[1,2,3,4]`, `[]`, `[1,"2"]`, `[1,2,]`},
	},
	{
		name:   "top-level number",
		schema: `{"type":"number"}`,
		docs:   []string{`0`, `12`, `-3.25e+10`, `1.`, `01`, `-`, `"1"`},
	},
	{
		name:   "formats are plain strings",
		schema: `{"type":"object","properties":{"when":{"type":"string","format":"date-time"},"id":{"type":"string","format":"uuid"}},"required":["when"]}`,
		docs:   []string{`{"when":"2026-12-03T07:00:00Z"}`, `{"when":"x","id":"y"}`, `{"id":"y"}`, `{"when":1}`},
	},
}
