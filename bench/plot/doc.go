// Package plot draws a benchmark report as a chart: output tokens/s, TTFT,
// TPOT and end-to-end latency against the load level (concurrency or request
// rate), one coloured series per run, p50 as a solid line and p99 dashed.
//
// The chart is laid out once against a small drawing interface and rendered
// by two back ends written here: SVG (text) and PNG (a plain rasteriser over
// image.RGBA with a built-in 5×7 bitmap font), so it needs no dependency.
//
//	err := plot.WriteFile("bench/results/sweep.svg", plot.Run{Name: "splash", Report: r})
package plot
