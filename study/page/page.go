// Package page writes a run's, a sweep's or a search's directory as one
// self-contained HTML page, report.html: the question (the scenario and
// its events in words), the answer (each event's effect against its twin)
// and then the details, the charts, the warnings and the provenance.
//
// The page is built only from the directory's own files, and says beside
// each figure which file and column it comes from. It has no script and
// fetches nothing: styles are inline and the charts are inline SVG from
// report/chart, the same drawings `kvsim plot` writes. Its bytes depend on
// the directory alone (no clock, no map order), so that a study's page can
// be checked in and diffed.
package page

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"html/template"
	"os"
	"path/filepath"

	"github.com/kvsim/kvsim/internal/atomicfile"
	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/scenarios"
)

// Options choose what a page marks.
type Options struct {
	// SLOs are conditions ("METRIC OP VALUE", as a search's --slo) a
	// sweep's page checks each grid point against, marking the points that
	// meet them all and, of those, the one with the most room under the
	// first. A search's page uses its own.
	SLOs []string
}

// ErrNotADirectory says a directory is neither a run's, a sweep's nor a
// search's.
var ErrNotADirectory = errors.New("not a run, sweep or search directory")

// Write renders dir's page and writes it to dir/report.html, whole or not
// at all; it returns the page's path.
func Write(dir string, opt Options) (string, error) {
	html, err := Render(dir, opt)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, report.PageFile)
	err = atomicfile.Write(path, func(tmp string) error { return os.WriteFile(tmp, html, 0o644) })
	return path, err
}

// Render is dir's page: a search's when dir holds search.json, a sweep's
// when it holds sweep.parquet, a run's when it holds summary.json.
func Render(dir string, opt Options) ([]byte, error) {
	var d *doc
	var err error
	search, sweep, run := exists(filepath.Join(dir, report.SearchFile)), exists(filepath.Join(dir, report.SweepFile)),
		exists(filepath.Join(dir, report.SummaryFile))
	switch {
	case len(opt.SLOs) > 0 && (search || !sweep && run):
		return nil, &OptionError{fmt.Errorf("--slo %q: %s is not a sweep's directory: --slo marks a sweep's grid points (a search's page uses its own SLOs, a run's has none)",
			opt.SLOs[0], dir)}
	case search:
		d, err = searchDoc(dir)
	case sweep:
		d, err = sweepDoc(dir, opt)
	case run:
		d, err = runDoc(dir)
	default:
		return nil, fmt.Errorf("%s: %w", dir, ErrNotADirectory)
	}
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := pageTemplate.Execute(&b, d); err != nil {
		return nil, fmt.Errorf("page: %w", err)
	}
	return b.Bytes(), nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// doc is a page: its title and its sections in order.
type doc struct {
	Title    string
	Subtitle string
	Sections []*section
}

// section is one part of the page, with an id a link or a test can find.
type section struct {
	ID      string
	Heading string
	Blocks  []block
}

// block is one element of a section; exactly one field is set.
type block struct {
	H3     string
	P      string
	Lead   string // a paragraph stated first and larger: the answer
	Note   string // a paragraph in a smaller, muted type
	Source string // where the figures above come from
	Warn   string
	List   []string
	Table  *table
	Figure *figure
	Pre    string
}

// table is a table of text cells; the first column is a row's label.
type table struct {
	Head []string
	Rows []row
}

// row is a table's row; Class marks it ("best": the answer, or the most
// room under the SLOs).
type row struct {
	Class string
	Cells []cell
}

// cell is one table cell; Class colours it ("worse", "better").
type cell struct {
	Text  string
	Class string
}

// figure is an inline SVG chart, its title (the chart draws it; the
// page names the SVG by it) and its caption.
type figure struct {
	ID      string
	SVG     template.HTML
	Title   string
	Caption string
}

func (s *section) p(format string, a ...any) {
	s.Blocks = append(s.Blocks, block{P: fmt.Sprintf(format, a...)})
}
func (s *section) h3(text string)     { s.Blocks = append(s.Blocks, block{H3: text}) }
func (s *section) note(text string)   { s.Blocks = append(s.Blocks, block{Note: text}) }
func (s *section) source(text string) { s.Blocks = append(s.Blocks, block{Source: "Source: " + text}) }
func (s *section) add(b block)        { s.Blocks = append(s.Blocks, b) }

// scenarioOf loads a run's scenario.yaml, as the run ran it; the error
// says why it does not load (a page still shows its text).
func scenarioOf(runDir string) (*scenarios.Scenario, []byte, error) {
	path := filepath.Join(runDir, report.ScenarioFile)
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	sc, err := scenarios.Parse(path, raw, nil)
	return sc, raw, err
}

//go:embed page.html
var pageHTML string

var pageTemplate = template.Must(template.New("page").Parse(pageHTML))
