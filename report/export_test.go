package report

// Count returns the number of samples.
func (d *Dist) Count() int {
	if d.h != nil {
		return int(d.h.Count())
	}
	return len(d.s)
}

// Summarize is the mean, sample standard deviation and 95 % t interval of
// xs (at least one value).
func Summarize(xs []float64) Stat { return summarize(xs, tQuantile(len(xs))) }
