package report

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
)

// Tool is the value of a manifest's "tool" field. A directory whose
// summary.json or sweep.json carries it was written by kvsim, and only such
// a directory may be replaced by --force.
const Tool = "kvsim"

// Build identifies the kvsim binary: its release and, when it was built
// from a git checkout (go build, go install, go run), the commit.
type Build struct {
	Version    string `json:"version"`
	Commit     string `json:"commit,omitempty"`
	CommitTime string `json:"commit_time,omitempty"`
	// Modified: the checkout had uncommitted changes.
	Modified  bool   `json:"modified,omitempty"`
	GoVersion string `json:"go_version"`
	// ExecutableSHA256 is the SHA-256 of the kvsim binary itself: equal
	// for two builds of the same source (Go builds are reproducible),
	// different when anything in it changed, commit or not.
	ExecutableSHA256 string `json:"executable_sha256,omitempty"`
}

// ReadBuild returns the running binary's identity, version being kvsim's
// release (the Go build info holds no release for a development build).
func ReadBuild(version string) Build {
	b := Build{Version: version}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	b.GoVersion = info.GoVersion
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Commit = s.Value
		case "vcs.time":
			b.CommitTime = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

// exeSHA256 is the running executable's SHA-256, computed once a process
// and kept across processes in the user's cache directory (exeCacheDir).
var exeSHA256 = sync.OnceValue(func() string {
	path, err := os.Executable()
	if err != nil {
		return ""
	}
	id, err := cachedIdentity(exeCacheDir(), path)
	if err != nil {
		return ""
	}
	return id.SHA256
})

// exeCacheDir is where executables' hashes are kept: $KVSIM_CACHE, or
// kvsim/ in the user's cache directory; "" (no cache) when KVSIM_CACHE is
// "off" or there is no cache directory.
func exeCacheDir() string {
	if d := os.Getenv("KVSIM_CACHE"); d != "" {
		if d == "off" {
			return ""
		}
		return d
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "kvsim")
}

// cachedIdentity is IdentifyFile(path), kept in dir under a name taken
// from the file's path, size and modification time, so that the same file
// is hashed once, not once a run (a kvsim binary is tens of MB: about 60
// ms of a core). A file rewritten in place changes its modification time
// and so misses; this is the rule the go command's test cache uses for
// the files a test reads. dir "" hashes every time; a cache that cannot
// be read or written is skipped, never an error.
func cachedIdentity(dir, path string) (*FileID, error) {
	fi, err := os.Stat(path)
	if err != nil || dir == "" || !fi.Mode().IsRegular() {
		return IdentifyFile(path)
	}
	key := sha256.Sum256(fmt.Appendf(nil, "%s\x00%d\x00%d", path, fi.Size(), fi.ModTime().UnixNano()))
	entry := filepath.Join(dir, "sha256-"+hex.EncodeToString(key[:16]))
	if b, err := os.ReadFile(entry); err == nil && len(b) == 2*sha256.Size {
		if _, err := hex.DecodeString(string(b)); err == nil {
			return &FileID{Path: path, Bytes: fi.Size(), SHA256: string(b)}, nil
		}
	}
	id, err := IdentifyFile(path)
	if err != nil {
		return nil, err
	}
	if id.Bytes == fi.Size() && os.MkdirAll(dir, 0o755) == nil { // written while hashed: do not keep
		if f, err := os.CreateTemp(dir, "tmp-"); err == nil {
			_, werr := f.WriteString(id.SHA256)
			if cerr := f.Close(); werr != nil || cerr != nil || os.Rename(f.Name(), entry) != nil {
				os.Remove(f.Name())
			}
		}
	}
	return id, nil
}

// HashExecutable starts computing the running executable's SHA-256 in the
// background, for WithExecutable to take later: a kvsim binary is tens of
// MB (about 60 ms to hash, when the cache does not have it), which a
// command can overlap with its run.
func HashExecutable() { go exeSHA256() }

// WithExecutable returns b with the running executable's SHA-256.
func (b Build) WithExecutable() Build {
	b.ExecutableSHA256 = exeSHA256()
	return b
}

// String is the build on one line: "0.1.0-dev (commit 70cc3fb…, modified, go1.26.8)".
func (b Build) String() string {
	s := b.Version + " ("
	if b.Commit != "" {
		s += "commit " + b.Commit
		if b.Modified {
			s += ", modified"
		}
	} else {
		s += "commit unknown"
	}
	return s + ", " + b.GoVersion + ")"
}

// CommandLine is the manifest's command line as a POSIX shell would take
// it back, each argument quoted when it needs to be.
func (m *Manifest) CommandLine() string {
	args := make([]string, len(m.Command))
	for i, a := range m.Command {
		args[i] = ShellQuote(a)
	}
	return strings.Join(args, " ")
}

// shellWord is an argument a POSIX shell takes as it is.
var shellWord = regexp.MustCompile(`^[A-Za-z0-9_./-]+$`)

// ShellQuote quotes s for a POSIX shell when it needs it.
func ShellQuote(s string) string {
	if shellWord.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Manifest records what produced an output directory, so that it can be
// reproduced: the build, the command line, the scenario file and its --set
// overrides, and the trace it replayed.
type Manifest struct {
	Tool  string `json:"tool"`
	Build Build  `json:"build"`
	// Command is the command line, the program's name first.
	Command []string `json:"command"`
	// Scenario is the scenario file as given; "" for the embedded default.
	Scenario string   `json:"scenario"`
	Sets     []string `json:"sets"`
	// Trace is the replayed trace; nil for a synthetic workload.
	Trace *FileID `json:"trace,omitempty"`
	// ModelConfig is the engine's cluster.engine.timing.model_config (a
	// config.json the resolved scenario names by path only); nil without.
	ModelConfig *FileID `json:"model_config,omitempty"`
}

// FileID identifies a file's contents.
type FileID struct {
	Path   string `json:"path"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// IdentifyFile reads path and returns its size and SHA-256.
func IdentifyFile(path string) (*FileID, error) {
	id, err := StartIdentifyFile(path)
	if err != nil {
		return nil, err
	}
	return id()
}

// identifyHead is how much of a file StartIdentifyFile reads before it
// returns: io.Copy's buffer, one read.
const identifyHead = 32 << 10

// StartIdentifyFile opens path and reads its first 32 KiB, returning
// the error of either (a missing file, a directory) at once, and hashes the
// rest on a goroutine of its own: the function returned waits for it and
// returns what IdentifyFile would, every time it is called.
func StartIdentifyFile(path string) (func() (*FileID, error), error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	head, err := io.CopyN(h, f, identifyHead)
	if err != nil && err != io.EOF {
		f.Close()
		return nil, err
	}
	id := sync.OnceValues(func() (*FileID, error) {
		defer f.Close()
		n, err := io.Copy(h, f)
		if err != nil {
			return nil, err
		}
		return &FileID{Path: path, Bytes: head + n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
	})
	go id()
	return id, nil
}

// SameRun reports whether two manifests describe the same run: the same
// build (down to the executable's bytes), scenario, overrides, and trace
// and model_config contents. The command line may
// differ (a sweep resumed with other flags).
func (m *Manifest) SameRun(o *Manifest) bool {
	return m.Tool == o.Tool && m.Build == o.Build && m.Scenario == o.Scenario &&
		slices.Equal(m.Sets, o.Sets) && m.Trace.Equal(o.Trace) && m.ModelConfig.Equal(o.ModelConfig)
}

// Equal reports whether f and o identify the same file contents at the
// same path; two nils (no trace) are equal.
func (f *FileID) Equal(o *FileID) bool {
	if f == nil || o == nil {
		return f == o
	}
	return *f == *o
}

// ReadManifest reads the "manifest" field of a JSON file (summary.json,
// sweep.json). It returns nil and no error when the file has none.
func ReadManifest(path string) (*Manifest, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var v struct {
		Manifest *Manifest `json:"manifest"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return v.Manifest, nil
}
