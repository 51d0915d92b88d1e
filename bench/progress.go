package bench

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// ProgressBar draws a one-line progress bar for a run on a terminal,
// redrawing it in place with a carriage return at most every Interval.
type ProgressBar struct {
	w        io.Writer
	interval time.Duration

	mu       sync.Mutex // guards the fields below
	last     time.Time
	lastStep int
	drawn    bool
}

// NewProgressBar returns a bar that writes to w.
func NewProgressBar(w io.Writer) *ProgressBar {
	return &ProgressBar{w: w, interval: 100 * time.Millisecond, lastStep: -1}
}

const barWidth = 30

// Update draws p; pass it as Config.Progress.
func (b *ProgressBar) Update(p Progress) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	newStep := p.StepIndex != b.lastStep
	finished := p.Requests > 0 && p.Done >= p.Requests
	if !newStep && !finished && now.Sub(b.last) < b.interval {
		return
	}
	if newStep && b.drawn {
		fmt.Fprintln(b.w)
	}
	b.last, b.lastStep, b.drawn = now, p.StepIndex, true

	frac := 0.0
	if p.Requests > 0 {
		frac = float64(p.Done) / float64(p.Requests)
	}
	if p.Duration > 0 {
		frac = max(frac, float64(p.Elapsed)/float64(p.Duration))
	}
	frac = min(frac, 1)
	filled := int(frac * barWidth)
	total := "?"
	if p.Requests > 0 {
		total = fmt.Sprint(p.Requests)
	}
	fmt.Fprintf(b.w, "\rstep %d/%d %-12s [%s%s] %d/%s done, %d errors, %.1fs ",
		p.StepIndex+1, p.Steps, p.Step, strings.Repeat("#", filled), strings.Repeat(" ", barWidth-filled),
		p.Done, total, p.Errors, p.Elapsed.Seconds())
}

// Finish ends the bar's line.
func (b *ProgressBar) Finish() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.drawn {
		fmt.Fprintln(b.w)
	}
}
