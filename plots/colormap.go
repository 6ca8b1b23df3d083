package plots

import (
	"image/color"
	"math"
)

// viridisStops samples the viridis colormap at 11 evenly spaced points from
// t=0 (dark purple) to t=1 (yellow); linear interpolation between them is
// visually indistinguishable from the full 256-entry table.
var viridisStops = [...]color.RGBA{
	{0x44, 0x01, 0x54, 0xff},
	{0x48, 0x24, 0x75, 0xff},
	{0x41, 0x44, 0x87, 0xff},
	{0x35, 0x5f, 0x8d, 0xff},
	{0x2a, 0x78, 0x8e, 0xff},
	{0x21, 0x91, 0x8c, 0xff},
	{0x22, 0xa8, 0x84, 0xff},
	{0x44, 0xbf, 0x70, 0xff},
	{0x7a, 0xd1, 0x51, 0xff},
	{0xbd, 0xdf, 0x26, 0xff},
	{0xfd, 0xe7, 0x25, 0xff},
}

// NaNColor is the colour of cells whose value is NaN or infinite. Mid gray
// does not occur in viridis, so missing values cannot be mistaken for data.
var NaNColor = color.RGBA{0x80, 0x80, 0x80, 0xff}

// Viridis maps t in [0, 1] to an opaque viridis-like colour, interpolating
// linearly between table entries. t outside [0, 1] is clamped; NaN gives
// [NaNColor].
func Viridis(t float64) color.RGBA {
	if math.IsNaN(t) {
		return NaNColor
	}
	last := len(viridisStops) - 1
	x := min(max(t, 0), 1) * float64(last)
	i := min(int(x), last-1)
	f := x - float64(i)
	a, b := viridisStops[i], viridisStops[i+1]
	lerp := func(p, q uint8) uint8 {
		return uint8(math.Round(float64(p) + f*(float64(q)-float64(p))))
	}
	return color.RGBA{lerp(a.R, b.R), lerp(a.G, b.G), lerp(a.B, b.B), 0xff}
}
