package workload

import (
	"cmp"
	"io"
	"slices"
)

// sorted serves a whole trace in arrival order.
type sorted struct {
	reqs []*Request
	next int
}

// Sorted reads all of src and serves its requests by arrival time, ties in
// trace order, renumbered from 0 in that order. Arrivals are shifted so the
// earliest is at least 0 (an Azure trace is relative to its first row,
// which need not be the earliest). It holds the whole trace in memory:
// unlike the streaming readers, it is for traces that are out of order.
func Sorted(src Source) (Source, error) {
	var reqs []*Request
	for {
		r, err := src.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		reqs = append(reqs, r)
	}
	slices.SortStableFunc(reqs, func(a, b *Request) int { return cmp.Compare(a.Arrival, b.Arrival) })
	if len(reqs) > 0 && reqs[0].Arrival < 0 {
		shift := -reqs[0].Arrival
		for _, r := range reqs {
			r.Arrival += shift
		}
	}
	for i, r := range reqs {
		r.ID = int64(i)
	}
	return &sorted{reqs: reqs}, nil
}

// Next returns the next request in arrival order.
func (s *sorted) Next() (*Request, error) {
	if s.next >= len(s.reqs) {
		return nil, io.EOF
	}
	r := s.reqs[s.next]
	s.reqs[s.next] = nil // served: the run owns it now
	s.next++
	return r, nil
}
