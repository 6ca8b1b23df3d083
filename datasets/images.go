// Package datasets holds the in-memory image set shared by every image loader
// of the project (MNIST, SVHN, CIFAR-10, CelebA, …) and a train.Dataset that
// serves it in shuffled, reproducible mini-batches.
package datasets

import (
	"fmt"
	"math"
)

// Images is an in-memory labelled image set.
//
// Pixels are stored NHWC (example, row, column, channel) as float32 scaled to
// [-1, 1], the range of the generators' tanh output.
type Images struct {
	// Name identifies the set in errors, logs and plots, e.g. "fashion-mnist/test".
	Name string
	// N is the number of images; Height, Width and Channels their shape.
	N, Height, Width, Channels int
	// Pixels holds N·Height·Width·Channels values in NHWC order.
	Pixels []float32
	// Labels holds one class per image, or is nil for unlabelled sets.
	Labels []int
}

// Validate checks that the dimensions are positive, that Pixels and Labels
// have the lengths the dimensions imply, and that every pixel lies in [-1, 1].
func (im *Images) Validate() error {
	if im.N <= 0 || im.Height <= 0 || im.Width <= 0 || im.Channels <= 0 {
		return fmt.Errorf("images %q: dimensions N=%d H=%d W=%d C=%d, want all positive",
			im.Name, im.N, im.Height, im.Width, im.Channels)
	}
	if want := im.N * im.ImageSize(); len(im.Pixels) != want {
		return fmt.Errorf("images %q: %d pixel values, want N·H·W·C = %d", im.Name, len(im.Pixels), want)
	}
	if im.Labels != nil && len(im.Labels) != im.N {
		return fmt.Errorf("images %q: %d labels for %d images", im.Name, len(im.Labels), im.N)
	}
	for i, v := range im.Pixels {
		// The negated comparison also catches NaN.
		if !(v >= -1 && v <= 1) {
			return fmt.Errorf("images %q: pixel value %v at flat index %d (image %d), want a value in [-1, 1]",
				im.Name, v, i, i/im.ImageSize())
		}
	}
	for i, l := range im.Labels {
		if l < 0 || l > math.MaxInt32 {
			return fmt.Errorf("images %q: label %d of image %d, want a value in [0, %d]", im.Name, l, i, math.MaxInt32)
		}
	}
	return nil
}

// Shape returns the dimensions [N, Height, Width, Channels].
func (im *Images) Shape() []int {
	return []int{im.N, im.Height, im.Width, im.Channels}
}

// ImageSize returns the number of values in one image, Height·Width·Channels.
func (im *Images) ImageSize() int {
	return im.Height * im.Width * im.Channels
}

// Image returns the pixels of image i, HWC, as a view into Pixels (not a copy).
func (im *Images) Image(i int) []float32 {
	size := im.ImageSize()
	return im.Pixels[i*size : (i+1)*size : (i+1)*size]
}

// Head returns the first n images of im (all of them when n ≤ 0 or n ≥ N)
// as a set sharing im's pixels and labels.
func (im *Images) Head(n int) *Images {
	if n <= 0 || n >= im.N {
		return im
	}
	head := *im
	head.N = n
	head.Pixels = im.Pixels[: n*im.ImageSize() : n*im.ImageSize()]
	if im.Labels != nil {
		head.Labels = im.Labels[:n:n]
	}
	return &head
}

// Subset returns a new set holding copies of the images at indices, in that
// order (indices may repeat). It errors on an index outside [0, N).
func (im *Images) Subset(indices []int) (*Images, error) {
	for _, i := range indices {
		if i < 0 || i >= im.N {
			return nil, fmt.Errorf("images %q: subset index %d, want a value in [0, %d)", im.Name, i, im.N)
		}
	}
	sub := &Images{
		Name: im.Name, N: len(indices), Height: im.Height, Width: im.Width, Channels: im.Channels,
		Pixels: make([]float32, 0, len(indices)*im.ImageSize()),
	}
	if im.Labels != nil {
		sub.Labels = make([]int, 0, len(indices))
	}
	for _, i := range indices {
		sub.Pixels = append(sub.Pixels, im.Image(i)...)
		if im.Labels != nil {
			sub.Labels = append(sub.Labels, im.Labels[i])
		}
	}
	return sub, nil
}

// Concat returns a new set named name holding copies of all images of sets,
// in order (e.g. to pool a train and a test split). The sets must share
// Height, Width and Channels, and either all or none must have labels.
func Concat(name string, sets ...*Images) (*Images, error) {
	if len(sets) == 0 {
		return nil, fmt.Errorf("concat %q: no image sets given", name)
	}
	first := sets[0]
	n := 0
	for _, s := range sets {
		if s.Height != first.Height || s.Width != first.Width || s.Channels != first.Channels {
			return nil, fmt.Errorf("concat %q: images %q are %d×%d×%d, want %d×%d×%d like %q",
				name, s.Name, s.Height, s.Width, s.Channels, first.Height, first.Width, first.Channels, first.Name)
		}
		if (s.Labels == nil) != (first.Labels == nil) {
			return nil, fmt.Errorf("concat %q: images %q and %q differ in having labels", name, first.Name, s.Name)
		}
		n += s.N
	}
	out := &Images{
		Name: name, N: n, Height: first.Height, Width: first.Width, Channels: first.Channels,
		Pixels: make([]float32, 0, n*first.ImageSize()),
	}
	if first.Labels != nil {
		out.Labels = make([]int, 0, n)
	}
	for _, s := range sets {
		out.Pixels = append(out.Pixels, s.Pixels...)
		out.Labels = append(out.Labels, s.Labels...)
	}
	return out, nil
}
