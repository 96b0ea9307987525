package report

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"testing"
)

func names[R any](cols []Column[R]) []string {
	var ns []string
	for _, c := range cols {
		ns = append(ns, c.Name)
	}
	return ns
}

// TestDigestColumnsAreV1: the digest takes its columns from the tables'
// column lists, and kvsim-digest-v1 fixed them (docs/digest.md). A column
// added to a table must be marked NoDigest, or the digest's version must
// change with it.
func TestDigestColumnsAreV1(t *testing.T) {
	req := []string{"request_id", "worker", "arrival_ns", "first_token_ns", "finish_ns", "input_tokens",
		"output_tokens", "g1_hit_tokens", "g2_hit_tokens", "pulled_tokens", "computed_prompt_tokens",
		"preemptions", "hint_source", "outcome", "reroutes"}
	pull := []string{"pull_id", "request_id", "source", "target", "blocks_requested", "blocks_landed",
		"bytes", "staged_ns", "first_byte_ns", "end_ns", "outcome"}
	if got := names(digestRequestColumns); !slices.Equal(got, req) {
		t.Errorf("requests columns in the digest = %q, want %q", got, req)
	}
	if got := names(digestPullColumns); !slices.Equal(got, pull) {
		t.Errorf("pulls columns in the digest = %q, want %q", got, pull)
	}
}

// TestDigestEncoding works one digest by hand: no requests, one pull, one
// counter. The bytes are those docs/digest.md specifies; the expected value
// is the SHA-256 of exactly those bytes, computed here from the spec and
// not from Digest's own helpers.
func TestDigestEncoding(t *testing.T) {
	d := NewDigest()
	p := PullRow{PullID: 1, RequestID: 2, Source: 3, Target: -1, Mode: "move", BlocksRequested: 5,
		BlocksLanded: 6, Bytes: 7, StagedNs: 8, FirstByteNs: 9, EndNs: 10, Outcome: "success"}
	d.Pull(&p)
	got := d.Sum([]CounterRow{{Name: "b", Value: 2}, {Name: "a", Value: 1}})
	if want := specDigest(); got != want {
		t.Fatalf("digest = %s, want %s", got, want)
	}
}

// specDigest is TestDigestEncoding's digest, spelled out from the spec.
func specDigest() string {
	le := func(v int64) []byte {
		b := make([]byte, 8)
		for i := range b {
			b[i] = byte(uint64(v) >> (8 * i))
		}
		return b
	}
	str := func(s string) []byte { return append(le(int64(len(s))), s...) }
	var pull []byte
	for _, v := range []int64{1, 2, 3, -1, 5, 6, 7, 8, 9, 10} { // mode is not in the digest
		pull = append(pull, le(v)...)
	}
	pull = append(pull, str("success")...)
	counters := slices.Concat(str("a"), le(1), str("b"), le(2)) // sorted by name
	r, p, c := sha256.Sum256(nil), sha256.Sum256(pull), sha256.Sum256(counters)
	all := slices.Concat([]byte("kvsim-digest-v1\n"), r[:], le(0), p[:], le(1), c[:])
	sum := sha256.Sum256(all)
	return hex.EncodeToString(sum[:])
}
