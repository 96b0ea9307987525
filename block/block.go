// Package block is a block's identity in the tables that index blocks by
// hash: Ref (hash, place, segment and offset), the place of a chain's
// block, and Map, the hash map those tables use; List, the LRU list of the
// G1 and G2 pools; Chains, the chain store whose segments name blocks for
// the tables kept by runs; and Run, a run of a segment's blocks, in which
// the caches report what they gained and lost. The workload, engine, kvcr and scheduler
// packages share it.
package block

// Mix is the splitmix64 finalizer: a fast bijective 64-bit mixer, for
// block hashes and their places.
func Mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// Ref names a block of a chain for the tables keyed by block hash: its
// hash, and its place, a locality hint. Blocks that follow each other in a
// chain get neighbouring places (groups of eight share a leader), so a
// table that puts a key near its place touches a few cache lines for a run
// of blocks instead of one a block. The place is a function of the block's
// prefix, so every chain holding the block gives it the same place. Seg
// and Off name the block in the run's Chains store (segment and offset),
// for the tables kept by runs; Seg is -1 when the Ref was made without its
// chain's path (a lookup by hash).
type Ref struct {
	Hash  uint64
	Place uint32
	Off   int32
	Seg   int32
}

// A Run is blocks [Lo, Hi) of segment Seg of a Chains store: how the
// caches report the blocks they gained or lost, a run at a time.
type Run struct {
	Seg    int32
	Lo, Hi int32
}

// Len is the number of blocks in r.
func (r Run) Len() int { return int(r.Hi - r.Lo) }

// AppendRun appends r to dst, extending dst's last run instead when r
// continues it (the same segment, from its end), so that blocks appended
// in ascending order make as few runs as they can. An empty r is skipped.
func AppendRun(dst []Run, r Run) []Run {
	if r.Lo >= r.Hi {
		return dst
	}
	if n := len(dst); n > 0 && dst[n-1].Seg == r.Seg && dst[n-1].Hi == r.Lo {
		dst[n-1].Hi = r.Hi
		return dst
	}
	return append(dst, r)
}

// AppendPath appends blocks [from, to) of the chain whose path is given to
// dst, as one run a piece.
func AppendPath(dst []Run, path []Piece, from, to int) []Run {
	k := 0 // the chain index of the piece's first block
	for _, pc := range path {
		if lo, hi := max(from-k, 0), min(to-k, int(pc.N)); lo < hi {
			dst = append(dst, Run{Seg: pc.Seg, Lo: int32(lo), Hi: int32(hi)})
		}
		if k += int(pc.N); k >= to {
			break
		}
	}
	return dst
}

// Blocks is the number of blocks in runs.
func Blocks(runs []Run) int {
	n := 0
	for _, r := range runs {
		n += r.Len()
	}
	return n
}

// PlaceGroup is how many consecutive blocks share a place leader.
const PlaceGroup = Group

// PlaceOf is the place of block k of chain: the top bits of its group
// leader's hash, mixed, with the block's offset in the group as the low
// bits.
func PlaceOf(chain []uint64, k int) uint32 {
	return leaderPlace(chain[k&^(PlaceGroup-1)]) | uint32(k&(PlaceGroup-1))
}

// leaderPlace is the place bits a group leader's hash gives its group.
func leaderPlace(h uint64) uint32 { return placeOfHash(h) &^ (PlaceGroup - 1) }

// RefOf is block k of chain as a Ref without its segment (Seg -1).
func RefOf(chain []uint64, k int) Ref { return Ref{Hash: chain[k], Place: PlaceOf(chain, k), Seg: -1} }

// RefAt is block k of chain, whose path in a Chains store is path, as a
// Ref with its segment and offset (Seg -1 when path is empty).
func RefAt(chain []uint64, path []Piece, k int) Ref {
	r := RefOf(chain, k)
	r.Seg, r.Off = Locate(path, k)
	return r
}
