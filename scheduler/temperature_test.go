package scheduler

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kvsim/kvsim/block"
	"github.com/kvsim/kvsim/lifecycle"
)

// TestSoftmax: costs 2, 4, 6 at temperature 0.5. The range is 4, so the
// exponents -(c - 2) / (4 x 0.5) are 0, -1, -2: weights 1, e^-1 =
// 0.367879, e^-2 = 0.135335, sum 1.503215, probabilities 0.665241,
// 0.244728, 0.090031, cumulative 0.665241, 0.909969, 1. A draw u picks the
// first index whose cumulative sum is at least u. Equal costs are 1/n each:
// four of them, cumulative 0.25, 0.5, 0.75, 1. Ten equal costs add ten
// 1/10 up to 1 - 2^-53, below u = 1 (out of a draw's range, as rounding can
// leave a draw above the sum): the last index. A temperature so small
// that range x temperature underflows to 0 (0.5 x 5e-324, below half the
// least subnormal) is its limit towards 0: the cheapest workers alone,
// each as likely, the dearest never. So is a weight that underflows:
// costs 6 and 2 at temperature 0.001 weigh e^-1000 = 0 and 1, and the
// dearest is not drawn, not by u = 0, nor as the last index when ten
// cheapest ones sum to below u = 1.
func TestSoftmax(t *testing.T) {
	for _, c := range []struct {
		costs []float64
		temp  float64
		u     float64
		want  int
	}{
		{[]float64{2, 4, 6}, 0.5, 0, 0},
		{[]float64{2, 4, 6}, 0.5, 0.665, 0},
		{[]float64{2, 4, 6}, 0.5, 0.6653, 1},
		{[]float64{2, 4, 6}, 0.5, 0.9099, 1},
		{[]float64{2, 4, 6}, 0.5, 0.9100, 2},
		{[]float64{2, 4, 6}, 0.5, 0.999, 2},
		{[]float64{6, 4, 2}, 0.5, 0.5, 2}, // order is the caller's: the cheapest is last
		{[]float64{6, 4, 2}, 0.5, 0.0901, 1},
		{[]float64{5, 5, 5, 5}, 3, 0.25, 0},
		{[]float64{5, 5, 5, 5}, 3, 0.2501, 1},
		{[]float64{5, 5, 5, 5}, 3, 0.75, 2},
		{[]float64{5, 5, 5, 5}, 3, 0.7501, 3},
		{[]float64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 1, 1, 9},
		{[]float64{2.5, 2, 2}, 5e-324, 0, 1},
		{[]float64{2.5, 2, 2}, 5e-324, 0.5, 1},
		{[]float64{2.5, 2, 2}, 5e-324, 0.5001, 2},
		{[]float64{2.5, 2, 2}, 5e-324, 0.9999, 2},
		{[]float64{6, 2}, 0.001, 0, 1},
		{[]float64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 5}, 0.001, 1, 9},
	} {
		if got := softmax(c.costs, c.temp, c.u); got != c.want {
			t.Errorf("costs %v, temperature %g, u %g: index %d, want %d", c.costs, c.temp, c.u, got, c.want)
		}
	}
}

// fixedDraw is a rand.Source whose Float64 is u (to 2^-53).
type fixedDraw float64

func (u fixedDraw) Uint64() uint64 { return uint64(float64(u) * (1 << 53)) }

// TestTemperatureCosts: kv_aware at temperature 0.5 samples the credited
// costs of the schedulable workers, in id order. A 4-block request; worker
// 0 is idle: cost 4. Worker 1 holds blocks 1-2 in G1 and has 4 decode
// blocks: 4 - 2 + 4 = 6. Worker 2 holds all 4 in G2 (credit 0.75 x 4 = 3)
// and has 7 prefill blocks pending: 7 + 4 - 3 = 8. Worker 3 holds all 4 in
// G1 but is draining: no cost. Costs 4, 6, 8 are TestSoftmax's 2, 4, 6
// shifted: cumulative 0.665241, 0.909969, 1. (Without credit the costs
// would be 4, 8, 11 and u = 0.7 would pick worker 0; with worker 3's cost
// of 0 among them, u = 0.95 would pick worker 3.)
func TestTemperatureCosts(t *testing.T) {
	chain := []uint64{1, 2, 3, 4}
	for _, c := range []struct {
		u    float64
		want int32
	}{{0.5, 0}, {0.66, 0}, {0.67, 1}, {0.9, 1}, {0.91, 2}, {0.95, 2}} {
		r, tab, err := newWithLife(Config{Policy: KVAware, OverlapCredit: 1, HostHitWeight: 0.75, PrefillLoadScale: 1,
			BlockSize: 16, Temperature: 0.5, Chains: &block.Chains{}}, rand.New(fixedDraw(c.u)))
		if err != nil {
			t.Fatal(err)
		}
		for range 4 {
			tab.Add(lifecycle.Ready)
		}
		r.Stored(0, 1, G1, blocks(r, chain, 0, 2))
		r.Stored(0, 2, G2, blocks(r, chain, 0, 4))
		r.Stored(0, 3, G1, blocks(r, chain, 0, 4))
		setReady(tab, 3, false)
		r.loads[1], r.loads[2] = load{decodeBlocks: 4}, load{prefillBlocks: 7}
		r.rekey(1)
		r.rekey(2)
		if got := pick(t, r, rq(64, chain...)).Worker; got != c.want {
			t.Errorf("u %g: worker %d, want %d", c.u, got, c.want)
		}
	}
}

// TestTemperatureFrequencies: 200,000 draws from the router's stream over
// costs 0, 3, 9 at temperature 2. Exponents -c / (9 x 2) are 0, -1/6,
// -1/2: weights 1, 0.846482, 0.606531, sum 2.453012, probabilities
// 0.407662, 0.345078, 0.247260. A frequency's standard error is at most
// sqrt(0.25 / 200,000) = 0.0011; the tolerance 0.005 is 4.5 of them. A
// temperature that multiplied the exponent instead (0, -2/3, -2: 0.607,
// 0.311, 0.082), or a softmax without the range (0, -1.5, -4.5: 0.81,
// 0.18, 0.01), is far outside it.
func TestTemperatureFrequencies(t *testing.T) {
	r, tab, err := newWithLife(Config{Policy: KVAware, OverlapCredit: 1, PrefillLoadScale: 1, BlockSize: 16, Temperature: 2},
		rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	for w, pending := range []int{0, 3, 9} {
		tab.Add(lifecycle.Ready)
		r.loads[w] = load{prefillBlocks: pending}
		r.rekey(int32(w))
	}
	const n = 200_000
	var count [3]int
	for range n {
		count[r.kvAware(nil, 0)]++
	}
	for w, p := range []float64{0.407662, 0.345078, 0.247260} {
		if f := float64(count[w]) / n; math.Abs(f-p) > 0.005 {
			t.Errorf("worker %d picked %.4f of the time, want %.4f ± 0.005", w, f, p)
		}
	}
}
