package toolcall_test

import (
	"fmt"

	"github.com/splash-inference/splash/engine/grammar/toolcall"
)

func Example() {
	var p toolcall.Parser
	chunks := []string{"Checking.<tool", "_call>\n{\"name\": \"get_weather\", ", "\"arguments\": {\"city\": \"Paris\"}}\n</tool_", "call>"}
	for _, c := range chunks {
		for _, s := range p.Feed(c) {
			if s.Call != nil {
				fmt.Printf("call %s %s\n", s.Call.Name, s.Call.Arguments)
			} else {
				fmt.Printf("text %q\n", s.Text)
			}
		}
	}
	for _, s := range p.Flush() {
		fmt.Printf("text %q\n", s.Text)
	}
	// Output:
	// text "Checking."
	// call get_weather {"city":"Paris"}
}
