// Package des is the discrete-event kernel of kvsim: integer-nanosecond
// virtual time, one event queue ordered by (time, phase, key, sequence), a
// run loop and named random streams derived from one seed. It knows nothing
// of LLMs.
package des
