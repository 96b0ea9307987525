package scenarios

import (
	_ "embed"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/engine"
	"github.com/kvsim/kvsim/kvcr"
	"github.com/kvsim/kvsim/scheduler"
	"github.com/kvsim/kvsim/workload"
)

// Scenario is one run: workload, cluster, router, KVCR, lifecycle events and
// reporting. Field tags are the YAML keys, a public contract.
type Scenario struct {
	Name     string   `yaml:"name"`
	Seed     uint64   `yaml:"seed"`
	Workload Workload `yaml:"workload"`
	Cluster  Cluster  `yaml:"cluster"`
	Router   Router   `yaml:"router"`
	KVCR     KVCR     `yaml:"kvcr"`
	Events   []Event  `yaml:"events,omitempty"`
	// Chaos draws fault events from the seeded stream "faults"; they are
	// appended to Events, with Origin chaos, when the scenario is loaded.
	Chaos *Chaos `yaml:"chaos,omitempty"`
	// Planner adds and drains workers from what the cluster shows
	// (planner.go); nil: none.
	Planner *Planner `yaml:"planner,omitempty"`
	Report  Report   `yaml:"report"`
	// Expect states what a run must show, one metric condition an entry
	// ("pulls_rejected_draining > 0", "ttft_p99_ms < 2000"); replay fails
	// (exit 1) when one does not hold.
	Expect []string `yaml:"expect,omitempty"`

	// File is the scenario's path ("" for the embedded default); relative
	// trace paths resolve against its directory.
	File string `yaml:"-"`
	pos  positions
	// failed is the keys that failed to decode, left at their zero
	// values: validating them would blame them again, wrongly ("want a
	// duration, got \"1\"", then "must be at least 1ms, got 0s"), so
	// check.fail passes over them.
	failed map[string]bool
}

// Workload is a trace or a synthetic generator: exactly one is set.
type Workload struct {
	Trace     *Trace     `yaml:"trace,omitempty"`
	Synthetic *Synthetic `yaml:"synthetic,omitempty"`
	// Envelope shapes the source's arrival rate over simulated time, one
	// segment after another (workload.Envelope); none: the source's own
	// arrival times. (Omitted when empty, so that the resolved scenarios
	// without it are as they were.)
	Envelope []Segment `yaml:"envelope,omitempty"`
}

// Segment is one piece of workload.envelope: for For of simulated time the
// source's own clock runs Rate times as fast, so its arrival rate is
// multiplied by Rate.
type Segment struct {
	For  Duration `yaml:"for"`
	Rate float64  `yaml:"rate"`
	bad  bool     // it did not decode: decoding said why, validation says no more of it
}

// Trace replays a recorded trace.
type Trace struct {
	Path      string          `yaml:"path"`           // relative to the scenario file; $KVSIM_TRACES expands
	Format    workload.Format `yaml:"format"`         // default: azure for a .csv, otel by content, else mooncake
	BlockSize int             `yaml:"block_size"`     // tokens per trace hash id
	TimeScale float64         `yaml:"time_scale"`     // arrival times are multiplied by it
	Limit     int             `yaml:"limit"`          // first N requests; 0 = all
	Skip      int             `yaml:"skip,omitempty"` // drop the first N requests (after limit); the rest are numbered from 0
	Sort      bool            `yaml:"sort"`           // sort by timestamp (reads the whole trace first)
	// SharedPrefix is the tokens every prompt begins with, for otel
	// traces, which do not record prompts; 0 = none. (Omitted when 0, so
	// that the resolved scenarios of other formats are as they were.)
	SharedPrefix int `yaml:"shared_prefix,omitempty"`
	// ArrivalJitter moves each arrival later by a seeded draw in [0,
	// jitter), keeping the trace's order (workload.Jitter); 0 = none.
	ArrivalJitter Duration `yaml:"arrival_jitter,omitempty"`
}

// Synthetic generates a seeded workload; see workload.Synthetic.
type Synthetic struct {
	Requests     int              `yaml:"requests"`
	Rate         float64          `yaml:"rate"` // requests per second
	Arrival      workload.Arrival `yaml:"arrival"`
	Input        Lengths          `yaml:"input"`
	Output       Lengths          `yaml:"output"`
	PrefixGroups int              `yaml:"prefix_groups"`
	SharedPrefix int              `yaml:"shared_prefix"` // tokens
	Turns        int              `yaml:"turns"`
	ThinkTime    Duration         `yaml:"think_time"`
}

// Lengths is a lognormal token-length distribution with the given mean.
type Lengths struct {
	Mean  float64 `yaml:"mean"`
	Sigma float64 `yaml:"sigma"`
}

// Cluster is the workers.
type Cluster struct {
	Workers int    `yaml:"workers"`
	Engine  Engine `yaml:"engine"`
	G2      G2     `yaml:"g2"`
	// MigrationLimit is how many times on_remove: migrate routes a request
	// that lost its worker again (the serving frontend's migration limit);
	// 0 turns migration off.
	MigrationLimit int `yaml:"migration_limit,omitempty"`
}

// Engine is every worker's vLLM configuration.
type Engine struct {
	BlockSize        int   `yaml:"block_size"`
	GPUBlocks        int   `yaml:"gpu_blocks"`         // 0: derived from the gpu and model, else 16384
	KVBytesPerToken  int64 `yaml:"kv_bytes_per_token"` // 0: from the model
	MaxNumSeqs       int   `yaml:"max_num_seqs"`
	MaxBatchedTokens int   `yaml:"max_batched_tokens"`
	ChunkedPrefill   bool  `yaml:"chunked_prefill"`
	PrefixCaching    bool  `yaml:"prefix_caching"`
	MaxModelLen      int   `yaml:"max_model_len"` // 0: from the model, else no limit
	// Admission is the admission rule around asynchronous KV loads:
	// vLLM's current one, or 0.11's, which can stall (docs/model.md).
	Admission engine.Admission `yaml:"admission"`
	Timing    Timing           `yaml:"timing"`
}

// Timing selects and parameterises the pass timing model. Only the keys of
// the selected model and the hardware keys (gpu, model_preset or
// model_config, tp) may be set. Roofline always names the hardware; another
// model names it when any hardware key is set, and is then checked against
// the hardware's physical bound (engine.CheckPhysics).
type Timing struct {
	Model TimingModel `yaml:"model"`

	Prefill Duration `yaml:"prefill"` // fixed
	Decode  Duration `yaml:"decode"`  // fixed

	Base            Duration `yaml:"base"`              // linear
	PerPrefillToken PerToken `yaml:"per_prefill_token"` // linear
	PerDecodeToken  PerToken `yaml:"per_decode_token"`  // linear
	PerContextToken PerToken `yaml:"per_context_token"` // linear

	SpeedupRatio float64 `yaml:"speedup_ratio"` // polynomial

	GPU         string   `yaml:"gpu"`          // hardware
	ModelPreset string   `yaml:"model_preset"` // hardware
	ModelConfig string   `yaml:"model_config"` // hardware: a Hugging Face config.json
	TP          int      `yaml:"tp"`           // hardware
	MFU         float64  `yaml:"mfu"`          // roofline
	MBU         float64  `yaml:"mbu"`          // roofline
	Overhead    Duration `yaml:"overhead"`     // roofline

	model engine.Model // resolved from model_preset or model_config
}

// TimingModel names a pass timing model: the value of the scenario key
// cluster.engine.timing.model.
type TimingModel string

// The timing models.
const (
	TimingFixed      TimingModel = "fixed"
	TimingLinear     TimingModel = "linear"
	TimingPolynomial TimingModel = "polynomial"
	TimingRoofline   TimingModel = "roofline"
)

// TimingModels lists the timing models, in the order errors name them.
var TimingModels = []TimingModel{TimingFixed, TimingLinear, TimingPolynomial, TimingRoofline}

// NamesHardware reports whether the timing names a GPU and a model (always
// with roofline).
func (t *Timing) NamesHardware() bool { return t.GPU != "" }

// Hardware is the GPU, model and tensor parallelism the resolved timing
// names; ok is false when it names none.
func (sc *Scenario) Hardware() (gpu engine.GPU, model engine.Model, tp int, ok bool) {
	t := &sc.Cluster.Engine.Timing
	if !t.NamesHardware() {
		return engine.GPU{}, engine.Model{}, 0, false
	}
	gpu, _ = engine.FindGPU(t.GPU)
	return gpu, t.model, t.TP, true
}

// G2 is each worker's KVCR host pool.
type G2 struct {
	CapacityBlocks int     `yaml:"capacity_blocks"` // default 4 x gpu_blocks; 0 disables G2
	D2HGbps        float64 `yaml:"d2h_gbps"`        // GB/s; 0 = instant
	H2DGbps        float64 `yaml:"h2d_gbps"`
}

// Router is the routing policy and hint settings.
type Router struct {
	Policy           scheduler.Policy `yaml:"policy"`
	OverlapCredit    float64          `yaml:"overlap_credit"`
	HostHitWeight    float64          `yaml:"host_hit_weight"`
	PrefillLoadScale float64          `yaml:"prefill_load_scale"`
	EventDelay       Duration         `yaml:"event_delay"`
	// Temperature samples kv_aware's pick from a softmax over the workers'
	// costs; 0 = the lowest cost.
	Temperature float64 `yaml:"temperature"`
	Hints       Hints   `yaml:"hints"`
}

// Hints configures kv.fetch hints.
type Hints struct {
	Enabled   bool      `yaml:"enabled"`
	Mode      kvcr.Mode `yaml:"mode"` // what a hinted pull does to the source's copy
	MinBlocks int       `yaml:"min_blocks"`
	// Policy chooses the source among the candidates: min_blocks (the
	// longest run) or cost (only a pull that beats recomputing).
	Policy scheduler.HintPolicy `yaml:"policy"`
}

// KVCR configures peer pulls.
type KVCR struct {
	Enabled          bool     `yaml:"enabled"`
	Latency          Duration `yaml:"latency"`
	BandwidthGbps    float64  `yaml:"bandwidth_gbps"`
	IngressGbps      float64  `yaml:"ingress_gbps"` // 0: unbounded
	OperationTimeout Duration `yaml:"operation_timeout"`
	AbandonTimeout   Duration `yaml:"abandon_timeout"`
	MaxInflightPulls int      `yaml:"max_inflight_pulls"` // 0: unlimited
	// DescriptorCost is the time the source takes to post one transfer
	// descriptor; posting overlaps the bytes, so a link serves at most
	// one block a DescriptorsPerBlock x DescriptorCost. 0: free.
	DescriptorCost Duration `yaml:"descriptor_cost"`
	// DescriptorsPerBlock is the descriptors a block takes: 1 for a
	// contiguous layout, 2 x layers for one region per layer and K/V.
	DescriptorsPerBlock int `yaml:"descriptors_per_block"`
	// SessionSetup delays the first transfer of each (source, target)
	// pair once. 0: none.
	SessionSetup Duration `yaml:"session_setup"`
	// LossNotice is how long after a source is lost its targets learn it;
	// 0: never, they fail at their own deadlines (the runtime's default).
	LossNotice Duration `yaml:"loss_notice"`
	// OpportunisticQuery lets a pull also fetch, as copies, blocks past
	// its hint that the source holds.
	OpportunisticQuery bool `yaml:"opportunistic_query"`
	// BackgroundTimeout is the timeout of a request-independent pull (an
	// evacuation's move, a prewarm's prefetch) at its target and its
	// source; 0: a request pull's timeouts for its mode.
	BackgroundTimeout Duration `yaml:"background_timeout"`
	// BackgroundInflight is how many request-independent pulls a source
	// stages at a time; the rest wait their turn. 0: no limit.
	BackgroundInflight int `yaml:"background_inflight"`
}

// Event is one scenario event: a lifecycle event (drain, remove, add) or a
// fault (link, slow, pull_errors, notices, down); exactly one is set.
type Event struct {
	At Duration `yaml:"at"`
	// For is a fault's length; 0: to the end of the run.
	For          Duration     `yaml:"for,omitempty"`
	Drain        *Selection   `yaml:"drain,omitempty"`
	DrainTimeout Duration     `yaml:"drain_timeout,omitempty"` // 0: none
	Remove       *Selection   `yaml:"remove,omitempty"`
	OnRemove     RemoveAction `yaml:"on_remove,omitempty"`
	Add          int          `yaml:"add,omitempty"`
	Startup      Duration     `yaml:"startup,omitempty"`
	// Evacuate makes a drain move the draining workers' G2 blocks to the
	// workers the router would send their chains to.
	Evacuate *Budget `yaml:"evacuate,omitempty"`
	// Prewarm makes an add's new workers prefetch the hottest chains of
	// the ready workers' G2.
	Prewarm *Budget `yaml:"prewarm,omitempty"`
	// The faults (DESIGN.md section 12, docs/scenarios.md).
	Link       *LinkFault       `yaml:"link,omitempty"`
	Slow       *SlowFault       `yaml:"slow,omitempty"`
	PullErrors *PullErrorsFault `yaml:"pull_errors,omitempty"`
	Notices    *NoticesFault    `yaml:"notices,omitempty"`
	Down       *DownFault       `yaml:"down,omitempty"`
	// Origin is where the event comes from: "" for the scenario's own,
	// OriginChaos for one its chaos drew.
	Origin Origin `yaml:"origin,omitempty"`
}

// Budget bounds the plan of an evacuation or a prewarm: the blocks its pulls may carry,
// most recently used first, for each worker drained or added. Mode is an
// evacuation's: move (the default) or copy; a prewarm always copies.
type Budget struct {
	Blocks int       `yaml:"blocks"`
	Mode   kvcr.Mode `yaml:"mode,omitempty"`
}

// Moves reports whether an evacuation moves its blocks (its pulls are of
// kind move) rather than copying them (kind prefetch): unless its mode is
// copy, move being the default.
func (b *Budget) Moves() bool { return b.Mode != kvcr.ModeCopy }

// Selection is the workers a drain or remove acts on: the ids listed
// (`drain: [8, 9]`), or Count of the workers ready at the event's time,
// ordered by Pick (`drain: {count: 2, pick: busiest}`).
type Selection struct {
	IDs   []int // nil for a pick
	Count int
	Pick  Pick
	bad   bool // it was neither a list nor a mapping: its error is said, validation says no more of it
}

// Picked reports whether the workers are picked at the event's time rather
// than listed.
func (s *Selection) Picked() bool { return s.IDs == nil }

// Pick orders the ready workers for a selection: the value of the scenario
// key events[i].drain.pick (or remove.pick). Ties go to the lowest id.
type Pick string

// The picks.
const (
	PickBusiest    Pick = "busiest"     // most requests running and waiting
	PickIdlest     Pick = "idlest"      // fewest requests running and waiting
	PickMostCached Pick = "most_cached" // most blocks in G2
	PickRandom     Pick = "random"      // uniformly, from the seeded stream "lifecycle/<at>" ("faults/pick/<at>" in a fault)
	// PickHighestID takes the highest ids: the newest workers, which a
	// deployed planner (Dynamo's, a Kubernetes Deployment's scale-in)
	// drops first.
	PickHighestID Pick = "highest_id"
	// PickLeastCached takes the fewest blocks held in G1 or G2 (a block
	// in both counts once), as the router's view has them: what its KV
	// events have told it by then, router.event_delay included.
	PickLeastCached Pick = "least_cached"
	// PickFewestUnique takes the fewest blocks held in G1 or G2 that no
	// other worker holds in either tier, in the router's view: the cache a
	// drain loses to the whole cluster.
	PickFewestUnique Pick = "fewest_unique"
)

// Picks lists the picks, in the order errors name them.
var Picks = []Pick{PickBusiest, PickIdlest, PickMostCached, PickRandom, PickHighestID, PickLeastCached, PickFewestUnique}

// RemoveAction is what becomes of the requests on a removed worker: the
// value of the scenario key events[i].on_remove.
type RemoveAction string

// The remove actions.
const (
	RemoveReroute RemoveAction = "reroute" // routed again
	RemoveFail    RemoveAction = "fail"    // ended with the outcome failed
	// RemoveMigrate routes a request again with the tokens it produced
	// added to its prompt, at most cluster.migration_limit times.
	RemoveMigrate RemoveAction = "migrate"
)

// RemoveActions lists the remove actions, in the order errors name them.
var RemoveActions = []RemoveAction{RemoveReroute, RemoveFail, RemoveMigrate}

// Report configures outputs.
type Report struct {
	SampleInterval Duration `yaml:"sample_interval"`
	// EventWindow is the window before and after each lifecycle event over
	// which events.parquet measures latency, throughput and hits.
	EventWindow Duration `yaml:"event_window"`
}

// Duration is a virtual duration written as a Go duration string ("250ms").
type Duration des.Time

// PerToken is a per-token cost in nanoseconds, written as a duration that may
// be fractional ("60us", "0.5ns").
type PerToken float64

// defaultYAML is the embedded default scenario that `kvsim replay` runs
// when given no file.
//
//go:embed default.yaml
var defaultYAML []byte

// defaults is a scenario before the user's keys are applied.
func defaults() Scenario {
	sc := Scenario{
		Seed: 1,
		Cluster: Cluster{
			Workers: 1,
			Engine: Engine{
				BlockSize: 16, MaxNumSeqs: 256, MaxBatchedTokens: 8192,
				ChunkedPrefill: true, PrefixCaching: true, Admission: engine.AdmitCurrent,
				Timing: Timing{Model: TimingRoofline},
			},
			G2: G2{CapacityBlocks: -1, D2HGbps: 32, H2DGbps: 32},
		},
		Router: Router{
			Policy: scheduler.KVAware, OverlapCredit: 1, HostHitWeight: 0.75, PrefillLoadScale: 1,
			Hints: Hints{Enabled: true, Mode: kvcr.ModeCopy, MinBlocks: 1, Policy: scheduler.HintsMinBlocks},
		},
		KVCR: KVCR{
			Enabled: true, Latency: Duration(des.Millisecond), BandwidthGbps: 50,
			OperationTimeout: Duration(1000 * des.Millisecond), AbandonTimeout: Duration(5000 * des.Millisecond),
			DescriptorCost: Duration(2 * des.Microsecond), DescriptorsPerBlock: 1, BackgroundInflight: 1,
		},
		Report: Report{SampleInterval: Duration(des.Second), EventWindow: Duration(3 * des.Minute)},
	}
	timingDefaults(&sc.Cluster.Engine.Timing)
	return sc
}

func traceDefaults() *Trace { return &Trace{BlockSize: 512, TimeScale: 1} }

func syntheticDefaults() *Synthetic {
	return &Synthetic{Requests: 1000, Rate: 10, Arrival: workload.ArrivalPoisson, Input: Lengths{Mean: 1024},
		Output: Lengths{Mean: 128}, Turns: 1}
}

func eventDefaults() Event { return Event{OnRemove: RemoveReroute} }

// timingDefaults fills the selected model's parameters.
func timingDefaults(t *Timing) {
	switch t.Model {
	case TimingFixed:
		t.Prefill, t.Decode = Duration(10*des.Millisecond), Duration(5*des.Millisecond)
	case TimingPolynomial:
		t.SpeedupRatio = 1
	case TimingRoofline:
		t.GPU, t.ModelPreset, t.TP = "h100", "llama-3.1-8b", 1
		t.MFU, t.MBU, t.Overhead = engine.DefaultMFU, engine.DefaultMBU, Duration(engine.DefaultOverhead)
	}
}

// Expectation is one entry of expect (and of kvsim search's --slo): a
// metric, a comparison and a number.
type Expectation struct {
	Metric string  // a counter, a numeric column of sweep.parquet or events[i].COLUMN (results.CheckMetric)
	Op     string  // ==, !=, <, <=, >, >=
	Value  float64 // the number
	// Int is the number when it is written as an integer (IsInt): an
	// integer metric compares with it exactly.
	Int   int64
	IsInt bool
}

// ParseExpectation reads "metric op value", as in "move_lost_blocks > 0"
// or "ttft_p99_ms < 2000.5"; the value is an integer or a finite decimal.
// It checks the form, not the metric's name (results.CheckMetric does).
func ParseExpectation(s string) (Expectation, error) {
	f := strings.Fields(s)
	if len(f) != 3 {
		return Expectation{}, fmt.Errorf("%q: want \"metric op value\", as in \"pulls_failed > 0\" or \"ttft_p99_ms < 2000\"", s)
	}
	e := Expectation{Metric: f[0], Op: f[1]}
	if v, err := strconv.ParseInt(f[2], 10, 64); err == nil {
		e.Int, e.IsInt, e.Value = v, true, float64(v)
	} else if v, err := strconv.ParseFloat(f[2], 64); err == nil && !math.IsInf(v, 0) && !math.IsNaN(v) {
		e.Value = v
	} else {
		return Expectation{}, fmt.Errorf("%q: the value %q is not a number", s, f[2])
	}
	if !slices.Contains(expectOps, e.Op) {
		return Expectation{}, fmt.Errorf("%q: the comparison %q is not one of %s", s, e.Op, strings.Join(expectOps, " "))
	}
	return e, nil
}

var expectOps = []string{"==", "!=", "<", "<=", ">", ">="}

// Holds reports whether an integer metric's value meets the expectation:
// exactly when the expectation's value is an integer, else as HoldsFloat.
func (e Expectation) Holds(v int64) bool {
	if !e.IsInt {
		return e.HoldsFloat(float64(v))
	}
	return holds(e.Op, v, e.Int)
}

// HoldsFloat reports whether a metric's value meets the expectation,
// compared as float64. A NaN, a statistic of nothing, meets none, != too:
// an expectation of a value that does not exist does not hold.
func (e Expectation) HoldsFloat(v float64) bool { return !math.IsNaN(v) && holds(e.Op, v, e.Value) }

func holds[T int64 | float64](op string, v, want T) bool {
	switch op {
	case "==":
		return v == want
	case "!=":
		return v != want
	case "<":
		return v < want
	case "<=":
		return v <= want
	case ">":
		return v > want
	}
	return v >= want
}

func (e Expectation) String() string {
	v := strconv.FormatFloat(e.Value, 'g', -1, 64)
	if e.IsInt {
		v = strconv.FormatInt(e.Int, 10)
	}
	return e.Metric + " " + e.Op + " " + v
}

// Expectations parses the scenario's expect entries (validated at load).
func (sc *Scenario) Expectations() []Expectation {
	out := make([]Expectation, len(sc.Expect))
	for i, s := range sc.Expect {
		out[i], _ = ParseExpectation(s)
	}
	return out
}
