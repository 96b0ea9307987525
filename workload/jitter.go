package workload

import (
	"math/rand/v2"

	"github.com/kvsim/kvsim/des"
)

// Jitter returns src with each request's arrival t moved to max(the
// previous request's new arrival, t + u), u drawn uniform in [0, jitter)
// nanoseconds from rng, one draw a request: a reproducible perturbation of
// a trace that keeps its order and request ids, so that seeds of a trace
// replay are replicates. jitter must be positive.
func Jitter(src Source, jitter des.Time, rng *rand.Rand) Source {
	return &jittered{src: src, jitter: int64(jitter), rng: rng}
}

type jittered struct {
	src    Source
	jitter int64
	rng    *rand.Rand
	last   des.Time // the previous request's new arrival
}

// Next implements Source.
func (j *jittered) Next() (*Request, error) {
	r, err := j.src.Next()
	if err != nil {
		return nil, err
	}
	r.Arrival = max(j.last, r.Arrival+des.Time(j.rng.Int64N(j.jitter)))
	j.last = r.Arrival
	return r, nil
}
