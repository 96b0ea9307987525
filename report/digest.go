package report

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"slices"
	"strings"
)

// DigestVersion names the digest's encoding; a change to the encoding
// changes the name.
const DigestVersion = "kvsim-digest-v1"

// Digest computes a run's kvsim-digest-v1 from its rows, fed in id order as
// they stream out. docs/digest.md specifies the encoding so another tool can
// recompute it from the Parquet files:
//
//	R = SHA-256 of every requests.parquet row in request_id order, each the
//	    integer columns in file order as int64 little-endian, with outcome
//	    in its place as a string;
//	P = the same over pulls.parquet in pull_id order (mode excluded);
//	C = SHA-256 of the counters sorted by name, each name then value;
//	digest = SHA-256("kvsim-digest-v1\n" || R || rows(R) || P || rows(P) || C)
//
// where a string is its byte length as uint64 little-endian followed by its
// bytes and rows(X) is the row count as uint64 little-endian. Floats and
// wall time never enter it.
type Digest struct {
	req, pull   hash.Hash
	nreq, npull uint64
	buf         []byte
}

// NewDigest returns an empty digest.
func NewDigest() *Digest { return &Digest{req: sha256.New(), pull: sha256.New()} }

func (d *Digest) i64(v int64) { d.buf = binary.LittleEndian.AppendUint64(d.buf, uint64(v)) }

func (d *Digest) str(s string) {
	d.buf = binary.LittleEndian.AppendUint64(d.buf, uint64(len(s)))
	d.buf = append(d.buf, s...)
}

// Request adds the next requests.parquet row.
func (d *Digest) Request(r *RequestRow) {
	d.buf = d.buf[:0]
	for _, v := range []int64{r.RequestID, int64(r.Worker), r.ArrivalNs, r.FirstTokenNs, r.FinishNs,
		r.InputTokens, r.OutputTokens, r.G1HitTokens, r.G2HitTokens, r.PulledTokens,
		r.ComputedPromptTokens, int64(r.Preemptions), int64(r.HintSource)} {
		d.i64(v)
	}
	d.str(r.Outcome)
	d.i64(int64(r.Reroutes))
	d.req.Write(d.buf)
	d.nreq++
}

// Pull adds the next pulls.parquet row.
func (d *Digest) Pull(r *PullRow) {
	d.buf = d.buf[:0]
	for _, v := range []int64{r.PullID, r.RequestID, int64(r.Source), int64(r.Target), r.BlocksRequested,
		r.BlocksLanded, r.Bytes, r.StagedNs, r.FirstByteNs, r.EndNs} {
		d.i64(v)
	}
	d.str(r.Outcome)
	d.pull.Write(d.buf)
	d.npull++
}

// Sum returns the digest, in hex, of the rows added and the counters.
func (d *Digest) Sum(counters []CounterRow) string {
	cs := slices.Clone(counters)
	slices.SortFunc(cs, func(a, b CounterRow) int { return strings.Compare(a.Name, b.Name) })
	c := sha256.New()
	d.buf = d.buf[:0]
	for _, r := range cs {
		d.str(r.Name)
		d.i64(r.Value)
	}
	c.Write(d.buf)
	out := sha256.New()
	out.Write([]byte(DigestVersion + "\n"))
	out.Write(d.req.Sum(nil))
	out.Write(binary.LittleEndian.AppendUint64(nil, d.nreq))
	out.Write(d.pull.Sum(nil))
	out.Write(binary.LittleEndian.AppendUint64(nil, d.npull))
	out.Write(c.Sum(nil))
	return hex.EncodeToString(out.Sum(nil))
}
