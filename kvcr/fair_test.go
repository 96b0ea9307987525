package kvcr

import (
	"testing"

	"github.com/kvsim/kvsim/des"
)

// TestFairShares: egress and ingress 1 GB/s (1 byte/ns) everywhere. At 0,
// f1 (worker 0 to 2, 1 MB), f2 (1 to 2, 1 MB) and f3 (0 to 3, 2 MB)
// start. Progressive filling: worker 0's egress (f1, f3) and worker 2's
// ingress (f1, f2) both offer 0.5 B/ns; the lower key (egress 0) fixes f1
// and f3 at 0.5, then ingress 2 has 0.5 left for f2. f1 and f2 end at
// 1 MB / 0.5 = 2 ms, when f3 has 1 MB left; alone it runs at 1 B/ns and
// has 0.5 MB left at 2.5 ms, when f4 (1 to 3, 1 MB) starts and ingress 3
// splits 0.5 / 0.5: f3 ends at 2.5 + 1 = 3.5 ms with f4 half done, and f4,
// alone again, at 3.5 + 0.5 = 4 ms. Worker 0 sent 3 MB, worker 1 2 MB.
func TestFairShares(t *testing.T) {
	var q des.Queue
	f := newFairNet(&q, 1, 1, 1)
	done := map[uint64]des.Time{}
	rec := func(now des.Time, t *Transfer) { done[t.ID] = now }
	ts := []*Transfer{{ID: 1, Bytes: mb}, {ID: 2, Bytes: mb}, {ID: 3, Bytes: 2 * mb}, {ID: 4, Bytes: mb}}
	f.start(0, ts[0], 0, 2, rec)
	f.start(0, ts[1], 1, 2, rec)
	f.start(0, ts[2], 0, 3, rec)
	q.Schedule(2500*us, des.PhaseTransfer, 4, call(func(now des.Time) { f.start(now, ts[3], 1, 3, rec) }), 0)
	for q.Step() {
	}
	want := map[uint64]des.Time{1: 2 * ms, 2: 2 * ms, 3: 3500 * us, 4: 4 * ms}
	for id, w := range want {
		if done[id] != w {
			t.Errorf("transfer %d ended at %v, want %v", id, done[id], w)
		}
	}
	if f.movedBy(0) != 3*mb || f.movedBy(1) != 2*mb || f.movedBy(2) != 0 {
		t.Errorf("moved %d %d %d", f.movedBy(0), f.movedBy(1), f.movedBy(2))
	}
}

// call is a function as an event handler.
type call func(des.Time)

func (c call) Fire(now des.Time, _, _ uint64) { c(now) }
