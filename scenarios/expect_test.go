package scenarios

import (
	"strings"
	"testing"
)

// TestParseExpectation: "metric op value" with an integer value (kept
// exact as well) or a finite decimal; the errors of the other forms, also
// as the scenario's expect[i] key.
func TestParseExpectation(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Expectation
	}{
		{"pulls_failed > 0", Expectation{Metric: "pulls_failed", Op: ">", Value: 0, IsInt: true}},
		{"bytes_pulled == 9007199254740993", Expectation{Metric: "bytes_pulled", Op: "==", Value: 1 << 53, Int: 1<<53 + 1, IsInt: true}},
		{"ttft_p99_ms < 2000.5", Expectation{Metric: "ttft_p99_ms", Op: "<", Value: 2000.5}},
		{" hit_ratio_g1\t>=  1e-1 ", Expectation{Metric: "hit_ratio_g1", Op: ">=", Value: 0.1}},
		{"events[0].removed_after_s <= -1.5", Expectation{Metric: "events[0].removed_after_s", Op: "<=", Value: -1.5}},
	} {
		got, err := ParseExpectation(c.in)
		if err != nil || got != c.want {
			t.Errorf("%q: %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
	for in, want := range map[string]string{
		"pulls_failed > ":      `want "metric op value"`,
		"pulls_failed > 1 2":   `want "metric op value"`,
		"pulls_failed > many":  `the value "many" is not a number`,
		"ttft_p99_ms < inf":    `the value "inf" is not a number`,
		"ttft_p99_ms < NaN":    `the value "NaN" is not a number`,
		"ttft_p99_ms < 1e400":  `the value "1e400" is not a number`,
		"ttft_p99_ms =< 2000":  `the comparison "=<" is not one of == != < <= > >=`,
		"ttft_p99_ms = 2000.5": `the comparison "=" is not one of`,
	} {
		if _, err := ParseExpectation(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %s", in, err, want)
		}
	}
	_, err := Parse("s.yaml", []byte(base+"expect: [\"ttft_p99_ms < 2e\"]\n"), nil)
	if want := `s.yaml:6: expect[0]: "ttft_p99_ms < 2e": the value "2e" is not a number`; err == nil || err.Error() != want {
		t.Errorf("in a scenario: %v, want %s", err, want)
	}
}

// TestExpectationString writes the value as parsed: an integer exactly,
// a decimal in the fewest digits that read back as it.
func TestExpectationString(t *testing.T) {
	for in, want := range map[string]string{
		"bytes_pulled  ==  9007199254740993": "bytes_pulled == 9007199254740993",
		"ttft_p99_ms < 2000.50":              "ttft_p99_ms < 2000.5",
		"ttft_p99_ms < 2.0":                  "ttft_p99_ms < 2",
	} {
		e, err := ParseExpectation(in)
		if err != nil || e.String() != want {
			t.Errorf("%q: %q, %v; want %q", in, e.String(), err, want)
		}
	}
}

// FuzzExpectation: ParseExpectation never panics, and what it parses
// prints (String) as an entry that parses back to the same comparison: the
// same metric, operator and number, and an integer still that integer (a
// decimal such as 1e3 may print as the integer 1000, which compares the
// same).
func FuzzExpectation(f *testing.F) {
	for _, s := range []string{"pulls_failed > 0", "ttft_p99_ms < 2000.5", "events[0].removed_after_s < 30",
		"x == -1", "x != 9007199254740993", "x >= 1e3", "x <", "x < NaN", "a b c d", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := ParseExpectation(s)
		if err != nil {
			return
		}
		again, err := ParseExpectation(e.String())
		same := err == nil && again.Metric == e.Metric && again.Op == e.Op && again.Value == e.Value &&
			(!e.IsInt || again.IsInt && again.Int == e.Int)
		if !same {
			t.Fatalf("%q parses as %+v, printed %q, which parses as %+v, %v", s, e, e.String(), again, err)
		}
	})
}
