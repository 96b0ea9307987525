package workload

import (
	"container/heap"
	"fmt"
	"io"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/kvsim/kvsim/block"
	"github.com/kvsim/kvsim/des"
)

// Synthetic describes a seeded synthetic workload. Sessions start by the
// arrival process at Rate/Turns per second, so requests arrive at about
// Rate per second. A session's first prompt is drawn from Input; its first
// min(SharedPrefix, prompt) tokens are the shared prefix of one of
// PrefixGroups groups, chosen uniformly. Each later turn arrives an
// exponential think time (mean ThinkTime) after the previous turn's arrival,
// and its prompt is the previous prompt, the previous answer and a new
// message drawn from Input. Arrivals are open loop: a turn does not wait for
// the previous answer. A request's Prev is its session's previous turn, -1
// for a first turn (whatever prefix group it shares).
type Synthetic struct {
	Requests     int     // total requests
	Rate         float64 // requests per second
	Arrival      Arrival
	InputMean    float64 // tokens, lognormal mean
	InputSigma   float64 // lognormal sigma of the underlying normal
	OutputMean   float64
	OutputSigma  float64
	PrefixGroups int // 0: no shared prefixes
	SharedPrefix int // tokens
	Turns        int // turns per session, at least 1
	ThinkTime    des.Time
	BlockSize    int // engine block size
	MaxTokens    int // cap on drawn lengths (e.g. max_model_len); 0 = none
}

// Arrival is the process that starts sessions: the value of the scenario
// key workload.synthetic.arrival.
type Arrival string

// The arrival processes.
const (
	ArrivalPoisson  Arrival = "poisson"  // exponential gaps
	ArrivalConstant Arrival = "constant" // equal gaps
)

// Arrivals lists the arrival processes, in the order errors name them.
var Arrivals = []Arrival{ArrivalPoisson, ArrivalConstant}

// session is one conversation between turns.
type session struct {
	id     uint64
	next   des.Time // arrival of its next turn
	turn   int
	group  int // -1: none
	prompt int // tokens of the last prompt
	output int // tokens of the last answer
	chain  block.Chain
	last   int64 // id of its last request; -1 before its first
}

type sessionHeap []*session

func (h sessionHeap) Len() int { return len(h) }
func (h sessionHeap) Less(i, j int) bool {
	if h[i].next != h[j].next {
		return h[i].next < h[j].next
	}
	return h[i].id < h[j].id
}
func (h sessionHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *sessionHeap) Push(x any)   { *h = append(*h, x.(*session)) }
func (h *sessionHeap) Pop() any {
	old := *h
	s := old[len(old)-1]
	*h = old[:len(old)-1]
	return s
}

// Generator yields the requests of a Synthetic workload in arrival order.
// Its memory holds only the sessions waiting for their next turn.
type Generator struct {
	cfg         Synthetic
	arrivals    *rand.Rand // session start gaps
	lengths     *rand.Rand
	choice      *rand.Rand
	input       distuv.LogNormal
	output      distuv.LogNormal
	nextStart   des.Time
	sessions    uint64
	emitted     int
	pendingReqs int // turns still to come from pending sessions
	pending     sessionHeap
}

// NewGenerator returns a generator drawing from the given streams. The
// config must already be validated.
func NewGenerator(cfg Synthetic, rng des.RNG) *Generator {
	g := &Generator{
		cfg:      cfg,
		arrivals: rng.Stream("workload.arrivals"),
		lengths:  rng.Stream("workload.lengths"),
		choice:   rng.Stream("workload.choice"),
	}
	g.input = logNormal(cfg.InputMean, cfg.InputSigma, g.lengths)
	g.output = logNormal(cfg.OutputMean, cfg.OutputSigma, g.lengths)
	return g
}

// logNormal has the given mean: mu = ln(mean) - sigma^2/2.
func logNormal(mean, sigma float64, src rand.Source) distuv.LogNormal {
	return distuv.LogNormal{Mu: math.Log(mean) - float64(sigma*sigma)/2, Sigma: sigma, Src: src}
}

// draw is a length from d, in [1, MaxTokens] and at most cfg.MaxTokens.
func (g *Generator) draw(d distuv.LogNormal) int {
	return g.clamp(max(int(min(math.Round(d.Rand()), MaxTokens)), 1))
}

// clamp caps a length at MaxTokens and at cfg.MaxTokens when it is set.
func (g *Generator) clamp(n int) int {
	n = min(n, MaxTokens)
	if g.cfg.MaxTokens > 0 {
		n = min(n, g.cfg.MaxTokens)
	}
	return n
}

func (g *Generator) sessionGap() des.Time {
	mean := float64(g.cfg.Turns) / g.cfg.Rate * 1e9
	if g.cfg.Arrival == ArrivalConstant {
		return nanosSat(mean)
	}
	return nanosSat(g.arrivals.ExpFloat64() * mean)
}

// nanosSat is ns rounded to virtual time, des.MaxTime past it: a gap so
// long only saturates the arrival, which Next then refuses.
func nanosSat(ns float64) des.Time {
	if t, ok := des.FromNanos(ns); ok {
		return t
	}
	return des.MaxTime
}

// Next returns the next request or io.EOF after Requests of them; an
// error when a request would arrive past MaxArrival (a rate so low, or a
// think time so long, that the workload outlasts virtual time).
func (g *Generator) Next() (*Request, error) {
	if g.emitted >= g.cfg.Requests {
		return nil, io.EOF
	}
	var r *Request
	if startNew := len(g.pending) == 0 || g.nextStart < g.pending[0].next; startNew && g.emitted+g.pendingReqs < g.cfg.Requests {
		r = g.start()
	} else {
		s := heap.Pop(&g.pending).(*session)
		g.pendingReqs -= g.cfg.Turns - s.turn
		r = g.follow(s)
	}
	if r.Arrival > MaxArrival {
		return nil, &ParseError{Key: "workload.synthetic", Err: fmt.Errorf(
			"request %d would arrive past about 146 years, outside virtual time (an arrival leaves room for the run after it): raise rate, or lower requests or think_time", r.ID)}
	}
	return r, nil
}

func (g *Generator) start() *Request {
	s := &session{id: g.sessions, next: g.nextStart, group: -1, last: -1}
	g.sessions++
	g.nextStart = des.AddSat(g.nextStart, g.sessionGap())
	if g.cfg.PrefixGroups > 0 {
		s.group = g.choice.IntN(g.cfg.PrefixGroups)
	}
	return g.turn(s, g.draw(g.input))
}

func (g *Generator) follow(s *session) *Request {
	return g.turn(s, s.prompt+s.output+g.draw(g.input))
}

// turn emits the session's next request with a prompt of n tokens and
// queues the turn after it.
func (g *Generator) turn(s *session, n int) *Request {
	n = g.clamp(n)
	b := g.cfg.BlockSize
	keep := min(s.prompt/b, n/b) // full blocks of the last prompt stay
	chain := s.chain.Prefix(keep)
	shared := 0
	if s.group >= 0 {
		shared = min(g.cfg.SharedPrefix, n) / b
	}
	// Block k of the group's prefix has the block.ChainHash content of the
	// group, the same for the whole group, and the sub k; block k of this
	// turn's own blocks, the turn's content and the sub k.
	if keep < shared {
		chain.AppendRule(block.Mix(uint64(s.group)^0x5bd1e9955bd1e995), 0, 1, shared-keep)
	}
	if from := max(keep, shared); from < n/b {
		chain.AppendRule(block.Mix(s.id<<20^uint64(s.turn)^0x27d4eb2f165667c5), 0, 1, n/b-from)
	}
	req := &Request{
		ID:           int64(g.emitted),
		Arrival:      s.next,
		InputTokens:  n,
		OutputTokens: g.draw(g.output),
		Blocks:       chain,
		Prev:         s.last,
	}
	g.emitted++
	s.chain, s.prompt, s.output, s.last = chain, n, req.OutputTokens, req.ID
	s.turn++
	if s.turn < g.cfg.Turns {
		think := nanosSat(g.choice.ExpFloat64() * float64(g.cfg.ThinkTime))
		s.next = des.AddSat(s.next, think)
		g.pendingReqs += g.cfg.Turns - s.turn
		heap.Push(&g.pending, s)
	}
	return req
}
