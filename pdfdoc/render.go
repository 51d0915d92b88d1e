package pdfdoc

import (
	"image"
	"math"

	"github.com/klippa-app/go-pdfium/requests"
)

// renderDPI is the finest a page is rendered at: body text stays legible,
// and a Letter or A4 page comes to about two megapixels.
const renderDPI = 150

// renderSize fits a page of w×h points (1/72 inch) into maxPixels, at most
// renderDPI, keeping its aspect ratio; each side is at least one pixel.
func renderSize(w, h float64, maxPixels int) (int, int) {
	if !(w > 0 && h > 0) || maxPixels <= 0 {
		return 1, 1
	}
	scale := min(renderDPI/72.0, math.Sqrt(float64(maxPixels)/(w*h)))
	pw, ph := max(1, int(w*scale)), max(1, int(h*scale))
	// A page thousands of times longer than wide still keeps within the cap.
	for pw*ph > maxPixels {
		if pw > ph {
			pw--
		} else {
			ph--
		}
	}
	return pw, ph
}

// render draws a page into a new image within the reader's pixel cap.
func (r *reader) render(page requests.Page) (*image.RGBA, error) {
	w, err := r.inst.FPDF_GetPageWidthF(&requests.FPDF_GetPageWidthF{Page: page})
	if err != nil {
		return nil, err
	}
	h, err := r.inst.FPDF_GetPageHeightF(&requests.FPDF_GetPageHeightF{Page: page})
	if err != nil {
		return nil, err
	}
	pw, ph := renderSize(float64(w.PageWidth), float64(h.PageHeight), r.lim.RenderPixels)
	res, err := r.inst.RenderPageInPixels(&requests.RenderPageInPixels{Page: page, Width: pw, Height: ph})
	if err != nil {
		return nil, err
	}
	defer res.Cleanup() // the pixels live in the instance's memory until then
	src := res.Result.Image
	out := image.NewRGBA(image.Rect(0, 0, src.Rect.Dx(), src.Rect.Dy()))
	for y := range out.Rect.Dy() {
		copy(out.Pix[y*out.Stride:(y+1)*out.Stride], src.Pix[y*src.Stride:])
	}
	return out, nil
}
