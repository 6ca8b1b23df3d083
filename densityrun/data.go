package densityrun

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"

	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/train"

	"github.com/edlebm/edlebm/datasets/vectors"
)

// DataFile records, in a run folder, which file the run read, how, which
// rows it trains on and which it holds out, and the standardisation.
const DataFile = "data.json"

// dataRecord is DataFile's content.
type dataRecord struct {
	Version      int                  `json:"version"`
	File         string               `json:"file"`
	Read         vectors.ReadOptions  `json:"read"`
	N            int                  `json:"rows"`
	D            int                  `json:"dim"`
	TestFraction float64              `json:"test_fraction"`
	Seed         int64                `json:"seed"`
	Train        []int                `json:"train_rows"`
	Test         []int                `json:"test_rows"`
	Standardizer vectors.Standardizer `json:"standardizer"`
}

// runData are a run's vectors: the whole file, its two sets, and the
// standardised training and test points.
type runData struct {
	record      dataRecord
	all         *vectors.Set
	train, test *vectors.Set
	trainPoints []float32
	testPoints  []float32
}

// openData reads the file and its split: the one recorded in the run
// folder, or a new one (isNew), to record once the folder is claimed.
func openData(o Options) (d *runData, isNew bool, err error) {
	recordPath := filepath.Join(o.Out, DataFile)
	var rec dataRecord
	raw, err := os.ReadFile(recordPath)
	switch {
	case err == nil:
		if err := json.Unmarshal(raw, &rec); err != nil || rec.Version != 1 {
			return nil, false, fmt.Errorf("%s: a damaged data record (%v); move the run away to start afresh", recordPath, err)
		}
		if o.Data != "" && o.Data != rec.File {
			return nil, false, fmt.Errorf("Options.Data %s: the run in %s trained on %s", o.Data, o.Out, rec.File)
		}
	case errors.Is(err, fs.ErrNotExist):
		if o.Data == "" {
			return nil, false, errors.New("Options.Data: required: the CSV, .npy or .npz file of vectors")
		}
		abs, err := filepath.Abs(o.Data)
		if err != nil {
			return nil, false, err
		}
		rec = dataRecord{Version: 1, File: abs, Read: o.Read, TestFraction: o.TestFraction, Seed: o.Seed}
		isNew = true
	default:
		return nil, false, err
	}
	all, err := vectors.Read(rec.File, rec.Read)
	if err != nil {
		return nil, false, fmt.Errorf("Options.Data: %w", err)
	}
	if isNew {
		if rec.Train, rec.Test, err = all.Split(rec.TestFraction, uint64(rec.Seed)); err != nil {
			return nil, false, fmt.Errorf("Options.TestFraction: %w", err)
		}
		rec.N, rec.D = all.N, all.D
		rec.Standardizer = vectors.Fit(all.Subset(rec.Train))
	} else if err := rec.check(all); err != nil {
		return nil, false, fmt.Errorf("%s: %w", recordPath, err)
	}
	d = &runData{record: rec, all: all, train: all.Subset(rec.Train), test: all.Subset(rec.Test)}
	d.trainPoints, d.testPoints = rec.Standardizer.Apply(d.train), rec.Standardizer.Apply(d.test)
	return d, isNew, nil
}

// check reports whether a recorded split still fits the file.
func (r dataRecord) check(all *vectors.Set) error {
	if all.N != r.N || all.D != r.D {
		return fmt.Errorf("the run split %s's %d rows of %d values, the file now has %d of %d", r.File, r.N, r.D, all.N, all.D)
	}
	for _, i := range slices.Concat(r.Train, r.Test) {
		if i < 0 || i >= r.N {
			return fmt.Errorf("row %d recorded, the file has %d", i, r.N)
		}
	}
	if len(r.Train) == 0 || len(r.Test) == 0 {
		return fmt.Errorf("%d training and %d test rows recorded", len(r.Train), len(r.Test))
	}
	return r.Standardizer.Check(r.D)
}

// write records the data in the run folder.
func (r dataRecord) write(out string) error {
	return writeJSON(filepath.Join(out, DataFile), r)
}

// pointBatches serves standardised points [B, d] in batches, shuffled per
// epoch by a PCG generator seeded with (seed, epoch), the last partial
// batch dropped: a train.Dataset whose position depends only on the step,
// so a resumed run sees the batches an uninterrupted one would.
type pointBatches struct {
	points      []float32
	n, d, batch int
	seed        uint64
	epoch, next int
	order       []int
}

var _ train.Dataset = (*pointBatches)(nil)

func newPointBatches(points []float32, d, batch int, seed uint64) (*pointBatches, error) {
	n := len(points) / d
	if batch < 1 || batch > n {
		return nil, fmt.Errorf("Options.Batch %d: want a value in [1, %d], the training rows", batch, n)
	}
	p := &pointBatches{points: points, n: n, d: d, batch: batch, seed: seed}
	p.seek(0)
	return p, nil
}

func (p *pointBatches) Name() string { return "vectors" }

// perEpoch is the number of batches in an epoch.
func (p *pointBatches) perEpoch() int { return p.n / p.batch }

// seek positions the stream at training step step.
func (p *pointBatches) seek(step int) {
	p.epoch, p.next = step/p.perEpoch(), step%p.perEpoch()*p.batch
	p.order = rand.New(rand.NewPCG(p.seed, uint64(p.epoch))).Perm(p.n)
}

// Yield returns the next batch; at an epoch's end it moves on to the next
// epoch itself, so the loop never sees io.EOF.
func (p *pointBatches) Yield() (spec any, inputs, labels []*tensors.Tensor, err error) {
	if p.next+p.batch > p.n {
		p.seek((p.epoch + 1) * p.perEpoch())
	}
	buf := make([]float32, 0, p.batch*p.d)
	for _, i := range p.order[p.next : p.next+p.batch] {
		buf = append(buf, p.points[i*p.d:(i+1)*p.d]...)
	}
	p.next += p.batch
	return nil, []*tensors.Tensor{tensors.FromFlatDataAndDimensions(buf, p.batch, p.d)}, nil, nil
}

func (p *pointBatches) Reset() {}
