// Command perf runs the whole-run benchmark cases of issue 6 with one or
// more kvsim binaries, interleaved so machine noise spreads evenly, and
// prints a markdown table: wall time (median), simulated requests per
// second, peak RSS, events and digest of every case and binary, and the
// wall-time ratio of each earlier binary to the last (the one measured);
// then, for the scaling series, each binary's cost per request and its
// spread from 32 to 2048 workers. benchmarks/run.sh builds the binaries and
// calls it; see docs/performance.md.
//
//	go run ./benchmarks/perf -runs 3 -bin ref=/tmp/kvsim-ref -bin before=/tmp/kvsim-old -bin after=/tmp/kvsim
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/kvsim/kvsim/report"
)

// A run case is a scenario, its overrides and replay's flags.
type runCase struct {
	name     string
	scenario string
	workers  int
	sets     []string
	flags    []string
}

// cases are the issue-6 whole-run cases: the Mooncake conversation trace at
// 16 workers (with KVCR off too, for what KVCR costs) and 128, a million synthetic requests at 64 workers, the
// scaling series, whose rate and request count grow with the workers, and
// a drain with its twin and without (what a twin costs).
func cases() []runCase {
	cs := []runCase{
		{"conversation-16", "scenarios/conversation-16w.yaml", 16, nil, nil},
		{"conversation-16-nokvcr", "scenarios/conversation-16w.yaml", 16, []string{"kvcr.enabled=false"}, nil},
		{"conversation-128", "scenarios/conversation-16w.yaml", 128, []string{"cluster.workers=128"}, nil},
		{"synthetic-1m", "benchmarks/scenarios/synthetic-1m.yaml", 64, nil, nil},
		{"scale-in-32", "scenarios/scale-in-32w.yaml", 32, nil, nil},
		{"scale-in-32-notwins", "scenarios/scale-in-32w.yaml", 32, nil, []string{"--twins=false"}},
	}
	for _, w := range []int{8, 32, 128, 512, 2048} {
		f := w / 8
		cs = append(cs, runCase{fmt.Sprintf("scaling-%d", w), "benchmarks/scenarios/scaling.yaml", w, []string{
			fmt.Sprintf("cluster.workers=%d", w),
			fmt.Sprintf("workload.synthetic.rate=%d", 125*f),
			fmt.Sprintf("workload.synthetic.requests=%d", 2000*f),
		}, nil})
	}
	return cs
}

type binary struct{ name, path string }

type binFlag []binary

func (b *binFlag) String() string { return fmt.Sprint(*b) }
func (b *binFlag) Set(v string) error {
	name, path, ok := strings.Cut(v, "=")
	if !ok {
		return fmt.Errorf("-bin wants NAME=PATH, got %q", v)
	}
	*b = append(*b, binary{name, path})
	return nil
}

// result is one run's measurements.
type result struct {
	wall     time.Duration
	rssKB    int64
	requests int64
	events   uint64
	digest   string
}

func main() {
	var bins binFlag
	flag.Var(&bins, "bin", "NAME=PATH of a kvsim binary (repeatable; the last is the one the others are compared with)")
	runs := flag.Int("runs", 3, "runs of every case and binary")
	only := flag.String("cases", "", "comma-separated case names to run (default all)")
	flag.Parse()
	if len(bins) == 0 || *runs < 1 {
		fmt.Fprintln(os.Stderr, "usage: perf -bin NAME=PATH [-bin NAME=PATH...] [-runs N] [-cases a,b]")
		os.Exit(2)
	}
	tmp, err := os.MkdirTemp("", "kvsim-perf-")
	if err != nil {
		fatal(err)
	}
	defer os.RemoveAll(tmp)
	var selected []runCase
	for _, c := range cases() {
		if *only == "" || slices.Contains(strings.Split(*only, ","), c.name) {
			selected = append(selected, c)
		}
	}
	fmt.Printf("| case | workers | requests | events | %s | digests |\n", columns(bins))
	fmt.Printf("|---|---|---|---|%s---|\n", strings.Repeat("---|", 4*len(bins)-1))
	scaling := make([][]scalingPoint, len(bins))
	for _, c := range selected {
		res := make([][]result, len(bins))
		for r := range *runs {
			for i, b := range bins {
				fmt.Fprintf(os.Stderr, "%s: %s run %d\n", c.name, b.name, r+1)
				out, err := run(b.path, c, filepath.Join(tmp, "out"))
				if err != nil {
					fatal(fmt.Errorf("%s with %s: %w", c.name, b.name, err))
				}
				res[i] = append(res[i], out)
			}
		}
		fmt.Println(row(c, bins, res))
		if strings.HasPrefix(c.name, "scaling-") {
			for i := range bins {
				m := median(res[i])
				scaling[i] = append(scaling[i], scalingPoint{c.workers, m.Seconds() * 1e6 / float64(res[i][0].requests)})
			}
		}
	}
	if len(scaling[0]) > 0 {
		fmt.Println()
		fmt.Println("Cost per request in the scaling series (median wall µs a request), and the most expensive of 32 to 2048 workers over the cheapest:")
		fmt.Println()
		for i, b := range bins {
			fmt.Printf("- %s: %s\n", b.name, spread(scaling[i]))
		}
	}
}

// scalingPoint is a scaling case's cost per request.
type scalingPoint struct {
	workers int
	usPer   float64
}

// spread lists the points and the ratio of the dearest to the cheapest
// among those from 32 to 2048 workers (8 workers is a run too short for its
// fixed costs to vanish, listed but not counted).
func spread(ps []scalingPoint) string {
	var cells []string
	lo, hi := 0.0, 0.0
	for _, p := range ps {
		cells = append(cells, fmt.Sprintf("%d: %.1f", p.workers, p.usPer))
		if p.workers >= 32 && p.workers <= 2048 {
			if lo == 0 || p.usPer < lo {
				lo = p.usPer
			}
			hi = max(hi, p.usPer)
		}
	}
	s := strings.Join(cells, ", ")
	if lo > 0 {
		s += fmt.Sprintf("; 32-2048: %.2fx", hi/lo)
	}
	return s
}

func columns(bins binFlag) string {
	var cols []string
	last := bins[len(bins)-1].name
	for _, b := range bins {
		cols = append(cols, b.name+" wall s", b.name+" requests/s", b.name+" peak RSS MB")
	}
	for _, b := range bins[:len(bins)-1] {
		cols = append(cols, b.name+"/"+last)
	}
	return strings.Join(cols, " | ")
}

// row is a case's table row. Events and digests are listed per binary
// (the decode fast-forward changes the event count, a model change the
// digest); a binary whose runs disagree on the digest is marked.
func row(c runCase, bins binFlag, res [][]result) string {
	first := res[0][0]
	var events, digests []string
	for i := range bins {
		events = append(events, fmt.Sprint(res[i][0].events))
		d := res[i][0].digest
		if len(d) > 8 {
			d = d[:8]
		}
		for _, r := range res[i] {
			if r.digest != res[i][0].digest {
				d = "**runs differ**"
			}
		}
		digests = append(digests, d)
	}
	cells := []string{c.name, fmt.Sprint(c.workers), fmt.Sprint(first.requests), strings.Join(events, " / ")}
	for i := range bins {
		m := median(res[i])
		var rss int64
		for _, r := range res[i] {
			rss = max(rss, r.rssKB)
		}
		cells = append(cells, fmt.Sprintf("%.2f", m.Seconds()),
			fmt.Sprintf("%.0f", float64(first.requests)/m.Seconds()), fmt.Sprint(rss/1024))
	}
	head := median(res[len(bins)-1])
	for i := range bins[:len(bins)-1] {
		cells = append(cells, fmt.Sprintf("%.2fx", median(res[i]).Seconds()/head.Seconds()))
	}
	cells = append(cells, strings.Join(digests, " / "))
	return "| " + strings.Join(cells, " | ") + " |"
}

func median(rs []result) time.Duration {
	w := make([]time.Duration, len(rs))
	for i, r := range rs {
		w[i] = r.wall
	}
	slices.Sort(w)
	return w[len(w)/2]
}

// run replays c with the binary at path into out and measures it.
func run(path string, c runCase, out string) (result, error) {
	if err := os.RemoveAll(out); err != nil { // a kvsim older than the manifest leaves an output --force refuses
		return result{}, err
	}
	args := append([]string{"replay", c.scenario, "-o", out, "--force"}, c.flags...)
	for _, s := range c.sets {
		args = append(args, "--set", s)
	}
	cmd := exec.Command(path, args...)
	cmd.Stderr = os.Stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return result{}, err
	}
	r := result{wall: time.Since(start)}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.rssKB = ru.Maxrss // kilobytes on Linux
	}
	var s struct {
		Digest   string `json:"digest"`
		Events   uint64 `json:"events"`
		Requests struct {
			Total int64 `json:"total"`
		} `json:"requests"`
	}
	b, err := os.ReadFile(filepath.Join(out, report.SummaryFile))
	if err != nil {
		return result{}, err
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return result{}, err
	}
	r.requests, r.events, r.digest = s.Requests.Total, s.Events, s.Digest
	return r, nil
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "perf:", err)
	os.Exit(1)
}
