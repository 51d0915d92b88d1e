// Package spec holds the pieces of speculative decoding that do not depend
// on the scheduler: proposers, acceptance rules and the adaptive draft length.
//
// A step of speculative decoding: a proposer guesses k tokens that follow a
// sequence; the target model evaluates the last accepted token plus the k
// guesses in one row of a batch, giving k+1 logit vectors; an acceptance
// rule keeps a prefix of the guesses and adds one token of the target's own,
// so every step yields between 1 and k+1 tokens; the KV positions of the
// rejected guesses are rolled back.
//
// Proposers:
//
//   - Ngram (prompt lookup) finds the most recent earlier occurrence of the
//     sequence's last n tokens, n from MaxN down to MinN, and proposes the
//     tokens that followed it. It costs no model and shines on code edits,
//     quoting and repetitive output.
//   - DraftModel runs a small model greedily, with its own paged KV cache
//     (and prefix sharing) that is rolled back to the accepted tokens before
//     each proposal; all sequences draft in one batch per position.
//   - Hybrid picks, per sequence, n-gram lookup or the draft model by their
//     observed acceptance, trying the free lookup first.
//   - DFlash runs a block-diffusion draft (model.DFlashDraft): one batched
//     pass proposes a whole block per sequence, conditioned on the target's
//     hidden states (FeatureSink), greedily, or for a sampling sequence
//     (Want.Sampling) drawn from the draft's distribution, reported in
//     Want.Probs for rejection sampling.
//
// Proposers take a batch of Wants; Observer and Releaser are the optional
// feedback (verification outcomes, finished sequences) they learn from.
//
// Acceptance:
//
//   - AcceptGreedy, for temperature 0: keep the longest prefix of guesses
//     equal to the target's arg max at each position, then the target's arg
//     max after it. Output equals non-speculative greedy decoding exactly.
//   - AcceptSample, for temperature > 0: the rejection sampling of Leviathan
//     et al. (2023): accept guess x with probability min(1, p(x)/q(x)); on the
//     first rejection draw from norm(max(0, p − q)); if all k are accepted draw
//     a bonus token from p. The output is distributed exactly as sampling from
//     the target p alone. A deterministic proposer (n-gram, greedy draft) is
//     the case q = one-hot(x), exact too but accepting less than the
//     draft's own q would.
//
// Draft length: AdaptiveK keeps per-sequence estimates of the acceptance
// rate at each draft depth and picks the k with the most expected tokens
// per unit of cost, 0 (no proposal at all, so a draft model does not run)
// when no k pays, with rare probes to notice text turning predictable.
// StepCost learns the cost from timed steps: how much one more verified
// token adds to a step, relative to a row's share of it. So the same draft
// is verified deeply on one stream and barely at 16 rows, where an extra
// token costs nearly as much as another row.
package spec
