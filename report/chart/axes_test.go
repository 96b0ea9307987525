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
