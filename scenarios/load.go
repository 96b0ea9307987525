package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/kvsim/kvsim/des"
)

// InputError is bad input: the file (or the flag of an override, "--set"),
// the 1-based line (0 when unknown), the dotted key and what is wrong.
type InputError struct {
	File string
	Line int
	Key  string
	Err  error
}

func (e *InputError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Key != "" {
		fmt.Fprintf(&b, ": %s", e.Key)
	}
	fmt.Fprintf(&b, ": %v", e.Err)
	return b.String()
}

func (e *InputError) Unwrap() error { return e.Err }

// loc is where a key's value came from: a file and line, or a flag.
type loc struct {
	file string // the file, or the flag ("--set")
	line int
	flag bool
}

// positions maps dotted keys ("cluster.engine.block_size", "events[1].at")
// to where they were written; a mapping's key is there when any key inside
// it was written.
type positions map[string]loc

// Load reads a scenario file, applies --set overrides ("key=value", dotted
// keys, YAML values), fills defaults, validates and resolves it.
func Load(path string, sets []string, opts ...Option) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &InputError{File: path, Err: fmt.Errorf("cannot read scenario: %w", errors.Unwrap(err))}
	}
	return Parse(path, data, sets, opts...)
}

// LoadDefault is Load on the embedded default scenario.
func LoadDefault(sets []string, opts ...Option) (*Scenario, error) {
	return Parse("", defaultYAML, sets, opts...)
}

// An Option changes how Load, LoadDefault and Parse read a scenario.
type Option func(*decoder)

// FlagFrom names flag, not --set, in the errors of the overrides from
// sets[i] on (a sweep's --vary values follow its --set ones).
func FlagFrom(flag string, i int) Option {
	return func(d *decoder) { d.flag, d.flagFrom = flag, i }
}

// DisplayName is how errors name the scenario file file: its path, or
// "default scenario" for "", the embedded one.
func DisplayName(file string) string {
	if file == "" {
		return "default scenario"
	}
	return file
}

// DisplayFile is how errors name the scenario's file: its path, or
// "default scenario" for the embedded one.
func (sc *Scenario) DisplayFile() string { return DisplayName(sc.File) }

// Parse is Load on data already read; file is the path relative paths
// resolve against ("" for the embedded default).
func Parse(file string, data []byte, sets []string, opts ...Option) (*Scenario, error) {
	name := DisplayName(file)
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil && err != io.EOF { // io.EOF: an empty file
		return nil, yamlError(name, data, err)
	}
	if line, err := nextDocument(dec); err != nil {
		return nil, yamlError(name, data, err)
	} else if line > 0 {
		return nil, &InputError{File: name, Line: line, Err: errors.New("a second YAML document: a scenario file holds one scenario (put each in a file of its own)")}
	}
	root := &doc
	if doc.Kind == yaml.DocumentNode {
		root = doc.Content[0]
	} else { // empty file
		root = &yaml.Node{Kind: yaml.MappingNode}
	}
	d := &decoder{file: name, pos: positions{}, fromSet: map[*yaml.Node]string{}, flag: "--set", flagFrom: len(sets), failed: map[string]bool{}}
	for _, o := range opts {
		o(d)
	}
	var errs []error
	for i, s := range sets {
		flag := d.flag
		if i < d.flagFrom {
			flag = "--set"
		}
		errs = append(errs, d.applySet(root, s, flag))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	sc := defaults()
	decodeErr := d.decode(root, reflect.ValueOf(&sc).Elem(), "")
	sc.File, sc.pos, sc.failed = file, d.pos, d.failed
	if sc.Name == "" {
		sc.Name = "default"
		if file != "" {
			sc.Name = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
		}
	}
	// Every error at once: those of decoding, then those of validating
	// what did decode (check.fail passes over a key that failed to
	// decode, left at its zero).
	if err := errors.Join(decodeErr, sc.validate()); err != nil {
		return nil, err
	}
	if err := sc.resolve(); err != nil {
		return nil, err
	}
	if err := sc.expandChaos(); err != nil {
		return nil, err
	}
	return &sc, nil
}

// yamlError turns a yaml.v3 syntax error in data ("yaml: line 3: ...") into
// an InputError at the line of the problem.
func yamlError(file string, data []byte, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if i := strings.Index(rest, ":"); i > 0 {
			if n, e := strconv.Atoi(rest[:i]); e == nil {
				line, msg = n, strings.TrimSpace(rest[i+1:])
			}
		}
	}
	return &InputError{File: file, Line: problemLine(data, err.Error(), line), Err: fmt.Errorf("malformed YAML: %s", msg)}
}

// nextDocument is the line where a YAML document after the one dec has
// read starts (its node's), 0 when every one left is empty (a "---" at
// the end, a comment, null), or the error of one that is malformed: a
// scenario file holds one document, and another would be dropped without
// a word.
func nextDocument(dec *yaml.Decoder) (int, error) {
	for {
		var doc yaml.Node
		if err := dec.Decode(&doc); err == io.EOF {
			return 0, nil
		} else if err != nil {
			return 0, err
		}
		if len(doc.Content) == 0 {
			continue
		}
		if n := doc.Content[0]; n.Kind != yaml.ScalarNode || n.ShortTag() != "!!null" {
			return n.Line, nil
		}
	}
}

// maxProblemSearch bounds the lines problemLine tries past the one yaml.v3
// names (each try parses the document up to there).
const maxProblemSearch = 1000

// problemLine is the line of the problem in the document data that yaml.v3
// fails to parse with the error text msg, having named line named (0: no
// line). yaml.v3 names some lines counted from 0 (its parser's errors: "did
// not find expected key" on line 3 says line 2), others at the start of what
// the problem is in (a block mapping, a plain scalar that a tab on the next
// line breaks), and none on line 1; the line named is never after the
// problem. The problem's line is the first, from the one named on, by which
// the document already fails: cut after it, it fails with the same error.
// Past maxProblemSearch lines, or if no cut does (the error needs the end),
// it is the line named.
func problemLine(data []byte, msg string, named int) int {
	for line, start := 1, 0; start < len(data) && line < named+maxProblemSearch; line++ {
		end := len(data)
		if i := bytes.IndexByte(data[start:], '\n'); i >= 0 {
			end = start + i + 1
		}
		if line >= named {
			if err := yaml.Unmarshal(data[:end], new(yaml.Node)); err != nil && err.Error() == msg {
				return line
			}
		}
		start = end
	}
	return named
}

type decoder struct {
	file     string
	pos      positions
	fromSet  map[*yaml.Node]string // the flag of each node an override wrote
	flag     string                // the flag of the overrides from sets[flagFrom] on
	flagFrom int
	failed   map[string]bool // the keys that failed to decode (Scenario.failed)
}

func (d *decoder) fail(n *yaml.Node, key, format string, a ...any) error {
	d.failed[key] = true
	if flag, ok := d.fromSet[n]; ok {
		return &InputError{File: flag, Key: key, Err: fmt.Errorf(format, a...)}
	}
	return &InputError{File: d.file, Line: n.Line, Key: key, Err: fmt.Errorf(format, a...)}
}

func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

var (
	durationType  = reflect.TypeOf(Duration(0))
	perTokenType  = reflect.TypeOf(PerToken(0))
	selectionType = reflect.TypeOf(Selection{})
	segmentType   = reflect.TypeOf(Segment{})
)

// selectionPick is the mapping form of a Selection.
type selectionPick struct {
	Count int  `yaml:"count"`
	Pick  Pick `yaml:"pick"`
}

// decode sets v from n, strictly: unknown keys and wrong types are errors.
func (d *decoder) decode(n *yaml.Node, v reflect.Value, key string) error {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if flag, ok := d.fromSet[n]; ok {
		d.pos[key] = loc{file: flag, flag: true}
	} else if key != "" {
		d.pos[key] = loc{file: d.file, line: n.Line}
	}
	switch v.Type() {
	case durationType:
		ns, err := d.duration(n, key)
		if err != nil {
			return err
		}
		t, ok := des.FromNanos(ns)
		if !ok {
			return d.fail(n, key, "duration %q overflows virtual time (about 292 years)", n.Value)
		}
		v.SetInt(int64(t))
		return nil
	case perTokenType:
		ns, err := d.duration(n, key)
		if err != nil {
			return err
		}
		v.SetFloat(ns)
		return nil
	case selectionType:
		return d.selection(n, v.Addr().Interface().(*Selection), key)
	case segmentType:
		return d.segment(n, v.Addr().Interface().(*Segment), key)
	}
	switch v.Kind() {
	case reflect.Pointer:
		if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
			v.SetZero()
			return nil
		}
		if v.IsNil() {
			v.Set(newWithDefaults(v.Type().Elem()))
		}
		return d.decode(n, v.Elem(), key)
	case reflect.Struct:
		return d.decodeStruct(n, v, key)
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return d.fail(n, key, "want a list, got %s", describe(n))
		}
		s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
		var errs []error
		for i, c := range n.Content {
			el := s.Index(i)
			if el.Type() == reflect.TypeOf(Event{}) {
				el.Set(reflect.ValueOf(eventDefaults()))
			}
			errs = append(errs, d.decode(c, el, fmt.Sprintf("%s[%d]", key, i)))
		}
		v.Set(s)
		return errors.Join(errs...)
	}
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return d.fail(n, key, "want %s, got %s", kindName(v.Kind()), describe(n))
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(n.Value)
	case reflect.Bool:
		if n.Tag != "!!bool" {
			return d.fail(n, key, "want true or false, got %s", describe(n))
		}
		v.SetBool(n.Value == "true" || n.Value == "True" || n.Value == "TRUE")
	case reflect.Int, reflect.Int64:
		i, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64)
		if n.Tag != "!!int" || err != nil {
			return d.fail(n, key, "want an integer, got %s", describe(n))
		}
		if v.Kind() == reflect.Int && (i > math.MaxInt32 || i < math.MinInt32) {
			return d.fail(n, key, "%d is out of range", i)
		}
		v.SetInt(i)
	case reflect.Uint64:
		u, err := strconv.ParseUint(strings.ReplaceAll(n.Value, "_", ""), 0, 64)
		if n.Tag != "!!int" || err != nil {
			return d.fail(n, key, "want a non-negative integer, got %s", describe(n))
		}
		v.SetUint(u)
	case reflect.Float64:
		if n.Tag != "!!int" && n.Tag != "!!float" {
			return d.fail(n, key, "want a number, got %s", describe(n))
		}
		f, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return d.fail(n, key, "want a finite number, got %s", describe(n))
		}
		v.SetFloat(f)
	default:
		panic(fmt.Sprintf("scenarios: no decoder for %v", v.Type()))
	}
	return nil
}

func (d *decoder) decodeStruct(n *yaml.Node, v reflect.Value, key string) error {
	if n.Kind != yaml.MappingNode {
		return d.fail(n, key, "want a mapping of keys, got %s", describe(n))
	}
	if v.Type() == reflect.TypeOf(Timing{}) {
		// The model decides the defaults of the other timing keys.
		for i := 0; i < len(n.Content); i += 2 {
			if n.Content[i].Value == "model" {
				if err := d.decode(n.Content[i+1], v.FieldByName("Model"), join(key, "model")); err != nil {
					return err
				}
			}
		}
		t := v.Addr().Interface().(*Timing)
		*t = Timing{Model: t.Model}
		timingDefaults(t)
	}
	fields := yamlFields(v.Type())
	seen := map[string]bool{}
	var errs []error // every key's, in the file's order
	for i := 0; i < len(n.Content); i += 2 {
		kn, vn := n.Content[i], n.Content[i+1]
		k := kn.Value
		idx, ok := fields[k]
		switch {
		case !ok:
			errs = append(errs, d.fail(kn, join(key, k), "unknown key%s", suggest(k, fields)))
		case seen[k]:
			errs = append(errs, d.fail(kn, join(key, k), "key given twice"))
		default:
			seen[k] = true
			errs = append(errs, d.decode(vn, v.Field(idx), join(key, k)))
		}
	}
	return errors.Join(errs...)
}

// selection decodes a list of worker ids, or a pick {count: N, pick: P}
// (pick defaults to busiest).
func (d *decoder) selection(n *yaml.Node, s *Selection, key string) error {
	switch n.Kind {
	case yaml.SequenceNode:
		return d.decode(n, reflect.ValueOf(&s.IDs).Elem(), key)
	case yaml.MappingNode:
		p := selectionPick{Pick: PickBusiest}
		err := d.decodeStruct(n, reflect.ValueOf(&p).Elem(), key)
		*s = Selection{Count: p.Count, Pick: p.Pick}
		return err
	}
	s.bad = true
	return d.fail(n, key, "want a list of worker ids or a pick such as {count: 4, pick: busiest}, got %s", describe(n))
}

// segment decodes a segment of workload.envelope, {for: DURATION, rate:
// FACTOR}: both keys are required.
func (d *decoder) segment(n *yaml.Node, s *Segment, key string) error {
	err := d.decodeStruct(n, reflect.ValueOf(s).Elem(), key)
	if err == nil {
		missing := []string{"for", "rate"}
		for i := 0; i < len(n.Content); i += 2 {
			missing = slices.DeleteFunc(missing, func(k string) bool { return k == n.Content[i].Value })
		}
		if len(missing) > 0 {
			err = d.fail(n, key, "missing %s: a segment is {for: DURATION, rate: FACTOR}", strings.Join(missing, " and "))
		}
	}
	s.bad = err != nil
	return err
}

// duration parses a Go-style duration ("1h30m", "250ms", "0.5ns") into
// nanoseconds. A bare 0 is accepted.
func (d *decoder) duration(n *yaml.Node, key string) (float64, error) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return 0, d.fail(n, key, "want a duration like 250ms, got %s", describe(n))
	}
	ns, err := ParseDuration(n.Value)
	if err != nil {
		return 0, d.fail(n, key, "%v", err)
	}
	return ns, nil
}

var units = []struct {
	name string
	ns   float64
}{{"ns", 1}, {"us", 1e3}, {"µs", 1e3}, {"μs", 1e3}, {"ms", 1e6}, {"s", 1e9}, {"m", 60e9}, {"h", 3600e9}}

// ParseDuration parses a duration string such as "1.5s", "2m30s" or "60us"
// into nanoseconds, fractions kept, as Go's time.ParseDuration reads it (a
// sign, the micro sign or the Greek mu for µs). Negative durations are
// accepted here and refused by validation where they make no sense.
func ParseDuration(s string) (float64, error) {
	orig := s
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg, s = s[0] == '-', s[1:]
	}
	if s == "0" {
		return 0, nil
	}
	if s == "" {
		return 0, fmt.Errorf("want a duration like 250ms, got %q", orig)
	}
	total := 0.0
	for s != "" {
		i := 0
		for i < len(s) && (s[i] == '.' || (s[i] >= '0' && s[i] <= '9')) {
			i++
		}
		num, err := strconv.ParseFloat(s[:i], 64)
		if err != nil || i == 0 {
			return 0, fmt.Errorf("want a duration like 250ms, got %q", orig)
		}
		s = s[i:]
		j := 0
		for j < len(s) && !(s[j] == '.' || (s[j] >= '0' && s[j] <= '9')) {
			j++
		}
		u := s[:j]
		s = s[j:]
		found := false
		for _, un := range units {
			if un.name == u {
				total += float64(num * un.ns)
				found = true
				break
			}
		}
		if !found {
			return 0, fmt.Errorf("want a duration like 250ms, got %q (unit %q; use ns, us, ms, s, m or h)", orig, u)
		}
	}
	if math.IsInf(total, 0) {
		return 0, fmt.Errorf("duration %q is too large", orig)
	}
	if neg {
		total = -total
	}
	return total, nil
}

// newWithDefaults allocates a sub-struct that has its own defaults.
func newWithDefaults(t reflect.Type) reflect.Value {
	switch t {
	case reflect.TypeOf(Trace{}):
		return reflect.ValueOf(traceDefaults())
	case reflect.TypeOf(Synthetic{}):
		return reflect.ValueOf(syntheticDefaults())
	case reflect.TypeOf(LinkFault{}):
		return reflect.ValueOf(&LinkFault{Direction: DirectionEgress})
	case reflect.TypeOf(PullErrorsFault{}):
		return reflect.ValueOf(&PullErrorsFault{When: ErrorAtEnd})
	case reflect.TypeOf(DownFault{}):
		return reflect.ValueOf(&DownFault{G2: G2Kept})
	case reflect.TypeOf(Chaos{}):
		return reflect.ValueOf(chaosDefaults())
	case reflect.TypeOf(Planner{}):
		return reflect.ValueOf(plannerDefaults())
	}
	return reflect.New(t)
}

// yamlFields maps a struct's YAML keys to field indexes.
func yamlFields(t reflect.Type) map[string]int {
	m := make(map[string]int, t.NumField())
	for i := range t.NumField() {
		tag := t.Field(i).Tag.Get("yaml")
		name, _, _ := strings.Cut(tag, ",")
		if name != "" && name != "-" {
			m[name] = i
		}
	}
	return m
}

func kindName(k reflect.Kind) string {
	switch k {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Float64:
		return "a number"
	}
	return "an integer"
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	if n.Tag == "!!null" {
		return "nothing"
	}
	return strconv.Quote(n.Value)
}
