package results

import (
	"reflect"
	"testing"

	"github.com/kvsim/kvsim/kvcr"
)

// TestPullsByKindNames: summary.json's pulls_by_kind has a key for each
// of KVCR's pull kinds, named and ordered as KVCR names them, and the
// staged counts a slot each.
func TestPullsByKindNames(t *testing.T) {
	if int(numKinds) != len(kvcr.Kinds) {
		t.Fatalf("numKinds %d, kvcr.Kinds %v", numKinds, kvcr.Kinds)
	}
	ty := reflect.TypeFor[PullsByKind]()
	for i, k := range kvcr.Kinds {
		if tag := ty.Field(i).Tag.Get("json"); tag != k.String() {
			t.Errorf("pulls_by_kind field %d is %q, want %q", i, tag, k)
		}
	}
}
