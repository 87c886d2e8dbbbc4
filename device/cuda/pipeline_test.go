//go:build cudavm && cgo

package cuda

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/internal/modeltest"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/metrics"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/optim"
	"gorgonia.org/tensor"
)

// batchRecord is what a callback saw at a batch's end.
type batchRecord struct {
	epoch, batch int
	logs         nn.Logs
	// iterations is the optimizer's count of steps started by then.
	iterations int64
}

// batchRecorder records every batch's end; it allows its hooks to run a
// step late (nn.AsyncBatchHooks), so Fit may pipeline.
type batchRecorder struct {
	nn.CallbackBase
	epoch   int
	batches []batchRecord
}

func (r *batchRecorder) AsyncBatchHooks() bool { return true }

func (r *batchRecorder) OnEpochBegin(epoch int, _ nn.Logs) error { r.epoch = epoch; return nil }

func (r *batchRecorder) OnTrainBatchEnd(batch int, logs nn.Logs) error {
	r.batches = append(r.batches, batchRecord{epoch: r.epoch, batch: batch, logs: logs, iterations: r.Model.Optimizer().Iterations()})
	return nil
}

// TestPipelinedFitMatchesStepByStep fits the same model from the same
// weights on /GPU:0 twice: with the steps pipelined (each started before
// the one before is finished, as Fit does on a GPU) and step by step
// (nn.PipelineSteps(false)). Every batch's figures, the history and the
// weights must be the same bit for bit, and the pipelined run must really
// have overlapped: at each batch's end but an epoch's last, the next step
// was already started. On the emulated GPU, whose streams run only when
// waited for, a host that reused a buffer the step still needed would
// change the results.
func TestPipelinedFitMatchesStepByStep(t *testing.T) {
	needGPU(t)
	for _, c := range []struct {
		name             string
		model            func(layers.Activation) *nn.Sequential
		samples, batch   int
		steps, lastSteps int // per epoch; the last ones with machines of their own
	}{
		// 15 full batches and one of 20, which has a machine of its own.
		{"mlp batch 32", mlpModel, 500, 32, 16, 2},
		// Batches of 4.9 MB, over what other copies stage in pinned
		// memory: two of 400 and one of 200.
		{"mlp batch 400", mlpModel, 1000, 400, 3, 2},
		// Dropout, whose step values are an input of each step.
		{"cnn", cnnModel, 200, 32, 7, 2},
		// BatchNormalization, whose moving statistics each step updates
		// on the device from the batch's (MovingAverage steps).
		{"batchnorm+layernorm", normModel, 200, 32, 7, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			ds := modeltest.Blobs(t, c.samples, []int{32, 32, 3}, 1)
			pipeH, pipeB, pipeW := fitRecorded(t, c.model, ds, c.batch, true)
			stepH, stepB, stepW := fitRecorded(t, c.model, ds, c.batch, false)
			if len(pipeB) != 2*c.steps || len(stepB) != 2*c.steps {
				t.Fatalf("%d and %d batch ends, want %d", len(pipeB), len(stepB), 2*c.steps)
			}
			for i, p := range pipeB {
				s := stepB[i]
				if p.epoch != s.epoch || p.batch != s.batch || len(p.logs) != len(s.logs) {
					t.Fatalf("batch end %d: epoch %d batch %d %v pipelined, epoch %d batch %d %v step by step", i, p.epoch, p.batch, p.logs, s.epoch, s.batch, s.logs)
				}
				for k, v := range s.logs {
					if math.Float64bits(p.logs[k]) != math.Float64bits(v) {
						t.Errorf("epoch %d batch %d: %s %v pipelined, %v step by step", p.epoch, p.batch, k, p.logs[k], v)
					}
				}
				done := int64(i + 1) // steps finished at this batch's end
				if s.iterations != done {
					t.Errorf("step by step, epoch %d batch %d: %d steps started at its end, want %d", s.epoch, s.batch, s.iterations, done)
				}
				// The epoch's last batch has a machine of its own (a
				// partial batch), so the one before it ends first.
				want := done + 1
				if p.batch >= c.steps-c.lastSteps {
					want = done
				}
				if p.iterations != want {
					t.Errorf("pipelined, epoch %d batch %d: %d steps started at its end, want %d", p.epoch, p.batch, p.iterations, want)
				}
			}
			for _, k := range stepH.Keys {
				for e, v := range stepH.Get(k) {
					if math.Float64bits(pipeH.Get(k)[e]) != math.Float64bits(v) {
						t.Errorf("epoch %d: %s %v pipelined, %v step by step", e, k, pipeH.Get(k)[e], v)
					}
				}
			}
			for i := range stepW {
				a, b := pipeW[i].Data().([]float32), stepW[i].Data().([]float32)
				for j := range b {
					if math.Float32bits(a[j]) != math.Float32bits(b[j]) {
						t.Fatalf("weight %d value %d: %v pipelined, %v step by step", i, j, a[j], b[j])
					}
				}
			}
		})
	}
}

// fitRecorded fits a model with Adam on /GPU:0 for two epochs at batch,
// pipelined or step by step (nn.PipelineSteps(false)), and returns the
// history, with the validation on the training data, every batch's end
// and the weights (BatchNormalization's moving statistics included).
func fitRecorded(t *testing.T, model func(layers.Activation) *nn.Sequential, ds data.Dataset, batch int, pipeline bool) (*nn.History, []batchRecord, []*tensor.Dense) {
	t.Helper()
	m := model(layers.Softmax)
	m.SetSeed(11)
	opt, err := optim.NewAdam(optim.AdamConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Compile(opt, losses.SparseCategoricalCrossentropy{}, []metrics.Metric{metrics.NewAccuracy()}, nn.OnDevice("/GPU:0")); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	rec := &batchRecorder{}
	h, err := m.Fit(context.Background(), ds, nn.Epochs(2), nn.BatchSize(batch), nn.Seed(3), nn.Verbose(0),
		nn.ValidationData(ds), nn.Callbacks(rec), nn.PipelineSteps(pipeline))
	if err != nil {
		t.Fatal(err)
	}
	w, err := m.GetWeights()
	if err != nil {
		t.Fatal(err)
	}
	return h, rec.batches, w
}

// TestPipelinedFitReportsBadTarget fits on data with a sparse target that
// is not a class index: pipelined, the error comes once the next batch is
// in the host's buffers, and must still name the bad batch's value, as
// step by step.
func TestPipelinedFitReportsBadTarget(t *testing.T) {
	needGPU(t)
	const n, bad = 256, 100 // batch 3 (samples 96..127), row 4
	rng := rand.New(rand.NewPCG(2, 2))
	x, y := make([]float32, n*3072), make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	for i := range y {
		y[i] = float32(i % 10)
	}
	y[bad] = 12
	ds, err := data.TensorData(tensor.New(tensor.WithShape(n, 32, 32, 3), tensor.WithBacking(x)), tensor.New(tensor.WithShape(n, 1), tensor.WithBacking(y)))
	if err != nil {
		t.Fatal(err)
	}
	run := func(pipeline bool) error {
		model := mlpModel(layers.Softmax)
		model.SetSeed(11)
		opt, err := optim.NewSGD(optim.SGDConfig{})
		if err != nil {
			t.Fatal(err)
		}
		if err := model.Compile(opt, losses.SparseCategoricalCrossentropy{}, nil, nn.OnDevice("/GPU:0")); err != nil {
			t.Fatal(err)
		}
		defer model.Close()
		_, err = model.Fit(context.Background(), ds, nn.Epochs(1), nn.Shuffle(false), nn.Verbose(0), nn.PipelineSteps(pipeline))
		return err
	}
	pipe, step := run(true), run(false)
	if step == nil || pipe == nil {
		t.Fatalf("Fit: %v pipelined, %v step by step; want errors", pipe, step)
	}
	if pipe.Error() != step.Error() {
		t.Errorf("pipelined: %q\nstep by step: %q", pipe, step)
	}
	if !strings.Contains(step.Error(), "step 4/8") || !strings.Contains(step.Error(), "target of sample 4 is 12") {
		t.Errorf("step by step: %q, want step 4/8 and sample 4's target 12 named", step)
	}
}
