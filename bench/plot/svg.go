package plot

import (
	"bufio"
	"fmt"
	"html"
	"image/color"
	"io"
)

// WriteSVG draws the chart of runs as an SVG document.
func WriteSVG(w io.Writer, runs ...Run) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif">`+"\n", width, height, width, height)
	fmt.Fprintf(bw, `<rect width="100%%" height="100%%" fill="%s"/>`+"\n", hex(white))
	if err := draw(&svgCanvas{w: bw}, runs); err != nil {
		return err
	}
	fmt.Fprintln(bw, "</svg>")
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("plot: writing svg: %w", err)
	}
	return nil
}

type svgCanvas struct{ w io.Writer }

func (s *svgCanvas) line(x1, y1, x2, y2 float64, c color.RGBA, width float64, dashed bool) {
	dash := ""
	if dashed {
		dash = ` stroke-dasharray="6 4"`
	}
	fmt.Fprintf(s.w, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="%g"%s/>`+"\n", x1, y1, x2, y2, hex(c), width, dash)
}

func (s *svgCanvas) text(x, y float64, str string, size float64, a anchor, c color.RGBA) {
	anchors := [...]string{anchorStart: "start", anchorMiddle: "middle", anchorEnd: "end"}
	fmt.Fprintf(s.w, `<text x="%.1f" y="%.1f" font-size="%g" text-anchor="%s" fill="%s">%s</text>`+"\n", x, y, size, anchors[a], hex(c), html.EscapeString(str))
}

func (s *svgCanvas) circle(x, y, r float64, c color.RGBA) {
	fmt.Fprintf(s.w, `<circle cx="%.1f" cy="%.1f" r="%g" fill="%s"/>`+"\n", x, y, r, hex(c))
}

func hex(c color.RGBA) string { return fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B) }
