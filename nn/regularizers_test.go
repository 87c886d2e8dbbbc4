package nn

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/optim"
)

func regularizedModel(kernel, bias, activity *layers.Regularizer) *Sequential {
	var opts []layers.DenseOption
	var convOpts []layers.ConvOption
	if kernel != nil {
		opts = append(opts, layers.KernelRegularizer(*kernel))
		convOpts = append(convOpts, layers.KernelRegularizer(*kernel))
	}
	if bias != nil {
		opts = append(opts, layers.BiasRegularizer(*bias))
	}
	if activity != nil {
		opts = append(opts, layers.ActivityRegularizer(*activity))
	}
	return NewSequential(layers.Input(6, 6, 2),
		layers.Conv2D(3, 3, append(convOpts, layers.ReLU)...),
		layers.Flatten(),
		layers.Dense(8, append(opts, layers.ReLU)...),
		layers.Dense(10, layers.Softmax))
}

// TestRegularizersMatchTapeMachine trains with kernel, bias and activity
// regularizers on the plan machine and on the tape machine and compares
// the losses and the weights.
func TestRegularizersMatchTapeMachine(t *testing.T) {
	l2, l1, both := layers.L2(0.01), layers.L1(0.001), layers.L1L2(0.001, 0.01)
	data := imageData(t, 96, 6, 6, 2, 3, true)
	build := func() *Sequential {
		m := regularizedModel(&l2, &l1, &both)
		m.SetSeed(2)
		return m
	}
	newOpt := func() (optim.Optimizer, error) {
		return optim.NewSGD(optim.SGDConfig{LearningRate: 0.05, Momentum: 0.9})
	}
	ms, loss := fitTwins(t, build, newOpt, losses.CategoricalCrossentropy{}, data, Epochs(3), BatchSize(32), Seed(4))
	requireSameTraining(t, ms, loss)
}

// TestRegularizationIsInTheReportedLoss checks, as Keras reports it, that
// Evaluate's loss is the data loss plus the kernel penalties computed by
// hand from the weights.
func TestRegularizationIsInTheReportedLoss(t *testing.T) {
	data := imageData(t, 64, 6, 6, 2, 5, true)
	eval := func(kernel *layers.Regularizer) (float64, *Sequential) {
		m := regularizedModel(kernel, nil, nil)
		m.SetSeed(8)
		opt, err := optim.NewSGD(optim.SGDConfig{})
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Compile(opt, losses.CategoricalCrossentropy{}, nil, OnDevice("/CPU:0")); err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		r, err := m.Evaluate(context.Background(), data, BatchSize(64), Verbose(0))
		if err != nil {
			t.Fatal(err)
		}
		return r["loss"], m
	}
	plain, _ := eval(nil)
	reg := layers.L1L2(0.002, 0.03)
	withPenalty, m := eval(&reg)
	var want float64
	for _, l := range m.layers[:3] {
		if ps := l.Params(); len(ps) > 0 {
			for _, v := range ps[0].Value.Data().([]float32) {
				want += 0.002*math.Abs(float64(v)) + 0.03*float64(v)*float64(v)
			}
		}
	}
	if got := withPenalty - plain; math.Abs(got-want) > 1e-5*want {
		t.Errorf("the regularized loss exceeds the plain one by %v, want the kernels' penalty %v", got, want)
	}
}

// requirePlanMachines fails the test unless every program of m runs on the
// plan compiler's machine: a graph the plan compiler cannot run falls back
// to the tape machine, which would make a comparison with the tape machine
// compare it with itself.
func requirePlanMachines(t *testing.T, m *Sequential) {
	t.Helper()
	if len(m.compiled.programs) == 0 {
		t.Fatal("the model has no programs")
	}
	for k, p := range m.compiled.programs {
		if got := fmt.Sprintf("%T", p.machine); got != "*plan.Machine" {
			t.Fatalf("the program for batch %d, mode %d runs on a %s, not the plan machine", k.batch, k.mode, got)
		}
	}
}
