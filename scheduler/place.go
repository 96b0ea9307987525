package scheduler

import (
	"github.com/kvsim/kvsim/block"
	"github.com/kvsim/kvsim/des"
)

// Place is the worker kv_aware would route a request for the chain whose
// path is given, blocks long, to now, as the router sees the workers, with
// extra[w] more prefill blocks on worker w (nil: none): the lowest cost
// with its credit, ties to the lowest id, at temperature 0 whatever the
// policy (kv_aware is the one policy whose choice depends on the prefix).
// It accounts for nothing. It reports false when no worker is schedulable.
// An evacuation sends each chain where a request for it would be routed,
// counting the chains it placed before as requests routed there (extra).
func (r *Router) Place(now des.Time, path []block.Piece, blocks int, extra []int) (int32, bool) {
	if len(r.schedulable) == 0 {
		return -1, false
	}
	r.catchUp(now)
	r.prefixes = r.index.Prefixes(path, r.prefixes[:0])
	return r.lowest(blocks, extra), true
}
