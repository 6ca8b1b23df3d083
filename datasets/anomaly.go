package datasets

import (
	"fmt"
	"math/rand/v2"
)

// AnomalySplit is the held-out-class anomaly-detection protocol of the
// latent EBM papers (Pang et al. 2020, followed by the paper's
// anomaly-detection experiment): Train holds normal images only; Test
// holds the remaining normal images and every image of the held-out class, with
// Anomalous[i] telling which test image is an anomaly.
type AnomalySplit struct {
	Train, Test *Images
	Anomalous   []bool
}

// NewAnomalySplit pools all images (e.g. MNIST's train and test splits
// joined with Concat), removes the class heldOut, shuffles the normal
// images with seed and puts the fraction trainFraction of them (0.8 in the
// papers) in Train; Test gets the other normal images followed by every
// image of the held-out class. The papers shuffle with NumPy's seed 42; Go's
// generator gives a different (equally random) order, so the split is the
// same protocol, not the same images.
func NewAnomalySplit(pool *Images, heldOut int, seed uint64, trainFraction float64) (*AnomalySplit, error) {
	if pool.Labels == nil {
		return nil, fmt.Errorf("anomaly split of %s: the images have no labels", pool.Name)
	}
	if !(trainFraction > 0 && trainFraction < 1) {
		return nil, fmt.Errorf("anomaly split of %s: training fraction %v: want a number in (0, 1)", pool.Name, trainFraction)
	}
	var normal, anomalies []int
	for i, label := range pool.Labels {
		if label == heldOut {
			anomalies = append(anomalies, i)
		} else {
			normal = append(normal, i)
		}
	}
	if len(anomalies) == 0 {
		return nil, fmt.Errorf("anomaly split of %s: no image has the held-out class %d", pool.Name, heldOut)
	}
	rng := rand.New(rand.NewPCG(seed, uint64(heldOut)))
	rng.Shuffle(len(normal), func(i, j int) { normal[i], normal[j] = normal[j], normal[i] })
	nTrain := int(trainFraction * float64(len(normal)))
	if nTrain == 0 || nTrain == len(normal) {
		return nil, fmt.Errorf("anomaly split of %s: %d normal images leave an empty side at fraction %v", pool.Name, len(normal), trainFraction)
	}
	train, err := pool.Subset(normal[:nTrain])
	if err != nil {
		return nil, err
	}
	test, err := pool.Subset(append(append([]int(nil), normal[nTrain:]...), anomalies...))
	if err != nil {
		return nil, err
	}
	train.Name = fmt.Sprintf("%s/anomaly-%d/train", pool.Name, heldOut)
	test.Name = fmt.Sprintf("%s/anomaly-%d/test", pool.Name, heldOut)
	anomalous := make([]bool, test.N)
	for i := len(normal) - nTrain; i < test.N; i++ {
		anomalous[i] = true
	}
	return &AnomalySplit{Train: train, Test: test, Anomalous: anomalous}, nil
}

// PaperAnomalySplit is the papers' protocol on a data set's two splits:
// pool them, hold the class heldOut out, shuffle with seed 42 and train on
// 80 % of the normal images (see NewAnomalySplit).
func PaperAnomalySplit(train, test *Images, heldOut int) (*AnomalySplit, error) {
	pool, err := Concat(train.Name+"+"+test.Name, train, test)
	if err != nil {
		return nil, err
	}
	return NewAnomalySplit(pool, heldOut, 42, 0.8)
}
