package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/internal/atomicfile"
	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/results"
	"github.com/kvsim/kvsim/scenarios"
	"github.com/kvsim/kvsim/sim"
	"github.com/kvsim/kvsim/study"
	"github.com/kvsim/kvsim/workload"
)

func newTrace() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "trace",
		Short: "Describe, generate and convert request traces",
		Long: "trace stats describes a trace or a scenario's workload; trace gen writes a scenario's\n" +
			"synthetic workload as a Mooncake trace that replays to the same digest; trace convert\n" +
			"converts between the Mooncake and Azure formats where the target can hold the source,\n" +
			"and from vLLM's OTLP JSON (otel).",
		Args: positional(cobra.NoArgs),
		RunE: func(*cobra.Command, []string) error {
			return usageError{errors.New("trace: name a subcommand: stats, gen or convert")}
		},
	}
	cmd.AddCommand(newTraceStats(), newTraceGen(), newTraceConvert())
	return cmd
}

// traceSource is a workload being read: a trace file or a scenario's.
type traceSource struct {
	name       string // the trace file, or the scenario of a synthetic workload
	format     string // mooncake, azure, otel or synthetic
	scenario   *scenarios.Scenario
	src        workload.Source
	closer     io.Closer
	block      int // tokens per block of the requests' chains
	traceBlock int // tokens per hash id of a mooncake trace; 0 otherwise
}

// next reads the next request; a bad record is an *scenarios.InputError
// naming the file, the line and the field.
func (t *traceSource) next() (*workload.Request, error) {
	r, err := t.src.Next()
	var ee *workload.EnvelopeError
	if errors.As(err, &ee) && t.scenario != nil {
		return nil, t.scenario.ErrAt("workload.envelope", "%v", ee)
	}
	var pe *workload.ParseError
	if errors.As(err, &pe) {
		key := pe.Key
		if key == "" && t.scenario != nil {
			key = "workload.trace"
		}
		return nil, &scenarios.InputError{File: t.name, Line: pe.Line, Key: key, Err: pe.Err}
	}
	return r, err
}

// each calls fn on every request, stopping early when ctx is cancelled.
func (t *traceSource) each(ctx context.Context, fn func(*workload.Request) error) error {
	for i := 0; ; i++ {
		if i%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		r, err := t.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(r); err != nil {
			return err
		}
	}
}

// formatList names trace formats as "a, b or c".
func formatList(fs ...workload.Format) string {
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = string(f)
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// inputKind is what a path holds: a trace format, or "" for a scenario,
// from the format flag (named flag) when given, else a scenario's name,
// else the contents and the name (workload.DetectFormat: an OTLP JSON file
// is otel whatever its name).
func inputKind(path, format, flag string) (workload.Format, error) {
	if format != "" {
		if !slices.Contains(workload.Formats, workload.Format(format)) {
			return "", usageError{fmt.Errorf("--%s %q: want %s", flag, format, formatList(workload.Formats...))}
		}
		return workload.Format(format), nil
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yaml", ".yml":
		return "", nil
	}
	if fi, err := os.Stat(path); err == nil && workload.Stream(fi.Mode()) { // its head, read here, would be gone for the reading
		if k := workload.DetectFormat(path, nil); k != "" {
			return k, nil
		}
		return "", usageError{fmt.Errorf("%s: a pipe or a device, whose format cannot be told from its name, nor from its contents without losing them: give --%s mooncake, azure or otel", path, flag)}
	}
	f, err := os.Open(path)
	if err != nil {
		if k := workload.DetectFormat(path, nil); k != "" {
			return k, nil // opening the trace reports the error
		}
		return "", &scenarios.InputError{File: path, Err: fmt.Errorf("cannot open: %w", errors.Unwrap(err))}
	}
	defer f.Close()
	head := make([]byte, 4096)
	n, _ := io.ReadFull(f, head)
	if k := workload.DetectFormat(path, head[:n]); k != "" {
		return k, nil
	}
	return "", usageError{fmt.Errorf("%s: cannot tell its format from its name or contents: give --%s mooncake, azure or otel (or a .yaml scenario)", path, flag)}
}

// openTrace opens a trace file of a known format.
func openTrace(path string, format workload.Format, opt workload.TraceOptions) (*traceSource, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &scenarios.InputError{File: path, Err: fmt.Errorf("cannot open trace: %w", errors.Unwrap(err))}
	}
	t := &traceSource{name: path, format: string(format), closer: f, block: opt.EngineBlockSize}
	t.src = workload.Open(format, f, opt)
	if format == workload.FormatMooncake {
		t.traceBlock = opt.TraceBlockSize
	}
	return t, nil
}

// openScenario opens a scenario's workload as a run reads it.
func openScenario(sc *scenarios.Scenario) (*traceSource, error) {
	p, err := sim.Prepare(sc)
	if err != nil {
		return nil, err
	}
	src, closer, err := p.OpenSource()
	if err != nil {
		return nil, err
	}
	t := &traceSource{scenario: sc, src: src, closer: closer, block: sc.Cluster.Engine.BlockSize}
	if tr := sc.Workload.Trace; tr != nil {
		t.name, t.format = tr.Path, string(tr.Format)
		if tr.Format == workload.FormatMooncake {
			t.traceBlock = tr.BlockSize
		}
	} else {
		t.name, t.format = sc.DisplayFile(), "synthetic"
	}
	return t, nil
}

type statsFlags struct {
	format     string
	block      int
	traceBlock int
	bucket     time.Duration
	json       bool
	sets       []string
}

func newTraceStats() *cobra.Command {
	var f statsFlags
	cmd := &cobra.Command{
		Use:   "stats [FILE]",
		Short: "Describe a trace, or a scenario's workload: arrivals, lengths, sessions, prefix hits",
		Long: "stats reads a Mooncake, Azure or otel (vLLM OTLP JSON) trace, or the workload of a\n" +
			"scenario (.yaml; the default scenario without FILE), and prints its requests, time span\n" +
			"and arrival rate, input and output length percentiles, sessions, and the share of prompt\n" +
			"blocks an infinite prefix cache would hit. See docs/cli.md.",
		Args: positional(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return traceStats(cmd, first(args), f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.format, "format", "", "the file's format, mooncake, azure or otel (default: from its contents or name)")
	fl.IntVar(&f.block, "block-size", 16, "tokens per engine block for the prefix hits; for a scenario, sets cluster.engine.block_size")
	fl.IntVar(&f.traceBlock, "trace-block-size", 512, "tokens per hash id of a Mooncake trace file")
	fl.DurationVar(&f.bucket, "bucket", 0, "width of the arrival-rate buckets (default: 1s to 24h, at most 60 buckets)")
	fl.BoolVar(&f.json, "json", false, "print the figures as JSON")
	fl.StringArrayVar(&f.sets, "set", nil, "override a key of the scenario: --set workload.synthetic.requests=500 (repeatable)")
	return cmd
}

// maxBuckets bounds the arrival buckets trace stats prints (a line each).
const maxBuckets = 10_000

func traceStats(cmd *cobra.Command, path string, f statsFlags) error {
	if f.block < 1 || f.traceBlock < 1 {
		return usageError{errors.New("--block-size and --trace-block-size must be at least 1")}
	}
	if f.bucket < 0 {
		return usageError{fmt.Errorf("--bucket %v: must not be negative", f.bucket)}
	}
	var format workload.Format // "": a scenario, the default one when path is ""
	if path != "" {
		var err error
		if format, err = inputKind(path, f.format, "format"); err != nil {
			return err
		}
	}
	var t *traceSource
	var err error
	if format == "" {
		if cmd.Flags().Changed("trace-block-size") {
			return usageError{errors.New("--trace-block-size is for trace files: a scenario's trace says its own (--set workload.trace.block_size=N)")}
		}
		sets := f.sets
		if cmd.Flags().Changed("block-size") {
			sets = append(sets[:len(sets):len(sets)], "cluster.engine.block_size="+strconv.Itoa(f.block))
		}
		sc, err := study.LoadScenario(path, sets)
		if err != nil {
			return err
		}
		t, err = openScenario(sc)
		if err != nil {
			return err
		}
	} else {
		if len(f.sets) > 0 {
			return usageError{errors.New("--set is for scenarios, not trace files")}
		}
		t, err = openTrace(path, format, workload.TraceOptions{TraceBlockSize: f.traceBlock, EngineBlockSize: f.block, TimeScale: 1})
		if err != nil {
			return err
		}
	}
	defer t.closer.Close()
	b := workload.NewStatsBuilder(t.block)
	if err := t.each(cmd.Context(), func(r *workload.Request) error { b.Add(r); return nil }); err != nil {
		return err
	}
	if last, w := b.LastArrival(), des.Time(f.bucket); w > 0 && last/w >= maxBuckets {
		return usageError{fmt.Errorf("--bucket %v: %d buckets to the last arrival at %v, more than the %d stats prints; give at least %v",
			f.bucket, last/w+1, time.Duration(last), maxBuckets, time.Duration(last/maxBuckets+1))}
	}
	s := b.Stats(des.Time(f.bucket))
	if g := generatorOf(t.src); g != nil {
		n := g.Sessions()
		s.Sessions = &n
	}
	if f.json {
		return printStatsJSON(cmd.OutOrStdout(), t, s)
	}
	printStats(cmd.OutOrStdout(), t, s)
	return nil
}

// generatorOf is the synthetic generator src reads, under its envelope
// when it has one (workload.Enveloped); nil for a trace.
func generatorOf(src workload.Source) *workload.Generator {
	for {
		switch s := src.(type) {
		case *workload.Generator:
			return s
		case interface{ Unwrap() workload.Source }:
			src = s.Unwrap()
		default:
			return nil
		}
	}
}

// statsJSON is the --json output: the source, then the figures.
type statsJSON struct {
	Source         string `json:"source"`
	Format         string `json:"format"`
	Scenario       string `json:"scenario,omitempty"`
	TraceBlockSize int    `json:"trace_block_size,omitempty"`
	*workload.Stats
}

func printStatsJSON(w io.Writer, t *traceSource, s *workload.Stats) error {
	out := statsJSON{Source: t.name, Format: t.format, TraceBlockSize: t.traceBlock, Stats: s}
	if t.scenario != nil {
		out.Scenario = t.scenario.Name
	}
	if s.Arrivals == nil {
		s.Arrivals = []workload.Bucket{}
	}
	if s.Peak.StartsS == nil {
		s.Peak.StartsS = []float64{}
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// describe says what the source is, as the first line of stats.
func (t *traceSource) describe() string {
	var b strings.Builder
	b.WriteString(t.name)
	switch {
	case t.format == "synthetic":
		fmt.Fprintf(&b, " (synthetic workload of scenario %s, seed %d%s)", t.scenario.Name, t.scenario.Seed, envelopeWords(t.scenario))
		return b.String()
	case t.traceBlock > 0:
		fmt.Fprintf(&b, " (mooncake, %d tokens per hash id", t.traceBlock)
	default:
		fmt.Fprintf(&b, " (%s", t.format)
	}
	if sc := t.scenario; sc != nil {
		tr := sc.Workload.Trace
		fmt.Fprintf(&b, "; as scenario %s reads it: time_scale %g", sc.Name, tr.TimeScale)
		if tr.Limit > 0 {
			fmt.Fprintf(&b, ", limit %d", tr.Limit)
		}
		if tr.Sort {
			b.WriteString(", sorted")
		}
		b.WriteString(envelopeWords(sc))
	}
	b.WriteString(")")
	return b.String()
}

// envelopeWords is ", envelope of N segments over D" for a scenario with
// workload.envelope, "" without.
func envelopeWords(sc *scenarios.Scenario) string {
	env := sc.Workload.Envelope
	if len(env) == 0 {
		return ""
	}
	var d des.Time
	for _, s := range env {
		d = des.AddSat(d, des.Time(s.For))
	}
	return fmt.Sprintf(", envelope of %s over %v", results.Count(len(env), "segment", "segments"), d)
}

// seconds formats a duration in seconds as a Go duration, to the
// millisecond.
func seconds(s float64) string {
	return time.Duration(s * 1e9).Round(time.Millisecond).String()
}

func printStats(w io.Writer, t *traceSource, s *workload.Stats) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "source\t%s\n", t.describe())
	fmt.Fprintf(tw, "requests\t%d\n", s.Requests)
	if s.Requests == 0 {
		tw.Flush()
		return
	}
	rate := "n/a (one instant)"
	if s.MeanRate > 0 {
		rate = fmt.Sprintf("%.3f requests/s", s.MeanRate)
	}
	fmt.Fprintf(tw, "time span\t%s (first arrival %s, last %s)\n", seconds(s.SpanS), seconds(s.FirstArrivalS), seconds(s.LastArrivalS))
	fmt.Fprintf(tw, "mean rate\t%s\n", rate)
	fmt.Fprintf(tw, "peak\t%s\n", peak(s))
	if s.Sessions != nil {
		fmt.Fprintf(tw, "sessions\t%d (%.2f requests each)\n", *s.Sessions, float64(s.Requests)/float64(max(*s.Sessions, 1)))
	} else {
		fmt.Fprintf(tw, "sessions\tn/a (the %s format has no session id)\n", t.format)
	}
	fmt.Fprintf(tw, "prefix hits\t%.4f of %d-token blocks (%d of %d), %.4f of prompt tokens: an infinite cache, in arrival order\n",
		s.HitRatio, s.BlockSize, s.HitBlocks, s.Blocks, s.HitTokenRatio)
	fmt.Fprintf(tw, "\t\n")
	fmt.Fprintf(tw, "tokens\tp50\tp90\tp99\tmax\tmean\ttotal\n")
	for _, row := range []struct {
		name string
		l    workload.Lengths
	}{{"input", s.Input}, {"output", s.Output}} {
		l := row.l
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%.1f\t%d\n", row.name, l.P50, l.P90, l.P99, l.Max, l.Mean, l.Total)
	}
	tw.Flush()
	fmt.Fprintf(w, "\narrivals per %s (virtual time from 0; the last bucket may be partial)\n", seconds(s.BucketS))
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "start\trequests\tper s\t\n")
	var most int64
	for _, b := range s.Arrivals {
		most = max(most, b.Requests)
	}
	for _, b := range s.Arrivals {
		bar := strings.Repeat("#", int((b.Requests*40+most-1)/max(most, 1)))
		fmt.Fprintf(tw, "%s\t%d\t%.2f\t %s\n", seconds(b.StartS), b.Requests, b.Rate, bar)
	}
	tw.Flush()
}

// maxPeaks is how many tied peak buckets stats names before it counts the
// rest.
const maxPeaks = 5

// peak says which arrival bucket is the busiest, "3.40 requests/s: 204 in
// the 1m0s from 13m0s", naming every bucket that ties for it, in time
// order, up to maxPeaks ("... in each 1m0s from 36m0s and 51m0s (tied)").
func peak(s *workload.Stats) string {
	p := s.Peak
	if len(p.StartsS) == 1 {
		return fmt.Sprintf("%.2f requests/s: %d in the %s from %s", p.Rate, p.Requests, seconds(s.BucketS), seconds(p.StartsS[0]))
	}
	var starts []string
	for _, t := range p.StartsS[:min(len(p.StartsS), maxPeaks)] {
		starts = append(starts, seconds(t))
	}
	last := " and " + starts[len(starts)-1]
	if more := len(p.StartsS) - len(starts); more > 0 {
		last = fmt.Sprintf(", %s and %d more", starts[len(starts)-1], more)
	}
	return fmt.Sprintf("%.2f requests/s: %d in each %s from %s%s (tied)", p.Rate, p.Requests, seconds(s.BucketS),
		strings.Join(starts[:len(starts)-1], ", "), last)
}

// writeAtomic writes path through fill, atomically (writeAtomically),
// creating its folder as needed. An existing path is refused (exit 2)
// unless force, and even then when it is a folder or the file input, which
// the command reads.
func writeAtomic(path, input string, force bool, fill func(io.Writer) error) error {
	if st, err := os.Stat(path); err == nil {
		switch {
		case st.IsDir():
			return usageError{fmt.Errorf("%s is a folder: -o names the file to write", path)}
		case sameFile(st, input):
			return usageError{fmt.Errorf("%s is the input %s: -o must name another file", path, input)}
		case !force:
			return usageError{fmt.Errorf("%s exists: --force replaces it", path)}
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return report.Unwritable(path, err)
	}
	return atomicfile.Write(path, func(tmp string) error {
		f, err := os.Create(tmp)
		if err != nil {
			return err
		}
		if err := fill(f); err != nil { // the trace writers buffer and flush
			f.Close()
			return err
		}
		return f.Close()
	})
}

// sameFile reports whether st is the file at path ("" names none).
func sameFile(st os.FileInfo, path string) bool {
	if path == "" {
		return false
	}
	in, err := os.Stat(path)
	return err == nil && os.SameFile(st, in)
}

// writeMooncake writes every request of t, read from input, to path as a
// Mooncake trace of block-token hash ids, atomically (writeAtomic), and
// returns how many it wrote.
func writeMooncake(ctx context.Context, t *traceSource, path, input string, force bool, block int) (n int64, err error) {
	err = writeAtomic(path, input, force, func(w io.Writer) error {
		mw := workload.NewMooncakeWriter(w, block)
		if err := t.each(ctx, mw.Write); err != nil {
			return err
		}
		n = mw.Written()
		return mw.Flush()
	})
	return n, err
}

type genFlags struct {
	out   string
	force bool
	sets  []string
}

func newTraceGen() *cobra.Command {
	var f genFlags
	cmd := &cobra.Command{
		Use:   "gen [SCENARIO] -o FILE",
		Short: "Write a scenario's synthetic workload as a Mooncake trace that replays to the same digest",
		Long: "gen writes the synthetic workload of a scenario (the default scenario without one) as a\n" +
			"Mooncake JSONL trace with one hash id per engine block. Replaying the trace in place of the\n" +
			"synthetic workload, with block_size set to the engine's, gives the same run and digest;\n" +
			"gen prints the workload to put in the scenario. The file is written atomically.",
		Args: positional(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return traceGen(cmd, first(args), f)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.out, "out", "o", "", "the trace file to write (required)")
	fl.BoolVar(&f.force, "force", false, "replace an existing file")
	fl.StringArrayVar(&f.sets, "set", nil, "override a scenario key: --set workload.synthetic.requests=500 (repeatable)")
	return cmd
}

func traceGen(cmd *cobra.Command, path string, f genFlags) error {
	if f.out == "" {
		return usageError{errors.New("trace gen: -o FILE is required")}
	}
	sc, err := study.LoadScenario(path, f.sets)
	if err != nil {
		return err
	}
	if sc.Workload.Synthetic == nil {
		return &scenarios.InputError{File: sc.DisplayFile(), Key: "workload",
			Err: errors.New("is a trace, not synthetic: trace gen writes synthetic workloads (trace convert converts a trace)")}
	}
	t, err := openScenario(sc)
	if err != nil {
		return err
	}
	defer t.closer.Close()
	n, err := writeMooncake(cmd.Context(), t, f.out, path, f.force, t.block)
	if err != nil {
		return err
	}
	sessions := generatorOf(t.src).Sessions()
	stderr := cmd.ErrOrStderr()
	fmt.Fprintf(stderr, "wrote %s: %s, %s, Mooncake JSONL with one hash id per %d-token block\n",
		f.out, results.Count(n, "request", "requests"), results.Count(sessions, "session", "sessions"), t.block)
	abs, err := filepath.Abs(f.out)
	if err != nil {
		abs = f.out
	}
	fmt.Fprintf(stderr, "replay it in place of the synthetic workload (same run, same digest) with:\n"+
		"  workload:\n    trace: {path: %s, block_size: %d}\n", yamlString(abs), t.block)
	if len(sc.Workload.Envelope) > 0 {
		fmt.Fprintf(stderr, "(its arrivals follow the scenario's workload.envelope already: leave the envelope out)\n")
	}
	args := []string{"kvsim", "replay"}
	if path != "" {
		args = append(args, path)
	}
	for _, s := range f.sets {
		if !strings.HasPrefix(strings.TrimSpace(s), "workload") {
			args = append(args, "--set", report.ShellQuote(s))
		}
	}
	args = append(args, "--set", report.ShellQuote(fmt.Sprintf("workload={trace: {path: %s, block_size: %d}}", yamlString(f.out), t.block)))
	fmt.Fprintf(stderr, "or, from this directory:\n  %s\n", strings.Join(args, " "))
	return nil
}

var plainWord = regexp.MustCompile(`^[A-Za-z0-9_./-]+$`)

// yamlString writes s as a YAML flow scalar.
func yamlString(s string) string {
	if plainWord.MatchString(s) {
		return s
	}
	return strconv.Quote(s)
}

type convertFlags struct {
	out        string
	to, from   string
	traceBlock int
	force      bool
}

func newTraceConvert() *cobra.Command {
	var f convertFlags
	cmd := &cobra.Command{
		Use:   "convert IN -o OUT --to mooncake|azure",
		Short: "Convert a trace between the Mooncake and Azure formats where the target can hold it",
		Long: "convert rewrites a trace in the other format. Azure to Mooncake is lossless (prompts get\n" +
			"hash ids of their own). Mooncake to Azure is refused, naming what would be lost, unless the\n" +
			"trace has no shared prefix, starts at 0 and its arrivals are whole 100 ns. An otel trace\n" +
			"(vLLM's OTLP JSON) converts as read, in arrival order from 0, prompts unshared; its measured\n" +
			"latencies are not carried over.",
		Args: positional(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return traceConvert(cmd, args[0], f)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.out, "out", "o", "", "the trace file to write (required)")
	fl.StringVar(&f.to, "to", "", "the format to write: mooncake or azure (required)")
	fl.StringVar(&f.from, "from", "", "the format of IN: mooncake, azure or otel (default: from its contents or name)")
	fl.IntVar(&f.traceBlock, "trace-block-size", 512, "tokens per hash id of the Mooncake side")
	fl.BoolVar(&f.force, "force", false, "replace an existing file")
	return cmd
}

func traceConvert(cmd *cobra.Command, in string, f convertFlags) error {
	to := workload.Format(f.to)
	switch {
	case f.out == "":
		return usageError{errors.New("trace convert: -o OUT is required")}
	case to != workload.FormatMooncake && to != workload.FormatAzure:
		return usageError{fmt.Errorf("--to %q: want %s", f.to, formatList(workload.FormatMooncake, workload.FormatAzure))}
	case f.traceBlock < 1:
		return usageError{errors.New("--trace-block-size must be at least 1")}
	}
	from, err := inputKind(in, f.from, "from")
	if err != nil {
		return err
	}
	switch from {
	case "":
		return usageError{fmt.Errorf("%s is a scenario: trace gen writes a scenario's synthetic workload", in)}
	case to:
		return usageError{fmt.Errorf("%s is already in the %s format", in, from)}
	}
	stderr := cmd.ErrOrStderr()
	if to == workload.FormatMooncake {
		t, err := openTrace(in, from, workload.TraceOptions{EngineBlockSize: f.traceBlock, TimeScale: 1})
		if err != nil {
			return err
		}
		defer t.closer.Close()
		n, err := writeMooncake(cmd.Context(), t, f.out, in, f.force, f.traceBlock)
		if err != nil {
			return err
		}
		dropped := ""
		if from == workload.FormatOtel {
			dropped = " (the measured latencies are not carried over)"
		}
		fmt.Fprintf(stderr, "wrote %s: %s, Mooncake JSONL with one hash id per %d tokens%s; replay it with\n"+
			"  workload:\n    trace: {path: %s, block_size: %d}\n", f.out, results.Count(n, "request", "requests"), f.traceBlock, dropped, yamlString(f.out), f.traceBlock)
		return nil
	}
	// Mooncake to Azure: chains at engine block size 1, so that prompts
	// sharing any prefix show as equal first blocks.
	t, err := openTrace(in, from, workload.TraceOptions{TraceBlockSize: f.traceBlock, EngineBlockSize: 1, TimeScale: 1})
	if err != nil {
		return err
	}
	defer t.closer.Close()
	loss := workload.NewAzureLoss()
	var n int64
	err = writeAtomic(f.out, in, f.force, func(w io.Writer) error {
		aw := workload.NewAzureWriter(w)
		err := t.each(cmd.Context(), func(r *workload.Request) error {
			loss.Add(r)
			if !loss.Lossless() {
				return nil // read on to say all that would be lost
			}
			return aw.Write(r)
		})
		if err != nil {
			return err
		}
		if err := loss.Err(); err != nil {
			return usageError{fmt.Errorf("%s: cannot convert to azure: %w; nothing written", in, err)}
		}
		n = aw.Written()
		return aw.Flush()
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "wrote %s: %s, Azure CSV from %s\n", f.out, results.Count(n, "request", "requests"), workload.AzureEpoch.Format(time.DateTime))
	return nil
}
