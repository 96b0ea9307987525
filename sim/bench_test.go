package sim

import (
	"context"
	"testing"

	"github.com/kvsim/kvsim/scenarios"
)

// BenchmarkRun runs the embedded default scenario (3,000 synthetic
// requests on 8 workers, KVCR on) to its end without writing its rows,
// under a cancellable context as the CLI's: the event loop's cost, which
// the whole-run benchmarks of benchmarks/perf multiply.
func BenchmarkRun(b *testing.B) {
	p := defaultPlan(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for b.Loop() {
		if _, err := p.Run(ctx, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// defaultPlan is the plan of the embedded default scenario with sets.
func defaultPlan(tb testing.TB, sets ...string) *Plan {
	tb.Helper()
	sc, err := scenarios.LoadDefault(sets)
	return prepared(tb, sc, err)
}
