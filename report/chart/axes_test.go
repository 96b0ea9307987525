package chart

import "testing"

// TestFormatNum: labels below 1,000 as written, larger ones rounded to
// whole numbers with thousands separated by commas, signs kept.
func TestFormatNum(t *testing.T) {
	for v, want := range map[float64]string{0.05: "0.05", 2.5: "2.5", 999.5: "999.5", 1000: "1,000", 20000: "20,000",
		1234567.6: "1,234,568", -1500: "-1,500", 1e21: "1,000,000,000,000,000,000,000"} {
		if got := formatNum(v); got != want {
			t.Errorf("formatNum(%v) = %q, want %q", v, got, want)
		}
	}
}

// TestEventQuantity: an event's window columns are titled in words with
// units, the effect's shares in percentage points.
func TestEventQuantity(t *testing.T) {
	for _, c := range []struct{ column, axis string }{
		{"event0_ttft_p99_delta_ms", "Effect of event 0 on TTFT p99 (run − twin) (ms)"},
		{"event12_itl_p99_after_ms", "ITL p99 after event 12 (ms)"},
		{"event1_hit_ratio_pulled_delta", "Effect of event 1 on Prompt tokens pulled (KVCR) (run − twin) (percentage points)"},
		{"event0_requests_twin", "Completed requests after event 0, without it (twin)"},
		{"event0_removed_after_ns", "Event 0: removed after (s)"},
		{"ttft_p99_ms", "TTFT p99 (ms)"},
		{"eventual", "eventual"},
	} {
		if got := quantityOf(c.column).axis(); got != c.axis {
			t.Errorf("%s: %q, want %q", c.column, got, c.axis)
		}
	}
}
