package report

import (
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
