package scenarios

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/kvsim/kvsim/engine"
	"github.com/kvsim/kvsim/kvcr"
	"github.com/kvsim/kvsim/scheduler"
	"github.com/kvsim/kvsim/workload"
)

// enumKeys are the scenario keys that decode into a named type: a file that
// writes VALUE on its line 2, the values as the error messages have always
// named them, the type's list of values and the field the value lands in.
var enumKeys = []struct {
	key, file    string
	values, list string
	get          func(*Scenario) string
}{
	{"workload.trace.format", "cluster: {workers: 1}\nworkload: {trace: {path: t.jsonl, format: VALUE}}\n",
		"mooncake, azure, otel", names(workload.Formats),
		func(sc *Scenario) string { return string(sc.Workload.Trace.Format) }},
	{"workload.synthetic.arrival", "name: t\nworkload: {synthetic: {requests: 10, rate: 1, arrival: VALUE}}\n",
		"poisson, constant", names(workload.Arrivals),
		func(sc *Scenario) string { return string(sc.Workload.Synthetic.Arrival) }},
	{"cluster.engine.timing.model", "workload: {synthetic: {requests: 10}}\ncluster: {engine: {kv_bytes_per_token: 1000, timing: {model: VALUE}}}\n",
		"fixed, linear, polynomial, roofline", names(TimingModels),
		func(sc *Scenario) string { return string(sc.Cluster.Engine.Timing.Model) }},
	{"cluster.engine.admission", "workload: {synthetic: {requests: 10}}\ncluster: {engine: {admission: VALUE}}\n",
		"current, vllm-0.11", names(engine.Admissions),
		func(sc *Scenario) string { return string(sc.Cluster.Engine.Admission) }},
	{"router.policy", "workload: {synthetic: {requests: 10}}\nrouter: {policy: VALUE}\n",
		"round_robin, random, least_loaded, kv_aware", names(scheduler.Policies),
		func(sc *Scenario) string { return string(sc.Router.Policy) }},
	{"router.hints.mode", "workload: {synthetic: {requests: 10}}\nrouter: {hints: {mode: VALUE}}\n",
		"copy, move", names(kvcr.Modes),
		func(sc *Scenario) string { return string(sc.Router.Hints.Mode) }},
	{"router.hints.policy", "workload: {synthetic: {requests: 10}}\nrouter: {hints: {policy: VALUE}}\n",
		"min_blocks, cost", names(scheduler.HintPolicies),
		func(sc *Scenario) string { return string(sc.Router.Hints.Policy) }},
	{"events[0].on_remove", "workload: {synthetic: {requests: 10}}\nevents: [{at: 1s, remove: [0], on_remove: VALUE}]\ncluster: {workers: 2, migration_limit: 1}\n",
		"reroute, fail, migrate", names(RemoveActions),
		func(sc *Scenario) string { return string(sc.Events[0].OnRemove) }},
	{"events[0].link.direction", "workload: {synthetic: {requests: 10}}\nevents: [{at: 1s, link: {workers: [0], direction: VALUE}}]\n",
		"egress, ingress, both", names(Directions),
		func(sc *Scenario) string { return string(sc.Events[0].Link.Direction) }},
	{"events[0].pull_errors.when", "workload: {synthetic: {requests: 10}}\nevents: [{at: 1s, pull_errors: {rate: 0.5, when: VALUE}}]\n",
		"start, end", names(ErrorWhens),
		func(sc *Scenario) string { return string(sc.Events[0].PullErrors.When) }},
	{"events[0].down.g2", "workload: {synthetic: {requests: 10}}\nevents: [{at: 1s, down: {workers: [0], g2: VALUE}}]\n",
		"kept, lost", names(G2Fates),
		func(sc *Scenario) string { return string(sc.Events[0].Down.G2) }},
}

// TestEnumLists: each type lists the values its key has always accepted,
// in the order the error messages name them.
func TestEnumLists(t *testing.T) {
	for _, k := range enumKeys {
		if k.list != k.values {
			t.Errorf("%s: the type lists %s, want %s", k.key, k.list, k.values)
		}
	}
}

func names[T ~string](vs []T) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = string(v)
	}
	return strings.Join(s, ", ")
}

// TestEnumRoundTrip: every value of every enum key decodes into its field,
// is written by name in the resolved scenario, and reads back the same.
func TestEnumRoundTrip(t *testing.T) {
	for _, k := range enumKeys {
		for _, v := range strings.Split(k.values, ", ") {
			sc, err := Parse("s.yaml", []byte(strings.Replace(k.file, "VALUE", v, 1)), nil)
			if err != nil {
				t.Fatalf("%s: %s: %v", k.key, v, err)
			}
			y, err := sc.YAML()
			if err != nil {
				t.Fatal(err)
			}
			var doc any
			if err := yaml.Unmarshal(y, &doc); err != nil {
				t.Fatal(err)
			}
			if got := lookup(doc, k.key); got != v || k.get(sc) != v {
				t.Errorf("%s: %s decodes to %q and is written as %#v", k.key, v, k.get(sc), got)
			}
			again, err := Parse("s.yaml", y, nil)
			if err != nil || k.get(again) != v {
				t.Errorf("%s: %s reads back as %q (%v)", k.key, v, k.get(again), err)
			}
		}
	}
}

// lookup is the value at a dotted key ("events[0].on_remove") of a decoded
// YAML document.
func lookup(doc any, key string) any {
	for _, part := range strings.Split(key, ".") {
		name, idx, list := strings.Cut(strings.TrimSuffix(part, "]"), "[")
		m, _ := doc.(map[string]any)
		doc = m[name]
		if list {
			i, _ := strconv.Atoi(idx)
			if l, _ := doc.([]any); i < len(l) {
				doc = l[i]
			}
		}
	}
	return doc
}

// TestEnumErrors: a value that is not one of the key's names, or not a
// string, is refused with the file, line and key, the allowed names in
// order and the nearest one; from --set too.
func TestEnumErrors(t *testing.T) {
	for _, k := range enumKeys {
		first, _, _ := strings.Cut(k.values, ", ")
		typo := strings.ToUpper(first[:1]) + first[1:]
		_, err := Parse("s.yaml", []byte(strings.Replace(k.file, "VALUE", typo, 1)), nil)
		want := fmt.Sprintf("s.yaml:2: %s: %q is not one of %s (did you mean %q?)", k.key, typo, k.values, first)
		if err == nil || err.Error() != want {
			t.Errorf("%s:\n got %v\nwant %s", k.key, err, want)
		}
		_, err = Parse("s.yaml", []byte(strings.Replace(k.file, "VALUE", first, 1)), []string{k.key + "=nothing_like_it"})
		want = fmt.Sprintf("--set: %s: \"nothing_like_it\" is not one of %s", k.key, k.values)
		if err == nil || err.Error() != want {
			t.Errorf("%s:\n got %v\nwant %s", k.key, err, want)
		}
		_, err = Parse("s.yaml", []byte(strings.Replace(k.file, "VALUE", "[1]", 1)), nil)
		want = fmt.Sprintf("s.yaml:2: %s: want a string, got a list", k.key)
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s:\n got %v\nwant %s", k.key, err, want)
		}
	}
}
