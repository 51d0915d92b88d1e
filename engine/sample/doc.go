// Package sample turns one position's logits into a token, per request.
//
// A Sampler holds one request's Params, its random number generator and its
// penalty state. Each call to Sample applies, in this order (vLLM's):
//
//  1. repetition penalty over prompt and output tokens (a positive logit is
//     divided by the penalty, a negative one multiplied), then presence and
//     frequency penalties over output tokens, then the logit bias;
//  2. greedy: Temperature == 0 takes the arg max (lowest id on ties);
//  3. otherwise logits are divided by Temperature, then min-p keeps tokens
//     with p ≥ MinP·p_max, top-k keeps the TopK most likely, top-p keeps the
//     smallest most-likely set whose mass reaches TopP, and one token is drawn
//     from what is left, renormalised.
//
// Reproducibility: the generator is a PCG seeded from Params.Seed, or, when
// the request has none, from a rand.Source the caller passes to New. A
// sampled step consumes exactly one uniform draw, and candidate sets are
// built deterministically, so a fixed seed gives the same tokens.
//
// Logprobs: Result.Logprob and Result.Top are natural-log probabilities
// under the raw distribution, softmax of the unmodified logits at
// temperature 1 before penalties and bias, which is what the OpenAI API
// reports. Computing them costs one exp per vocabulary entry (an inlined
// polynomial exp, relative error < 1e-8); Params.Logprobs < 0 skips it.
// Logprobs gives the same numbers for a token chosen elsewhere, such as by
// speculative acceptance.
//
// Cost over a 151,936-entry vocabulary is one linear pass for greedy and
// for top-k (a size-k heap), plus one exp pass when logprobs, min-p alone
// or top-p need probabilities; top-p finds its cut with a histogram of the
// weights and sorts only the boundary bucket, never the vocabulary.
//
// Speculative decoding needs the processed distribution itself: Probs writes
// it over the whole vocabulary.
//
// A Sampler reuses its scratch: Sample does not allocate in steady state and
// Result.Top is valid until the next call. A Sampler is not safe for
// concurrent use.
package sample
