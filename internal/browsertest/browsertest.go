// Package browsertest renders an HTML page in headless Chromium and says
// what a reader would see broken: script errors, failed loads and any
// fetch from the network, content past the page's edges, text drawn over
// text, charts with no size, and required parts that are not shown. Only
// tests import it; where no Chromium is installed they skip.
package browsertest

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Options says how Check looks at a page.
type Options struct {
	// Required lists CSS selectors that must each match at least one
	// visible element.
	Required []string
	// Screenshot, when set, is where Check writes a PNG of the whole page,
	// cut at 16000 px down.
	Screenshot string
	// Width is the viewport's width in CSS pixels; 0 means 1280.
	Width int
}

// Result is what Check found broken, one sentence a problem; a page with
// none leaves every list empty.
type Result struct {
	// ConsoleErrors holds uncaught exceptions and promise rejections,
	// console.error calls, resources that failed to load, and every URL
	// with a host the page fetched or names for fetching: the page must
	// fetch nothing.
	ConsoleErrors []string
	// Layout holds content past the page's left or right edge (outside a
	// container that scrolls sideways on purpose), a page that scrolls
	// sideways, text overlapping other text, and SVGs with no width or
	// height, drawing nothing or wider than their container.
	Layout []string
	// Missing holds the Required selectors that matched nothing visible.
	Missing []string
}

// Problems is every problem in r, each after its kind.
func (r Result) Problems() []string {
	var all []string
	for _, kind := range []struct {
		name string
		list []string
	}{{"console", r.ConsoleErrors}, {"layout", r.Layout}, {"missing", r.Missing}} {
		for _, p := range kind.list {
			all = append(all, kind.name+": "+p)
		}
	}
	return all
}

// browsers are the executables Check looks for on PATH, in this order,
// when $KVSIM_CHROMIUM does not name one.
var browsers = []string{"chromium-headless-shell", "chromium", "chromium-browser", "google-chrome"}

const (
	timeout    = 60 * time.Second // one run of Chromium
	maxHeight  = 16000            // the screenshot's cut, in CSS px
	viewHeight = 900              // the viewport's height while checking
	resultID   = "kvsim-browsertest-result"
)

//go:embed check.js
var checkJS []byte

// Check renders the HTML file at path in headless Chromium, at opt.Width,
// and returns what a reader would see broken. It checks a copy of the
// page with check.js added at the top of it (the file at path is not
// changed) and, when opt.Screenshot is set, takes the picture of the page
// as it is. Without a Chromium Check skips the test; when Chromium fails
// to run or to report, it fails the test.
func Check(t testing.TB, path string, opt Options) Result {
	t.Helper()
	exe, err := find()
	if err != nil {
		if errors.Is(err, errNone) {
			t.Skip(err)
		}
		t.Fatal(err)
	}
	if opt.Width <= 0 {
		opt.Width = 1280
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(abs)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "check.js")
	copyPath := filepath.Join(dir, "page.html")
	required, _ := json.Marshal(opt.Required)
	if required == nil || string(required) == "null" {
		required = []byte("[]")
	}
	tag := fmt.Sprintf(`<script src="%s" data-required="%s"></script>`, fileURL(script), html.EscapeString(string(required)))
	if !baseTag.Match(page) {
		// Relative URLs resolve beside the original, as they do for a reader.
		tag = fmt.Sprintf(`<base href="%s">`, fileURL(filepath.Dir(abs))+"/") + tag
	}
	if err := os.WriteFile(script, checkJS, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(copyPath, inject(page, tag), 0o644); err != nil {
		t.Fatal(err)
	}

	out, stderr, err := run(exe, dir, "--dump-dom", "--window-size="+strconv.Itoa(opt.Width)+","+strconv.Itoa(viewHeight), fileURL(copyPath))
	if err != nil {
		t.Fatalf("browsertest: %s on %s: %v\n%s", exe, path, err, tail(stderr))
	}
	m := resultPre.FindSubmatch(out)
	if m == nil {
		t.Fatalf("browsertest: %s left no result in the page %s (it did not finish loading?)\n%s", exe, path, tail(stderr))
	}
	var got struct {
		Errors, Layout, Missing []string
		Height                  int
		Fatal                   string
	}
	if err := json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &got); err != nil {
		t.Fatalf("browsertest: the result of %s: %v", path, err)
	}
	if got.Fatal != "" {
		t.Fatalf("browsertest: check.js failed on %s: %s", path, got.Fatal)
	}
	// The copy's lines are the page's: the added tags hold no newline.
	for i, e := range got.Errors {
		got.Errors[i] = strings.ReplaceAll(e, fileURL(copyPath), path)
	}

	if opt.Screenshot != "" {
		shot, err := filepath.Abs(opt.Screenshot)
		if err != nil {
			t.Fatal(err)
		}
		h := min(max(got.Height, 1), maxHeight)
		_, stderr, err := run(exe, t.TempDir(), "--hide-scrollbars", "--screenshot="+shot, "--window-size="+strconv.Itoa(opt.Width)+","+strconv.Itoa(h), fileURL(abs))
		if err != nil {
			t.Fatalf("browsertest: screenshot of %s: %v\n%s", path, err, tail(stderr))
		}
		if fi, err := os.Stat(shot); err != nil || fi.Size() == 0 {
			t.Fatalf("browsertest: %s wrote no screenshot of %s to %s\n%s", exe, path, shot, tail(stderr))
		}
	}
	return Result{ConsoleErrors: got.Errors, Layout: got.Layout, Missing: got.Missing}
}

var errNone = errors.New("no Chromium")

// find returns the Chromium Check runs: $KVSIM_CHROMIUM when set, else
// the first of browsers on PATH. When there is none its error says what
// it looked for and which Debian packages to install.
func find() (string, error) {
	if env := os.Getenv("KVSIM_CHROMIUM"); env != "" {
		exe, err := exec.LookPath(env)
		if err != nil {
			return "", fmt.Errorf("browsertest: KVSIM_CHROMIUM=%s: %w", env, err)
		}
		return exe, nil
	}
	for _, name := range browsers {
		if exe, err := exec.LookPath(name); err == nil {
			return exe, nil
		}
	}
	return "", fmt.Errorf("browsertest: %w to render pages: $KVSIM_CHROMIUM is not set and none of %s is on PATH; install Debian's chromium-headless-shell (or chromium) to run this check",
		errNone, strings.Join(browsers, ", "))
}

var (
	baseTag      = regexp.MustCompile(`(?i)<base[\s>]`)
	resultPre    = regexp.MustCompile(`(?s)<pre id="` + resultID + `">(.*?)</pre>`)
	headStart    = regexp.MustCompile(`(?i)<head(\s[^>]*)?>`)
	htmlStart    = regexp.MustCompile(`(?i)<html(\s[^>]*)?>`)
	doctypeStart = regexp.MustCompile(`(?i)<!doctype[^>]*>`)
)

// inject returns page with tag added where it runs before anything else
// the page holds: just after the <head> start tag, else after <html>,
// else after the doctype, else at the start.
func inject(page []byte, tag string) []byte {
	at := 0
	for _, re := range []*regexp.Regexp{headStart, htmlStart, doctypeStart} {
		if loc := re.FindIndex(page); loc != nil {
			at = loc[1]
			break
		}
	}
	out := make([]byte, 0, len(page)+len(tag))
	out = append(out, page[:at]...)
	out = append(out, tag...)
	return append(out, page[at:]...)
}

// run runs Chromium headless on one page with a fresh profile in dir,
// offline (every host name fails to resolve), and returns what it printed.
func run(exe, dir string, args ...string) (stdout []byte, stderr string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, append([]string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-extensions", "--disable-default-apps", "--disable-breakpad",
		"--host-resolver-rules=MAP * ~NOTFOUND",
		"--user-data-dir=" + filepath.Join(dir, "profile"),
		"--enable-logging=stderr", "--v=0",
		"--virtual-time-budget=10000",
	}, args...)...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	ownGroup(cmd)
	cmd.WaitDelay = 5 * time.Second
	err = cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("no answer in %v: %w", timeout, ctx.Err())
	}
	return out.Bytes(), errb.String(), err
}

// fileURL is the file: URL of an absolute path.
func fileURL(path string) string {
	p := filepath.ToSlash(path)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // C:/x on Windows
	}
	return (&url.URL{Scheme: "file", Path: p}).String()
}

// tail is the last lines of Chromium's stderr, for a failure's message,
// without its complaints of a machine with no D-Bus.
func tail(s string) string {
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if !strings.Contains(l, "dbus") {
			lines = append(lines, l)
		}
	}
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return strings.Join(lines, "\n")
}
