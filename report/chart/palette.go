package chart

import "image/color"

// palette is Kelly's 22 colours of maximum contrast (K. L. Kelly, "Twenty-two
// colors of maximum contrast", Color Engineering 3(6), 1965), written out
// from their published sRGB values. White is left out (it is the
// background), and the five light colours that show least on white (light
// blue, yellow, buff, yellowish pink, greenish yellow) and grey (the colour
// of the event lines) come last, so that the first 15 are the dark and
// saturated ones: 21 colours, no two closer than 15 in CIELAB (ΔE*ab,
// TestPalette).
var palette = []color.RGBA{
	rgb(0x222222), // black
	rgb(0x875692), // purple
	rgb(0xF38400), // orange
	rgb(0xBE0032), // red
	rgb(0x008856), // green
	rgb(0xE68FAC), // purplish pink
	rgb(0x0067A5), // blue
	rgb(0x604E97), // violet
	rgb(0xF6A600), // orange yellow
	rgb(0xB3446C), // purplish red
	rgb(0x882D17), // reddish brown
	rgb(0x8DB600), // yellow green
	rgb(0x654522), // yellowish brown
	rgb(0xE25822), // reddish orange
	rgb(0x2B3D26), // olive green
	rgb(0x848482), // grey
	rgb(0xA1CAF1), // light blue
	rgb(0xF3C300), // yellow
	rgb(0xC2B280), // buff
	rgb(0xF99379), // yellowish pink
	rgb(0xDCD300), // greenish yellow
}

// Named palette entries for series whose colour carries a meaning.
var (
	black     = palette[0]
	purple    = palette[1]
	orange    = palette[2]
	red       = palette[3]
	green     = palette[4]
	blue      = palette[6]
	eventGrey = color.RGBA{R: 0x60, G: 0x60, B: 0x60, A: 0xff}
	lightBlue = color.NRGBA{R: 0x00, G: 0x67, B: 0xA5, A: 0x38} // fill under a blue line: blue, see-through
)

type plotColor = color.Color

func rgb(v uint32) color.RGBA {
	return color.RGBA{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v), A: 0xff}
}

// lineStyle is the colour and dash pattern of the i-th of many lines: the
// palette's colours in order, then again dashed, then dotted.
func lineStyle(i int) (color.Color, []float64) {
	return palette[i%len(palette)], lineDashes[(i/len(palette))%len(lineDashes)]
}
