package sim

import (
	"math"
	"testing"
)

// TestLifeArgRoundTrip: every kind with the smallest, a middle and the
// largest worker id unpacks to what was packed, and the scenario's own
// event packs to 0. The field holds 32 bits, so every int32 round-trips,
// negative ones too, and no worker id can spill into another field.
func TestLifeArgRoundTrip(t *testing.T) {
	for _, kind := range []lifeKind{lifeScenario, lifeReady, lifeDrainTimeout, lifeRetire, math.MaxUint8} {
		for _, w := range []int32{0, 1, 255, 256, 1 << 24, math.MaxInt32, -1, math.MinInt32} {
			a := lifeArg{kind: kind, worker: w}
			if got := unpackLife(a.pack()); got != a {
				t.Errorf("%+v: unpacked %+v", a, got)
			}
		}
	}
	if x := (lifeArg{kind: lifeScenario}).pack(); x != 0 {
		t.Errorf("the scenario event packs to %#x, want 0", x)
	}
	if x := (lifeArg{kind: lifeRetire, worker: math.MaxInt32}).pack(); x != 3|math.MaxInt32<<8 {
		t.Errorf("retire of worker MaxInt32 packs to %#x, want %#x", x, uint64(3|math.MaxInt32<<8))
	}
}
