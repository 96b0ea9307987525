// Package block is a block's identity in the tables that index blocks by
// hash: Ref (hash, place, segment and offset), the place of a chain's
// block, and Map, the hash map those tables use; List, the LRU list of the
// G1 and G2 pools; and Chains, the chain store whose segments name blocks
// for the tables kept by runs. The workload, engine, kvcr and scheduler
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

// PlaceGroup is how many consecutive blocks share a place leader.
const PlaceGroup = Group

// PlaceOf is the place of block k of chain: the top bits of its group
// leader's hash, mixed, with the block's offset in the group as the low
// bits.
func PlaceOf(chain []uint64, k int) uint32 {
	return uint32(Mix(chain[k&^(PlaceGroup-1)])>>32)&^(PlaceGroup-1) | uint32(k&(PlaceGroup-1))
}

// RefOf is block k of chain as a Ref for a lookup by hash (Seg -1).
func RefOf(chain []uint64, k int) Ref { return Ref{Hash: chain[k], Place: PlaceOf(chain, k), Seg: -1} }

// AppendRefs appends blocks [from, to) of chain to dst as Refs named
// (seg, k-start): blocks of one piece of the chain's path, whose segment
// seg starts at chain position start. They are RefAt's Refs, with each
// group's leader mixed once.
func AppendRefs(dst []Ref, chain []uint64, from, to int, seg int32, start int) []Ref {
	lead, place := -1, uint32(0)
	for k := from; k < to; k++ {
		if g := k &^ (PlaceGroup - 1); g != lead {
			lead, place = g, uint32(Mix(chain[g])>>32)&^(PlaceGroup-1)
		}
		dst = append(dst, Ref{Hash: chain[k], Place: place | uint32(k&(PlaceGroup-1)), Seg: seg, Off: int32(k - start)})
	}
	return dst
}

// RefAt is block k of chain, whose path in a Chains store is path, as a
// Ref with its segment and offset (Seg -1 when path is empty).
func RefAt(chain []uint64, path []Piece, k int) Ref {
	r := RefOf(chain, k)
	r.Seg, r.Off = Locate(path, k)
	return r
}
