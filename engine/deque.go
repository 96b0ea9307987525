package engine

// deque is a ring buffer of requests: the waiting queue takes arrivals at
// the back and preempted requests at the front, or behind the requests
// admission has skipped (insertAt).
type deque struct {
	buf  []*Seq
	head int
	n    int
}

func (d *deque) len() int { return d.n }

func (d *deque) at(i int) *Seq { return d.buf[(d.head+i)%len(d.buf)] }

func (d *deque) grow() {
	if d.n < len(d.buf) {
		return
	}
	nb := make([]*Seq, max(8, 2*len(d.buf)))
	for i := range d.n {
		nb[i] = d.at(i)
	}
	d.buf, d.head = nb, 0
}

func (d *deque) pushBack(s *Seq) {
	d.grow()
	d.buf[(d.head+d.n)%len(d.buf)] = s
	d.n++
}

func (d *deque) pushFront(s *Seq) {
	d.grow()
	d.head = (d.head - 1 + len(d.buf)) % len(d.buf)
	d.buf[d.head] = s
	d.n++
}

// insertAt puts s at position i (0 <= i <= len), keeping the order of the
// others. Like removeAt it shifts the i requests in front of it.
func (d *deque) insertAt(i int, s *Seq) {
	d.pushFront(s)
	for j := 0; j < i; j++ {
		d.buf[(d.head+j)%len(d.buf)] = d.buf[(d.head+j+1)%len(d.buf)]
	}
	d.buf[(d.head+i)%len(d.buf)] = s
}

func (d *deque) popFront() *Seq {
	s := d.buf[d.head]
	d.buf[d.head] = nil
	d.head = (d.head + 1) % len(d.buf)
	d.n--
	return s
}

// removeAt removes the i-th request, keeping the order of the others. It
// shifts the i requests in front of it, not the ones behind: admission
// removes near the front of a long queue.
func (d *deque) removeAt(i int) {
	for j := i; j > 0; j-- {
		d.buf[(d.head+j)%len(d.buf)] = d.buf[(d.head+j-1)%len(d.buf)]
	}
	d.popFront()
}
