package study

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/kvsim/kvsim/internal/atomicfile"
	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/results"
	"github.com/kvsim/kvsim/scenarios"
)

// maxRuns bounds a sweep's grid and a search's, (To - From + 1) x
// replicates runs, which sweep.json lists.
const maxRuns = 1_000_000

// Search finds the largest value of the integer scenario key Key in
// [From, To] whose runs meet every SLO: it probes From and To, then
// bisects; when a probe shows an SLO's metric is not monotone in Key, or
// From and To fail different SLOs, it runs every value instead. A value
// passes when at least Quorum of its Replicates runs (seeds seed, seed+1,
// ...) meet every SLO. Its runs go to Dir/runs/run-NNN as a sweep's do,
// with Dir/sweep.json, sweep.parquet, points.parquet and search.json.
type Search struct {
	Env
	Scenario   string   // the scenario file; "" for the embedded default
	Sets       []string // the --set every run gets
	Key        string
	From, To   int64
	SLOs       []string // each "METRIC OP VALUE", as an expect entry
	Replicates int      // runs of each value, at least 1
	Quorum     int      // the replicates of a value that must meet every SLO, 1 to Replicates
	Dir        Dir
	// Log, when set, gets the search's account of itself as it goes: each
	// value probed and what its replicates showed, and why it scans.
	Log io.Writer

	slos    []scenarios.Expectation
	metrics []string // the SLOs' metrics, each once, in the SLOs' order
	spec    *Spec
	probes  []*Probe
	turned  bool   // a probe showed an SLO metric not monotone in the key
	runs    []*run // the runs probed, in the order probed
	prep    *preparer
}

// SearchResult is DIR/search.json.
type SearchResult struct {
	Key        string   `json:"key"`
	Range      [2]int64 `json:"range"`
	SLOs       []string `json:"slos"`
	Replicates int      `json:"replicates"`
	Quorum     int      `json:"quorum"`
	Monotone   bool     `json:"monotone"` // no probe showed an SLO metric not monotone in the key
	Scanned    bool     `json:"scanned"`  // every value was run: a metric not monotone, or SLOs failing at opposite ends
	Answer     *int64   `json:"answer"`   // null: no value meets the SLOs
	// PassTo is, after a scan with an answer, the largest value V such
	// that every value from From to V meets the SLOs: the answer when no
	// value below the answer fails. Absent when From fails or no scan ran.
	PassTo *int64   `json:"pass_to,omitempty"`
	Probes []*Probe `json:"probes"` // in the order made
	// Failing are, after a scan with an answer, the values below it that
	// fail: the answer then sits where the SLOs hold only by some
	// replicates' luck.
	Failing []int64 `json:"-"`
}

// ReadSearch reads dir/search.json, with the values below the answer
// that fail (Failing), as the search found them.
func ReadSearch(dir string) (*SearchResult, error) {
	path := filepath.Join(dir, report.SearchFile)
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, inputErr("%s is not a search directory: %w", dir, err)
	}
	var res SearchResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, inputErr("%s: %w", path, err)
	}
	if res.Answer != nil && res.Scanned {
		_, res.Failing = passTo(res.Range[0], *res.Answer, res.Probes)
	}
	return &res, nil
}

// Probe is one value of the key and what its replicates showed.
type Probe struct {
	Value   int64 `json:"value"`
	Passing int   `json:"passing"` // replicates meeting every SLO
	Passes  bool  `json:"passes"`  // at least the quorum do
	Runs    []int `json:"runs"`    // its replicates' run indices
	// Metrics is each SLO metric's mean over the replicates; null when
	// one of them is never, or NaN (a statistic of nothing).
	Metrics map[string]*float64 `json:"metrics"`
	means   []float64           // by Search.metrics; never is +Inf
	held    []int               // by SLO: the replicates meeting it
}

// Run runs the search and writes its directory: the probes' runs, then
// sweep.parquet, points.parquet and search.json. A bad key, value or SLO
// fails before anything is written.
func (s *Search) Run(ctx context.Context) (*SearchResult, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	ends := []int64{s.From, s.To}
	if s.From == s.To {
		ends = ends[:1]
	}
	first, err := s.prepare(ends)
	if err != nil {
		return nil, err
	}
	s.spec.Manifest = s.commandManifest(s.Scenario, s.Sets)
	if err := startDir(s.Dir.Path, s.Dir.Force, s.Dir.Resume, s.spec); err != nil {
		return nil, err
	}
	if err := s.probe(ctx, ends, first); err != nil {
		return nil, err
	}
	answer, scan, err := s.bisect(ctx)
	if err != nil {
		return nil, err
	}
	if scan {
		if answer, err = s.scan(ctx); err != nil {
			return nil, err
		}
	}
	res := &SearchResult{Key: s.Key, Range: [2]int64{s.From, s.To}, SLOs: s.SLOs, Replicates: s.Replicates,
		Quorum: s.Quorum, Monotone: !s.turned, Scanned: scan, Answer: answer, Probes: s.probes}
	if answer != nil && scan {
		res.PassTo, res.Failing = passTo(s.From, *answer, s.probes)
	}
	slices.SortFunc(s.runs, func(x, y *run) int { return cmp.Compare(x.Run, y.Run) })
	if err := finishSweep(s.Dir.Path, s.spec, s.gather(s.spec, s.runs)); err != nil {
		return nil, err
	}
	return res, atomicfile.Write(filepath.Join(s.Dir.Path, report.SearchFile), func(path string) error { return report.WriteJSON(path, res) })
}

// check checks the key, the range, the replicates and the SLOs' metrics
// and builds the search's grid: the key's values From to To, slowest,
// then one seed a replicate, so that run (value - From) x replicates + r
// is replicate r of value.
func (s *Search) check() error {
	switch {
	case s.Key == "":
		return inputErr("search needs --key KEY, the scenario key to search")
	case len(s.SLOs) == 0:
		return inputErr("search needs at least one --slo 'METRIC OP VALUE'")
	case s.Replicates < 1:
		return inputErr("--replicates %d: want at least 1", s.Replicates)
	case s.Quorum < 1 || s.Quorum > s.Replicates:
		return inputErr("--quorum %d: want 1 to --replicates (%d)", s.Quorum, s.Replicates)
	case s.Key == seedKey && s.Replicates > 1:
		return inputErr("--key seed: the replicates are seeds already; search seed with --replicates 1")
	case s.From > s.To:
		return inputErr("--range %d:%d: want A <= B", s.From, s.To)
	case uint64(s.To-s.From) >= maxRuns/uint64(s.Replicates):
		return inputErr("--range %d:%d with --replicates %d: more than %d runs", s.From, s.To, s.Replicates, maxRuns)
	}
	sc, err := LoadScenario(s.Scenario, s.Sets)
	if err != nil {
		return err
	}
	s.slos, s.metrics, s.probes, s.turned, s.runs = nil, nil, nil, false, nil // a search run again starts over
	for _, text := range s.SLOs {
		e, err := scenarios.ParseExpectation(text)
		if err == nil {
			err = results.CheckMetricOf(sc, e.Metric)
		}
		if err != nil {
			return inputErr("--slo %q: %w", text, err)
		}
		s.slos = append(s.slos, e)
		if !slices.Contains(s.metrics, e.Metric) {
			s.metrics = append(s.metrics, e.Metric)
		}
	}
	s.spec = &Spec{Scenario: s.Scenario, Sets: s.Sets, Keys: []string{s.Key}, Values: [][]string{nil}, Replicates: s.Replicates,
		Twins: s.Env.Twins}
	s.spec.Values[0] = rangeValues(s.From, s.To)
	if s.Replicates > 1 {
		s.spec.Seed = sc.Seed
	}
	s.spec.Runs = int(s.To-s.From+1) * s.Replicates
	s.prep = newPreparer(&s.Env, s.spec, s.Dir.Path, min(s.Dir.Jobs, s.spec.Runs), "--key")
	return nil
}

// rangeValues is from, from+1, ..., to (from <= to) as the values of a
// --vary. Not a loop on v <= to: at to = MaxInt64, v++ wraps and it never
// ends.
func rangeValues(from, to int64) []string {
	var out []string
	for v := from; ; v++ {
		out = append(out, strconv.FormatInt(v, 10))
		if v == to {
			return out
		}
	}
}

// logf writes a line of the search's account to Log.
func (s *Search) logf(format string, a ...any) {
	if s.Log != nil {
		fmt.Fprintf(s.Log, format+"\n", a...)
	}
}

// prepare prepares the runs of values, every replicate of each, in that
// order, reading each trace they read not read yet, and warns of what
// their scenarios warn of, each warning once a search.
func (s *Search) prepare(values []int64) ([]*run, error) {
	n := s.Replicates
	_, dims := s.spec.Dims()
	var runs []*run
	for _, v := range values {
		for r := range n {
			warned := len(s.prep.warnings)
			run, err := s.prep.run(s.spec.at(dims, int(v-s.From)*n+r))
			if err != nil {
				return nil, err
			}
			s.warn(s.prep.warnings[warned:])
			runs = append(runs, run)
		}
	}
	return runs, nil
}

// probe runs values' runs (prepared, replicates of each value in turn)
// that are not done, judges each value by its replicates and logs it.
func (s *Search) probe(ctx context.Context, values []int64, runs []*run) error {
	todo, err := s.toRun(runs, s.Dir.Resume)
	if err != nil {
		return err
	}
	if err := s.runAll(ctx, todo, s.Dir); err != nil {
		return err
	}
	n := s.Replicates
	for i, v := range values {
		p := &Probe{Value: v, Metrics: map[string]*float64{}}
		var sums []*results.Summary
		for _, r := range runs[i*n : (i+1)*n] {
			rs, err := ReadRunSummary(r.dir)
			if err != nil {
				return err
			}
			sums = append(sums, rs.Summary)
			p.Runs = append(p.Runs, r.Run)
			s.runs = append(s.runs, r)
		}
		if p.Passing, p.held, p.means, err = meetSLOs(s.slos, s.metrics, sums); err != nil {
			return err
		}
		p.Passes = p.Passing >= s.Quorum
		verdict := "fails"
		if p.Passes {
			verdict = "passes"
		}
		var shown []string
		for j, m := range s.metrics {
			p.Metrics[m] = nil
			if mean := p.means[j]; !math.IsInf(mean, 1) && !math.IsNaN(mean) {
				p.Metrics[m] = &mean
			}
			shown = append(shown, m+" "+formatMean(p.means[j]))
		}
		s.logf("%s=%d: %s, %d of %d replicates meet the SLOs: %s", s.Key, v, verdict, p.Passing, n, strings.Join(shown, ", "))
		s.probes = append(s.probes, p)
	}
	return nil
}

// meetSLOs returns how many of the runs sums summarise meet every SLO,
// how many meet each SLO, and the mean over them of each of metrics (never
// counting as +Inf), the SLOs' metrics, each read once a run.
func meetSLOs(slos []scenarios.Expectation, metrics []string, sums []*results.Summary) (int, []int, []float64, error) {
	passing, held, means := 0, make([]int, len(slos)), make([]float64, len(metrics))
	vals := make([]results.Value, len(metrics))
	for _, sum := range sums {
		for j, m := range metrics {
			v, err := results.Metric(sum, m)
			if err != nil {
				return 0, nil, nil, err
			}
			vals[j] = v
			means[j] += v.Float64()
		}
		meets := true
		for i, e := range slos {
			if vals[slices.Index(metrics, e.Metric)].Meets(e) {
				held[i]++
			} else {
				meets = false
			}
		}
		if meets {
			passing++
		}
	}
	for j := range means {
		means[j] /= float64(len(sums))
	}
	return passing, held, means, nil
}

// probeOne prepares and probes one value and reports whether it passes.
func (s *Search) probeOne(ctx context.Context, v int64) (bool, error) {
	runs, err := s.prepare([]int64{v})
	if err != nil {
		return false, err
	}
	if err := s.probe(ctx, []int64{v}, runs); err != nil {
		return false, err
	}
	return s.probes[len(s.probes)-1].Passes, nil
}

// bisect finishes the search from its probes of From and To: To passing
// is the answer; From failing means none passes when one SLO fails at
// both ends; otherwise it bisects, a passing value below a failing one.
// After every probe it checks the SLO metrics are monotone in the key.
// scan says the answer is unknown, and every value must be run: a metric
// is not monotone, or From and To fail different SLOs, so that a value
// between them may meet both (one SLO failing at large values, another at
// small ones).
func (s *Search) bisect(ctx context.Context) (answer *int64, scan bool, err error) {
	probe := func(v int64) *Probe {
		return s.probes[slices.IndexFunc(s.probes, func(p *Probe) bool { return p.Value == v })]
	}
	if !s.monotone() {
		return nil, true, nil
	}
	a, b := probe(s.From), probe(s.To)
	if b.Passes {
		return &s.To, false, nil
	}
	if !a.Passes {
		for i := range s.slos {
			if a.held[i] < s.Quorum && b.held[i] < s.Quorum {
				return nil, false, nil // SLO i fails at both ends, so everywhere between
			}
		}
		if s.From == s.To {
			return nil, false, nil
		}
		s.logf("%s=%d and %d fail different SLOs, so a value between them may meet every one: running every value in [%d, %d]",
			s.Key, s.From, s.To, s.From, s.To)
		return nil, true, nil
	}
	lo, hi := s.From, s.To
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		ok, err := s.probeOne(ctx, mid)
		if err != nil {
			return nil, false, err
		}
		if !s.monotone() {
			return nil, true, nil
		}
		if ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	return &lo, false, nil
}

// scan probes every value not probed yet, all at once, and returns the
// largest passing value (nil for none).
func (s *Search) scan(ctx context.Context) (*int64, error) {
	var rest []int64
	for v := s.From; v <= s.To; v++ {
		if !slices.ContainsFunc(s.probes, func(p *Probe) bool { return p.Value == v }) {
			rest = append(rest, v)
		}
	}
	runs, err := s.prepare(rest)
	if err != nil {
		return nil, err
	}
	if err := s.probe(ctx, rest, runs); err != nil {
		return nil, err
	}
	var best *int64
	for _, p := range s.probes {
		if p.Passes && (best == nil || p.Value > *best) {
			best = &p.Value
		}
	}
	return best, nil
}

// passTo is, after a scan from from that answered answer, the largest
// value such that every value from from to it passes among the probes
// (nil when from fails), and the values below the answer that fail.
func passTo(from, answer int64, probes []*Probe) (to *int64, failing []int64) {
	passes := map[int64]bool{}
	for _, p := range probes {
		passes[p.Value] = p.Passes
	}
	for v := from; v < answer; v++ {
		if !passes[v] {
			failing = append(failing, v)
		} else if len(failing) == 0 {
			to = &v
		}
	}
	if len(failing) == 0 {
		return &answer, nil
	}
	return to, failing
}

// monotone reports whether each SLO metric's means over the values probed
// so far, in key order, are all non-decreasing or all non-increasing; when
// one is not, it logs which and the three values that show it, and that
// every value will be run.
func (s *Search) monotone() bool {
	probes := slices.SortedFunc(slices.Values(s.probes), func(x, y *Probe) int { return cmp.Compare(x.Value, y.Value) })
	for i, m := range s.metrics {
		ys := make([]float64, len(probes))
		for j, p := range probes {
			ys[j] = p.means[i]
		}
		if t := turn(ys); t != nil {
			var at []string
			for _, j := range t {
				at = append(at, fmt.Sprintf("%s at %d", formatMean(ys[j]), probes[j].Value))
			}
			s.logf("%s is not monotone in %s (%s): running every value in [%d, %d]", m, s.Key, strings.Join(at, ", "), s.From, s.To)
			s.turned = true
			return false
		}
	}
	return true
}

// turn returns three indices i < j < k of ys whose middle value is above
// both others or below both, when ys is neither non-decreasing nor
// non-increasing; nil when it is one of them. A NaN (the mean of a
// statistic of nothing) shows no direction: turn skips it.
func turn(ys []float64) []int {
	var at []int // the indices of the numbers
	for i, y := range ys {
		if !math.IsNaN(y) {
			at = append(at, i)
		}
	}
	first := -1 // the first step (of at) that changes the value
	for j := 0; j+1 < len(at); j++ {
		d := cmp.Compare(ys[at[j+1]], ys[at[j]])
		switch {
		case d == 0:
		case first < 0:
			first = j
		case d != cmp.Compare(ys[at[first+1]], ys[at[first]]):
			return []int{at[first], at[j], at[j+1]} // ys[at[first]] to ys[at[j]] went one way, ys[at[j+1]] the other
		}
	}
	return nil
}

// formatMean writes a metric's mean in at most 6 significant digits:
// "never" for +Inf, an integer whole.
func formatMean(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "never"
	case math.IsNaN(v):
		return "no value"
	case v == math.Trunc(v) && math.Abs(v) < 1e15:
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 6, 64), 64)
	return strconv.FormatFloat(r, 'f', -1, 64)
}
