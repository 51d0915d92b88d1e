package kvcache

// none marks the absence of a block in a free-list link.
const none int32 = -1

// freeList is an intrusive doubly linked list threaded through the blocks'
// prev/next fields, so membership changes are O(1) with no allocation.
type freeList struct {
	head, tail int32
	n          int
}

func (l *freeList) pushHead(bs []block, id int32) {
	b := &bs[id]
	b.prev, b.next, b.onFree = none, l.head, true
	if l.head != none {
		bs[l.head].prev = id
	} else {
		l.tail = id
	}
	l.head = id
	l.n++
}

func (l *freeList) pushTail(bs []block, id int32) {
	b := &bs[id]
	b.prev, b.next, b.onFree = l.tail, none, true
	if l.tail != none {
		bs[l.tail].next = id
	} else {
		l.head = id
	}
	l.tail = id
	l.n++
}

func (l *freeList) remove(bs []block, id int32) {
	b := &bs[id]
	if b.prev != none {
		bs[b.prev].next = b.next
	} else {
		l.head = b.next
	}
	if b.next != none {
		bs[b.next].prev = b.prev
	} else {
		l.tail = b.prev
	}
	b.prev, b.next, b.onFree = none, none, false
	l.n--
}

// popHead removes and returns the first block; the list must not be empty.
func (l *freeList) popHead(bs []block) int32 {
	id := l.head
	l.remove(bs, id)
	return id
}
