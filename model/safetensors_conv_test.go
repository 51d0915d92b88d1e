package model

import "testing"

// TestParseSafetensorsConv3d: a Conv3d kernel (out, in, frames, h, w) reads
// as out rows of in·frames·h·w, the layout of a patch's flattened pixels.
func TestParseSafetensorsConv3d(t *testing.T) {
	img := stImage(`{"patch":{"dtype":"BF16","shape":[4,3,2,2,2],"data_offsets":[0,192]}}`, 192)
	ts, bad, err := parseSafetensors(img, "x")
	if err != nil || len(bad) != 0 {
		t.Fatal(err, bad)
	}
	if p := ts["patch"]; p == nil || p.Rows != 4 || p.Cols != 24 || len(p.Data) != 192 {
		t.Fatalf("tensor patch = %+v, want 4×24", p)
	}
}
