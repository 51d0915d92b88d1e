// Package grammar constrains generation to JSON that matches a schema.
//
// Compile turns a JSON Schema into a Grammar (JSONObject gives the
// json_object mode: any object). A Matcher walks output byte by byte over the
// grammar, a pushdown automaton specialised by the schema; it can be
// snapshotted, restored and cloned, which speculative decoding needs to check
// a draft and roll back its rejected suffix. A Vocab holds the tokenizer's
// token byte strings in a trie, and Vocab.Mask computes, for a matcher's
// position, the bitset of token ids that keep the output valid (EOS ids only
// once the document may end); ApplyMask sets the other logits to -Inf.
// CheckDraft returns how many tokens of a draft the grammar accepts.
//
// Output form. The grammar generates one spelling of each document, so that
// the mask never offers a token that leads nowhere and the model never
// wanders in whitespace:
//   - no insignificant whitespace at all ({"a":1,"b":[2,3]});
//   - object keys and enum/const values spelled canonically (as encoding/json
//     writes them without HTML escaping; objects inside enums with sorted keys);
//   - integers in plain form (-?(0|[1-9][0-9]*)): 1.0 and 1e2 are not
//     generated for "integer", although JSON Schema counts them as integers;
//   - properties in any order, each at most once;
//   - strings are valid UTF-8, with the JSON escapes;
//   - numbers have at most 15 digits before the exponent and a two-digit
//     exponent, so that JSON parsers read them back exactly.
//
// Budgets. Constraint.Limit and Wrapped.Limit give an output a token budget:
// the mask then allows only tokens after which the document can still end
// in time (budget.go), so the output ends whole. Compilation is bounded too
// (Limits, CompileContext), and SchemaCache remembers compiled schemas.
//
// Schema support. Enforced: type (one or a list), properties, required,
// additionalProperties, items, minItems, maxItems, minLength, maxLength,
// enum, const, anyOf. String lengths count code points, each escape as one
// (so a \uD83D\uDE00 surrogate pair counts two where JSON Schema counts one).
// Objects with declared properties produce only those properties, whatever
// additionalProperties says (strict output); an object without properties
// accepts any keys, with values matching additionalProperties when it is a
// schema. Without "type", properties/required/additionalProperties imply an
// object and items/minItems/maxItems an array; an empty schema is any value.
// "format" (date-time, date, uuid, email, ...) is treated as an annotation:
// the value is a plain string. Other annotations (title, description,
// default, examples, $schema, $defs, ...) are ignored. Everything else —
// $ref, pattern, minimum, maximum, multipleOf, oneOf, allOf, not,
// prefixItems, uniqueItems, ... — makes Compile fail with an error naming the keyword, so
// a request never silently gets unconstrained output.
//
// Nothing here starts goroutines or keeps package state. Grammars and Vocabs
// are read-only and shareable; Matchers and MaskCaches belong to one caller.
package grammar
