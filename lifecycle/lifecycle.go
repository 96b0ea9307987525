// Package lifecycle is the workers' lifecycle: each worker's status, kept in one
// table that sim owns and changes. KVCR (its staging guard, and transfers
// and refreshes that skip a removed worker) and the router read it through
// a View; the router also watches it, to keep its set of routable workers.
// A status changes only along a fixed set of transitions (the changes sim
// makes); any other change is a model bug, and Set panics with a
// TransitionError.
package lifecycle

import "fmt"

// Status is where a worker is in its life.
type Status uint8

// The statuses, in the order a worker goes through them (it may skip some).
const (
	Starting Status = iota // added, not ready yet: not routed to, not a pull source
	Ready                  // routed to, a pull source
	Draining               // finishing its requests and pulls; not routed to, not a pull source
	Removed                // gone, with its G1 and G2
	// Down is an engine down for a fault's window (DESIGN.md section 12):
	// not routed to; a pull source while its G2 is kept.
	Down
	// Restarting is a down worker whose G2 was kept, its engine starting
	// again (startup): not routed to; its G2 still a pull source, as while
	// down. (A worker added, or restarted with its G2 lost, starts empty:
	// Starting.)
	Restarting
)

var names = [...]string{"starting", "ready", "draining", "removed", "down", "restarting"}

func (s Status) String() string { return names[s] }

// next[from] holds bit to for each status to that a worker may change to
// from status from. These are the changes sim makes, and the only ones:
//
//	starting -> ready     its startup ended (add, startup)
//	starting -> draining  drained while starting (drain)
//	starting -> removed   removed while starting (remove)
//	ready    -> draining  drain
//	ready    -> removed   remove
//	draining -> removed   its last request and pull ended, or its drain_timeout passed
//	starting, ready, draining -> down   a down fault's window began
//	down     -> starting  the window ended; its process restarts, its G2 lost (startup)
//	down     -> restarting  the window ended; its engine restarts, its G2 kept (startup)
//	down     -> ready     the window ended; its engine restarts at once
//	down     -> draining  drained while down: it does not restart
//	down     -> removed   removed while down
//	restarting -> ready, draining, removed, down   as from starting
//
// A worker never goes back (a drained worker is not made ready again) and
// never changes to the status it has: sim drains a worker once and removes
// it once.
var next = [...]uint8{
	Starting:   1<<Ready | 1<<Draining | 1<<Removed | 1<<Down,
	Ready:      1<<Draining | 1<<Removed | 1<<Down,
	Draining:   1<<Removed | 1<<Down,
	Removed:    0,
	Down:       1<<Starting | 1<<Restarting | 1<<Ready | 1<<Draining | 1<<Removed,
	Restarting: 1<<Ready | 1<<Draining | 1<<Removed | 1<<Down,
}

// legal reports whether a worker may change from status from to status to.
func legal(from, to Status) bool { return next[from]&(1<<to) != 0 }

// InvTransitions is the invariant a TransitionError breaks
// (docs/invariants.md).
const InvTransitions = "a worker's status changes only along its transitions"

// TransitionError is the panic of Set for a change no transition allows:
// a model bug, which a run reports as the broken invariant InvTransitions,
// with or without --check. It has the shape of engine's and kvcr's
// TransitionError (a request's, a pull's): what changed, the state it was
// in, what it was asked; a value, as des.PastError.
type TransitionError struct {
	Worker int32
	State  string // the worker's status
	To     string // the status Set was asked for
}

// Invariant is the invariant the error breaks, InvTransitions.
func (TransitionError) Invariant() string { return InvTransitions }

// Error names the worker, what it was asked and the status it was in.
func (e TransitionError) Error() string {
	return fmt.Sprintf("worker %d: to %s while %s: no transition allows it", e.Worker, e.To, e.State)
}

// Table is every worker's status, by id (dense, from 0).
type Table struct {
	status   []Status
	count    [len(names)]int // the workers of each status
	watchers []func(w int32)
}

// Add adds the next worker, with status st, and returns its id. sim adds
// every worker starting; a test may add one in any status.
func (t *Table) Add(st Status) int32 {
	w := int32(len(t.status))
	t.status = append(t.status, st)
	t.count[st]++
	t.changed(w)
	return w
}

// Count is how many workers have status st: what a planner's decision
// reads, without a visit to every worker ever added.
func (t *Table) Count(st Status) int { return t.count[st] }

// Set changes worker w's status to st. It panics with a TransitionError,
// changing nothing and telling no watcher, when no transition allows the
// change.
func (t *Table) Set(w int32, st Status) {
	if from := t.status[w]; !legal(from, st) {
		panic(TransitionError{Worker: w, State: from.String(), To: st.String()})
	}
	t.count[t.status[w]]--
	t.count[st]++
	t.status[w] = st
	t.changed(w)
}

func (t *Table) changed(w int32) {
	for _, fn := range t.watchers {
		fn(w)
	}
}

// Of is worker w's status.
func (t *Table) Of(w int32) Status { return t.status[w] }

// View is the table as the others see it.
func (t *Table) View() View { return View{t} }

// View reads a Table and watches its changes, but cannot set a status:
// what KVCR and the router get.
type View struct{ t *Table }

// Of is worker w's status.
func (v View) Of(w int32) Status { return v.t.status[w] }

// Len is the number of workers ever added.
func (v View) Len() int { return len(v.t.status) }

// Watch calls fn with a worker's id after every change of the table:
// when the worker is added and when its status is set. Watchers are
// called in the order they were added.
func (v View) Watch(fn func(w int32)) { v.t.watchers = append(v.t.watchers, fn) }
