package plot

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// WriteFile draws runs into path, as SVG or PNG by its extension.
func WriteFile(path string, runs ...Run) error {
	var write func(f *os.File) error
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".svg":
		write = func(f *os.File) error { return WriteSVG(f, runs...) }
	case ".png":
		write = func(f *os.File) error { return WritePNG(f, runs...) }
	default:
		return fmt.Errorf("plot: %s: unknown image type %q (want .svg or .png)", path, ext)
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	return nil
}
