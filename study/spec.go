package study

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/kvsim/kvsim/internal/atomicfile"
	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/report/parquetio"
)

// Spec is a sweep's grid (a search's too), written to DIR/sweep.json when
// the sweep starts, so that an interrupted sweep can be resumed and the
// parts of a sharded sweep can be checked and merged.
type Spec struct {
	Scenario string     `json:"scenario"` // the scenario file; "" for the embedded default
	Sets     []string   `json:"sets"`     // the --set every run gets
	Keys     []string   `json:"keys"`     // the varied keys
	Values   [][]string `json:"values"`   // by key
	Runs     int        `json:"runs"`
	Shard    string     `json:"shard,omitempty"` // "I/N"
	// Replicates is the runs of each grid point, with the seeds Seed,
	// Seed+1, ... (Dims); 1: each point once, at the scenario's seed.
	Replicates int    `json:"replicates"`
	Seed       uint64 `json:"seed,omitempty"` // the first replicate's, with replicates
	// Twins says the runs ran their events' twins (Env.Twins): a --resume
	// or a merge of runs with and without them is refused, since only the
	// ones with twins have their events' effects.
	Twins bool `json:"twins"`
	// Manifest records the command that started the sweep; each run's
	// summary.json holds its own.
	Manifest *report.Manifest `json:"manifest,omitempty"`
}

// seedKey is the scenario key a sweep's replicates vary.
const seedKey = "seed"

// sameGrid reports whether two specs describe the same runs: they differ at
// most in their manifests.
func (s *Spec) sameGrid(o *Spec) bool {
	a, b := *s, *o
	a.Manifest, b.Manifest = nil, nil
	return reflect.DeepEqual(a, b)
}

// Point is one run of the grid: its index, its grid point's index and one
// value a key of Dims.
type Point struct {
	Run    int
	Point  int
	Values []string
}

// Grid is every run of the cartesian product of the values of Dims, in
// run order.
func (s *Spec) Grid() []Point {
	_, values := s.Dims()
	n := 1
	for _, vs := range values {
		n *= len(vs)
	}
	pts := make([]Point, n)
	for i := range pts {
		pts[i] = s.at(values, i)
	}
	return pts
}

// at is run i of the cartesian product of values, Dims' values, the first
// key varying slowest.
func (s *Spec) at(values [][]string, i int) Point {
	p := Point{Run: i, Point: i / s.Replicates, Values: make([]string, len(values))}
	for k := len(values) - 1; k >= 0; k-- {
		p.Values[k], i = values[k][i%len(values[k])], i/len(values[k])
	}
	return p
}

// Dims are the grid's keys and values: the varied ones, then, with
// replicates, seed with the replicates' seeds, varying fastest, so that
// run r is replicate r % Replicates of grid point r / Replicates.
func (s *Spec) Dims() ([]string, [][]string) {
	if s.Replicates <= 1 {
		return s.Keys, s.Values
	}
	seeds := make([]string, s.Replicates)
	for r := range seeds {
		seeds[r] = strconv.FormatUint(s.Seed+uint64(r), 10)
	}
	return append(slices.Clone(s.Keys), seedKey), append(slices.Clone(s.Values), seeds)
}

// setsOf are a point's overrides: the sweep's --set, then one a key of Dims.
func (s *Spec) setsOf(p Point) []string {
	out := slices.Clone(s.Sets)
	keys, _ := s.Dims()
	for i, k := range keys {
		out = append(out, k+"="+p.Values[i])
	}
	return out
}

// Points summarises a sweep's rows, in run order, by grid point.
func (s *Spec) Points(rows []report.SweepRow) []report.PointRow {
	return report.Points(len(s.Keys), rows, s.Replicates)
}

// check refuses replicates below 1, and above 1 with seed among the
// varied keys (the replicates are the seeds), and a shard that is not
// "I/N" with 1 <= I <= N; it returns the shard's I and N (1 and 1
// without one).
func (s *Spec) check() (int, int, error) {
	switch {
	case s.Replicates < 1:
		return 0, 0, inputErr("--replicates %d: want at least 1", s.Replicates)
	case s.Replicates > 1 && slices.Contains(s.Keys, seedKey):
		return 0, 0, inputErr("--vary seed and --replicates %d: the replicates are the seeds (the scenario's seed +0 to +%d); give one",
			s.Replicates, s.Replicates-1)
	case s.tooMany():
		return 0, 0, inputErr("--vary and --replicates %d: more than %d runs", s.Replicates, maxRuns)
	case s.Shard == "":
		return 1, 1, nil
	}
	a, b, ok := strings.Cut(s.Shard, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 1 || i > n {
		return 0, 0, inputErr("--shard %q: want I/N with 1 <= I <= N", s.Shard)
	}
	return i, n, nil
}

// tooMany reports whether the grid, every combination of the values times
// the replicates, holds more than maxRuns runs.
func (s *Spec) tooMany() bool {
	n := uint64(s.Replicates)
	for _, v := range s.Values {
		if n *= uint64(max(len(v), 1)); n > maxRuns {
			return true
		}
	}
	return n > maxRuns
}

// ReadSpec reads dir/sweep.json.
func ReadSpec(dir string) (*Spec, error) {
	raw, err := os.ReadFile(filepath.Join(dir, report.SweepSpecFile))
	if err != nil {
		return nil, inputErr("%s is not a sweep directory: %w", dir, err)
	}
	var s Spec
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, inputErr("%s: %w", filepath.Join(dir, report.SweepSpecFile), err)
	}
	s.Replicates = max(s.Replicates, 1) // absent from the sweeps of builds before --replicates
	return &s, nil
}

// writeSweep writes points.parquet, then sweep.parquet (whose presence
// says a sweep is complete): write(name, fill) makes the sweep directory's
// file name, fill writing it at the path it is given.
func writeSweep(spec *Spec, rows []report.SweepRow, write func(name string, fill func(path string) error) error) error {
	err := write(report.PointsFile, func(path string) error { return parquetio.WritePoints(path, spec.Keys, spec.Points(rows)) })
	if err != nil {
		return err
	}
	keys, _ := spec.Dims()
	return write(report.SweepFile, func(path string) error { return parquetio.WriteSweep(path, keys, rows) })
}

// finishSweep writes dir/points.parquet and dir/sweep.parquet, last and
// atomically (its presence says the sweep is complete).
func finishSweep(dir string, spec *Spec, rows []report.SweepRow) error {
	return writeSweep(spec, rows, func(name string, fill func(path string) error) error {
		return atomicfile.Write(filepath.Join(dir, name), fill)
	})
}

// startDir creates dir with the sweep's spec in dir/sweep.json and an
// empty dir/runs, or with resume checks that dir holds a sweep of the same
// grid. An existing dir is refused unless force and kvsim wrote it, when
// it is removed first.
func startDir(dir string, force, resume bool, spec *Spec) error {
	if resume {
		old, err := ReadSpec(dir)
		if err != nil {
			return err
		}
		if !old.sameGrid(spec) {
			return inputErr("--resume: %s holds another sweep (its sweep.json has another scenario, --set, --vary, --replicates, --shard or --twins); give the command that started it, or another -o", dir)
		}
		return nil
	}
	if _, err := os.Lstat(dir); err == nil {
		if !force {
			switch fi, err := os.Stat(dir); {
			case err == nil && !fi.IsDir():
				return inputErr("output %s already exists and is a file: choose another -o", dir)
			case !exists(filepath.Join(dir, report.SweepSpecFile)):
				return inputErr("output %s already exists and holds no sweep: choose another -o, or --force to replace it (an empty folder, or one kvsim wrote)", dir)
			}
			return inputErr("output %s already exists: add --resume to finish the sweep it holds, or --force to replace it", dir)
		}
		if err := report.Replaceable(dir); err != nil {
			return err
		}
		if err := os.RemoveAll(dir); err != nil {
			return report.Unwritable(dir, err)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, report.RunsDir), 0o755); err != nil {
		return report.Unwritable(dir, err)
	}
	return atomicfile.Write(filepath.Join(dir, report.SweepSpecFile), func(path string) error { return report.WriteJSON(path, spec) })
}
