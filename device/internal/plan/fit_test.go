package plan_test

import (
	"context"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/device"
	"github.com/gokeras/gokeras/device/driver"
	"github.com/gokeras/gokeras/device/internal/plan"
	"github.com/gokeras/gokeras/internal/modeltest"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/metrics"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/optim"
	"gorgonia.org/gorgonia"
)

// hostGPU is a GPU driver whose machines are this package's Machine on the
// host backend: what the CUDA driver does, minus the kernels. It lets nn
// train on "/GPU:0" in this test binary.
type hostGPU struct{ dev *plan.HostDevice }

func (hostGPU) Kind() driver.Kind { return driver.GPU }

func (hostGPU) Devices() ([]driver.PhysicalDevice, error) {
	return []driver.PhysicalDevice{{Name: "/physical_device:GPU:0", Kind: driver.GPU, Description: "host backend"}}, nil
}

func (d hostGPU) NewMachine(index int, g *gorgonia.ExprGraph, opts driver.MachineOptions) (driver.Machine, error) {
	be := plan.NewHostBackend(d.dev)
	p, err := plan.Compile(g, opts.Learnables, be.Capabilities())
	if err != nil {
		return nil, err
	}
	return plan.New(p, be, opts.State, opts.Slots)
}

// theHostGPU is registered for the whole test binary, as a driver is.
var theHostGPU = hostGPU{dev: &plan.HostDevice{}}

func init() {
	if err := device.Register(theHostGPU); err != nil {
		panic(err)
	}
}

// TestFitMatchesCPU trains the same model from the same weights on the same
// batches on /CPU:0 (gorgonia's tape machine) and on /GPU:0 (the plan
// machine), one step per epoch for 50 steps, and compares every step's loss,
// the final weights, Evaluate and Predict. This is the CUDA correctness test
// (device/cuda's TestTrainingMatchesCPU) with the host standing in for the
// kernels: it checks nn's step protocol end to end.
func TestFitMatchesCPU(t *testing.T) {
	cases := []struct {
		name string
		out  layers.Activation
		loss losses.Loss
		opt  func() (optim.Optimizer, error)
		cols int
	}{
		{"sigmoid+categorical/sgd", layers.Sigmoid, losses.CategoricalCrossentropy{}, func() (optim.Optimizer, error) {
			return optim.NewSGD(optim.SGDConfig{LearningRate: 0.05})
		}, 10},
		{"softmax+sparse/momentum", layers.Softmax, losses.SparseCategoricalCrossentropy{}, func() (optim.Optimizer, error) {
			return optim.NewSGD(optim.SGDConfig{LearningRate: 0.05, Momentum: 0.9})
		}, 1},
		{"softmax+categorical/adam", layers.Softmax, losses.CategoricalCrossentropy{}, func() (optim.Optimizer, error) {
			return optim.NewAdam(optim.AdamConfig{})
		}, 10},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			data := modeltest.Blobs(t, 256, []int{12}, tc.cols)
			var placement strings.Builder
			train := func(dev string) (*nn.Sequential, []float64) {
				model := nn.NewSequential(layers.Input(12), layers.Dense(16, layers.ReLU), layers.Dense(10, tc.out))
				model.SetSeed(1)
				opt, err := tc.opt()
				if err != nil {
					t.Fatal(err)
				}
				if err := model.Compile(opt, tc.loss, []metrics.Metric{&metrics.Accuracy{}}, nn.OnDevice(dev), nn.LogDevicePlacement(&placement)); err != nil {
					t.Fatal(err)
				}
				h, err := model.Fit(context.Background(), data, nn.Epochs(50), nn.StepsPerEpoch(1), nn.BatchSize(32), nn.Seed(3), nn.Verbose(0))
				if err != nil {
					t.Fatalf("%s: %v", dev, err)
				}
				return model, h.Get("loss")
			}
			cpu, cpuLoss := train("/CPU:0")
			updates := theHostGPU.dev.Updates()
			gpu, gpuLoss := train("/GPU:0")
			updates = theHostGPU.dev.Updates() - updates
			if tc.name == "sigmoid+categorical/sgd" && updates == 0 {
				t.Error("nn did not train plain SGD through Machine.Train")
			}
			t.Logf("%d updates on the device", updates)
			if !strings.Contains(placement.String(), "in device /job:localhost/replica:0/task:0/device:GPU:0") {
				t.Fatalf("nothing ran on /GPU:0:\n%s", placement.String())
			}
			if len(gpuLoss) != 50 || len(cpuLoss) != 50 {
				t.Fatalf("%d and %d losses, want 50", len(cpuLoss), len(gpuLoss))
			}
			for i := range cpuLoss {
				if !relClose(gpuLoss[i], cpuLoss[i], 1e-4) {
					t.Fatalf("step %d: loss %v on the plan machine, %v on the CPU", i, gpuLoss[i], cpuLoss[i])
				}
			}
			if !(cpuLoss[49] < cpuLoss[0]) {
				t.Errorf("the loss did not fall: %v -> %v", cpuLoss[0], cpuLoss[49])
			}
			cw, _ := cpu.GetWeights()
			gw, _ := gpu.GetWeights()
			for i := range cw {
				a, b := cw[i].Data().([]float32), gw[i].Data().([]float32)
				for j := range a {
					if !relClose(float64(a[j]), float64(b[j]), 1e-4) {
						t.Fatalf("weight %d[%d]: %v on the CPU, %v on the plan machine", i, j, a[j], b[j])
					}
				}
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
				if !relClose(ge[k], v, 1e-4) {
					t.Errorf("Evaluate %s: %v on the plan machine, %v on the CPU", k, ge[k], v)
				}
			}
		})
	}
}

func relClose(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*math.Max(1e-3, math.Max(math.Abs(a), math.Abs(b)))
}

// TestHostWeightWritesReachTheDevice trains on /GPU:0 (weights resident on
// the device), puts the initial weights back with SetWeights, and trains
// again: the second run must start from the restored weights, so its
// losses equal the first run's. A model that kept its machines' device
// copies would go on from the trained weights instead.
func TestHostWeightWritesReachTheDevice(t *testing.T) {
	data := modeltest.Blobs(t, 64, []int{12}, 10)
	model := nn.NewSequential(layers.Input(12), layers.Dense(16, layers.ReLU), layers.Dense(10, layers.Softmax))
	model.SetSeed(1)
	sgd, err := optim.NewSGD(optim.SGDConfig{LearningRate: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	if err := model.Compile(sgd, losses.CategoricalCrossentropy{}, nil, nn.OnDevice("/GPU:0")); err != nil {
		t.Fatal(err)
	}
	initial, err := model.GetWeights()
	if err != nil {
		t.Fatal(err)
	}
	fit := func() []float64 {
		h, err := model.Fit(context.Background(), data, nn.Epochs(5), nn.StepsPerEpoch(1), nn.Seed(4), nn.Verbose(0))
		if err != nil {
			t.Fatal(err)
		}
		return h.Get("loss")
	}
	first := fit()
	if err := model.SetWeights(initial); err != nil {
		t.Fatal(err)
	}
	second := fit()
	for i := range first {
		if first[i] != second[i] {
			t.Fatalf("epoch %d: loss %v after SetWeights, %v the first time: the device kept the old weights", i+1, second[i], first[i])
		}
	}
}

// TestCheckpointRoundTripOnDevice trains on /GPU:0, whose weights and
// optimizer slots live in the device's own memory, saves a checkpoint
// mid-run, loads it into a fresh model and trains on: the result must be
// the uninterrupted run's, bit for bit, for every optimizer. It checks that
// the slots come back from the device for the checkpoint (and for the
// optimizer's State) and go back to it after loading.
func TestCheckpointRoundTripOnDevice(t *testing.T) {
	data := modeltest.Blobs(t, 64, []int{12}, 10)
	optimizers := []struct {
		name string
		opt  func() (optim.Optimizer, error)
	}{
		{"sgd", func() (optim.Optimizer, error) { return optim.NewSGD(optim.SGDConfig{LearningRate: 0.1}) }},
		{"momentum", func() (optim.Optimizer, error) {
			return optim.NewSGD(optim.SGDConfig{LearningRate: 0.1, Momentum: 0.9})
		}},
		{"nesterov", func() (optim.Optimizer, error) {
			return optim.NewSGD(optim.SGDConfig{LearningRate: 0.1, Momentum: 0.9, Nesterov: true})
		}},
		{"adam", func() (optim.Optimizer, error) { return optim.NewAdam(optim.AdamConfig{LearningRate: 0.01}) }},
	}
	for _, tc := range optimizers {
		t.Run(tc.name, func(t *testing.T) {
			newModel := func() *nn.Sequential {
				m := nn.NewSequential(layers.Input(12), layers.Dense(16, layers.ReLU), layers.Dense(10, layers.Softmax))
				m.SetSeed(1)
				opt, err := tc.opt()
				if err != nil {
					t.Fatal(err)
				}
				if err := m.Compile(opt, losses.CategoricalCrossentropy{}, nil, nn.OnDevice("/GPU:0")); err != nil {
					t.Fatal(err)
				}
				return m
			}
			fit := func(m *nn.Sequential, from, to int) []float64 {
				h, err := m.Fit(context.Background(), data, nn.Epochs(to), nn.InitialEpoch(from), nn.BatchSize(16), nn.Seed(4), nn.Verbose(0))
				if err != nil {
					t.Fatal(err)
				}
				return h.Get("loss")
			}
			whole := newModel()
			want := fit(whole, 0, 4)
			first := newModel()
			fit(first, 0, 2)
			// The optimizer's State reads the slots from the device.
			if st, ok := first.Optimizer().(optim.Stateful); ok && len(optim.SlotNames(first.Optimizer())) > 0 {
				s := st.State()
				for _, slot := range optim.SlotNames(first.Optimizer()) {
					nonzero := false
					for _, v := range s.Slots[slot]["dense/kernel"] {
						nonzero = nonzero || v != 0
					}
					if !nonzero {
						t.Fatalf("State() after training on /GPU:0: slot %q of dense/kernel is all zeros: the device's copy was not brought back", slot)
					}
				}
			}
			path := filepath.Join(t.TempDir(), "ck.safetensors")
			if err := first.SaveCheckpoint(path, nn.Checkpoint{Epoch: 2}); err != nil {
				t.Fatal(err)
			}
			resumed := newModel()
			ck, err := resumed.LoadCheckpoint(path)
			if err != nil {
				t.Fatal(err)
			}
			got := fit(resumed, ck.Epoch, 4)
			if len(got) != 2 {
				t.Fatalf("resumed run reported %d epochs, want 2", len(got))
			}
			for i, l := range got {
				if l != want[2+i] {
					t.Fatalf("epoch %d: loss %v after resuming, %v uninterrupted", 3+i, l, want[2+i])
				}
			}
			a, err := whole.GetWeights()
			if err != nil {
				t.Fatal(err)
			}
			b, err := resumed.GetWeights()
			if err != nil {
				t.Fatal(err)
			}
			for i := range a {
				if !slices.Equal(a[i].Data().([]float32), b[i].Data().([]float32)) {
					t.Fatalf("weight %d differs after resuming", i)
				}
			}
		})
	}
}
