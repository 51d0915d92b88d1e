package model

// The helpers of the model's internal tests that its external tests
// (package model_test) share.
var (
	RandomTokens   = randomTokens
	ShuffledBlocks = shuffledBlocks
	RelErr         = relErr
)
