// Package workload defines requests and their engine-block hash chains, and
// produces them in arrival order from traces (Mooncake JSONL, Azure CSV,
// vLLM's OTLP JSON spans) or from a seeded synthetic generator.
package workload
