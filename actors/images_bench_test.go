package actors

import (
	"testing"

	"github.com/splash-inference/splash/engine"
	"github.com/splash-inference/splash/model/hybridref"
)

// BenchmarkImageTTFT is an agent sending a conversation with a 448×448
// screenshot (28×28 patches of 16, 196 image tokens, through a 4-block
// tower 128 wide) to a hybrid model of Qwen3.5's head shapes
// (hybridref.Wide), answered with one token: cold (an image and a
// conversation never seen: the tower and the whole prompt run), image
// cached (the image seen in another conversation: its embeddings come
// from the image cache, the prompt runs), and resent (the same
// conversation plus one new token: the prefix cache resumes at its last
// state snapshot). The time per request is about its time to first token;
// compare the three. On a loaded 2-core VM (-benchtime 3x, one run): cold
// 536 ms, image cached 130 ms (0.24 of cold), resent 33 ms (0.062; the hit
// resumes at the snapshot at 192 of 242 tokens).
func BenchmarkImageTTFT(b *testing.B) {
	cfg := hybridref.Wide()
	cfg.Architecture = "Qwen3_5ForConditionalGeneration"
	v := hybridref.TinyVision(cfg.HiddenSize)
	v.Depth, v.HiddenSize, v.NumHeads, v.IntermediateSize, v.PatchSize, v.NumPositionEmbeddings = 4, 128, 2, 512, 16, 2304
	v.ImageTokenID, v.VisionStartTokenID, v.VisionEndTokenID = cfg.VocabSize-3, cfg.VocabSize-2, cfg.VocabSize-1
	cfg.Vision = v
	cfg.Hybrid.MRopeSection, cfg.Hybrid.MRopeInterleaved = []int{11, 11, 10}, true
	e, _, _ := tinyVLEngine(b, cfg)
	conversation := func(text, image uint64) ([]int32, []engine.Image) {
		p, im := imageRequest(v, 14, 14, image)
		for j := 4 + 1 + im.Tokens(); j < len(p); j++ {
			p[j] = int32((text*7919 + uint64(j)*31) % 80)
		}
		p = append(p, p[len(p)-40:]...) // 140 tokens of text after the image
		return p, []engine.Image{im}
	}
	first, firstImages := conversation(0, 0)
	seen := uint64(0) // conversations sent: each cold one is new
	for _, name := range []string{"cold", "image-cached", "resent"} {
		b.Run(name, func(b *testing.B) {
			generateImages(b, e, first, firstImages, 1) // cached: the first image, the conversation's snapshots
			b.ResetTimer()
			for i := range b.N {
				seen++
				p, images := conversation(seen, seen)
				switch name {
				case "image-cached":
					p, images = conversation(seen, 0)
				case "resent":
					p, images = first, firstImages
					p = append(p[:len(p):len(p)], int32(i%80))
				}
				p[0] = int32(10 + seen%70) // another conversation before the image, unless resent
				if name == "resent" {
					p[0] = first[0]
				}
				r := generateImages(b, e, p, images, 1)
				if (r.usage.CachedTokens > 0) != (name == "resent") {
					b.Fatalf("%d tokens cached", r.usage.CachedTokens)
				}
				b.ReportMetric(float64(r.usage.CachedTokens), "cached-tokens")
			}
		})
	}
}
