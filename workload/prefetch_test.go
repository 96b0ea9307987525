package workload

import (
	"errors"
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
