//go:build cudavm && cgo

package cuda

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/device"
	"github.com/gokeras/gokeras/device/driver"
	"github.com/gokeras/gokeras/device/internal/plan"
	"github.com/gokeras/gokeras/internal/modeltest"
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
	ds := make([]float32, 1<<20)
	for i := range ds {
		ds[i] = float32(i) * 0.5
	}
	src := tensor.New(tensor.WithShape(1024, 1024), tensor.WithBacking(ds))
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
	for i := range ds {
		if got[i] != ds[i] {
			t.Fatalf("value %d came back as %v, want %v", i, got[i], ds[i])
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
	// gorgonia's Add is a plan step (the sum of a weight's gradients from
	// its layer and its regularizer); its Sub is not.
	if _, err := gorgonia.Sub(a, b); err != nil {
		t.Fatal(err)
	}
	_, err := device.NewMachine(device.NewSpec(driver.GPU, 0), g, driver.MachineOptions{})
	if err == nil || !strings.Contains(err.Error(), "op -") {
		t.Errorf("binding a graph with gorgonia's Sub to /GPU:0: %v; want an error naming the op", err)
	}
}

// TestUnknownLossFailsAtBind: a loss step the kernels cannot compute
// (here a kind ops does not have) is refused before anything runs, naming
// the kind.
func TestUnknownLossFailsAtBind(t *testing.T) {
	for _, kind := range []plan.Kind{plan.Loss, plan.LossGrad} {
		err := checkSteps([]plan.Step{{Kind: plan.Add}, {Kind: kind, Op: ops.Info{Kind: ops.OpLoss, Loss: 42}, In: []int{0, 1, 2}}})
		if err == nil || !strings.Contains(err.Error(), "LossKind(42)") {
			t.Errorf("%v step of LossKind(42): %v, want an error naming the kind", kind, err)
		}
	}
	if err := checkSteps([]plan.Step{{Kind: plan.Loss, Op: ops.Info{Kind: ops.OpLoss, Loss: ops.CosineSimilarity}, In: []int{0, 1, 2}}}); err != nil {
		t.Errorf("a weighted cosine similarity: %v", err)
	}
}

// mlpModel is a dense model on 32×32×3 samples, flattened.
func mlpModel(out layers.Activation) *nn.Sequential {
	return nn.NewSequential(layers.Input(32, 32, 3), layers.Flatten(), layers.Dense(256, layers.ReLU),
		layers.Dense(64, layers.ReLU), layers.Dense(10, out))
}

// flagshipModel is the model of cmd/train: Flatten -> Dense(3000, relu)
// -> Dense(1000, relu) -> Dense(10, out) on 32×32×3 images.
func flagshipModel(out layers.Activation) *nn.Sequential {
	return nn.NewSequential(layers.Input(32, 32, 3), layers.Flatten(), layers.Dense(3000, layers.ReLU),
		layers.Dense(1000, layers.ReLU), layers.Dense(10, out))
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

// normModel is cnnModel with batch normalization after the convolution
// (then a ReLU layer) and layer normalization before the output: the Norm
// steps of every kind, forward and backward, and BatchNormalization's
// moving statistics, read back after each step.
func normModel(out layers.Activation) *nn.Sequential {
	return nn.NewSequential(layers.Input(32, 32, 3),
		layers.Conv2D(4, 3, layers.Padding("same")),
		layers.BatchNormalization(),
		layers.NewActivation(layers.ReLU),
		layers.MaxPooling2D(),
		layers.Flatten(),
		layers.LayerNormalization(),
		layers.Dense(10, out))
}

// residualModel is a functional model (nn.NewModel) of a residual block
// (a convolution, BatchNormalization, Add), a shared convolution, a
// broadcast Multiply and a Concatenate: the merge ops and a shared layer's
// summed gradient on the device.
func residualModel(out layers.Activation) *nn.Sequential {
	in := nn.Input(32, 32, 3)
	x := nn.Apply(layers.Conv2D(4, 3, layers.Padding("same"), layers.ReLU), in)
	y := nn.Apply(layers.BatchNormalization(), nn.Apply(layers.Conv2D(4, 3, layers.Padding("same")), x))
	x = nn.Apply(layers.NewActivation(layers.ReLU), nn.Apply(layers.Add(), x, y))
	shared := layers.Conv2D(4, 3, layers.Padding("same"), layers.Tanh)
	z := nn.Apply(shared, nn.Apply(shared, x))
	gate := nn.Apply(layers.Conv2D(1, 1, layers.Sigmoid), x)
	x = nn.Apply(layers.Concatenate(-1), nn.Apply(layers.Multiply(), x, gate), z)
	x = nn.Apply(layers.Flatten(), nn.Apply(layers.MaxPooling2D(), x))
	m, err := nn.NewModel([]*nn.Tensor{in}, []*nn.Tensor{nn.Apply(layers.Dense(10, out), x)})
	if err != nil {
		panic(err) // the graph above is fixed: a failure is a bug of this file
	}
	return m
}

// embeddingModel averages the embeddings of 6 indices in [0, 20): the
// Gather and ScatterAdd steps.
func embeddingModel(out layers.Activation) *nn.Sequential {
	return nn.NewSequential(layers.Input(6), layers.Embedding(20, 8), layers.GlobalAveragePooling1D(), layers.Dense(10, out))
}

// regularizedModel is mlpModel's first layers with a kernel, a bias and an
// activity regularizer on its hidden Dense layer.
func regularizedModel(out layers.Activation) *nn.Sequential {
	return nn.NewSequential(layers.Input(32, 32, 3), layers.Flatten(),
		layers.Dense(64, layers.ReLU, layers.KernelRegularizer(layers.L2(0.01)), layers.BiasRegularizer(layers.L1(0.01)),
			layers.ActivityRegularizer(layers.L1L2(0.001, 0.01))),
		layers.Dense(10, out))
}

// activationsModel has every activation of issue 30 in it: the
// approximate GELU after a convolution, PReLU with one alpha per channel
// (a regularized weight, broadcast over the batch and the image), swish,
// the LeakyReLU and ELU layers with alphas of their own, SELU, softplus,
// softsign and exponential; the output's activation is out.
func activationsModel(out layers.Activation) *nn.Sequential {
	return nn.NewSequential(layers.Input(32, 32, 3),
		layers.Conv2D(4, 3, layers.Padding("same"), layers.GELUApproximate),
		layers.NewPReLU(layers.SharedAxes(1, 2), layers.AlphaInitializer(layers.RandomNormal(0.25, 0.1)),
			layers.AlphaRegularizer(layers.L2(0.01))),
		layers.MaxPooling2D(), layers.Flatten(),
		layers.Dense(32, layers.Swish), layers.NewLeakyReLU(0.3),
		layers.Dense(16, layers.SELU), layers.NewELU(0.5),
		layers.Dense(16, layers.Softplus), layers.Dense(16, layers.Softsign), layers.NewActivation(layers.Exponential),
		layers.Dense(10, out))
}

// sequences is n samples of 6 indices in [0, 20) whose class (one-hot,
// 10 columns) they reveal, and one sample whose index at position bad (if
// not negative) is 20.
func sequences(t testing.TB, n, bad int) data.Dataset {
	t.Helper()
	rng := rand.New(rand.NewPCG(4, 4))
	x, y := make([]float32, n*6), make([]float32, n*10)
	for i := 0; i < n; i++ {
		c := rng.IntN(10)
		for j := 0; j < 6; j++ {
			x[i*6+j] = float32((c + rng.IntN(3)*j) % 20)
		}
		y[i*10+c] = 1
	}
	if bad >= 0 {
		x[bad] = 20
	}
	d, err := data.TensorData(tensor.New(tensor.WithShape(n, 6), tensor.WithBacking(x)), tensor.New(tensor.WithShape(n, 10), tensor.WithBacking(y)))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// trainingWeights are n sample weights: 0.25, 0.5, 1, 1.5, 0, 0.25, ...
func trainingWeights(n int) []float32 {
	w := make([]float32, n)
	for i := range w {
		w[i] = []float32{0.25, 0.5, 1, 1.5, 0}[i%5]
	}
	return w
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
		// data, when not nil, replaces 512 blobs of 32×32×3 with cols
		// label columns.
		data func(t testing.TB) data.Dataset
		// fit are Fit's options beyond the epochs, steps and seed.
		fit []nn.Option
	}{
		// The flagship's pairing: sigmoid output, categorical cross-entropy
		// from the logits, SGD at Keras' 0.01.
		{"sigmoid+categorical/sgd", mlpModel, layers.Sigmoid, losses.CategoricalCrossentropy{}, func() (optim.Optimizer, error) {
			return optim.NewSGD(optim.SGDConfig{})
		}, 10, nil, nil},
		// And the flagship itself, train's model, at its full size.
		{"flagship sigmoid+categorical/sgd", flagshipModel, layers.Sigmoid, losses.CategoricalCrossentropy{}, func() (optim.Optimizer, error) {
			return optim.NewSGD(optim.SGDConfig{})
		}, 10, nil, nil},
		{"softmax+sparse/momentum", mlpModel, layers.Softmax, losses.SparseCategoricalCrossentropy{}, func() (optim.Optimizer, error) {
			return optim.NewSGD(optim.SGDConfig{LearningRate: 0.01, Momentum: 0.9})
		}, 1, nil, nil},
		{"softmax+categorical/adam", mlpModel, layers.Softmax, losses.CategoricalCrossentropy{}, func() (optim.Optimizer, error) {
			return optim.NewAdam(optim.AdamConfig{})
		}, 10, nil, nil},
		{"tanh+mse/sgd", mlpModel, layers.Tanh, losses.MeanSquaredError{}, func() (optim.Optimizer, error) {
			return optim.NewSGD(optim.SGDConfig{LearningRate: 0.05})
		}, 10, nil, nil},
		{"gelu+mse/sgd", mlpModel, layers.GELU, losses.MeanSquaredError{}, func() (optim.Optimizer, error) {
			return optim.NewSGD(optim.SGDConfig{LearningRate: 0.05})
		}, 10, nil, nil},
		// Every other activation, the LeakyReLU, ELU and PReLU layers.
		{"activations+hard_sigmoid+mse/sgd", activationsModel, layers.HardSigmoid, losses.MeanSquaredError{}, func() (optim.Optimizer, error) {
			return optim.NewSGD(optim.SGDConfig{LearningRate: 0.05})
		}, 10, nil, nil},
		// Conv2D same + relu, max pooling, dropout: the image kernels,
		// forward and backward, and dropout's mask for each step.
		{"cnn+softmax+categorical/sgd", cnnModel, layers.Softmax, losses.CategoricalCrossentropy{}, func() (optim.Optimizer, error) {
			return optim.NewSGD(optim.SGDConfig{LearningRate: 0.05})
		}, 10, nil, nil},
		// Conv2D, batch normalization, ReLU, pooling, layer
		// normalization: every Norm step, and the moving statistics that
		// Evaluate then normalizes with.
		{"batchnorm+layernorm/sgd", normModel, layers.Softmax, losses.CategoricalCrossentropy{}, func() (optim.Optimizer, error) {
			return optim.NewSGD(optim.SGDConfig{LearningRate: 0.005})
		}, 10, nil, nil},
		// A functional model: merges, a residual block, a shared layer.
		{"functional residual/sgd", residualModel, layers.Softmax, losses.CategoricalCrossentropy{}, func() (optim.Optimizer, error) {
			return optim.NewSGD(optim.SGDConfig{LearningRate: 0.005})
		}, 10, nil, nil},
		// Embedding: Gather and ScatterAdd, repeated indices.
		{"embedding/adam", embeddingModel, layers.Softmax, losses.CategoricalCrossentropy{}, func() (optim.Optimizer, error) {
			return optim.NewAdam(optim.AdamConfig{LearningRate: 0.01})
		}, 10, func(t testing.TB) data.Dataset { return sequences(t, 512, -1) }, nil},
		// Kernel, bias and activity regularizers: the Penalty and
		// PenaltyGrad steps, and the Add steps that sum a weight's two
		// gradients and the losses.
		{"regularizers/sgd", regularizedModel, layers.Softmax, losses.CategoricalCrossentropy{}, func() (optim.Optimizer, error) {
			return optim.NewSGD(optim.SGDConfig{LearningRate: 0.01})
		}, 10, nil, nil},
		// The other update rules and the options, each on the GPU.
		{"rmsprop centered+momentum", mlpModel, layers.Softmax, losses.CategoricalCrossentropy{}, func() (optim.Optimizer, error) {
			return optim.NewRMSprop(optim.RMSpropConfig{LearningRate: 1e-4, Momentum: 0.5, Centered: true})
		}, 10, nil, nil},
		{"adagrad", mlpModel, layers.Softmax, losses.CategoricalCrossentropy{}, func() (optim.Optimizer, error) {
			return optim.NewAdagrad(optim.AdagradConfig{LearningRate: 0.01})
		}, 10, nil, nil},
		{"adadelta", mlpModel, layers.Softmax, losses.CategoricalCrossentropy{}, func() (optim.Optimizer, error) {
			return optim.NewAdadelta(optim.AdadeltaConfig{LearningRate: 1})
		}, 10, nil, nil},
		{"adamax", mlpModel, layers.Softmax, losses.CategoricalCrossentropy{}, func() (optim.Optimizer, error) {
			return optim.NewAdamax(optim.AdamaxConfig{})
		}, 10, nil, nil},
		{"nadam", mlpModel, layers.Softmax, losses.CategoricalCrossentropy{}, func() (optim.Optimizer, error) {
			return optim.NewNadam(optim.NadamConfig{})
		}, 10, nil, nil},
		{"adam amsgrad", mlpModel, layers.Softmax, losses.CategoricalCrossentropy{}, func() (optim.Optimizer, error) {
			return optim.NewAdam(optim.AdamConfig{AMSGrad: true})
		}, 10, nil, nil},
		{"adamw", mlpModel, layers.Softmax, losses.CategoricalCrossentropy{}, func() (optim.Optimizer, error) {
			return optim.NewAdamW(optim.AdamConfig{Options: optim.Options{WeightDecay: 0.01}})
		}, 10, nil, nil},
		{"sgd clipnorm+clipvalue+weight decay", mlpModel, layers.Softmax, losses.CategoricalCrossentropy{}, func() (optim.Optimizer, error) {
			return optim.NewSGD(optim.SGDConfig{LearningRate: 0.01, Momentum: 0.9,
				Options: optim.Options{ClipNorm: 1, ClipValue: 0.05, WeightDecay: 0.01}})
		}, 10, nil, nil},
		// Clipping by global norm: a GlobalNorm step (gk_abs_sq_sums over
		// every gradient, gk_global_scale) whose device float every
		// update reads; bounds low enough to bite.
		{"sgd momentum global_clipnorm", mlpModel, layers.Softmax, losses.CategoricalCrossentropy{}, func() (optim.Optimizer, error) {
			return optim.NewSGD(optim.SGDConfig{LearningRate: 0.05, Momentum: 0.9, Options: optim.Options{GlobalClipNorm: 0.1}})
		}, 10, nil, nil},
		{"adam global_clipnorm+clipvalue+weight decay", mlpModel, layers.Softmax, losses.CategoricalCrossentropy{}, func() (optim.Optimizer, error) {
			return optim.NewAdam(optim.AdamConfig{Options: optim.Options{GlobalClipNorm: 0.5, ClipValue: 0.05, WeightDecay: 0.01}})
		}, 10, nil, nil},
		{"cnn+softmax+categorical/rmsprop global_clipnorm", cnnModel, layers.Softmax, losses.CategoricalCrossentropy{}, func() (optim.Optimizer, error) {
			return optim.NewRMSprop(optim.RMSpropConfig{Options: optim.Options{GlobalClipNorm: 0.2}})
		}, 10, nil, nil},
		// The losses' parameters and sample weights (gk_loss and
		// gk_loss_grad with ls, delta and w), and the hinge losses' pass
		// over the labels (one-hot: read as -1/1).
		{"weighted (sample and class weights)", mlpModel, layers.Softmax, losses.CategoricalCrossentropy{}, func() (optim.Optimizer, error) {
			return optim.NewSGD(optim.SGDConfig{LearningRate: 0.01})
		}, 10, nil, []nn.Option{nn.SampleWeight(trainingWeights(512)), nn.ClassWeight(map[int]float64{
			0: 1, 1: 0.5, 2: 2, 3: 1, 4: 0.25, 5: 1, 6: 1.5, 7: 1, 8: 0, 9: 1})}},
		{"softmax+categorical label smoothing/adam", mlpModel, layers.Softmax, losses.CategoricalCrossentropy{LabelSmoothing: 0.1}, func() (optim.Optimizer, error) {
			return optim.NewAdam(optim.AdamConfig{})
		}, 10, nil, nil},
		{"linear+huber delta/sgd", mlpModel, layers.Linear, losses.Huber{Delta: 0.5}, func() (optim.Optimizer, error) {
			return optim.NewSGD(optim.SGDConfig{LearningRate: 0.05})
		}, 10, nil, nil},
		{"tanh+hinge/sgd", mlpModel, layers.Tanh, losses.Hinge{}, func() (optim.Optimizer, error) {
			return optim.NewSGD(optim.SGDConfig{LearningRate: 0.05})
		}, 10, nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var ds data.Dataset
			if tc.data != nil {
				ds = tc.data(t)
			} else {
				ds = modeltest.Blobs(t, 512, []int{32, 32, 3}, tc.cols)
			}
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
				fit := append([]nn.Option{nn.Epochs(50), nn.StepsPerEpoch(1), nn.Seed(5), nn.Verbose(0)}, tc.fit...)
				h, err := model.Fit(context.Background(), ds, fit...)
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
			ce, err := cpu.Evaluate(context.Background(), ds, nn.Verbose(0))
			if err != nil {
				t.Fatal(err)
			}
			ge, err := gpu.Evaluate(context.Background(), ds, nn.Verbose(0))
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

// TestBadIndexFailsAsOnCPU fits and evaluates an Embedding model on data
// with an index outside the table, on /CPU:0 and /GPU:0: both fail with an
// *ops.IndexError naming the same position and value, and the same
// message.
func TestBadIndexFailsAsOnCPU(t *testing.T) {
	needGPU(t)
	const bad = 5*6 + 4 // sample 5, step 4: in the first batch
	ds := sequences(t, 64, bad)
	run := func(dev string) (fitErr, evalErr error) {
		model := embeddingModel(layers.Softmax)
		model.SetSeed(11)
		opt, err := optim.NewSGD(optim.SGDConfig{})
		if err != nil {
			t.Fatal(err)
		}
		if err := model.Compile(opt, losses.CategoricalCrossentropy{}, nil, nn.OnDevice(dev)); err != nil {
			t.Fatal(err)
		}
		defer model.Close()
		_, fitErr = model.Fit(context.Background(), ds, nn.Epochs(1), nn.Shuffle(false), nn.Verbose(0))
		_, evalErr = model.Evaluate(context.Background(), ds, nn.Verbose(0))
		return fitErr, evalErr
	}
	cpuFit, cpuEval := run("/CPU:0")
	gpuFit, gpuEval := run("/GPU:0")
	for _, c := range []struct {
		what     string
		cpu, gpu error
	}{{"Fit", cpuFit, gpuFit}, {"Evaluate", cpuEval, gpuEval}} {
		var ie *ops.IndexError
		if !errors.As(c.gpu, &ie) {
			t.Errorf("%s on /GPU:0: %v, want an *ops.IndexError", c.what, c.gpu)
			continue
		}
		if ie.At != bad || ie.Value != 20 || ie.Rows != 20 {
			t.Errorf("%s on /GPU:0: %+v, want index %d, value 20, 20 rows", c.what, *ie, bad)
		}
		if c.cpu == nil || c.gpu.Error() != c.cpu.Error() {
			t.Errorf("%s: %q on /GPU:0, %q on /CPU:0", c.what, c.gpu, c.cpu)
		}
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
		{"adam amsgrad", func() (optim.Optimizer, error) {
			return optim.NewAdam(optim.AdamConfig{LearningRate: 0.01, AMSGrad: true})
		}},
		{"adamw clipnorm", func() (optim.Optimizer, error) {
			return optim.NewAdamW(optim.AdamConfig{LearningRate: 0.01, Options: optim.Options{ClipNorm: 0.5}})
		}},
		{"rmsprop centered momentum clipvalue", func() (optim.Optimizer, error) {
			return optim.NewRMSprop(optim.RMSpropConfig{LearningRate: 0.01, Momentum: 0.5, Centered: true,
				Options: optim.Options{ClipValue: 0.01}})
		}},
		{"adagrad", func() (optim.Optimizer, error) { return optim.NewAdagrad(optim.AdagradConfig{LearningRate: 0.05}) }},
		{"adadelta", func() (optim.Optimizer, error) { return optim.NewAdadelta(optim.AdadeltaConfig{LearningRate: 1}) }},
		{"adamax", func() (optim.Optimizer, error) { return optim.NewAdamax(optim.AdamaxConfig{LearningRate: 0.01}) }},
		{"nadam weight decay", func() (optim.Optimizer, error) {
			return optim.NewNadam(optim.NadamConfig{LearningRate: 0.01, Options: optim.Options{WeightDecay: 0.1}})
		}},
		{"sgd clipnorm clipvalue", func() (optim.Optimizer, error) {
			return optim.NewSGD(optim.SGDConfig{LearningRate: 0.1, Options: optim.Options{ClipNorm: 0.5, ClipValue: 0.02}})
		}},
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
		ds := make([]float32, n)
		for i := range ds {
			if seed != 0 {
				ds[i] = float32(scale * rng.NormFloat64())
			}
		}
		return gorgonia.NewTensor(g, tensor.Float32, len(shape), gorgonia.WithShape(shape...), gorgonia.WithName(name),
			gorgonia.WithValue(tensor.New(tensor.WithShape(shape...), tensor.WithBacking(ds))))
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
