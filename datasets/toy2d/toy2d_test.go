package toy2d

import (
	"errors"
	"io"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// quadU returns ∫₀¹ f(u) du by the midpoint rule.
func quadU(f func(u float64) float64) float64 {
	const n = 200_000
	sum := 0.0
	for i := range n {
		sum += f((float64(i) + 0.5) / n)
	}
	return sum / n
}

// meanSquaredNorm25 is E|x|² of 25gaussians from its definition: the mean
// squared centre norm plus the variance 2σ² of the isotropic noise.
func meanSquaredNorm25() float64 {
	sum := 0.0
	for _, a := range []float64{-1, -0.5, 0, 0.5, 1} {
		for _, b := range []float64{-1, -0.5, 0, 0.5, 1} {
			sum += (16*a*a + 16*b*b) / (1.414 * 1.414)
		}
	}
	sigma := 0.2 / 1.414
	return sum/25 + 2*sigma*sigma
}

// TestSampleMoments checks each set's sample mean, E|x|² and characteristic
// function at a few frequencies against the values of the distribution the
// package documentation defines: moments in closed form or by quadrature,
// characteristic functions by quadrature over the definition's latent
// variables (charFns).
func TestSampleMoments(t *testing.T) {
	const noise = 2 * 0.08 * 0.08 // E|ε|² of the 0.08-std isotropic noise
	tests := []struct {
		name         string
		meanX, meanY float64
		sqNorm       float64 // E[x² + y²]
	}{
		{"25gaussians", 0, 0, meanSquaredNorm25()},
		{"8gaussians", 0, 0, (16 + 2*0.25) / (1.414 * 1.414)},
		// |point|² = 4(r² + q²); E r² = 1 + 0.3², E q² = 0.1². Arms cancel the mean.
		{"pinwheel", 0, 0, 4 * (1 + 0.09 + 0.01)},
		// t uniform on [1.5π, 4.5π]: E[t cos t] = 2, E[t sin t] = 2/(3π), E t² = 9.75π².
		{"swissroll", 2.0 / 5, 2 / (15 * math.Pi), (9.75*math.Pi*math.Pi + 2) / 25},
		{"circles", 0, 0, 9 * ((1+0.25)/2 + noise)},
		// Upper moon: E|2p−(1,0.2)|² = 5.04 − 1.6/π; lower: 5.64 − 6.4/π; noise 2·0.2².
		{"moons", 0, 0.3, 5.34 - 4/math.Pi + 0.08},
		// Mean of u₁/2 is ¼ and of (u₁/2)² is 1/12; E over u of the rest by quadrature.
		{"2spirals", 0, 0, quadU(func(u float64) float64 {
			m := 3 * math.Pi * math.Sqrt(u)
			return m*m + (m*math.Sin(m)-m*math.Cos(m))/2 + 1.0/6
		})/9 + 2*0.01},
		// Each coordinate is uniform on [−4, 4): E x² = 16/3.
		{"checkerboard", 0, 0, 32.0 / 3},
		{"rings", 0, 0, 9*(1.44+0.81+0.3025+0.0625)/4 + noise},
	}
	phis := charFns()
	const n = 200_000
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			set, err := New(tc.name)
			if err != nil {
				t.Fatal(err)
			}
			pts := set.Sample(rand.New(rand.NewPCG(1, 2)), n)
			if len(pts) != 2*n {
				t.Fatalf("Sample(%d) returned %d values, want %d", n, len(pts), 2*n)
			}
			xs, ys, sq := make([]float64, n), make([]float64, n), make([]float64, n)
			for i := range n {
				x, y := float64(pts[2*i]), float64(pts[2*i+1])
				xs[i], ys[i], sq[i] = x, y, x*x+y*y
			}
			checkMean(t, "mean x", xs, tc.meanX)
			checkMean(t, "mean y", ys, tc.meanY)
			checkMean(t, "E|x|²", sq, tc.sqNorm)
			for _, w := range charFreqs {
				checkCharFn(t, w, xs, ys, phis[tc.name](w))
			}
		})
	}
}

// charFreqs are the frequencies at which TestSampleMoments compares
// characteristic functions: low ones see the shape (a spiral's sense of
// turning, heavy tails), high ones the 0.08–0.2 widths of the noise.
var charFreqs = [][2]float64{{1, 0.5}, {1.5, 1.5}, {-1.5, 1.5}, {6, 0}, {0, 6}, {4.2, 4.2}, {-4.2, 4.2}}

// checkCharFn fails unless the empirical characteristic function
// mean(exp(i w·p)) of the points (xs, ys) is within five standard errors of
// want. E|φ̂ − φ|² = (1 − |φ|²)/n ≤ 1/n, so the bound holds whatever the
// distribution; 1e-4 allows for the quadrature.
func checkCharFn(t *testing.T, w [2]float64, xs, ys []float64, want complex128) {
	t.Helper()
	var got complex128
	for i := range xs {
		got += expi(w, xs[i], ys[i])
	}
	got /= complex(float64(len(xs)), 0)
	if tol := 5/math.Sqrt(float64(len(xs))) + 1e-4; !(cmplx.Abs(got-want) <= tol) {
		t.Errorf("characteristic function at ω = %v: %.4f, want %.4f ± %.4f", w, got, want, tol)
	}
}

// expi returns exp(i w·(x, y)).
func expi(w [2]float64, x, y float64) complex128 {
	sin, cos := math.Sincos(w[0]*x + w[1]*y)
	return complex(cos, sin)
}

// gaussianCharFn returns the characteristic function at w of isotropic
// Gaussian noise of standard deviation sigma per coordinate.
func gaussianCharFn(w [2]float64, sigma float64) complex128 {
	return complex(math.Exp(-sigma*sigma*(w[0]*w[0]+w[1]*w[1])/2), 0)
}

// uniformMean returns ∫₀¹ f(u) du by the midpoint rule.
func uniformMean(f func(u float64) complex128) complex128 {
	const n = 20_000
	var sum complex128
	for i := range n {
		sum += f((float64(i) + 0.5) / n)
	}
	return sum / n
}

// normalMean returns E f(z) for z ~ N(0, 1) by the midpoint rule on [−8, 8].
func normalMean(f func(z float64) complex128) complex128 {
	const n, l = 3200, 8.0
	const h = 2 * l / n
	var sum complex128
	for i := range n {
		z := -l + (float64(i)+0.5)*h
		sum += f(z) * complex(math.Exp(-z*z/2)*h/math.Sqrt(2*math.Pi), 0)
	}
	return sum
}

// charFns returns each set's characteristic function φ(w) = E exp(i w·p),
// restated from the package documentation: in closed form where the set
// has one (Gaussian mixtures, circles and rings by Bessel's J₀, the
// checkerboard's squares), otherwise by quadrature over the definition's
// latent variables, with the Gaussian noise (independent of the rest)
// factored out.
func charFns() map[string]func(w [2]float64) complex128 {
	mixture := func(centres [][2]float64, std float64) func(w [2]float64) complex128 {
		return func(w [2]float64) complex128 {
			var sum complex128
			for _, c := range centres {
				sum += expi(w, c[0], c[1])
			}
			return sum / complex(float64(len(centres)), 0) * gaussianCharFn(w, std)
		}
	}
	// A uniform angle on a circle of radius ρ has φ = J₀(ρ|w|).
	circle := func(radii []float64, noise float64) func(w [2]float64) complex128 {
		return func(w [2]float64) complex128 {
			sum := 0.0
			for _, r := range radii {
				sum += math.J0(r * math.Hypot(w[0], w[1]))
			}
			return complex(sum/float64(len(radii)), 0) * gaussianCharFn(w, noise)
		}
	}
	// box is E exp(i v u) for u uniform on [0, 1).
	box := func(v float64) complex128 {
		if v == 0 {
			return 1
		}
		return (cmplx.Exp(complex(0, v)) - 1) / complex(0, v)
	}
	return map[string]func(w [2]float64) complex128{
		"25gaussians": mixture(centres25(), 0.2/1.414),
		"8gaussians":  mixture(centres8(), 0.5/1.414),
		// Given the arm k and r, the point 2r·(cos a, −sin a) + 2q·(sin a, cos a)
		// is Gaussian in q ~ N(0, 0.1²).
		"pinwheel": func(w [2]float64) complex128 {
			var sum complex128
			for k := range 5 {
				sum += normalMean(func(z float64) complex128 {
					r := 1 + 0.3*z
					sin, cos := math.Sincos(2*math.Pi*float64(k)/5 + 0.25*math.Exp(r))
					wq := 2 * 0.1 * (w[0]*sin + w[1]*cos)
					return expi(w, 2*r*cos, -2*r*sin) * complex(math.Exp(-wq*wq/2), 0)
				})
			}
			return sum / 5
		},
		"swissroll": func(w [2]float64) complex128 {
			return uniformMean(func(u float64) complex128 {
				t := 1.5 * math.Pi * (1 + 2*u)
				return expi(w, t*math.Cos(t)/5, t*math.Sin(t)/5)
			}) * gaussianCharFn(w, 0.2)
		},
		"circles": circle([]float64{3, 1.5}, 3*0.08),
		"moons": func(w [2]float64) complex128 {
			return uniformMean(func(u float64) complex128 {
				sin, cos := math.Sincos(math.Pi * u)
				return (expi(w, 2*cos, 2*sin) + expi(w, 2*(1-cos), 2*(0.5-sin))) / 2
			}) * expi(w, -1, -0.2) * gaussianCharFn(w, 0.2)
		},
		// p = ±(b(m) + (u₁, u₂)/2)/3 + noise: the sign halves φ + conj(φ).
		"2spirals": func(w [2]float64) complex128 {
			half := uniformMean(func(u float64) complex128 {
				m := 3 * math.Pi * math.Sqrt(u)
				return expi(w, -m*math.Cos(m)/3, m*math.Sin(m)/3)
			}) * box(w[0]/6) * box(w[1]/6)
			return complex(real(half), 0) * gaussianCharFn(w, 0.1)
		},
		// Uniform on the 2×2 squares [2i, 2i+2] × [2j, 2j+2], i + j even.
		"checkerboard": func(w [2]float64) complex128 {
			sinc := func(v float64) float64 {
				if v == 0 {
					return 1
				}
				return math.Sin(v) / v
			}
			var sum complex128
			for i := -2; i <= 1; i++ {
				for j := -2; j <= 1; j++ {
					if (i+j)%2 == 0 {
						sum += expi(w, float64(2*i+1), float64(2*j+1))
					}
				}
			}
			return sum / 8 * complex(sinc(w[0])*sinc(w[1]), 0)
		},
		"rings": circle([]float64{3.6, 2.7, 1.65, 0.75}, 0.08),
	}
}

// checkMean fails unless the sample mean of v is within five standard errors
// (plus float32 rounding) of want.
func checkMean(t *testing.T, what string, v []float64, want float64) {
	t.Helper()
	mean, sq := 0.0, 0.0
	for _, x := range v {
		mean += x
		sq += x * x
	}
	n := float64(len(v))
	mean /= n
	se := math.Sqrt((sq/n - mean*mean) / n)
	if tol := 5*se + 1e-6*math.Abs(want); math.Abs(mean-want) > tol {
		t.Errorf("%s = %.5f, want %.5f ± %.5f", what, mean, want, tol)
	}
}

// mixture3 is a three-component Mixture1D with unequal standard deviations.
func mixture3() Mixture1D {
	return Mixture1D{Weights: []float64{0.5, 0.3, 0.2}, Means: []float64{-1, 0, 4}, Stds: []float64{0.5, 2, 1}}
}

// TestMixture1DMoments checks Sample's mean, E x² and characteristic
// function against their closed forms Σ_k w_k·(…) for each component.
func TestMixture1DMoments(t *testing.T) {
	tests := []Mixture1D{MixtureWeightStudy(), mixture3()}
	for _, m := range tests {
		if err := m.Validate(); err != nil {
			t.Fatal(err)
		}
		mean, second := 0.0, 0.0
		for k, w := range m.Weights {
			mean += w * m.Means[k]
			second += w * (m.Stds[k]*m.Stds[k] + m.Means[k]*m.Means[k])
		}
		sample := m.Sample(rand.New(rand.NewPCG(3, 4)), 200_000)
		xs, sq := make([]float64, len(sample)), make([]float64, len(sample))
		for i, v := range sample {
			xs[i], sq[i] = float64(v), float64(v)*float64(v)
		}
		checkMean(t, "mixture mean", xs, mean)
		checkMean(t, "mixture E x²", sq, second)
		// φ(ω) = Σ_k w_k exp(iωμ_k − ω²σ_k²/2), checked on the x axis.
		zeros := make([]float64, len(xs))
		for _, omega := range []float64{0.3, 1, 2} {
			var phi complex128
			for k, w := range m.Weights {
				s := m.Stds[k]
				phi += complex(w*math.Exp(-omega*omega*s*s/2), 0) * cmplx.Exp(complex(0, omega*m.Means[k]))
			}
			checkCharFn(t, [2]float64{omega, 0}, xs, zeros, phi)
		}
	}
}

func TestMixture1DValidate(t *testing.T) {
	tests := []struct {
		name string
		m    Mixture1D
		want string
	}{
		{"empty", Mixture1D{}, "0 weights"},
		{"lengths", Mixture1D{Weights: []float64{1}, Means: []float64{0, 1}, Stds: []float64{1}}, "2 means"},
		{"negative weight", Mixture1D{Weights: []float64{-0.5, 1.5}, Means: []float64{0, 1}, Stds: []float64{1, 1}}, "weight -0.5"},
		{"zero std", Mixture1D{Weights: []float64{1}, Means: []float64{0}, Stds: []float64{0}}, "std 0"},
		{"sum", Mixture1D{Weights: []float64{0.5, 0.4}, Means: []float64{0, 1}, Stds: []float64{1, 1}}, "sum to 0.9"},
	}
	for _, tc := range tests {
		if err := tc.m.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Validate error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	// Valid: a zero weight (weights need only be non-negative), and weights
	// whose float64 sum misses 1 by rounding.
	for _, m := range []Mixture1D{
		{Weights: []float64{0, 1}, Means: []float64{0, 1}, Stds: []float64{1, 1}},
		{Weights: []float64{0.1, 0.2, 0.3, 0.4}, Means: []float64{0, 1, 2, 3}, Stds: []float64{1, 1, 1, 1}},
		mixture3(),
	} {
		if err := m.Validate(); err != nil {
			t.Errorf("%v: Validate error %v, want none", m, err)
		}
	}
}

// TestMixture1DComponent checks that component maps u to the component whose
// half-open cumulative-weight interval [w₁+…+w_{k−1}, w₁+…+w_k) holds it, by
// hand: a zero-weight component is never chosen, and an interval's right
// end belongs to the next component.
func TestMixture1DComponent(t *testing.T) {
	tests := []struct {
		weights []float64
		u       float64
		want    int
	}{
		{[]float64{0.2, 0.8}, 0, 0},
		{[]float64{0.2, 0.8}, 0.19, 0},
		{[]float64{0.2, 0.8}, 0.2, 1},
		{[]float64{0.2, 0.8}, 0.99, 1},
		{[]float64{0, 1}, 0, 1},
		{[]float64{0.5, 0, 0.5}, 0.5, 2},
		{[]float64{0.25, 0.25, 0.5}, 0.25, 1},
	}
	for _, tc := range tests {
		if got := (Mixture1D{Weights: tc.weights}).component(tc.u); got != tc.want {
			t.Errorf("weights %v: component(%v) = %d, want %d", tc.weights, tc.u, got, tc.want)
		}
	}
}

// integrate2D returns the midpoint-rule integral of exp(logp) over [-l, l]²
// with cell width h.
func integrate2D(logp func(x, y float64) float64, l, h float64) float64 {
	n := int(math.Round(2 * l / h))
	sum := 0.0
	for i := range n {
		x := -l + (float64(i)+0.5)*h
		for j := range n {
			sum += math.Exp(logp(x, -l+(float64(j)+0.5)*h))
		}
	}
	return sum * h * h
}

// TestLogDensityIntegratesToOne checks that the exact densities integrate to 1
// on a grid (comparisons written so that a NaN fails).
func TestLogDensityIntegratesToOne(t *testing.T) {
	tests := []struct {
		name string
		l, h float64
		tol  float64
	}{
		{"25gaussians", 5, 0.02, 1e-6},
		{"8gaussians", 6, 0.02, 1e-6},
		{"checkerboard", 5, 0.02, 1e-6},
		// Each point's density is a root search: a coarser grid (the
		// integral is 0.999996 at this step, 1.0000001 at 0.08).
		{"pinwheel", 6, 0.1, 1e-4},
	}
	for _, tc := range tests {
		set, err := New(tc.name)
		if err != nil {
			t.Fatal(err)
		}
		logp := func(x, y float64) float64 {
			v, ok := set.LogDensity(x, y)
			if !ok {
				t.Fatalf("%s: LogDensity reports no exact density", tc.name)
			}
			return v
		}
		if got := integrate2D(logp, tc.l, tc.h); !(math.Abs(got-1) <= tc.tol) {
			t.Errorf("%s: ∫ p = %.9f, want 1", tc.name, got)
		}
	}

	m := MixtureWeightStudy()
	const l, h = 20.0, 0.001
	sum := 0.0
	for x := -l + h/2; x < l; x += h {
		sum += math.Exp(m.LogDensity(x))
	}
	if got := sum * h; !(math.Abs(got-1) <= 1e-6) {
		t.Errorf("Mixture1D: ∫ p = %.9f, want 1", got)
	}
}

// naiveGaussianMixture2D is log((1/K) Σ_k N((x,y); c_k, σ²I)) summed in
// probability space, which is exact where it does not underflow.
func naiveGaussianMixture2D(centres [][2]float64, std, x, y float64) float64 {
	p := 0.0
	for _, c := range centres {
		d2 := (x-c[0])*(x-c[0]) + (y-c[1])*(y-c[1])
		p += math.Exp(-d2/(2*std*std)) / (2 * math.Pi * std * std)
	}
	return math.Log(p / float64(len(centres)))
}

// nearestTerm2D is the log of the nearest component's weighted density: far
// from all centres it equals the mixture's log-density to double precision.
func nearestTerm2D(centres [][2]float64, std, x, y float64) float64 {
	d2 := math.Inf(1)
	for _, c := range centres {
		d2 = min(d2, (x-c[0])*(x-c[0])+(y-c[1])*(y-c[1]))
	}
	return -d2/(2*std*std) - math.Log(2*math.Pi*std*std) - math.Log(float64(len(centres)))
}

// centres25 returns the 25gaussians centres, rebuilt from the package
// documentation independently of the code.
func centres25() [][2]float64 {
	var c [][2]float64
	for _, a := range []float64{-1, -0.5, 0, 0.5, 1} {
		for _, b := range []float64{-1, -0.5, 0, 0.5, 1} {
			c = append(c, [2]float64{4 * a / 1.414, 4 * b / 1.414})
		}
	}
	return c
}

// centres8 returns the 8gaussians centres, rebuilt from the package
// documentation: radius 4/1.414 at multiples of 45°.
func centres8() [][2]float64 {
	r := 4 / 1.414
	h := r / math.Sqrt2
	return [][2]float64{{r, 0}, {-r, 0}, {0, r}, {0, -r}, {h, h}, {h, -h}, {-h, h}, {-h, -h}}
}

// TestGaussianLogDensityMatchesComponentSum checks the mixtures' log-densities
// against the naive sum of component densities, and far out against the
// nearest component (comparisons written so that a NaN fails).
func TestGaussianLogDensityMatchesComponentSum(t *testing.T) {
	tests := []struct {
		name    string
		centres [][2]float64
		std     float64
	}{
		{"25gaussians", centres25(), 0.2 / 1.414},
		{"8gaussians", centres8(), 0.5 / 1.414},
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tc := range tests {
		set, err := New(tc.name)
		if err != nil {
			t.Fatal(err)
		}
		// Near the data, against the naive sum.
		for range 1000 {
			x, y := 8*rng.Float64()-4, 8*rng.Float64()-4
			got, _ := set.LogDensity(x, y)
			want := naiveGaussianMixture2D(tc.centres, tc.std, x, y)
			if math.IsInf(want, -1) {
				continue // underflow of the naive sum; covered below
			}
			if !(math.Abs(got-want) <= 1e-9*max(1, math.Abs(want))) {
				t.Fatalf("%s: LogDensity(%.3f, %.3f) = %.12g, naive sum %.12g", tc.name, x, y, got, want)
			}
		}
		// Far away, where the naive sum underflows to −∞.
		for _, p := range [][2]float64{{30, -30}, {-100, 7}, {0, 500}} {
			got, _ := set.LogDensity(p[0], p[1])
			want := nearestTerm2D(tc.centres, tc.std, p[0], p[1])
			if math.IsInf(got, 0) || !(math.Abs(got-want) <= 1e-9*math.Abs(want)) {
				t.Errorf("%s: LogDensity(%v, %v) = %g, want %g", tc.name, p[0], p[1], got, want)
			}
		}
	}

	// Mixture1D against the naive sum of weighted normal densities, also
	// with standard deviations other than 1.
	for _, m := range []Mixture1D{MixtureWeightStudy(), mixture3()} {
		for _, x := range []float64{-7, -5, -1.2, 0, 0.3, 3, 5, 8} {
			p := 0.0
			for k, w := range m.Weights {
				d := x - m.Means[k]
				s := m.Stds[k]
				p += w * math.Exp(-d*d/(2*s*s)) / (s * math.Sqrt(2*math.Pi))
			}
			if got := m.LogDensity(x); !(math.Abs(got-math.Log(p)) <= 1e-12*max(1, math.Abs(got))) {
				t.Errorf("%v: LogDensity(%v) = %.15g, naive %.15g", m, x, got, math.Log(p))
			}
		}
	}
	m := MixtureWeightStudy()
	// At x = 60 the N(5,1) term dominates by e^600.
	if got, want := m.LogDensity(60), math.Log(0.8)-55*55/2.0-0.5*math.Log(2*math.Pi); !(math.Abs(got-want) <= 1e-9*math.Abs(want)) {
		t.Errorf("Mixture1D.LogDensity(60) = %g, want %g", got, want)
	}
}

func TestCheckerboardDensityOnSupport(t *testing.T) {
	set, err := New("checkerboard")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		x, y float64
		in   bool
	}{
		{0.5, 0.5, true}, {-0.5, -0.5, true}, {2.5, 0.5, false}, {-3, 3, false},
		{3.9, 3.9, true}, {-3.9, 3.9, false}, {4.1, 0, false}, {0, -4.1, false},
		// Closed squares: an edge or corner bordering a filled square is
		// inside (float32 rounding puts about 1 sample in 10⁷ there).
		{2, 0.5, true}, {4, 2.155, true}, {2, 2, true}, {-4, -4, true}, {4, 0.5, false}, {4.0000001, 2.155, false},
	}
	for _, tc := range tests {
		got, ok := set.LogDensity(tc.x, tc.y)
		want := math.Inf(-1)
		if tc.in {
			want = math.Log(1.0 / 32)
		}
		if !ok || got != want {
			t.Errorf("LogDensity(%v, %v) = %v, %v; want %v, true", tc.x, tc.y, got, ok, want)
		}
	}
	pts := set.Sample(rand.New(rand.NewPCG(9, 9)), 10_000)
	for i := 0; i < len(pts); i += 2 {
		if v, _ := set.LogDensity(float64(pts[i]), float64(pts[i+1])); math.IsInf(v, -1) {
			t.Fatalf("sample (%v, %v) lies outside the support", pts[i], pts[i+1])
		}
	}
}

func TestLogDensityAvailability(t *testing.T) {
	exact := []string{"25gaussians", "8gaussians", "checkerboard", "pinwheel"}
	for _, name := range Names() {
		set, err := New(name)
		if err != nil {
			t.Fatal(err)
		}
		if set.Name() != name {
			t.Errorf("New(%q).Name() = %q", name, set.Name())
		}
		if _, ok := set.LogDensity(0.1, 0.2); ok != slices.Contains(exact, name) {
			t.Errorf("%s: LogDensity ok = %v, want %v", name, ok, !ok)
		}
	}
}

func TestNewUnknownName(t *testing.T) {
	_, err := New("spirals3")
	if err == nil {
		t.Fatal("New(\"spirals3\"): no error")
	}
	for _, want := range append(Names(), `"spirals3"`) {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
}

func TestSampleSeeding(t *testing.T) {
	for _, name := range Names() {
		set, err := New(name)
		if err != nil {
			t.Fatal(err)
		}
		a := set.Sample(rand.New(rand.NewPCG(1, 1)), 100)
		b := set.Sample(rand.New(rand.NewPCG(1, 1)), 100)
		c := set.Sample(rand.New(rand.NewPCG(2, 1)), 100)
		if !slices.Equal(a, b) || slices.Equal(a, c) {
			t.Errorf("%s: same seed equal = %v (want true), different seeds equal = %v (want false)",
				name, slices.Equal(a, b), slices.Equal(a, c))
		}
	}
}

// TestDataset checks a Dataset's batches: shape, determinism in the seed,
// and that Seek(k) resumes the stream at batch k (0 included).
func TestDataset(t *testing.T) {
	set, err := New("moons")
	if err != nil {
		t.Fatal(err)
	}
	const batch = 16
	batches := func(d *Dataset, n int) [][]float32 {
		var out [][]float32
		for range n {
			_, xs, ys, err := d.Yield()
			if errors.Is(err, io.EOF) || err != nil || ys != nil || len(xs) != 1 {
				t.Fatalf("Yield = %d inputs, labels %v, err %v; want 1 input, no labels, no error", len(xs), ys, err)
			}
			if dims := xs[0].Shape().Dimensions; !slices.Equal(dims, []int{batch, 2}) {
				t.Fatalf("batch shape %v, want [%d 2]", dims, batch)
			}
			var flat []float32
			for _, row := range xs[0].Value().([][]float32) {
				flat = append(flat, row...)
			}
			out = append(out, flat)
		}
		return out
	}
	newDataset := func(seed uint64) *Dataset {
		d, err := NewDataset(set, batch, seed)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	a := batches(newDataset(7), 6)
	b := batches(newDataset(7), 6)
	c := batches(newDataset(8), 6)
	for k := range a {
		if !slices.Equal(a[k], b[k]) || slices.Equal(a[k], c[k]) {
			t.Errorf("batch %d: same seed equal %v (want true), other seed equal %v (want false)",
				k, slices.Equal(a[k], b[k]), slices.Equal(a[k], c[k]))
		}
		if k > 0 && slices.Equal(a[k], a[k-1]) {
			t.Errorf("batches %d and %d are equal", k-1, k)
		}
	}
	// Seek resumes mid-stream; Reset does not rewind it.
	d := newDataset(7)
	if err := d.Seek(3); err != nil {
		t.Fatal(err)
	}
	d.Reset()
	if got := batches(d, 3); !slices.EqualFunc(got, a[3:], slices.Equal) || d.Step() != 6 {
		t.Errorf("after Seek(3): batches differ from the stream's 3..5 or Step() = %d, want 6", d.Step())
	}
	// Seek(0) rewinds to the start; Seek(-1) names the bad step.
	if err := d.Seek(0); err != nil {
		t.Errorf("Seek(0): %v", err)
	} else if got := batches(d, 1); !slices.Equal(got[0], a[0]) {
		t.Error("after Seek(0): batch differs from the stream's first")
	}
	if err := d.Seek(-1); err == nil || !strings.Contains(err.Error(), "-1") {
		t.Errorf("Seek(-1): error %v, want one naming -1", err)
	}
	if _, err := NewDataset(set, 0, 1); err == nil || !strings.Contains(err.Error(), "batch size 0") {
		t.Errorf("NewDataset(batch 0): error %v, want one naming the size", err)
	}
}

// TestPinwheelDensityMatchesSamples checks the pinwheel's change-of-variables
// density against its sampler: the probability of each 1×1 square of
// [−6, 6)², integrated on a grid of step 0.1, equals the share of 10⁶
// samples that fall in it, within 4.5 binomial standard errors (and 10⁻⁴
// for the integration). Dropping the Jacobian factor (about ±7 %), turning
// the twist the other way or missing the folded arms' second roots moves
// squares' probabilities by far more.
func TestPinwheelDensityMatchesSamples(t *testing.T) {
	set, err := New("pinwheel")
	if err != nil {
		t.Fatal(err)
	}
	const n, l, side, h = 1_000_000, 6, 12, 0.1
	square := func(x, y float64) int {
		i, j := int(math.Floor(x+l)), int(math.Floor(y+l))
		if i < 0 || j < 0 || i >= side || j >= side {
			return -1
		}
		return i*side + j
	}
	counts := make([]float64, side*side)
	pts := set.Sample(rand.New(rand.NewPCG(8, 9)), n)
	for i := 0; i < len(pts); i += 2 {
		if s := square(float64(pts[i]), float64(pts[i+1])); s >= 0 {
			counts[s]++
		}
	}
	mass := make([]float64, side*side)
	for x := -l + h/2; x < l; x += h {
		for y := -l + h/2; y < l; y += h {
			logp, _ := set.LogDensity(x, y)
			mass[square(x, y)] += math.Exp(logp) * h * h
		}
	}
	worst := 0.0
	for s, c := range counts {
		freq, p := c/n, mass[s]
		se := math.Sqrt(max(p, 1/float64(n)) * (1 - p) / n)
		if z := math.Abs(freq-p) / (se + 1e-4/4.5); !(z <= 4.5) {
			t.Errorf("square [%d, %d)×[%d, %d): probability %.6f by the density, %.6f of the samples (%.1f standard errors)",
				s/side-l, s/side-l+1, s%side-l, s%side-l+1, p, freq, z)
		}
		worst = max(worst, math.Abs(freq-p))
	}
	t.Logf("largest difference between a square's probability and its sample share: %.2g", worst)
}
