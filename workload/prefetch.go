package workload

import (
	"fmt"
	"runtime/debug"
	"sync"
)

// Prefetch returns src read ahead on a goroutine of its own, so that
// parsing a trace or drawing a synthetic workload overlaps the consumer's
// work. Requests are handed over in batches of batch requests, at most
// ahead batches waiting: the channel costs one handover a batch, and the
// memory held is bounded. The first batches are smaller, firstBatch
// requests and doubling up to batch, so that the consumer starts as soon
// as a few requests are read. The sequence is src's: the same requests in the
// same order, then src's first error (io.EOF at the end) after the
// requests before it, src not called again. A panic in src.Next is raised
// again in Next, in order. src must not be used by anything else until
// Close returns. batch and ahead must be at least 1.
func Prefetch(src Source, batch, ahead int) *Prefetched {
	return prefetch(src, batch, ahead, 1, false).consumers[0]
}

// Prefetched is a Source read ahead by Prefetch.
type Prefetched struct {
	batches chan prefetchBatch
	stop    chan struct{} // closed by Close
	done    chan struct{} // closed when the goroutine returns
	once    sync.Once
	cur     prefetchBatch // the batch being served
	next    int           // its next request
	shared  bool          // one of PrefetchShared's consumers: Close only leaves
	gone    bool          // the goroutine's: it saw stop closed
}

// firstBatch is the size of the first batch the read-ahead hands over:
// the consumer waits for it before its first request (the conversation
// trace's first 256 requests took 3-7 ms to read, its first 16 about 1 ms).
const firstBatch = 16

// prefetchBatch is a run of requests and what followed them: src's error
// or a panic of its Next, or neither when more requests follow.
type prefetchBatch struct {
	reqs  []*Request
	err   error
	panic *sourcePanic
}

// sourcePanic is a panic of the source's Next on the read-ahead goroutine,
// with that goroutine's stack.
type sourcePanic struct {
	value any
	stack []byte
}

func (p *sourcePanic) Error() string {
	return fmt.Sprintf("%v (in workload.Prefetch's goroutine:\n%s)", p.value, p.stack)
}

// fill reads up to n requests from src into a new batch, stopping at its
// first error or panic.
func fill(src Source, n int) (b prefetchBatch) {
	defer func() {
		if r := recover(); r != nil {
			b.panic = &sourcePanic{value: r, stack: debug.Stack()}
		}
	}()
	b.reqs = make([]*Request, 0, n)
	for len(b.reqs) < n {
		r, err := src.Next()
		if err != nil {
			b.err = err
			return b
		}
		b.reqs = append(b.reqs, r)
	}
	return b
}

// Next implements Source: the wrapped source's next request, or the error
// it returned there. Next must not be called after Close.
func (p *Prefetched) Next() (*Request, error) {
	for p.next == len(p.cur.reqs) {
		if p.cur.panic != nil {
			panic(p.cur.panic)
		}
		if p.cur.err != nil {
			return nil, p.cur.err
		}
		p.cur, p.next = <-p.batches, 0
	}
	r := p.cur.reqs[p.next]
	p.cur.reqs[p.next] = nil // served: the consumer owns it now
	p.next++
	return r, nil
}

// Close stops the goroutine and waits for it to return: at once when the
// source has ended or the goroutine waits to hand a batch over, else once
// the batch it is filling is full or src fails (fill does not look at
// stop: up to batch more calls of src.Next). The wrapped source is then
// free (a trace file may be closed). A consumer of PrefetchShared's only
// leaves the goroutine, which hands it nothing more: Shared.Wait waits for
// it. Close may be called more than once.
func (p *Prefetched) Close() {
	p.once.Do(func() { close(p.stop) })
	if !p.shared {
		<-p.done
	}
}

// Shared is a source read ahead once for several consumers: see
// PrefetchShared.
type Shared struct {
	consumers []*Prefetched
	done      chan struct{}
}

// PrefetchShared is Prefetch for n consumers that read the same sequence at
// once (a run and its twins): one goroutine reads src, and each consumer
// gets every request in order, as a Request of its own (the requests'
// Blocks and Measured, which nothing modifies, shared), then the same
// error or panic. The slowest consumer paces the goroutine, so the memory
// held stays bounded: each has at most ahead batches waiting. A consumer's
// Close leaves the goroutine, which returns once every consumer has left or
// src has ended; Wait waits for that, after which src is free. n must be
// at least 1.
func PrefetchShared(src Source, batch, ahead, n int) *Shared {
	return prefetch(src, batch, ahead, n, true)
}

// prefetch starts the goroutine reading src ahead for n consumers; shared
// says a consumer's Close only leaves it (PrefetchShared), else Close waits
// for it to return (Prefetch, n 1).
func prefetch(src Source, batch, ahead, n int, shared bool) *Shared {
	s := &Shared{done: make(chan struct{})}
	for range n {
		s.consumers = append(s.consumers, &Prefetched{batches: make(chan prefetchBatch, ahead), stop: make(chan struct{}), done: s.done, shared: shared})
	}
	go s.read(src, batch)
	return s
}

// Consumer is consumer i, from 0.
func (s *Shared) Consumer(i int) *Prefetched { return s.consumers[i] }

// Wait waits for the goroutine to return: call it once every consumer has
// been closed.
func (s *Shared) Wait() { <-s.done }

// read fills batches from src and hands each consumer its copy (the first
// consumer src's own requests), until src fails or every consumer has left.
// Every copy is made before any consumer gets one, since a consumer may set
// its requests' fields at once.
func (s *Shared) read(src Source, n int) {
	defer close(s.done)
	live := len(s.consumers)
	copies := make([]prefetchBatch, len(s.consumers)) // handed over by value: reused
	size := min(firstBatch, n)
	for live > 0 {
		b := fill(src, size)
		size = min(2*size, n)
		for i, c := range s.consumers {
			if c.gone {
				continue
			}
			copies[i] = b
			if i > 0 {
				own := make([]Request, len(b.reqs))
				copies[i].reqs = make([]*Request, len(b.reqs))
				for j, r := range b.reqs {
					own[j] = *r
					copies[i].reqs[j] = &own[j]
				}
			}
		}
		for i, c := range s.consumers {
			if c.gone {
				continue
			}
			select {
			case c.batches <- copies[i]:
			case <-c.stop:
				c.gone = true
				live--
			}
		}
		if b.err != nil || b.panic != nil {
			return
		}
	}
}
