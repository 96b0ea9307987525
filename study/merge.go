package study

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/report/parquetio"
)

// Merge joins the parts of a sharded sweep, the sweep directories dirs,
// into a new directory out (replacing one kvsim wrote with force): it
// checks they are parts of the same sweep and together hold each run
// exactly once, and writes out/sweep.json, points.parquet and
// sweep.parquet (rows in run order). It returns the sweep's spec and rows.
func (e *Env) Merge(dirs []string, out string, force bool) (*Spec, []report.SweepRow, error) {
	var spec *Spec
	var rows []report.SweepRow
	for _, d := range dirs {
		s, err := ReadSpec(d)
		if err != nil {
			return nil, nil, err
		}
		shard := s.Shard
		s.Shard = ""
		if spec == nil {
			spec = s
		} else if !spec.sameGrid(s) {
			part := ""
			if shard != "" {
				part = " (shard " + shard + ")"
			}
			return nil, nil, inputErr("%s%s is part of another sweep than %s", d, part, dirs[0])
		}
		if !exists(filepath.Join(d, report.SweepFile)) {
			return nil, nil, inputErr("%s is an unfinished sweep (no sweep.parquet): finish it with the command that started it and --resume", d)
		}
		k, r, err := parquetio.ReadSweep(filepath.Join(d, report.SweepFile))
		if err != nil {
			return nil, nil, err
		}
		if keys, _ := spec.Dims(); !slices.Equal(k, keys) {
			return nil, nil, inputErr("%s: its sweep.parquet varies %s, its sweep.json %s", d, strings.Join(k, ", "), strings.Join(keys, ", "))
		}
		rows = append(rows, r...)
	}
	slices.SortFunc(rows, func(a, b report.SweepRow) int { return int(a.Run - b.Run) })
	for i, r := range rows {
		if r.Run != int64(i) {
			return nil, nil, inputErr("the parts hold runs %s; the sweep has runs 0-%d, each exactly once", runList(rows), spec.Runs-1)
		}
	}
	if len(rows) != spec.Runs {
		return nil, nil, inputErr("the parts hold %d of the sweep's %d runs", len(rows), spec.Runs)
	}
	dir, err := report.Create(out, force)
	if err != nil {
		return nil, nil, err
	}
	defer dir.Abort() // no-op after Commit
	spec.Manifest = e.commandManifest(spec.Scenario, spec.Sets)
	if err := report.WriteJSON(dir.Path(report.SweepSpecFile), spec); err != nil {
		return nil, nil, err
	}
	err = writeSweep(spec, rows, func(name string, fill func(path string) error) error { return fill(dir.Path(name)) })
	if err != nil {
		return nil, nil, err
	}
	if err := dir.Commit(); err != nil {
		return nil, nil, err
	}
	e.warn(spec.InertSeeds(rows))
	return spec, rows, nil
}

// runList is the rows' runs, comma-separated.
func runList(rows []report.SweepRow) string {
	var s []string
	for _, r := range rows {
		s = append(s, strconv.FormatInt(r.Run, 10))
	}
	return strings.Join(s, ",")
}
