package scengen

import (
	"bytes"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/scenarios"
	"github.com/kvsim/kvsim/workload"
)

// TestValid loads many cases, small and large, as a user's files would be:
// every scenario passes the project's validation, every trace line reads
// as a request, and a seed gives the same bytes twice.
func TestValid(t *testing.T) {
	dir := t.TempDir()
	for i := range uint64(1000) {
		seed, gen := i, Generate
		if i >= 500 {
			seed, gen = i-500, GenerateLarge
		}
		sc, c := load(t, dir, gen, seed)
		tr := sc.Workload.Trace
		src := workload.Open(tr.Format, bytes.NewReader(c.Trace), workload.TraceOptions{
			TraceBlockSize: tr.BlockSize, EngineBlockSize: sc.Cluster.Engine.BlockSize, TimeScale: tr.TimeScale})
		n := 0
		for {
			_, err := src.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("seed %d: trace: %v\n%s", seed, err, c.Trace)
			}
			n++
		}
		if n == 0 {
			t.Fatalf("seed %d: an empty trace", seed)
		}
	}
}

// load writes gen's case of seed into dir and loads it as a user's file,
// failing the test unless a second call gives the same bytes and the
// scenario passes validation.
func load(t *testing.T, dir string, gen func(uint64) Case, seed uint64) (*scenarios.Scenario, Case) {
	t.Helper()
	c := gen(seed)
	if again := gen(seed); !bytes.Equal(c.Scenario, again.Scenario) || !bytes.Equal(c.Trace, again.Trace) {
		t.Fatalf("seed %d: two different cases", seed)
	}
	path, err := c.Write(filepath.Join(dir, "case"))
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scenarios.Load(path, nil)
	if err != nil {
		t.Fatalf("seed %d: %v\n%s", seed, err, c.Scenario)
	}
	return sc, c
}

// TestOrders: of 1000 small cases some drains evacuate, by move and by
// copy, and some adds prewarm; a case writes kvcr.background_timeout and
// background_inflight exactly when it writes an order, and never without
// KVCR and G2 (validation, in TestValid, refuses an order without them).
func TestOrders(t *testing.T) {
	var evacuate, copies, prewarm int
	for seed := range uint64(1000) {
		y := string(Generate(seed).Scenario)
		e, p := strings.Count(y, "evacuate: "), strings.Count(y, "prewarm: ")
		evacuate, copies, prewarm = evacuate+e, copies+strings.Count(y, "mode: copy}"), prewarm+p
		background := strings.Contains(y, "  background_timeout: ") && strings.Contains(y, "  background_inflight: ")
		if background != (e+p > 0) || strings.Contains(y, "background") && !background {
			t.Fatalf("seed %d: %d evacuations, %d prewarms, background keys %t:\n%s", seed, e, p, background, y)
		}
	}
	if evacuate == 0 || copies == 0 || prewarm == 0 {
		t.Errorf("%d evacuations (%d by copy), %d prewarms in 1000 cases", evacuate, copies, prewarm)
	}
}

// TestValidChaos loads many chaos cases: every scenario passes validation,
// draws faults, and a seed gives the same bytes twice.
func TestValidChaos(t *testing.T) {
	dir := t.TempDir()
	faulted := 0
	for seed := range uint64(500) {
		sc, _ := load(t, dir, GenerateChaos, seed)
		if slices.ContainsFunc(sc.Events, func(ev scenarios.Event) bool { return ev.Fault() }) {
			faulted++
		}
	}
	if faulted < 400 {
		t.Errorf("%d of 500 chaos cases have a fault, want most", faulted)
	}
}
