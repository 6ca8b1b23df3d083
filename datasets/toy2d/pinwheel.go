package toy2d

import (
	"math"
	"math/rand/v2"
)

// The pinwheel's parameters (see the package documentation): radial and
// tangential standard deviations, the twist rate and the number of arms.
const (
	pinwheelRadialStd     = 0.3
	pinwheelTangentialStd = 0.1
	pinwheelRate          = 0.25
	pinwheelArms          = 5
)

func pinwheel(rng *rand.Rand) (x, y float64) {
	r := 1 + pinwheelRadialStd*rng.NormFloat64()
	q := pinwheelTangentialStd * rng.NormFloat64()
	a := 2*math.Pi*float64(rng.IntN(pinwheelArms))/pinwheelArms + pinwheelRate*math.Exp(r)
	sin, cos := math.Sincos(a)
	return 2 * (r*cos + q*sin), 2 * (-r*sin + q*cos)
}

// pinwheelLogDensity is the pinwheel's exact log-density, by the change of
// variables from its Gaussian (r, q). Arm k maps (r, q) to 2u with
// u = R(−a)(r, q), a = 2πk/5 + 0.25·e^r, R a rotation. Writing (r, q) =
// ρ(cos α, sin α): |u| = ρ and angle(u) = α − a, so the preimages of u on
// arm k are the angles α with g(α) = α − 0.25·e^{ρ cos α} − 2πk/5 −
// angle(u) a multiple of 2π; the map's Jacobian determinant is
// 1 + 0.25·e^r·q = g′(α). Hence
//
//	p(x) = ¼ · (1/5) Σ_k Σ_{preimages} N(r; 1, 0.3²) N(q; 0, 0.1²) / |g′(α)|
//
// at u = x/2. The twist can fold an arm over itself, so g may reach a
// multiple of 2π more than once: every root is found, by scanning α finely
// enough for g's variation and refining sign changes by bisection.
func pinwheelLogDensity(x, y float64) float64 {
	ux, uy := x/2, y/2
	rho := math.Hypot(ux, uy)
	gauss := func(r, q float64) float64 {
		dr, dq := (r-1)/pinwheelRadialStd, q/pinwheelTangentialStd
		return math.Exp(-(dr*dr+dq*dq)/2) / (2 * math.Pi * pinwheelRadialStd * pinwheelTangentialStd)
	}
	if rho == 0 { // every arm maps (0, 0) to 0, with determinant 1
		return math.Log(gauss(0, 0) / 4)
	}
	theta := math.Atan2(uy, ux)
	twist := func(alpha float64) float64 { return pinwheelRate * math.Exp(rho*math.Cos(alpha)) }
	// g varies by at most 2π(1 + 0.25·e^ρ·ρ) over a turn: about 0.1 rad a step.
	steps := 64 + int(64*(1+pinwheelRate*math.Exp(rho)*rho))
	h := 2 * math.Pi / float64(steps)
	p := 0.0
	for k := range pinwheelArms {
		shift := 2*math.Pi*float64(k)/pinwheelArms + theta
		g := func(alpha float64) float64 { return alpha - twist(alpha) - shift }
		a0, g0 := -math.Pi, g(-math.Pi)
		for i := 1; i <= steps; i++ {
			a1 := -math.Pi + float64(i)*h
			g1 := g(a1)
			// Each multiple 2πm that g crosses in [a0, a1) is a root; g at
			// a1 = π is g at −π plus 2π, the same point, so a root there
			// counts once, at a0 = −π.
			lo, hi := min(g0, g1), max(g0, g1)
			for m := math.Ceil(lo / (2 * math.Pi)); 2*math.Pi*m <= hi; m++ {
				target := 2 * math.Pi * m
				if g1 == target || (g0-target)*(g1-target) > 0 {
					continue
				}
				alpha := bisect(func(a float64) float64 { return g(a) - target }, a0, a1)
				sin, cos := math.Sincos(alpha)
				r, q := rho*cos, rho*sin
				p += gauss(r, q) / math.Abs(1+pinwheelRate*math.Exp(r)*q)
			}
			a0, g0 = a1, g1
		}
	}
	return math.Log(p / pinwheelArms / 4)
}

// bisect returns a root of f in [a, b], where f(a) and f(b) differ in sign
// (or f(a) = 0), to double precision.
func bisect(f func(float64) float64, a, b float64) float64 {
	fa := f(a)
	if fa == 0 {
		return a
	}
	for range 200 {
		m := a + (b-a)/2
		if m <= a || m >= b {
			break
		}
		fm := f(m)
		if (fa < 0) == (fm < 0) {
			a, fa = m, fm
		} else {
			b = m
		}
	}
	return a
}
