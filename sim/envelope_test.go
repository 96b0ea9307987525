package sim

import (
	"slices"
	"testing"

	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/scenarios"
)

// TestArrivalEnvelope: a trace arriving at 0, 5, 5, 20 and 21 ms under
// the envelope [{for: 10ms, rate: 0.5}, {for: 5ms, rate: 3}]. The first
// segment plays source [0, 5 ms) over [0, 10 ms), the second source from
// 5 ms at 3 times, from 10 ms on (its rate holds past its end at 15 ms):
// 0, 10 ms, 10 ms, 10 + 15/3 = 15 ms and 10 + 16/3 ms = 15,333,333 ns.
// With arrival_jitter 10ms and seed 7 (TestArrivalJitter's draws
// 9,212,709, 1,538,453, 6,695,711, 2,547,064 and 4,492,783 ns) the jitter
// moves those: 9,212,709, 11,538,453, 16,695,711, 17,547,064 and
// 19,826,116 (jittered first, the first request's 9.2 ms would have
// played at 18.4 ms).
func TestArrivalEnvelope(t *testing.T) {
	lines := []traceLine{{0, 16, 1, []int{1}}, {5, 16, 1, []int{2}}, {5, 16, 1, []int{3}}, {20, 16, 1, []int{4}}, {21, 16, 1, []int{5}}}
	env := "workload.envelope=[{for: 10ms, rate: 0.5}, {for: 5ms, rate: 3}]"
	arrivals := func(sets ...string) []int64 {
		rows, _ := run(t, traceScenario(t, fixed10x5, lines, sets...))
		var out []int64
		for i, r := range rows {
			if r.RequestID != int64(i) {
				t.Fatalf("row %d is request %d", i, r.RequestID)
			}
			out = append(out, r.ArrivalNs)
		}
		return out
	}
	if got, want := arrivals(env), []int64{0, 10e6, 10e6, 15e6, 15_333_333}; !slices.Equal(got, want) {
		t.Errorf("envelope: arrivals %v, want %v", got, want)
	}
	want := []int64{9_212_709, 11_538_453, 16_695_711, 17_547_064, 19_826_116}
	if got := arrivals(env, "seed=7", "workload.trace.arrival_jitter=10ms"); !slices.Equal(got, want) {
		t.Errorf("envelope and jitter: arrivals %v, want %v", got, want)
	}
}

// TestSyntheticEnvelope: a synthetic workload's arrivals, session starts
// and later turns alike (think times included), are the generator's
// mapped by the envelope one by one: each run's arrival is Plan.Envelope's
// Real of the same request's arrival without the key. Constant session
// starts every 200 ms (rate 10, 2 turns) under [{for: 1s, rate: 1}, {for:
// 2s, rate: 0.25}, {for: 1s, rate: 4}]: the first 1 s as generated, the
// next 0.5 s of the generator over 2 s, the rest 4 times as fast.
func TestSyntheticEnvelope(t *testing.T) {
	const body = "name: t\nworkload:\n  synthetic: {requests: 40, rate: 10, arrival: constant, turns: 2, think_time: 700ms, input: {mean: 64}, output: {mean: 4}}\n" +
		fixed10x5 + "kvcr: {enabled: false}\n"
	load := func(sets ...string) *scenarios.Scenario {
		sc, err := scenarios.Parse("s.yaml", []byte(body), sets)
		if err != nil {
			t.Fatal(err)
		}
		return sc
	}
	plain, _ := run(t, load())
	sc := load("workload.envelope=[{for: 1s, rate: 1}, {for: 2s, rate: 0.25}, {for: 1s, rate: 4}]")
	p, err := Prepare(sc)
	if err != nil {
		t.Fatal(err)
	}
	shaped, _ := run(t, sc)
	if len(shaped) != len(plain) || len(plain) != 40 {
		t.Fatalf("%d and %d rows", len(plain), len(shaped))
	}
	var later int
	for i := range plain {
		want, _ := p.Envelope.Real(des.Time(plain[i].ArrivalNs))
		if shaped[i].ArrivalNs != int64(want) || shaped[i].PrevRequestID != plain[i].PrevRequestID {
			t.Errorf("request %d: arrival %d ns, previous turn %d; want %d ns (from %d ns), %d",
				i, shaped[i].ArrivalNs, shaped[i].PrevRequestID, want, plain[i].ArrivalNs, plain[i].PrevRequestID)
		}
		if plain[i].ArrivalNs > int64(des.Second) {
			later++
		}
	}
	if later == 0 {
		t.Error("no arrival past the first segment: the test shows nothing")
	}
}
