package workload

import (
	"io"
	"testing"

	"github.com/kvsim/kvsim/des"
)

type listSource []*Request

func (l *listSource) Next() (*Request, error) {
	if len(*l) == 0 {
		return nil, io.EOF
	}
	r := (*l)[0]
	*l = (*l)[1:]
	return r, nil
}

// TestSkip: five requests arriving at 0, 10, ..., 40 ms; skipping 2 leaves
// those of 20, 30 and 40 ms, numbered 0, 1 and 2. Skipping more than there
// are leaves none.
func TestSkip(t *testing.T) {
	list := func() *listSource {
		var l listSource
		for i := range 5 {
			l = append(l, &Request{ID: int64(i), Arrival: des.Time(i) * 10 * des.Millisecond})
		}
		return &l
	}
	s := Skip(list(), 2)
	for i := range 3 {
		r, err := s.Next()
		if err != nil || r.ID != int64(i) || r.Arrival != des.Time(i+2)*10*des.Millisecond {
			t.Fatalf("request %d: %+v %v", i, r, err)
		}
	}
	if _, err := s.Next(); err != io.EOF {
		t.Errorf("after the last: %v", err)
	}
	if _, err := Skip(list(), 9).Next(); err != io.EOF {
		t.Errorf("skipping past the end: %v", err)
	}
}
