// Package toolcall splits model output in the Qwen/Hermes tool-call format
// into plain text and calls:
//
//	Let me check.<tool_call>
//	{"name": "get_weather", "arguments": {"city": "Paris"}}
//	</tool_call>
//
// A Parser is fed text as it streams (tags may be split across chunks at any
// byte) and returns Segments as soon as they are decided: text outside calls
// right away, except a tail that could be the start of "<tool_call>"; a call
// once its closing tag arrives. Inside a call, tags count only outside its
// JSON strings, so an argument may hold their text. Parse does the same for a whole output, and
// both give the same segments, up to how plain text is cut into pieces.
//
// Repairs, made only when the result is unambiguous:
//   - a duplicated closing tag right after a call (whitespace between
//     allowed) is dropped;
//   - a call left open at the end of the stream, or followed directly by
//     another <tool_call>, is closed when its body is a complete, valid call;
//   - "arguments" given as a string holding a JSON object is decoded.
//
// Anything else that is not a valid call — invalid JSON, a missing name,
// arguments that are not an object, an unterminated call — is returned as
// text, tags included, with the reason in Segment.Malformed, so nothing the
// model wrote is lost.
package toolcall
