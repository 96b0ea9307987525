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
//	R = SHA-256 of every requests.parquet row in request_id order, each its
//	    columns in file order but those marked NoDigest, integers as int64
//	    little-endian and outcome as a string;
//	P = the same over pulls.parquet in pull_id order;
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

// digested is the columns of cols in the digest, in file order.
func digested[R any](cols []Column[R]) []Column[R] {
	var in []Column[R]
	for _, c := range cols {
		if !c.NoDigest {
			in = append(in, c)
		}
	}
	return in
}

var (
	digestRequestColumns = digested(RequestColumns)
	digestPullColumns    = digested(pullColumns)
)

// row encodes r's digested columns into d.buf: integers widened to int64,
// strings after their length.
func row[R any](d *Digest, cols []Column[R], r *R) {
	d.buf = d.buf[:0]
	for _, c := range cols {
		switch {
		case c.Int64 != nil:
			d.i64(c.Int64(r))
		case c.Int32 != nil:
			d.i64(int64(c.Int32(r)))
		case c.Dict != nil:
			d.str(c.Dict(r))
		case c.String != nil:
			d.str(c.String(r))
		default:
			panic("report: column " + c.Name + " has no digest encoding")
		}
	}
}

// Request adds the next requests.parquet row.
func (d *Digest) Request(r *RequestRow) {
	row(d, digestRequestColumns, r)
	d.req.Write(d.buf)
	d.nreq++
}

// Pull adds the next pulls.parquet row.
func (d *Digest) Pull(r *PullRow) {
	row(d, digestPullColumns, r)
	d.pull.Write(d.buf)
	d.npull++
}

// RequestsSum is the hex SHA-256 of the request rows added so far and
// their count: two runs whose every request row is the same in the digest
// have the same.
func (d *Digest) RequestsSum() string {
	return hex.EncodeToString(binary.LittleEndian.AppendUint64(d.req.Sum(nil), d.nreq))
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
