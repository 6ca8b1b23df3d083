// Package toy2d provides the two-dimensional toy distributions of the
// density-estimation literature, seeded by the caller, with exact log-densities
// where they have a closed form.
//
// The definitions follow the generators commonly used for EBMs and flows
// (FFJORD's toy data), restated as distributions of one point so that every
// sample is independent; where those generators split a batch evenly between
// components (circles, moons, rings, 2spirals, pinwheel) a point picks its
// component uniformly at random instead. With N(0,1) draws n, uniform [0,1)
// draws u, and s = 1.414 (FFJORD's rounding of √2):
//
//   - 25gaussians: centres 4·(a, b)/s for a, b ∈ {−1, −½, 0, ½, 1}, std 0.2/s,
//     equal weights (the Energy Discrepancy paper's version, not FFJORD's).
//   - 8gaussians: centres 4·(cos kπ/4, sin kπ/4)/s for k = 0..7, std 0.5/s,
//     equal weights.
//   - pinwheel: arm k ∈ {0..4}, r = 1 + 0.3n, q = 0.1n', angle
//     a = 2πk/5 + 0.25·exp(r); point 2·(r cos a + q sin a, −r sin a + q cos a).
//   - swissroll: t = 1.5π(1 + 2u); point (t cos t + n, t sin t + n')/5.
//   - circles: radius ρ ∈ {1, ½}, angle θ = 2πu; point 3·(ρ cos θ + 0.08n, ρ sin θ + 0.08n').
//   - moons: θ = πu; upper moon (cos θ, sin θ), lower moon (1 − cos θ, ½ − sin θ),
//     plus 0.1·(n, n'); point 2·p + (−1, −0.2).
//   - 2spirals: m = 3π√u; p = (−m cos m + u₁/2, m sin m + u₂/2), negated with
//     probability ½; point p/3 + 0.1·(n, n').
//   - checkerboard: uniform on the eight 2×2 squares of [−4, 4)² whose cell
//     indices ⌊x/2⌋ + ⌊y/2⌋ are even (density 1/32 there).
//   - rings: radius ρ ∈ 3·{1.2, 0.9, 0.55, 0.25}, angle 2πu; point
//     (ρ cos θ, ρ sin θ) + 0.08·(n, n').
//
// Exact log-densities: 25gaussians, 8gaussians, checkerboard, and pinwheel
// by the change of variables from its Gaussian (r, q), summed over the
// preimages of a point, found numerically (pinwheelLogDensity).
package toy2d

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
)

// sqrt2 is the rounded √2 that the reference generators divide by; kept
// rounded so that samples match the sets reported in the literature.
const sqrt2 = 1.414

// Set is one named 2-D distribution.
type Set struct {
	name       string
	point      func(rng *rand.Rand) (x, y float64)
	logDensity func(x, y float64) float64 // nil without a closed form
}

// sets lists every distribution, in the order Names reports them.
var sets = []*Set{
	{name: "25gaussians", point: gaussians25.sample, logDensity: gaussians25.logDensity},
	{name: "8gaussians", point: gaussians8.sample, logDensity: gaussians8.logDensity},
	{name: "pinwheel", point: pinwheel, logDensity: pinwheelLogDensity},
	{name: "swissroll", point: swissroll},
	{name: "circles", point: circles},
	{name: "moons", point: moons},
	{name: "2spirals", point: spirals},
	{name: "checkerboard", point: checkerboard, logDensity: checkerboardLogDensity},
	{name: "rings", point: rings},
}

var gaussians25 = func() gaussianMixture2D {
	grid := []float64{-1, -0.5, 0, 0.5, 1}
	m := gaussianMixture2D{std: 0.2 / sqrt2}
	for _, a := range grid {
		for _, b := range grid {
			m.centres = append(m.centres, [2]float64{4 * a / sqrt2, 4 * b / sqrt2})
		}
	}
	return m
}()

var gaussians8 = func() gaussianMixture2D {
	m := gaussianMixture2D{std: 0.5 / sqrt2}
	for k := range 8 {
		a := float64(k) * math.Pi / 4
		m.centres = append(m.centres, [2]float64{4 * math.Cos(a) / sqrt2, 4 * math.Sin(a) / sqrt2})
	}
	return m
}()

// Names returns the names New accepts.
func Names() []string {
	names := make([]string, len(sets))
	for i, s := range sets {
		names[i] = s.name
	}
	return names
}

// New returns the set called name (one of Names).
func New(name string) (*Set, error) {
	for _, s := range sets {
		if s.name == name {
			return s, nil
		}
	}
	return nil, fmt.Errorf("toy2d: unknown data set %q, want one of %s", name, strings.Join(Names(), ", "))
}

// Name returns the set's name.
func (s *Set) Name() string { return s.name }

// Sample draws n independent points, returned flat as n×2 values (x then y).
func (s *Set) Sample(rng *rand.Rand, n int) []float32 {
	out := make([]float32, 2*n)
	s.fill(rng, out)
	return out
}

// fill overwrites dst (even length) with len(dst)/2 points.
func (s *Set) fill(rng *rand.Rand, dst []float32) {
	for i := 0; i < len(dst); i += 2 {
		x, y := s.point(rng)
		dst[i], dst[i+1] = float32(x), float32(y)
	}
}

// LogDensity returns the exact log-density at (x, y), and false when the set
// has no closed-form density. It is −∞ outside the support.
func (s *Set) LogDensity(x, y float64) (float64, bool) {
	if s.logDensity == nil {
		return 0, false
	}
	return s.logDensity(x, y), true
}

func swissroll(rng *rand.Rand) (x, y float64) {
	t := 1.5 * math.Pi * (1 + 2*rng.Float64())
	sin, cos := math.Sincos(t)
	return (t*cos + rng.NormFloat64()) / 5, (t*sin + rng.NormFloat64()) / 5
}

// onCircle returns a point at a uniform angle on the circle of the given
// radius, plus isotropic Gaussian noise of standard deviation noise.
func onCircle(rng *rand.Rand, radius, noise float64) (x, y float64) {
	sin, cos := math.Sincos(2 * math.Pi * rng.Float64())
	return radius*cos + noise*rng.NormFloat64(), radius*sin + noise*rng.NormFloat64()
}

func circles(rng *rand.Rand) (x, y float64) {
	radius := []float64{1, 0.5}[rng.IntN(2)]
	x, y = onCircle(rng, radius, 0.08)
	return 3 * x, 3 * y
}

func rings(rng *rand.Rand) (x, y float64) {
	radius := 3 * []float64{1.2, 0.9, 0.55, 0.25}[rng.IntN(4)]
	return onCircle(rng, radius, 0.08)
}

func moons(rng *rand.Rand) (x, y float64) {
	sin, cos := math.Sincos(math.Pi * rng.Float64())
	x, y = cos, sin
	if rng.IntN(2) == 1 {
		x, y = 1-cos, 0.5-sin
	}
	x += 0.1 * rng.NormFloat64()
	y += 0.1 * rng.NormFloat64()
	return 2*x - 1, 2*y - 0.2
}

func spirals(rng *rand.Rand) (x, y float64) {
	m := 3 * math.Pi * math.Sqrt(rng.Float64())
	sin, cos := math.Sincos(m)
	x = -m*cos + 0.5*rng.Float64()
	y = m*sin + 0.5*rng.Float64()
	if rng.IntN(2) == 1 {
		x, y = -x, -y
	}
	return x/3 + 0.1*rng.NormFloat64(), y/3 + 0.1*rng.NormFloat64()
}

func checkerboard(rng *rand.Rand) (x, y float64) {
	x = 4*rng.Float64() - 2
	// y's unit cell has the parity of x's, so the squares alternate.
	y = rng.Float64() - 2*float64(rng.IntN(2)) + float64(int(math.Floor(x))&1)
	return 2 * x, 2 * y
}

// checkerboardLogDensity is log(1/32) on the closed squares of the
// support. A point on an edge counts as inside when a filled square
// borders it: edges carry no probability, and the closed squares keep the
// samples that rounding to float32 puts on an edge (about 1 in 10⁷) inside
// the support instead of at log-density −∞.
func checkerboardLogDensity(x, y float64) float64 {
	hx, hy := x/2, y/2
	// The cells k whose closures [2k, 2k+2] hold a coordinate: ⌊h⌋, and
	// h − 1 too when h is an integer (on an edge).
	for _, kx := range [2]float64{math.Ceil(hx) - 1, math.Floor(hx)} {
		for _, ky := range [2]float64{math.Ceil(hy) - 1, math.Floor(hy)} {
			if kx >= -2 && kx <= 1 && ky >= -2 && ky <= 1 && int(kx+ky)&1 == 0 {
				return -math.Log(32)
			}
		}
	}
	return math.Inf(-1)
}
