package engine

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/des"
)

// TestSeqTransitions checks every (from, to) pair of a request's states
// against the table of changes a request makes, spelled out here (h hinted,
// p parked, u pulling, w waiting, l loading, L loaded, r running, P
// preempted, f finished, i ignored, d dropped; 1 legal):
//
//	from \ to  h p u w l L r P f i d
//	hinted     0 1 1 1 0 0 0 0 0 0 1
//	parked     0 1 1 1 0 0 0 0 0 0 1
//	pulling    0 0 0 1 0 0 0 0 0 0 1
//	waiting    0 0 0 0 1 0 1 0 0 0 1
//	loading    0 0 0 0 0 1 0 0 0 0 1
//	loaded     0 0 0 0 0 0 1 0 0 0 1
//	running    0 0 0 0 0 0 0 1 1 0 1
//	preempted  0 0 0 0 1 0 1 0 0 1 1
//	finished   0 0 0 0 0 0 0 0 0 0 0
//	ignored    0 0 0 0 0 0 0 0 0 0 0
//	dropped    0 0 0 0 0 0 0 0 0 0 0
//
// A legal change moves the request; an illegal one panics with a
// TransitionError naming the worker, the request and both states, and
// leaves the request where it was.
func TestSeqTransitions(t *testing.T) {
	table := [numSeqStates]string{
		seqHinted:    "01110000001",
		seqParked:    "01110000001",
		seqPulling:   "00010000001",
		seqWaiting:   "00001010001",
		seqLoading:   "00000100001",
		seqLoaded:    "00000010001",
		seqRunning:   "00000001101",
		seqPreempted: "00001010011",
		seqFinished:  "00000000000",
		seqIgnored:   "00000000000",
		seqDropped:   "00000000000",
	}
	for from := range numSeqStates {
		for to := range numSeqStates {
			legal := table[from][to] == '1'
			w, _ := newWorker(t, cfg(), fixed)
			s := &Seq{Req: req(7, 0, 16, 1, 1), state: from}
			err := transition(w, s, to)
			want := to
			if !legal {
				want = from
			}
			if s.state != want || (err == nil) != legal {
				t.Errorf("%v -> %v: state %v, error %v; legal %v", from, to, s.state, err, legal)
				continue
			}
			msg := fmt.Sprintf("worker 0: request 7: to %v while %v: no transition allows it", to, from)
			if !legal && err.Error() != msg {
				t.Errorf("%v -> %v: error %v, want %q", from, to, err, msg)
			}
		}
	}
}

// transition is w.to(s, st), returning the TransitionError it panics with
// (nil when it does not).
func transition(w *Worker, s *Seq, st seqState) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = r.(TransitionError)
		}
	}()
	w.to(s, st)
	return nil
}

// TestIllegalTransitionPanics plants an illegal change through the
// worker's API: PullDone for a request that runs (it has no pull), which
// would put a running request back among the waiting ones. It panics,
// naming the request and both states; the change before it (waiting ->
// running, at admission) was legal, and the checks were quiet.
func TestIllegalTransitionPanics(t *testing.T) {
	w, _ := newWorker(t, cfg(), fixed)
	s := w.Enqueue(req(3, 0, 100, 3, 1), false)
	if _, ok := w.StartPass(0); !ok {
		t.Fatal("no pass")
	}
	if err := w.Check(); err != nil {
		t.Fatal(err)
	}
	want := "worker 0: request 3: to waiting while running: no transition allows it"
	defer func() {
		if te, ok := recover().(TransitionError); !ok || te.Error() != want {
			t.Errorf("PullDone on a running request: %v, want %q", te, want)
		}
	}()
	w.PullDone(s, 0, 0)
}

// TestCheckStates: a request whose state disagrees with its queue, or a
// worker count that disagrees with its requests, set behind the worker's
// back, is reported by the full check. Request 2 loads its 2 G2 blocks
// (skipped, holding them, needing 7 for its length), request 0 runs and
// request 1 waits behind them. Planted: a running request marked waiting, a
// waiting one marked running, a waiting one holding no blocks marked
// loaded, one marked parked behind the skipped ones; the waiting requests'
// need and held blocks each counted one too many, no skipped requests (the
// loading one is then behind them), and more skipped than waiting.
func TestCheckStates(t *testing.T) {
	c := cfg()
	c.MaxNumSeqs = 1 // so request 1 waits
	h := &hostKV{host: map[int64]int{2: 2}, loadTime: 10 * des.Millisecond}
	w, err := New(c, fixed, &log{}, h)
	if err != nil {
		t.Fatal(err)
	}
	l := w.Enqueue(req(2, 0, 100, 3, 3), false)
	r := w.Enqueue(req(0, 0, 100, 3, 1), false)
	q := w.Enqueue(req(1, 0, 100, 3, 2), false)
	if _, ok := w.StartPass(0); !ok {
		t.Fatal("no pass")
	}
	if l.state != seqLoading || r.state != seqRunning || q.state != seqWaiting || w.skipped != 1 || w.waitingHeld != 2 || w.waitingNeed != 7 {
		t.Fatalf("states %v, %v, %v, %d skipped, waiting requests hold %d blocks and need %d; want loading, running, waiting, 1, 2, 7",
			l.state, r.state, q.state, w.skipped, w.waitingHeld, w.waitingNeed)
	}
	if err := w.Check(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		s    *Seq
		st   seqState
		want string
	}{
		{r, seqWaiting, "request 0 runs while waiting"},
		{q, seqRunning, "request 1 waits while running"},
		{q, seqLoaded, "request 1 waits loaded holding 0 blocks"},
		{q, seqParked, "waiting requests [1] hold blocks or wait but are behind the 1 skipped ones"},
	} {
		was := c.s.state
		c.s.state = c.st
		if err := w.Check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.st, err, c.want)
		}
		c.s.state = was
	}
	for _, c := range []struct {
		name string
		n    *int
		to   int
		want string
	}{
		{"waitingNeed", &w.waitingNeed, 8, "waiting requests holding blocks need 7 for their lengths, the worker counts 8"},
		{"waitingHeld", &w.waitingHeld, 3, "waiting requests hold 2 blocks, the worker counts 3"},
		{"skipped", &w.skipped, 0, "waiting requests [2] hold blocks or wait but are behind the 0 skipped ones"},
		{"skipped", &w.skipped, 3, "3 skipped requests, 2 waiting"},
	} {
		was := *c.n
		*c.n = c.to
		if err := w.Check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %d: %v, want %q", c.name, c.to, err, c.want)
		}
		*c.n = was
	}
	if err := w.Check(); err != nil {
		t.Errorf("restored: %v", err)
	}
}
