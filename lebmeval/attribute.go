package lebmeval

import (
	"fmt"
	"path/filepath"

	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/edlebm/edlebm/datasets"
	"github.com/edlebm/edlebm/datasets/byname"
	"github.com/edlebm/edlebm/datasets/celeba"
	"github.com/edlebm/edlebm/lebm"
	"github.com/edlebm/edlebm/plots"
)

// attributeGrid writes attribute_NAME.png: the attribute direction
// d = mean z(with) − mean z(without) over the posterior latents of the
// first o.AttributeN test images, then one row per test image, decoding its
// posterior latent moved by α·d for o.InterpolationSteps values of α from
// −o.AttributeScale to +o.AttributeScale.
func attributeGrid(model *lebm.Model, test *datasets.Images, o Options, out string) error {
	n := min(o.AttributeN, test.N)
	files, err := celeba.SplitFiles(o.DataDir, byname.CelebAOptions(o.Data, "test", n))
	if err != nil {
		return err
	}
	table, err := celeba.Attributes(o.DataDir)
	if err != nil {
		return err
	}
	with, without, err := table.Select(files[:n], o.Attribute)
	if err != nil {
		return err
	}
	if len(with) == 0 || len(without) == 0 {
		return fmt.Errorf("attribute %s: %d of the first %d test images have it and %d do not; need both groups (raise Options.AttributeN)",
			o.Attribute, len(with), n, len(without))
	}
	nz := model.Config().Generator.Nz
	z, err := mapBatches(test, n, o.Batch, "posterior samples", model.PosteriorSample)
	if err != nil {
		return err
	}
	rows := make([]int, min(o.InterpolationRows, n))
	for i := range rows {
		rows[i] = i
	}
	latents := attributeLatents(z, nz, with, without, rows, attributeAlphas(o.AttributeScale, o.InterpolationSteps))
	images, err := model.Decode(tensors.FromFlatDataAndDimensions(latents, len(latents)/nz, nz))
	if err != nil {
		return err
	}
	defer images.FinalizeAll()
	fmt.Printf("attribute %s: direction from %d images with it and %d without\n", o.Attribute, len(with), len(without))
	return plots.WriteImageGrid(filepath.Join(out, "attribute_"+o.Attribute+".png"), tensors.MustCopyFlatData[float32](images),
		len(latents)/nz, test.Height, test.Width, test.Channels, o.InterpolationSteps)
}

// attributeAlphas returns steps multiples of the attribute direction,
// evenly spaced from −scale to scale.
func attributeAlphas(scale float64, steps int) []float64 {
	alphas := make([]float64, steps)
	for k := range alphas {
		alphas[k] = scale * (2*float64(k)/float64(steps-1) - 1)
	}
	return alphas
}

// attributeLatents returns, for each index r of rows, the latents
// z_r + α·d for each α of alphas, where z holds nz-dimensional latents one
// after another and d = mean(z_with) − mean(z_without).
func attributeLatents(z []float32, nz int, with, without, rows []int, alphas []float64) []float32 {
	d := make([]float64, nz)
	for _, group := range []struct {
		indices []int
		sign    float64
	}{{with, 1}, {without, -1}} {
		for _, i := range group.indices {
			for k := range nz {
				d[k] += group.sign * float64(z[i*nz+k]) / float64(len(group.indices))
			}
		}
	}
	out := make([]float32, 0, len(rows)*len(alphas)*nz)
	for _, r := range rows {
		for _, a := range alphas {
			for k := range nz {
				out = append(out, float32(float64(z[r*nz+k])+a*d[k]))
			}
		}
	}
	return out
}
