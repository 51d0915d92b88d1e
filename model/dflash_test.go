package model

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/metal/cpu"
)

// dflashTarget is the dense target of the DFlash tests: four Qwen3 layers,
// so the draft reads two inner ones.
func dflashTarget() *Config {
	c := tinyConfig("Qwen3ForCausalLM", false)
	c.NumHiddenLayers = 4
	return c
}

// tinyDFlash is a small draft of kind k over target t.
func tinyDFlash(k DFlashKind, causal bool, t *Config) *DFlashConfig {
	dc := &DFlashConfig{
		Kind: k, TargetLayerIDs: []int{1, 2}, NumTargetLayers: t.NumHiddenLayers,
		MaskTokenID: t.VocabSize - 1, BlockSize: 5, Causal: causal,
		InputEmbeddingScale: 1, OutputMultiplier: 1,
		Layers: Config{
			Architecture: "DFlashDraftModel", HiddenSize: t.HiddenSize, IntermediateSize: 80, NumHiddenLayers: 2,
			NumAttentionHeads: 4, NumKeyValueHeads: 2, HeadDim: 16, VocabSize: t.VocabSize,
			RMSNormEps: 1e-6, RopeTheta: 10000, MaxPositionEmbeddings: 4096,
		},
	}
	if k == DFlash2 {
		dc.Layers.Architecture = "DFlash2DraftModel"
		dc.ConvTaps, dc.ConvGroupSize, dc.SelectorRank, dc.SelectorTopK = 3, 16, 8, 6
		dc.InputEmbeddingScale, dc.OutputMultiplier, dc.LogitSoftcap = 1.5, 0.8, 4
	}
	return dc
}

// dflashSeq is one sequence of the tests: its committed tokens, of which the
// last is the anchor, and its block table.
type dflashSeq struct {
	tokens []int32
	blocks []int32
}

// TestDFlashMatchesReference runs target and draft the way the engine
// will, on three sequences of different lengths in one batch: a prompt
// pass capturing features, the context added, a batched proposal; then a
// verify pass of each block, a different number of its tokens committed
// per sequence (the rest rolled back), the committed positions' features
// added and a second proposal from the new anchors. Every proposal must
// equal the float64 reference's run from scratch over the committed
// tokens, and the logits agree to 1e-4. The hybrid targets' run is
// TestDFlashHybridMatchesReference (package model_test, for hybridref).
func TestDFlashMatchesReference(t *testing.T) {
	be := cpu.New(2)
	defer be.Close()
	for _, tc := range []struct {
		name   string
		kind   DFlashKind
		causal bool
	}{
		{"dflash", DFlash, false},
		{"dflash-causal", DFlash, true},
		{"dflash2", DFlash2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tcfg := dflashTarget()
			target, tw := buildModel(t, tcfg, metal.F32, be)
			head := tw["lm_head.weight"]
			if tcfg.TieWordEmbeddings {
				head = tw["model.embed_tokens.weight"]
			}
			ref := DFlashTargetRef{Embed: tw["model.embed_tokens.weight"], Head: head, FeatureTol: 1e-5,
				Features: func(tokens []int32, layers []int) [][]float64 {
					_, feats := refForwardFeatures(tcfg, tw, true, tokens, kvExact, layers)
					return feats
				}}
			CheckDFlashReference(t, be, target, ref, tc.kind, tc.causal)
		})
	}
}

// DFlashTargetRef is what the DFlash reference needs of a target: its
// embeddings and head (float64, (vocab, hidden)), and its captured layers'
// outputs over a sequence from position 0, with the tolerance the
// target's own features meet against them.
type DFlashTargetRef struct {
	Embed, Head []float64
	Features    func(tokens []int32, layers []int) [][]float64
	FeatureTol  float64
}

// CheckDFlashReference is TestDFlashMatchesReference's run of a random
// draft of kind (causal or not) over target, against ref.
func CheckDFlashReference(t *testing.T, be metal.Backend, target Model, ref DFlashTargetRef, kind DFlashKind, causal bool) {
	t.Helper()
	tcfg := target.Config()
	dc := tinyDFlash(kind, causal, tcfg)
	dt, dw := randomDFlash(dc, tcfg.HiddenSize, 11)
	d, err := NewDFlashDraft(dc, dt, target, be)
	if err != nil {
		t.Fatal(err)
	}
	B := dc.BlockSize
	const blockSize, numBlocks = 4, 48
	tkv := NewCache(target, numBlocks, blockSize, 3, metal.KVF32) // a state model's sequences in slots 0, 1, 2
	dkv := d.NewKVCache(numBlocks, blockSize, metal.KVF32)
	perm := rand.New(rand.NewPCG(3, 4)).Perm(numBlocks)
	seqs := make([]dflashSeq, 3)
	for i, n := range []int{7, 12, 3} {
		seqs[i].tokens = randomTokens(n, tcfg.VocabSize-1, uint64(20+i))
		for _, b := range perm[i*16 : (i+1)*16] {
			seqs[i].blocks = append(seqs[i].blocks, int32(b))
		}
	}
	// prompt pass: every token but the anchor, features captured
	fc := &FeatureCapture{Layers: d.FeatureLayers()}
	var rows []Row
	for i, s := range seqs {
		rows = append(rows, Row{Start: 0, Tokens: s.tokens[:len(s.tokens)-1], Blocks: s.blocks, State: int32(i), Capture: true})
	}
	if _, err := target.Forward(&Batch{Rows: rows, Features: fc}, tkv); err != nil {
		t.Fatal(err)
	}
	var ctx []DFlashContext
	off := 0
	for i, s := range seqs {
		n := len(s.tokens) - 1
		ctx = append(ctx, DFlashContext{Start: 0, Features: fc.Out[off*d.FeatureWidth() : (off+n)*d.FeatureWidth()], Blocks: s.blocks})
		checkFeatures(t, ref, d, s.tokens[:n], ctx[i].Features)
		off += n
	}
	if err := d.AddContext(ctx, dkv); err != nil {
		t.Fatal(err)
	}
	for round := range 2 {
		proposals := proposeAndCheck(t, d, dkv, ref, dw, seqs)
		if round == 1 {
			break
		}
		// verify pass over [anchor, proposals], then commit a different
		// prefix per sequence plus a new anchor (the target's state or
		// cache past it is not used again)
		rows = rows[:0]
		for i, s := range seqs {
			blk := append([]int32{s.tokens[len(s.tokens)-1]}, proposals[i*(B-1):(i+1)*(B-1)]...)
			rows = append(rows, Row{Start: len(s.tokens) - 1, Tokens: blk, Blocks: s.blocks, State: int32(i), Logits: B, Capture: true})
		}
		if _, err := target.Forward(&Batch{Rows: rows, Features: fc}, tkv); err != nil {
			t.Fatal(err)
		}
		ctx = ctx[:0]
		for i := range seqs {
			accepted := []int{0, 2, B - 1}[i]
			s := &seqs[i]
			f := fc.Out[i*B*d.FeatureWidth() : (i*B+accepted+1)*d.FeatureWidth()]
			ctx = append(ctx, DFlashContext{Start: len(s.tokens) - 1, Features: f, Blocks: s.blocks})
			s.tokens = append(s.tokens, rows[i].Tokens[1:accepted+1]...)
			s.tokens = append(s.tokens, int32((7*i+5)%(tcfg.VocabSize-1)))
		}
		if err := d.AddContext(ctx, dkv); err != nil {
			t.Fatal(err)
		}
	}
}

// proposeAndCheck proposes for every sequence in one batch, compares each
// with the reference and with the sequence proposed alone in a fresh
// cache, and returns the batched proposals.
func proposeAndCheck(t *testing.T, d *DFlashDraft, dkv *metal.KVCache, ref DFlashTargetRef, dw refWeights, seqs []dflashSeq) []int32 {
	t.Helper()
	B := d.cfg.BlockSize
	var blocks []DFlashBlock
	for _, s := range seqs {
		blocks = append(blocks, DFlashBlock{Start: len(s.tokens) - 1, Anchor: s.tokens[len(s.tokens)-1], Blocks: s.blocks})
	}
	out := make([]int32, len(seqs)*(B-1))
	if err := d.Propose(blocks, dkv, out); err != nil {
		t.Fatal(err)
	}
	logits := append([]float32(nil), d.Logits()...)
	// fewer proposals per row: the same first ones, from the same logits
	V := d.target.cfg.VocabSize
	few := make([]int32, len(out))
	for i := range blocks {
		blocks[i].N = 1 + i%(B-1)
	}
	if err := d.Propose(blocks, dkv, few); err != nil {
		t.Fatal(err)
	}
	j := 0
	for i, b := range blocks {
		for l := range B - 1 {
			want := out[i*(B-1)+l]
			if l >= b.N {
				want = -1
			}
			if few[i*(B-1)+l] != want {
				t.Fatalf("%d proposals of row %d: %v, all of them %v", b.N, i, few[i*(B-1):(i+1)*(B-1)], out[i*(B-1):(i+1)*(B-1)])
			}
			if l < b.N {
				if !slices.Equal(d.Logits()[j*V:(j+1)*V], logits[(i*(B-1)+l)*V:(i*(B-1)+l+1)*V]) {
					t.Fatalf("row %d position %d: logits differ with %d proposals", i, l+1, b.N)
				}
				j++
			}
		}
	}
	for i, s := range seqs {
		n := len(s.tokens) - 1
		want := refDFlash(d.cfg, ref.Embed, ref.Head, dw, ref.Features(s.tokens[:n], d.FeatureLayers()), s.tokens[n])
		got := out[i*(B-1) : (i+1)*(B-1)]
		for j := range got {
			if got[j] != want.tokens[j] {
				t.Errorf("sequence %d at %d: proposed %v, the reference %v", i, n, got, want.tokens)
				break
			}
		}
		for j, w := range want.logits {
			row := (i*(B-1) + j) * V
			if e := relErr(logits[row:row+V], w); e > 1e-4 {
				t.Errorf("sequence %d at %d, masked position %d: logits' relative error %.3g > 1e-4", i, n, j+1, e)
			}
		}
	}
	return out
}

// checkFeatures compares captured features with the reference's.
func checkFeatures(t *testing.T, ref DFlashTargetRef, d *DFlashDraft, tokens []int32, got []float32) {
	t.Helper()
	want := ref.Features(tokens, d.FeatureLayers())
	w := d.FeatureWidth()
	for p := range want {
		if e := relErr(got[p*w:(p+1)*w], want[p]); e > ref.FeatureTol {
			t.Errorf("features at position %d: relative error %.3g > %g", p, e, ref.FeatureTol)
		}
	}
}

// randomDFlashOver is a random non-causal draft of kind over a random
// dflashTarget, with it and both's exact weights.
func randomDFlashOver(t *testing.T, be metal.Backend, kind DFlashKind) (d *DFlashDraft, target Model, tw, dw refWeights) {
	t.Helper()
	tcfg := dflashTarget()
	target, tw = buildModel(t, tcfg, metal.F32, be)
	dc := tinyDFlash(kind, false, tcfg)
	dt, dw := randomDFlash(dc, tcfg.HiddenSize, 5)
	d, err := NewDFlashDraft(dc, dt, target, be)
	if err != nil {
		t.Fatal(err)
	}
	return d, target, tw, dw
}

// TestDFlashBatchInvariant checks that a sequence's proposal and logits
// are bit-identical proposed alone (its own cache) and beside others.
func TestDFlashBatchInvariant(t *testing.T) {
	be := cpu.New(2)
	defer be.Close()
	for _, kind := range []DFlashKind{DFlash, DFlash2} {
		t.Run(string(kind), func(t *testing.T) {
			d, target, _, _ := randomDFlashOver(t, be, kind)
			dc, tcfg := d.cfg, target.Config()
			B, V := dc.BlockSize, tcfg.VocabSize
			lens := []int{9, 4, 14}
			// propose runs the sequences in idx in one batch, each on
			// blocks 16i…16i+15 of fresh caches, and returns proposals and
			// logits per sequence.
			propose := func(idx []int) ([][]int32, [][]float32) {
				tkv, dkv := target.NewKVCache(48, 4, metal.KVF16), d.NewKVCache(48, 4, metal.KVF16)
				fc := &FeatureCapture{Layers: d.FeatureLayers()}
				var rows []Row
				var blocks []DFlashBlock
				for _, i := range idx {
					bt := make([]int32, 16)
					for j := range bt {
						bt[j] = int32(16*i + j)
					}
					toks := randomTokens(lens[i], V-1, uint64(40+i))
					rows = append(rows, Row{Tokens: toks[:len(toks)-1], Blocks: bt, Capture: true})
					blocks = append(blocks, DFlashBlock{Start: len(toks) - 1, Anchor: toks[len(toks)-1], Blocks: bt})
				}
				if _, err := target.Forward(&Batch{Rows: rows, Features: fc}, tkv); err != nil {
					t.Fatal(err)
				}
				var ctx []DFlashContext
				off := 0
				for _, r := range rows {
					n := len(r.Tokens) * d.FeatureWidth()
					ctx = append(ctx, DFlashContext{Features: fc.Out[off : off+n], Blocks: r.Blocks})
					off += n
				}
				if err := d.AddContext(ctx, dkv); err != nil {
					t.Fatal(err)
				}
				out := make([]int32, len(idx)*(B-1))
				if err := d.Propose(blocks, dkv, out); err != nil {
					t.Fatal(err)
				}
				var toks [][]int32
				var logits [][]float32
				for j := range idx {
					toks = append(toks, out[j*(B-1):(j+1)*(B-1)])
					logits = append(logits, append([]float32(nil), d.Logits()[j*(B-1)*V:(j+1)*(B-1)*V]...))
				}
				return toks, logits
			}
			allToks, allLogits := propose([]int{0, 1, 2})
			for i := range lens {
				toks, logits := propose([]int{i})
				if !slices.Equal(toks[0], allToks[i]) {
					t.Errorf("sequence %d: alone %v, batched %v", i, toks[0], allToks[i])
				}
				if !slices.Equal(logits[0], allLogits[i]) {
					t.Errorf("sequence %d: logits differ alone and batched", i)
				}
			}
		})
	}
}

// TestFeatureCaptureLeavesLogits checks that capturing features changes no
// logit and captures only the rows that ask, in batch order.
func TestFeatureCaptureLeavesLogits(t *testing.T) {
	be := cpu.New(2)
	defer be.Close()
	cfg := dflashTarget()
	m, _ := buildModel(t, cfg, metal.F32, be)
	toks := randomTokens(10, cfg.VocabSize, 9)
	run := func(fc *FeatureCapture) []float32 {
		kv := m.NewKVCache(8, 4, metal.KVF16)
		b := &Batch{Rows: []Row{
			{Tokens: toks[:6], Blocks: []int32{0, 1}, Logits: 6},
			{Tokens: toks[:3], Blocks: []int32{2}, Logits: 3, Capture: true},
			{Tokens: toks[2:10], Blocks: []int32{3, 4}, Logits: 8, Capture: true},
		}, Features: fc}
		out, err := m.Forward(b, kv)
		if err != nil {
			t.Fatal(err)
		}
		return append([]float32(nil), out...)
	}
	plain := run(nil)
	fc := &FeatureCapture{Layers: []int{3, 0}}
	if got := run(fc); !slices.Equal(got, plain) {
		t.Fatal("logits differ with feature capture")
	}
	if fc.Rows() != 11 || len(fc.Out) != 11*2*cfg.HiddenSize {
		t.Fatalf("captured %d rows (%d floats), want 11 rows of 2 layers", fc.Rows(), len(fc.Out))
	}
	// the second row alone gives the same features as its place in the batch
	alone := &FeatureCapture{Layers: []int{3, 0}}
	kv := m.NewKVCache(8, 4, metal.KVF16)
	if _, err := m.Forward(&Batch{Rows: []Row{{Tokens: toks[2:10], Blocks: []int32{3, 4}, Capture: true}}, Features: alone}, kv); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(alone.Out, fc.Out[3*2*cfg.HiddenSize:]) {
		t.Error("a row's features differ alone and batched")
	}
	for _, bad := range [][]int{{4}, {-1}, {1, 1}, {}} {
		_, err := m.Forward(&Batch{Rows: []Row{{Tokens: toks[:2], Blocks: []int32{0}, Capture: true}}, Features: &FeatureCapture{Layers: bad}}, m.NewKVCache(2, 4, metal.KVF16))
		if err == nil {
			t.Errorf("capture of layers %v accepted", bad)
		}
	}
}

// TestDFlashCacheSpec: the draft declares its context cache as the layers
// NewKVCache allocates, and its scratch grows with the rows drafting, at
// least their logits and sampled distributions.
func TestDFlashCacheSpec(t *testing.T) {
	be := cpu.New(1)
	defer be.Close()
	for _, kind := range []DFlashKind{DFlash, DFlash2} {
		d, target, _, _ := randomDFlashOver(t, be, kind)
		dc, tcfg := d.cfg, target.Config()
		spec, kv := d.CacheSpec(), d.NewKVCache(2, 4, metal.KVF16)
		if spec.KVLayers() != len(kv.Layers) || spec.HasState() {
			t.Fatalf("%s: cache spec %+v for %d layers", kind, spec, len(kv.Layers))
		}
		for i, l := range spec.Layers {
			if l.KVHeads != kv.Layers[i].KVHeads || l.HeadDim != kv.Layers[i].HeadDim {
				t.Fatalf("%s layer %d: declared %+v, allocated %d heads of %d", kind, i, l, kv.Layers[i].KVHeads, kv.Layers[i].HeadDim)
			}
		}
		one := d.ScratchBytes(1)
		if d.ScratchBytes(3) != 3*one || one < 2*4*int64((dc.BlockSize-1)*tcfg.VocabSize) {
			t.Fatalf("%s: scratch %d for one row, %d for three", kind, one, d.ScratchBytes(3))
		}
	}
}

// TestDFlash2SampledWalkMatchesReference: a DFlash2 walk at a temperature
// draws each token among its position's candidates from the softmax of
// their scores over the temperature, given the token drawn before it: the
// probabilities Walk reports equal those of the float64 reference's score
// tensor at the drawn predecessor, and the first position's draws pass a
// chi-square test against them; a greedy row beside it walks as before.
func TestDFlash2SampledWalkMatchesReference(t *testing.T) {
	be := cpu.New(2)
	defer be.Close()
	d, target, tw, dw := randomDFlashOver(t, be, DFlash2)
	dc, tcfg := d.cfg, target.Config()
	B, K, V := dc.BlockSize, dc.SelectorTopK, tcfg.VocabSize
	tokens := randomTokens(9, V-1, 31)
	n := len(tokens) - 1
	fc := &FeatureCapture{Layers: d.FeatureLayers()}
	tkv, dkv := target.NewKVCache(8, 4, metal.KVF32), d.NewKVCache(8, 4, metal.KVF32)
	if _, err := target.Forward(&Batch{Rows: []Row{{Tokens: tokens[:n], Blocks: []int32{0, 1, 2, 3}, Capture: true}}, Features: fc}, tkv); err != nil {
		t.Fatal(err)
	}
	ctx := []DFlashContext{{Features: fc.Out, Blocks: []int32{0, 1, 2, 3}}, {Features: fc.Out, Blocks: []int32{4, 5, 6, 7}}}
	if err := d.AddContext(ctx, dkv); err != nil {
		t.Fatal(err)
	}
	_, feats := refForwardFeatures(tcfg, tw, true, tokens[:n], kvExact, d.FeatureLayers())
	head := tw["lm_head.weight"]
	if tcfg.TieWordEmbeddings {
		head = tw["model.embed_tokens.weight"]
	}
	ref := refDFlash(dc, tw["model.embed_tokens.weight"], head, dw, feats, tokens[n])
	const temp, trials = 8, 3000
	rng := rand.New(rand.NewPCG(17, 8))
	counts := make([]int, K)
	var firstProbs []float64
	for range trials {
		rows := []DFlashBlock{
			{Start: n, Anchor: tokens[n], Blocks: []int32{0, 1, 2, 3}, Temperature: temp, Rand: rng},
			{Start: n, Anchor: tokens[n], Blocks: []int32{4, 5, 6, 7}},
		}
		out := make([]int32, 2*(B-1))
		if err := d.Propose(rows, dkv, out); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(out[B-1:], ref.tokens) {
			t.Fatalf("the greedy row walked %v, the reference %v", out[B-1:], ref.tokens)
		}
		ids, probs := d.Walk()
		prev := 0 // the anchor's row of the score tensor
		for l := range B - 1 {
			want := make([]float64, K)
			total := 0.0
			for c, s := range ref.scores[l][prev] {
				want[c] = math.Exp(s / temp)
				total += want[c]
			}
			drawn := -1
			for c := range K {
				if int(ids[l*K+c]) != ref.cands[l][c] || math.Abs(float64(probs[l*K+c])-want[c]/total) > 1e-4 {
					t.Fatalf("position %d candidate %d: %d with probability %v, the reference %d with %v", l+1, c, ids[l*K+c], probs[l*K+c], ref.cands[l][c], want[c]/total)
				}
				if ids[l*K+c] == out[l] {
					drawn = c
				}
			}
			if drawn < 0 {
				t.Fatalf("position %d drew %d, not a candidate", l+1, out[l])
			}
			if l == 0 {
				counts[drawn]++
				if firstProbs == nil {
					for c := range K {
						firstProbs = append(firstProbs, want[c]/total)
					}
				}
			}
			prev = drawn
		}
	}
	chi := 0.0
	for c, n := range counts {
		e := firstProbs[c] * trials
		chi += (float64(n) - e) * (float64(n) - e) / e
	}
	t.Logf("first position's draws %v for probabilities %.3f: chi-square %.1f", counts, firstProbs, chi)
	if chi > 20.52 { // 99.9th percentile of chi-square with 5 degrees of freedom (6 candidates)
		t.Fatalf("first position's draws %v, expected %v·%d: chi-square %.1f", counts, firstProbs, trials, chi)
	}
}
