package des

import (
	"hash/fnv"
	"math/rand/v2"
)

// RNG derives independent named random streams from one scenario seed.
type RNG struct{ seed uint64 }

// NewRNG returns the stream factory for a seed.
func NewRNG(seed uint64) RNG { return RNG{seed: seed} }

// Stream returns a new generator for one named consumer. The same seed and
// name always give the same sequence, and adding a stream with another name
// changes no existing one. Take a stream once, at wiring, and keep it.
func (r RNG) Stream(name string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(name))
	return rand.New(rand.NewPCG(r.seed, h.Sum64()))
}
