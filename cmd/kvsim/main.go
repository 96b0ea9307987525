// Command kvsim is the kvsim command line: replay a scenario, validate one,
// compare two runs, sweep a grid of variations, plot a run or a sweep.
// See docs/cli.md.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/kvsim/kvsim/scenarios"
)

// version is kvsim's release; golden digests are tied to it.
const version = "0.1.0-dev"

// Exit codes.
const (
	exitOK       = 0
	exitFailed   = 1 // the run failed or a check did not hold
	exitBadInput = 2 // the scenario, a trace or a flag is wrong
)

// gcPercent is kvsim's GOGC unless the environment sets one. A run's heap
// is mostly pointer-free block tables that live as long as the run; the
// collector marks them without scanning them, so collecting when the heap
// has grown 20% instead of Go's default 100% costs little time and saves
// most of the headroom (a million-request run: 1.4 GB peak RSS instead of
// 2.3 GB, same wall time; docs/performance.md).
const gcPercent = 20

func main() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run executes one command line and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRoot()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	if errors.Is(err, errDiffer) {
		return exitFailed // compare printed the differences
	}
	if errors.Is(err, context.Canceled) {
		fmt.Fprintln(stderr, "kvsim: interrupted: the run stopped and its output was removed")
		return exitFailed
	}
	fmt.Fprintln(stderr, "kvsim:", err)
	var ie *scenarios.InputError
	var ue usageError
	if errors.As(err, &ie) || errors.As(err, &ue) || strings.HasPrefix(err.Error(), "unknown command") {
		return exitBadInput
	}
	return exitFailed
}

// usageError is a bad command line.
type usageError struct{ error }

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:           "kvsim",
		Short:         "Deterministic simulator of KV-aware LLM serving clusters",
		Long:          "kvsim replays request traces across simulated vLLM workers behind a KV-aware router\nand writes Parquet reports. See docs/ for the model and the scenario reference.",
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(newReplay(), newValidate(), newCompare(), newSweep(), newPlot(), newTrace())
	return root
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

// loadScenario loads the file, or the embedded default when path is "".
func loadScenario(path string, sets []string) (*scenarios.Scenario, error) {
	if path == "" {
		return scenarios.LoadDefault(sets)
	}
	return scenarios.Load(path, sets)
}

func newValidate() *cobra.Command {
	var sets []string
	cmd := &cobra.Command{
		Use:   "validate [SCENARIO]",
		Short: "Check a scenario and print it resolved, with every default",
		Args:  positional(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			sc, err := loadScenario(first(args), sets)
			if err != nil {
				return err
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
	return cmd
}

func first(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return args[0]
}
