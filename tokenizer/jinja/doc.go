// Package jinja is a Jinja2 template engine for the chat templates that
// model repositories ship in tokenizer_config.json. It renders them
// byte-identically to the reference Hugging Face renderer
// (@huggingface/jinja), which transformers' templates are written against:
// trim_blocks and lstrip_blocks on, whitespace control with "-", values
// printed as that renderer prints them (true, not True; none as the empty
// string; lists and dicts as JSON-like text), and tojson with Python's
// separators and key order.
//
// Supported: {{ }}, {% if/elif/else %}, {% for %} (with tuple unpacking,
// an inline if, else, and loop.index, index0, revindex, revindex0, first,
// last, length, previtem, nextitem), {% set %} (also ns.attr = ...),
// {% macro %} with defaults and {% call %}-less calls, {% raw %}, comments;
// expressions with literals, lists, dicts, tuples, attribute and item
// access, slices with steps, calls with keyword arguments, the arithmetic,
// comparison, logic, "in", "is" and "~" operators, conditional
// expressions, filters and tests. Errors are returned with the template's
// line number; rendering never panics.
//
// Objects decoded with DecodeJSON keep their key order (Map), which tojson
// preserves.
//
// Content marks: strings from a request (MarkContent, DecodeJSONContent,
// Content) carry the byte ranges that are content through every string
// operation, and RenderContent returns the output's content spans, so a
// tokenizer can parse control tokens in the template's text only.
package jinja
