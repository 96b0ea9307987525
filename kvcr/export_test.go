package kvcr

import "github.com/kvsim/kvsim/block"

// Active is the number of transfers on the link.
func (l *Link) Active() int { return len(l.act) }

// Ready reports whether r is readable.
func (p *Pool) Ready(r block.Ref) bool {
	e := p.find(r.Seg, r.Off)
	return e >= 0 && p.ext[e].V.st == ready
}

// Has reports whether r is held in any state.
func (p *Pool) Has(r block.Ref) bool { return p.find(r.Seg, r.Off) >= 0 }
