//go:build !linux

package main

// hugeHeap does nothing and returns nil: transparent huge pages are
// Linux's.
func hugeHeap() <-chan bool { return nil }
