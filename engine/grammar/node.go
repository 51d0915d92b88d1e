package grammar

// kind says which JSON production a node matches.
type kind uint8

const (
	kindObject  kind = iota // {...}: declared properties, or free keys when props is empty and free is set
	kindArray               // [...]: items with a count range
	kindString              // "...": any string
	kindNumber              // JSON number, or integer when node.integer
	kindLiteral             // one of a fixed set of byte strings (enum, const, true/false, null)
	kindAnyOf               // one of several nodes; expanded when a value starts
)

// maxSet bounds the number of declared properties per object and of literals
// per enum, because sets of them are tracked in one uint64.
const maxSet = 64

// node is one compiled schema. Nodes form a graph (the "any value" node
// refers to itself through objects and arrays) and are read-only after
// compilation, so one Grammar can back many matchers.
type node struct {
	kind kind

	// kindObject
	keys     [][]byte // declared property names as canonical JSON strings, quotes included
	values   []*node  // value schema of each declared property
	required uint64   // bit i set: keys[i] must appear
	free     *node    // value schema for free keys (only when keys is empty); nil: {} only
	key      *node    // the string node free keys are matched with (set with free)

	// kindArray
	item     *node
	minItems uint32
	maxItems uint32 // noLimit when unbounded

	// kindString: length bounds in code points (maxLen noLimit when unbounded)
	minLen, maxLen uint32

	// kindNumber
	integer bool

	// kindLiteral
	lits [][]byte

	// kindAnyOf: alternatives, flattened so that none is itself an anyOf.
	// For every other kind alts is {n} itself, so starting a value is one loop.
	alts []*node

	// least is the length in bytes of the shortest value of n (see
	// shortest.go), set once the graph is built; endless when none is finite.
	least int
}

const noLimit = ^uint32(0)

// newNode returns a node of kind k whose start set is itself.
func newNode(k kind) *node {
	n := &node{kind: k, maxLen: noLimit}
	n.alts = []*node{n}
	return n
}

// freeObject returns an object node with free keys whose values match value.
func freeObject(value *node) *node {
	n := newNode(kindObject)
	n.free, n.key = value, newNode(kindString)
	return n
}
