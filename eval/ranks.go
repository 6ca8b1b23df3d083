package eval

import (
	"cmp"
	"errors"
	"math"
	"slices"
)

// RankShare compares two samples by ranks (the Mann–Whitney U statistic):
// share is the fraction of pairs (a, b), a from a and b from b, with
// a > b, ties counting one half — 0.5 when neither sample tends to exceed
// the other; z is share's distance from 0.5 in standard errors under the
// hypothesis that both samples come from one distribution (normal
// approximation, with the correction for ties), large and positive when a
// tends to exceed b. The cost is O((n+m) log(n+m)); values must not be NaN.
func RankShare(a, b []float64) (share, z float64, err error) {
	if len(a) == 0 || len(b) == 0 {
		return 0, 0, errors.New("eval: RankShare: an empty sample")
	}
	type value struct {
		v     float64
		fromA bool
	}
	all := make([]value, 0, len(a)+len(b))
	for _, v := range a {
		all = append(all, value{v, true})
	}
	for _, v := range b {
		all = append(all, value{v, false})
	}
	if slices.ContainsFunc(all, func(x value) bool { return math.IsNaN(x.v) }) {
		return 0, 0, errors.New("eval: RankShare: a NaN value")
	}
	slices.SortFunc(all, func(x, y value) int { return cmp.Compare(x.v, y.v) })
	n, m, total := float64(len(a)), float64(len(b)), float64(len(all))
	var rankSumA, ties float64 // ties: Σ (t³ − t) over groups of t equal values
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].v == all[i].v {
			j++
		}
		midRank := float64(i+j+1) / 2 // ranks i+1 … j, averaged
		for _, x := range all[i:j] {
			if x.fromA {
				rankSumA += midRank
			}
		}
		t := float64(j - i)
		ties += t*t*t - t
		i = j
	}
	u := rankSumA - n*(n+1)/2
	share = u / (n * m)
	variance := n * m / 12 * (total + 1 - ties/(total*(total-1)))
	if variance <= 0 { // every value equal
		return share, 0, nil
	}
	return share, (u - n*m/2) / math.Sqrt(variance), nil
}
