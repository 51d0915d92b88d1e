package engine

import "github.com/splash-inference/splash/engine/kvcache"

// KV returns the scheduler's block pool, for a lower cache tier (the
// actors' disk tier) that hooks its evictions (kvcache.Manager.OnEvict)
// and restores blocks between steps, never while a forward pass runs.
func (s *Scheduler) KV() *kvcache.Manager { return s.kv }
