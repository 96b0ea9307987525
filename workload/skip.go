package workload

// Skip returns src without its first n requests, the rest numbered again
// from 0 in order: the tail of a trace replayed as a workload of its own
// (for example the half of a measured run a calibration did not see).
// Arrival times are kept.
func Skip(src Source, n int) Source {
	return &skipped{src: src, skip: n}
}

type skipped struct {
	src  Source
	skip int
	next int64 // the ID of the next request returned
}

// Next implements Source.
func (s *skipped) Next() (*Request, error) {
	for ; s.skip > 0; s.skip-- {
		if _, err := s.src.Next(); err != nil {
			return nil, err
		}
	}
	r, err := s.src.Next()
	if err != nil {
		return nil, err
	}
	r.ID = s.next
	s.next++
	return r, nil
}
