package vectors

import (
	"math"
	"math/rand/v2"
	"slices"
)

// MedianNeighbourDistance is the median, over up to queries rows of s
// chosen by a PCG generator seeded with seed (all rows when s has no more),
// of the Euclidean distance from a row to the nearest row of s that
// differs from it: the typical gap between neighbouring rows, which
// repeated rows do not shrink. It is 0 when s has fewer than two distinct
// rows. The cost is queries·N·D.
func (s *Set) MedianNeighbourDistance(queries int, seed uint64) float64 {
	rows := rand.New(rand.NewPCG(seed, 0)).Perm(s.N)
	rows = rows[:min(queries, s.N)]
	var gaps []float64
	for _, i := range rows {
		if gap := s.nearestDistinct(i); gap > 0 {
			gaps = append(gaps, gap)
		}
	}
	if len(gaps) == 0 {
		return 0
	}
	slices.Sort(gaps)
	if n := len(gaps); n%2 == 0 {
		return (gaps[n/2-1] + gaps[n/2]) / 2
	}
	return gaps[len(gaps)/2]
}

// nearestDistinct is the distance from row i to the nearest row of s that
// differs from it, or 0 when none does.
func (s *Set) nearestDistinct(i int) float64 {
	x, best := s.Row(i), math.Inf(1)
	for j := range s.N {
		var d2 float64
		for k, v := range s.Row(j) {
			d := v - x[k]
			d2 += d * d
		}
		if d2 > 0 && d2 < best {
			best = d2
		}
	}
	if math.IsInf(best, 1) {
		return 0
	}
	return math.Sqrt(best)
}
