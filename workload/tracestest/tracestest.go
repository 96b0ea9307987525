// Package tracestest finds the shared request traces, contract scenarios and
// measured vLLM traces for tests and benchmarks. They are never copied into
// this repository: KVSIM_TRACES names the traces folder (relative paths
// resolve against the module root, where CI runs), and without it the folder
// ../shared/traces beside the module is used when present; likewise
// KVSIM_VLLM_TRACES and ../shared/vllm-traces for the measured vLLM runs.
// When a folder is absent and unnamed its tests skip, and the package's own
// test says so in one line on the terminal, since go test ./... shows a
// skip only with -v; when a variable names a folder that is absent, its
// tests fail, and so does that one.
package tracestest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// moduleRoot is the nearest directory above the working directory holding
// go.mod.
func moduleRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// Dir returns the traces folder. When KVSIM_TRACES is set the folder must
// exist (the test fails otherwise); when it is not set and ../shared/traces
// is absent, the test is skipped.
func Dir(tb testing.TB) string {
	tb.Helper()
	return sharedDir(tb, traces)
}

// VLLMDir returns the folder of measured vLLM traces (one subfolder a run,
// each with its traces.json). When KVSIM_VLLM_TRACES is set the folder must
// exist (the test fails otherwise); when it is not set and
// ../shared/vllm-traces is absent, the test is skipped.
func VLLMDir(tb testing.TB) string {
	tb.Helper()
	return sharedDir(tb, vllmTraces)
}

// VLLMPath returns a file in the vLLM traces folder
// ("jan21-llama7b-train-1/traces.json"), failing the test if it is missing.
func VLLMPath(tb testing.TB, name string) string {
	tb.Helper()
	p := filepath.Join(VLLMDir(tb), name)
	if _, err := os.Stat(p); err != nil {
		tb.Fatal(err)
	}
	return p
}

// sharedDir is the folder f.env names, else ../shared/<f.name> beside the
// module.
func sharedDir(tb testing.TB, f sharedFolder) string {
	tb.Helper()
	dir, set, err := find(moduleRoot(), f.env, f.name)
	if err != nil {
		if set {
			tb.Fatalf("%s=%s: %v", f.env, os.Getenv(f.env), err)
		}
		tb.Skipf("no %s folder (%s); set %s", f.name, dir, f.env)
	}
	return dir
}

// find is the folder env names (relative to root), else root/../shared/name;
// set says whether env named it, err whether it is missing.
func find(root, env, name string) (dir string, set bool, err error) {
	dir = os.Getenv(env)
	set = dir != ""
	if !set {
		dir = filepath.Join(root, "..", "shared", name)
	} else if !filepath.IsAbs(dir) {
		dir = filepath.Join(root, dir)
	}
	_, err = os.Stat(dir)
	return dir, set, err
}

// shared are the folders the tests read: the traces, then the measured
// vLLM runs.
var shared = []sharedFolder{traces, vllmTraces}

// sharedFolder is a folder of shared data: the variable that names it, and
// its name beside the module.
type sharedFolder struct{ env, name string }

var (
	traces     = sharedFolder{"KVSIM_TRACES", "traces"}
	vllmTraces = sharedFolder{"KVSIM_VLLM_TRACES", "vllm-traces"}
)

// missing is one line naming the shared folders that are absent while no
// variable names them, so that the tests reading them skip, and the
// variable that would name each; "" when there is none. root is the module
// root.
func missing(root string) string {
	var absent, envs []string
	for _, s := range shared {
		if _, set, err := find(root, s.env, s.name); !set && err != nil {
			absent, envs = append(absent, filepath.Join("..", "shared", s.name)), append(envs, s.env)
		}
	}
	if len(absent) == 0 {
		return ""
	}
	return fmt.Sprintf("kvsim: no %s beside the module: the tests of real traces skip; set %s to run them",
		strings.Join(absent, " or "), strings.Join(envs, " and "))
}

// Path returns a file in the traces folder, failing the test if it is
// missing.
func Path(tb testing.TB, name string) string {
	tb.Helper()
	p := filepath.Join(Dir(tb), name)
	if _, err := os.Stat(p); err != nil {
		tb.Fatal(err)
	}
	return p
}

// Contract returns the contract scenarios folder, the sibling "contract" of
// the traces folder, whose scenarios name traces as ../traces/FILE.
func Contract(tb testing.TB) string {
	tb.Helper()
	p := filepath.Join(Dir(tb), "..", "contract")
	if _, err := os.Stat(p); err != nil {
		tb.Fatal(err)
	}
	return p
}
