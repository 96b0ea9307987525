package scheduler

// Schedulable reports how many workers the router may use.
func (r *Router) Schedulable() int { return len(r.schedulable) }
