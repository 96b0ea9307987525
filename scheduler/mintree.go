package scheduler

import "math"

// minTree keeps, among the workers in it, the one with the lowest key,
// ties to the lowest id: a tournament tree over worker ids, O(log n) to
// change a key and O(1) to read the winner. It replaces the O(workers)
// scans of least_loaded and of kv_aware's uncredited costs.
type minTree struct {
	key []float64 // by worker id; +Inf: not in the tree
	win []int32   // node i's winning worker; leaves are n..2n-1 (worker i at n+i), the root is 1
}

// set gives worker w key k (+Inf takes it out of the tree).
func (t *minTree) set(w int32, k float64) {
	if int(w) >= len(t.key) {
		t.grow(int(w) + 1)
	}
	t.key[w] = k
	n := len(t.key)
	for i := (n + int(w)) / 2; i >= 1; i /= 2 {
		t.win[i] = t.better(t.win[2*i], t.win[2*i+1])
	}
}

// better is the winner of two workers, a of lower id than b.
func (t *minTree) better(a, b int32) int32 {
	if t.key[b] < t.key[a] {
		return b
	}
	return a
}

// min is the winning worker and its key; +Inf when the tree is empty.
func (t *minTree) min() (int32, float64) {
	if len(t.key) == 0 {
		return -1, math.Inf(1)
	}
	w := t.win[1]
	return w, t.key[w]
}

// atMost appends to dst, in id order, the workers whose key is at most
// limit, and reports true; it stops and reports false when there are more
// than most. It visits only the subtrees whose winner is within limit:
// O(m log(n/m)) for m workers found.
func (t *minTree) atMost(limit float64, most int, dst []int32) ([]int32, bool) {
	n := len(t.key)
	if n == 0 {
		return dst, true
	}
	found := 0
	var stack [64]int // a path from the root and its right siblings: at most log2(n) + 1 deep
	stack[0] = 1
	for sp := 1; sp > 0; {
		sp--
		i := stack[sp]
		if t.key[t.win[i]] > limit {
			continue
		}
		if i >= n {
			if found == most {
				return dst, false
			}
			found++
			dst = append(dst, int32(i-n))
			continue
		}
		stack[sp], stack[sp+1] = 2*i+1, 2*i // the left child first
		sp += 2
	}
	return dst, true
}

// grow makes room for at least n workers (a power of two, at least 2), the
// new ones out of the tree.
func (t *minTree) grow(n int) {
	size := 2
	for size < n {
		size *= 2
	}
	key := make([]float64, size)
	copy(key, t.key)
	for i := len(t.key); i < size; i++ {
		key[i] = math.Inf(1)
	}
	t.key, t.win = key, make([]int32, 2*size)
	for i := range size {
		t.win[size+i] = int32(i)
	}
	for i := size - 1; i >= 1; i-- {
		t.win[i] = t.better(t.win[2*i], t.win[2*i+1])
	}
}
