package chart

import (
	"cmp"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/dustin/go-humanize"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/kvsim/kvsim/report"
)

// plotterGrid is a light grid that does not compete with the data.
func plotterGrid() *plotter.Grid {
	g := plotter.NewGrid()
	g.Vertical.Color = color.Gray{Y: 0xe4}
	g.Horizontal.Color = color.Gray{Y: 0xe4}
	g.Vertical.Width, g.Horizontal.Width = vg.Points(0.5), vg.Points(0.5)
	return g
}

// formatNum writes v with at most 3 significant digits after the point and
// thousands separated by commas: 0.05, 2.5, 1,000, 20,000.
func formatNum(v float64) string {
	if math.Abs(v) < 1000 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return humanize.Commaf(math.Round(v))
}

// logTicks labels a log axis at 1, 2 and 5 times each power of ten (at each
// integer times it over a decade or less, only at the powers of ten past
// four decades, or past three when narrow is set), with unlabelled ticks
// between; labels are compact (2k, 50k, 1M) when compact is set.
type logTicks struct{ compact, narrow bool }

func (t logTicks) Ticks(lo, hi float64) []plot.Tick {
	if lo <= 0 || hi <= lo {
		return nil
	}
	d0, d1 := int(math.Floor(math.Log10(lo))), int(math.Ceil(math.Log10(hi)))
	most := 4
	if t.narrow {
		most = 3
	}
	labelled := []int{1, 2, 5}
	switch {
	case hi/lo <= 10*(1+1e-9):
		labelled = []int{1, 2, 3, 4, 5, 6, 7, 8, 9}
	case d1-d0 > most:
		labelled = []int{1}
	}
	var ticks []plot.Tick
	for d := d0; d <= d1; d++ {
		for m := 1; m < 10; m++ {
			v := float64(m) * math.Pow10(d)
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
				continue
			}
			tk := plot.Tick{Value: v}
			if slices.Contains(labelled, m) {
				switch {
				case t.compact && v >= 1e6*(1-1e-9):
					tk.Label = formatNum(roundSig(v/1e6)) + "M"
				case t.compact && v >= 1e3*(1-1e-9):
					tk.Label = formatNum(roundSig(v/1e3)) + "k"
				default:
					tk.Label = formatNum(roundSig(v))
				}
			}
			ticks = append(ticks, tk)
		}
	}
	return ticks
}

// roundSig removes the float noise of m * 10^d.
func roundSig(v float64) float64 {
	f, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 6, 64), 64)
	if f == 0 {
		return 0 // not -0
	}
	return f
}

// logRange sets a log axis to [lo, hi] (lo > 0) widened to 1, 2 or 5 times
// powers of ten.
func logRange(a *plot.Axis, lo, hi float64) {
	a.Scale = plot.LogScale{}
	a.Tick.Marker = logTicks{}
	a.Min, a.Max = niceFloor(lo), niceCeil(hi)
	if a.Max <= a.Min {
		a.Max = niceCeil(a.Min * 1.5)
	}
}

var mantissas = []float64{1, 2, 5, 10}

// niceCeil rounds v > 0 up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	e := math.Pow10(int(math.Floor(math.Log10(v))))
	for _, m := range mantissas {
		if m*e >= v*(1-1e-9) {
			return roundSig(m * e)
		}
	}
	return roundSig(10 * e)
}

// niceFloor rounds v > 0 down to 1, 2 or 5 times a power of ten.
func niceFloor(v float64) float64 {
	e := math.Pow10(int(math.Floor(math.Log10(v))))
	for _, m := range slices.Backward(mantissas) {
		if m*e <= v*(1+1e-9) {
			return roundSig(m * e)
		}
	}
	return roundSig(e)
}

// linearTicks label a linear axis every 1, 2 or 5 times a power of ten,
// 4 to 10 labels (2 to 4 when few is set), with unlabelled ticks between;
// labels are compact (50k, 1.5M) when compact is set.
type linearTicks struct{ compact, few bool }

func (t linearTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return nil
	}
	most, least := 10.0, 4.0
	if t.few {
		most, least = 4, 2
	}
	step := niceCeil((hi - lo) / most)
	if (hi-lo)/step < least {
		step = niceFloor((hi - lo) / least)
	}
	minor := step / 5
	if m := step / math.Pow10(int(math.Floor(math.Log10(step)))); math.Abs(m-2) < 1e-9 {
		minor = step / 4
	}
	if t.few {
		minor = step / 2
	}
	var ticks []plot.Tick
	for i := math.Ceil(lo/minor - 1e-9); i*minor <= hi*(1+1e-12)+1e-12; i++ {
		v := roundSig(i * minor)
		tk := plot.Tick{Value: v}
		if r := v / step; math.Abs(r-math.Round(r)) < 1e-6 {
			tk.Label = t.format(v)
		}
		ticks = append(ticks, tk)
	}
	return ticks
}

func (t linearTicks) format(v float64) string {
	if t.compact {
		switch a := math.Abs(v); {
		case a >= 1e6:
			return strconv.FormatFloat(roundSig(v/1e6), 'f', -1, 64) + "M"
		case a >= 1e4:
			return strconv.FormatFloat(roundSig(v/1e3), 'f', -1, 64) + "k"
		}
	}
	return formatNum(v)
}

// unlabelled keeps a ticker's ticks without their labels, for the inner
// panels of small multiples.
type unlabelled struct{ plot.Ticker }

func (u unlabelled) Ticks(lo, hi float64) []plot.Tick {
	ticks := u.Ticker.Ticks(lo, hi)
	for i := range ticks {
		ticks[i].Label = ""
	}
	return ticks
}

// timeAxis is how a run's time is shown: in minutes past 10 minutes, else
// in seconds.
type timeAxis struct {
	div   float64 // nanoseconds a unit
	label string
}

func newTimeAxis(endNs int64) timeAxis {
	if endNs > 10*60e9 {
		return timeAxis{60e9, "time (min)"}
	}
	return timeAxis{1e9, "time (s)"}
}

func (t timeAxis) x(ns int64) float64 { return float64(ns) / t.div }

// niceDurations are the windows and buckets a run's charts use.
var niceDurations = []int64{1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600}

// niceDuration rounds ns up to one of niceDurations (seconds), or whole
// hours past them.
func niceDuration(ns int64) int64 {
	for _, s := range niceDurations {
		if s*1e9 >= ns {
			return s * 1e9
		}
	}
	return (ns + 3600e9 - 1) / 3600e9 * 3600e9
}

// durationText writes a nice duration: "30 s", "2 min", "1 h".
func durationText(ns int64) string {
	switch {
	case ns%3600e9 == 0:
		return strconv.FormatInt(ns/3600e9, 10) + " h"
	case ns%60e9 == 0:
		return strconv.FormatInt(ns/60e9, 10) + " min"
	}
	return strconv.FormatInt(ns/1e9, 10) + " s"
}

// Lifecycle event kinds, each drawn with its own dash pattern.
const (
	evAdd = iota
	evDrain
	evGone
)

var eventKinds = []struct {
	word, legend string
	dashes       []vg.Length
}{
	evAdd:   {"added", "worker added", []vg.Length{vg.Points(1), vg.Points(2)}},
	evDrain: {"drain", "drain started", []vg.Length{vg.Points(5), vg.Points(3)}},
	evGone:  {"removed", "worker removed", []vg.Length{vg.Points(10), vg.Points(2), vg.Points(2), vg.Points(2)}},
}

// event is one worker's lifecycle event.
type event struct {
	ns     int64
	kind   int
	worker int32
}

// lifecycle lists the workers' additions (after the start), drains and
// removals in time order.
func lifecycle(workers []report.WorkerRow) []event {
	var evs []event
	for _, w := range workers {
		if w.AddedNs > 0 {
			evs = append(evs, event{w.AddedNs, evAdd, w.Worker})
		}
		if w.DrainNs >= 0 {
			evs = append(evs, event{w.DrainNs, evDrain, w.Worker})
		}
		if w.RemovedNs >= 0 {
			evs = append(evs, event{w.RemovedNs, evGone, w.Worker})
		}
	}
	slices.SortStableFunc(evs, func(a, b event) int {
		return cmp.Or(cmp.Compare(a.ns, b.ns), cmp.Compare(a.kind, b.kind), cmp.Compare(a.worker, b.worker))
	})
	return evs
}

// eventEntries are the legend entries of the kinds of event in evs.
func eventEntries(evs []event) []entry {
	var out []entry
	for k, kind := range eventKinds {
		if slices.ContainsFunc(evs, func(e event) bool { return e.kind == k }) {
			out = append(out, entry{kind.legend, []plot.Thumbnailer{eventLine(k)}})
		}
	}
	return out
}

// eventLine is the legend thumbnail of an event kind.
type eventLine int

func (k eventLine) Thumbnail(c *draw.Canvas) {
	y := (c.Min.Y + c.Max.Y) / 2
	c.StrokeLine2(eventStyle(int(k)), c.Min.X, y, c.Max.X, y)
}

func eventStyle(kind int) draw.LineStyle {
	return draw.LineStyle{Color: eventGrey, Width: vg.Points(1), Dashes: eventKinds[kind].dashes}
}

// marks draws lifecycle events as vertical lines the height of the data
// area; with labels, each group of events of a kind close in time (within
// 1 % of the axis) is labelled once, "drain 8-15", in rows above the data
// area (reserved by reserve), a label going down a row where it would
// overlap another.
type marks struct {
	evs    []event
	t      timeAxis
	labels bool
	rows   int // label rows reserved above the data area
}

// group is the events of a kind close in time.
type group struct {
	kind    int
	from    float64 // x of the first
	workers []int32
}

func (m marks) groups(lo, hi float64) []group {
	var gs []group
	for _, e := range m.evs {
		v := m.t.x(e.ns)
		if v < lo || v > hi {
			continue
		}
		i := slices.IndexFunc(gs, func(g group) bool { return g.kind == e.kind && math.Abs(v-g.from) <= 0.01*(hi-lo) })
		if i < 0 {
			gs = append(gs, group{e.kind, v, nil})
			i = len(gs) - 1
		}
		gs[i].workers = append(gs[i].workers, e.worker)
	}
	return gs
}

func (g group) label() string { return eventKinds[g.kind].word + " " + idRanges(g.workers) }

// placed is a label's left edge and row.
type placed struct {
	x0  vg.Length
	row int
}

// place puts each group's label right of its line (left of it where it
// would pass right), in the first row where it overlaps no other label.
func place(gs []group, x func(float64) vg.Length, right vg.Length) []placed {
	sty := style(markFont)
	var rows [][][2]vg.Length // by row, the labels' x extents
	out := make([]placed, len(gs))
	for i, g := range gs {
		w := sty.Width(g.label())
		x0 := x(g.from) + vg.Points(2)
		if x0+w > right {
			x0 = x(g.from) - vg.Points(2) - w
		}
		row := 0
		for ; row < len(rows); row++ {
			if !slices.ContainsFunc(rows[row], func(r [2]vg.Length) bool { return x0 < r[1]+vg.Points(4) && r[0] < x0+w+vg.Points(4) }) {
				break
			}
		}
		if row == len(rows) {
			rows = append(rows, nil)
		}
		rows[row] = append(rows[row], [2]vg.Length{x0, x0 + w})
		out[i] = placed{x0, row}
	}
	return out
}

func markRowHeight() vg.Length { return style(markFont).Height("Xg") }

// reserve adds m to p, with room above p's data area for m's labels: as
// many rows as they take on a data area dataWidth wide. p's x range must be
// set.
func reserve(p *plot.Plot, m marks, dataWidth vg.Length) {
	gs := m.groups(p.X.Min, p.X.Max)
	if m.labels && len(gs) > 0 {
		x := func(v float64) vg.Length { return dataWidth * vg.Length((v-p.X.Min)/(p.X.Max-p.X.Min)) }
		for _, pl := range place(gs, x, dataWidth) {
			m.rows = max(m.rows, pl.row+1)
		}
		p.Title.Text = " "
		p.Title.TextStyle.Font = markFont
		p.Title.Padding = vg.Length(m.rows-1)*markRowHeight() + vg.Points(2)
	}
	p.Add(m)
}

func (m marks) Plot(c draw.Canvas, p *plot.Plot) {
	x, _ := p.Transforms(&c)
	for _, e := range m.evs {
		if v := m.t.x(e.ns); v >= p.X.Min && v <= p.X.Max {
			c.StrokeLine2(eventStyle(e.kind), x(v), c.Min.Y, x(v), c.Max.Y)
		}
	}
	if !m.labels {
		return
	}
	gs := m.groups(p.X.Min, p.X.Max)
	sty := style(markFont)
	sty.YAlign = draw.YBottom
	lh := markRowHeight()
	for i, pl := range place(gs, x, c.Max.X) {
		// Row 0 is the highest; rows past those reserved go down into
		// the data area, on a white ground.
		y := c.Max.Y + vg.Length(m.rows-1-pl.row)*lh + vg.Points(1)
		if pl.row >= m.rows {
			y = c.Max.Y - vg.Length(pl.row-m.rows+1)*lh - vg.Points(2)
			w := sty.Width(gs[i].label())
			box := vg.Rectangle{Min: vg.Point{X: pl.x0 - 1, Y: y}, Max: vg.Point{X: pl.x0 + w + 1, Y: y + lh}}
			c.SetColor(color.NRGBA{R: 255, G: 255, B: 255, A: 220})
			c.Fill(box.Path())
		}
		c.FillText(sty, vg.Point{X: pl.x0, Y: y}, gs[i].label())
	}
}

// idRanges writes worker ids as ranges: 3, 8-15, 20.
func idRanges(ids []int32) string {
	ids = slices.Clone(ids)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	var parts []string
	for i := 0; i < len(ids); {
		j := i
		for j+1 < len(ids) && ids[j+1] == ids[j]+1 {
			j++
		}
		s := strconv.Itoa(int(ids[i]))
		if j > i {
			s += "-" + strconv.Itoa(int(ids[j]))
		}
		parts = append(parts, s)
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// atRank is the perMille/1000 quantile of sorted (non-empty), by the
// nearest-rank rule of the report's percentiles.
func atRank(sorted []float64, perMille int64) float64 {
	return sorted[report.NearestRank(perMille, int64(len(sorted)))-1]
}

// points converts a dash pattern in points to lengths.
func points(ds []float64) []vg.Length {
	var out []vg.Length
	for _, d := range ds {
		out = append(out, vg.Points(d))
	}
	return out
}
