package report

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
)

// TestEventJSON: an events row marshals to its columns by name, a NaN as
// null, and reads back the same, the NaN included; a member missing is an
// error naming it.
func TestEventJSON(t *testing.T) {
	r := EventRow{Event: 2, Kind: "drain", AtNs: 5, Workers: "1,2", Fired: true, LoadShare: math.NaN(),
		RemovedAfterNs: -1, PullsRejectedDraining: 3}
	r.After.TTFTP99Ms, r.Before.Requests = 12.5, 7
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"event":2,"kind":"drain","at_ns":5,"workers":"1,2","fired":true`,
		`"load_share":null`, `"pulls_rejected_draining":3`, `"ttft_p99_after_ms":12.5`, `"requests_before":7`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %s", b, want)
		}
	}
	var got EventRow
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(got.LoadShare) {
		t.Errorf("load_share read back as %v, want NaN", got.LoadShare)
	}
	got.LoadShare, r.LoadShare = 0, 0
	if !reflect.DeepEqual(got, r) {
		t.Errorf("read back %+v\nwant %+v", got, r)
	}
	bad := strings.Replace(string(b), `,"requests_after":0`, "", 1)
	if err := json.Unmarshal([]byte(bad), &got); err == nil || !strings.Contains(err.Error(), `"requests_after"`) {
		t.Errorf("a row without requests_after: %v", err)
	}
}

// TestNoEvent: the row of an event a run lacks has kind and workers "",
// fired false, every integer -1 and every float NaN.
func TestNoEvent(t *testing.T) {
	r := NoEvent()
	v := reflect.ValueOf(r)
	for _, path := range Leaves(v.Type()) {
		f := v.FieldByIndex(path)
		name := v.Type().FieldByIndex(path).Name
		switch f.Kind() {
		case reflect.Int32, reflect.Int64:
			if f.Int() != -1 {
				t.Errorf("%s = %d, want -1", name, f.Int())
			}
		case reflect.Float64:
			if !math.IsNaN(f.Float()) {
				t.Errorf("%s = %v, want NaN", name, f.Float())
			}
		case reflect.String:
			if f.String() != "" {
				t.Errorf("%s = %q", name, f.String())
			}
		case reflect.Bool:
			if f.Bool() {
				t.Errorf("%s = true", name)
			}
		}
	}
	if n := len(Leaves(v.Type())); n != len(eventColumns) {
		t.Errorf("EventRow has %d leaf fields, events.parquet %d columns", n, len(eventColumns))
	}
}

// TestDeltaColumns checks that each delta column is named after the window
// after's column in the same place and reads the matching field, and each
// before_delta column so after the window before's.
func TestDeltaColumns(t *testing.T) {
	var r EventRow
	w := EventWindow{TTFTP50Ms: 1, TTFTP99Ms: 2, ITLP99Ms: 3, E2EP99Ms: 4, RequestsPerS: 5, OutputTokensPerS: 6,
		HitG1: 7, HitG2: 8, HitPulled: 9, Requests: 10, TPOTP99Ms: 11, QueueP99Ms: 12, HitComputed: 13}
	r.Delta = w.Minus(EventWindow{})
	r.BeforeDelta = w.Minus(EventWindow{Requests: -100}) // every value the same but requests, 110
	for _, side := range []struct {
		window, delta string
		get           func(*EventRow) *EventDelta
		requests      float64
	}{
		{"after", "delta", func(r *EventRow) *EventDelta { return &r.Delta }, 10},
		{"before", "before_delta", func(r *EventRow) *EventDelta { return &r.BeforeDelta }, 110},
	} {
		window := windowColumns(side.window, func(r *EventRow) *EventWindow { return &r.After }) // its names alone are read
		delta := deltaColumns(side.delta, side.get)
		if len(window) != len(delta) {
			t.Fatalf("%d %s columns, %d %s", len(delta), side.delta, len(window), side.window)
		}
		for i, c := range window {
			if want := strings.Replace(c.Name, "_"+side.window, "_"+side.delta, 1); delta[i].Name != want {
				t.Errorf("%s column %d is %s, want %s", side.delta, i, delta[i].Name, want)
			}
			want := float64(i + 1)
			if strings.HasPrefix(c.Name, "requests_") && !strings.HasPrefix(c.Name, "requests_per_s") {
				want = side.requests
			}
			if got := delta[i].Float64(&r); got != want {
				t.Errorf("%s = %v, want %v", delta[i].Name, got, want)
			}
		}
	}
}
