package classifier_test

import (
	"testing"

	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/edlebm/edlebm/classifier"
	"github.com/edlebm/edlebm/internal/testutil"
)

// TestLifecycle holds the classifier to the project's shared
// save-and-resume check.
func TestLifecycle(t *testing.T) {
	images := quadrants(32, 1)
	x := tensors.FromFlatDataAndDimensions(images.Pixels, images.N, images.Height, images.Width, images.Channels)
	labels := make([]int32, images.N)
	for i, l := range images.Labels {
		labels[i] = int32(l)
	}
	y := tensors.FromFlatDataAndDimensions(labels, images.N)
	testutil.CheckLifecycle(t, testutil.Lifecycle[*classifier.Model, float32]{
		New: func(t testing.TB) *classifier.Model {
			m, err := classifier.New(testutil.Backend(), smallConfig())
			if err != nil {
				t.Fatal(err)
			}
			return m
		},
		Step: func(t testing.TB, m *classifier.Model) float32 {
			metrics, err := m.Trainer().TrainStep(nil, []*tensors.Tensor{x}, []*tensors.Tensor{y})
			if err != nil {
				t.Fatal(err)
			}
			return tensors.ToScalar[float32](metrics[0])
		},
		Steps: (*classifier.Model).Step,
		Save:  (*classifier.Model).Save,
		Load: func(t testing.TB, dir string) *classifier.Model {
			m, err := classifier.Load(testutil.Backend(), dir)
			if err != nil {
				t.Fatal(err)
			}
			return m
		},
	})
}
