package results

import (
	"github.com/kvsim/kvsim/kvcr"
	"github.com/kvsim/kvsim/report"
)

// PullColumns is pulls.parquet's schema with the model's names as its
// dictionaries: KVCR's modes, the outcomes a finished pull can have and
// the kinds, in KVCR's order. A writer of pulls.parquet takes it.
var PullColumns = report.PullColumns(names(kvcr.Modes, func(m kvcr.Mode) string { return string(m) }),
	names(kvcr.Outcomes, kvcr.Outcome.String), names(kvcr.Kinds, kvcr.Kind.String))

// names is the name of each of vs.
func names[T any](vs []T, name func(T) string) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = name(v)
	}
	return out
}

// PullRow is a finished pull's pulls.parquet row.
func PullRow(p *kvcr.Pull) report.PullRow {
	return report.PullRow{
		PullID: p.ID, RequestID: p.Req, Source: p.Source, Target: p.Target, Mode: string(p.Mode()),
		BlocksRequested: int64(p.Requested), BlocksLanded: int64(p.Landed), Bytes: p.Bytes,
		StagedNs: int64(p.StagedNs), FirstByteNs: int64(p.FirstByteNs), EndNs: int64(p.EndNs),
		Outcome: p.Outcome.String(), WriteEndNs: int64(p.WriteEndNs), Kind: p.Kind.String(),
	}
}
