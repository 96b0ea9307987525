package report

import (
	"math"
	"slices"
)

// FidelityMetrics names the latencies compared between simulation and
// measurement, in the order Fidelity holds them.
var FidelityMetrics = []string{"ttft", "itl", "e2e", "queue", "prefill", "decode"}

// Fidelity compares a run's latencies with a real server's, request by
// request, over the completed requests whose trace carried the
// measurement. TTFT = first token − arrival; ITL = (last token − first
// token) / (output tokens − 1), a request's mean gap, for requests of more
// than one output token; E2E = finish − arrival; Queue = first scheduled −
// arrival; Prefill = first token − first scheduled; Decode = last token −
// first token. vLLM measures TTFT and E2E from the API server's receipt of
// the request but Queue from the engine core's; kvsim has no API server, so
// its arrival is both (docs/fidelity.md).
type Fidelity struct {
	TTFT    FidelityMetric `json:"ttft"`
	ITL     FidelityMetric `json:"itl"`
	E2E     FidelityMetric `json:"e2e"`
	Queue   FidelityMetric `json:"queue"`
	Prefill FidelityMetric `json:"prefill"`
	Decode  FidelityMetric `json:"decode"`
}

// Metric returns the comparison named as in FidelityMetrics.
func (f *Fidelity) Metric(name string) *FidelityMetric {
	return [...]*FidelityMetric{&f.TTFT, &f.ITL, &f.E2E, &f.Queue, &f.Prefill, &f.Decode}[slices.Index(FidelityMetrics, name)]
}

// FidelityMetric is one latency simulated against measured.
type FidelityMetric struct {
	Requests  int     `json:"requests"` // requests with both values
	Simulated Moments `json:"simulated"`
	Measured  Moments `json:"measured"`
	// MAPE is the mean over requests of |simulated − measured| / measured,
	// over the requests whose measurement is positive; MAE the mean
	// absolute difference in ms, over all (for near-zero latencies such
	// as queueing on an idle server, where a percentage means nothing).
	MAPE  float64 `json:"mape"`
	MAEMs float64 `json:"mae_ms"`
}

// MeanError is the signed relative error of the simulated mean against
// the measured: (simulated − measured) / measured; 0 when the measured mean
// is 0.
func (m *FidelityMetric) MeanError() float64 {
	if m.Measured.Mean == 0 {
		return 0
	}
	return (m.Simulated.Mean - m.Measured.Mean) / m.Measured.Mean
}

// Moments are a latency distribution's mean, median and 90th percentile in
// milliseconds (percentiles by the nearest-rank rule, as Dist's).
type Moments struct {
	Mean float64 `json:"mean_ms"`
	P50  float64 `json:"p50_ms"`
	P90  float64 `json:"p90_ms"`
}

// FidelityCollector gathers simulated and measured latencies of requests as
// their rows are written.
type FidelityCollector struct {
	pairs [6][][2]int64 // by metric: (simulated, measured) ns
}

// Add records a completed request's latencies, if its row carries
// measurements.
func (c *FidelityCollector) Add(r *RequestRow) {
	if r.Outcome != OutcomeCompleted {
		return
	}
	add := func(i int, sim, meas int64) {
		if meas >= 0 {
			c.pairs[i] = append(c.pairs[i], [2]int64{sim, meas})
		}
	}
	add(0, r.FirstTokenNs-r.ArrivalNs, r.MeasuredTTFTNs)
	if n := r.OutputTokens - 1; n > 0 && r.MeasuredDecodeNs >= 0 {
		add(1, (r.FinishNs-r.FirstTokenNs)/n, r.MeasuredDecodeNs/n)
	}
	add(2, r.FinishNs-r.ArrivalNs, r.MeasuredE2ENs)
	add(3, r.ScheduledNs-r.ArrivalNs, r.MeasuredQueueNs)
	add(4, r.FirstTokenNs-r.ScheduledNs, r.MeasuredPrefillNs)
	add(5, r.FinishNs-r.FirstTokenNs, r.MeasuredDecodeNs)
}

// Pairs returns the (simulated, measured) values in ns of the metric named
// as in FidelityMetrics, a pair a request in the order added: the values
// Result compares. The slice is the collector's own.
func (c *FidelityCollector) Pairs(name string) [][2]int64 {
	return c.pairs[slices.Index(FidelityMetrics, name)]
}

// Result returns the comparison, or nil when no request carried a
// measurement.
func (c *FidelityCollector) Result() *Fidelity {
	if slices.IndexFunc(c.pairs[:], func(p [][2]int64) bool { return len(p) > 0 }) < 0 {
		return nil
	}
	f := &Fidelity{}
	for i, name := range FidelityMetrics {
		*f.Metric(name) = compare(c.pairs[i])
	}
	return f
}

func compare(pairs [][2]int64) FidelityMetric {
	m := FidelityMetric{Requests: len(pairs)}
	if len(pairs) == 0 {
		return m
	}
	sim := make([]int64, len(pairs))
	meas := make([]int64, len(pairs))
	var ape, ae float64
	nape := 0
	for i, p := range pairs {
		sim[i], meas[i] = p[0], p[1]
		d := math.Abs(float64(p[0] - p[1]))
		ae += d
		if p[1] > 0 {
			ape += d / float64(p[1])
			nape++
		}
	}
	m.Simulated, m.Measured = moments(sim), moments(meas)
	m.MAEMs = ae / float64(len(pairs)) / 1e6
	if nape > 0 {
		m.MAPE = ape / float64(nape)
	}
	return m
}

// moments sorts v (ns) and returns its mean, p50 and p90 in ms.
func moments(v []int64) Moments {
	slices.Sort(v)
	sum := 0.0
	for _, x := range v {
		sum += float64(x)
	}
	n := int64(len(v))
	return Moments{
		Mean: sum / float64(n) / 1e6,
		P50:  float64(v[NearestRank(500, n)-1]) / 1e6,
		P90:  float64(v[NearestRank(900, n)-1]) / 1e6,
	}
}
