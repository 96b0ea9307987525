package report

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCachedIdentity checks the executable-hash cache: the first call
// hashes the file and keeps the hash; a second call reads it back (shown by
// planting another hash in the entry); a new modification time misses and
// hashes again; no cache directory always hashes. "abc" has the SHA-256
// ba7816bf...15ad (FIPS 180-2, appendix B.1).
func TestCachedIdentity(t *testing.T) {
	const abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
	dir, cache := t.TempDir(), t.TempDir()
	path := filepath.Join(dir, "kvsim")
	if err := os.WriteFile(path, []byte("abc"), 0o755); err != nil {
		t.Fatal(err)
	}
	id, err := cachedIdentity(cache, path)
	if err != nil || id.SHA256 != abc || id.Bytes != 3 {
		t.Fatalf("first call: %+v, %v; want %s, 3 bytes", id, err, abc)
	}
	entries, _ := filepath.Glob(filepath.Join(cache, "sha256-*"))
	if len(entries) != 1 {
		t.Fatalf("cache entries %v, want one", entries)
	}
	planted := strings.Repeat("0", 64)
	if err := os.WriteFile(entries[0], []byte(planted), 0o644); err != nil {
		t.Fatal(err)
	}
	if id, _ := cachedIdentity(cache, path); id.SHA256 != planted {
		t.Fatalf("second call hashed again (%s): the cache was not read", id.SHA256)
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	if id, _ := cachedIdentity(cache, path); id.SHA256 != abc {
		t.Fatalf("after a new modification time: %s, want %s", id.SHA256, abc)
	}
	if id, _ := cachedIdentity("", path); id.SHA256 != abc {
		t.Fatalf("without a cache: %s, want %s", id.SHA256, abc)
	}
	if _, err := cachedIdentity(cache, filepath.Join(dir, "missing")); err == nil {
		t.Fatal("a missing file gave no error")
	}
}

func TestStartIdentifyFile(t *testing.T) {
	// Files of 0 bytes, of less than the 32 KiB read at once, of exactly
	// that, and of more (100,000 bytes: the rest hashed on the goroutine):
	// each identity is the file's size and the SHA-256 of its bytes, and
	// asking again gives the same.
	dir := t.TempDir()
	for _, n := range []int{0, 10, identifyHead, 100_000} {
		b := []byte(strings.Repeat("kvsim", n/5+1)[:n])
		path := filepath.Join(dir, "f")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		want := FileID{Path: path, Bytes: int64(n), SHA256: hex.EncodeToString(sum[:])}
		id, err := StartIdentifyFile(path)
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		for range 2 {
			if got, err := id(); err != nil || *got != want {
				t.Errorf("%d bytes: %+v, %v; want %+v", n, got, err, want)
			}
		}
		if got, err := IdentifyFile(path); err != nil || *got != want {
			t.Errorf("IdentifyFile, %d bytes: %+v, %v; want %+v", n, got, err, want)
		}
	}
	// A missing file and a directory fail at once, with the errors of
	// opening and of reading.
	if _, err := StartIdentifyFile(filepath.Join(dir, "none")); err == nil || !strings.HasPrefix(err.Error(), "open ") {
		t.Errorf("missing file: %v", err)
	}
	if _, err := StartIdentifyFile(dir); err == nil || !strings.HasPrefix(err.Error(), "read "+dir+": ") {
		t.Errorf("directory: %v", err)
	}
}

// TestCommandLine: a manifest's command reads back in a POSIX shell: plain
// words as they are, anything else in single quotes, a quote inside
// closed, escaped and reopened, and an empty argument as ”.
func TestCommandLine(t *testing.T) {
	m := Manifest{Command: []string{"kvsim", "sweep", "scenarios/a-b_1.yaml", "--vary", "k=v1,v2", "two words", "it's", ""}}
	want := `kvsim sweep scenarios/a-b_1.yaml --vary 'k=v1,v2' 'two words' 'it'\''s' ''`
	if got := m.CommandLine(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
