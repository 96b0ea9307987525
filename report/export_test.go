package report

// Summarize is the mean, sample standard deviation and 95 % t interval of
// xs (at least one value).
func Summarize(xs []float64) Stat { return summarize(xs, tQuantile(len(xs))) }
