package imageprep

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"os"
	"runtime"
	"testing"
)

func encodePNG(t testing.TB, m image.Image) []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, m); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// halves returns a w×h image, its left half left and its right half right.
func halves(w, h int, left, right color.NRGBA) *image.NRGBA {
	m := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			c := left
			if x >= w/2 {
				c = right
			}
			m.SetNRGBA(x, y, c)
		}
	}
	return m
}

// pngHeader is a PNG signature and an IHDR chunk declaring w×h 8-bit RGB,
// with no image data.
func pngHeader(w, h uint32) []byte {
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr, w)
	binary.BigEndian.PutUint32(ihdr[4:], h)
	ihdr[8], ihdr[9] = 8, 2 // bit depth, colour type RGB
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	_ = binary.Write(&b, binary.BigEndian, uint32(len(ihdr)))
	chunk := append([]byte("IHDR"), ihdr...)
	b.Write(chunk)
	_ = binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(chunk))
	return b.Bytes()
}

// TestDecodeRefusesBombWithoutAllocating: a PNG header claiming
// 100,000×100,000 pixels is refused from the header, allocating almost
// nothing (a decode would take 40 GB).
func TestDecodeRefusesBombWithoutAllocating(t *testing.T) {
	bomb := pngHeader(100_000, 100_000)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := Decode(bomb, DefaultLimits())
	runtime.ReadMemStats(&after)
	if KindOf(err) != TooLarge {
		t.Fatalf("error %v, want kind %v", err, TooLarge)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Fatalf("refusing the bomb allocated %d bytes", n)
	}
}

func TestDecodeRefuses(t *testing.T) {
	valid := encodePNG(t, image.NewGray(image.Rect(0, 0, 8, 8)))
	lim := DefaultLimits()
	tests := []struct {
		name string
		data []byte
		lim  Limits
		kind Kind
	}{
		{"empty", nil, lim, Malformed},
		{"unknown format", []byte("BM\x00\x00 a bitmap"), lim, Unsupported},
		{"too many bytes", valid, Limits{MaxBytes: 10, MaxDecodePixels: 1 << 20, MaxPixels: 1 << 20}, TooLarge},
		{"too many pixels", valid, Limits{MaxBytes: 1 << 20, MaxDecodePixels: 63, MaxPixels: 1 << 20}, TooLarge},
		{"truncated PNG", valid[:len(valid)-20], lim, Truncated},
		{"header only PNG", pngHeader(8, 8), lim, Truncated},
		{"zero-width PNG", pngHeader(0, 8), lim, Malformed},
		{"corrupt JPEG", []byte("\xff\xd8\xff\xdb\x00\x03\x55\xff\xd9"), lim, Malformed},
		{"truncated GIF", []byte("GIF89a\x08\x00"), lim, Truncated},
		{"corrupt WebP", []byte("RIFF\x10\x00\x00\x00WEBPVP8 \x04\x00\x00\x00abcd"), lim, Malformed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			img, err := Decode(tc.data, tc.lim)
			if KindOf(err) != tc.kind {
				t.Fatalf("Decode = %v, %v; want kind %v", img, err, tc.kind)
			}
		})
	}
}

func TestDecodeFormats(t *testing.T) {
	// A 4×2 image: left half opaque red, right half blue at alpha 0x80.
	m := halves(4, 2, color.NRGBA{255, 0, 0, 255}, color.NRGBA{0, 0, 255, 0x80})
	var jpg, gf bytes.Buffer
	if err := jpeg.Encode(&jpg, m, &jpeg.Options{Quality: 100}); err != nil {
		t.Fatal(err)
	}
	pal := image.NewPaletted(m.Bounds(), color.Palette{color.RGBA{255, 0, 0, 255}, color.RGBA{0, 0, 255, 255}})
	for y := range 2 {
		for x := range 4 {
			pal.SetColorIndex(x, y, uint8(x/2))
		}
	}
	if err := gif.Encode(&gf, pal, nil); err != nil {
		t.Fatal(err)
	}
	lossless, err := os.ReadFile("testdata/gopher-doc.1bpp.lossless.webp")
	if err != nil {
		t.Fatal(err)
	}
	lossy, err := os.ReadFile("testdata/blue-purple-pink.lossy.webp")
	if err != nil {
		t.Fatal(err)
	}
	// Blue at alpha 128 over white, Pillow's rounding:
	// (255·(255−128)·128 + 0x80·128 + 255·... ) → 127 for red and green.
	blendedWhite := overWhite(0, 0x80)
	tests := []struct {
		name        string
		data        []byte
		w, h        int
		left, right [3]uint8 // pixel (0,0) and (3,0), when exact
		exact       bool
	}{
		{"PNG with alpha", encodePNG(t, m), 4, 2, [3]uint8{255, 0, 0}, [3]uint8{blendedWhite, blendedWhite, 255}, true},
		{"GIF", gf.Bytes(), 4, 2, [3]uint8{255, 0, 0}, [3]uint8{0, 0, 255}, true},
		{"JPEG", jpg.Bytes(), 4, 2, [3]uint8{}, [3]uint8{}, false},
		{"WebP lossless", lossless, 0, 0, [3]uint8{}, [3]uint8{}, false},
		{"WebP lossy", lossy, 0, 0, [3]uint8{}, [3]uint8{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			img, err := Decode(tc.data, DefaultLimits())
			if err != nil {
				t.Fatal(err)
			}
			if len(img.Pix) != 3*img.Width*img.Height || img.Width == 0 {
				t.Fatalf("%dx%d image with %d bytes", img.Width, img.Height, len(img.Pix))
			}
			if tc.w != 0 && (img.Width != tc.w || img.Height != tc.h) {
				t.Fatalf("size %dx%d, want %dx%d", img.Width, img.Height, tc.w, tc.h)
			}
			if tc.exact {
				if got := [3]uint8(img.Pix[0:3]); got != tc.left {
					t.Errorf("pixel (0,0) = %v, want %v", got, tc.left)
				}
				if got := [3]uint8(img.Pix[9:12]); got != tc.right {
					t.Errorf("pixel (3,0) = %v, want %v", got, tc.right)
				}
			}
		})
	}
}

func TestOverWhite(t *testing.T) {
	tests := []struct{ c, a, want uint8 }{
		{0, 0, 255}, {37, 0, 255}, {37, 255, 37}, {0, 255, 0},
		// 0·128·128 + 255·127·128 + 128·128 = 4,161,664; (x>>8 + x)>>8 = 16,320; >>7 = 127.
		{0, 128, 127},
		// 200·64·128 + 255·191·128 + 16384 = 7,888,064; (x>>8 + x)>>8 = 30,932; >>7 = 241.
		{200, 64, 241},
	}
	for _, tc := range tests {
		if got := overWhite(tc.c, tc.a); got != tc.want {
			t.Errorf("overWhite(%d, %d) = %d, want %d", tc.c, tc.a, got, tc.want)
		}
	}
}

func TestDecodeFitsMaxPixels(t *testing.T) {
	m := image.NewGray(image.Rect(0, 0, 300, 100))
	lim := Limits{MaxBytes: 1 << 20, MaxDecodePixels: 1 << 20, MaxPixels: 3000}
	img, err := Decode(encodePNG(t, m), lim)
	if err != nil {
		t.Fatal(err)
	}
	// s = √(3000/30000) = 0.3162: 94.87×31.62 → 94×31.
	if img.Width != 94 || img.Height != 31 {
		t.Fatalf("fitted to %dx%d, want 94x31", img.Width, img.Height)
	}
}

// FuzzDecode: no input makes Decode panic, exceed its limits or return
// an error that is not an *Error.
func FuzzDecode(f *testing.F) {
	f.Add(encodePNG(f, image.NewRGBA(image.Rect(0, 0, 3, 2))))
	f.Add(pngHeader(100_000, 100_000))
	f.Add([]byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;"))
	f.Add([]byte("\xff\xd8\xff\xe1\x00\x0eExif\x00\x00MM\x00*"))
	for _, name := range []string{"gopher-doc.1bpp.lossless.webp", "colourful-alpha.webp", "colourful-420.jpg"} {
		if b, err := os.ReadFile("testdata/" + name); err == nil {
			f.Add(b)
		}
	}
	lim := Limits{MaxBytes: 1 << 16, MaxDecodePixels: 1 << 16, MaxPixels: 1 << 12}
	f.Fuzz(func(t *testing.T, data []byte) {
		img, err := Decode(data, lim)
		if err != nil {
			if KindOf(err) == 0 {
				t.Fatalf("error %v is not an *Error", err)
			}
			return
		}
		if img.Width*img.Height > lim.MaxPixels || len(img.Pix) != 3*img.Width*img.Height {
			t.Fatalf("%dx%d image, %d bytes", img.Width, img.Height, len(img.Pix))
		}
	})
}
