package sim

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/scenarios"
)

// TestPrepareRefuses: what the scenario's keys allow but the model cannot
// run is refused by Prepare, naming the file, line and key.
//   - A fixed timing on 1 x h100 running llama-2-7b: a prefill pass of 4
//     sequences of 2048 tokens after 2048 of context takes the fixed 10 ms,
//     where the hardware needs 124.999441 ms (engine.TestCheckPhysics works
//     the bound).
//   - A linear model of base 1 ms on Mixtral-8x7B (engine/testdata) on
//     2 x h100: a decode step reads 12.9e9 active parameters x 2 B of
//     weights at 2 x 3.35e12 B/s, 3.85 ms, more than the 1 ms pass.
//   - An expect entry naming no counter.
func TestPrepareRefuses(t *testing.T) {
	mixtral, err := filepath.Abs(filepath.Join("..", "engine", "testdata", "models", "mixtral-8x7b.json"))
	if err != nil {
		t.Fatal(err)
	}
	base := "name: t\nworkload:\n  synthetic: {requests: 10, rate: 1}\ncluster:\n  workers: 2\n"
	for _, c := range []struct{ yaml, want string }{
		{base + "  engine: {timing: {model: fixed, gpu: h100, model_preset: llama-2-7b}}\n",
			`s.yaml:6: cluster.engine.timing: the fixed timing model is faster than the hardware (1 x h100 running llama-2-7b): ` +
				`a prefill pass of 4 sequences of 2048 tokens after 2048 tokens of context takes 10ms, the physical bound is 124.999441ms`},
		{base + "  engine: {timing: {model: linear, base: 1ms, model_config: " + mixtral + ", gpu: h100, tp: 2}}\n",
			`s.yaml:6: cluster.engine.timing: the linear timing model is faster than the hardware (2 x h100 running ` + mixtral + `)`},
		{base + "expect: [pulls_done > 0]\n", `s.yaml:6: expect[0]: no metric is named "pulls_done"`},
		{base + "expect: [pulls_failed > 0, ttft_p99_m < 5]\n", `s.yaml:6: expect[1]: no metric is named "ttft_p99_m" (did you mean "ttft_p99_ms"?)`},
		{base + "expect: [\"events[0].removed_after_s < 30\"]\n", `s.yaml:6: expect[0]: "events[0].removed_after_s": the scenario has no events`},
	} {
		sc, err := scenarios.Parse("s.yaml", []byte(c.yaml), nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Prepare(sc)
		var ie *scenarios.InputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v\nwant %s", err, c.want)
		}
	}
}

// TestMemory: a plan's estimate is 64 MiB and 3 KiB for each worker it
// ever holds, naming the key that adds the most of them. 1,000 workers and
// events adding 200 and 300: 64 MiB + 1,500 x 3 KiB = 67,108,864 + 4,608,000 = 71,716,864 bytes (68.4 MiB),
// named cluster.workers. 10 workers and events adding 200 and 300: the
// second event adds the most, and is named: 64 MiB + 510 x 3 KiB = 67,108,864 + 1,566,720 = 68,675,584 bytes. CheckMemory refuses the
// first under a limit of 70,000,000 bytes (66.8 MiB) and passes it under
// 80,000,000.
func TestMemory(t *testing.T) {
	body := "workload:\n  synthetic: {requests: 10, rate: 1}\nevents:\n  - {at: 1s, add: 200}\n  - {at: 2s, add: 300}\ncluster:\n  workers: "
	for _, c := range []struct {
		workers string
		bytes   int64
		key     string
	}{{"1000", 71_716_864, "cluster.workers"}, {"10", 68_675_584, "events[1].add"}} {
		sc, err := scenarios.Parse("s.yaml", []byte(body+c.workers+"\n"), nil)
		if err != nil {
			t.Fatal(err)
		}
		p, err := Prepare(sc)
		if err != nil {
			t.Fatal(err)
		}
		if b, key := p.Memory(); b != c.bytes || key != c.key {
			t.Errorf("%s workers: Memory() = %d, %s; want %d, %s", c.workers, b, key, c.bytes, c.key)
		}
		if c.workers != "1000" {
			continue
		}
		err = p.CheckMemory(70_000_000, "a test")
		want := "s.yaml:7: cluster.workers: the run needs about 68 MiB of memory (1500 workers at about 3 KiB each), more than the 67 MiB it may use (a test)"
		if err == nil || err.Error() != want {
			t.Errorf("CheckMemory(70e6) = %v\nwant %s", err, want)
		}
		if err := p.CheckMemory(80_000_000, "a test"); err != nil {
			t.Error(err)
		}
	}
}
