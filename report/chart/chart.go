// Package chart renders the charts of a run or a sweep directory as PNG and
// SVG files with gonum.org/v1/plot, reading only the Parquet tables kvsim
// wrote.
package chart

import (
	"cmp"
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/kvsim/kvsim/report"
)

// Formats are the file types every chart is written in.
var Formats = []string{"png", "svg"}

const (
	width  = 10 * vg.Inch
	height = 5 * vg.Inch
	// buckets is about how many time buckets a run's charts use.
	buckets = 200
	// maxWorkerLines is how many workers get a line each; more are drawn as
	// their minimum, mean and maximum.
	maxWorkerLines = 16
)

// save writes p as dir/name.png and dir/name.svg and returns the paths.
func save(p *plot.Plot, dir, name string) ([]string, error) {
	var out []string
	for _, f := range Formats {
		path := filepath.Join(dir, name+"."+f)
		if err := p.Save(width, height, path); err != nil {
			return nil, fmt.Errorf("chart: %s: %w", path, err)
		}
		out = append(out, path)
	}
	return out, nil
}

// event is a lifecycle event drawn as a vertical line.
type event struct {
	t     float64 // seconds
	label string
}

// markEvents draws each event as a labelled dashed vertical line up to top;
// labels step down so that events close together stay readable.
func markEvents(p *plot.Plot, evs []event, top float64) error {
	for i, e := range evs {
		l, err := plotter.NewLine(plotter.XYs{{X: e.t, Y: 0}, {X: e.t, Y: top}})
		if err != nil {
			return err
		}
		l.Color = color.Gray{Y: 96}
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		y := top * float64(1-0.06*float64(i%6))
		lb, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: e.t, Y: y}}, Labels: []string{e.label}})
		if err != nil {
			return err
		}
		p.Add(l, lb)
	}
	return nil
}

// lifecycle lists the workers' additions, drains and removals, one event
// for all workers of a kind at the same instant.
func lifecycle(workers []report.WorkerRow) []event {
	type key struct {
		ns   int64
		kind string
	}
	var order []key
	ids := map[key][]string{}
	note := func(ns int64, kind string, w int32) {
		k := key{ns, kind}
		if _, ok := ids[k]; !ok {
			order = append(order, k)
		}
		ids[k] = append(ids[k], strconv.Itoa(int(w)))
	}
	for _, w := range workers {
		if w.AddedNs > 0 {
			note(w.AddedNs, "add", w.Worker)
		}
		if w.DrainNs >= 0 {
			note(w.DrainNs, "drain", w.Worker)
		}
		if w.RemovedNs >= 0 {
			note(w.RemovedNs, "gone", w.Worker)
		}
	}
	slices.SortStableFunc(order, func(a, b key) int { return cmp.Compare(a.ns, b.ns) })
	evs := make([]event, len(order))
	for i, k := range order {
		evs[i] = event{float64(k.ns) / 1e9, k.kind + " " + strings.Join(ids[k], ",")}
	}
	return evs
}

// Run renders a run directory's charts into dir/charts and returns the
// files written: ttft (p50 and p99 by arrival time), queue (running and
// waiting requests), pulls (pulls ended by outcome), g1 and g2 (blocks in
// use per worker); lifecycle events are marked on each.
func Run(dir string) ([]string, error) {
	path := func(n string) string { return filepath.Join(dir, n) }
	workers, err := report.ReadWorkers(path("workers.parquet"))
	if err != nil {
		return nil, err
	}
	evs := lifecycle(workers)
	out := filepath.Join(dir, "charts")
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	var samples []report.SampleRow // read once for the queue and occupancy charts
	err = report.ReadSamples(path("timeseries.parquet"), func(r *report.SampleRow) error {
		samples = append(samples, *r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	var files []string
	for _, draw := range []func() ([]string, error){
		func() ([]string, error) { return drawTTFT(path, evs, out) },
		func() ([]string, error) { return drawQueue(samples, evs, out) },
		func() ([]string, error) { return drawPulls(path, evs, out) },
		func() ([]string, error) { return drawOccupancy(samples, evs, out) },
	} {
		f, err := draw()
		if err != nil {
			return nil, err
		}
		files = append(files, f...)
	}
	return files, nil
}

// series is a named line.
type series struct {
	name string
	xys  plotter.XYs
}

// lines builds a plot of the series with the given titles and marks the
// events.
func lines(title, x, y string, ss []series, evs []event) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text, p.X.Label.Text, p.Y.Label.Text = title, x, y
	p.Legend.Top = true
	top := 0.0
	for i, s := range ss {
		if len(s.xys) == 0 {
			continue
		}
		l, err := plotter.NewLine(s.xys)
		if err != nil {
			return nil, err
		}
		l.Color = plotutil.Color(i)
		l.Width = vg.Points(1.2)
		p.Add(l)
		p.Legend.Add(s.name, l)
		for _, v := range s.xys {
			top = max(top, v.Y)
		}
	}
	p.Add(plotter.NewGrid())
	p.Y.Min = 0
	return p, markEvents(p, evs, max(top, 1))
}

// bucketWidth splits [0, endNs] into about buckets buckets of whole seconds
// or more.
func bucketWidth(endNs int64) int64 {
	return max(int64(1e9), (endNs/buckets+1e9-1)/1e9*1e9)
}

func drawTTFT(path func(string) string, evs []event, out string) ([]string, error) {
	var arr, ttft []int64
	err := report.ReadRequests(path("requests.parquet"), func(r *report.RequestRow) error {
		if r.Outcome == report.OutcomeCompleted {
			arr, ttft = append(arr, r.ArrivalNs), append(ttft, r.FirstTokenNs-r.ArrivalNs)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	bw := bucketWidth(slices.Max(append(arr, 0)))
	groups := map[int64][]int64{}
	for i, a := range arr {
		groups[a/bw] = append(groups[a/bw], ttft[i])
	}
	keys := make([]int64, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	p50, p99 := series{name: "p50"}, series{name: "p99"}
	for _, k := range keys {
		var d report.Dist
		for _, v := range groups[k] {
			d.Add(v)
		}
		pc := d.Percentiles()
		x := float64(k*bw+bw/2) / 1e9
		p50.xys = append(p50.xys, plotter.XY{X: x, Y: pc.P50})
		p99.xys = append(p99.xys, plotter.XY{X: x, Y: pc.P99})
	}
	p, err := lines(fmt.Sprintf("TTFT by arrival time (%ds buckets)", bw/1e9), "arrival (s)", "TTFT (ms)", []series{p50, p99}, evs)
	if err != nil {
		return nil, err
	}
	return save(p, out, "ttft")
}

func drawQueue(samples []report.SampleRow, evs []event, out string) ([]string, error) {
	running, waiting := series{name: "running"}, series{name: "waiting"}
	for _, r := range samples {
		x := float64(r.TimeNs) / 1e9
		if n := len(running.xys); n == 0 || running.xys[n-1].X != x {
			running.xys = append(running.xys, plotter.XY{X: x})
			waiting.xys = append(waiting.xys, plotter.XY{X: x})
		}
		running.xys[len(running.xys)-1].Y += float64(r.Running)
		waiting.xys[len(waiting.xys)-1].Y += float64(r.Waiting)
	}
	p, err := lines("Requests in the cluster", "time (s)", "requests", []series{running, waiting}, evs)
	if err != nil {
		return nil, err
	}
	return save(p, out, "queue")
}

func drawPulls(path func(string) string, evs []event, out string) ([]string, error) {
	type end struct {
		ns      int64
		outcome int
	}
	var ends []end
	last := int64(0)
	err := report.ReadPulls(path("pulls.parquet"), func(r *report.PullRow) error {
		if o := slices.Index(report.PullOutcomes, r.Outcome); o >= 0 {
			ends = append(ends, end{r.EndNs, o})
			last = max(last, r.EndNs)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	bw := bucketWidth(last)
	counts := make([][]float64, len(report.PullOutcomes)) // by outcome, then bucket
	for o := range counts {
		counts[o] = make([]float64, last/bw+1)
	}
	for _, e := range ends {
		counts[e.outcome][e.ns/bw]++
	}
	var ss []series
	for o, name := range report.PullOutcomes {
		s := series{name: name}
		for b, c := range counts[o] {
			s.xys = append(s.xys, plotter.XY{X: float64(int64(b)*bw+bw/2) / 1e9, Y: c})
		}
		ss = append(ss, s)
	}
	p, err := lines(fmt.Sprintf("Pulls ended by outcome (%ds buckets)", bw/1e9), "time (s)", "pulls", ss, evs)
	if err != nil {
		return nil, err
	}
	return save(p, out, "pulls")
}

// point is one worker's sample for the occupancy charts.
type point struct {
	t      float64
	g1, g2 float64
}

func drawOccupancy(samples []report.SampleRow, evs []event, out string) ([]string, error) {
	byWorker := map[int32][]point{}
	for _, r := range samples {
		byWorker[r.Worker] = append(byWorker[r.Worker], point{float64(r.TimeNs) / 1e9, float64(r.G1Blocks), float64(r.G2Blocks)})
	}
	ids := make([]int32, 0, len(byWorker))
	for w := range byWorker {
		ids = append(ids, w)
	}
	slices.Sort(ids)
	var files []string
	for _, tier := range []string{"g1", "g2"} {
		val := func(p point) float64 {
			if tier == "g1" {
				return p.g1
			}
			return p.g2
		}
		var ss []series
		if len(ids) <= maxWorkerLines {
			for _, w := range ids {
				s := series{name: "worker " + strconv.Itoa(int(w))}
				for _, p := range byWorker[w] {
					s.xys = append(s.xys, plotter.XY{X: p.t, Y: val(p)})
				}
				ss = append(ss, s)
			}
		} else {
			ss = envelope(ids, byWorker, func(p point) (float64, float64) { return p.t, val(p) })
		}
		p, err := lines(fmt.Sprintf("%s blocks in use per worker", strings.ToUpper(tier)),
			"time (s)", "blocks", ss, evs)
		if err != nil {
			return nil, err
		}
		f, err := save(p, out, tier)
		if err != nil {
			return nil, err
		}
		files = append(files, f...)
	}
	return files, nil
}

// envelope reduces many workers' series to their minimum, mean and maximum
// at each time.
func envelope(ids []int32, byWorker map[int32][]point, xy func(point) (float64, float64)) []series {
	type acc struct{ lo, hi, sum, n float64 }
	at := map[float64]*acc{}
	for _, w := range ids {
		for _, p := range byWorker[w] {
			x, y := xy(p)
			a := at[x]
			if a == nil {
				a = &acc{lo: y, hi: y}
				at[x] = a
			}
			a.lo, a.hi, a.sum, a.n = min(a.lo, y), max(a.hi, y), a.sum+y, a.n+1
		}
	}
	xs := make([]float64, 0, len(at))
	for x := range at {
		xs = append(xs, x)
	}
	slices.Sort(xs)
	lo, mean, hi := series{name: "min"}, series{name: "mean"}, series{name: "max"}
	for _, x := range xs {
		a := at[x]
		lo.xys = append(lo.xys, plotter.XY{X: x, Y: a.lo})
		mean.xys = append(mean.xys, plotter.XY{X: x, Y: a.sum / a.n})
		hi.xys = append(hi.xys, plotter.XY{X: x, Y: a.hi})
	}
	return []series{lo, mean, hi}
}
