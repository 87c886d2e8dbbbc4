package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/device/driver"
	"github.com/gokeras/gokeras/internal/formats/shapes"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/metrics"
	"github.com/gokeras/gokeras/optim"
	"gorgonia.org/tensor"
)

// imageData makes n samples of shape (h, w, c) in [0, 1) with one-hot or
// sparse labels of 10 classes, learnable from the mean of the first row.
func imageData(t testing.TB, n, h, w, c int, seed uint64, oneHot bool) data.Dataset {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	size := h * w * c
	x := make([]float32, n*size)
	cols := 1
	if oneHot {
		cols = 10
	}
	y := make([]float32, n*cols)
	for i := 0; i < n; i++ {
		class := rng.IntN(10)
		for j := 0; j < size; j++ {
			x[i*size+j] = rng.Float32()
			if j < w*c {
				x[i*size+j] = 0.5*x[i*size+j] + 0.05*float32(class)
			}
		}
		if oneHot {
			y[i*10+class] = 1
		} else {
			y[i] = float32(class)
		}
	}
	ds, err := data.TensorData(
		tensor.New(tensor.WithShape(n, h, w, c), tensor.WithBacking(x)),
		tensor.New(tensor.WithShape(n, cols), tensor.WithBacking(y)))
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// stepModel is a smaller flagship: Flatten → Dense(relu) → Dense(relu) →
// Dense(10, out), small enough for the tape machine to run many steps fast.
func stepModel(t testing.TB, out layers.Activation, opt optim.Optimizer, loss losses.Loss, reference bool) *Sequential {
	t.Helper()
	m := NewSequential(
		layers.Input(8, 8, 3),
		layers.Flatten(),
		layers.Dense(96, layers.ReLU),
		layers.Dense(40, layers.ReLU),
		layers.Dense(10, out),
	)
	m.SetSeed(11)
	if err := m.Compile(opt, loss, []metrics.Metric{&metrics.Accuracy{}}, OnDevice("/CPU:0")); err != nil {
		t.Fatal(err)
	}
	m.compiled.reference = reference
	return m
}

// TestMachineMatchesTapeMachine trains the same model from the same weights
// on the same batches twice, on gorgonia's tape machine (each op's Do, the
// optimizer on the host) and on the CPU graph machine (its own kernels, the
// plain-SGD update folded into the gradient products), and checks that the
// losses agree within 1e-5 relative at every step, and the weights at the end.
func TestMachineMatchesTapeMachine(t *testing.T) {
	cases := []struct {
		name   string
		out    layers.Activation
		loss   losses.Loss
		oneHot bool
		opt    func() (optim.Optimizer, error)
	}{
		{"flagship: sigmoid, categorical, SGD", layers.Sigmoid, losses.CategoricalCrossentropy{}, true,
			func() (optim.Optimizer, error) { return optim.NewSGD(optim.SGDConfig{LearningRate: 0.01}) }},
		{"softmax, sparse categorical, SGD 0.1", layers.Softmax, losses.SparseCategoricalCrossentropy{}, false,
			func() (optim.Optimizer, error) { return optim.NewSGD(optim.SGDConfig{LearningRate: 0.1}) }},
		{"sigmoid, binary, SGD momentum", layers.Sigmoid, losses.BinaryCrossentropy{}, true,
			func() (optim.Optimizer, error) {
				return optim.NewSGD(optim.SGDConfig{LearningRate: 0.05, Momentum: 0.9})
			}},
		{"tanh, mse, Nesterov", layers.Tanh, losses.MeanSquaredError{}, true,
			func() (optim.Optimizer, error) {
				return optim.NewSGD(optim.SGDConfig{LearningRate: 0.02, Momentum: 0.8, Nesterov: true})
			}},
		{"softmax, categorical, Adam", layers.Softmax, losses.CategoricalCrossentropy{}, true,
			func() (optim.Optimizer, error) { return optim.NewAdam(optim.AdamConfig{}) }},
	}
	const samples, batch, epochs = 400, 32, 8 // 13 steps an epoch, the last of 16 samples
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ds := imageData(t, samples, 8, 8, 3, 5, tc.oneHot)
			var models [2]*Sequential
			for i, reference := range []bool{true, false} {
				opt, err := tc.opt()
				if err != nil {
					t.Fatal(err)
				}
				models[i] = stepModel(t, tc.out, opt, tc.loss, reference)
				if err := models[i].checkData("test", ds); err != nil {
					t.Fatal(err)
				}
				defer models[i].Close()
			}
			labelCols := shapes.Size(ds.LabelShape())
			rng := rand.New(rand.NewPCG(1, 2))
			order := rng.Perm(samples)
			worst := 0.0
			for epoch := 0; epoch < epochs; epoch++ {
				for lo := 0; lo < samples; lo += batch {
					idx := order[lo:min(lo+batch, samples)]
					var loss [2]float64
					for i, m := range models {
						p, err := m.program(len(idx), labelLayout{cols: labelCols}, modeTrain)
						if err != nil {
							t.Fatal(err)
						}
						if loss[i], err = m.trainStep(p, ds, idx); err != nil {
							t.Fatal(err)
						}
					}
					rel := math.Abs(loss[1]-loss[0]) / math.Abs(loss[0])
					worst = max(worst, rel)
					if !(rel <= 1e-5) {
						t.Fatalf("epoch %d, samples %d-%d: graph machine loss %.9g, tape machine %.9g (relative difference %.2g)",
							epoch, lo, lo+len(idx), loss[1], loss[0], rel)
					}
				}
			}
			for li, l := range models[0].layers {
				for pi, prm := range l.Params() {
					want := prm.Value.Data().([]float32)
					got := models[1].layers[li].Params()[pi].Value.Data().([]float32)
					for j := range want {
						if d := math.Abs(float64(got[j] - want[j])); d > 1e-5*(1+math.Abs(float64(want[j]))) {
							t.Fatalf("%s/%s[%d] = %v on the graph machine, %v on the tape machine", l.Name(), prm.Name, j, got[j], want[j])
						}
					}
				}
			}
			if a, b := models[0].compiled.optimizer.Iterations(), models[1].compiled.optimizer.Iterations(); a != b {
				t.Errorf("optimizer counted %d iterations on the tape machine, %d on the graph machine", a, b)
			}
			t.Logf("worst relative loss difference over %d steps: %.2g", epochs*((samples+batch-1)/batch), worst)
		})
	}
}

// TestTrainsOnTheGraphMachine checks which machine runs a model's steps:
// the plan compiler's machine, unless the test asks for the tape machine;
// both are device.Trainers, the one step path nn has.
func TestTrainsOnTheGraphMachine(t *testing.T) {
	for _, reference := range []bool{false, true} {
		t.Run(fmt.Sprint("reference=", reference), func(t *testing.T) {
			m := stepModel(t, layers.Sigmoid, newTestSGD(t), losses.CategoricalCrossentropy{}, reference)
			defer m.Close()
			ds := imageData(t, 64, 8, 8, 3, 1, true)
			if err := m.checkData("test", ds); err != nil {
				t.Fatal(err)
			}
			p, err := m.program(32, labelLayout{cols: 10}, modeTrain)
			if err != nil {
				t.Fatal(err)
			}
			if _, trainer := p.machine.(driver.Trainer); !trainer {
				t.Errorf("reference=%t: the machine %T is not a driver.Trainer", reference, p.machine)
			}
			if planned := fmt.Sprintf("%T", p.machine) == "*plan.Machine"; planned == reference {
				t.Errorf("reference=%t: the machine is a %T", reference, p.machine)
			}
		})
	}
}

func newTestSGD(t testing.TB) optim.Optimizer {
	t.Helper()
	o, err := optim.NewSGD(optim.SGDConfig{})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// TestFlagshipMatchesTapeMachine runs the flagship model itself, at its
// real sizes, for a few steps on both machines, with each optimizer: the
// plan machine with the update folded into the gradient products, the tape
// machine with the update applied on the host after the gradients.
func TestFlagshipMatchesTapeMachine(t *testing.T) {
	if testing.Short() {
		t.Skip("the tape machine takes ~0.1 s a step at this size")
	}
	for _, tc := range []struct {
		name string
		opt  func() (optim.Optimizer, error)
	}{
		{"sgd", func() (optim.Optimizer, error) { return optim.NewSGD(optim.SGDConfig{LearningRate: 0.01}) }},
		{"momentum", func() (optim.Optimizer, error) {
			return optim.NewSGD(optim.SGDConfig{LearningRate: 0.01, Momentum: 0.9})
		}},
		{"adam", func() (optim.Optimizer, error) { return optim.NewAdam(optim.AdamConfig{}) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ds := imageData(t, 80, 32, 32, 3, 3, true) // 2 batches of 32 and one of 16
			var models [2]*Sequential
			for i, reference := range []bool{true, false} {
				opt, err := tc.opt()
				if err != nil {
					t.Fatal(err)
				}
				m := flagshipWith(t, opt, reference)
				if err := m.checkData("test", ds); err != nil {
					t.Fatal(err)
				}
				defer m.Close()
				models[i] = m
			}
			order := rand.New(rand.NewPCG(5, 6)).Perm(ds.Len())
			for step, lo := 0, 0; step < 6; step, lo = step+1, (lo+32)%ds.Len() {
				idx := order[lo:min(lo+32, ds.Len())]
				var loss [2]float64
				for i, m := range models {
					p, err := m.program(len(idx), labelLayout{cols: 10}, modeTrain)
					if err != nil {
						t.Fatal(err)
					}
					if loss[i], err = m.trainStep(p, ds, idx); err != nil {
						t.Fatal(err)
					}
				}
				if rel := math.Abs(loss[1]-loss[0]) / math.Abs(loss[0]); !(rel <= 1e-5) {
					t.Fatalf("step %d (%d samples): plan machine loss %.9g, tape machine %.9g (relative difference %.2g)", step, len(idx), loss[1], loss[0], rel)
				}
			}
		})
	}
}
