package workload

import (
	"fmt"
	"math"

	"github.com/kvsim/kvsim/block"
)

// traceKeys is the prefix keys of the trace blocks that hold a prompt of
// inputTokens tokens (the full ones and a partial last; ids past the
// prompt are left out), traceBlock tokens each: key j chains ids 0 to j,
// so two requests share key j exactly when their ids agree up to j, even
// where a trace uses an id at more than one position. One mix a block
// (block.StepHash of the parent key and the id itself), never 0.
func traceKeys(ids []uint64, traceBlock, inputTokens int) []uint64 {
	keys := make([]uint64, (inputTokens+traceBlock-1)/traceBlock)
	var h uint64
	for j := range keys {
		h = block.StepHash(h, ids[j])
		keys[j] = h
	}
	return keys
}

// PrevTurns returns src with each request's Prev set from its TraceBlocks
// and TraceBlocks dropped, in src's order and ids (apply it after Sorted
// and Skip): Prev is the latest earlier request holding the request's
// deepest trace block past the first that any earlier request holds, -1
// when none holds one (a first turn, or a prompt that shares at most its
// first trace block, a system prompt, with the requests before it). A
// request without TraceBlocks keeps the Prev its reader gave it. It keeps
// one entry a distinct trace block past the first the requests hold, 32
// to 64 bytes each (16-byte slots of a block.Map at most half full), so
// it takes requests numbered below 2^32-1, and fails past them.
func PrevTurns(src Source) Source {
	return &prevTurns{src: src}
}

type prevTurns struct {
	src Source
	// holder maps a trace block's prefix key (past the first) to 1 + the id
	// of the latest request holding it: 0, the zero value, is none. 32 bits
	// keep a slot at 16 bytes: the table is most of a trace's read-ahead
	// memory, and fresh memory is slow to touch on a virtual machine.
	holder block.Map[uint32]
}

// Next implements Source.
func (p *prevTurns) Next() (*Request, error) {
	r, err := p.src.Next()
	if err != nil {
		return nil, err
	}
	if len(r.TraceBlocks) > 0 {
		if r.ID >= math.MaxUint32 {
			return nil, fmt.Errorf("request %d: a trace's previous turns are found among its first %d requests only", r.ID, uint32(math.MaxUint32))
		}
		r.Prev = p.hold(r.TraceBlocks, r.ID)
		r.TraceBlocks = nil
	}
	return r, nil
}

// hold records request id as the latest holder of keys[1:] and returns the
// holder, before it, of the deepest of them an earlier request held; -1
// when none did.
func (p *prevTurns) hold(keys []uint64, id int64) int64 {
	prev := int64(-1)
	for j := len(keys) - 1; j >= 1; j-- {
		v := p.holder.Insert(keys[j], uint32(keys[j]>>32)) // a key is mixed: its bits are its place
		if prev < 0 && *v > 0 {
			prev = int64(*v) - 1
		}
		*v = uint32(id + 1)
	}
	return prev
}
