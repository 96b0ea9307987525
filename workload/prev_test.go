package workload

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/des"
)

// mooncakeLines is a Mooncake trace of one record a hash id list, one
// second apart, each prompt 100 tokens into its last 512-token trace
// block, unless tokens gives its length.
func mooncakeLines(ids [][]uint64, tokens map[int]int) string {
	var b strings.Builder
	for i, l := range ids {
		in, ok := tokens[i]
		if !ok {
			in = 512*(len(l)-1) + 100
		}
		s := strings.Trim(fmt.Sprint(l), "[]")
		fmt.Fprintf(&b, `{"timestamp": %d, "input_length": %d, "output_length": 1, "hash_ids": [%s]}`+"\n",
			1000*i, in, strings.ReplaceAll(s, " ", ", "))
	}
	return b.String()
}

// prevs is the Prev of every request of src.
func prevs(t *testing.T, src Source) []int64 {
	t.Helper()
	var out []int64
	for _, r := range readAll(t, src) {
		if r.TraceBlocks != nil {
			t.Errorf("request %d keeps its TraceBlocks", r.ID)
		}
		out = append(out, r.Prev)
	}
	return out
}

// TestPrevTurns: the previous turn of each request of a small Mooncake
// trace, worked by hand. Block j is trace block j, named by the ids 0 to j
// (the prefix); "past the first" means j >= 1.
//
//	0 [1 2 3]      -1  a first turn: no earlier request
//	1 [1 2 3 4]     0  its follow-up: the deepest shared block, [1 2 3], is 0's
//	2 [1 5]        -1  shares only block 0, [1], the system prompt
//	3 [1 2 6]       1  deepest shared [1 2], held by 0 and 1: the latest, 1
//	4 [1 2 3 4 7]   1  deepest shared [1 2 3 4], held only by 1, though 3
//	                   is the latest to hold the shallower [1 2]
//	5 [8 2 3]      -1  ids 2 and 3 where 0 has them, after another block 0:
//	                   not the same prefix
//	6 [1 2 6], 600 tokens  4  the prompt fills blocks 0 and 1 only: [1 2],
//	                   latest held by 4; id 6 lies past the prompt, so 3's
//	                   deeper [1 2 6] does not count
func TestPrevTurns(t *testing.T) {
	in := mooncakeLines([][]uint64{{1, 2, 3}, {1, 2, 3, 4}, {1, 5}, {1, 2, 6}, {1, 2, 3, 4, 7}, {8, 2, 3}, {1, 2, 6}},
		map[int]int{6: 600})
	raw := readAll(t, NewMooncake(strings.NewReader(in), opt))
	if r := raw[6]; r.Prev != -1 || len(r.TraceBlocks) != 2 || r.TraceBlocks[0] != raw[0].TraceBlocks[0] {
		t.Errorf("read alone, request 6: prev %d, %d trace blocks, want -1 and 2 from block 0's", r.Prev, len(r.TraceBlocks))
	}
	got := prevs(t, PrevTurns(NewMooncake(strings.NewReader(in), opt)))
	if want := []int64{-1, 0, -1, 1, 1, -1, 4}; !slices.Equal(got, want) {
		t.Errorf("prev %v, want %v", got, want)
	}
}

// TestPrevTurnsSortedSkipped: the previous turn is found in the order the
// run reads, after Sorted and Skip, with their ids. In file order the
// trace is A at 20 ms [1 2 3 4] (a follow-up), B at 10 ms [1 2 3] (its
// first turn), C at 0 ms [9 9], D at 30 ms [1 2 3 4 5]; sorted: C 0, B 1,
// A 2, D 3, so A's previous turn is 1 and D's 2. Skipping 1 renumbers B
// 0, A 1, D 2: A's is 0, D's 1. Skipping 2 leaves A 0 and D 1: A's first
// turn was skipped, so it has none (-1), and D's is 0.
func TestPrevTurnsSortedSkipped(t *testing.T) {
	in := `{"timestamp": 20, "input_length": 1600, "output_length": 1, "hash_ids": [1, 2, 3, 4]}
{"timestamp": 10, "input_length": 1100, "output_length": 1, "hash_ids": [1, 2, 3]}
{"timestamp": 0, "input_length": 600, "output_length": 1, "hash_ids": [9, 9]}
{"timestamp": 30, "input_length": 2100, "output_length": 1, "hash_ids": [1, 2, 3, 4, 5]}
`
	o := opt
	o.Unsorted = true
	for _, c := range []struct {
		skip int
		want []int64
	}{
		{0, []int64{-1, -1, 1, 2}},
		{1, []int64{-1, 0, 1}},
		{2, []int64{-1, 0}},
	} {
		src, err := Sorted(NewMooncake(strings.NewReader(in), o))
		if err != nil {
			t.Fatal(err)
		}
		if got := prevs(t, PrevTurns(Skip(src, c.skip))); !slices.Equal(got, c.want) {
			t.Errorf("skip %d: prev %v, want %v", c.skip, got, c.want)
		}
	}
}

// TestPrevTurnsWithoutHashes: Azure and otel traces record no prompt
// contents (otel's shared_prefix is the scenario's assumption, not the
// trace's), so every request has no previous turn.
func TestPrevTurnsWithoutHashes(t *testing.T) {
	az := "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03.9,4808,10\n2023-11-16 18:17:04.0,4808,8\n"
	shared := opt
	shared.SharedPrefix = 1024
	for _, c := range []struct {
		name string
		src  Source
	}{
		{"azure", NewAzure(strings.NewReader(az), opt)},
		{"otel", NewOtel(strings.NewReader(otelSample), shared)},
	} {
		got := prevs(t, PrevTurns(c.src))
		if len(got) == 0 || slices.ContainsFunc(got, func(p int64) bool { return p != -1 }) {
			t.Errorf("%s: prev %v, want all -1", c.name, got)
		}
	}
}

// TestSyntheticPrevTurns: constant arrivals, 3 turns a session and no
// think time: a session's three turns arrive at its start, before the next
// session (1 s later at 3 requests a second), so requests 0, 1, 2 are
// session 0's turns and 3, 4, 5 session 1's: previous turns -1, 0, 1, -1,
// 3, 4.
func TestSyntheticPrevTurns(t *testing.T) {
	cfg := Synthetic{Requests: 6, Rate: 3, Arrival: ArrivalConstant, InputMean: 100, OutputMean: 10, Turns: 3, BlockSize: 16}
	got := readAll(t, NewGenerator(cfg, des.NewRNG(1)))
	var ps []int64
	for _, r := range got {
		ps = append(ps, r.Prev)
	}
	if want := []int64{-1, 0, 1, -1, 3, 4}; !slices.Equal(ps, want) {
		t.Errorf("prev %v, want %v", ps, want)
	}
	if got[3].Arrival != des.Second || got[5].Arrival != des.Second {
		t.Errorf("session 1 at %v and %v, want 1s", got[3].Arrival, got[5].Arrival)
	}
}

// TestSyntheticPrevTurnsInterleaved: 1000 sessions of 3 turns, 5 s of think
// time, interleaved. Each session is a line of three requests linked by
// Prev: 1000 first turns (-1), each request the previous turn of at most
// one later request, no line longer than 3; a turn's prompt chain extends
// its previous turn's; and some previous turn is not the request just
// before (the sessions interleave).
func TestSyntheticPrevTurnsInterleaved(t *testing.T) {
	got := readAll(t, NewGenerator(synth, des.NewRNG(7)))
	firsts, interleaved := 0, false
	depth := make([]int, len(got))
	taken := make([]bool, len(got))
	for i, r := range got {
		p := r.Prev
		if p < 0 {
			firsts, depth[i] = firsts+1, 1
			continue
		}
		if p >= r.ID || taken[p] || got[p].Arrival > r.Arrival {
			t.Fatalf("request %d: previous turn %d (taken %v)", i, p, taken[p])
		}
		taken[p], depth[i] = true, depth[p]+1
		interleaved = interleaved || p != r.ID-1
		if hp, hr := hashes(got[p]), hashes(r); !slices.Equal(hp, hr[:len(hp)]) {
			t.Errorf("request %d does not extend its previous turn %d", i, p)
		}
	}
	if firsts != 1000 || slices.Max(depth) != 3 || !interleaved {
		t.Errorf("%d first turns, longest session %d, interleaved %v; want 1000, 3, true", firsts, slices.Max(depth), interleaved)
	}
}

// idSource yields one request with trace blocks a call, numbered from first.
type idSource struct{ next int64 }

func (s *idSource) Next() (*Request, error) {
	s.next++
	return &Request{ID: s.next - 1, TraceBlocks: []uint64{1, 2}}, nil
}

// TestPrevTurnsIDLimit: the table keeps 1 + a holder's id in 32 bits, so
// request 2^32-2 is the last it takes; request 2^32-1 is an error naming
// it, not a wrapped holder.
func TestPrevTurnsIDLimit(t *testing.T) {
	src := PrevTurns(&idSource{next: math.MaxUint32 - 1})
	if r, err := src.Next(); err != nil || r.ID != math.MaxUint32-1 {
		t.Fatalf("request 2^32-2: %+v, %v", r, err)
	}
	r, err := src.Next()
	if err == nil || !strings.Contains(err.Error(), "request 4294967295") {
		t.Errorf("request 2^32-1: %+v, %v; want an error naming it", r, err)
	}
}
