package engine

import "github.com/kvsim/kvsim/des"

// HostKV is all a worker knows of KVCR: its own G2 host pool, loads from it,
// and the staging of kv.fetch hints.
type HostKV interface {
	// Stage is called when the scheduler reaches a hinted request with a
	// free sequence slot and token budget, and again at each later scan
	// while its pull is parked. g1 is how many leading blocks of its chain
	// G1 holds, limit how many may be reused.
	Stage(now des.Time, s *Seq, g1, limit int) Staging
	// HostPrefix counts the blocks of s's chain from index from on that the
	// worker's G2 holds readable, up to index limit or the first it does
	// not.
	HostPrefix(s *Seq, from, limit int) int
	// Load copies blocks [from, from+n) of s's chain from G2 to the G1
	// blocks s holds for them. It reports true when they landed at once;
	// otherwise the worker's LoadDone follows.
	Load(now des.Time, s *Seq, from, n int) bool
	// AsyncLoads reports whether Load lands blocks later, by LoadDone,
	// rather than at once: whether the worker's H2D link takes time.
	AsyncLoads() bool
}

// Staging is what staging a hinted request decided, for the worker's
// scheduler to act on. KVCR decides it (kvcr.Stage returns it); it is
// declared here, beside HostKV, because a worker knows KVCR only through
// this interface.
type Staging uint8

// The staging results.
const (
	StageProceed Staging = iota // no pull: admit the request now
	StageWait                   // a pull is in flight: skip it until PullDone
	StageParked                 // the pull waits for room, an inflight slot or blocks to settle: stage again next scan
)
