// Package stop decides when a sequence ends and how much of its text may be
// shown so far.
//
// Token conditions (Conditions.Check) are evaluated by the scheduler on
// every generated token: a stop token id (EOS or a request's stop ids) ends
// with reason "stop"; reaching max tokens or the context limit ends with
// "length".
//
// Stop strings work on detokenized text, because a stop string can span
// several tokens and a token can hold the end of one stop and the start of
// the next text. A Checker is fed each new piece of text and returns the part
// that is safe to emit: everything except a tail that could still grow into
// a stop string, which it holds back until the next piece decides it. When a
// stop string completes, the text before it is emitted and the stop itself
// and everything after it are dropped (OpenAI semantics). At the end of a
// sequence that did not stop on a string, Flush returns the held-back tail.
package stop
