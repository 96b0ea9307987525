package scenarios

import (
	"bytes"
	"math"
	"slices"
	"strconv"
	"time"

	"gopkg.in/yaml.v3"
)

// YAML renders the resolved scenario, every default filled in, in a form
// Parse accepts again.
func (sc *Scenario) YAML() ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	out := *sc
	out.Events = sc.scripted()
	if err := enc.Encode(&out); err != nil {
		return nil, err
	}
	return b.Bytes(), enc.Close()
}

// MarshalYAML writes a duration as a Go duration string.
func (d Duration) MarshalYAML() (any, error) { return time.Duration(d).String(), nil }

// MarshalYAML writes a per-token cost as a duration, in ns when fractional.
func (p PerToken) MarshalYAML() (any, error) { return p.duration(), nil }

// duration is p as a Go duration string, in ns when fractional ("0.5ns").
func (p PerToken) duration() string {
	f := float64(p)
	if f == math.Trunc(f) && math.Abs(f) < 1<<62 {
		return time.Duration(int64(f)).String()
	}
	return strconv.FormatFloat(f, 'f', -1, 64) + "ns" // never an exponent: the parser reads decimals
}

// MarshalYAML writes only the keys of the selected timing model, and the
// hardware keys when it names the hardware (the model it names by preset
// or by config).
func (t Timing) MarshalYAML() (any, error) {
	type plain Timing // no MarshalYAML: avoids recursion
	keys := append([]string{"model"}, timingKeys[t.Model]...)
	if t.NamesHardware() {
		keys = append(keys, "gpu", "tp")
		if t.ModelConfig != "" {
			keys = append(keys, "model_config")
		} else {
			keys = append(keys, "model_preset")
		}
	}
	return filterKeys(plain(t), keys)
}

// MarshalYAML writes only the keys of the event's kind.
func (e Event) MarshalYAML() (any, error) {
	type plain Event
	keys := []string{"at", "add", "startup", "prewarm"}
	switch {
	case e.Drain != nil && e.DrainTimeout > 0: // what becomes of the requests of the workers it removes
		keys = []string{"at", "drain", "drain_timeout", "on_remove", "evacuate"}
	case e.Drain != nil:
		keys = []string{"at", "drain", "evacuate"}
	case e.Remove != nil:
		keys = []string{"at", "remove", "on_remove"}
	case e.Down != nil:
		keys = []string{"at", "for", "down", "startup", "on_remove"}
	case e.Fault():
		keys = []string{"at", "for", e.Kind()}
	}
	if e.Origin != OriginScenario {
		keys = append(keys, "origin")
	}
	return filterKeys(plain(e), keys)
}

// MarshalYAML writes an envelope's segment on one line, {for: 10m0s, rate: 2}.
func (s Segment) MarshalYAML() (any, error) {
	type plain Segment
	return filterKeys(plain(s), []string{"for", "rate"})
}

// MarshalYAML writes a selection as its list of ids, or as its pick.
func (s Selection) MarshalYAML() (any, error) {
	if s.Picked() {
		return selectionPick{Count: s.Count, Pick: s.Pick}, nil
	}
	return s.IDs, nil
}

// filterKeys marshals v and keeps the listed keys of the mapping.
func filterKeys(v any, keep []string) (*yaml.Node, error) {
	var n yaml.Node
	if err := n.Encode(v); err != nil {
		return nil, err
	}
	out := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Style: yaml.FlowStyle}
	for i := 0; i < len(n.Content); i += 2 {
		if slices.Contains(keep, n.Content[i].Value) {
			out.Content = append(out.Content, n.Content[i], n.Content[i+1])
		}
	}
	return out, nil
}
