// Package actorengine serves the HTTP layer's Engine with the actor
// runtime: each of a request's choices runs as one actors sequence (with
// its grammar or thinking-budget mask), and their events are merged into
// the HTTP layer's stream, with finish reasons, logprob texts and reasoning
// tokens counted for usage.
package actorengine
