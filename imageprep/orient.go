package imageprep

import "encoding/binary"

// exifOrientation returns the EXIF Orientation tag (0x0112, 1 to 8) of a
// JPEG's APP1 "Exif" segment, or 1 when there is none or it cannot be read:
// a broken EXIF block never refuses an image. Layout: JPEG markers
// (ITU T.81 B.1), then a TIFF header and IFD0 (EXIF 2.32, 4.5–4.6).
func exifOrientation(jpeg []byte) int {
	p := 2 // after SOI
	for p+4 <= len(jpeg) {
		if jpeg[p] != 0xff {
			return 1
		}
		marker := jpeg[p+1]
		if marker == 0xff { // fill byte
			p++
			continue
		}
		if marker == 0xda || marker == 0xd9 { // start of scan, end of image
			return 1
		}
		n := int(binary.BigEndian.Uint16(jpeg[p+2:]))
		if n < 2 || p+2+n > len(jpeg) {
			return 1
		}
		seg := jpeg[p+4 : p+2+n]
		if marker == 0xe1 && len(seg) >= 6 && string(seg[:6]) == "Exif\x00\x00" {
			return tiffOrientation(seg[6:])
		}
		p += 2 + n
	}
	return 1
}

// tiffOrientation reads the Orientation entry of IFD0 of a TIFF block.
func tiffOrientation(t []byte) int {
	if len(t) < 8 {
		return 1
	}
	var bo binary.ByteOrder
	switch string(t[:2]) {
	case "II":
		bo = binary.LittleEndian
	case "MM":
		bo = binary.BigEndian
	default:
		return 1
	}
	if bo.Uint16(t[2:]) != 42 {
		return 1
	}
	ifd := int64(bo.Uint32(t[4:]))
	if ifd+2 > int64(len(t)) {
		return 1
	}
	n := int64(bo.Uint16(t[ifd:]))
	for i := int64(0); i < n; i++ {
		e := ifd + 2 + 12*i
		if e+12 > int64(len(t)) {
			return 1
		}
		const orientationTag, typeShort = 0x0112, 3
		if bo.Uint16(t[e:]) == orientationTag && bo.Uint16(t[e+2:]) == typeShort {
			if o := int(bo.Uint16(t[e+8:])); o >= 1 && o <= 8 {
				return o
			}
			return 1
		}
	}
	return 1
}

// orient returns img as displayed under EXIF orientation o, the transform
// Pillow's ImageOps.exif_transpose applies: 2 mirror left-right, 3 rotate
// 180°, 4 mirror top-bottom, 5 transpose, 6 rotate 90° clockwise,
// 7 transverse, 8 rotate 90° counter-clockwise.
func orient(img *RGB, o int) *RGB {
	if o <= 1 || o > 8 {
		return img
	}
	w, h := img.Width, img.Height
	ow, oh := w, h
	if o >= 5 {
		ow, oh = h, w
	}
	// source returns the input pixel shown at output (x, y).
	source := func(x, y int) (int, int) {
		switch o {
		case 2:
			return w - 1 - x, y
		case 3:
			return w - 1 - x, h - 1 - y
		case 4:
			return x, h - 1 - y
		case 5:
			return y, x
		case 6:
			return y, h - 1 - x
		case 7:
			return w - 1 - y, h - 1 - x
		default: // 8
			return w - 1 - y, x
		}
	}
	out := NewRGB(ow, oh)
	for y := range oh {
		for x := range ow {
			sx, sy := source(x, y)
			copy(out.Pix[3*(y*ow+x):3*(y*ow+x)+3], img.Pix[3*(sy*w+sx):])
		}
	}
	return out
}
