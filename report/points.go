package report

import (
	"cmp"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// PointRow is one row of points.parquet: one grid point of a sweep, its
// varied values and, for each metric of sweep.parquet, the summary of its
// replicates.
type PointRow struct {
	Point      int64    // index of the grid point, from 0
	Params     []string // the varied keys' values, without the replicates' seed
	Replicates int64    // runs of the point
	Stats      []Stat   // by metric, in PointMetrics' order
}

// Stat is one metric over a point's replicates: the mean, the sample
// standard deviation (n - 1 in the denominator) and the 95 % confidence
// interval of the mean, mean ± t(0.975, n - 1) x SD / sqrt(n) (Student's t).
// SD and the interval are NaN for one replicate.
type Stat struct {
	Mean, SD, Lo, Hi float64
}

// PointMetrics are the metrics points.parquet summarises for runs of up to
// events lifecycle events: every numeric column of sweep.parquet after the
// varied keys (SweepColumns), so a metric added there is summarised too.
func PointMetrics(events int) []Column[SweepRow] {
	var out []Column[SweepRow]
	for _, c := range SweepColumns(nil, events)[1:] { // past run
		if c.Int64 != nil || c.Int32 != nil || c.Float64 != nil {
			out = append(out, c)
		}
	}
	return out
}

// PointColumns is points.parquet's schema for the varied keys and runs of
// up to events lifecycle events: point, one string column a key,
// replicates, then M_mean, M_sd, M_ci95_lo and M_ci95_hi for each metric M
// of PointMetrics.
func PointColumns(keys []string, events int) []Column[PointRow] {
	cols := []Column[PointRow]{{Name: "point", Int64: func(r *PointRow) int64 { return r.Point }}}
	for i, k := range keys {
		cols = append(cols, Column[PointRow]{Name: k, String: func(r *PointRow) string { return r.Params[i] }})
	}
	cols = append(cols, Column[PointRow]{Name: "replicates", Int64: func(r *PointRow) int64 { return r.Replicates }})
	// The mean is NaN only when a run had no value (a Null metric); the
	// SD and the interval are NaN for one replicate too: none is a value.
	for j, m := range PointMetrics(events) {
		cols = append(cols,
			Column[PointRow]{Name: m.Name + "_mean", Float64: func(r *PointRow) float64 { return r.Stats[j].Mean }, Null: m.Null},
			Column[PointRow]{Name: m.Name + "_sd", Float64: func(r *PointRow) float64 { return r.Stats[j].SD }, Null: true},
			Column[PointRow]{Name: m.Name + "_ci95_lo", Float64: func(r *PointRow) float64 { return r.Stats[j].Lo }, Null: true},
			Column[PointRow]{Name: m.Name + "_ci95_hi", Float64: func(r *PointRow) float64 { return r.Stats[j].Hi }, Null: true})
	}
	return cols
}

// PointEvents is the lifecycle events whose metrics the rows summarise
// (the PointMetrics they were made with): 0 for no rows.
func PointEvents(rows []PointRow) int {
	if len(rows) == 0 {
		return 0
	}
	base, per := len(PointMetrics(0)), len(PointMetrics(1))-len(PointMetrics(0))
	return (len(rows[0].Stats) - base) / per
}

// Points summarises a sweep's rows, in run order, by grid point: run r is
// a replicate of point r / replicates, and a point's values are the first
// nkeys of its runs' (the rest name the replicate).
func Points(nkeys int, rows []SweepRow, replicates int) []PointRow {
	metrics := PointMetrics(SweepEvents(rows))
	var out []PointRow
	for lo := 0; lo < len(rows); {
		point := rows[lo].Run / int64(replicates)
		hi := lo + 1
		for hi < len(rows) && rows[hi].Run/int64(replicates) == point {
			hi++
		}
		runs := rows[lo:hi]
		p := PointRow{Point: point, Params: runs[0].Params[:nkeys], Replicates: int64(len(runs))}
		xs := make([]float64, len(runs))
		t := tQuantile(len(runs)) // once a point, not once a metric
		for _, m := range metrics {
			for i := range runs {
				xs[i] = numeric(m, &runs[i])
			}
			p.Stats = append(p.Stats, summarize(xs, t))
		}
		out = append(out, p)
		lo = hi
	}
	return out
}

// PointRuns are the rows of each of points (Points of rows), by point:
// its replicates' rows, consecutive in run order.
func PointRuns(points []PointRow, rows []SweepRow) [][]SweepRow {
	out := make([][]SweepRow, len(points))
	lo := 0
	for i, p := range points {
		out[i] = rows[lo : lo+int(p.Replicates)]
		lo += len(out[i])
	}
	return out
}

// MeanInterval is the mean, sample standard deviation and 95 % t
// interval of xs (at least one value), as points.parquet summarises a
// point's replicates.
func MeanInterval(xs []float64) Stat { return summarize(xs, tQuantile(len(xs))) }

// tQuantile is t(0.975, n - 1), Student's t for the 95 % interval of the
// mean of n values (NaN for n = 1, which has no interval).
func tQuantile(n int) float64 {
	if n < 2 {
		return math.NaN()
	}
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.Quantile(0.975)
}

// summarize is the mean, sample standard deviation and t interval of xs
// (at least one value): with t = tQuantile(len(xs)), the 95 % interval.
func summarize(xs []float64, t float64) Stat {
	if len(xs) == 1 {
		return Stat{Mean: xs[0], SD: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
	}
	mean, sd := stat.MeanStdDev(xs, nil)
	half := t * sd / math.Sqrt(float64(len(xs)))
	return Stat{Mean: mean, SD: sd, Lo: mean - half, Hi: mean + half}
}

// HalfWidth is the half-width of s's confidence interval.
func (s Stat) HalfWidth() float64 { return (s.Hi - s.Lo) / 2 }

// numeric is a numeric column's value in r as a float64, NaN for the -1
// of a Null column.
func numeric(c Column[SweepRow], r *SweepRow) float64 {
	var v float64
	switch {
	case c.Int64 != nil:
		v = float64(c.Int64(r))
	case c.Int32 != nil:
		v = float64(c.Int32(r))
	default:
		return c.Float64(r)
	}
	if c.Null && v == -1 {
		return math.NaN()
	}
	return v
}

// Frontier is the Pareto frontier of points (cost[i], value[i]) where less
// cost and more value are better: the indices of the points no other
// dominates (no other has cost <= and value >= with one of them strictly
// better), by cost ascending, and so by value ascending (equal points are
// each kept, by index). A point with a NaN coordinate (no value) is left
// out and dominates nothing.
func Frontier(cost, value []float64) []int {
	var out []int
	for i := range cost {
		if math.IsNaN(cost[i]) || math.IsNaN(value[i]) {
			continue
		}
		dominated := false
		for j := range cost {
			if cost[j] <= cost[i] && value[j] >= value[i] && (cost[j] < cost[i] || value[j] > value[i]) {
				dominated = true
				break
			}
		}
		if !dominated {
			out = append(out, i)
		}
	}
	slices.SortStableFunc(out, func(a, b int) int { return cmp.Compare(cost[a], cost[b]) })
	return out
}
