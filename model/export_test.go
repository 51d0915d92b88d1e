package model

// The helpers of the model's internal tests that its external tests
// (package model_test) share.
var (
	RandomTokens   = randomTokens
	ShuffledBlocks = shuffledBlocks
	RelErr         = relErr
)

// ParseSafetensorsSet parses a safetensors file's bytes into a tensor set,
// refusing any tensor it cannot read.
func ParseSafetensorsSet(data []byte) (Tensors, error) {
	ts, bad, err := parseSafetensors(data, "model.safetensors")
	if err != nil {
		return nil, err
	}
	for _, e := range bad {
		return nil, e
	}
	set := newTensorSet()
	set.tensors = ts
	return set, nil
}
