package actors

import (
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/splash-inference/splash/engine"
	"github.com/splash-inference/splash/engine/kvdisk"
)

// metricsBox holds the engine's Prometheus metrics. The batcher writes it;
// /metrics reads it from other goroutines.
type metricsBox struct {
	running, waiting, blocksTotal, blocksUsed atomic.Int64
	prefixHitTokens, preemptions              atomic.Int64
	snapshots                                 atomic.Int64
	stateBytes                                int64 // one sequence's state, the size of a snapshot
	promptTokens, generationTokens            atomic.Int64
	specProposed, specAccepted                atomic.Int64
	stepSeconds                               histogram
	// acceptLength counts each verify step with drafts by the tokens it
	// gave (accepted drafts plus the target's own), labelled with specMode.
	acceptLength                  histogram
	specMode                      string
	diskRestoredTokens            atomic.Int64 // prompt tokens read back from the disk tier
	imagesEncoded, imageCacheHits atomic.Int64 // the verifier's image cache (a model with a vision tower)
	imageCacheBytes               atomic.Int64
	vision                        bool          // the model has a vision tower: the image metrics are written
	disk                          *kvdisk.Store // nil without a disk tier
}

func newMetrics(blocks int, stateBytes int64, specMode string) *metricsBox {
	m := &metricsBox{stepSeconds: newHistogram(.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10),
		acceptLength: newHistogram(1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 16, 24, 32), specMode: specMode}
	m.blocksTotal.Store(int64(blocks))
	m.stateBytes = stateBytes
	return m
}

func (m *metricsBox) observe(s engine.Stats) {
	m.running.Store(int64(s.Running))
	m.waiting.Store(int64(s.Waiting))
	m.blocksUsed.Store(int64(s.KV.Used))
	m.prefixHitTokens.Store(s.KV.HitTokens)
	m.preemptions.Store(s.Preemptions)
	m.snapshots.Store(int64(s.KV.Snapshots))
}

// observeImages records the image cache's counters (the verifier's, after
// each pass).
func (m *metricsBox) observeImages(s engine.ImageCacheStats) {
	m.imagesEncoded.Store(s.Encoded)
	m.imageCacheHits.Store(s.Hits)
	m.imageCacheBytes.Store(s.Bytes)
}

func (m *metricsBox) write(w io.Writer) {
	gauge := func(name, help string, v int64) {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s gauge\n%s %d\n", name, help, name, name, v)
	}
	counter := func(name, help string, v int64) {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s counter\n%s %d\n", name, help, name, name, v)
	}
	gauge("splash_requests_running", "Sequences holding KV blocks.", m.running.Load())
	gauge("splash_requests_waiting", "Sequences queued for admission.", m.waiting.Load())
	gauge("splash_kv_blocks_total", "KV cache blocks in the pool.", m.blocksTotal.Load())
	gauge("splash_kv_blocks_used", "KV cache blocks referenced by a sequence.", m.blocksUsed.Load())
	counter("splash_prefix_cache_hit_tokens_total", "Prompt tokens served from the prefix cache.", m.prefixHitTokens.Load())
	if m.stateBytes > 0 {
		gauge("splash_state_snapshot_bytes", "Memory of the state snapshots kept for prefix hits (models with state layers).", m.snapshots.Load()*m.stateBytes)
	}
	if m.vision {
		counter("splash_images_encoded_total", "Images the vision tower encoded.", m.imagesEncoded.Load())
		counter("splash_image_cache_hits_total", "Images whose embeddings came from the image cache.", m.imageCacheHits.Load())
		gauge("splash_image_cache_bytes", "Memory of the image embeddings kept for resends.", m.imageCacheBytes.Load())
	}
	counter("splash_preemptions_total", "Running sequences preempted for blocks and recomputed later.", m.preemptions.Load())
	counter("splash_prompt_tokens_total", "Prompt tokens submitted.", m.promptTokens.Load())
	counter("splash_generation_tokens_total", "Tokens generated.", m.generationTokens.Load())
	counter("splash_spec_proposed_tokens_total", "Draft tokens proposed for verification.", m.specProposed.Load())
	counter("splash_spec_accepted_tokens_total", "Draft tokens accepted.", m.specAccepted.Load())
	m.stepSeconds.write(w, "splash_step_seconds", "", "Time of one batched step (schedule, forward, sample).")
	m.acceptLength.write(w, "splash_spec_acceptance_length", `mode="`+m.specMode+`"`,
		"Tokens one verify step with drafts gave a sequence: its accepted draft tokens plus the target's own, by --spec mode.")
	if m.disk != nil {
		d := m.disk.Stats()
		gauge("splash_prefix_cache_disk_budget_bytes", "Bytes the prefix cache's disk tier may use (--max-cache-disk).", d.Budget)
		gauge("splash_prefix_cache_disk_bytes", "Bytes of KV blocks on disk.", d.Bytes)
		counter("splash_prefix_cache_disk_hit_tokens_total", "Prompt tokens whose KV blocks were read back from disk.", m.diskRestoredTokens.Load())
		counter("splash_prefix_cache_disk_read_bytes_total", "Bytes of KV blocks read from disk.", d.ReadBytes)
		counter("splash_prefix_cache_disk_write_bytes_total", "Bytes of KV blocks written to disk.", d.WriteBytes)
		counter("splash_prefix_cache_disk_corrupt_total", "Disk blocks dropped by a failed check (recomputed).", d.Corrupt)
		counter("splash_prefix_cache_disk_dropped_total", "Evicted blocks not written: the writer's queue was full or writes had stopped.", d.Dropped)
		counter("splash_prefix_cache_disk_write_errors_total", "Failed disk writes; the first leaves the cache in RAM only.", d.WriteErrors)
	}
}

// histogram is a Prometheus histogram with fixed bounds.
type histogram struct {
	mu     sync.Mutex // guards counts, sum, n
	bounds []float64
	counts []uint64 // per bucket, the last for +Inf
	sum    float64
	n      uint64
}

func newHistogram(bounds ...float64) histogram {
	return histogram{bounds: bounds, counts: make([]uint64, len(bounds)+1)}
}

func (h *histogram) observe(v float64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	i := 0
	for i < len(h.bounds) && v > h.bounds[i] {
		i++
	}
	h.counts[i]++
	h.sum += v
	h.n++
}

// write prints the histogram as name with labels (`k="v",…`, or none).
func (h *histogram) write(w io.Writer, name, labels, help string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name)
	le, set := "", ""
	if labels != "" {
		le, set = labels+",", "{"+labels+"}"
	}
	var cum uint64
	for i, b := range h.bounds {
		cum += h.counts[i]
		fmt.Fprintf(w, "%s_bucket{%sle=\"%g\"} %d\n", name, le, b, cum)
	}
	cum += h.counts[len(h.bounds)]
	fmt.Fprintf(w, "%s_bucket{%sle=\"+Inf\"} %d\n%s_sum%s %g\n%s_count%s %d\n", name, le, cum, name, set, h.sum, name, set, h.n)
}
