package bench

import (
	"math/rand/v2"
	"strings"
)

// promptWords are common lowercase English words, each a single token (with
// its leading space) in the byte-level BPE vocabularies of the Llama 3, Qwen
// and GPT families. Synthetic prompts are built from them so that one word is
// about one token and a prompt of N words is about N tokens, without a
// tokenizer. Servers report the exact count in their usage block, and the
// benchmark records that when it is there.
var promptWords = [...]string{
	"the", "of", "and", "to", "in", "is", "that", "for", "it", "as",
	"was", "with", "be", "by", "on", "not", "he", "this", "are", "or",
	"his", "from", "at", "which", "but", "have", "an", "had", "they", "you",
	"were", "their", "one", "all", "we", "can", "her", "has", "there", "been",
	"if", "more", "when", "will", "would", "who", "so", "no", "she", "other",
	"its", "may", "these", "what", "them", "than", "some", "him", "time", "into",
	"only", "do", "out", "about", "up", "any", "like", "first", "new", "could",
	"then", "two", "my", "over", "also", "after", "made", "such", "our", "most",
	"between", "must", "through", "where", "before", "even", "each", "back", "well", "because",
	"three", "work", "life", "being", "under", "never", "day", "same", "another", "know",
	"while", "last", "might", "great", "old", "year", "off", "come", "since", "against",
	"go", "came", "right", "used", "take", "state", "himself", "few", "house", "use",
	"during", "without", "again", "place", "around", "however", "home", "small", "found", "thought",
	"went", "say", "part", "once", "general", "high", "upon", "school", "every", "does",
	"got", "united", "left", "number", "course", "war", "until", "always", "away", "something",
	"fact", "though", "water", "less", "public", "put", "think", "almost", "hand", "enough",
	"far", "took", "head", "yet", "government", "system", "better", "set", "told", "nothing",
	"night", "end", "why", "called", "did", "eyes", "find", "going", "look", "asked",
	"later", "point", "knew", "city", "next", "program", "business", "give", "group", "toward",
	"young", "days", "let", "room", "president", "side", "social", "given", "present", "several",
	"order", "national", "second", "possible", "rather", "per", "face", "among", "form", "important",
	"often", "things", "looked", "early", "white", "case", "john", "become", "large", "big",
	"need", "four", "within", "felt", "along", "children", "saw", "best", "church", "ever",
	"least", "power", "development", "light", "thing", "seemed", "family", "interest", "want", "members",
	"mind", "country", "area", "others", "done", "turned", "although", "open", "god", "service",
	"certain", "kind", "problem", "began", "different", "door", "thus", "help", "sense", "means",
}

// words returns n words drawn from promptWords with rng, separated by spaces.
func words(rng *rand.Rand, n int) string {
	if n <= 0 {
		return ""
	}
	var b strings.Builder
	b.Grow(n * 6)
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(promptWords[rng.IntN(len(promptWords))])
	}
	return b.String()
}

// countWords is the prompt-size estimate used when a server reports no usage:
// the number of whitespace-separated words.
func countWords(s string) int { return len(strings.Fields(s)) }
