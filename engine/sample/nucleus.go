package sample

// Top-p works on a histogram of the candidates' weights rather than a sort
// of the vocabulary: one pass drops each candidate into a bucket by how far
// its logit is below the max, the running mass over buckets locates the one
// bucket where the nucleus ends, and only that bucket is sorted. Buckets are
// ordered by logit, so the result is exactly "sort descending, cut where the
// mass reaches top_p", at linear cost.
const (
	nucleusBuckets   = 256
	bucketsPerLogNat = 6 // bucket width 1/6 nat of probability
	// nucleusNear is how many tempered nats below the max everyToken looks
	// first: the first nearBuckets buckets.
	nucleusNear = 20
	nearBuckets = nucleusNear * bucketsPerLogNat
)

// nucleusBucket is the bucket of a logit l: how far it is below the max m,
// tempered by invT, in sixths of a nat (the last bucket takes the rest).
func nucleusBucket(l float32, m, invT float64) int {
	d := (m - float64(l)) * invT * bucketsPerLogNat
	return int(min(d, nucleusBuckets-1))
}

// nucleus returns the smallest best-first set of idx whose weight reaches
// mass, and its total weight. idx is reordered in place: whole buckets
// first, then the boundary bucket's best, sorted.
func nucleus(idx []int32, adj, w []float32, m, invT, mass float64) ([]int32, float64) {
	var hist [nucleusBuckets]float64
	bucket := func(t int32) int { return nucleusBucket(adj[t], m, invT) }
	for _, t := range idx {
		hist[bucket(t)] += float64(w[t])
	}
	edge, below := 0, 0.0 // the boundary bucket and the mass of better buckets
	for ; edge < nucleusBuckets-1 && below+hist[edge] < mass; edge++ {
		below += hist[edge]
	}
	// Partition: better buckets, then the boundary bucket; drop the rest.
	in := 0
	for i, t := range idx {
		if bucket(t) < edge {
			idx[in], idx[i] = t, idx[in]
			in++
		}
	}
	end := in
	for i := in; i < len(idx); i++ {
		if t := idx[i]; bucket(t) == edge {
			idx[end], idx[i] = t, idx[end]
			end++
		}
	}
	sortBest(idx[in:end], adj)
	acc := below
	for j := in; j < end; j++ {
		acc += float64(w[idx[j]])
		if acc >= mass {
			return idx[:j+1], acc
		}
	}
	return idx[:end], acc // rounding: the whole boundary bucket
}
