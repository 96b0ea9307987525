package block

import "slices"

// ChainHash is the hash of a block given its parent's hash (0 for a
// chain's first block) and the identity of its own content, (content,
// sub). Zero is never returned, so callers can use it as "no hash".
func ChainHash(parent, content, sub uint64) uint64 {
	return StepHash(parent, ContentKey(content)^SubKey(sub))
}

// ContentKey and SubKey are ChainHash's content and sub mixed: a caller
// hashing many blocks of one content, or of one sub, mixes it once and
// hands StepHash the two keys' xor.
func ContentKey(content uint64) uint64 { return Mix(content ^ 0x9e3779b97f4a7c15) }

// SubKey is ChainHash's sub mixed (see ContentKey).
func SubKey(sub uint64) uint64 { return Mix(sub + 0x632be59bd9b4e019) }

// StepHash is ChainHash(parent, content, sub) given key =
// ContentKey(content) ^ SubKey(sub).
func StepHash(parent, key uint64) uint64 {
	h := Mix(parent ^ key)
	if h == 0 {
		h = 1
	}
	return h
}

// A Chain is a hash chain of blocks, block k's hash identifying it and
// every block before it, held as links: stretches of consecutive blocks
// whose hashes follow from the hash before them by one rule, or are given.
// A rule (content, base, step) gives block k of the chain (k counting from
// the chain's first block) the hash ChainHash(hash of block k-1, content,
// base+step*k), so a Mooncake trace block, a synthetic group's shared
// prefix or a request's own blocks take a few words however many blocks
// they are. Hashes are derived on demand (AppendHashes); the chain store
// (Chains) matches chains link by link and keeps links, not hashes.
//
// The zero Chain is empty. Copies and prefixes of a chain share its
// storage, which is never modified: AppendRule may write past the end of
// the chain it extends, as append does, so extend a chain only where no
// copy of it is extended too. A chain cut by Prefix extends without
// writing to the storage it shares.
type Chain struct {
	links  []link
	hashes []uint64 // the given hashes, of the chain's first link (Hashed)
	n      int
}

// link is n consecutive blocks of a chain or segment: a rule (step > 0;
// see Chain), or with step 0 given hashes, from index base of its owner's.
type link struct {
	content, base uint64
	step          uint32
	n             int32
}

// Hashed is the chain of the given block hashes (not copied): the form of
// a chain whose hashes follow no rule a link can name.
func Hashed(hashes []uint64) Chain {
	if len(hashes) == 0 {
		return Chain{}
	}
	return Chain{links: []link{{n: int32(len(hashes))}}, hashes: hashes, n: len(hashes)}
}

// AppendRule appends n blocks that follow the rule (content, base, step):
// block k of the chain gets ChainHash(hash of block k-1, content,
// base+step*k). step must be at least 1.
func (c *Chain) AppendRule(content, base uint64, step uint32, n int) {
	if step == 0 {
		panic("block: a chain rule with step 0")
	}
	if n > 0 {
		c.links = append(c.links, link{content: content, base: base, step: step, n: int32(n)})
		c.n += n
	}
}

// Grow makes room for links more AppendRule calls without reallocating,
// as slices.Grow does.
func (c *Chain) Grow(links int) { c.links = slices.Grow(c.links, links) }

// Prefix is the first n blocks of c (all of them when n >= c.Len()),
// sharing its storage; appending to it never writes to c's.
func (c Chain) Prefix(n int) Chain {
	if n <= 0 {
		return Chain{}
	}
	if n >= c.n {
		c.links = c.links[:len(c.links):len(c.links)]
		return c
	}
	k := 0
	for i, l := range c.links {
		if k+int(l.n) >= n { // link i holds block n-1
			p := Chain{links: c.links[:i:i], hashes: c.hashes, n: n}
			l.n = int32(n - k)
			p.links = append(p.links, l)
			return p
		}
		k += int(l.n)
	}
	panic("unreachable")
}

// Len is the number of blocks in c.
func (c Chain) Len() int { return c.n }

// AppendHashes appends the hash of every block of c, in order, to dst.
func (c Chain) AppendHashes(dst []uint64) []uint64 {
	var h uint64
	k := 0
	for _, l := range c.links {
		if l.step == 0 {
			dst = append(dst, c.hashes[l.base:l.base+uint64(l.n)]...)
			h = dst[len(dst)-1]
		} else {
			ck := ContentKey(l.content)
			for p := k; p < k+int(l.n); p++ {
				h = StepHash(h, ck^l.subKey(p))
				dst = append(dst, h)
			}
		}
		k += int(l.n)
	}
	return dst
}

// subKey is SubKey of the sub rule l gives block k of the chain.
func (l *link) subKey(k int) uint64 { return SubKey(l.base + uint64(l.step)*uint64(k)) }

// key is the StepHash key rule l gives block k of the chain.
func (l *link) key(k int) uint64 { return ContentKey(l.content) ^ l.subKey(k) }

// walk is the hash of block to-1 of the chain, given the hash of block
// from-1, through blocks [from, to) following rule l.
func (l *link) walk(h uint64, from, to int) uint64 {
	ck := ContentKey(l.content)
	for k := from; k < to; k++ {
		h = StepHash(h, ck^l.subKey(k))
	}
	return h
}

// sameRule reports whether l and m are rules that give every block the
// same key: then, from the same parent, the same hashes.
func (l *link) sameRule(m *link) bool {
	return l.step != 0 && l.step == m.step && l.content == m.content && l.base == m.base
}
