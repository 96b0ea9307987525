package block

// Node is an element of a List's slice: a value and its links side by
// side, so the list work on an element touches the cache line its value is
// on. The links name the neighbours by index in the slice, -1 for none,
// and mean something only while the node is on a list.
type Node[T any] struct {
	V          T
	prev, next int32
}

// Next is the index of the node after n on its list, or -1 at the tail.
func (n *Node[T]) Next() int32 { return n.next }

// List is an intrusive doubly linked list over the nodes of a slice, named
// by their int32 index; the nodes hold the links and the list only its
// ends, so it allocates nothing. Every call passes the slice holding the
// nodes, which may have grown since the last call. The zero List is not
// ready for use; NewList makes an empty one.
type List[T any] struct {
	head, tail int32
}

// NewList returns an empty list.
func NewList[T any]() List[T] { return List[T]{head: -1, tail: -1} }

// Head is the first node, or -1 when the list is empty.
func (l *List[T]) Head() int32 { return l.head }

// Tail is the last node, or -1 when the list is empty.
func (l *List[T]) Tail() int32 { return l.tail }

// PushTail appends node i of s, which must not be on the list.
func (l *List[T]) PushTail(s []Node[T], i int32) {
	s[i].prev, s[i].next = l.tail, -1
	if l.tail >= 0 {
		s[l.tail].next = i
	} else {
		l.head = i
	}
	l.tail = i
}

// InsertAfter puts node j of s, which must not be on the list, right
// after node i, which must be.
func (l *List[T]) InsertAfter(s []Node[T], i, j int32) {
	next := s[i].next
	s[j].prev, s[j].next = i, next
	s[i].next = j
	if next >= 0 {
		s[next].prev = j
	} else {
		l.tail = j
	}
}

// Prev is the index of the node before n on its list, or -1 at the head.
func (n *Node[T]) Prev() int32 { return n.prev }

// Unlink takes node i of s, which must be on the list, off it.
func (l *List[T]) Unlink(s []Node[T], i int32) {
	n := &s[i]
	if n.prev >= 0 {
		s[n.prev].next = n.next
	} else {
		l.head = n.next
	}
	if n.next >= 0 {
		s[n.next].prev = n.prev
	} else {
		l.tail = n.prev
	}
}

// Grow appends a zero node to s, a pool's nodes, which never holds more
// than limit. A full s doubles its capacity (up to limit): append grows a
// large slice by a quarter, which would copy a filling pool's nodes
// several times over.
func Grow[T any](s []Node[T], limit int) []Node[T] {
	if len(s) == cap(s) {
		grown := make([]Node[T], len(s), max(min(2*len(s), limit), len(s)+1))
		copy(grown, s)
		s = grown
	}
	return append(s, Node[T]{})
}
