package sim

import "fmt"

// The memory a run holds before its workload fills any cache: the program
// and its buffers, and each worker's state (its engine, pools, router load
// and KVCR links), which every worker holds from the start whatever its
// caches' sizes. Measured resident sizes (max RSS of the default scenario
// with 50 requests) grow by 2.1 to 2.5 KiB a worker from 20,000 to 80,000
// workers with KVCR on, 1.7 KiB with it off; the estimate rounds up.
// The caches (gpu_blocks, g2.capacity_blocks) and the request slots
// (max_num_seqs) take memory only as the workload fills them, and the
// workload streams, so those keys are bounded by the workload, not here.
const (
	memoryBase      = 64 << 20
	memoryPerWorker = 3 << 10
)

// Memory estimates the memory a run of the plan needs, in bytes, and
// names the scenario key that adds the most workers to it: cluster.workers,
// an event's add when one adds more (the first of those that tie), or
// planner.max_workers when a planner may add more still.
func (p *Plan) Memory() (bytes int64, key string) {
	sc := p.Scenario
	key, most := "cluster.workers", sc.Cluster.Workers
	for i, ev := range sc.Events {
		if ev.Add > most {
			most, key = ev.Add, fmt.Sprintf("events[%d].add", i)
		}
	}
	if sc.HasPlanner() && sc.Planner.MaxWorkers > most {
		key = "planner.max_workers"
	}
	return memoryBase + int64(p.Workers)*memoryPerWorker, key
}

// CheckMemory refuses a plan whose estimated memory (Memory) is more than
// limit bytes, naming the key, the estimate and where the limit comes from
// (as "MemTotal in /proc/meminfo"). A limit of 0 or below checks nothing.
func (p *Plan) CheckMemory(limit int64, source string) error {
	need, key := p.Memory()
	if limit <= 0 || need <= limit {
		return nil
	}
	return p.Scenario.ErrAt(key, "the run needs about %s of memory (%d workers at about %d KiB each), more than the %s it may use (%s)",
		size(need), p.Workers, memoryPerWorker>>10, size(limit), source)
}

// size is n bytes in GiB to one decimal, or in whole MiB below 1 GiB.
func size(n int64) string {
	if n < 1<<30 {
		return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
}
