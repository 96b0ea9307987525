package sim

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/kvcr"
	"github.com/kvsim/kvsim/scenarios"
)

// TestPullsByKind: summary.json's pulls_by_kind agrees with pulls.parquet.
// The golden evacuate.yaml has pulls of every kind and outcome but partial
// orders: a drain evacuating by move (event 0), one by copy (event 1) and a
// prewarm (event 2), both prefetches. Each kind's figures, the request's
// derived as the totals less the two kinds, equal a count of its rows:
// staged those with bytes (a transfer started), landed blocks and bytes
// those of rows that landed any. A run without orders has none, and its
// summary.json no such key.
func TestPullsByKind(t *testing.T) {
	if int(numKinds) != len(kvcr.Kinds) {
		t.Fatalf("numKinds %d, kvcr.Kinds %v", numKinds, kvcr.Kinds)
	}
	ty := reflect.TypeFor[PullsByKind]()
	for i, k := range kvcr.Kinds { // the keys are KVCR's names, in its order
		if tag := ty.Field(i).Tag.Get("json"); tag != k.String() {
			t.Errorf("pulls_by_kind field %d is %q, want %q", i, tag, k)
		}
	}
	sc, err := scenarios.Load("../scenarios/golden/evacuate.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	sink, res := runSink(t, sc)
	byKind := map[string]*KindPulls{}
	for _, p := range sink.pulls {
		k := byKind[p.Kind]
		if k == nil {
			k = &KindPulls{}
			byKind[p.Kind] = k
		}
		if p.Bytes > 0 {
			k.Staged++
		}
		*map[string]*int64{"success": &k.Success, "partial": &k.Partial, "failed": &k.Failed, "expired": &k.Expired,
			"rejected": &k.Rejected, "superseded": &k.Superseded}[p.Outcome]++
		if p.BlocksLanded > 0 {
			k.BlocksLanded += p.BlocksLanded
			k.Bytes += p.Bytes
		}
	}
	got := res.Summary.PullsByKind
	if got == nil {
		t.Fatal("no pulls_by_kind")
	}
	want := PullsByKind{Request: *byKind["request"], Move: *byKind["move"], Prefetch: *byKind["prefetch"]}
	want.Move.Events, want.Prefetch.Events = []int32{0}, []int32{1, 2}
	if !reflect.DeepEqual(*got, want) {
		t.Errorf("pulls_by_kind %+v\nwant (pulls.parquet) %+v", *got, want)
	}
	if want.Move.Expired+want.Prefetch.Expired == 0 || want.Request.Partial == 0 || want.Prefetch.Rejected == 0 {
		t.Errorf("the golden no longer has the outcomes this test needs: %+v", want)
	}
	_, _, res = runKV(t, spaced(2))
	if b, _ := json.Marshal(res.Summary); res.Summary.PullsByKind != nil || strings.Contains(string(b), "pulls_by_kind") {
		t.Errorf("a run without orders: %s", b)
	}
}
