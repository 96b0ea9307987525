package chart

import (
	"image/color"
	"math"
	"testing"
)

// lab converts an sRGB colour to CIELAB (D65).
func lab(c color.RGBA) [3]float64 {
	lin := func(v uint8) float64 {
		f := float64(v) / 255
		if f <= 0.04045 {
			return f / 12.92
		}
		return math.Pow((f+0.055)/1.055, 2.4)
	}
	r, g, b := lin(c.R), lin(c.G), lin(c.B)
	x := (0.4124*r + 0.3576*g + 0.1805*b) / 0.95047
	y := 0.2126*r + 0.7152*g + 0.0722*b
	z := (0.0193*r + 0.1192*g + 0.9505*b) / 1.08883
	f := func(t float64) float64 {
		if t > 216.0/24389 {
			return math.Cbrt(t)
		}
		return t*24389.0/27/116 + 16.0/116
	}
	return [3]float64{116*f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))}
}

func deltaE(a, b color.RGBA) float64 {
	p, q := lab(a), lab(b)
	return math.Sqrt((p[0]-q[0])*(p[0]-q[0]) + (p[1]-q[1])*(p[1]-q[1]) + (p[2]-q[2])*(p[2]-q[2]))
}

// TestPalette: at least 16 colours, no two closer than ΔE*ab 15, none
// closer than 30 to the white ground.
func TestPalette(t *testing.T) {
	if len(palette) < 16 {
		t.Fatalf("%d colours", len(palette))
	}
	white := color.RGBA{255, 255, 255, 255}
	for i, a := range palette {
		if d := deltaE(a, white); d < 30 {
			t.Errorf("colour %d %v is %.1f from white", i, a, d)
		}
		for j, b := range palette[:i] {
			if d := deltaE(a, b); d < 15 {
				t.Errorf("colours %d %v and %d %v are %.1f apart", j, b, i, a, d)
			}
		}
	}
}
