// Package results is what a run produced, summarised: the summary
// (summary.json), the counters, the events' rows and the warnings that
// say when a figure may mislead, the metrics a scenario's expect entries
// and a search's SLOs name (and their check, beside the table they
// check), and a sweep's row. sim fills it as a run goes; the CLI and the
// studies read it without linking the simulator.
package results
