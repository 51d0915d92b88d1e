// Package chat renders a model's chat template (the Jinja "chat_template"
// of its tokenizer_config.json) for a conversation, the way transformers'
// apply_chat_template does.
//
// Load a model directory's template once, then render each request with
// it (a Template is safe for concurrent use):
//
//	tpl, err := chat.Load(dir) // tokenizer_config.json, or its .gz
//	req, err := chat.ParseRequest(body)
//	prompt, err := tpl.Render(req)
//
// ParseRequest takes a JSON object of "messages", "tools",
// "add_generation_prompt" and "enable_thinking"; any other key becomes a
// template variable (Request.Extra), as apply_chat_template's keyword
// arguments do. A Request can also be built directly: its Messages and
// Tools are jinja values, decoded with jinja.DecodeJSON so that objects
// keep their key order (templates print them in that order).
//
// A tokenizer_config.json may carry a list of named templates instead of
// one; Render uses "tool_use" for a request with tools when the model
// ships one, and "default" otherwise. The bos_token and eos_token of the
// config are template variables, and enable_thinking is left undefined
// unless the request sets it, so that each template applies its own
// default.
package chat
