package imageprep

import (
	"image"
	"image/color"
	"slices"
	"testing"
)

// TestFromImage: an in-memory image converts pixel by pixel, from its
// bounds' origin, transparent pixels over white.
func TestFromImage(t *testing.T) {
	m := image.NewRGBA(image.Rect(5, 7, 7, 8)) // 2×1, not at the origin
	m.SetRGBA(5, 7, color.RGBA{10, 20, 30, 255})
	m.SetRGBA(6, 7, color.RGBA{0, 0, 0, 0})
	got := FromImage(m)
	if want := []uint8{10, 20, 30, 255, 255, 255}; got.Width != 2 || got.Height != 1 || !slices.Equal(got.Pix, want) {
		t.Errorf("FromImage = %d×%d %v, want 2×1 %v", got.Width, got.Height, got.Pix, want)
	}
}
