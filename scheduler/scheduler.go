// Package scheduler holds cluster-level scheduling: the router's view of
// every worker's KV inventory, the routing policies, and hint source
// selection.
package scheduler
