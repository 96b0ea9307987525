// Package leaktest helps tests check that the goroutines a piece of kvsim
// starts are gone when it is done. Only tests import it.
package leaktest

import (
	"runtime"
	"time"
)

// Settled is the number of goroutines once it is at most want, or after a
// second: a goroutine that has returned may take a moment to leave the
// count. A test takes want from runtime.NumGoroutine before it starts
// what it checks, and fails when Settled(want) > want.
func Settled(want int) int {
	n := runtime.NumGoroutine()
	for deadline := time.Now().Add(time.Second); n > want && time.Now().Before(deadline); n = runtime.NumGoroutine() {
		time.Sleep(time.Millisecond)
	}
	return n
}
