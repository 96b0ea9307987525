package block

import (
	"slices"
	"testing"
)

// TestChainHashes: the chain of given hashes 5 6, then two blocks by the
// rule (content 9, base 100, step 3), hashes 5, 6, ChainHash(6, 9, 106)
// (block 2: sub 100+3*2) and ChainHash(that, 9, 109). Its first three
// blocks, then a block by the rule (1, 0, 1) (sub 3), end in
// ChainHash(h2, 1, 3) and leave the chain's own fourth block as it was.
func TestChainHashes(t *testing.T) {
	c := Hashed([]uint64{5, 6})
	c.AppendRule(9, 100, 3, 2)
	h2 := ChainHash(6, 9, 106)
	want := []uint64{5, 6, h2, ChainHash(h2, 9, 109)}
	if got := c.AppendHashes(nil); c.Len() != 4 || !slices.Equal(got, want) {
		t.Fatalf("%d blocks %x, want %x", c.Len(), got, want)
	}
	p := c.Prefix(3)
	p.AppendRule(1, 0, 1, 1)
	if got := p.AppendHashes(nil); !slices.Equal(got, []uint64{5, 6, h2, ChainHash(h2, 1, 3)}) {
		t.Errorf("prefix then a rule: %x", got)
	}
	if got := c.AppendHashes(nil); !slices.Equal(got, want) {
		t.Errorf("the chain after its prefix grew: %x", got)
	}
	if c.Prefix(0).Len() != 0 || !slices.Equal(c.Prefix(9).AppendHashes(nil), want) {
		t.Errorf("Prefix(0) %d blocks, Prefix(9) %x", c.Prefix(0).Len(), c.Prefix(9).AppendHashes(nil))
	}
}

// TestChainsKeyCoincidence: A is ten blocks by the rule (7, 0, 1), subs
// 0..9. B is its first five, then five by the rule (7, -5, 2), subs
// 2k-5 = 5 7 9 11 13 for blocks 5..9: a different rule whose block 5 has
// A's key (content 7, sub 5), so B shares six blocks with A and leaves it
// at block 6: paths [S0:10] and [S0:6 S1:4], each segment spelling its
// chain's hashes.
func TestChainsKeyCoincidence(t *testing.T) {
	var a, b Chain
	a.AppendRule(7, 0, 1, 10)
	b.AppendRule(7, 0, 1, 5)
	five := uint64(5)
	b.AppendRule(7, -five, 2, 5)
	var c Chains
	pa, pb := c.Intern(a, nil), c.Intern(b, nil)
	if !slices.Equal(pa, []Piece{{0, 10}}) || !slices.Equal(pb, []Piece{{0, 6}, {1, 4}}) {
		t.Fatalf("paths %v %v", pa, pb)
	}
	ha, hb := a.AppendHashes(nil), b.AppendHashes(nil)
	if !slices.Equal(c.Hashes(0), ha) || !slices.Equal(c.Hashes(1), hb[6:]) || ha[5] != hb[5] || ha[6] == hb[6] {
		t.Errorf("S0 %x, S1 %x; chains %x, %x", c.Hashes(0), c.Hashes(1), ha, hb)
	}
}
