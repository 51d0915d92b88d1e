package model

import "math"

// ropeInvFreq returns the headDim/2 inverse frequencies of rotary position
// embeddings: theta^(-2i/headDim), adjusted by rope_scaling when it is
// "llama3" (Llama 3.1: long wavelengths are divided by factor, short ones are
// kept, and the band in between is interpolated smoothly).
func ropeInvFreq(cfg *Config) []float32 {
	half := cfg.HeadDim / 2
	out := make([]float32, half)
	s := cfg.RopeScaling
	llama3 := s != nil && s.RopeType == "llama3"
	for i := range out {
		f := 1 / math.Pow(cfg.RopeTheta, float64(2*i)/float64(cfg.HeadDim))
		if llama3 {
			f = llama3Scale(f, s)
		}
		out[i] = float32(f)
	}
	return out
}

func llama3Scale(freq float64, s *RopeScaling) float64 {
	old := float64(s.OriginalMaxPositionEmbeddings)
	lowWavelen := old / s.LowFreqFactor
	highWavelen := old / s.HighFreqFactor
	wavelen := 2 * math.Pi / freq
	switch {
	case wavelen < highWavelen:
		return freq
	case wavelen > lowWavelen:
		return freq / s.Factor
	}
	smooth := (old/wavelen - s.LowFreqFactor) / (s.HighFreqFactor - s.LowFreqFactor)
	return (1-smooth)*freq/s.Factor + smooth*freq
}
