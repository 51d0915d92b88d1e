package engine

import (
	"slices"
	"strings"
	"testing"

	"github.com/splash-inference/splash/model"
)

// countingTower is an ImageTower that counts its encodings and returns
// embeddings of width fakeHidden, one row a merged 2×2 block.
type countingTower struct{ calls int }

const fakeHidden = 3

func (c *countingTower) Config() *model.VisionConfig {
	return &model.VisionConfig{SpatialMergeSize: 2, InChannels: 1, TemporalPatchSize: 1, PatchSize: 1, ImageTokenID: 13}
}

func (c *countingTower) Encode(patches []float32, gridH, gridW int) ([]float32, error) {
	c.calls++
	out := make([]float32, gridH*gridW/4*fakeHidden)
	for i := range out {
		out[i] = patches[0] + float32(i)
	}
	return out, nil
}

// imagePrompt is text, a vision start (14), 8 pad tokens (13) of a 2×4
// token grid, a vision end (12) and more text, with its image named hash.
func imagePrompt(head []int32, hash byte) ([]int32, Image) {
	p := slices.Concat(head, []int32{14}, slices.Repeat([]int32{13}, 8), []int32{12, 4, 5, 6})
	im := Image{Start: len(head) + 1, GridT: 1, GridH: 2, GridW: 4, Hash: [32]byte{hash}, Patches: make([]float32, 8*4)}
	im.Patches[0] = float32(hash)
	return p, im
}

// TestImagePrefixCache: a prompt resent with the same image hits the
// prefix cache up to its last token and does not run the tower; the same
// prompt with another image of the same size hits only the block before
// the image and runs it; the first image in another context misses the
// prefix cache but takes its embeddings from the image cache. Every row
// that feeds an image's tokens carries its embeddings.
func TestImagePrefixCache(t *testing.T) {
	h := newHarness(t, Config{BlockSize: 4, NumBlocks: 64, MaxBatchTokens: 32, MaxRunning: 4}, nil)
	tower := &countingTower{}
	cache := NewImageCache(tower, 1<<20)
	h.onPlan = func(p *Plan) {
		if err := p.EncodeImages(cache); err != nil {
			t.Fatal(err)
		}
		for _, r := range p.Batch().Rows {
			for _, s := range r.Images {
				if s.Start < r.Start+len(r.Tokens) && s.End() > r.Start && len(s.Embeds) != s.Tokens()*fakeHidden {
					t.Fatalf("row from %d: image at %d has %d embedding values", r.Start, s.Start, len(s.Embeds))
				}
			}
		}
	}
	first, im1 := imagePrompt([]int32{1, 2, 3}, 1)
	_, im2 := imagePrompt([]int32{1, 2, 3}, 2)
	other, im1b := imagePrompt([]int32{7, 8, 9, 10, 11}, 1)
	for _, tc := range []struct {
		id         uint64
		prompt     []int32
		image      Image
		cached     int
		towerCalls int
	}{
		{1, first, im1, 0, 1},
		{2, first, im1, len(first) - 1, 1}, // all but the last token, which is text
		{3, first, im2, 4, 2},              // the block of 1, 2, 3 and the vision start
		{4, other, im1b, 0, 2},             // the image cache's
	} {
		h.add(Request{ID: tc.id, Prompt: tc.prompt, MaxTokens: 2, Images: []Image{tc.image}}, greedy())
		h.run()
		if c := h.cached[tc.id]; len(c) == 0 || c[0] != tc.cached {
			t.Errorf("request %d: %v cached tokens, want %d", tc.id, c, tc.cached)
		}
		if tower.calls != tc.towerCalls {
			t.Errorf("after request %d the tower ran %d times, want %d", tc.id, tower.calls, tc.towerCalls)
		}
	}
	if st := cache.Stats(); st.Hits != 1 || st.Encoded != 2 || st.Images != 2 {
		t.Errorf("image cache %+v, want 1 hit, 2 encoded, 2 held", st)
	}
}

// TestImagesThroughChunks: a prompt whose image the token budget cuts
// into several prefill chunks gives each chunk's row the embeddings of
// the image it feeds, and the rows after the image none (the cache keeps
// them).
func TestImagesThroughChunks(t *testing.T) {
	h := newHarness(t, Config{BlockSize: 4, NumBlocks: 64, MaxBatchTokens: 3, MaxRunning: 1}, nil)
	cache := NewImageCache(&countingTower{}, 1<<20)
	prompt, im := imagePrompt([]int32{1, 2, 3}, 5)
	var starts []int
	h.onPlan = func(p *Plan) {
		if err := p.EncodeImages(cache); err != nil {
			t.Fatal(err)
		}
		r := p.Batch().Rows[0]
		s := r.Images[0]
		feeds := s.Start < r.Start+len(r.Tokens) && s.End() > r.Start
		if feeds != (s.Embeds != nil) {
			t.Fatalf("row %d..%d: embeddings %v for the image at %d..%d", r.Start, r.Start+len(r.Tokens), s.Embeds != nil, s.Start, s.End())
		}
		starts = append(starts, r.Start)
	}
	h.add(Request{ID: 1, Prompt: prompt, MaxTokens: 1, Images: []Image{im}}, greedy())
	h.run()
	if len(starts) < 4 {
		t.Fatalf("the prompt ran in %d chunks (%v), want the image cut", len(starts), starts)
	}
}

// TestImageCacheLRU: the cache keeps the most recently used images
// within its bytes and encodes an evicted one again.
func TestImageCacheLRU(t *testing.T) {
	tower := &countingTower{}
	one := int64(2 * fakeHidden * 4) // a 2-token image's bytes
	cache := NewImageCache(tower, 2*one)
	img := func(b byte) *Image {
		return &Image{GridT: 1, GridH: 1, GridW: 2, Hash: [32]byte{b}, Patches: make([]float32, 8)}
	}
	for i, tc := range []struct {
		hash  byte
		calls int
	}{{'a', 1}, {'b', 2}, {'a', 2}, {'c', 3}, {'a', 3}, {'b', 4}} { // c evicts b, the least recent
		if _, err := cache.Embeddings(img(tc.hash)); err != nil {
			t.Fatal(err)
		}
		if tower.calls != tc.calls {
			t.Fatalf("lookup %d (%c): %d encodings, want %d", i, tc.hash, tower.calls, tc.calls)
		}
	}
	if st := cache.Stats(); st.Images != 2 || st.Bytes != 2*one {
		t.Errorf("cache holds %+v, want 2 images of %d bytes", st, 2*one)
	}
}

// TestCheckImages: images a prompt cannot hold are refused by Add, and
// those the model cannot read by CheckImages, each naming the fault.
func TestCheckImages(t *testing.T) {
	v := (&countingTower{}).Config()
	prompt, good := imagePrompt([]int32{1, 2}, 1)
	edit := func(f func(im *Image)) []Image {
		im := good
		f(&im)
		return []Image{im}
	}
	for _, tc := range []struct {
		name   string
		images []Image
		add    bool // Add refuses it too
		want   string
	}{
		{"past the prompt", edit(func(im *Image) { im.Start = len(prompt) - 4 }), true, "run past the prompt"},
		{"empty grid", edit(func(im *Image) { im.GridW = 0 }), true, "grid"},
		{"overlapping", []Image{good, good}, true, "before the previous image's end"},
		{"no pixels", edit(func(im *Image) { im.Patches = nil }), true, "neither patches nor embeddings"},
		{"not pad", edit(func(im *Image) { im.Start-- }), false, "not the image pad token 13"},
		{"short patches", edit(func(im *Image) { im.Patches = im.Patches[1:] }), false, "patch values"},
		{"embeddings of another width", edit(func(im *Image) { im.Embeds = make([]float32, 8) }), false, "embedding values"},
		{"video", edit(func(im *Image) { im.GridT, im.GridH = 2, 1 }), false, "still images"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckImages(prompt, tc.images, v, fakeHidden)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("CheckImages: %v, want an error saying %q", err, tc.want)
			}
			s, err := New(Config{BlockSize: 4, NumBlocks: 8, MaxBatchTokens: 8, MaxRunning: 1}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Add(Request{ID: 1, Prompt: prompt, Images: tc.images}); (err != nil) != tc.add {
				t.Fatalf("Add: %v, want refused %v", err, tc.add)
			}
		})
	}
	if err := CheckImages(prompt, []Image{good}, v, fakeHidden); err != nil {
		t.Fatal(err)
	}
	if err := CheckImages(prompt, []Image{good}, nil, fakeHidden); err == nil {
		t.Fatal("images accepted by a model without a tower")
	}
}

// TestHashPatches: equal patches and grids hash alike; a changed value or
// a grid of the same values in another shape does not.
func TestHashPatches(t *testing.T) {
	p := make([]float32, 5000) // past one buffer's worth
	for i := range p {
		p[i] = float32(i) / 7
	}
	base := HashPatches(p, 1, 4, 8)
	q := slices.Clone(p)
	if HashPatches(q, 1, 4, 8) != base {
		t.Fatal("equal patches hash differently")
	}
	q[4999]++
	for name, h := range map[string][32]byte{"last value": HashPatches(q, 1, 4, 8), "grid": HashPatches(p, 1, 8, 4)} {
		if h == base {
			t.Errorf("another %s hashes alike", name)
		}
	}
}

// TestNextTurnWithImage: with WarmAnswers a finished request's answer is
// warmed with its image, so a next turn sending the same image, the
// answer and a new message resumes at the answer's last chunk boundary;
// the same turn with another image of the same size resumes at none.
func TestNextTurnWithImage(t *testing.T) {
	h := newHarness(t, Config{BlockSize: 4, NumBlocks: 64, MaxBatchTokens: 32, MaxRunning: 4, StateSlots: 2,
		StateChunk: 4, StateShortRows: 6, StateSnapshots: 8, StateSnapshotEvery: 16, WarmAnswers: true}, nil)
	cache := NewImageCache(&countingTower{}, 1<<20)
	h.onPlan = func(p *Plan) {
		if err := p.EncodeImages(cache); err != nil {
			t.Fatal(err)
		}
	}
	p, im := imagePrompt([]int32{1, 2, 3}, 1) // 16 tokens
	_, other := imagePrompt([]int32{1, 2, 3}, 2)
	first := Request{ID: 1, Prompt: p, MaxTokens: 13, Images: []Image{im}} // 29 tokens: the answer warms to 28
	h.add(first, greedy())
	h.run()
	turn := slices.Concat(p, h.out[first.ID], []int32{5, 6, 7})
	for i, tc := range []struct {
		image Image
		hit   int
	}{{im, 28}, {other, 0}} {
		id := uint64(2 + i)
		h.add(Request{ID: id, Prompt: turn, MaxTokens: 2, Images: []Image{tc.image}}, greedy())
		h.run()
		if got := h.cached[id]; len(got) == 0 || got[0] != tc.hit {
			t.Errorf("next turn %d: cached %v, want %d", i, got, tc.hit)
		}
	}
}
