// Command kvsim is the kvsim command line: replay a scenario, validate one,
// compare two runs, sweep a grid of variations, plot a run or a sweep.
// See docs/cli.md.
package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/scenarios"
	"github.com/kvsim/kvsim/sim"
	"github.com/kvsim/kvsim/study"
)

// version is kvsim's release; golden digests are tied to it. The commit a
// binary was built from comes from the Go build info (report.ReadBuild).
const version = "0.1.0-dev"

// Exit codes, as docs/cli.md tables them.
const (
	exitOK          = 0
	exitFailed      = 1   // the run failed, a check did not hold, an output could not be written, compare found differences
	exitBadInput    = 2   // the scenario, a trace, a flag or the output directory is wrong
	exitInterrupted = 130 // Ctrl-C or SIGTERM: 128 + SIGINT, the shell's convention
)

func main() {
	policy := func() {} // the environment's GOGC, when it sets one, stands
	if os.Getenv("GOGC") == "" {
		policy = tuneGC
	}
	hugeHeap(policy)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The first interrupt stops the run before its next event; the next one
	// kills the process, as it would without kvsim's handler, so that a
	// run stuck inside an event (a bug) still stops.
	context.AfterFunc(ctx, stop)
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run executes one command line and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRoot(append([]string{"kvsim"}, args...))
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := execute(ctx, root)
	code := exitCode(err)
	switch {
	case err == nil, errors.Is(err, errDiffer): // compare printed the differences
	case code == exitInterrupted:
		var ie *study.Interrupted
		if !errors.As(err, &ie) {
			ie = &study.Interrupted{Kept: "the run stopped and its output was removed"}
		}
		printError(stderr, ie)
	default:
		printError(stderr, err)
	}
	return code
}

// execute runs the command; a panic becomes a *sim.InternalError once the
// command's deferred clean-ups (the removal of a partial output) have run.
func execute(ctx context.Context, root *cobra.Command) (err error) {
	defer sim.CatchPanic(&err)
	return root.ExecuteContext(ctx)
}

// exitCode maps a command's error to the process's exit code.
func exitCode(err error) int {
	var ie *scenarios.InputError
	var ue usageError
	var re *report.RefusedError
	var se *study.InputError
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, context.Canceled):
		return exitInterrupted
	case errors.As(err, &ie), errors.As(err, &ue), errors.As(err, &re), errors.As(err, &se), isCobraUsage(err):
		return exitBadInput
	}
	return exitFailed
}

// isCobraUsage reports whether err is one of cobra's own command-line
// errors, which it returns as plain errors.
func isCobraUsage(err error) bool {
	msg := err.Error()
	return strings.HasPrefix(msg, "unknown command") || strings.HasPrefix(msg, "required flag")
}

// printError writes err with every line prefixed "kvsim: ", so that each
// of several validation errors is one grep-able line.
func printError(w io.Writer, err error) {
	for _, line := range strings.Split(err.Error(), "\n") {
		fmt.Fprintln(w, "kvsim:", line)
	}
}

// warn writes warnings, one a line, prefixed "kvsim: warning: ".
func warn(w io.Writer, warnings []string) {
	for _, s := range warnings {
		fmt.Fprintln(w, "kvsim: warning:", s)
	}
}

// usageError is a bad command line.
type usageError struct{ error }

// newRoot builds the command tree; cmdline is the command line, recorded
// in every output's manifest.
func newRoot(cmdline []string) *cobra.Command {
	build := report.ReadBuild(version)
	root := &cobra.Command{
		Use:           "kvsim",
		Short:         "Deterministic simulator of KV-aware LLM serving clusters",
		Long:          "kvsim replays request traces across simulated vLLM workers behind a KV-aware router\nand writes Parquet reports. See docs/ for the model and the scenario reference.",
		Version:       build.String(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.SetHelpCommand(newHelp(root))
	root.AddCommand(newReplay(cmdline), newValidate(), newCompare(), newSweep(cmdline), newSearch(cmdline), newPlot(), newReport(), newTrace(), newCalibrate(), newVersion(build))
	return root
}

// newHelp is `kvsim help [COMMAND...]`: cobra's help, except that an
// unknown command is bad input (exit 2), not a help page and exit 0.
func newHelp(root *cobra.Command) *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		RunE: func(_ *cobra.Command, args []string) error {
			cmd, rest, err := root.Find(args)
			if err != nil || len(rest) > 0 {
				return usageError{fmt.Errorf("unknown help topic %q: kvsim help lists the commands", strings.Join(args, " "))}
			}
			return cmd.Help()
		},
	}
}

func newVersion(b report.Build) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print kvsim's version, the commit it was built from, the Go version and the binary's SHA-256",
		Args:  positional(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			w := cmd.OutOrStdout()
			b := b.WithExecutable()
			if asJSON {
				return printJSON(w, b)
			}
			fmt.Fprintf(w, "kvsim %s\n", b.Version)
			commit := cmp.Or(b.Commit, "unknown (not built from a git checkout)")
			if b.Modified {
				commit += " (with uncommitted changes)"
			}
			fmt.Fprintf(w, "commit %s\n", commit)
			if b.CommitTime != "" {
				fmt.Fprintf(w, "commit time %s\n", b.CommitTime)
			}
			fmt.Fprintf(w, "go %s\n", b.GoVersion)
			fmt.Fprintf(w, "executable sha256 %s\n", b.ExecutableSHA256)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

// printJSON writes v to w as indented JSON.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// positional wraps cobra's argument checks so that a wrong count is a usage
// error (exit 2).
func positional(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return usageError{err}
		}
		return nil
	}
}

func newValidate() *cobra.Command {
	var sets []string
	var expand bool
	cmd := &cobra.Command{
		Use:   "validate [SCENARIO]",
		Short: "Check a scenario and print it resolved, with every default",
		Long: "validate checks a scenario as replay would run it, reading its whole trace, and\n" +
			"prints it resolved, with every default: what validate accepts, replay runs.\n" +
			"With --expand, a scenario's chaos is written out as the fault events it draws\n" +
			"(origin: chaos): the same run, its faults listed to be cut down by hand.",
		Args: positional(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := study.Prepare(first(args), sets, 1, true)
			if err != nil {
				return err
			}
			if _, err := p.ReadWorkload(); err != nil {
				return err
			}
			warn(cmd.ErrOrStderr(), p.Scenario.Warnings())
			sc := p.Scenario
			if expand {
				sc = sc.Expanded()
			}
			out, err := sc.YAML()
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(out)
			return err
		},
	}
	cmd.Flags().StringArrayVar(&sets, "set", nil, "override a scenario key: --set cluster.workers=32 (repeatable)")
	cmd.Flags().BoolVar(&expand, "expand", false, "write chaos out as the fault events it draws")
	return cmd
}

func first(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return args[0]
}
