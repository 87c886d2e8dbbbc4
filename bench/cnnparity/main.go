// Command cnnparity writes what bench/parity_cnn.py needs to check that
// gokeras trains the Keras cifar10_cnn as PyTorch does: the model's initial
// weights, a deterministic synthetic dataset, the loss of each of its SGD
// training steps, and the trained model's Predict outputs on one more batch.
//
//	go run ./bench/cnnparity --out DIR [--variant plain|batchnorm] [--steps 50] [--batch-size 32] [--lr 0.01] [--trajectory]
//
// bench/parity.sh runs it with --trajectory and --lr 0.1 (plain) or 0.01
// (batchnorm), so that a 3% error in a step's gradient is measurable
// against the weights (bench/parity_cnn.py's docstring says why), and,
// for the control, from a copy of the tree in which every loss gradient is
// scaled by 32/33 (bench/parity.sh --mutate-grad-scale).
//
// The model is nn/cnn_test.go's cifar10CNN with every dropout rate 0
// (layers.Dropout(0) is the identity, so both frameworks compute the same
// function), seeded with model.SetSeed(1). DIR receives:
//
//	initial.safetensors  the weights before training (model.SaveWeights;
//	                     BatchNormalization's non-trainable moving_mean and
//	                     moving_variance included)
//	final.safetensors    the weights after the last step
//	images.f32           steps·batch images (32, 32, 3), raw little-endian float32, in [0, 1)
//	labels.f32           their one-hot labels (10), raw little-endian float32
//	eval_images.f32      one more batch of images, the next samples of the
//	                     same synthetic stream (not trained on)
//	predict.f32          model.Predict's outputs (softmax, batch·10) on
//	                     them after the last step: the inference graph,
//	                     which normalizes with the moving statistics
//	run.json             the settings, the layers with their weights' names
//	                     and shapes, and each step's loss
//	steps/step-NNNN.safetensors
//	                     with --trajectory, the weights after each step
//	                     1..steps-1 (SaveWeights from OnTrainBatchEnd), so
//	                     that parity_cnn.py can also run each step from
//	                     gokeras' own weights
//
// Each step's loss is recovered from the running means Fit reports to
// its batch callbacks (bench/internal/parity.StepLosses), exact to about
// 1e-13, far below the 1e-5 the comparison allows; run.json keeps the
// means as well.
//
// --variant names the model: "plain" is the cifar10_cnn; "batchnorm" is
// the same with a BatchNormalization (Keras' defaults: momentum 0.99,
// epsilon 1e-3) between the first convolution, now without activation,
// and a ReLU Activation layer (bench/torch_cnn.py's build_model has both);
// "resnet20" is applications.ResNetV1(20, ...), Keras' cifar10_resnet
// ResNet v1 (a functional model, bench/torch_resnet.py's twin), whose
// graph of layer calls run.json also carries ("calls").
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/gokeras/gokeras/applications"
	"github.com/gokeras/gokeras/bench/internal/parity"
	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/metrics"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/optim"
	"gorgonia.org/tensor"
)

// variants lists the models --variant accepts.
var variants = []string{"plain", "batchnorm", "resnet20"}

// newModel builds the variant's model, dropout rates 0.
func newModel(variant string) (*nn.Model, error) {
	if variant == "resnet20" {
		return applications.ResNetV1(20, []int{32, 32, 3}, 10)
	}
	ls := []layers.Layer{layers.Input(32, 32, 3)}
	switch variant {
	case "plain":
		ls = append(ls, layers.Conv2D(32, 3, layers.Padding("same"), layers.ReLU))
	case "batchnorm":
		ls = append(ls,
			layers.Conv2D(32, 3, layers.Padding("same")),
			layers.BatchNormalization(),
			layers.NewActivation(layers.ReLU))
	default:
		return nil, fmt.Errorf("--variant %q: unknown variant, want one of %q", variant, variants)
	}
	ls = append(ls,
		layers.Conv2D(32, 3, layers.ReLU),
		layers.MaxPooling2D(),
		layers.Dropout(0),
		layers.Conv2D(64, 3, layers.Padding("same"), layers.ReLU),
		layers.Conv2D(64, 3, layers.ReLU),
		layers.MaxPooling2D(),
		layers.Dropout(0),
		layers.Flatten(),
		layers.Dense(512, layers.ReLU),
		layers.Dropout(0),
		layers.Dense(10, layers.Softmax),
	)
	return nn.NewSequential(ls...), nil
}

// synthetic makes n images (32, 32, 3) in [0, 1) and one-hot labels:
// uniform noise in [0, 0.5) plus, for each sample's class c, a bright 8x8
// block at a place and in a channel that c fixes, so that training can
// learn something in a few steps.
func synthetic(n int) (x, y []float32) {
	rng := rand.New(rand.NewPCG(1, 2))
	x = make([]float32, n*32*32*3)
	y = make([]float32, n*10)
	for i := range n {
		c := rng.IntN(10)
		y[i*10+c] = 1
		img := x[i*32*32*3 : (i+1)*32*32*3]
		for j := range img {
			img[j] = 0.5 * rng.Float32()
		}
		r0, c0, ch := (c/5)*16+4, (c%5)*6+1, c%3
		for r := r0; r < r0+8; r++ {
			for col := c0; col < c0+8; col++ {
				img[(r*32+col)*3+ch] += 0.49
			}
		}
	}
	return x, y
}

type runInfo struct {
	Variant      string             `json:"variant"`
	Seed         uint64             `json:"seed"`
	Steps        int                `json:"steps"`
	BatchSize    int                `json:"batch_size"`
	LearningRate float64            `json:"learning_rate"`
	Device       string             `json:"device"`
	Samples      int                `json:"samples"`
	ImageShape   []int              `json:"image_shape"`
	Classes      int                `json:"classes"`
	Layers       []parity.LayerInfo `json:"layers"`
	// Calls is the model's graph of layer calls (the layers' inputs), which
	// the twin of a functional model (resnet20) is matched against.
	Calls        []parity.CallInfo `json:"calls"`
	Losses       []float64         `json:"losses"`
	RunningMeans []float64         `json:"running_means"`
	LossMethod   string            `json:"loss_method"`
	// Trajectory says steps/step-NNNN.safetensors hold the weights after
	// each step 1..Steps-1.
	Trajectory bool `json:"trajectory"`
	// EvalSamples is how many images eval_images.f32 and predict.f32 hold.
	EvalSamples int `json:"eval_samples"`
}

func run() error {
	out := flag.String("out", "", "directory to write into (created if missing)")
	variant := flag.String("variant", "plain", fmt.Sprintf("model variant, one of %q", variants))
	steps := flag.Int("steps", 50, "training steps")
	batch := flag.Int("batch-size", 32, "batch size")
	lr := flag.Float64("lr", 0.01, "SGD learning rate")
	dev := flag.String("device", "/CPU:0", "device to train on")
	seed := flag.Uint64("seed", 1, "model.SetSeed's seed")
	trajectory := flag.Bool("trajectory", false, "also write the weights after every step to DIR/steps/step-NNNN.safetensors")
	flag.Parse()
	if flag.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", flag.Args())
	}
	if *out == "" {
		return fmt.Errorf("--out is required")
	}
	if *steps <= 0 || *batch <= 0 || !(*lr > 0) {
		return fmt.Errorf("--steps, --batch-size and --lr must be positive")
	}
	model, err := newModel(*variant)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	model.SetSeed(*seed)
	if err := model.Build(32, 32, 3); err != nil {
		return err
	}
	if err := model.SaveWeights(filepath.Join(*out, "initial.safetensors")); err != nil {
		return err
	}

	n := *steps * *batch
	// One more batch of the same stream (synthetic draws sample by sample,
	// so the first n are those of synthetic(n)) for Predict.
	xs, ys := synthetic(n + *batch)
	evalX := xs[n*32*32*3:]
	xs, ys = xs[:n*32*32*3], ys[:n*10]
	if err := parity.WriteFloats(filepath.Join(*out, "eval_images.f32"), evalX); err != nil {
		return err
	}
	if err := parity.WriteFloats(filepath.Join(*out, "images.f32"), xs); err != nil {
		return err
	}
	if err := parity.WriteFloats(filepath.Join(*out, "labels.f32"), ys); err != nil {
		return err
	}
	ds, err := data.TensorData(tensor.New(tensor.WithShape(n, 32, 32, 3), tensor.WithBacking(xs)),
		tensor.New(tensor.WithShape(n, 10), tensor.WithBacking(ys)))
	if err != nil {
		return err
	}

	opt, err := optim.NewSGD(optim.SGDConfig{LearningRate: *lr})
	if err != nil {
		return err
	}
	if err := model.Compile(opt, losses.CategoricalCrossentropy{}, []metrics.Metric{&metrics.Accuracy{}}, nn.OnDevice(*dev)); err != nil {
		return err
	}
	defer model.Close()
	rec := &parity.StepLosses{Batch: *batch, N: n, Steps: *steps}
	if *trajectory {
		dir := filepath.Join(*out, "steps")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		rec.Save = func(step int) error {
			return model.SaveWeights(filepath.Join(dir, fmt.Sprintf("step-%04d.safetensors", step)))
		}
	}
	if _, err := model.Fit(context.Background(), ds, nn.Epochs(1), nn.BatchSize(*batch), nn.Shuffle(false),
		nn.Verbose(0), nn.Callbacks(rec)); err != nil {
		return err
	}
	if len(rec.Losses) != *steps {
		return fmt.Errorf("fit ran %d steps, want %d", len(rec.Losses), *steps)
	}
	if err := model.SaveWeights(filepath.Join(*out, "final.safetensors")); err != nil {
		return err
	}
	evalIn, err := data.TensorInputs(tensor.New(tensor.WithShape(*batch, 32, 32, 3), tensor.WithBacking(evalX)))
	if err != nil {
		return err
	}
	pred, err := model.Predict(context.Background(), evalIn, nn.BatchSize(*batch))
	if err != nil {
		return err
	}
	if err := parity.WriteFloats(filepath.Join(*out, "predict.f32"), pred.Values()); err != nil {
		return err
	}

	calls, err := parity.Calls(model)
	if err != nil {
		return err
	}
	info := runInfo{Calls: calls, Variant: *variant, Seed: *seed, Steps: *steps, BatchSize: *batch, LearningRate: *lr, Device: *dev,
		Samples: n, ImageShape: []int{32, 32, 3}, Classes: 10, Losses: rec.Losses, RunningMeans: rec.Means,
		Trajectory: *trajectory, EvalSamples: *batch, LossMethod: parity.LossMethod, Layers: parity.Layers(model)}
	b, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(*out, "run.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	fmt.Printf("cnnparity: variant %s, %d params, %d steps of batch %d, SGD lr %g on %s: loss %.6f -> %.6f; wrote %s\n",
		*variant, model.CountParams(), *steps, *batch, *lr, *dev, rec.Losses[0], rec.Losses[len(rec.Losses)-1], *out)
	return nil
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "cnnparity:", err)
		os.Exit(1)
	}
}
