package report

import (
	"math"
	"slices"
	"testing"
)

// TestFidelity: two completed requests with measurements, one without, one
// rejected.
//
//	r1: arrival 0, scheduled 10 ms, first token 30 ms, finish 130 ms, 11 output tokens:
//	    simulated TTFT 30, ITL 100/10 = 10, E2E 130, queue 10, prefill 20, decode 100;
//	    measured  TTFT 20, ITL 100/10 = 10, E2E 120, queue 0, prefill 20, decode 100.
//	r2: arrival 0, scheduled 0, first 50, finish 250, 5 output tokens:
//	    simulated TTFT 50, ITL 200/4 = 50, E2E 250, queue 0, prefill 50, decode 200;
//	    measured  TTFT 100, ITL 100/4 = 25, E2E 200, queue 5, prefill 95, decode 100.
//
// TTFT: simulated mean 40, p50 30 (rank ceil(0.5 x 2) = 1), p90 50 (rank 2);
// measured mean 60, p50 20, p90 100; MAPE (10/20 + 50/100) / 2 = 0.5; MAE
// (10 + 50) / 2 = 30 ms. ITL: MAPE (0 + 25/25) / 2 = 0.5, MAE 12.5 ms.
// Queue: r1's measurement is 0, so the MAPE is r2's alone, 5/5 = 1; MAE
// (10 + 5) / 2 = 7.5 ms. Decode: MAPE (0 + 100/100) / 2 = 0.5. Mean errors:
// TTFT (40 − 60) / 60 = −1/3, E2E (190 − 160) / 160 = +3/16. Pairs are
// the (simulated, measured) values in the order added: TTFT (30, 20), (50,
// 100); ITL (10, 10), (50, 25).
func TestFidelity(t *testing.T) {
	ms := int64(1e6)
	row := func(sched, first, finish, out, mTTFT, mE2E, mQueue, mPrefill, mDecode int64, outcome string) *RequestRow {
		return &RequestRow{ArrivalNs: 0, ScheduledNs: sched * ms, FirstTokenNs: first * ms, FinishNs: finish * ms, OutputTokens: out,
			MeasuredTTFTNs: mTTFT * ms, MeasuredE2ENs: mE2E * ms, MeasuredQueueNs: mQueue * ms, MeasuredPrefillNs: mPrefill * ms,
			MeasuredDecodeNs: mDecode * ms, Outcome: outcome}
	}
	var c FidelityCollector
	if c.Result() != nil {
		t.Fatal("a run without measurements has a fidelity section")
	}
	c.Add(row(10, 30, 130, 11, 20, 120, 0, 20, 100, OutcomeCompleted))
	c.Add(row(0, 50, 250, 5, 100, 200, 5, 95, 100, OutcomeCompleted))
	none := row(0, 1, 2, 2, 0, 0, 0, 0, 0, OutcomeCompleted)
	none.MeasuredTTFTNs, none.MeasuredE2ENs, none.MeasuredQueueNs, none.MeasuredPrefillNs, none.MeasuredDecodeNs = -1, -1, -1, -1, -1
	c.Add(none)
	c.Add(row(0, 0, 0, 5, 1, 1, 1, 1, 1, OutcomeRejected))
	f := c.Result()
	want := FidelityMetric{Requests: 2, Simulated: Moments{40, 30, 50}, Measured: Moments{60, 20, 100}, MAPE: 0.5, MAEMs: 30}
	if f.TTFT != want {
		t.Errorf("TTFT %+v, want %+v", f.TTFT, want)
	}
	for _, c := range []struct {
		name      string
		mape, mae float64
	}{{"itl", 0.5, 12.5}, {"e2e", (10.0/120 + 50.0/200) / 2, 30}, {"queue", 1, 7.5}, {"prefill", (45.0 / 95) / 2, 22.5}, {"decode", 0.5, 50}} {
		m := f.Metric(c.name)
		if m.Requests != 2 || m.MAPE != c.mape || m.MAEMs != c.mae {
			t.Errorf("%s: %+v, want MAPE %g MAE %g", c.name, m, c.mape, c.mae)
		}
	}
	if got, got2 := f.TTFT.MeanError(), f.E2E.MeanError(); math.Abs(got+1.0/3) > 1e-12 || math.Abs(got2-3.0/16) > 1e-12 {
		t.Errorf("mean errors: TTFT %g, want -1/3; E2E %g, want 3/16", got, got2)
	}
	for name, want := range map[string][][2]int64{"ttft": {{30 * ms, 20 * ms}, {50 * ms, 100 * ms}}, "itl": {{10 * ms, 10 * ms}, {50 * ms, 25 * ms}}} {
		if got := c.Pairs(name); !slices.Equal(got, want) {
			t.Errorf("%s pairs %v, want %v", name, got, want)
		}
	}
}
