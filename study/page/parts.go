package page

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/report/chart"
	"github.com/kvsim/kvsim/results"
)

// textRow is a row of plain cells.
func textRow(cells ...string) row {
	r := row{Cells: make([]cell, len(cells))}
	for i, c := range cells {
		r.Cells[i] = cell{Text: c}
	}
	return r
}

// wordsTable is a table of results' words as the page's.
func wordsTable(w results.Table) *table {
	t := &table{Head: w.Head}
	for _, r := range w.Rows {
		t.Rows = append(t.Rows, textRow(r...))
	}
	return t
}

// chartSource is a chart's name and the files and columns it reads.
type chartSource struct{ name, source string }

// addCharts adds the charts of list that were drawn (those with data), in
// its order, each with its source.
func addCharts(s *section, c *chart.Charts, list []chartSource) error {
	drawn := c.Names()
	n := 0
	for _, ch := range list {
		if !slices.Contains(drawn, ch.name) {
			continue
		}
		svg, err := c.SVG(ch.name)
		if err != nil {
			return err
		}
		s.add(block{Figure: &figure{ID: "chart-" + ch.name, SVG: trusted(svg), Title: c.Title(ch.name), Caption: "Source: " + ch.source + "."}})
		n++
	}
	if n == 0 {
		s.p("No chart has data.")
	}
	return nil
}

// warningSection lists warnings; from says where they come from.
func warningSection(warnings []string, from string) *section {
	s := &section{ID: "warnings", Heading: "Warnings"}
	if len(warnings) == 0 {
		s.p("kvsim printed no warning.")
	} else {
		s.add(block{List: warnings})
	}
	s.source(from)
	return s
}

// warnedOf points the answer to the warnings, when there are any.
func warnedOf(s *section, warnings []string) {
	if n := len(warnings); n == 1 {
		s.add(block{Warn: "kvsim warned of one thing that may make these figures mislead: see Warnings below."})
	} else if n > 1 {
		s.add(block{Warn: fmt.Sprintf("kvsim warned of %d things that may make these figures mislead: see Warnings below.", n)})
	}
}

// once is ws without repeats, in order.
func once(ws []string) []string {
	var out []string
	for _, w := range ws {
		if !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

// manifest adds what ran: the command line, the build and the inputs.
func manifest(s *section, m *report.Manifest) {
	if m == nil {
		s.p("No manifest: a kvsim older than the manifest wrote this directory.")
		return
	}
	t := &table{}
	t.Rows = append(t.Rows, textRow("command", m.CommandLine()))
	t.Rows = append(t.Rows, textRow("scenario file", scenarioName(m.Scenario)))
	if len(m.Sets) > 0 {
		t.Rows = append(t.Rows, textRow("--set", strings.Join(m.Sets, " ")))
	}
	if m.Trace != nil {
		t.Rows = append(t.Rows, textRow("trace", fmt.Sprintf("%s (%d bytes, sha256 %s)", m.Trace.Path, m.Trace.Bytes, m.Trace.SHA256)))
	}
	t.Rows = append(t.Rows, textRow("build", m.Build.String()))
	s.add(block{Table: t})
	s.source("the manifest in summary.json (a sweep's in sweep.json)")
}

// runDirOf is a sweep's run's directory.
func runDirOf(dir string, run int64) string { return filepath.Join(dir, report.SweepRunDir(run)) }

// plain is v in the fewest digits that give it back exactly: "0.5", "300".
func plain(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// fixed is v with digits decimals.
func fixed(v float64, digits int) string { return strconv.FormatFloat(v, 'f', digits, 64) }

// capitalize is s with its first letter upper case.
func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
