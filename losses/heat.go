package losses

import (
	"fmt"
	"math"
)

// CategoryGraph is the structure of a categorical column's perturbation:
// the graph over its K categories on which the heat equation moves a
// value, as energy discrepancy on mixed data perturbs categories
// (Schröder, Ou, Li, Duncan, NeurIPS 2024): q_t = exp(tR) with the rate
// matrix R = −L, L the graph's Laplacian with unit edge weights.
type CategoryGraph string

// The structures of CategoryGraph.
const (
	// Uniform: any category to any other (the complete graph):
	// q_t(b|a) = 1/K + e^{−Kt}(δ_ab − 1/K).
	Uniform CategoryGraph = "uniform"
	// Ordinal: categories in order, a value moving to its neighbours only
	// (a path): eigenvalues 2(cos(πp/K) − 1), eigenvectors the DCT-II
	// basis.
	Ordinal CategoryGraph = "ordinal"
	// Cyclical: categories on a ring (months, weekdays): eigenvalues
	// 2(cos(2πp/K) − 1), eigenvectors Fourier's. For K = 2 the ring's two
	// edges join the same pair: twice the path's rate.
	Cyclical CategoryGraph = "cyclical"
)

// CategoryGraphs lists the structures.
var CategoryGraphs = []CategoryGraph{Uniform, Ordinal, Cyclical}

// HeatKernel returns q_t = exp(tR) for k categories on graph g, row-major
// k×k: row a is the distribution of the category after time t from a.
// It is symmetric and doubly stochastic (every graph's Laplacian is
// symmetric), computed in closed form from the graph's spectrum.
func HeatKernel(g CategoryGraph, k int, t float64) ([]float64, error) {
	if k < 1 || !(t >= 0) || math.IsInf(t, 1) {
		return nil, fmt.Errorf("losses: heat kernel of %d categories at time %v: want k ≥ 1 and a finite t ≥ 0", k, t)
	}
	q := make([]float64, k*k)
	kf := float64(k)
	switch g {
	case Uniform:
		decay := math.Exp(-kf * t)
		for a := range k {
			for b := range k {
				q[a*k+b] = (1 - decay) / kf
			}
			q[a*k+a] += decay
		}
	case Ordinal:
		for p := range k {
			decay := math.Exp(t * 2 * (math.Cos(math.Pi*float64(p)/kf) - 1))
			for a := range k {
				for b := range k {
					q[a*k+b] += decay * dctBasis(p, a, k) * dctBasis(p, b, k)
				}
			}
		}
	case Cyclical:
		for p := range k {
			decay := math.Exp(t * 2 * (math.Cos(2*math.Pi*float64(p)/kf) - 1))
			for a := range k {
				for b := range k {
					q[a*k+b] += decay * math.Cos(2*math.Pi*float64(p*(a-b))/kf) / kf
				}
			}
		}
	default:
		return nil, fmt.Errorf("losses: category graph %q, want one of %v", g, CategoryGraphs)
	}
	for i, v := range q { // rounding can leave −1e-17 where the kernel is 0
		q[i] = max(v, 0)
	}
	return q, nil
}

// dctBasis is the path Laplacian's p-th orthonormal eigenvector at a:
// the DCT-II basis √(2/K) cos(πp(a + ½)/K), 1/√K for p = 0.
func dctBasis(p, a, k int) float64 {
	kf := float64(k)
	if p == 0 {
		return 1 / math.Sqrt(kf)
	}
	return math.Sqrt(2/kf) * math.Cos(math.Pi*float64(p)*(float64(a)+0.5)/kf)
}
