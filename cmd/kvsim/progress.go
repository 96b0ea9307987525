package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/scenarios"
	"github.com/kvsim/kvsim/workload"
)

// showProgress reports whether w is a terminal a person watches: progress
// goes only there, never into a file or a pipe.
func showProgress(w io.Writer, quiet bool) bool {
	f, ok := w.(*os.File)
	if quiet || !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// newBar returns a progress bar on w counting to total (-1: unknown) in
// unit, with the rate and the time left. It redraws at every update: its
// callers update it rarely (a sweep's runs) or throttle (replayProgress).
func newBar(w io.Writer, total int64, unit string) *progressbar.ProgressBar {
	return progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetItsString(unit),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionSetWidth(24),
		progressbar.OptionSetRenderBlankState(true), // drawn, and its clock started, at once
		progressbar.OptionClearOnFinish(),
		progressbar.OptionShowDescriptionAtLineEnd(),
	)
}

// replayProgress returns the run's progress callback drawing bar, at most
// every 200 ms of wall time: requests done of the total, virtual time,
// requests per second and time left.
func replayProgress(bar *progressbar.ProgressBar) func(int64, des.Time) {
	var last time.Time
	return func(done int64, now des.Time) {
		if t := time.Now(); t.Sub(last) >= 200*time.Millisecond {
			last = t
			bar.Describe(fmt.Sprintf("virtual %v", time.Duration(now).Round(time.Second)))
			bar.Set64(done) // draws again, with the count
		}
	}
}

// requestCount returns how many requests sc's workload holds, for the
// progress total: the synthetic count, or the trace's records (its
// non-blank lines, less the header of a CSV; an otel trace's llm_request
// spans, read) up to its limit; -1 when the trace cannot be read.
func requestCount(sc *scenarios.Scenario) int64 {
	w := sc.Workload
	if w.Synthetic != nil {
		return int64(w.Synthetic.Requests)
	}
	f, err := os.Open(w.Trace.Path)
	if err != nil {
		return -1
	}
	defer f.Close()
	var n int64
	if w.Trace.Format == workload.FormatOtel {
		n, err = countOtel(f)
	} else {
		n, err = countRecords(f)
	}
	if err != nil {
		return -1
	}
	if w.Trace.Format == workload.FormatAzure {
		n--
	}
	if l := int64(w.Trace.Limit); l > 0 && l < n {
		n = l
	}
	return n
}

// countOtel counts the requests of an otel trace, reading it as a run
// does (but for the chains: one block of 2^24 tokens is longer than any
// prompt).
func countOtel(r io.Reader) (int64, error) {
	src := workload.NewOtel(r, workload.TraceOptions{EngineBlockSize: workload.MaxTokens + 1, TimeScale: 1})
	var n int64
	for {
		if _, err := src.Next(); err == io.EOF {
			return n, nil
		} else if err != nil {
			return 0, err
		}
		n++
	}
}

// countRecords counts r's lines holding anything but white space.
func countRecords(r io.Reader) (int64, error) {
	var n int64
	blank := true
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		c, err := br.ReadByte()
		if err == io.EOF {
			if !blank {
				n++
			}
			return n, nil
		}
		if err != nil {
			return 0, err
		}
		switch c {
		case '\n':
			if !blank {
				n++
			}
			blank = true
		case ' ', '\t', '\r':
		default:
			blank = false
		}
	}
}
