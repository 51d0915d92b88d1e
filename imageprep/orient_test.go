package imageprep

import (
	"bytes"
	"encoding/binary"
	"image/color"
	"image/jpeg"
	"testing"
)

// TestOrient: a 3×2 image whose pixels are numbered
//
//	1 2 3
//	4 5 6
//
// as displayed under each EXIF orientation.
func TestOrient(t *testing.T) {
	img := &RGB{Width: 3, Height: 2}
	for i := range 6 {
		img.Pix = append(img.Pix, uint8(i+1), 0, 0)
	}
	tests := []struct {
		o    int
		w, h int
		want []uint8
	}{
		{1, 3, 2, []uint8{1, 2, 3, 4, 5, 6}},
		{2, 3, 2, []uint8{3, 2, 1, 6, 5, 4}},
		{3, 3, 2, []uint8{6, 5, 4, 3, 2, 1}},
		{4, 3, 2, []uint8{4, 5, 6, 1, 2, 3}},
		{5, 2, 3, []uint8{1, 4, 2, 5, 3, 6}},
		{6, 2, 3, []uint8{4, 1, 5, 2, 6, 3}}, // rotated 90° clockwise
		{7, 2, 3, []uint8{6, 3, 5, 2, 4, 1}},
		{8, 2, 3, []uint8{3, 6, 2, 5, 1, 4}}, // rotated 90° counter-clockwise
	}
	for _, tc := range tests {
		out := orient(img, tc.o)
		var got []uint8
		for i := 0; i < len(out.Pix); i += 3 {
			got = append(got, out.Pix[i])
		}
		if out.Width != tc.w || out.Height != tc.h || !bytes.Equal(got, tc.want) {
			t.Errorf("orientation %d: %dx%d %v, want %dx%d %v", tc.o, out.Width, out.Height, got, tc.w, tc.h, tc.want)
		}
	}
}

// withOrientation inserts an APP1 EXIF segment holding Orientation o into
// a JPEG, in byte order bo.
func withOrientation(jpg []byte, o uint16, bo binary.ByteOrder) []byte {
	var tiff bytes.Buffer
	if bo == binary.ByteOrder(binary.LittleEndian) {
		tiff.WriteString("II")
	} else {
		tiff.WriteString("MM")
	}
	w := func(v any) { _ = binary.Write(&tiff, bo, v) }
	w(uint16(42))
	w(uint32(8))      // IFD0 offset
	w(uint16(2))      // entries
	w(uint16(0x010f)) // Make, ASCII, skipped
	w(uint16(2))
	w(uint32(4))
	w([4]byte{'a', 'b', 'c', 0})
	w(uint16(0x0112)) // Orientation, SHORT
	w(uint16(3))
	w(uint32(1))
	w(o)
	w(uint16(0))
	w(uint32(0)) // next IFD
	seg := append([]byte("Exif\x00\x00"), tiff.Bytes()...)
	var out bytes.Buffer
	out.Write(jpg[:2])
	out.Write([]byte{0xff, 0xe1})
	_ = binary.Write(&out, binary.BigEndian, uint16(len(seg)+2))
	out.Write(seg)
	out.Write(jpg[2:])
	return out.Bytes()
}

func TestDecodeAppliesEXIFOrientation(t *testing.T) {
	// 32×16: left half red, right half blue.
	m := halves(32, 16, color.NRGBA{255, 0, 0, 255}, color.NRGBA{0, 0, 255, 255})
	var b bytes.Buffer
	if err := jpeg.Encode(&b, m, &jpeg.Options{Quality: 95}); err != nil {
		t.Fatal(err)
	}
	for _, bo := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		data := withOrientation(b.Bytes(), 6, bo)
		if o := exifOrientation(data); o != 6 {
			t.Fatalf("%v: orientation %d, want 6", bo, o)
		}
		img, err := Decode(data, DefaultLimits())
		if err != nil {
			t.Fatal(err)
		}
		// Rotated clockwise: 16 wide, 32 tall, the red half on top.
		if img.Width != 16 || img.Height != 32 {
			t.Fatalf("%v: %dx%d, want 16x32", bo, img.Width, img.Height)
		}
		top, bottom := img.Pix[3*(4*16+8):], img.Pix[3*(28*16+8):]
		if top[0] < 200 || top[2] > 60 || bottom[2] < 200 || bottom[0] > 60 {
			t.Fatalf("%v: top pixel %v, bottom %v: want red above blue", bo, top[:3], bottom[:3])
		}
	}
	if o := exifOrientation(b.Bytes()); o != 1 {
		t.Fatalf("no EXIF: orientation %d, want 1", o)
	}
}
