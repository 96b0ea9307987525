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
	sc, err := scenarios.LoadDefault(nil)
	if err != nil {
		b.Fatal(err)
	}
	p, err := Prepare(sc)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for b.Loop() {
		if _, err := p.Run(ctx, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
