package main

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/kvsim/kvsim/results"

	"github.com/spf13/cobra"

	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/scenarios"
)

// searchFlags are kvsim search's flags.
type searchFlags struct {
	gridFlags
	key        string
	span       string // --range A:B
	slos       []string
	replicates int
	quorum     int // 0: every replicate
}

func newSearch(cmdline []string) *cobra.Command {
	var f searchFlags
	cmd := &cobra.Command{
		Use:   "search SCENARIO --key KEY --range A:B --slo 'METRIC OP VALUE' [--slo ...] -o DIR",
		Short: "Find the largest integer value of a scenario key whose runs meet every SLO",
		Long: "search finds the largest value of the integer key KEY in [A, B] whose runs meet every\n" +
			"--slo (a metric, as in expect: ttft_p99_ms < 2000). It probes A and B, then bisects;\n" +
			"when a probe shows an SLO's metric is not monotone in KEY, or A and B fail different\n" +
			"SLOs, it says so and runs every value instead. A value passes when at least --quorum\n" +
			"of its --replicates runs (seeds seed, seed+1, ...) meet every SLO. Its runs go to\n" +
			"DIR/runs/run-NNN as a sweep's do (--resume reuses them), with DIR/sweep.json,\n" +
			"DIR/sweep.parquet and DIR/search.json.",
		Args: positional(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("quorum") {
				f.quorum = f.replicates
			}
			return search(cmd, cmdline, args[0], f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.key, "key", "", "the integer scenario key to search: --key cluster.workers (required)")
	fl.StringVar(&f.span, "range", "", "the values to search, from A to B: --range 1:32 (required)")
	fl.StringArrayVar(&f.slos, "slo", nil, "a condition every passing run meets: --slo 'ttft_p99_ms < 2000' (repeatable; at least one)")
	fl.IntVar(&f.replicates, "replicates", 1, "runs of each value, seeds from the scenario's seed up")
	fl.IntVar(&f.quorum, "quorum", 0, "the replicates of a value that must meet every SLO for it to pass (default all)")
	f.add(cmd, "search", "reuse the runs DIR holds of the same grid (scenario, --set, --key, --range, --replicates)")
	return cmd
}

// maxSearchRuns bounds a search's grid, (B - A + 1) x replicates runs,
// which sweep.json lists.
const maxSearchRuns = 1_000_000

// searchResult is DIR/search.json.
type searchResult struct {
	Key        string   `json:"key"`
	Range      [2]int64 `json:"range"`
	SLOs       []string `json:"slos"`
	Replicates int      `json:"replicates"`
	Quorum     int      `json:"quorum"`
	Monotone   bool     `json:"monotone"` // no probe showed an SLO metric not monotone in the key
	Scanned    bool     `json:"scanned"`  // every value was run: a metric not monotone, or SLOs failing at opposite ends
	Answer     *int64   `json:"answer"`   // null: no value meets the SLOs
	// PassTo is, after a scan with an answer, the largest value V such
	// that every value from A to V meets the SLOs: the answer when no value
	// below the answer fails. Absent when A fails or no scan ran.
	PassTo *int64         `json:"pass_to,omitempty"`
	Probes []*searchProbe `json:"probes"` // in the order made
}

// searchProbe is one value of the key and what its replicates showed.
type searchProbe struct {
	Value   int64 `json:"value"`
	Passing int   `json:"passing"` // replicates meeting every SLO
	Passes  bool  `json:"passes"`  // at least the quorum do
	Runs    []int `json:"runs"`    // its replicates' run indices
	// Metrics is each SLO metric's mean over the replicates; null when
	// one of them is never, or NaN (a statistic of nothing).
	Metrics map[string]*float64 `json:"metrics"`
	means   []float64           // by searcher.metrics; never is +Inf
	held    []int               // by SLO: the replicates meeting it
}

// searcher is one search: its grid, the SLOs and the probes made so far.
type searcher struct {
	cmd     *cobra.Command
	f       searchFlags
	a, b    int64
	slos    []scenarios.Expectation
	metrics []string // the SLOs' metrics, each once, in the SLOs' order
	spec    *sweepSpec
	probes  []*searchProbe
	turned  bool        // a probe showed an SLO metric not monotone in the key
	runs    []*sweepRun // the runs probed, in the order probed
	prep    *preparer
}

func search(cmd *cobra.Command, cmdline []string, scenario string, f searchFlags) error {
	s, err := newSearcher(cmd, cmdline, scenario, f)
	if err != nil {
		return err
	}
	f = s.f // -o cleaned (gridFlags.check)
	ends := []int64{s.a, s.b}
	if s.a == s.b {
		ends = ends[:1]
	}
	first, err := s.prepare(ends) // a bad key or value fails before anything is written
	if err != nil {
		return err
	}
	s.spec.Manifest = commandManifest(cmdline, scenario, f.sets)
	if err := f.start(s.spec); err != nil {
		return err
	}
	if err := s.probe(ends, first); err != nil {
		return err
	}
	answer, scan, err := s.bisect()
	if err != nil {
		return err
	}
	if scan {
		if answer, err = s.scan(); err != nil {
			return err
		}
	}
	w := cmd.OutOrStdout()
	var passTo *int64
	if answer != nil {
		fmt.Fprintf(w, "answer %s=%d\n", f.key, *answer)
		if scan {
			passTo = s.passTo(w, *answer)
		}
	} else {
		fmt.Fprintf(w, "answer: no value of %s in [%d, %d] meets the SLOs\n", f.key, s.a, s.b)
	}
	slices.SortFunc(s.runs, func(x, y *sweepRun) int { return cmp.Compare(x.run, y.run) })
	if err := finishSweep(f.out, s.spec, gather(cmd.ErrOrStderr(), s.spec, s.runs)); err != nil {
		return err
	}
	res := &searchResult{Key: f.key, Range: [2]int64{s.a, s.b}, SLOs: f.slos, Replicates: f.replicates,
		Quorum: f.quorum, Monotone: !s.turned, Scanned: scan, Answer: answer, PassTo: passTo, Probes: s.probes}
	return writeAtomically(filepath.Join(f.out, report.SearchFile), func(path string) error { return report.WriteJSON(path, res) })
}

// newSearcher checks the command line and the SLOs' metrics and builds the
// search's grid: the key's values A to B, slowest, then one seed a
// replicate, so that run (value - A) x replicates + r is replicate r of
// value.
func newSearcher(cmd *cobra.Command, cmdline []string, scenario string, f searchFlags) (*searcher, error) {
	switch {
	case f.out == "":
		return nil, usageError{fmt.Errorf("search needs -o DIR")}
	case f.key == "":
		return nil, usageError{fmt.Errorf("search needs --key KEY, the scenario key to search")}
	case len(f.slos) == 0:
		return nil, usageError{fmt.Errorf("search needs at least one --slo 'METRIC OP VALUE'")}
	case f.replicates < 1:
		return nil, usageError{fmt.Errorf("--replicates %d: want at least 1", f.replicates)}
	case f.quorum < 1 || f.quorum > f.replicates:
		return nil, usageError{fmt.Errorf("--quorum %d: want 1 to --replicates (%d)", f.quorum, f.replicates)}
	case f.key == seedKey && f.replicates > 1:
		return nil, usageError{fmt.Errorf("--key seed: the replicates are seeds already; search seed with --replicates 1")}
	}
	if err := f.check(); err != nil {
		return nil, err
	}
	a, b, err := parseRange(f.span)
	if err != nil {
		return nil, err
	}
	if uint64(b-a) >= maxSearchRuns/uint64(f.replicates) {
		return nil, usageError{fmt.Errorf("--range %s with --replicates %d: more than %d runs", f.span, f.replicates, maxSearchRuns)}
	}
	sc, err := loadScenario(scenario, f.sets)
	if err != nil {
		return nil, err
	}
	s := &searcher{cmd: cmd, f: f, a: a, b: b}
	for _, text := range f.slos {
		e, err := scenarios.ParseExpectation(text)
		if err == nil {
			err = results.CheckMetric(e.Metric, len(sc.Events))
		}
		if err != nil {
			return nil, usageError{fmt.Errorf("--slo %q: %w", text, err)}
		}
		s.slos = append(s.slos, e)
		if !slices.Contains(s.metrics, e.Metric) {
			s.metrics = append(s.metrics, e.Metric)
		}
	}
	s.spec = &sweepSpec{Scenario: scenario, Sets: f.sets, Keys: []string{f.key}, Values: [][]string{nil}, Replicates: f.replicates}
	for v := a; v <= b; v++ {
		s.spec.Values[0] = append(s.spec.Values[0], strconv.FormatInt(v, 10))
	}
	if f.replicates > 1 {
		s.spec.Seed = sc.Seed
	}
	s.spec.Runs = int(b-a+1) * f.replicates
	s.prep = newPreparer(cmdline, s.spec, f.out, min(f.jobs, s.spec.Runs), "--key")
	return s, nil
}

// parseRange reads --range "A:B", integers with A <= B.
func parseRange(s string) (int64, int64, error) {
	x, y, ok := strings.Cut(s, ":")
	a, err1 := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
	b, err2 := strconv.ParseInt(strings.TrimSpace(y), 10, 64)
	if !ok || err1 != nil || err2 != nil || a > b {
		return 0, 0, usageError{fmt.Errorf("--range %q: want A:B, integers with A <= B, as in 1:32", s)}
	}
	return a, b, nil
}

// prepare prepares the runs of values, every replicate of each, in that
// order, reading each trace they read not read yet, and warns of what
// their scenarios warn of, each warning once a search.
func (s *searcher) prepare(values []int64) ([]*sweepRun, error) {
	n := s.f.replicates
	_, dims := s.spec.dims()
	var runs []*sweepRun
	for _, v := range values {
		for r := range n {
			warned := len(s.prep.warnings)
			run, err := s.prep.run(s.spec.at(dims, int(v-s.a)*n+r))
			if err != nil {
				return nil, err
			}
			warn(s.cmd.ErrOrStderr(), s.prep.warnings[warned:])
			runs = append(runs, run)
		}
	}
	return runs, nil
}

// probe runs values' runs (prepared, replicates of each value in turn)
// that are not done, judges each value by its replicates and prints it.
func (s *searcher) probe(values []int64, runs []*sweepRun) error {
	todo, err := toRun(s.cmd.ErrOrStderr(), runs, s.f.resume)
	if err != nil {
		return err
	}
	if err := runAll(s.cmd, todo, s.f.gridFlags); err != nil {
		return err
	}
	n := s.f.replicates
	for i, v := range values {
		p := &searchProbe{Value: v, Metrics: map[string]*float64{}}
		var sums []*results.Summary
		for _, r := range runs[i*n : (i+1)*n] {
			rs, err := readRunSummary(r.dir)
			if err != nil {
				return err
			}
			sums = append(sums, rs.Summary)
			p.Runs = append(p.Runs, r.run)
			s.runs = append(s.runs, r)
		}
		if p.Passing, p.held, p.means, err = meetSLOs(s.slos, s.metrics, sums); err != nil {
			return err
		}
		p.Passes = p.Passing >= s.f.quorum
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
		fmt.Fprintf(s.cmd.OutOrStdout(), "%s=%d: %s, %d of %d replicates meet the SLOs: %s\n",
			s.f.key, v, verdict, p.Passing, n, strings.Join(shown, ", "))
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
func (s *searcher) probeOne(v int64) (bool, error) {
	runs, err := s.prepare([]int64{v})
	if err != nil {
		return false, err
	}
	if err := s.probe([]int64{v}, runs); err != nil {
		return false, err
	}
	return s.probes[len(s.probes)-1].Passes, nil
}

// bisect finishes the search from its probes of A and B: B passing is the
// answer; A failing means none passes when one SLO fails at both ends;
// otherwise it bisects, a passing value below a failing one. After every
// probe it checks the SLO metrics are monotone in the key. scan says the
// answer is unknown, and every value must be run: a metric is not
// monotone, or A and B fail different SLOs, so that a value between them
// may meet both (one SLO failing at large values, another at small ones).
func (s *searcher) bisect() (answer *int64, scan bool, err error) {
	probe := func(v int64) *searchProbe {
		return s.probes[slices.IndexFunc(s.probes, func(p *searchProbe) bool { return p.Value == v })]
	}
	if !s.monotone() {
		return nil, true, nil
	}
	a, b := probe(s.a), probe(s.b)
	if b.Passes {
		return &s.b, false, nil
	}
	if !a.Passes {
		for i := range s.slos {
			if a.held[i] < s.f.quorum && b.held[i] < s.f.quorum {
				return nil, false, nil // SLO i fails at both ends, so everywhere between
			}
		}
		if s.a == s.b {
			return nil, false, nil
		}
		fmt.Fprintf(s.cmd.OutOrStdout(), "%s=%d and %d fail different SLOs, so a value between them may meet every one: running every value in [%d, %d]\n",
			s.f.key, s.a, s.b, s.a, s.b)
		return nil, true, nil
	}
	lo, hi := s.a, s.b
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		ok, err := s.probeOne(mid)
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
func (s *searcher) scan() (*int64, error) {
	var rest []int64
	for v := s.a; v <= s.b; v++ {
		if !slices.ContainsFunc(s.probes, func(p *searchProbe) bool { return p.Value == v }) {
			rest = append(rest, v)
		}
	}
	runs, err := s.prepare(rest)
	if err != nil {
		return nil, err
	}
	if err := s.probe(rest, runs); err != nil {
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

// passTo is, after a scan that answered answer, the largest value such
// that every value from A to it passes, or nil when A fails. When a value
// below the answer fails it says which, on w: the answer then sits where
// the SLOs hold only by some replicates' luck.
func (s *searcher) passTo(w io.Writer, answer int64) *int64 {
	passes := map[int64]bool{}
	for _, p := range s.probes {
		passes[p.Value] = p.Passes
	}
	var failing []string
	var to *int64
	for v := s.a; v < answer; v++ {
		if !passes[v] {
			failing = append(failing, strconv.FormatInt(v, 10))
		} else if len(failing) == 0 {
			to = &v
		}
	}
	if len(failing) == 0 {
		return &answer
	}
	verb, every := "fails", ""
	if len(failing) > 1 {
		verb = "fail"
	}
	switch {
	case to != nil && *to > s.a:
		every = fmt.Sprintf(": every value from %d to %d passes", s.a, *to)
	case to != nil:
		every = fmt.Sprintf(": only %d passes before them", s.a)
	}
	fmt.Fprintf(w, "note: below the answer, %s=%s %s%s\n", s.f.key, strings.Join(failing, ", "), verb, every)
	return to
}

// monotone reports whether each SLO metric's means over the values probed
// so far, in key order, are all non-decreasing or all non-increasing; when
// one is not, it prints which and the three values that show it, and that
// every value will be run.
func (s *searcher) monotone() bool {
	probes := slices.SortedFunc(slices.Values(s.probes), func(x, y *searchProbe) int { return cmp.Compare(x.Value, y.Value) })
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
			fmt.Fprintf(s.cmd.OutOrStdout(), "%s is not monotone in %s (%s): running every value in [%d, %d]\n",
				m, s.f.key, strings.Join(at, ", "), s.a, s.b)
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
	case v == math.Trunc(v) && math.Abs(v) < 1e15:
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 6, 64), 64)
	return strconv.FormatFloat(r, 'f', -1, 64)
}
