package workload

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"testing"

	"github.com/kvsim/kvsim/internal/leaktest"
)

// scripted yields requests with IDs 0, 1, ..., failing with err at call
// failAt (0-based; never when negative) and panicking at call panicAt; it
// counts its calls, and keeps yielding after the failure, which a reader
// must not ask for.
type scripted struct {
	calls, failAt, panicAt int
	err                    error
}

func (s *scripted) Next() (*Request, error) {
	n := s.calls
	s.calls++
	switch n {
	case s.failAt:
		return nil, s.err
	case s.panicAt:
		panic("boom")
	}
	return &Request{ID: int64(n), InputTokens: n + 1}, nil
}

func TestPrefetchKeepsTheSequence(t *testing.T) {
	// Calls 0..4 give requests 0..4, call 5 the error: the reader yields
	// those five, then the error twice (it is kept), and the source is
	// called exactly 6 times whatever the batch, though it would go on.
	bad := &ParseError{Line: 6, Key: "hash_ids", Err: errors.New("empty")}
	for _, batch := range []int{1, 2, 3, 1000} {
		src := &scripted{failAt: 5, panicAt: -1, err: bad}
		p := Prefetch(src, batch, 2)
		for want := range int64(5) {
			r, err := p.Next()
			if err != nil || r.ID != want || r.InputTokens != int(want)+1 {
				t.Fatalf("batch %d: request %d = %+v, %v", batch, want, r, err)
			}
		}
		for range 2 {
			if r, err := p.Next(); r != nil || err != bad {
				t.Fatalf("batch %d: after 5 requests %v, %v; want nil, %v", batch, r, err, bad)
			}
		}
		p.Close()
		if src.calls != 6 {
			t.Errorf("batch %d: the source was called %d times, want 6", batch, src.calls)
		}
	}
	// io.EOF ends the sequence as any error does.
	p := Prefetch(&scripted{failAt: 0, panicAt: -1, err: io.EOF}, 4, 1)
	defer p.Close()
	if r, err := p.Next(); r != nil || err != io.EOF {
		t.Errorf("empty source: %v, %v; want io.EOF", r, err)
	}
}

// TestPrefetchFirstBatches: with batches of 100, the read-ahead hands over
// 16 requests first, then 32, 64 and 100 at a time: the consumer's first
// request waits for 16 reads, not 100. The sequence is the source's.
func TestPrefetchFirstBatches(t *testing.T) {
	p := Prefetch(&scripted{failAt: -1, panicAt: -1}, 100, 2)
	defer p.Close()
	var sizes []int
	for want := range int64(312) {
		r, err := p.Next()
		if err != nil || r.ID != want {
			t.Fatalf("request %d = %+v, %v", want, r, err)
		}
		if p.next == 1 {
			sizes = append(sizes, len(p.cur.reqs))
		}
	}
	if fmt.Sprint(sizes) != "[16 32 64 100 100]" {
		t.Errorf("batches of %v, want [16 32 64 100 100]", sizes)
	}
}

func TestPrefetchRaisesAPanicInOrder(t *testing.T) {
	// Call 3 panics: requests 0, 1, 2 come first, then Next panics with the
	// value and the goroutine's stack.
	p := Prefetch(&scripted{failAt: -1, panicAt: 3}, 2, 1)
	defer p.Close()
	for want := range int64(3) {
		if r, err := p.Next(); err != nil || r.ID != want {
			t.Fatalf("request %d = %v, %v", want, r, err)
		}
	}
	defer func() {
		sp, ok := recover().(*sourcePanic)
		if !ok || sp.value != "boom" || len(sp.stack) == 0 {
			t.Errorf("Next raised %v; want the source's panic boom with its stack", sp)
		}
	}()
	p.Next()
	t.Error("Next did not panic")
}

func TestPrefetchCloseStopsTheGoroutine(t *testing.T) {
	// An endless source read 3 requests into: Close returns with the
	// goroutine gone, blocked as it was on a full channel.
	before := runtime.NumGoroutine()
	p := Prefetch(&scripted{failAt: -1, panicAt: -1}, 2, 2)
	for range 3 {
		if _, err := p.Next(); err != nil {
			t.Fatal(err)
		}
	}
	p.Close()
	p.Close() // again: a no-op
	if n := leaktest.Settled(before); n > before {
		t.Errorf("%d goroutines after Close, %d before", n, before)
	}
}

// TestPrefetchSharedGivesEachItsCopy: three consumers of one read-ahead,
// read on goroutines of their own, each get requests 0..99 and then the
// source's error at call 100, each request a copy of its own (a consumer
// setting Prev changes no other's); the source is called 101 times. A
// fourth consumer that leaves at once holds no one up, and Wait returns
// once all have left, with no goroutine left behind.
func TestPrefetchSharedGivesEachItsCopy(t *testing.T) {
	before := runtime.NumGoroutine()
	bad := errors.New("bad line")
	src := &scripted{failAt: 100, panicAt: -1, err: bad}
	s := PrefetchShared(src, 7, 2, 4)
	s.Consumer(3).Close()
	errs := make(chan error, 3)
	for i := range 3 {
		go func() {
			c := s.Consumer(i)
			defer c.Close()
			for want := range int64(100) {
				r, err := c.Next()
				if err != nil || r.ID != want || r.Prev != 0 {
					errs <- fmt.Errorf("consumer %d: request %d = %+v, %v", i, want, r, err)
					return
				}
				r.Prev = int64(i + 1) // seen by no other consumer
			}
			if r, err := c.Next(); r != nil || err != bad {
				errs <- fmt.Errorf("consumer %d: after 100 requests %v, %v", i, r, err)
				return
			}
			errs <- nil
		}()
	}
	for range 3 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	s.Wait()
	if src.calls != 101 {
		t.Errorf("the source was called %d times, want 101", src.calls)
	}
	if n := leaktest.Settled(before); n > before {
		t.Errorf("%d goroutines after Wait, %d before", n, before)
	}
}

// TestPrefetchSharedStopsWhenAllLeave: consumers that leave before the
// source ends (a run and its twin stopped early) let the goroutine return,
// though the source would go on.
func TestPrefetchSharedStopsWhenAllLeave(t *testing.T) {
	before := runtime.NumGoroutine()
	src := &scripted{failAt: -1, panicAt: -1}
	s := PrefetchShared(src, 4, 1, 2)
	if r, err := s.Consumer(0).Next(); err != nil || r.ID != 0 {
		t.Fatalf("first request %+v, %v", r, err)
	}
	s.Consumer(0).Close()
	s.Consumer(1).Close()
	s.Wait()
	if n := leaktest.Settled(before); n > before {
		t.Errorf("%d goroutines after Wait, %d before", n, before)
	}
}
