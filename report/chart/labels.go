package chart

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// quantity is how a sweep.parquet column is shown: its name, its unit and
// the factor from the column's values to that unit.
type quantity struct {
	name, unit string
	scale      float64
}

// sweepQuantities name the metric columns of sweep.parquet; a column not
// here (a varied key) is shown by its own name.
var sweepQuantities = map[string]quantity{
	"run":                      {"Run", "", 1},
	"requests_completed":       {"Requests completed", "", 1},
	"requests_rejected":        {"Requests rejected", "", 1},
	"requests_failed":          {"Requests failed", "", 1},
	"requests_unfinished":      {"Requests unfinished", "", 1},
	"ttft_p50_ms":              {"TTFT p50", "ms", 1},
	"ttft_p90_ms":              {"TTFT p90", "ms", 1},
	"ttft_p99_ms":              {"TTFT p99", "ms", 1},
	"tpot_p50_ms":              {"TPOT p50", "ms", 1},
	"tpot_p99_ms":              {"TPOT p99", "ms", 1},
	"itl_p99_ms":               {"ITL p99", "ms", 1},
	"e2e_p50_ms":               {"E2E latency p50", "ms", 1},
	"e2e_p99_ms":               {"E2E latency p99", "ms", 1},
	"hit_ratio_g1":             {"Prompt tokens from G1", "%", 100},
	"hit_ratio_g2":             {"Prompt tokens from G2", "%", 100},
	"hit_ratio_pulled":         {"Prompt tokens pulled (KVCR)", "%", 100},
	"requests_per_s":           {"Requests per second", "", 1},
	"output_tokens_per_s":      {"Output tokens per second", "", 1},
	"pulls_staged":             {"Pulls staged", "", 1},
	"pulls_success":            {"Pulls succeeded", "", 1},
	"pulls_partial":            {"Pulls partial", "", 1},
	"pulls_failed":             {"Pulls failed", "", 1},
	"pulls_expired":            {"Pulls expired", "", 1},
	"pulls_superseded":         {"Pulls superseded", "", 1},
	"pulls_rejected":           {"Pulls rejected", "", 1},
	"pulls_parked":             {"Pulls parked", "", 1},
	"bytes_pulled":             {"Data pulled", "GB", 1e-9},
	"requests_rerouted":        {"Requests rerouted", "", 1},
	"workers_removed":          {"Workers removed", "", 1},
	"makespan_ns":              {"Makespan", "s", 1e-9},
	"worker_seconds":           {"Worker-seconds provisioned", "", 1},
	"mean_workers":             {"Mean workers provisioned", "", 1},
	"goodput_requests":         {"Goodput", "requests", 1},
	"goodput_requests_per_s":   {"Goodput", "requests/s", 1},
	"goodput_share":            {"Goodput share of completed", "%", 100},
	"ttft_attainment":          {"TTFT SLO attainment", "%", 100},
	"itl_attainment":           {"ITL SLO attainment", "%", 100},
	"planner_adds":             {"Planner adds", "", 1},
	"planner_drains":           {"Planner drains", "", 1},
	"planner_workers_added":    {"Workers the planner added", "", 1},
	"planner_workers_drained":  {"Workers the planner drained", "", 1},
	"planner_blocks_evacuated": {"G2 blocks the planner's drains evacuated", "", 1},
	"planner_g2_blocks_left":   {"G2 blocks left on the planner's drained workers", "", 1},
}

// windowQuantities name the metrics of an event's windows in
// events.parquet (and sweep.parquet's eventK_ columns), by the column's
// name without its side (before, after, twin, delta) and unit.
var windowQuantities = map[string]quantity{
	"ttft_p50":            {"TTFT p50", "ms", 1},
	"ttft_p99":            {"TTFT p99", "ms", 1},
	"itl_p99":             {"ITL p99", "ms", 1},
	"e2e_p99":             {"E2E latency p99", "ms", 1},
	"tpot_p99":            {"TPOT p99", "ms", 1},
	"queue_p99":           {"Queue time p99", "ms", 1},
	"requests_per_s":      {"Requests completed per second", "", 1},
	"output_tokens_per_s": {"Output tokens per second", "", 1},
	"hit_ratio_g1":        {"Prompt tokens from G1", "%", 100},
	"hit_ratio_g2":        {"Prompt tokens from G2", "%", 100},
	"hit_ratio_pulled":    {"Prompt tokens pulled (KVCR)", "%", 100},
	"hit_ratio_computed":  {"Prompt tokens computed", "%", 100},
	"requests":            {"Completed requests", "", 1},
}

// quantityOf is how the column is shown: a known metric, an event's
// (eventK_...), or its name.
func quantityOf(column string) quantity {
	if q, ok := sweepQuantities[column]; ok {
		return q
	}
	if q, ok := eventQuantity(column); ok {
		return q
	}
	return quantity{column, "", 1}
}

// eventQuantity is how sweep.parquet's column of an event's window is
// shown: event0_ttft_p99_delta_ms is "Effect of event 0 on TTFT p99" in ms,
// event0_ttft_p99_after_ms "TTFT p99 after event 0"; event0_removed_after_ns
// "Event 0: removed after" in s. False for a column that is not an event's.
func eventQuantity(column string) (quantity, bool) {
	rest, ok := strings.CutPrefix(column, "event")
	k, col, ok2 := strings.Cut(rest, "_")
	if !ok || !ok2 || k == "" || strings.Trim(k, "0123456789") != "" {
		return quantity{}, false
	}
	ev := "event " + k
	unit := ""
	base := col
	if b, cut := strings.CutSuffix(base, "_ms"); cut {
		base = b
	}
	for _, side := range []struct{ suffix, format string }{
		{"_delta", "Effect of %[2]s on %[1]s (run − twin)"},
		{"_after", "%[1]s after %[2]s"},
		{"_twin", "%[1]s after %[2]s, without it (twin)"},
		{"_before", "%[1]s before %[2]s"},
	} {
		name, cut := strings.CutSuffix(base, side.suffix)
		q, known := windowQuantities[name]
		if !cut || !known {
			continue
		}
		if side.suffix == "_delta" && q.unit == "%" {
			q.unit = "percentage points"
		}
		q.name = fmt.Sprintf(side.format, q.name, ev)
		return q, true
	}
	if b, cut := strings.CutSuffix(col, "_ns"); cut {
		col, unit = b, "s"
		return quantity{"Event " + k + ": " + strings.ReplaceAll(col, "_", " "), unit, 1e-9}, true
	}
	return quantity{"Event " + k + ": " + strings.ReplaceAll(col, "_", " "), unit, 1}, true
}

// axis is the quantity's axis label: "TTFT p50 (ms)".
func (q quantity) axis() string {
	if q.unit == "" {
		return q.name
	}
	return q.name + " (" + q.unit + ")"
}

// inTitle is the name within a sentence: "workers removed", "TTFT p50".
func (q quantity) inTitle() string {
	r := []rune(q.name)
	if len(r) > 1 && unicode.IsUpper(r[0]) && unicode.IsLower(r[1]) {
		r[0] = unicode.ToLower(r[0])
	}
	return string(r)
}

// MaxValueLen is the longest varied value written out in a label; longer
// ones (YAML lists of events, say) are numbered #0, #1, ... in grid order,
// and listed in the chart's notes (and a page's question).
const MaxValueLen = 24

// valueNames names the values of a sweep's varied keys.
type valueNames struct {
	keys   []string
	values [][]string // by key, distinct values in grid (row) order
}

func newValueNames(keys []string, params [][]string) *valueNames {
	v := &valueNames{keys: keys, values: make([][]string, len(keys))}
	for _, ps := range params {
		for k, p := range ps {
			if !slices.Contains(v.values[k], p) {
				v.values[k] = append(v.values[k], p)
			}
		}
	}
	return v
}

// value is key k's value as shown: itself, or #i when long.
func (v *valueNames) value(k int, val string) string {
	if len(val) <= MaxValueLen {
		return val
	}
	for i, x := range v.values[k] {
		if x == val {
			return "#" + strconv.Itoa(i)
		}
	}
	return val
}

// label names a run by the values of the keys ks: "mode=copy, events #3".
func (v *valueNames) label(ks []int, params []string) string {
	var parts []string
	for _, k := range ks {
		val := v.value(k, params[k])
		sep := "="
		if strings.HasPrefix(val, "#") && len(params[k]) > MaxValueLen {
			sep = " "
		}
		parts = append(parts, v.keys[k]+sep+val)
	}
	return strings.Join(parts, ", ")
}

// notes list the numbered values of the keys ks: "events #1: [...]".
func (v *valueNames) notes(ks []int) []string {
	var out []string
	for _, k := range ks {
		for i, x := range v.values[k] {
			if len(x) > MaxValueLen {
				out = append(out, v.keys[k]+" #"+strconv.Itoa(i)+": "+x)
			}
		}
	}
	return out
}
