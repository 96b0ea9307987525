package report

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// SweepRow is one row of sweep.parquet: one run of a sweep, its varied
// parameters and its summary metrics. Wall time is left out: a sweep's
// table does not depend on how it was run.
type SweepRow struct {
	Run              int64    // index in the grid, from 0
	Params           []string // the varied keys' values, in the sweep's key order
	Completed        int64
	Rejected         int64
	Failed           int64
	Unfinished       int64
	TTFTP50          float64 // ms
	TTFTP90          float64
	TTFTP99          float64
	TPOTP50          float64
	TPOTP99          float64
	ITLP99           float64
	E2EP50           float64
	E2EP99           float64
	HitG1            float64 // share of prompt tokens
	HitG2            float64
	HitPulled        float64
	RequestsPerS     float64
	OutputTokensPerS float64
	PullsStaged      int64
	PullsSuccess     int64
	PullsPartial     int64
	PullsFailed      int64
	PullsExpired     int64
	PullsRejected    int64 // all rejection reasons
	PullsParked      int64
	BytesPulled      int64
	Rerouted         int64
	WorkersRemoved   int64
	MakespanNs       int64
	Digest           string
}

// sweepMetrics are sweep.parquet's columns after the parameters.
var sweepMetrics = []Column[SweepRow]{
	{Name: "requests_completed", Int64: func(r *SweepRow) int64 { return r.Completed }},
	{Name: "requests_rejected", Int64: func(r *SweepRow) int64 { return r.Rejected }},
	{Name: "requests_failed", Int64: func(r *SweepRow) int64 { return r.Failed }},
	{Name: "requests_unfinished", Int64: func(r *SweepRow) int64 { return r.Unfinished }},
	{Name: "ttft_p50_ms", Float64: func(r *SweepRow) float64 { return r.TTFTP50 }},
	{Name: "ttft_p90_ms", Float64: func(r *SweepRow) float64 { return r.TTFTP90 }},
	{Name: "ttft_p99_ms", Float64: func(r *SweepRow) float64 { return r.TTFTP99 }},
	{Name: "tpot_p50_ms", Float64: func(r *SweepRow) float64 { return r.TPOTP50 }},
	{Name: "tpot_p99_ms", Float64: func(r *SweepRow) float64 { return r.TPOTP99 }},
	{Name: "itl_p99_ms", Float64: func(r *SweepRow) float64 { return r.ITLP99 }},
	{Name: "e2e_p50_ms", Float64: func(r *SweepRow) float64 { return r.E2EP50 }},
	{Name: "e2e_p99_ms", Float64: func(r *SweepRow) float64 { return r.E2EP99 }},
	{Name: "hit_ratio_g1", Float64: func(r *SweepRow) float64 { return r.HitG1 }},
	{Name: "hit_ratio_g2", Float64: func(r *SweepRow) float64 { return r.HitG2 }},
	{Name: "hit_ratio_pulled", Float64: func(r *SweepRow) float64 { return r.HitPulled }},
	{Name: "requests_per_s", Float64: func(r *SweepRow) float64 { return r.RequestsPerS }},
	{Name: "output_tokens_per_s", Float64: func(r *SweepRow) float64 { return r.OutputTokensPerS }},
	{Name: "pulls_staged", Int64: func(r *SweepRow) int64 { return r.PullsStaged }},
	{Name: "pulls_success", Int64: func(r *SweepRow) int64 { return r.PullsSuccess }},
	{Name: "pulls_partial", Int64: func(r *SweepRow) int64 { return r.PullsPartial }},
	{Name: "pulls_failed", Int64: func(r *SweepRow) int64 { return r.PullsFailed }},
	{Name: "pulls_expired", Int64: func(r *SweepRow) int64 { return r.PullsExpired }},
	{Name: "pulls_rejected", Int64: func(r *SweepRow) int64 { return r.PullsRejected }},
	{Name: "pulls_parked", Int64: func(r *SweepRow) int64 { return r.PullsParked }},
	{Name: "bytes_pulled", Int64: func(r *SweepRow) int64 { return r.BytesPulled }},
	{Name: "requests_rerouted", Int64: func(r *SweepRow) int64 { return r.Rerouted }},
	{Name: "workers_removed", Int64: func(r *SweepRow) int64 { return r.WorkersRemoved }},
	{Name: "makespan_ns", Int64: func(r *SweepRow) int64 { return r.MakespanNs }},
	{Name: "digest", String: func(r *SweepRow) string { return r.Digest }},
}

// SweepColumns is sweep.parquet's schema for the varied keys: run, one
// string column a key (named by it), the metrics.
func SweepColumns(keys []string) []Column[SweepRow] {
	cols := []Column[SweepRow]{{Name: "run", Int64: func(r *SweepRow) int64 { return r.Run }}}
	for i, k := range keys {
		cols = append(cols, Column[SweepRow]{Name: k, String: func(r *SweepRow) string { return r.Params[i] }})
	}
	return append(cols, sweepMetrics...)
}

// WriteSweep writes sweep.parquet with the rows in the order given.
func WriteSweep(path string, keys []string, rows []SweepRow) error {
	return writeAll(path, SweepColumns(keys), rows)
}

// ReadSweep reads a sweep.parquet: its varied keys and rows.
func ReadSweep(path string) ([]string, []SweepRow, error) {
	pf, err := file.OpenParquetFile(path, false)
	if err != nil {
		return nil, nil, fmt.Errorf("report: %w", err)
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		return nil, nil, fmt.Errorf("report: %s: %w", path, err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		return nil, nil, fmt.Errorf("report: %s: %w", path, err)
	}
	defer tbl.Release()
	nk := int(tbl.NumCols()) - 1 - len(sweepMetrics)
	if nk < 0 || tbl.Schema().Field(0).Name != "run" {
		return nil, nil, fmt.Errorf("report: %s is not a sweep table", path)
	}
	keys := make([]string, nk)
	for i := range keys {
		keys[i] = tbl.Schema().Field(1 + i).Name
	}
	cols := SweepColumns(keys)
	for i, c := range cols {
		if tbl.Schema().Field(i).Name != c.Name {
			return nil, nil, fmt.Errorf("report: %s: column %d is %q, want %q", path, i, tbl.Schema().Field(i).Name, c.Name)
		}
	}
	rows := make([]SweepRow, tbl.NumRows())
	for i := range rows {
		rows[i].Params = make([]string, nk)
	}
	for c := range cols {
		j := 0
		for _, chunk := range tbl.Column(c).Data().Chunks() {
			for k := range chunk.Len() {
				if err := setSweep(&rows[j], c, nk, chunk, k); err != nil {
					return nil, nil, fmt.Errorf("report: %s: %w", path, err)
				}
				j++
			}
		}
	}
	return keys, rows, nil
}

// setSweep sets column c of a sweep row from an Arrow array.
func setSweep(r *SweepRow, c, nk int, a arrow.Array, k int) error {
	switch {
	case c == 0:
		r.Run = a.(*array.Int64).Value(k)
		return nil
	case c <= nk:
		r.Params[c-1] = a.(*array.String).Value(k)
		return nil
	}
	m := sweepMetrics[c-1-nk]
	switch v := a.(type) {
	case *array.Int64:
		*int64Field(r, m.Name) = v.Value(k)
	case *array.Float64:
		*float64Field(r, m.Name) = v.Value(k)
	case *array.String:
		r.Digest = v.Value(k)
	default:
		return fmt.Errorf("column %q: unexpected type %s", m.Name, a.DataType())
	}
	return nil
}

func int64Field(r *SweepRow, name string) *int64 {
	return map[string]*int64{
		"requests_completed": &r.Completed, "requests_rejected": &r.Rejected, "requests_failed": &r.Failed,
		"requests_unfinished": &r.Unfinished, "pulls_staged": &r.PullsStaged, "pulls_success": &r.PullsSuccess,
		"pulls_partial": &r.PullsPartial, "pulls_failed": &r.PullsFailed, "pulls_expired": &r.PullsExpired,
		"pulls_rejected": &r.PullsRejected, "pulls_parked": &r.PullsParked, "bytes_pulled": &r.BytesPulled,
		"requests_rerouted": &r.Rerouted, "workers_removed": &r.WorkersRemoved, "makespan_ns": &r.MakespanNs,
	}[name]
}

func float64Field(r *SweepRow, name string) *float64 {
	return map[string]*float64{
		"ttft_p50_ms": &r.TTFTP50, "ttft_p90_ms": &r.TTFTP90, "ttft_p99_ms": &r.TTFTP99, "tpot_p50_ms": &r.TPOTP50,
		"tpot_p99_ms": &r.TPOTP99, "itl_p99_ms": &r.ITLP99, "e2e_p50_ms": &r.E2EP50, "e2e_p99_ms": &r.E2EP99,
		"hit_ratio_g1": &r.HitG1, "hit_ratio_g2": &r.HitG2, "hit_ratio_pulled": &r.HitPulled,
		"requests_per_s": &r.RequestsPerS, "output_tokens_per_s": &r.OutputTokensPerS,
	}[name]
}
