package stop

// Reason is why a sequence finished, in the OpenAI API's words.
type Reason string

const (
	None      Reason = ""          // still running
	Stop      Reason = "stop"      // a stop token or stop string
	Length    Reason = "length"    // max tokens or the context limit
	Cancelled Reason = "cancelled" // the client went away or the server aborted it
)

// Conditions are a sequence's token-level stop conditions.
type Conditions struct {
	StopTokens []int32 // EOS and any stop token ids; the token that matches is kept in the output
	MaxTokens  int     // generated tokens; 0 means no limit besides the context
	MaxContext int     // prompt plus generated tokens; 0 means no limit
}

// Check returns the reason a sequence ends after generating tok, given the
// counts including tok, or None.
func (c *Conditions) Check(tok int32, generated, total int) Reason {
	for _, s := range c.StopTokens {
		if tok == s {
			return Stop
		}
	}
	if c.MaxTokens > 0 && generated >= c.MaxTokens || c.MaxContext > 0 && total >= c.MaxContext {
		return Length
	}
	return None
}
