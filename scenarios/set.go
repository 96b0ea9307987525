package scenarios

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// applySet applies one override, "a.b.c=value", given by flag (--set), to
// the document before it is decoded, so an override goes through the same
// checks as the file and its errors name the flag. The value is YAML ("3",
// "copy", "[1, 2]", "{at: 5m, add: 1}"). A key may index a list element that
// exists: "events[0].at" or "events.0.at".
func (d *decoder) applySet(root *yaml.Node, s, flag string) error {
	key, val, ok := strings.Cut(s, "=")
	key = strings.TrimSpace(key)
	if !ok || key == "" {
		return &InputError{File: flag, Key: key, Err: fmt.Errorf("want key=value, got %q", s)}
	}
	var vdoc yaml.Node
	if err := yaml.Unmarshal([]byte(val), &vdoc); err != nil {
		return &InputError{File: flag, Key: key, Err: fmt.Errorf("bad value %q: %v", val, err)}
	}
	value := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: ""}
	if vdoc.Kind == yaml.DocumentNode {
		value = vdoc.Content[0]
	}
	mark(value, flag, d.fromSet)
	parts := strings.Split(strings.ReplaceAll(strings.ReplaceAll(key, "[", "."), "]", ""), ".")
	n := root
	for i, p := range parts {
		last := i == len(parts)-1
		switch n.Kind {
		case yaml.MappingNode:
			j := mapIndex(n, p)
			if last {
				if j >= 0 {
					n.Content[j+1] = value
				} else {
					n.Content = append(n.Content, d.setNode(&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: p}, flag), value)
				}
				return nil
			}
			if j < 0 {
				if _, err := strconv.Atoi(parts[i+1]); err == nil {
					return &InputError{File: flag, Key: key, Err: fmt.Errorf("%s has no element %s", strings.Join(parts[:i+1], "."), parts[i+1])}
				}
				m := d.setNode(&yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}, flag)
				n.Content = append(n.Content, d.setNode(&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: p}, flag), m)
				n = m
			} else {
				n = n.Content[j+1]
			}
		case yaml.SequenceNode:
			idx, err := strconv.Atoi(p)
			if err != nil || idx < 0 || idx >= len(n.Content) {
				return &InputError{File: flag, Key: key, Err: fmt.Errorf("%q is not an index of a list of %d", p, len(n.Content))}
			}
			if last {
				n.Content[idx] = value
				return nil
			}
			n = n.Content[idx]
		default:
			return &InputError{File: flag, Key: key, Err: fmt.Errorf("%s is not a mapping", strings.Join(parts[:i], "."))}
		}
	}
	return nil
}

// mapIndex is the index of key's key node in mapping n, or -1.
func mapIndex(n *yaml.Node, key string) int {
	for i := 0; i < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return i
		}
	}
	return -1
}

func (d *decoder) setNode(n *yaml.Node, flag string) *yaml.Node {
	d.fromSet[n] = flag
	return n
}

// mark records flag as the origin of n and every node under it.
func mark(n *yaml.Node, flag string, set map[*yaml.Node]string) {
	set[n] = flag
	for _, c := range n.Content {
		mark(c, flag, set)
	}
}

// suggest returns ` (did you mean "x"?)` for the known key closest to k,
// when it is close enough to be a likely typo.
func suggest(k string, known map[string]int) string {
	names := make([]string, 0, len(known))
	for name := range known {
		names = append(names, name)
	}
	slices.Sort(names) // map order must not pick among equal distances
	if best := Closest(k, names); best != "" {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	return fmt.Sprintf(" (known keys: %s)", strings.Join(names, ", "))
}

// Closest returns the first of names nearest to k, when it is close enough
// to be a likely typo (edit distance at most 2, or k differs only in case);
// otherwise "". The scenario's errors suggest keys and values with it, and
// other packages the names they check (sim's metrics).
func Closest(k string, names []string) string {
	best, bestD := "", 3
	for _, name := range names {
		if strings.EqualFold(k, name) {
			return name
		}
		if d := editDistance(k, name); d < bestD {
			best, bestD = name, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
