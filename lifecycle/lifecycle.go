// Package lifecycle is the workers' lifecycle: each worker's status, kept in one
// table that sim owns and changes. KVCR (its staging guard, and transfers
// and refreshes that skip a removed worker) and the router read it through
// a View; the router also watches it, to keep its set of routable workers.
package lifecycle

// Status is where a worker is in its life.
type Status uint8

// The statuses, in the order a worker goes through them (it may skip some).
const (
	Starting Status = iota // added, not ready yet: not routed to, not a pull source
	Ready                  // routed to, a pull source
	Draining               // finishing its requests and pulls; not routed to, not a pull source
	Removed                // gone, with its G1 and G2
)

var names = [...]string{"starting", "ready", "draining", "removed"}

func (s Status) String() string { return names[s] }

// Table is every worker's status, by id (dense, from 0).
type Table struct {
	status   []Status
	watchers []func(w int32)
}

// Add adds the next worker, with status st, and returns its id.
func (t *Table) Add(st Status) int32 {
	w := int32(len(t.status))
	t.status = append(t.status, st)
	t.changed(w)
	return w
}

// Set changes worker w's status.
func (t *Table) Set(w int32, st Status) {
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
