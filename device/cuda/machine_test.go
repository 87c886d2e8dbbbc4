//go:build cudavm && cgo

package cuda

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/device"
	"github.com/gokeras/gokeras/device/driver"
	"github.com/gokeras/gokeras/device/internal/opstest"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/metrics"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/ops"
	"github.com/gokeras/gokeras/optim"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func needGPU(t *testing.T) []driver.PhysicalDevice {
	t.Helper()
	devs, err := device.ListPhysicalDevices(driver.GPU)
	if err != nil {
		t.Fatal(err)
	}
	if len(devs) == 0 {
		t.Skip("the CUDA driver sees no GPU")
	}
	return devs
}

func TestDevicesDescribeGPUs(t *testing.T) {
	for _, d := range needGPU(t) {
		t.Logf("%s: %s, %.1f GB, compute capability %d.%d", d.Name, d.Description, float64(d.MemoryBytes)/1e9,
			d.ComputeCapability[0], d.ComputeCapability[1])
		if d.Kind != driver.GPU || d.Description == "" || d.MemoryBytes <= 0 || d.ComputeCapability[0] < 3 {
			t.Errorf("implausible device %+v", d)
		}
	}
	if got := device.DefaultSpec(); got.Kind != driver.GPU || got.Index != 0 {
		t.Errorf("DefaultSpec() = %v with a GPU present, want /GPU:0", got)
	}
}

func TestPlaceAndCopyRoundTrip(t *testing.T) {
	needGPU(t)
	data := make([]float32, 1<<20)
	for i := range data {
		data[i] = float32(i) * 0.5
	}
	src := tensor.New(tensor.WithShape(1024, 1024), tensor.WithBacking(data))
	onGPU, stats, err := device.Place(src, "/GPU:0")
	if err != nil {
		t.Fatal(err)
	}
	defer onGPU.Free()
	t.Log(stats)
	if stats.Bytes != 4<<20 || stats.To.Kind != driver.GPU {
		t.Errorf("Place stats %+v", stats)
	}
	if _, err := onGPU.Dense(); err == nil {
		t.Error("Dense() of a GPU tensor succeeded")
	}
	again, stats, err := device.Copy(onGPU, "/GPU:0") // device to device
	if err != nil {
		t.Fatal(err)
	}
	defer again.Free()
	t.Log(stats)
	back, stats, err := device.Copy(again, "/CPU:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Log(stats)
	d, err := back.Dense()
	if err != nil {
		t.Fatal(err)
	}
	got := d.Data().([]float32)
	for i := range data {
		if got[i] != data[i] {
			t.Fatalf("value %d came back as %v, want %v", i, got[i], data[i])
		}
	}
}

func TestOutOfMemoryIsAClearError(t *testing.T) {
	devs := needGPU(t)
	asked := devs[0].MemoryBytes + 1<<30
	buf, err := gpuDriver.Alloc(0, asked)
	if err == nil {
		buf.Free()
		t.Fatalf("allocating %d bytes on a GPU of %d succeeded", asked, devs[0].MemoryBytes)
	}
	if !errors.Is(err, ErrOutOfMemory) {
		t.Errorf("error %v does not wrap ErrOutOfMemory", err)
	}
	for _, want := range []string{"/GPU:0", "asked for " + formatBytes(asked), "free of"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

func TestUnsupportedOpFailsAtBind(t *testing.T) {
	needGPU(t)
	g := gorgonia.NewGraph()
	a := gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(2, 2), gorgonia.WithName("a"), gorgonia.WithInit(gorgonia.Zeroes()))
	b := gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(2, 2), gorgonia.WithName("b"), gorgonia.WithInit(gorgonia.Zeroes()))
	if _, err := gorgonia.Add(a, b); err != nil {
		t.Fatal(err)
	}
	_, err := device.NewMachine(device.NewSpec(driver.GPU, 0), g, driver.MachineOptions{})
	if err == nil || !strings.Contains(err.Error(), "op +") {
		t.Errorf("binding a graph with gorgonia's Add to /GPU:0: %v; want an error naming the op", err)
	}
}

// mlpModel is a dense model on 32×32×3 samples, flattened.
func mlpModel(out layers.Activation) *nn.Sequential {
	return nn.NewSequential(layers.Input(32, 32, 3), layers.Flatten(), layers.Dense(256, layers.ReLU),
		layers.Dense(64, layers.ReLU), layers.Dense(10, out))
}

// cnnModel is a small convolutional model with every image step of the
// plan (patches, pooling, dropout and their gradients), on 32×32×3
// images.
func cnnModel(out layers.Activation) *nn.Sequential {
	return nn.NewSequential(layers.Input(32, 32, 3),
		layers.Conv2D(4, 3, layers.Padding("same"), layers.ReLU),
		layers.MaxPooling2D(),
		layers.Dropout(0.25),
		layers.Flatten(),
		layers.Dense(10, out))
}

// TestTrainingMatchesCPU trains the same model from the same weights on
// the same batches on /CPU:0 and /GPU:0, one step per epoch for 50 steps,
// and requires every step's loss within 1e-4 (relative) of the CPU's, then
// compares Evaluate.
func TestTrainingMatchesCPU(t *testing.T) {
	needGPU(t)
	cases := []struct {
		name  string
		model func(out layers.Activation) *nn.Sequential
		out   layers.Activation
		loss  losses.Loss
		opt   func() (optim.Optimizer, error)
		cols  int
	}{
		// The flagship's pairing: sigmoid output, categorical cross-entropy
		// from the logits, SGD at Keras' 0.01.
		{"sigmoid+categorical/sgd", mlpModel, layers.Sigmoid, losses.CategoricalCrossentropy{}, func() (optim.Optimizer, error) {
			return optim.NewSGD(optim.SGDConfig{})
		}, 10},
		{"softmax+sparse/momentum", mlpModel, layers.Softmax, losses.SparseCategoricalCrossentropy{}, func() (optim.Optimizer, error) {
			return optim.NewSGD(optim.SGDConfig{LearningRate: 0.01, Momentum: 0.9})
		}, 1},
		{"softmax+categorical/adam", mlpModel, layers.Softmax, losses.CategoricalCrossentropy{}, func() (optim.Optimizer, error) {
			return optim.NewAdam(optim.AdamConfig{})
		}, 10},
		{"tanh+mse/sgd", mlpModel, layers.Tanh, losses.MeanSquaredError{}, func() (optim.Optimizer, error) {
			return optim.NewSGD(optim.SGDConfig{LearningRate: 0.05})
		}, 10},
		// Conv2D same + relu, max pooling, dropout: the image kernels,
		// forward and backward, and dropout's mask for each step.
		{"cnn+softmax+categorical/sgd", cnnModel, layers.Softmax, losses.CategoricalCrossentropy{}, func() (optim.Optimizer, error) {
			return optim.NewSGD(optim.SGDConfig{LearningRate: 0.05})
		}, 10},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			data := opstest.Blobs(t, 512, []int{32, 32, 3}, tc.cols)
			train := func(dev string) (*nn.Sequential, []float64) {
				model := tc.model(tc.out)
				model.SetSeed(11)
				opt, err := tc.opt()
				if err != nil {
					t.Fatal(err)
				}
				if err := model.Compile(opt, tc.loss, []metrics.Metric{metrics.NewAccuracy()}, nn.OnDevice(dev)); err != nil {
					t.Fatal(err)
				}
				h, err := model.Fit(context.Background(), data, nn.Epochs(50), nn.StepsPerEpoch(1), nn.Seed(5), nn.Verbose(0))
				if err != nil {
					t.Fatalf("%s: %v", dev, err)
				}
				return model, h.Get("loss")
			}
			cpu, cpuLoss := train("/CPU:0")
			gpu, gpuLoss := train("/GPU:0")
			defer gpu.Close()
			worst := 0.0
			for i := range cpuLoss {
				rel := math.Abs(gpuLoss[i]-cpuLoss[i]) / math.Max(math.Abs(cpuLoss[i]), 1e-6)
				worst = math.Max(worst, rel)
				if rel > 1e-4 {
					t.Fatalf("step %d: loss %.7f on /GPU:0, %.7f on /CPU:0 (relative difference %.2g)", i, gpuLoss[i], cpuLoss[i], rel)
				}
			}
			t.Logf("50 steps: loss %.5f -> %.5f; worst relative difference from the CPU %.2g", cpuLoss[0], cpuLoss[49], worst)
			if !(cpuLoss[49] < cpuLoss[0]) {
				t.Errorf("the loss did not fall: %v -> %v", cpuLoss[0], cpuLoss[49])
			}
			ce, err := cpu.Evaluate(context.Background(), data, nn.Verbose(0))
			if err != nil {
				t.Fatal(err)
			}
			ge, err := gpu.Evaluate(context.Background(), data, nn.Verbose(0))
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range ce {
				if math.Abs(ge[k]-v) > 1e-4*math.Max(math.Abs(v), 1e-3) {
					t.Errorf("Evaluate %s: %v on /GPU:0, %v on /CPU:0", k, ge[k], v)
				}
			}
		})
	}
}

// TestTrainRulesMatchHostOptimizer calls the GPU machine's Train with each
// update rule, its slots on the GPU, and compares the weights and slots
// after every step with the tape machine plus package optim on the host.
func TestTrainRulesMatchHostOptimizer(t *testing.T) {
	needGPU(t)
	type rule struct {
		name string
		opt  func() (optim.Optimizer, error)
	}
	rules := []rule{
		{"sgd", func() (optim.Optimizer, error) { return optim.NewSGD(optim.SGDConfig{LearningRate: 0.1}) }},
		{"momentum", func() (optim.Optimizer, error) {
			return optim.NewSGD(optim.SGDConfig{LearningRate: 0.1, Momentum: 0.9})
		}},
		{"nesterov", func() (optim.Optimizer, error) {
			return optim.NewSGD(optim.SGDConfig{LearningRate: 0.1, Momentum: 0.9, Nesterov: true})
		}},
		{"adam", func() (optim.Optimizer, error) { return optim.NewAdam(optim.AdamConfig{LearningRate: 0.01}) }},
	}
	for _, r := range rules {
		t.Run(r.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, 4))
			gpuG, gpuW := mlpGraph(t, rng.Uint64())
			refG, refW := mlpGraph(t, 0)
			for i := range gpuW { // the same starting weights
				copy(refW[i].Value().Data().([]float32), gpuW[i].Value().Data().([]float32))
			}
			for _, pair := range [][2]*gorgonia.Node{{gpuG.x, refG.x}, {gpuG.y, refG.y}} {
				copy(pair[1].Value().Data().([]float32), pair[0].Value().Data().([]float32))
			}
			state := driver.NewState()
			defer state.Close()
			gpuOpt, err := r.opt()
			if err != nil {
				t.Fatal(err)
			}
			m, err := device.NewMachine(device.NewSpec(driver.GPU, 0), gpuG.g, driver.MachineOptions{Learnables: gpuW, State: state, Slots: gpuOpt.Slot})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			tr, ok := m.(driver.Trainer)
			if !ok {
				t.Fatalf("the GPU machine %T is not a driver.Trainer", m)
			}
			tape := gorgonia.NewTapeMachine(refG.g, gorgonia.BindDualValues(refW...))
			defer tape.Close()
			opt, err := r.opt()
			if err != nil {
				t.Fatal(err)
			}
			for step := int64(1); step <= 5; step++ {
				if err := tr.Train(gpuOpt.NextUpdate()); err != nil {
					t.Fatal(err)
				}
				gpuOpt.Advance()
				if err := tape.RunAll(); err != nil {
					t.Fatal(err)
				}
				vars := make([]optim.Variable, len(refW))
				for i, w := range refW {
					g, err := w.Grad()
					if err != nil {
						t.Fatal(err)
					}
					vars[i] = optim.Variable{Name: w.Name(), Value: w.Value().Data().([]float32), Grad: g.Data().([]float32)}
				}
				if err := opt.Apply(vars); err != nil {
					t.Fatal(err)
				}
				for _, v := range vars {
					clear(v.Grad)
				}
				tape.Reset()
				// The weights live on the GPU between steps: bring them back, as nn does.
				if err := state.Sync(); err != nil {
					t.Fatal(err)
				}
				for i := range gpuW {
					got, want := gpuW[i].Value().Data().([]float32), refW[i].Value().Data().([]float32)
					for j := range got {
						if math.Abs(float64(got[j]-want[j])) > 1e-5*math.Max(1, math.Abs(float64(want[j]))) {
							t.Fatalf("step %d: %s[%d] = %v on /GPU:0, %v on the host", step, gpuW[i].Name(), j, got[j], want[j])
						}
					}
					for _, slot := range optim.SlotNames(opt) {
						got, err := gpuOpt.Slot(gpuW[i].Name(), slot, len(want))
						if err != nil {
							t.Fatal(err)
						}
						want, err := opt.Slot(refW[i].Name(), slot, len(want))
						if err != nil {
							t.Fatal(err)
						}
						for j := range got {
							if math.Abs(float64(got[j]-want[j])) > 1e-5*math.Max(1, math.Abs(float64(want[j]))) {
								t.Fatalf("step %d: slot %s of %s[%d] = %v on /GPU:0, %v on the host", step, slot, gpuW[i].Name(), j, got[j], want[j])
							}
						}
					}
				}
			}
		})
	}
}

type mlp struct {
	g    *gorgonia.ExprGraph
	x, y *gorgonia.Node
}

// mlpGraph is x (16×20) → Affine(+bias) → relu → Affine → softmax
// cross-entropy against one-hot y, with its gradients; the values come from
// seed (0: zeros).
func mlpGraph(t *testing.T, seed uint64) (mlp, []*gorgonia.Node) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	g := gorgonia.NewGraph()
	mk := func(name string, scale float64, shape ...int) *gorgonia.Node {
		n := 1
		for _, d := range shape {
			n *= d
		}
		data := make([]float32, n)
		for i := range data {
			if seed != 0 {
				data[i] = float32(scale * rng.NormFloat64())
			}
		}
		return gorgonia.NewTensor(g, tensor.Float32, len(shape), gorgonia.WithShape(shape...), gorgonia.WithName(name),
			gorgonia.WithValue(tensor.New(tensor.WithShape(shape...), tensor.WithBacking(data))))
	}
	x, y := mk("x", 1, 16, 20), mk("y", 0, 16, 10)
	if seed != 0 {
		yd := y.Value().Data().([]float32)
		for r := 0; r < 16; r++ {
			yd[r*10+rng.IntN(10)] = 1
		}
	}
	w1, b1, w2 := mk("w1", 0.3, 20, 32), mk("b1", 0.1, 32), mk("w2", 0.3, 32, 10)
	z1, err := ops.Affine(x, w1, b1, false)
	if err != nil {
		t.Fatal(err)
	}
	h, err := ops.Activate(ops.ReLU, z1)
	if err != nil {
		t.Fatal(err)
	}
	z2, err := ops.Affine(h, w2, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	loss, err := ops.Loss(ops.SoftmaxCrossEntropy, z2, y)
	if err != nil {
		t.Fatal(err)
	}
	ws := []*gorgonia.Node{w1, b1, w2}
	if _, err := gorgonia.Grad(loss, ws...); err != nil {
		t.Fatal(err)
	}
	return mlp{g: g, x: x, y: y}, ws
}
