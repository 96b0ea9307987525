package sim

import (
	"slices"

	"github.com/kvsim/kvsim/report"
)

// reorder releases request rows in request_id order: requests end out of
// order, the report and the digest read them in order. It holds only rows
// that end before an earlier request.
type reorder struct {
	next int64
	held map[int64]report.RequestRow
}

// put holds row until every earlier id is out, then writes the run of rows
// it completes.
func (r *reorder) put(row report.RequestRow, sink RowSink) error {
	if row.RequestID != r.next {
		if r.held == nil {
			r.held = map[int64]report.RequestRow{}
		}
		r.held[row.RequestID] = row
		return nil
	}
	for {
		if sink != nil {
			if err := sink.Append(&row); err != nil {
				return err
			}
		}
		r.next++
		next, ok := r.held[r.next]
		if !ok {
			return nil
		}
		delete(r.held, r.next)
		row = next
	}
}

func (r *reorder) pending() int { return len(r.held) }

func sortInt64(s []int64) { slices.Sort(s) }
