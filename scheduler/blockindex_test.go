package scheduler

import (
	"math/bits"
	"slices"
	"testing"

	"github.com/kvsim/kvsim/block"
)

// The per-block index the router used before it indexed by runs
// (Index): kept as the test oracle for Index (TestIndexAgainstBlockIndex),
// with the one test of its own representations (TestBitSetReuse).

// blockIndex is the router's view of which workers hold which blocks in which
// tier: one map from chained block hash to a 4-byte entry naming the
// workers holding it, each with a tier mask, so a block held in both tiers
// costs one 16-byte slot. Most blocks have one holder, packed in the entry
// itself. A block held by two to maxList workers keeps them in a list
// sorted by id in a node arena, so no block allocates. A block held by more
// (a shared system prompt on a large cluster) switches to a bit set per
// tier, so adding or removing a holder costs O(1) and a prefix walk tests
// 64 workers a word. A query's cost grows with the matched prefix and the
// workers holding it, never with a scan of the cluster.
type blockIndex struct {
	heads block.Map[entry]
	nodes []holder
	free  int32 // first free node + 1

	words    int      // 64-bit words per tier of a bit set
	sets     []uint64 // bit sets, 2 x words each: the G1 words, then the G2 words
	setCount []int32  // by set: the workers holding its block
	freeSets []int32

	// scratch of the bit-set walk
	live, liveIn, start, outer, inner []uint64
	runOuter, runInner                []int32 // by worker
}

// maxList is the most holders a block keeps in a list before it switches
// to bit sets.
const maxList = 8

// A holder packs a worker id and its tier mask: (worker + 1) | mask << 28.
type packed uint32

const tierShift = 28

func pack(w int32, mask uint8) packed { return packed(w+1) | packed(mask)<<tierShift }
func (p packed) worker() int32        { return int32(p&(1<<tierShift-1)) - 1 }
func (p packed) mask() uint8          { return uint8(p >> tierShift) }

// entry is a block's holders: by its top two bits, one holder (the packed
// holder itself; 0: none), a list (node + 1) or a bit set (its number).
type entry uint32

const (
	modeOne  entry = 0
	modeList entry = 1 << 30
	modeSet  entry = 2 << 30
	modeMask entry = 3 << 30
)

func (e entry) mode() entry  { return e & modeMask }
func (e entry) index() int32 { return int32(e &^ modeMask) }

type holder struct {
	who  packed
	next int32 // next node + 1 (0: end)
}

// newBlockIndex returns an empty index.
func newBlockIndex() *blockIndex { return &blockIndex{} }

// holders returns the first holder of a one- or list-mode entry and the
// node after it (0: none); no holder is packed 0.
func (ix *blockIndex) holders(e entry) (packed, int32) {
	if e.mode() == modeList {
		n := ix.nodes[e.index()-1]
		return n.who, n.next
	}
	return packed(e), 0
}

// after returns the holder in node n and the node after it; (0, 0) when n
// is 0, the end of a list.
func (ix *blockIndex) after(n int32) (packed, int32) {
	if n == 0 {
		return 0, 0
	}
	return ix.nodes[n-1].who, ix.nodes[n-1].next
}

func (ix *blockIndex) node(who packed, next int32) int32 {
	if ix.free != 0 {
		i := ix.free - 1
		ix.free = ix.nodes[i].next
		ix.nodes[i] = holder{who: who, next: next}
		return i + 1
	}
	ix.nodes = append(ix.nodes, holder{who: who, next: next})
	return int32(len(ix.nodes))
}

func (ix *blockIndex) freeNode(i int32) { ix.nodes[i-1].next, ix.free = ix.free, i }

// set returns bit set s's G1 and G2 words.
func (ix *blockIndex) set(s int32) (g1, g2 []uint64) {
	b := int(s) * 2 * ix.words
	return ix.sets[b : b+ix.words], ix.sets[b+ix.words : b+2*ix.words]
}

// widen makes bit sets hold worker w, moving every set to the new width.
func (ix *blockIndex) widen(w int32) {
	words := int(w)/64 + 1
	if words <= ix.words {
		return
	}
	sets := make([]uint64, len(ix.setCount)*2*words)
	for s := range ix.setCount {
		g1, g2 := ix.set(int32(s))
		copy(sets[s*2*words:], g1)
		copy(sets[s*2*words+words:], g2)
	}
	ix.sets, ix.words = sets, words
	for _, b := range []*[]uint64{&ix.live, &ix.liveIn, &ix.start, &ix.outer, &ix.inner} {
		*b = make([]uint64, words)
	}
	ix.runOuter, ix.runInner = make([]int32, 64*words), make([]int32, 64*words)
}

// toSet moves a list entry's holders to a new bit set wide enough for them
// and for worker w, about to join.
func (ix *blockIndex) toSet(e *entry, w int32) {
	last := w
	for n := e.index(); n != 0; n = ix.nodes[n-1].next {
		last = max(last, ix.nodes[n-1].who.worker())
	}
	ix.widen(last)
	var s int32
	if n := len(ix.freeSets); n > 0 {
		s, ix.freeSets = ix.freeSets[n-1], ix.freeSets[:n-1] // freed empty: no bit to clear
	} else {
		s = int32(len(ix.setCount))
		ix.setCount = append(ix.setCount, 0)
		ix.sets = append(ix.sets, make([]uint64, 2*ix.words)...)
	}
	g1, g2 := ix.set(s)
	count := int32(0)
	for n := e.index(); n != 0; count++ {
		h := ix.nodes[n-1]
		w, m := h.who.worker(), h.who.mask()
		if m&(1<<G1) != 0 {
			g1[w/64] |= 1 << (w % 64)
		}
		if m&(1<<G2) != 0 {
			g2[w/64] |= 1 << (w % 64)
		}
		ix.freeNode(n)
		n = h.next
	}
	ix.setCount[s] = count
	*e = modeSet | entry(s)
}

// setMask is worker w's tier mask in bit set s.
func (ix *blockIndex) setMask(s int32, w int32) uint8 {
	if int(w) >= 64*ix.words {
		return 0
	}
	g1, g2 := ix.set(s)
	i, b := w/64, uint(w%64)
	return uint8(g1[i]>>b&1)<<G1 | uint8(g2[i]>>b&1)<<G2
}

// Add records that worker w holds block r in tier t.
func (ix *blockIndex) Add(w int32, t Tier, r block.Ref) {
	bit := uint8(1) << t
	e := ix.heads.Insert(r.Hash, r.Place)
	switch e.mode() {
	case modeSet:
		ix.setAdd(e, w, t)
	case modeOne:
		f := packed(*e)
		switch {
		case f == 0:
			*e = entry(pack(w, bit))
		case f.worker() == w:
			*e = entry(pack(w, f.mask()|bit))
		case w < f.worker():
			*e = modeList | entry(ix.node(pack(w, bit), ix.node(f, 0)))
		default:
			*e = modeList | entry(ix.node(f, ix.node(pack(w, bit), 0)))
		}
	case modeList:
		prev, count := int32(0), 0 // prev: the node w goes after (0: the head)
		for n := e.index(); n != 0; n = ix.nodes[n-1].next {
			h := &ix.nodes[n-1]
			switch hw := h.who.worker(); {
			case hw == w:
				h.who = pack(w, h.who.mask()|bit)
				return
			case hw < w:
				prev = n
			}
			count++
		}
		switch {
		case count == maxList:
			ix.toSet(e, w)
			ix.setAdd(e, w, t)
		case prev == 0:
			*e = modeList | entry(ix.node(pack(w, bit), e.index()))
		default:
			n := ix.node(pack(w, bit), ix.nodes[prev-1].next)
			ix.nodes[prev-1].next = n
		}
	}
}

// setAdd adds w's tier t to a set entry.
func (ix *blockIndex) setAdd(e *entry, w int32, t Tier) {
	ix.widen(w)
	ix.setBit(e.index(), w, t, true)
}

// setBit sets (on) or clears worker w's tier t in bit set s, counting the
// workers that hold the block in either tier; it returns that count.
func (ix *blockIndex) setBit(s int32, w int32, t Tier, on bool) int32 {
	g1, g2 := ix.set(s)
	tier := g1
	if t == G2 {
		tier = g2
	}
	i, b := w/64, uint64(1)<<(w%64)
	held := (g1[i]|g2[i])&b != 0
	if on {
		tier[i] |= b
	} else {
		tier[i] &^= b
	}
	switch now := (g1[i]|g2[i])&b != 0; {
	case now && !held:
		ix.setCount[s]++
	case held && !now:
		ix.setCount[s]--
	}
	return ix.setCount[s]
}

// Remove records that worker w no longer holds block r in tier t.
func (ix *blockIndex) Remove(w int32, t Tier, r block.Ref) {
	bit := uint8(1) << t
	e := ix.heads.Ptr(r.Hash, r.Place)
	if e == nil {
		return
	}
	switch e.mode() {
	case modeSet:
		if int(w) >= 64*ix.words {
			return
		}
		if s := e.index(); ix.setBit(s, w, t, false) == 0 {
			ix.freeSets = append(ix.freeSets, s)
			ix.heads.Delete(r.Hash, r.Place)
		}
	case modeOne:
		f := packed(*e)
		if f.worker() != w {
			return
		}
		if m := f.mask() &^ bit; m != 0 {
			*e = entry(pack(w, m))
		} else {
			ix.heads.Delete(r.Hash, r.Place)
		}
	case modeList:
		prev, n := int32(0), e.index()
		for n != 0 && ix.nodes[n-1].who.worker() < w {
			prev, n = n, ix.nodes[n-1].next
		}
		if n == 0 || ix.nodes[n-1].who.worker() != w {
			return
		}
		if m := ix.nodes[n-1].who.mask() &^ bit; m != 0 {
			ix.nodes[n-1].who = pack(w, m)
			return
		}
		if next := ix.nodes[n-1].next; prev == 0 {
			*e = modeList | entry(next)
		} else {
			ix.nodes[prev-1].next = next
		}
		ix.freeNode(n)
		if h := e.index(); ix.nodes[h-1].next == 0 { // one holder left: back in the entry
			*e = entry(ix.nodes[h-1].who)
			ix.freeNode(h)
		}
	}
}

// Len is the number of distinct hashes held by any worker in any tier.
func (ix *blockIndex) Len() int { return ix.heads.Len() }

// Mask is worker w's tiers holding block r, as a bit set of 1 << Tier.
func (ix *blockIndex) Mask(w int32, r block.Ref) uint8 {
	e, ok := ix.heads.Get(r.Hash, r.Place)
	switch {
	case !ok:
		return 0
	case e.mode() == modeSet:
		return ix.setMask(e.index(), w)
	}
	for who, n := ix.holders(e); who != 0; who, n = ix.after(n) {
		if who.worker() == w {
			return who.mask()
		}
	}
	return 0
}

// Facts counts the (worker, tier, block) holdings the index records. O(blocks).
func (ix *blockIndex) Facts() int {
	return ix.heads.Sum(func(e entry) int {
		n := 0
		if e.mode() == modeSet {
			g1, g2 := ix.set(e.index())
			for i := range g1 {
				n += bits.OnesCount64(g1[i]) + bits.OnesCount64(g2[i])
			}
			return n
		}
		for who, next := ix.holders(e); who != 0; who, next = ix.after(next) {
			n += bits.OnesCount8(who.mask())
		}
		return n
	})
}

// Prefixes appends to dst, in worker id order, every worker holding the
// first block of chain in either tier, with its G1 and its G1+G2 prefix,
// in one walk of the chain.
func (ix *blockIndex) Prefixes(chain []uint64, dst []Prefix) []Prefix {
	return ix.runs(chain, 0, uint8(InEither), uint8(InG1), dst)
}

// runs appends to dst, in worker order, every worker holding block from of
// chain in a tier of outer, with the run of blocks from there it holds each
// in a tier of outer (Either) and the run it holds each in a tier of inner
// (G1; inner is a subset of outer, 0 for none). Each block costs one
// lookup; a block in list mode a merge with the workers still in their
// runs, a block in set mode one AND a word of 64 workers when the first
// block is in set mode too.
func (ix *blockIndex) runs(chain []uint64, from int, outer, inner uint8, dst []Prefix) []Prefix {
	if from >= len(chain) {
		return dst
	}
	e, _ := ix.heads.Get(chain[from], block.PlaceOf(chain, from))
	if e.mode() == modeSet {
		return ix.setRuns(chain, from, outer, inner, e, dst)
	}
	start := len(dst)
	for who, n := ix.holders(e); who != 0; who, n = ix.after(n) {
		if m := who.mask(); m&outer != 0 {
			p := Prefix{Worker: who.worker(), Either: 1}
			if m&inner != 0 {
				p.G1 = 1
			}
			dst = append(dst, p)
		}
	}
	out := dst[start:]              // at most maxList (< 64) workers, in worker order
	live := uint64(1)<<len(out) - 1 // bit i: out[i] is still in its run
	for k := from + 1; k < len(chain) && live != 0; k++ {
		e, _ := ix.heads.Get(chain[k], block.PlaceOf(chain, k))
		set := e.mode() == modeSet
		var who packed
		var n int32
		if !set {
			who, n = ix.holders(e)
		}
		for l := live; l != 0; l &= l - 1 {
			i := bits.TrailingZeros64(l)
			p := &out[i]
			var m uint8
			if set {
				m = ix.setMask(e.index(), p.Worker)
			} else {
				for who != 0 && who.worker() < p.Worker { // advance the holder list
					who, n = ix.after(n)
				}
				if who != 0 && who.worker() == p.Worker {
					m = who.mask()
				}
			}
			if m&outer == 0 {
				live &^= 1 << i
				continue
			}
			if p.G1 == k-from && m&inner != 0 { // its inner run is still unbroken
				p.G1++
			}
			p.Either++
		}
	}
	return dst
}

// holderBits sets dst to entry e's holders in the tiers of mask, as bits.
func (ix *blockIndex) holderBits(e entry, mask uint8, dst []uint64) {
	if e.mode() == modeSet {
		g1, g2 := ix.set(e.index())
		switch mask {
		case uint8(InG1):
			copy(dst, g1)
		case uint8(InG2):
			copy(dst, g2)
		case uint8(InEither):
			for i := range dst {
				dst[i] = g1[i] | g2[i]
			}
		default:
			clear(dst)
		}
		return
	}
	clear(dst)
	for who, n := ix.holders(e); who != 0; who, n = ix.after(n) {
		if w := who.worker(); who.mask()&mask != 0 && int(w) < 64*len(dst) { // higher ids are in no run
			dst[w/64] |= 1 << (w % 64)
		}
	}
}

// endRuns keeps in live the workers that hold the block (bits held) and
// ends the runs of the others at n blocks. It reports whether any worker
// is still live.
func endRuns(live, held []uint64, run []int32, n int32) bool {
	any := false
	for i, word := range live {
		if word == 0 {
			continue
		}
		now := word & held[i]
		for gone := word &^ now; gone != 0; gone &= gone - 1 {
			run[i*64+bits.TrailingZeros64(gone)] = n
		}
		live[i] = now
		any = any || now != 0
	}
	return any
}

// setRuns is runs when block from is in set mode (entry first): the workers
// still in their runs are a bit set, ANDed with each later block's holders
// a word at a time; a worker's run ends at the block whose AND drops it.
func (ix *blockIndex) setRuns(chain []uint64, from int, outer, inner uint8, first entry, dst []Prefix) []Prefix {
	ix.holderBits(first, outer, ix.start)
	copy(ix.live, ix.start)
	ix.holderBits(first, inner, ix.liveIn)
	for i, word := range ix.start {
		for ; word != 0; word &= word - 1 {
			ix.runInner[i*64+bits.TrailingZeros64(word)] = 0
		}
	}
	k := from + 1
	for ; k < len(chain); k++ {
		e, _ := ix.heads.Get(chain[k], block.PlaceOf(chain, k))
		ix.holderBits(e, outer, ix.outer)
		if inner != 0 {
			ix.holderBits(e, inner, ix.inner)
			endRuns(ix.liveIn, ix.inner, ix.runInner, int32(k-from))
		}
		if !endRuns(ix.live, ix.outer, ix.runOuter, int32(k-from)) {
			break
		}
	}
	if k == len(chain) { // the runs still going reach the chain's end
		clear(ix.outer)
		endRuns(ix.liveIn, ix.outer, ix.runInner, int32(k-from))
		endRuns(ix.live, ix.outer, ix.runOuter, int32(k-from))
	}
	for i, word := range ix.start {
		for ; word != 0; word &= word - 1 {
			w := i*64 + bits.TrailingZeros64(word)
			dst = append(dst, Prefix{Worker: int32(w), G1: int(ix.runInner[w]), Either: int(ix.runOuter[w])})
		}
	}
	return dst
}

// TestBitSetReuse: block a gets 9 holders (workers 0-8: past maxList, so a
// bit set) and loses them all, freeing the set; block b then gets workers
// 10-18 and reuses it: it must hold exactly those, nothing of a's.
func TestBitSetReuse(t *testing.T) {
	ix := newBlockIndex()
	a, b := block.RefOf([]uint64{1}, 0), block.RefOf([]uint64{2}, 0)
	for w := range int32(9) {
		ix.Add(w, G1, a)
	}
	for w := range int32(9) {
		ix.Remove(w, G1, a)
	}
	if ix.Len() != 0 || len(ix.freeSets) != 1 {
		t.Fatalf("len %d, free sets %d; want 0, 1", ix.Len(), len(ix.freeSets))
	}
	var want []int32
	for w := int32(10); w < 19; w++ {
		ix.Add(w, G2, b)
		want = append(want, w)
	}
	holders := func(tiers Tiers) []int32 {
		var ws []int32
		for _, p := range ix.runs([]uint64{2}, 0, uint8(tiers), 0, nil) {
			ws = append(ws, p.Worker)
		}
		return ws
	}
	if got := holders(InEither); !slices.Equal(got, want) {
		t.Errorf("b held by %v, want %v", got, want)
	}
	if got := holders(InG1); len(got) != 0 {
		t.Errorf("b in G1: %v", got)
	}
}
