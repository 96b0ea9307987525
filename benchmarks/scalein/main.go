// Command scalein tabulates a scale-in study from kvsim sweep directories:
// for every run, the pulls by outcome, staging refused because the source
// was draining, the blocks moves removed and lost, how long the drained
// workers took to go, and TTFT of the requests arriving in a window before
// and after the drain. It prints a markdown table; docs/studies/scale-in.md
// shows how it was produced.
//
//	go run ./benchmarks/scalein -at 36m1s -window 3m out/study-off out/study-kvcr
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/report/parquetio"
	"github.com/kvsim/kvsim/sim"
)

func main() {
	at := flag.Duration("at", 0, "time of the drain")
	window := flag.Duration("window", 3*time.Minute, "TTFT window before and after the drain")
	flag.Parse()
	if flag.NArg() == 0 || *at == 0 {
		fmt.Fprintln(os.Stderr, "usage: scalein -at DURATION [-window DURATION] SWEEP_DIR...")
		os.Exit(2)
	}
	fmt.Println("| KVCR | drained | pulls success / partial / failed / expired / rejected / superseded | staging refused (draining) | move removed / lost blocks | drained workers gone after (max) | TTFT p50 before / after (ms) | TTFT p99 before / after (ms) |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	for _, dir := range flag.Args() {
		if err := sweep(dir, int64(*at), int64(*window)); err != nil {
			fmt.Fprintln(os.Stderr, "scalein:", err)
			os.Exit(1)
		}
	}
}

func sweep(dir string, at, window int64) error {
	keys, rows, err := parquetio.ReadSweep(filepath.Join(dir, report.SweepFile))
	if err != nil {
		return err
	}
	modeKey := slices.Index(keys, "router.hints.mode")
	for _, r := range rows {
		run := filepath.Join(dir, report.SweepRunDir(r.Run))
		mode := "off"
		if modeKey >= 0 {
			mode = r.Params[modeKey]
		}
		workers, err := parquetio.ReadWorkers(filepath.Join(run, report.WorkersFile))
		if err != nil {
			return err
		}
		drained, gone := 0, int64(0)
		for _, w := range workers {
			if w.DrainNs >= 0 {
				drained++
				gone = max(gone, w.RemovedNs-w.DrainNs)
			}
		}
		var before, after report.Dist
		err = parquetio.ReadRequests(filepath.Join(run, report.RequestsFile), func(q *report.RequestRow) error {
			if q.Outcome != report.OutcomeCompleted {
				return nil
			}
			switch {
			case q.ArrivalNs >= at-window && q.ArrivalNs < at:
				before.Add(q.FirstTokenNs - q.ArrivalNs)
			case q.ArrivalNs >= at && q.ArrivalNs < at+window:
				after.Add(q.FirstTokenNs - q.ArrivalNs)
			}
			return nil
		})
		if err != nil {
			return err
		}
		counters, err := parquetio.ReadCounters(filepath.Join(run, report.CountersFile))
		if err != nil {
			return err
		}
		byName := map[string]int64{}
		for _, c := range counters {
			byName[c.Name] = c.Value
		}
		count := sim.CountersOf(byName)
		b, a := before.Percentiles(), after.Percentiles()
		goneText := "—"
		if drained > 0 {
			goneText = time.Duration(gone).Round(time.Millisecond).String()
		}
		fmt.Printf("| %s | %d | %d / %d / %d / %d / %d / %d | %d | %d / %d | %s | %.1f / %.1f | %.1f / %.1f |\n", mode, drained,
			r.PullsSuccess, r.PullsPartial, r.PullsFailed, r.PullsExpired, r.PullsRejected, r.PullsSuperseded,
			count.PullsRejectedDraining, count.MoveRemovedBlocks, count.MoveLostBlocks, goneText, b.P50, a.P50, b.P99, a.P99)
	}
	return nil
}
