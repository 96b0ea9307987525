package scenarios

import (
	"slices"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/scheduler"
)

// TestHintPolicyKey: router.hints.policy defaults to min_blocks and the
// resolved scenario (what kvsim validate prints) says so under the hints;
// cost with hints off warns at the key's line that the policy has nothing
// to weigh; cost with KVCR off gets the warning every hints key gets
// there, once; the default warns of nothing.
func TestHintPolicyKey(t *testing.T) {
	const base = "workload: {synthetic: {requests: 10}}\n"
	sc, err := Parse("s.yaml", []byte(base), nil)
	if err != nil {
		t.Fatal(err)
	}
	y, err := sc.YAML()
	if err != nil {
		t.Fatal(err)
	}
	if sc.Router.Hints.Policy != scheduler.HintsMinBlocks || !strings.Contains(string(y), "    min_blocks: 1\n    policy: min_blocks\n") {
		t.Errorf("default %q, resolved:\n%s", sc.Router.Hints.Policy, y)
	}
	if w := sc.Warnings(); len(w) != 0 {
		t.Errorf("default warns %q", w)
	}
	for _, c := range []struct {
		yaml string
		want []string
	}{
		{"router:\n  hints: {policy: cost}\n", nil},
		{"router:\n  hints: {enabled: false, policy: cost}\n",
			[]string{"s.yaml:3: router.hints.policy: cost weighs hints, but router.hints.enabled is false: the router attaches none"}},
		{"router:\n  hints: {policy: cost}\nkvcr: {enabled: false}\n",
			[]string{"s.yaml:3: router.hints.enabled: hints are on but kvcr.enabled is false: the router attaches hints that nothing pulls"}},
	} {
		sc, err := Parse("s.yaml", []byte(base+c.yaml), nil)
		if err != nil {
			t.Fatalf("%q: %v", c.yaml, err)
		}
		if sc.Router.Hints.Policy != scheduler.HintsCost || !slices.Equal(sc.Warnings(), c.want) {
			t.Errorf("%q: policy %q, warnings %q, want %q", c.yaml, sc.Router.Hints.Policy, sc.Warnings(), c.want)
		}
	}
}
