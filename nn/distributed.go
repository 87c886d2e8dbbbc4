package nn

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/device"
	"github.com/gokeras/gokeras/device/driver"
	"github.com/gokeras/gokeras/internal/sys/collective"
	"github.com/gokeras/gokeras/metrics"
	"gorgonia.org/tensor"
)

// Strategy spreads training over replicas of the model, one per process,
// the way Keras' tf.distribute strategies do: package distribute's
// MultiWorker (MPI between processes, NCCL on GPUs) is one. Its methods are
// collectives: every replica calls them in the same order with buffers of
// the same length.
type Strategy interface {
	// Rank is this replica's number, from 0 to Size()-1; Size the number of
	// replicas.
	Rank() int
	Size() int
	// AllReduceSum replaces buf, on every replica, with the element-wise
	// sum of every replica's buf; the result is the same on every replica.
	AllReduceSum(buf []float32) error
	// Bcast and BcastBytes copy root's buf into every other replica's.
	Bcast(buf []float32, root int) error
	BcastBytes(buf []byte, root int) error
}

// WithStrategy trains the model data-parallel over the replicas of s, as
// Keras' compile inside strategy.scope() does. Fit's BatchSize is then the
// global batch: each of its batches is split into one shard per replica,
// in rank order (sizes differing by at most one sample), from the same
// global shuffle; every replica computes the gradients of its shard, the
// gradients are averaged over the replicas (weighted by the shards'
// sizes: exactly the gradient of the global batch) before the one update
// every replica applies, and the loss and metrics of each step are summed
// over the replicas, so every replica reports the figures of the global
// batch. N replicas thus train what one process trains with the same
// batch size, up to the order of float32 sums.
//
// At the start of each Fit the replicas compare what they were given
// (model, compile settings, data size and shapes, Fit's options, the
// optimizer's iterations) and refuse to start, naming the difference,
// when they differ; then rank 0's weights are copied to the others, and
// without a Seed rank 0's random seed is everyone's. Only rank 0 draws
// progress (Verbose is 0 on the others). Every replica runs the callbacks
// it is given, with the same global figures, so that those that steer
// training (EarlyStopping, ReduceLROnPlateau, LearningRateScheduler) decide
// alike on every replica. SaveWeights, SaveCheckpoint and Save write on
// rank 0 only (the other ranks return nil), so ModelCheckpoint may run on
// every rank; give the other callbacks that write files (CSVLogger,
// TensorBoard) to rank 0 only. LoadWeights, LoadCheckpoint and LoadModel
// are collective: every rank reads the file, and all refuse unless all
// read the same content. A replica whose context is cancelled stops every
// replica after the same step, so that rank 0's checkpoint resumes the
// job; a standalone Evaluate stops likewise after the same batch. Evaluate, and Fit's validation, split each batch the same way and
// sum; Predict runs on every replica alone.
//
// BatchNormalization normalizes each replica's shard with that shard's
// own mean and variance, as Keras does by default (synchronized=False).
// Its moving mean and variance are, as in Keras, the mean over the
// replicas of what each replica's own updates give: in every training
// step the shards' statistics are all-reduced as the gradients are (each
// scaled by its replica's share of the global batch, then summed), on the
// model's device, and every replica then updates its moving statistics
// with that mean. The update is linear in the statistics, so with shards
// of equal size this is the mean of the moving values each replica's own
// updates would give, up to float32 rounding (where the shards of a batch
// differ by a sample, each replica's statistics weigh by its share); what
// is saved, evaluated and predicted with is that mean, and every replica
// holds the same weights, bit for bit, at every step. This costs one more
// all-reduce per step, of two floats per channel, in models with
// BatchNormalization only.
//
// On a GPU (OnDevice("/GPU:0") in each process) the strategy must sum in
// device memory (driver.DeviceAllReducer: distribute.MultiWorker's does,
// with NCCL): each replica's gradients are scaled by its share and summed
// on the step's stream, without a copy to the host.
//
// Dropout drops, on each replica, the units of its shard that one
// process drops for the whole batch (ops.StepValues carries the shard's
// first row), where Keras' replicas each draw their own.
//
// Not done yet: metrics computed on the host (every metric of package
// metrics computes on the device).
func WithStrategy(s Strategy) CompileOption {
	return func(c *compileConfig) error {
		if s == nil {
			return fmt.Errorf("WithStrategy: nil strategy")
		}
		if s.Size() < 1 || s.Rank() < 0 || s.Rank() >= s.Size() {
			return fmt.Errorf("WithStrategy: rank %d of %d replicas is not a replica", s.Rank(), s.Size())
		}
		c.strategy = s
		return nil
	}
}

// checkStrategy refuses a strategy on a device that cannot all-reduce:
// on a GPU the strategy must sum in device memory
// (driver.DeviceAllReducer: distribute.MultiWorkerStrategy, with NCCL).
func checkStrategy(s Strategy, spec device.Spec) error {
	if s == nil || spec.Kind == device.CPU {
		return nil
	}
	if _, ok := s.(driver.DeviceAllReducer); !ok || spec.Kind != device.GPU {
		return fmt.Errorf("data-parallel training (WithStrategy) on %s needs a strategy that all-reduces in device memory (driver.DeviceAllReducer, as distribute.MultiWorker's does with NCCL); a %T does not: compile with OnDevice(\"/CPU:0\")", spec.Short(), s)
	}
	return nil
}

// Strategy is the strategy given to Compile with WithStrategy, nil for
// none.
func (m *Sequential) Strategy() Strategy {
	if m == nil || m.compiled == nil {
		return nil
	}
	return m.compiled.strategy
}

// shard is replica rank's part of a global batch of idx: the batch cut
// into size pieces in rank order, whose sizes differ by at most one.
func shard(idx []int, rank, size int) []int {
	return idx[rank*len(idx)/size : (rank+1)*len(idx)/size]
}

// shardOrder is the epoch's order of this replica's samples: its shard of
// each of the epoch's batches, one after another.
func (r *fitRun) shardOrder(s Strategy) []int {
	order := make([]int, 0, len(r.order)/s.Size()+r.steps)
	for step := range r.steps {
		lo := step * r.cfg.batchSize
		idx := r.order[lo : lo+min(r.cfg.batchSize, len(r.order)-lo)]
		order = append(order, shard(idx, s.Rank(), s.Size())...)
	}
	return order
}

// reduceGradients is the machines' all-reduce (driver.MachineOptions.
// ReduceGradients): each replica's gradients, scaled by its share of the
// global batch (gradScale), summed over the replicas, in place.
func (c *compiled) reduceGradients(grads [][]float32) error {
	scale := c.gradScale
	for _, g := range grads {
		if scale != 1 {
			for i := range g {
				g[i] *= scale
			}
		}
		if err := c.strategy.AllReduceSum(g); err != nil {
			return err
		}
	}
	return nil
}

// stopNow is the error that stops Fit, or Evaluate, before its next step,
// nil to go on: ctx's error, or with a strategy, where the replicas must
// stop after the same step, ctx's error or errReplicaInterrupted once any
// replica's context was cancelled (its wish travels with each step's
// results, see reduceResults), and nil until then.
func (c *compiled) stopNow(ctx context.Context) error {
	if c.strategy == nil {
		return ctx.Err()
	}
	if c.stopAgreed {
		if err := ctx.Err(); err != nil {
			return err
		}
		return errReplicaInterrupted
	}
	c.stopWanted = ctx.Err() != nil
	return nil
}

// reduceResults sums a step's loss (times its rows) and its metrics'
// device states over the replicas, and whether any replica wants to stop
// (stopWanted, stopAgreed), adds the sums to the metrics as a
// batch of global rows, and returns the global batch's loss. ran is false
// for a replica whose shard was empty (the last, smallest batch of an
// evaluation): it adds zeros.
func (c *compiled) reduceResults(p *program, loss float64, rows, global int, ran bool) (float64, error) {
	n := 1
	for i := range c.metrics {
		n += p.metricLens[i]
	}
	buf := make([]float32, n+1) // and last, whether this replica wants to stop
	if c.stopWanted {
		buf[n] = 1
	}
	if ran {
		buf[0] = float32(loss) * float32(rows)
		off := 1
		for i, mt := range c.metrics {
			if _, ok := mt.(*outputLoss); ok { // the output's loss times its rows, as the loss
				v, err := scalarValue(p.metricReads[i])
				if err != nil {
					return 0, fmt.Errorf("%s: %w", c.metricNames[i], err)
				}
				buf[off] = float32(v) * float32(rows)
				off++
				continue
			}
			v, ok := p.metricReads[i].(*tensor.Dense)
			if !ok {
				return 0, fmt.Errorf("metric %s: its batch state is a %T, want a tensor", c.metricNames[i], p.metricReads[i])
			}
			off += copy(buf[off:off+p.metricLens[i]], v.Data().([]float32))
		}
	}
	if err := c.strategy.AllReduceSum(buf); err != nil {
		return 0, fmt.Errorf("summing the loss and metrics over the replicas: %w", err)
	}
	c.stopAgreed = c.stopAgreed || buf[n] != 0
	loss = float64(buf[0]) / float64(global)
	if math.IsNaN(loss) || math.IsInf(loss, 0) {
		return loss, nil
	}
	off := 1
	for i, mt := range c.metrics {
		if o, ok := mt.(*outputLoss); ok {
			o.mean.Add(float64(buf[off])/float64(global), float64(global))
			off++
			continue
		}
		if err := mt.(metrics.OnDevice).AddDeviceBatch(buf[off:off+p.metricLens[i]], global*p.outSteps[c.metricOut[i]]); err != nil {
			return 0, err
		}
		off += p.metricLens[i]
	}
	return loss, nil
}

// distributedFit readies a Fit with a strategy: it checks that every
// replica was given the same, then that every batch has a sample for each
// replica, and takes rank 0's seed where none was given and rank 0's
// weights.
func (m *Sequential) distributedFit(cfg *runConfig, n, steps int, validation data.Dataset, ds data.Dataset) error {
	s := m.compiled.strategy
	size := s.Size()
	seed := "not given (rank 0's random seed)"
	if cfg.seeded {
		seed = fmt.Sprint(cfg.seed)
	}
	valSamples := 0
	if validation != nil {
		valSamples = validation.Len()
	}
	desc := []string{
		"replicas: " + fmt.Sprint(size),
		"model and compile settings: " + m.describe(),
		fmt.Sprintf("training samples: %d of shape %v, labels of shape %v", n, ds.SampleShape(), ds.LabelShape()),
		fmt.Sprintf("validation samples: %d", valSamples),
		fmt.Sprintf("batch size: %d", cfg.batchSize),
		fmt.Sprintf("epochs: %d from epoch %d, step %d", cfg.epochs, cfg.initialEpoch, cfg.initialStep),
		fmt.Sprintf("steps per epoch: %d", steps),
		fmt.Sprintf("shuffle: %t", cfg.shuffle),
		"seed: " + seed,
		fmt.Sprintf("optimizer iterations: %d", m.compiled.optimizer.Iterations()),
		fmt.Sprintf("sample or class weights: %t", cfg.sampleWeight != nil || cfg.classWeight != nil),
	}
	if err := agree(s, desc); err != nil {
		return err
	}
	m.compiled.stopWanted, m.compiled.stopAgreed = false, false
	// After the agreement, so that every replica refuses alike.
	last := min(cfg.batchSize, n-(steps-1)*cfg.batchSize)
	if min(cfg.batchSize, last) < size {
		return fmt.Errorf("a batch of %d samples cannot be split over %d replicas: every replica needs a sample of each batch; use a batch size of at least %d (the last batch of an epoch has %d samples: change the batch size or StepsPerEpoch so that it has %d or more)",
			min(cfg.batchSize, last), size, size, last, size)
	}
	if !cfg.seeded {
		b := binary.LittleEndian.AppendUint64(nil, cfg.seed)
		if err := s.BcastBytes(b, 0); err != nil {
			return err
		}
		cfg.seed, cfg.seeded = binary.LittleEndian.Uint64(b), true
	}
	if err := m.syncWeights(); err != nil {
		return err
	}
	for _, w := range m.weights() {
		if err := s.Bcast(w.value.Data().([]float32), 0); err != nil {
			return fmt.Errorf("copying rank 0's weight %s: %w", w.name, err)
		}
	}
	if s.Rank() != 0 {
		cfg.verbose = 0
		return m.weightsWritten()
	}
	return nil
}

// describe is the model and its compile settings in one line: the JSON of
// its saved config, or where that cannot be written (a metric of the
// user's own has no config) its weights' names and shapes, and the names
// of the optimizer, loss and metrics.
func (m *Sequential) describe() string {
	if doc, err := m.document(false); err == nil {
		if js, err := json.Marshal(doc); err == nil {
			return string(js)
		}
	}
	var b strings.Builder
	for _, w := range m.weights() {
		fmt.Fprintf(&b, "%s %v, ", w.name, w.value.Shape())
	}
	c := m.compiled
	fmt.Fprintf(&b, "optimizer %T (learning rate %v), loss", c.optimizer, c.optimizer.LearningRate())
	for _, h := range c.heads {
		fmt.Fprintf(&b, " %s %s×%v", h.name, h.loss.Name(), h.weight)
	}
	b.WriteString(", metrics")
	for _, name := range c.metricNames {
		fmt.Fprintf(&b, " %s", name)
	}
	return b.String()
}

// agree fails on every replica unless all of them describe the run (desc,
// "name: value" lines) as rank 0 does (collective.Agree).
func agree(s Strategy, desc []string) error {
	return collective.Agree(s, desc, "every replica must be given the same model, data and options")
}
