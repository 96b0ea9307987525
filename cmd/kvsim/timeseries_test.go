package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kvsim/kvsim/study"
	"github.com/kvsim/kvsim/workload/tracestest"
)

// TestTimeSeriesGuard: a run whose time series would pass
// sim.MaxSampleRows is refused before it starts, as bad input naming the
// key, with the estimate and the way out: the default scenario on a
// million workers would write 1,000,000 x 168 rows (sim.TestSampleRows
// works the 168 samples), and 4 s samples, 42 a worker, fit. It takes no
// time: nothing is run or read. Every scenario shipped, the contract's
// and the benchmarks' (scaling.yaml up to 2,048 workers, as
// benchmarks/perf runs it, and the conversation trace on 128) pass.
func TestTimeSeriesGuard(t *testing.T) {
	t.Run("a million workers", func(t *testing.T) {
		// The memory guard, checked first, lets a million workers (2.9
		// GiB) through on a machine that may use more than 3 GiB.
		if limit, source := study.MachineMemory(); limit > 0 && limit < 3<<30 {
			t.Skipf("this machine may use %d MiB (%s): the memory guard refuses a million workers first", limit>>20, source)
		}
		out := filepath.Join(t.TempDir(), "run")
		start := time.Now()
		code, _, stderr := kvsim(t, "replay", "-o", out, "--set", "cluster.workers=1000000")
		want := "kvsim: --set: cluster.workers: the run would write about 168.0 million time-series rows (1000000 workers, a row each every 1s up to 2m47.334s, " +
			"the workload's last arrival, as estimated), more than the 50.0 million a run may write; set report.sample_interval to 4s or more, or run fewer workers\n"
		if took := time.Since(start); code != exitBadInput || stderr != want || took > 5*time.Second {
			t.Errorf("exit %d after %v, stderr %q; want %d within a second or two, %q", code, took, stderr, exitBadInput, want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("the refused run wrote %s: %v", out, err)
		}
		if code, _, stderr := kvsim(t, "validate", "--set", "cluster.workers=1000000", "--set", "report.sample_interval=4s"); code != exitOK {
			t.Errorf("4 s samples: exit %d, %s", code, stderr)
		}
	})

	// The default scenario (8 workers) with a transfer latency of 292
	// years: its requests end by 3 minutes, and the sources' receipts
	// of its pulls lie 2,562,047 hours ahead; the run is stopped as a
	// runaway (sim.TestRunawayIsStopped works the figures) at once, as
	// bad input and with no output, where it used to sample for ever.
	t.Run("a runaway", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "run")
		start := time.Now()
		code, _, stderr := kvsim(t, "replay", "-o", out, "--set", "kvcr.latency=2562047h")
		want := "kvsim: default scenario: report.sample_interval: the run would write more than 100.0 million time-series rows"
		if took := time.Since(start); code != exitBadInput || !strings.HasPrefix(stderr, want) || took > 10*time.Second {
			t.Errorf("exit %d after %v, stderr %q; want %d within seconds, %q...", code, took, stderr, exitBadInput, want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("the stopped run wrote %s: %v", out, err)
		}
	})

	t.Setenv("KVSIM_TRACES", tracestest.Dir(t))
	t.Setenv("KVSIM_VLLM_TRACES", tracestest.VLLMDir(t))
	files, _ := filepath.Glob("../../scenarios/*.yaml")
	contract, _ := filepath.Glob(filepath.Join(tracestest.Contract(t), "*.yaml"))
	bench, _ := filepath.Glob("../../benchmarks/scenarios/*.yaml")
	type run struct {
		scenario string
		sets     []string
	}
	var runs []run
	for _, f := range append(append(files, contract...), bench...) {
		runs = append(runs, run{f, nil})
	}
	runs = append(runs, run{"../../scenarios/conversation-16w.yaml", []string{"cluster.workers=128"}})
	for _, w := range []int{32, 128, 512, 2048} {
		runs = append(runs, run{"../../benchmarks/scenarios/scaling.yaml", []string{fmt.Sprintf("cluster.workers=%d", w),
			fmt.Sprintf("workload.synthetic.rate=%d", 125*w/8), fmt.Sprintf("workload.synthetic.requests=%d", 2000*w/8)}})
	}
	for _, r := range runs {
		if _, err := study.Prepare(r.scenario, r.sets, 1, false); err != nil {
			t.Errorf("%s %s: %v", r.scenario, strings.Join(r.sets, " "), err)
		}
	}
}
