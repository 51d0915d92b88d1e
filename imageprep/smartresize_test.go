package imageprep

import "testing"

// The expected sizes are worked by hand from transformers' smart_resize
// (image_processing_qwen2_vl.py); the comments show the steps.
func TestSmartResize(t *testing.T) {
	const (
		q2Min, q2Max = 56 * 56, 28 * 28 * 1280 // Qwen2-VL defaults, factor 28
		q3Min, q3Max = 65536, 16777216         // Qwen3-VL/Qwen3.5 preprocessor_config.json, factor 32
	)
	tests := []struct {
		name                   string
		h, w, factor, min, max int
		wantH, wantW           int
	}{
		{"already a multiple", 224, 224, 28, q2Min, q2Max, 224, 224},
		// 42/28 = 1.5 and 70/28 = 2.5 both round half to even, to 2: 56×56 = min, kept.
		{"round half to even", 42, 70, 28, q2Min, q2Max, 56, 56},
		// round: 1092×1932 > max; β = √(1080·1920/1003520) = 1.4375; ⌊1080/β/28⌋ = 26, ⌊1920/β/28⌋ = 47.
		{"over max pixels", 1080, 1920, 28, q2Min, q2Max, 728, 1316},
		// round: 0×28 < min; β = √(3136/200) = 3.960; ⌈10β/28⌉ = 2, ⌈20β/28⌉ = 3.
		{"under min pixels", 10, 20, 28, q2Min, q2Max, 56, 84},
		// 33.75 rounds to 34, 60 stays: 1088×1920 within bounds.
		{"qwen3 1080p", 1080, 1920, 32, q3Min, q3Max, 1088, 1920},
		// 3×3 blocks < min; β = √(65536/10000) = 2.56; ⌈100β/32⌉ = 8.
		{"qwen3 small", 100, 100, 32, q3Min, q3Max, 256, 256},
		// 125 and 93.75 round to 125 and 94 blocks: 4000×3008, 12.0M pixels.
		{"qwen3 photo", 4000, 3000, 32, q3Min, q3Max, 4000, 3008},
		// 256² blocks = 64M > max; β = 2; ⌊8192/2/32⌋ = 128.
		{"qwen3 over max", 8192, 8192, 32, q3Min, q3Max, 4096, 4096},
		// 50/28 = 1.79 rounds to 2, 9000/28 = 321.4 to 321: 56×8988 within bounds.
		{"wide", 50, 9000, 28, q2Min, q2Max, 56, 8988},
		// round: 1×28 blocks = 32×896 < min; β = √(65536/33337) = 1.402; ⌈37β/32⌉ = 2, ⌈901β/32⌉ = 40.
		{"thin under min", 37, 901, 32, q3Min, q3Max, 64, 1280},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h, w, err := SmartResize(tc.h, tc.w, tc.factor, tc.min, tc.max)
			if err != nil {
				t.Fatal(err)
			}
			if h != tc.wantH || w != tc.wantW {
				t.Fatalf("SmartResize(%d, %d) = %d×%d, want %d×%d", tc.h, tc.w, h, w, tc.wantH, tc.wantW)
			}
		})
	}
}

func TestSmartResizeRefuses(t *testing.T) {
	tests := []struct {
		name                   string
		h, w, factor, min, max int
		kind                   Kind
	}{
		{"aspect over 200", 10, 2001, 28, 3136, 1003520, Unsupported},
		{"empty", 0, 10, 28, 3136, 1003520, Malformed},
		{"below a block without min pixels", 10, 10, 28, 0, 1003520, Unsupported},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := SmartResize(tc.h, tc.w, tc.factor, tc.min, tc.max)
			if KindOf(err) != tc.kind {
				t.Fatalf("error %v, want kind %v", err, tc.kind)
			}
		})
	}
}
