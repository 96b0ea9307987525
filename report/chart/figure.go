package chart

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/kvsim/kvsim/report"
)

// Formats are the file types every chart is written in.
var Formats = []string{"png", "svg"}

const (
	width  = 10 * vg.Inch
	height = 5 * vg.Inch
	dpi    = 144 // PNG resolution: 1440 x 720 pixels for a 10 x 5 inch chart
	pad    = 8   // points around and between a figure's parts
)

// Text sizes, in points.
var (
	titleFont  = font.From(plot.DefaultFont, 14)
	labelFont  = font.From(plot.DefaultFont, 11)
	tickFont   = font.From(plot.DefaultFont, 9)
	legendFont = font.From(plot.DefaultFont, 10)
	noteFont   = font.From(plot.DefaultFont, 9)
	markFont   = font.From(plot.DefaultFont, 8)
)

func style(f font.Font) text.Style {
	return text.Style{Font: f, Handler: plot.DefaultTextHandler, Color: color.Black}
}

// entry is a legend line: its text and what it looks like.
type entry struct {
	name   string
	thumbs []plot.Thumbnailer
}

// figure is one chart: a title, one plot or a grid of panels (small
// multiples) and, in a column of its own to their right, the legend and any
// notes, so that neither covers data nor is cut off.
type figure struct {
	title  string
	panels []*plot.Plot // one, or row-major small multiples; nil leaves a cell empty
	cols   int          // panels a row; 0 for one plot filling the figure
	labels []string     // the panels' names, drawn centred above their data
	// labelFont is the labels' font; tickFont when unset.
	labelFont font.Font
	// xLabel and yLabel, for a grid, name the axes of all its panels once,
	// under and left of the grid (as gonum places a log axis's own label
	// badly in a grid: it pads for it as if at the middle value).
	xLabel, yLabel string
	legend         []entry
	notes          []string // paragraphs under the legend, wrapped to its column; "\n" breaks a line
	h              vg.Length
}

// newPlot returns a plot styled for a figure, with a grid.
func newPlot(x, y string) *plot.Plot {
	p := plot.New()
	p.X.Label.Text, p.Y.Label.Text = x, y
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = labelFont
		a.Tick.Label.Font = tickFont
		a.Label.Padding = vg.Points(4)
	}
	p.X.Tick.Marker = linearTicks{compact: true}
	p.Y.Tick.Marker = linearTicks{compact: true}
	p.Title.TextStyle.Font = labelFont
	p.Add(plotterGrid())
	return p
}

// column is the width of the legend column and the lines it holds, and
// the height it needs.
type column struct {
	w     vg.Length
	notes []string // wrapped lines, "" between paragraphs
	h     vg.Length
}

const (
	thumbWidth    = 20 // points
	legendPadding = 3  // points between legend entries
)

// entryHeight is the height a legend entry takes.
func entryHeight() vg.Length { return style(legendFont).Height("Xg") + legendPadding }

func (f *figure) column() column {
	if len(f.legend) == 0 && len(f.notes) == 0 {
		return column{}
	}
	lsty, nsty := style(legendFont), style(noteFont)
	var w vg.Length
	for _, e := range f.legend {
		w = max(w, thumbWidth+lsty.Width(" "+e.name))
	}
	// At least wide enough for notes to wrap to a few words a line, at
	// most a third of the figure.
	c := column{w: min(max(w, 1.8*vg.Inch), width/3)}
	c.h = vg.Length(len(f.legend)) * entryHeight()
	for i, n := range f.notes {
		if i > 0 || len(f.legend) > 0 {
			c.notes = append(c.notes, "")
		}
		for _, line := range strings.Split(n, "\n") {
			c.notes = append(c.notes, wrap(nsty, line, c.w)...)
		}
	}
	c.h += vg.Length(len(c.notes)) * nsty.Height("Xg")
	return c
}

// mark adds lifecycle events to p, the figure's only panel, with room for
// their labels above its data area; call it once the legend and notes are
// set, as they narrow the data area.
func (f *figure) mark(p *plot.Plot, m marks) {
	w := width - 2*pad - 60 // the y axis takes about 60 points
	if c := f.column(); c.w > 0 {
		w -= c.w + 2*pad
	}
	reserve(p, m, w)
}

// wrap breaks s into lines no wider than w.
func wrap(sty text.Style, s string, w vg.Length) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		if line != "" && sty.Width(line+" "+word) > w {
			lines = append(lines, line)
			line = word
			continue
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	return append(lines, line)
}

// truncate shortens s with an ellipsis to fit w.
func truncate(sty text.Style, s string, w vg.Length) string {
	if sty.Width(s) <= w {
		return s
	}
	r := []rune(s)
	for len(r) > 1 && sty.Width(string(r)+"…") > w {
		r = r[:len(r)-1]
	}
	return string(r) + "…"
}

// size is the figure's size: the usual one, taller when the panels or the
// legend column need it.
func (f *figure) size() (vg.Length, vg.Length) {
	h := height
	if f.h > 0 {
		h = f.h
	}
	title := style(titleFont).Height(f.title) + 2*pad
	return width, max(h, title+f.column().h+2*pad)
}

// draw draws the figure on c.
func (f *figure) draw(c draw.Canvas) {
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())
	c = draw.Crop(c, pad, -pad, pad, -pad)

	tsty := style(titleFont)
	tsty.XAlign = draw.XCenter
	tsty.YAlign = draw.YTop
	c.FillText(tsty, vg.Point{X: (c.Min.X + c.Max.X) / 2, Y: c.Max.Y}, f.title)
	c.Max.Y -= tsty.Height(f.title) + pad

	if col := f.column(); col.w > 0 {
		side := c
		side.Min.X = c.Max.X - col.w
		c.Max.X = side.Min.X - 2*pad
		f.drawColumn(side, col)
	}
	if f.cols == 0 {
		f.panels[0].Draw(c)
		return
	}
	lsty := style(labelFont)
	descent := lsty.FontExtents().Descent
	if f.xLabel != "" {
		sty := lsty
		sty.XAlign, sty.YAlign = draw.XCenter, draw.YBottom
		c.FillText(sty, vg.Point{X: (c.Min.X + c.Max.X) / 2, Y: c.Min.Y + descent}, f.xLabel)
		c.Min.Y += sty.Height(f.xLabel) + 4
	}
	if f.yLabel != "" {
		sty := lsty
		sty.XAlign, sty.YAlign = draw.XCenter, draw.YBottom
		sty.Rotation = math.Pi / 2
		c.FillText(sty, vg.Point{X: c.Min.X + sty.Height(f.yLabel) - descent, Y: (c.Min.Y + c.Max.Y) / 2}, f.yLabel)
		c.Min.X += sty.Height(f.yLabel) + 4
	}
	f.drawGrid(c)
}

// drawGrid draws the panels in a grid whose data areas are all the same
// size and line up: each column is as wide as its widest axes need, each
// row as high as its tallest axes need.
func (f *figure) drawGrid(c draw.Canvas) {
	rows := (len(f.panels) + f.cols - 1) / f.cols
	left, right := make([]vg.Length, f.cols), make([]vg.Length, f.cols)
	below, above := make([]vg.Length, rows), make([]vg.Length, rows)
	for k, p := range f.panels {
		if p == nil {
			continue
		}
		r, i := k/f.cols, k%f.cols
		d := p.DataCanvas(c)
		left[i] = max(left[i], d.Min.X-c.Min.X)
		right[i] = max(right[i], c.Max.X-d.Max.X)
		below[r] = max(below[r], d.Min.Y-c.Min.Y)
		above[r] = max(above[r], c.Max.Y-d.Max.Y)
	}
	const gap = vg.Length(6)
	sum := func(ls ...[]vg.Length) (s vg.Length) {
		for _, l := range ls {
			for _, v := range l {
				s += v
			}
		}
		return s
	}
	w := (c.Max.X - c.Min.X - sum(left, right) - gap*vg.Length(f.cols-1)) / vg.Length(f.cols)
	h := (c.Max.Y - c.Min.Y - sum(below, above) - gap*vg.Length(rows-1)) / vg.Length(rows)
	for k, p := range f.panels {
		if p == nil {
			continue
		}
		r, i := k/f.cols, k%f.cols
		x := c.Min.X + sum(left[:i+1], right[:i]) + vg.Length(i)*(w+gap)
		y := c.Max.Y - sum(above[:r+1], below[:r]) - vg.Length(r)*(h+gap) - h
		drawAt(p, c, vg.Rectangle{Min: vg.Point{X: x, Y: y}, Max: vg.Point{X: x + w, Y: y + h}})
		if k < len(f.labels) {
			sty := style(tickFont)
			if f.labelFont.Size > 0 {
				sty = style(f.labelFont)
			}
			sty.XAlign, sty.YAlign = draw.XCenter, draw.YBottom
			c.FillText(sty, vg.Point{X: x + w/2, Y: y + h + vg.Points(3)}, f.labels[k])
		}
	}
}

// drawAt draws p so that its data area is data: it finds the canvas whose
// data area that is (a few rounds, as the room the tick labels take can
// depend on the canvas).
func drawAt(p *plot.Plot, c draw.Canvas, data vg.Rectangle) {
	at := c
	at.Rectangle = data
	for range 4 {
		d := p.DataCanvas(at)
		at.Min.X -= d.Min.X - data.Min.X
		at.Min.Y -= d.Min.Y - data.Min.Y
		at.Max.X += data.Max.X - d.Max.X
		at.Max.Y += data.Max.Y - d.Max.Y
	}
	p.Draw(at)
}

// drawColumn draws the legend, then the notes, from the top of c.
func (f *figure) drawColumn(c draw.Canvas, col column) {
	lsty := style(legendFont)
	lsty.XAlign, lsty.YAlign = draw.XLeft, draw.YCenter
	eh := entryHeight()
	for i, e := range f.legend {
		top := c.Max.Y - vg.Length(i)*eh
		icon := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: c.Min.X, Y: top - eh + legendPadding/2},
			Max: vg.Point{X: c.Min.X + thumbWidth, Y: top - legendPadding/2},
		}}
		for _, t := range e.thumbs {
			t.Thumbnail(&icon)
		}
		text := truncate(lsty, e.name, col.w-thumbWidth-lsty.Width(" "))
		c.FillText(lsty, vg.Point{X: c.Min.X + thumbWidth + lsty.Width(" "), Y: top - eh/2}, text)
	}
	c.Max.Y -= vg.Length(len(f.legend)) * eh
	nsty := style(noteFont)
	nsty.YAlign = draw.YTop
	nsty.Color = color.Gray{Y: 0x40}
	lh := nsty.Height("Xg")
	for i, line := range col.notes {
		c.FillText(nsty, vg.Point{X: c.Min.X, Y: c.Max.Y - vg.Length(i)*lh}, line)
	}
}

// save writes the figure as dir/name.png and dir/name.svg and returns the
// paths.
func (f *figure) save(dir, name string) ([]string, error) {
	w, h := f.size()
	var out []string
	for _, format := range Formats {
		var c vg.CanvasWriterTo
		switch format {
		case "png":
			c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(dpi))}
		case "svg":
			c = vgsvg.New(w, h)
		default:
			return nil, fmt.Errorf("chart: unknown format %q", format)
		}
		f.draw(draw.New(c))
		path := filepath.Join(dir, name+"."+format)
		if err := writeTo(path, c); err != nil {
			return nil, err
		}
		out = append(out, path)
	}
	return out, nil
}

func writeTo(path string, c vg.CanvasWriterTo) error {
	file, err := os.Create(path)
	if err != nil {
		return report.Unwritable(path, err)
	}
	if _, err := c.WriteTo(file); err != nil {
		file.Close()
		return fmt.Errorf("chart: %s: %w", path, err)
	}
	if err := file.Close(); err != nil {
		return fmt.Errorf("chart: %w", err)
	}
	return nil
}

// gridLayout is the layout of n small multiples: 4 a row up to 16, then 8 a row; each
// row of panels 1.5 inch high, the figure at least the usual height.
func gridLayout(n int) (cols int, h vg.Length) {
	cols = 4
	if n > 16 {
		cols = 8
	}
	cols = min(cols, n)
	rows := (n + cols - 1) / cols
	title := style(titleFont).Height("X") + 3*pad
	return cols, max(height, vg.Length(rows)*1.5*vg.Inch+title)
}
