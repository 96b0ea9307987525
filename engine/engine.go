// Package engine simulates one vLLM V1 worker: the pass scheduler (token
// budget, max_num_seqs, chunked prefill, FCFS admission, LIFO preemption
// with recompute), the G1 block pool with its prefix cache, and the timing
// models that turn a pass into a duration. A worker takes the time and its
// inputs as arguments and reports what happened to an Observer; it never
// schedules events itself.
package engine
