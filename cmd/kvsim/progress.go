package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/kvsim/kvsim/des"
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
