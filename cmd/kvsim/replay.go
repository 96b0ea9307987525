package main

import (
	"crypto/sha256"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/results"
	"github.com/kvsim/kvsim/sim"
	"github.com/kvsim/kvsim/study"
	"github.com/kvsim/kvsim/study/page"

	"github.com/spf13/cobra"
)

type replayFlags struct {
	out     string
	sets    []string
	check   bool
	force   bool
	expect  string
	cpuProf string
	memProf string
	quiet   bool
	json    bool
	twins   bool
	report  bool
}

func newReplay(cmdline []string) *cobra.Command {
	var f replayFlags
	cmd := &cobra.Command{
		Use:   "replay [SCENARIO]",
		Short: "Run a scenario (the built-in default without one) and write its report",
		Long: "replay runs a scenario and writes its tables, scenario.yaml (resolved) and\n" +
			"summary.json (with the manifest of what produced them) to a new directory\n" +
			"(default out/<name>), atomically. Without SCENARIO it runs the embedded default.",
		Args: positional(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return replay(cmd, cmdline, first(args), f)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.out, "out", "o", "", "output directory (default out/<scenario name>)")
	fl.StringArrayVar(&f.sets, "set", nil, "override a scenario key: --set cluster.workers=32 (repeatable)")
	fl.BoolVar(&f.check, "check", false, "verify model invariants during the run; a violation fails it (exit 1)")
	fl.BoolVar(&f.force, "force", false, "replace an output directory kvsim wrote, once the run succeeds")
	fl.StringVar(&f.expect, "expect-digest", "", "fail (exit 1) unless the run's digest is HEX; the report is still written")
	fl.StringVar(&f.cpuProf, "cpuprofile", "", "write a pprof CPU profile of the run to FILE")
	fl.StringVar(&f.memProf, "memprofile", "", "write a pprof heap profile (in use at the run's last garbage collection) to FILE")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no progress bar")
	fl.BoolVar(&f.twins, "twins", true, twinsHelp)
	fl.BoolVar(&f.report, "report", false, "write DIR/report.html, the run's page (kvsim report), once it ends")
	fl.BoolVar(&f.json, "json", false, "print the summary (summary.json) as JSON on stdout instead of the table")
	return cmd
}

func replay(cmd *cobra.Command, cmdline []string, path string, f replayFlags) (err error) {
	if err := checkDigestPrefix(f.expect, cmd.Flags().Changed("expect-digest")); err != nil {
		return err
	}
	// -o "$DIR" or -o=$DIR with DIR unset, most likely (pflag reads -o= as
	// the value "=", --out= as "")
	if (f.out == "" || f.out == "=") && cmd.Flags().Changed("out") {
		return usageError{fmt.Errorf(`-o %q: name the output directory, or omit -o for out/<scenario name>`, f.out)}
	}
	report.HashExecutable() // for the manifest, while the run goes
	plan, err := study.Prepare(path, f.sets, 1, f.twins)
	if err != nil {
		return err
	}
	sc := plan.Scenario
	stderr := cmd.ErrOrStderr()
	showBar := showProgress(stderr, f.quiet)
	var total int64
	if showBar { // the bar's total, and a bad trace refused before anything is written
		if total, err = plan.ReadWorkload(); err != nil {
			return err
		}
	}
	warn(stderr, sc.Warnings())
	env := newEnv(cmd, cmdline, true)
	m, err := env.Manifest(path, f.sets, sc)
	if err != nil {
		return err
	}
	dir := f.out
	if dir == "" {
		if n := sc.Name; n == "." || n == ".." || strings.ContainsAny(n, `/\`) {
			// out/../../etc would be outside out/; out/a/b a folder of folders
			return sc.ErrAt("name", "%q is not one directory's name, which the default output out/<name> needs: give -o DIR", n)
		}
		dir = filepath.Join("out", sc.Name)
	}
	for _, prof := range []struct{ flag, path string }{{"--cpuprofile", f.cpuProf}, {"--memprofile", f.memProf}} {
		if prof.path != "" && within(prof.path, dir) { // the run's output would replace it, or it the output
			return usageError{fmt.Errorf("%s %s: the profile would be the run's output directory %s or in it: write it elsewhere", prof.flag, prof.path, dir)}
		}
	}
	out, err := report.Create(dir, f.force)
	if err != nil {
		return err
	}
	defer out.Abort() // no-op after Commit
	opt := sim.Options{Check: f.check, Twins: f.twins}
	clearBar := func() {}
	if showBar {
		bar := newBar(stderr, total, "requests")
		clearBar = func() { bar.Clear() }
		opt.Progress = replayProgress(bar)
	}
	stopProfile, err := startCPUProfile(f.cpuProf)
	if err != nil {
		clearBar()
		return err
	}
	sum, err := env.RunTo(cmd.Context(), out.Path, plan, opt, m)
	stopProfile()
	clearBar() // before anything else is printed
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
	if f.report {
		if err := writeReport(stderr, dir, page.Options{}); err != nil {
			return err
		}
	}
	warn(stderr, sc.LateEvents(des.Time(sum.LastArrivalNs)))
	warn(stderr, sum.Warnings)
	if f.json {
		if err := printJSON(cmd.OutOrStdout(), sum); err != nil {
			return err
		}
	} else {
		printSummary(cmd.OutOrStdout(), sum.Summary, dir)
	}
	if f.expect != "" && !strings.HasPrefix(sum.Digest, strings.ToLower(f.expect)) {
		return fmt.Errorf("digest mismatch: the run's digest is %s, expected %s (kvsim compare shows what changed)", sum.Digest, f.expect)
	}
	if unmet := results.Unmet(sc, sum.Summary); len(unmet) > 0 {
		return fmt.Errorf("the run does not show what the scenario expects: %s", strings.Join(unmet, "; "))
	}
	return nil
}

// shortDigest is the digest's hex digits sweep prints, and the fewest
// --expect-digest takes.
const shortDigest = 12

// checkDigestPrefix refuses an --expect-digest value that is not the first
// 12 to 64 hex digits of a digest, before anything runs; "" is none unless
// given (a CI script's unset $DIGEST must not pass every run).
func checkDigestPrefix(s string, given bool) error {
	if s == "" && !given {
		return nil
	}
	if len(s) < shortDigest || len(s) > 2*sha256.Size || strings.Trim(strings.ToLower(s), "0123456789abcdef") != "" {
		return usageError{fmt.Errorf("--expect-digest %q: want the run's digest in hex, all 64 digits or its first %d or more (as sweep prints it)", s, shortDigest)}
	}
	return nil
}

// within reports whether path is dir or lies inside it, as absolute paths.
func within(path, dir string) bool {
	p, err1 := filepath.Abs(path)
	d, err2 := filepath.Abs(dir)
	if err1 != nil || err2 != nil {
		return false
	}
	return p == d || strings.HasPrefix(p, d+string(filepath.Separator))
}
