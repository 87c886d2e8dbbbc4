package nn

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/metrics"
	"github.com/gokeras/gokeras/optim"
	"gorgonia.org/tensor"
)

// The CPU's machines run each step at once, so Fit never pipelines there;
// these tests make it take the pipelined path anyway (pipelineAlways),
// where the steps run at StartTrain and their results are taken a step
// late, to check the order of Fit's work. The GPU tests of device/cuda
// check that the pipelined steps give the same numbers.

// alwaysPipeline makes Fit pipeline on the CPU for the rest of the test.
func alwaysPipeline(t *testing.T) {
	t.Helper()
	pipelineAlways = true
	t.Cleanup(func() { pipelineAlways = false })
}

// hookLog records the hooks it sees and, at each batch's end, how many
// steps the optimizer had started; stopAt and cancel act at a batch's
// end. async is what its AsyncBatchHooks says.
type hookLog struct {
	CallbackBase
	async   bool
	events  []string
	started []int64
	stopAt  int
	cancel  func()
}

func (h *hookLog) AsyncBatchHooks() bool { return h.async }

func (h *hookLog) OnEpochBegin(e int, _ Logs) error {
	h.events = append(h.events, fmt.Sprintf("epoch_begin %d", e))
	return nil
}

func (h *hookLog) OnEpochEnd(e int, l Logs) error {
	h.events = append(h.events, fmt.Sprintf("epoch_end %d loss=%v", e, l["loss"]))
	return nil
}

func (h *hookLog) OnTrainBatchBegin(b int, _ Logs) error {
	h.events = append(h.events, fmt.Sprintf("batch_begin %d", b))
	return nil
}

func (h *hookLog) OnTrainBatchEnd(b int, l Logs) error {
	h.events = append(h.events, fmt.Sprintf("batch_end %d loss=%v accuracy=%v", b, l["loss"], l["accuracy"]))
	h.started = append(h.started, h.Model.Optimizer().Iterations())
	if b == h.stopAt {
		if h.cancel != nil {
			h.cancel()
		} else {
			h.Model.StopTraining()
		}
	}
	return nil
}

// pipelineModel is a 10-class softmax regression on 4 features, with
// accuracy (computed on the device), and its data: 70 samples, 3 steps
// at batch 32, the last of 6 samples with a machine of its own. A NaN in
// sample nanAt (none when negative) makes that step's loss NaN.
func pipelineModel(t *testing.T, nanAt int) (*Sequential, data.Dataset) {
	t.Helper()
	opt, err := optim.NewSGD(optim.SGDConfig{LearningRate: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	m := NewSequential(layers.Input(4), layers.Dense(10, layers.Softmax))
	m.SetSeed(1)
	if err := m.Compile(opt, losses.SparseCategoricalCrossentropy{}, []metrics.Metric{metrics.NewAccuracy()}, OnDevice("/CPU:0")); err != nil {
		t.Fatal(err)
	}
	const n = 70
	rng := rand.New(rand.NewPCG(1, 1))
	x, y := make([]float32, n*4), make([]float32, n)
	for i := range y {
		y[i] = float32(i % 10)
		for j := range 4 {
			x[i*4+j] = y[i]/5 + float32(rng.NormFloat64())
		}
	}
	if nanAt >= 0 {
		x[nanAt*4] = float32(math.NaN())
	}
	ds, err := data.TensorData(tensor.New(tensor.WithShape(n, 4), tensor.WithBacking(x)), tensor.New(tensor.WithShape(n, 1), tensor.WithBacking(y)))
	if err != nil {
		t.Fatal(err)
	}
	return m, ds
}

// TestPipelinedFitKeepsHooksAndFigures: pipelined, the hooks come in the
// same order with the same figures as step by step, the weights end the
// same, and at each batch's end the next step has started, but for an
// epoch's last two steps (the last has a machine of its own, so the one
// before it is finished first).
func TestPipelinedFitKeepsHooksAndFigures(t *testing.T) {
	run := func(pipelined bool) (*hookLog, []*tensor.Dense) {
		m, ds := pipelineModel(t, -1)
		h := &hookLog{async: true, stopAt: -1}
		if _, err := m.Fit(context.Background(), ds, Epochs(2), Seed(2), Verbose(0), Shuffle(true), Callbacks(h)); err != nil {
			t.Fatal(err)
		}
		w, err := m.GetWeights()
		if err != nil {
			t.Fatal(err)
		}
		return h, w
	}
	step, stepW := run(false)
	alwaysPipeline(t)
	pipe, pipeW := run(true)
	if !slices.Equal(pipe.events, step.events) {
		t.Errorf("hooks pipelined:\n%s\nstep by step:\n%s", strings.Join(pipe.events, "\n"), strings.Join(step.events, "\n"))
	}
	if want := []int64{1, 2, 3, 4, 5, 6}; !slices.Equal(step.started, want) {
		t.Errorf("step by step, steps started at each batch's end: %v, want %v", step.started, want)
	}
	if want := []int64{2, 2, 3, 5, 5, 6}; !slices.Equal(pipe.started, want) {
		t.Errorf("pipelined, steps started at each batch's end: %v, want %v", pipe.started, want)
	}
	for i := range stepW {
		if !slices.Equal(pipeW[i].Data().([]float32), stepW[i].Data().([]float32)) {
			t.Errorf("weight %d differs", i)
		}
	}
}

// TestPipelinedFitNeedsEveryCallbackAsync: one callback that does not
// allow its hooks to lag keeps Fit step by step.
func TestPipelinedFitNeedsEveryCallbackAsync(t *testing.T) {
	alwaysPipeline(t)
	m, ds := pipelineModel(t, -1)
	async, sync := &hookLog{async: true, stopAt: -1}, &hookLog{stopAt: -1}
	if _, err := m.Fit(context.Background(), ds, Epochs(1), Seed(2), Verbose(0), Callbacks(async, sync)); err != nil {
		t.Fatal(err)
	}
	if want := []int64{1, 2, 3}; !slices.Equal(async.started, want) {
		t.Errorf("steps started at each batch's end: %v, want %v (step by step)", async.started, want)
	}
	m, ds = pipelineModel(t, -1)
	async = &hookLog{async: true, stopAt: -1}
	if _, err := m.Fit(context.Background(), ds, Epochs(1), Seed(2), Verbose(0), Callbacks(async), PipelineSteps(false)); err != nil {
		t.Fatal(err)
	}
	if want := []int64{1, 2, 3}; !slices.Equal(async.started, want) {
		t.Errorf("PipelineSteps(false): steps started at each batch's end: %v, want %v (step by step)", async.started, want)
	}
}

// TestPipelinedFitStops: a stop asked for at a batch's end, by
// StopTraining or by cancelling Fit's context, takes effect after the
// step already started, which finishes with its hooks; the optimizer has
// counted exactly the steps whose hooks ran, and InterruptedError says
// so.
func TestPipelinedFitStops(t *testing.T) {
	alwaysPipeline(t)
	m, ds := pipelineModel(t, -1)
	h := &hookLog{async: true, stopAt: 0}
	hist, err := m.Fit(context.Background(), ds, Epochs(3), Seed(2), Verbose(0), Callbacks(h))
	if err != nil {
		t.Fatal(err)
	}
	if len(hist.Epochs) != 1 || len(h.started) != 2 || m.Optimizer().Iterations() != 2 {
		t.Errorf("StopTraining at batch 0: epochs %v, %d batch ends, %d steps; want 1 epoch, batches 0 and 1, 2 steps:\n%s",
			hist.Epochs, len(h.started), m.Optimizer().Iterations(), strings.Join(h.events, "\n"))
	}

	m, ds = pipelineModel(t, -1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h = &hookLog{async: true, stopAt: 0, cancel: cancel}
	_, err = m.Fit(ctx, ds, Epochs(3), Seed(2), Verbose(0), Callbacks(h))
	var ie *InterruptedError
	if !errors.As(err, &ie) || ie.Epoch != 0 || ie.Step != 2 {
		t.Fatalf("cancelled at batch 0: %v, want an InterruptedError at epoch 0 step 2", err)
	}
	if len(h.started) != 2 || m.Optimizer().Iterations() != 2 {
		t.Errorf("cancelled at batch 0: %d batch ends, %d steps; want 2 and 2", len(h.started), m.Optimizer().Iterations())
	}
}

// TestPipelinedFitNaN: a NaN loss is reported at its own step, after the
// step started behind it has finished, so that none is left running; the
// model trains again afterwards.
func TestPipelinedFitNaN(t *testing.T) {
	for _, pipelined := range []bool{false, true} {
		t.Run(fmt.Sprintf("pipelined=%t", pipelined), func(t *testing.T) {
			if pipelined {
				alwaysPipeline(t)
			}
			m, ds := pipelineModel(t, 3) // in the first step, unshuffled
			_, err := m.Fit(context.Background(), ds, Epochs(1), Shuffle(false), Verbose(0))
			if !errors.Is(err, ErrNonFiniteLoss) || !strings.Contains(err.Error(), "step 1/3") {
				t.Fatalf("Fit: %v, want ErrNonFiniteLoss at step 1/3", err)
			}
			want := int64(1)
			if pipelined {
				want = 2 // the second step started before the first's loss was read
			}
			if got := m.Optimizer().Iterations(); got != want {
				t.Errorf("%d steps run, want %d", got, want)
			}
			// The weights are NaN now: the next Fit fails the same way,
			// at its first step, with no step of the last one in the way.
			_, clean := pipelineModel(t, -1)
			if _, err := m.Fit(context.Background(), clean, Epochs(1), Verbose(0)); !errors.Is(err, ErrNonFiniteLoss) || !strings.Contains(err.Error(), "step 1/3") {
				t.Errorf("Fit after the NaN: %v, want ErrNonFiniteLoss at step 1/3", err)
			}
		})
	}
}

// epochsOnly defines no batch hook: CallbackBase's run.
type epochsOnly struct {
	CallbackBase
	ends int
}

func (e *epochsOnly) OnEpochEnd(int, Logs) error { e.ends++; return nil }

// batchEnds overrides a batch hook without saying it may lag.
type batchEnds struct {
	CallbackBase
	ends int
}

func (b *batchEnds) OnTrainBatchEnd(int, Logs) error { b.ends++; return nil }

// TestPipelinedFitSeesInheritedBatchHooks: a callback whose batch hooks
// are CallbackBase's lets Fit pipeline once they have run (the first
// batch is step by step); one that overrides a batch hook keeps Fit step
// by step.
func TestPipelinedFitSeesInheritedBatchHooks(t *testing.T) {
	alwaysPipeline(t)
	for _, c := range []struct {
		name string
		cb   Callback
		want []int64
	}{
		{"epoch hooks only", &epochsOnly{}, []int64{1, 2, 3, 5, 5, 6}},
		{"a batch hook", &batchEnds{}, []int64{1, 2, 3, 4, 5, 6}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, ds := pipelineModel(t, -1)
			h := &hookLog{async: true, stopAt: -1}
			if _, err := m.Fit(context.Background(), ds, Epochs(2), Seed(2), Verbose(0), Callbacks(h, c.cb)); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(h.started, c.want) {
				t.Errorf("steps started at each batch's end: %v, want %v", h.started, c.want)
			}
		})
	}
}
