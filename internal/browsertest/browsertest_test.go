package browsertest

import (
	"bytes"
	"errors"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// check runs Check on a fixture in parallel with the other fixtures'.
func check(t *testing.T, name string, opt Options) Result {
	t.Parallel()
	r := Check(t, filepath.Join("testdata", name), opt)
	for _, p := range r.Problems() {
		t.Log(p)
	}
	return r
}

// want fails t unless list has exactly one entry per word list, each
// holding all of its words.
func want(t *testing.T, kind string, list []string, words ...[]string) {
	t.Helper()
	if len(list) != len(words) {
		t.Errorf("%s: %d problems %q, want %d", kind, len(list), list, len(words))
		return
	}
	for i, ws := range words {
		for _, w := range ws {
			if !strings.Contains(list[i], w) {
				t.Errorf("%s: %q does not say %q", kind, list[i], w)
			}
		}
	}
}

// TestGood: a page with a wide table in a scrolling wrapper, a chart, a
// hyperlink and non-ASCII text has no problem; its screenshot is the
// viewport's width and the page's height; the page is left as it was.
func TestGood(t *testing.T) {
	path := filepath.Join("testdata", "good.html")
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(t.TempDir(), "good.png")
	r := check(t, "good.html", Options{Required: []string{"h1", "svg#latency", "table#rows td", "figcaption"}, Screenshot: shot})
	if p := r.Problems(); len(p) > 0 {
		t.Errorf("problems on a good page: %q", p)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cfg, err := png.DecodeConfig(f)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Width != 1280 || cfg.Height < 400 || cfg.Height > 2000 {
		t.Errorf("screenshot %dx%d, want 1280 wide and the page's height", cfg.Width, cfg.Height)
	}
	if after, err := os.ReadFile(path); err != nil || !bytes.Equal(before, after) {
		t.Errorf("Check changed %s (%v)", path, err)
	}
}

// TestWide: an SVG wider than the page is reported once, as past its
// edge, and the page scrolls sideways; one wider than its container but
// not the page is wider than its container.
func TestWide(t *testing.T) {
	r := check(t, "wide.html", Options{Width: 800})
	want(t, "console", r.ConsoleErrors)
	want(t, "missing", r.Missing)
	want(t, "layout", r.Layout,
		[]string{"page scrolls sideways", "800 px wide"},
		[]string{"<svg#wide>", "past the right edge"},
		[]string{"<svg#inner>", "200 px wider than its container", "<div.narrow>"})
}

// TestOverlap: two paragraphs positioned over each other.
func TestOverlap(t *testing.T) {
	r := check(t, "overlap.html", Options{})
	want(t, "console", r.ConsoleErrors)
	want(t, "missing", r.Missing)
	want(t, "layout", r.Layout, []string{`<p.a> "The first label sits here"`, `<p.b> "The second label on top"`, "overlap"})
}

// TestScriptError: an uncaught exception, at its line in the page.
func TestScriptError(t *testing.T) {
	r := check(t, "script.html", Options{})
	want(t, "layout", r.Layout)
	want(t, "missing", r.Missing)
	want(t, "console", r.ConsoleErrors, []string{"Uncaught Error: boom", filepath.Join("testdata", "script.html") + ":7"})
}

// TestNetwork: an image from a host is a network fetch, though it loads
// nothing (Chromium resolves no host).
func TestNetwork(t *testing.T) {
	r := check(t, "network.html", Options{})
	want(t, "layout", r.Layout)
	want(t, "missing", r.Missing)
	want(t, "console", r.ConsoleErrors, []string{"network fetch of http://example.com/x.png", "<img>"})
}

// TestMissing: a selector matching nothing, one matching a hidden
// element, one that is no selector; one that matches is not listed.
func TestMissing(t *testing.T) {
	r := check(t, "missing.html", Options{Required: []string{"h1", "svg", ".summary", "p["}})
	want(t, "console", r.ConsoleErrors)
	want(t, "layout", r.Layout)
	want(t, "missing", r.Missing,
		[]string{"svg: matches nothing"},
		[]string{".summary: matches 1 element(s), none of them visible"},
		[]string{"p[: not a valid selector"})
}

// TestFind: with no browser on PATH the error names the executables and
// the Debian packages, and Check would skip; a KVSIM_CHROMIUM naming no
// executable is an error of its own, which fails a test.
func TestFind(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	t.Setenv("KVSIM_CHROMIUM", "")
	_, err := find()
	if !errors.Is(err, errNone) {
		t.Fatalf("find with an empty PATH: %v, want errNone", err)
	}
	for _, w := range append([]string{"KVSIM_CHROMIUM", "Debian's chromium-headless-shell (or chromium)"}, browsers...) {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%q does not say %q", err, w)
		}
	}
	t.Setenv("KVSIM_CHROMIUM", filepath.Join(t.TempDir(), "no-such-chromium"))
	if _, err := find(); err == nil || errors.Is(err, errNone) {
		t.Errorf("find with KVSIM_CHROMIUM naming nothing: %v, want an error other than errNone", err)
	}
}

// TestInject: the tag goes after <head>, else <html>, else the doctype,
// else first, and adds no line.
func TestInject(t *testing.T) {
	for _, c := range []struct{ page, want string }{
		{"<!doctype html>\n<html lang=en>\n<head>\n<header>", "<!doctype html>\n<html lang=en>\n<head>T\n<header>"},
		{"<!DOCTYPE html>\n<HTML>\n<body>", "<!DOCTYPE html>\n<HTML>T\n<body>"},
		{"<!doctype html>\n<p>", "<!doctype html>T\n<p>"},
		{"<p>hi", "T<p>hi"},
		{"<html><head data-x=\"1\"><title>", "<html><head data-x=\"1\">T<title>"},
	} {
		if got := string(inject([]byte(c.page), "T")); got != c.want {
			t.Errorf("inject(%q) = %q, want %q", c.page, got, c.want)
		}
	}
}
