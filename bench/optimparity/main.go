// Command optimparity writes what bench/optim_parity.py needs to check
// every optimizer of package optim against a PyTorch twin: a small model's
// initial weights, a deterministic synthetic dataset, and, for each
// optimizer configuration of a table, the optimizer's Keras config and the
// loss of each of its training steps.
//
//	go run ./bench/optimparity --out DIR [--steps 50] [--batch-size 32] [--configs adam,rmsprop] [--list]
//
// The model is Input(4, 4, 3) -> Flatten -> Dense(64, relu) ->
// Dense(10, softmax), categorical cross-entropy (computed from the logits,
// as Keras computes it after a softmax), seeded with model.SetSeed(1):
// every configuration starts from the same weights. The data are
// steps·batch samples in [0, 1) with one-hot labels, trained on once, in
// order (Fit with Shuffle(false), one epoch), so step k sees samples
// (k-1)·batch .. k·batch-1. DIR receives:
//
//	initial.safetensors     the weights before training (model.SaveWeights)
//	images.f32, labels.f32  the samples (4, 4, 3) and their one-hot labels
//	                        (10), raw little-endian float32
//	NAME.final.safetensors  each configuration's weights after the last step
//	run.json                the settings, the layers with their weights'
//	                        names and shapes, and per configuration: its
//	                        name, what it changes from Keras' defaults, the
//	                        optimizer's Keras config (optim.ConfigOf: class
//	                        name and arguments with the defaults filled
//	                        in, learning_rate a schedule's config where
//	                        there is one) and each step's loss
//
// Each step's loss is recovered from the running means Fit reports to its
// batch callbacks (bench/internal/parity.StepLosses), exact to about 1e-13.
//
// Learning rates: Keras' defaults (0.01 for SGD, 0.001 for the others)
// barely move this model's loss in 50 steps for some optimizers (Adadelta's
// 0.001 moves it by less than 1e-5), which would make the check blind, so
// the table raises them; each configuration's note says what it changes.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gokeras/gokeras/bench/internal/parity"
	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/optim"
	"gorgonia.org/tensor"
)

// inputShape is one sample's shape, classes the labels' width.
var inputShape = []int{4, 4, 3}

const classes = 10

// setup is one optimizer configuration of the table.
type setup struct {
	name string
	// note says what differs from Keras' defaults.
	note string
	make func() (optim.Optimizer, error)
}

func sgd(c optim.SGDConfig) func() (optim.Optimizer, error) {
	return func() (optim.Optimizer, error) { return optim.NewSGD(c) }
}

func adam(c optim.AdamConfig) func() (optim.Optimizer, error) {
	return func() (optim.Optimizer, error) { return optim.NewAdam(c) }
}

// setups is the table: every optimizer with Keras' defaults but the
// learning rate, then the variants and the Options.
var setups = []setup{
	{"sgd", "learning_rate 0.1", sgd(optim.SGDConfig{LearningRate: 0.1})},
	{"sgd_momentum", "learning_rate 0.05, momentum 0.9", sgd(optim.SGDConfig{LearningRate: 0.05, Momentum: 0.9})},
	{"sgd_nesterov", "learning_rate 0.05, momentum 0.9, nesterov", sgd(optim.SGDConfig{LearningRate: 0.05, Momentum: 0.9, Nesterov: true})},
	{"adam", "learning_rate 0.01", adam(optim.AdamConfig{LearningRate: 0.01})},
	{"adam_amsgrad", "learning_rate 0.01, amsgrad", adam(optim.AdamConfig{LearningRate: 0.01, AMSGrad: true})},
	{"adamw", "learning_rate 0.01 (weight_decay 0.004, AdamW's default)", func() (optim.Optimizer, error) {
		return optim.NewAdamW(optim.AdamConfig{LearningRate: 0.01})
	}},
	{"rmsprop", "learning_rate 0.005", func() (optim.Optimizer, error) {
		return optim.NewRMSprop(optim.RMSpropConfig{LearningRate: 0.005})
	}},
	{"rmsprop_momentum", "learning_rate 0.001, momentum 0.9", func() (optim.Optimizer, error) {
		return optim.NewRMSprop(optim.RMSpropConfig{LearningRate: 0.001, Momentum: 0.9})
	}},
	{"rmsprop_centered", "learning_rate 0.005, centered", func() (optim.Optimizer, error) {
		return optim.NewRMSprop(optim.RMSpropConfig{LearningRate: 0.005, Centered: true})
	}},
	{"adagrad", "learning_rate 0.1", func() (optim.Optimizer, error) {
		return optim.NewAdagrad(optim.AdagradConfig{LearningRate: 0.1})
	}},
	{"adadelta", "learning_rate 1.0", func() (optim.Optimizer, error) {
		return optim.NewAdadelta(optim.AdadeltaConfig{LearningRate: 1})
	}},
	{"adamax", "learning_rate 0.01", func() (optim.Optimizer, error) {
		return optim.NewAdamax(optim.AdamaxConfig{LearningRate: 0.01})
	}},
	{"nadam", "learning_rate 0.01", func() (optim.Optimizer, error) {
		return optim.NewNadam(optim.NadamConfig{LearningRate: 0.01})
	}},
	{"adagrad_epsilon", "learning_rate 0.1, epsilon 0.1 (where sqrt(a + epsilon) and sqrt(a) + epsilon differ visibly)", func() (optim.Optimizer, error) {
		return optim.NewAdagrad(optim.AdagradConfig{LearningRate: 0.1, Epsilon: optim.F(0.1)})
	}},
	{"adamax_epsilon", "learning_rate 0.01, epsilon 0.01 (where Keras' and PyTorch's epsilon placements differ visibly)", func() (optim.Optimizer, error) {
		return optim.NewAdamax(optim.AdamaxConfig{LearningRate: 0.01, Epsilon: optim.F(0.01)})
	}},
	{"sgd_clipnorm", "SGD learning_rate 0.1, clipnorm 0.2", sgd(optim.SGDConfig{LearningRate: 0.1,
		Options: optim.Options{ClipNorm: 0.2}})},
	{"sgd_clipvalue", "SGD learning_rate 0.1, clipvalue 0.02", sgd(optim.SGDConfig{LearningRate: 0.1,
		Options: optim.Options{ClipValue: 0.02}})},
	{"sgd_momentum_global_clipnorm", "SGD learning_rate 0.05, momentum 0.9, global_clipnorm 0.3", sgd(optim.SGDConfig{LearningRate: 0.05,
		Momentum: 0.9, Options: optim.Options{GlobalClipNorm: 0.3}})},
	{"sgd_clipnorm_clipvalue", "SGD learning_rate 0.1, clipnorm 0.2 and clipvalue 0.02 together", sgd(optim.SGDConfig{LearningRate: 0.1,
		Options: optim.Options{ClipNorm: 0.2, ClipValue: 0.02}})},
	{"sgd_weight_decay", "SGD learning_rate 0.1, weight_decay 0.05", sgd(optim.SGDConfig{LearningRate: 0.1,
		Options: optim.Options{WeightDecay: 0.05}})},
	{"rmsprop_weight_decay", "RMSprop learning_rate 0.005, weight_decay 0.5", func() (optim.Optimizer, error) {
		return optim.NewRMSprop(optim.RMSpropConfig{LearningRate: 0.005, Options: optim.Options{WeightDecay: 0.5}})
	}},
	{"sgd_momentum_exponential_decay", "SGD momentum 0.9, learning_rate ExponentialDecay(0.1, decay_steps 10, decay_rate 0.5)",
		sgd(optim.SGDConfig{Momentum: 0.9, Options: optim.Options{
			Schedule: optim.ExponentialDecay{InitialLearningRate: 0.1, DecaySteps: 10, DecayRate: 0.5}}})},
	{"adam_exponential_decay", "Adam, learning_rate ExponentialDecay(0.02, decay_steps 10, decay_rate 0.5)",
		adam(optim.AdamConfig{Options: optim.Options{
			Schedule: optim.ExponentialDecay{InitialLearningRate: 0.02, DecaySteps: 10, DecayRate: 0.5}}})},
}

func newModel(seed uint64) (*nn.Sequential, error) {
	model := nn.NewSequential(layers.Input(inputShape...), layers.Flatten(),
		layers.Dense(64, layers.ReLU), layers.Dense(classes, layers.Softmax))
	model.SetSeed(seed)
	return model, model.Build(inputShape...)
}

// synthetic makes n samples in [0, 1) and one-hot labels: uniform noise in
// [0, 0.5) plus 0.5 on the features j with j%10 equal to the sample's
// class, so that the classes can be learnt in a few steps.
func synthetic(n int) (x, y []float32) {
	rng := rand.New(rand.NewPCG(1, 2))
	size := inputShape[0] * inputShape[1] * inputShape[2]
	x = make([]float32, n*size)
	y = make([]float32, n*classes)
	for i := range n {
		c := rng.IntN(classes)
		y[i*classes+c] = 1
		for j := range size {
			v := 0.5 * rng.Float32()
			if j%classes == c {
				v += 0.5
			}
			x[i*size+j] = v
		}
	}
	return x, y
}

type configRun struct {
	Name string `json:"name"`
	Note string `json:"note"`
	// Optimizer is optim.ConfigOf's Keras config before the first step.
	Optimizer    optim.Config `json:"optimizer"`
	Losses       []float64    `json:"losses"`
	RunningMeans []float64    `json:"running_means"`
}

type runInfo struct {
	Seed       uint64             `json:"seed"`
	Steps      int                `json:"steps"`
	BatchSize  int                `json:"batch_size"`
	Device     string             `json:"device"`
	Samples    int                `json:"samples"`
	InputShape []int              `json:"input_shape"`
	Classes    int                `json:"classes"`
	Layers     []parity.LayerInfo `json:"layers"`
	LossMethod string             `json:"loss_method"`
	Configs    []configRun        `json:"configs"`
}

// train runs one configuration from the seeded model and returns its
// record; initial is the weights every configuration must start from.
func train(s setup, info runInfo, ds data.Dataset, initial []byte, out string) (configRun, error) {
	model, err := newModel(info.Seed)
	if err != nil {
		return configRun{}, err
	}
	// SetSeed makes the same weights each time; check it, since the
	// twins start every configuration from initial.safetensors.
	path := filepath.Join(out, s.name+".initial.safetensors")
	if err := model.SaveWeights(path); err != nil {
		return configRun{}, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return configRun{}, err
	}
	if err := os.Remove(path); err != nil {
		return configRun{}, err
	}
	if !bytes.Equal(b, initial) {
		return configRun{}, fmt.Errorf("the seeded model's weights differ from initial.safetensors")
	}
	opt, err := s.make()
	if err != nil {
		return configRun{}, err
	}
	cfg, err := optim.ConfigOf(opt)
	if err != nil {
		return configRun{}, err
	}
	if err := model.Compile(opt, losses.CategoricalCrossentropy{}, nil, nn.OnDevice(info.Device)); err != nil {
		return configRun{}, err
	}
	defer model.Close()
	rec := &parity.StepLosses{Batch: info.BatchSize, N: info.Samples, Steps: info.Steps}
	if _, err := model.Fit(context.Background(), ds, nn.Epochs(1), nn.BatchSize(info.BatchSize), nn.Shuffle(false),
		nn.Verbose(0), nn.Callbacks(rec)); err != nil {
		return configRun{}, err
	}
	if len(rec.Losses) != info.Steps {
		return configRun{}, fmt.Errorf("fit ran %d steps, want %d", len(rec.Losses), info.Steps)
	}
	if err := model.SaveWeights(filepath.Join(out, s.name+".final.safetensors")); err != nil {
		return configRun{}, err
	}
	return configRun{Name: s.name, Note: s.note, Optimizer: cfg, Losses: rec.Losses, RunningMeans: rec.Means}, nil
}

func run() error {
	out := flag.String("out", "", "directory to write into (created if missing)")
	steps := flag.Int("steps", 50, "training steps")
	batch := flag.Int("batch-size", 32, "batch size")
	dev := flag.String("device", "/CPU:0", "device to train on")
	seed := flag.Uint64("seed", 1, "model.SetSeed's seed")
	only := flag.String("configs", "", "comma-separated configuration names (default: all; --list lists them)")
	list := flag.Bool("list", false, "list the configurations and exit")
	flag.Parse()
	if flag.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", flag.Args())
	}
	if *list {
		for _, s := range setups {
			fmt.Printf("%-32s %s\n", s.name, s.note)
		}
		return nil
	}
	if *out == "" {
		return fmt.Errorf("--out is required")
	}
	if *steps <= 0 || *batch <= 0 {
		return fmt.Errorf("--steps and --batch-size must be positive")
	}
	chosen := setups
	if *only != "" {
		chosen = nil
		for _, name := range strings.Split(*only, ",") {
			i := slices.IndexFunc(setups, func(s setup) bool { return s.name == strings.TrimSpace(name) })
			if i < 0 {
				return fmt.Errorf("--configs: unknown configuration %q (go run ./bench/optimparity --list)", name)
			}
			chosen = append(chosen, setups[i])
		}
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}

	model, err := newModel(*seed)
	if err != nil {
		return err
	}
	initialPath := filepath.Join(*out, "initial.safetensors")
	if err := model.SaveWeights(initialPath); err != nil {
		return err
	}
	initial, err := os.ReadFile(initialPath)
	if err != nil {
		return err
	}
	n := *steps * *batch
	xs, ys := synthetic(n)
	if err := parity.WriteFloats(filepath.Join(*out, "images.f32"), xs); err != nil {
		return err
	}
	if err := parity.WriteFloats(filepath.Join(*out, "labels.f32"), ys); err != nil {
		return err
	}
	ds, err := data.TensorData(tensor.New(tensor.WithShape(append([]int{n}, inputShape...)...), tensor.WithBacking(xs)),
		tensor.New(tensor.WithShape(n, classes), tensor.WithBacking(ys)))
	if err != nil {
		return err
	}
	info := runInfo{Seed: *seed, Steps: *steps, BatchSize: *batch, Device: *dev, Samples: n, InputShape: inputShape,
		Classes: classes, Layers: parity.Layers(model), LossMethod: parity.LossMethod}
	for _, s := range chosen {
		r, err := train(s, info, ds, initial, *out)
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		info.Configs = append(info.Configs, r)
		fmt.Printf("optimparity: %-32s %-9s loss %.6f -> %.6f (step 10: %.6f)\n", s.name, r.Optimizer.ClassName,
			r.Losses[0], r.Losses[len(r.Losses)-1], r.Losses[min(9, len(r.Losses)-1)])
	}
	b, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(*out, "run.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	fmt.Printf("optimparity: %d configurations, %d params, %d steps of batch %d on %s; wrote %s\n",
		len(chosen), model.CountParams(), *steps, *batch, *dev, *out)
	return nil
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "optimparity:", err)
		os.Exit(1)
	}
}
