package lebm

import (
	"fmt"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/distributed"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/train"
)

// ShardAxis names the device-mesh axis that ShardedBatches splits batches
// over.
const ShardAxis = "batch"

// ShardedBatches makes a train.Dataset of image batches (a train-lebm
// batch source, say) a train.DistributedDataset, for data-parallel
// training with GoMLX's train.Loop over Model.Trainer: each batch is split
// along its first axis over the devices of a one-axis mesh, with GoMLX's
// AutoSharding strategy. XLA partitions the one training program: the
// variables and the optimizer state stay replicated, the posterior chains
// and losses run on each device's examples, and the gradients and metrics
// are reduced across devices. The logical computation is the single-device
// one — the same images per step, the same random draws (one stream,
// partitioned) — so N devices follow single-device training up to the
// order of floating-point sums.
type ShardedBatches struct {
	train.Dataset
	spec *distributed.ShardingSpec
}

// NewShardedBatches splits the batches of ds over the first devices
// devices (≥ 1) of the backend that runs the loop; every batch size must
// be a multiple of devices.
func NewShardedBatches(ds train.Dataset, devices int) (*ShardedBatches, error) {
	mesh, err := distributed.NewDeviceMesh([]int{devices}, []string{ShardAxis})
	if err != nil {
		return nil, fmt.Errorf("lebm: a mesh of %d devices: %w", devices, err)
	}
	spec, err := distributed.NewShardingSpec(mesh, distributed.AxisSpec{ShardAxis})
	if err != nil {
		return nil, fmt.Errorf("lebm: sharding over %d devices: %w", devices, err)
	}
	return &ShardedBatches{Dataset: ds, spec: spec}, nil
}

// Devices returns the number of devices the batches are split over.
func (s *ShardedBatches) Devices() int { return s.spec.Mesh.NumDevices() }

// Strategy implements train.DistributedDataset: AutoSharding.
func (s *ShardedBatches) Strategy() distributed.Strategy { return distributed.AutoSharding }

// DeviceAssignment implements train.DistributedDataset: the backend's
// first devices, in order.
func (s *ShardedBatches) DeviceAssignment() []backends.DeviceNum { return nil }

// shardedSpec keys the trainer's compiled steps split over devices
// devices apart from its single-device ones: a model may take both.
type shardedSpec struct {
	inner   any
	devices int
}

// DistributedYield implements train.DistributedDataset: the next batch of
// the dataset, inputs and labels split along their first axis.
func (s *ShardedBatches) DistributedYield() (spec any, inputs, labels []*distributed.Tensor, err error) {
	spec, in, lab, err := s.Dataset.Yield()
	if err != nil {
		return nil, nil, nil, err
	}
	defer finalize(in)
	defer finalize(lab)
	spec = shardedSpec{spec, s.Devices()}
	if inputs, err = s.shard(in); err != nil {
		return nil, nil, nil, err
	}
	if labels, err = s.shard(lab); err != nil {
		return nil, nil, nil, err
	}
	return spec, inputs, labels, nil
}

// shard splits each tensor of ts along its first axis (into new tensors).
func (s *ShardedBatches) shard(ts []*tensors.Tensor) ([]*distributed.Tensor, error) {
	out := make([]*distributed.Tensor, len(ts))
	for i, t := range ts {
		if n := t.Shape().Dimensions[0]; n%s.Devices() != 0 {
			return nil, fmt.Errorf("lebm: a batch of %d does not split over %d devices: want a batch size that is a multiple of the device count", n, s.Devices())
		}
		sharded, err := distributed.ShardTensor(s.spec, t)
		if err != nil {
			return nil, fmt.Errorf("lebm: splitting a batch of shape %s over %d devices: %w", t.Shape(), s.Devices(), err)
		}
		out[i] = sharded
	}
	return out, nil
}

// TrainStepSharded is TrainStep with the images x split over the first
// devices devices of the model's backend, as ShardedBatches splits them:
// the same step, computed data-parallel.
func (m *Model) TrainStepSharded(x *tensors.Tensor, devices int) (metrics StepMetrics, err error) {
	step := m.Step()
	what := fmt.Sprintf("training step %d over %d devices", step+1, devices)
	if err := m.checkImages(what, x); err != nil {
		return StepMetrics{}, err
	}
	if available := m.backend.NumDevices(); devices > available {
		return StepMetrics{}, fmt.Errorf("lebm: %s: the backend has %d device(s)", what, available)
	}
	sharded, err := NewShardedBatches(nil, devices)
	if err != nil {
		return StepMetrics{}, err
	}
	outs, err := func() (outs []*tensors.Tensor, err error) {
		defer recoverError(&err, what)
		inputs, err := sharded.shard([]*tensors.Tensor{x})
		if err != nil {
			return nil, err
		}
		defer func() {
			for _, t := range inputs {
				_ = t.Finalize()
			}
		}()
		return m.trainer.DistributedTrainStep(sharded.Strategy(), nil, shardedSpec{nil, devices}, inputs, nil)
	}()
	if err != nil {
		return StepMetrics{}, fmt.Errorf("lebm: %s: %w", what, err)
	}
	defer finalize(outs)
	return m.ReadStepMetrics(outs)
}
