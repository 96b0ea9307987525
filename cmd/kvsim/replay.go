package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/scenarios"
	"github.com/kvsim/kvsim/sim"
	"github.com/kvsim/kvsim/sim/des"
)

type replayFlags struct {
	out     string
	sets    []string
	check   bool
	force   bool
	expect  string
	cpuProf string
	memProf string
}

func newReplay() *cobra.Command {
	var f replayFlags
	cmd := &cobra.Command{
		Use:   "replay [SCENARIO]",
		Short: "Run a scenario (the built-in default without one) and write its report",
		Long: "replay runs a scenario and writes requests.parquet and summary.json to a new\n" +
			"directory (default out/<name>), atomically. Without SCENARIO it runs the embedded\n" +
			"default scenario.",
		Args: positional(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return replay(cmd, first(args), f)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.out, "out", "o", "", "output directory (default out/<scenario name>)")
	fl.StringArrayVar(&f.sets, "set", nil, "override a scenario key: --set cluster.workers=32 (repeatable)")
	fl.BoolVar(&f.check, "check", false, "verify model invariants during the run; a violation fails it (exit 1)")
	fl.BoolVar(&f.force, "force", false, "replace an existing output directory once the run succeeds")
	fl.StringVar(&f.expect, "expect-digest", "", "fail (exit 1) unless the run's digest is HEX; the report is still written")
	fl.StringVar(&f.cpuProf, "cpuprofile", "", "write a pprof CPU profile of the run to FILE")
	fl.StringVar(&f.memProf, "memprofile", "", "write a pprof heap profile (in use at the run's last garbage collection) to FILE")
	return cmd
}

func replay(cmd *cobra.Command, path string, f replayFlags) (err error) {
	sc, err := loadScenario(path, f.sets)
	if err != nil {
		return err
	}
	dir := f.out
	if dir == "" {
		dir = filepath.Join("out", sc.Name)
	}
	out, err := report.Create(dir, f.force)
	if err != nil {
		return usageError{err}
	}
	defer out.Abort() // no-op after Commit
	opt := sim.Options{Check: f.check}
	stderr := cmd.ErrOrStderr()
	if f, ok := stderr.(*os.File); ok && isTerminal(f) {
		opt.Progress = progress(stderr, time.Now())
	}
	stopProfile, err := startCPUProfile(f.cpuProf)
	if err != nil {
		return err
	}
	sum, err := runTo(cmd.Context(), out.Path, sc, opt)
	stopProfile()
	if opt.Progress != nil {
		fmt.Fprint(stderr, "\r\033[K")
	}
	if err != nil {
		return err
	}
	if f.memProf != "" {
		if err := writeHeapProfile(f.memProf); err != nil {
			return err
		}
	}
	if err := out.Commit(); err != nil {
		return err
	}
	printSummary(cmd.OutOrStdout(), sum, dir)
	if f.expect != "" && !strings.EqualFold(f.expect, sum.Digest) {
		return fmt.Errorf("digest mismatch: the run's digest is %s, expected %s (kvsim compare shows what changed)", sum.Digest, f.expect)
	}
	if unmet := sim.Unmet(sc, sum.Counters); len(unmet) > 0 {
		return fmt.Errorf("the run does not show what the scenario expects: %s", strings.Join(unmet, "; "))
	}
	return nil
}

// runTo runs sc, writing its tables through path, and writes summary.json
// beside them with the wall time the run took. It returns the summary.
func runTo(ctx context.Context, path func(name string) string, sc *scenarios.Scenario, opt sim.Options) (*sim.Summary, error) {
	start := time.Now()
	tables, err := report.NewTables(path)
	if err != nil {
		return nil, err
	}
	opt.Sink = tables
	res, err := sim.Run(ctx, sc, opt)
	if err != nil {
		tables.Close(nil, nil)
		return nil, err
	}
	if err := tables.Close(res.Workers, res.Counters); err != nil {
		return nil, err
	}
	sum := res.Summary
	sum.WallTimeS = time.Since(start).Seconds()
	return sum, report.WriteJSON(path("summary.json"), sum)
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// progress returns a callback that redraws one status line at most every
// 200 ms of wall time.
func progress(w io.Writer, start time.Time) func(int64, des.Time) {
	last := start
	return func(done int64, now des.Time) {
		t := time.Now()
		if t.Sub(last) < 200*time.Millisecond {
			return
		}
		last = t
		el := t.Sub(start).Seconds()
		fmt.Fprintf(w, "\r\033[K%d requests done, virtual %v, %.0f requests/s, wall %.1fs",
			done, time.Duration(now).Round(time.Millisecond), float64(done)/el, el)
	}
}
