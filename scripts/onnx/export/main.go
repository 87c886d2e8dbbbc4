// Command export builds, trains for a few steps and exports to ONNX the
// models scripts/check-onnx.sh checks in ONNX Runtime, and writes what
// the check compares with: each model's inputs, as the model's graph
// receives them, and gokeras' Predict outputs for them.
//
//	go run ./scripts/onnx/export -out DIR
//
// For each model NAME it writes DIR/NAME.onnx, and for each of the ONNX
// graph's inputs and outputs, IO, DIR/NAME.IO.bin (float32, little-endian,
// row-major): IO is "input" and "output" for a model of one input and one
// output, the graph's names for others ("input_1", "class"). DIR/
// manifest.json lists them with their graph names and shapes. It also
// exports each model to TensorFlow.js' layers format (export/tfjs), into
// the folder DIR/NAME.tfjs, which scripts/check-tfjs.sh loads with
// TensorFlow.js and compares with the same outputs; the manifest names
// the folder, or why TF.js refused the model.
package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/export/onnx"
	"github.com/gokeras/gokeras/export/tfjs"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/optim"
)

// entry is one model of the manifest.
type entry struct {
	Name string `json:"name"`
	ONNX string `json:"onnx"`
	// TFJS is the folder of the model's TF.js export (export/tfjs), and
	// TFJSRefused why there is none (a layer TensorFlow.js lacks).
	TFJS        string   `json:"tfjs,omitempty"`
	TFJSRefused string   `json:"tfjs_refused,omitempty"`
	Inputs      []tensor `json:"inputs"`
	Outputs     []tensor `json:"outputs"`
}

// tensor is one of a model's inputs or outputs: its name in the ONNX
// graph, the file of its values and their shape, batch first.
type tensor struct {
	Name  string `json:"name"`
	File  string `json:"file"`
	Shape []int  `json:"shape"`
}

// spec is a model to check: its layers (a Sequential of them) or a
// functional model, and how its samples are made.
type spec struct {
	name   string
	layers func() []layers.Layer
	// model makes a functional model, where layers is nil.
	model func() (*nn.Model, error)
	// samples makes n samples of one of the model's inputs.
	samples func(rng *rand.Rand, n int, shape []int) data.Samples
}

// pixels are uint8 images scaled as Keras' x / 255, as the CIFAR-10
// models take them: the ONNX model takes the scaled values.
func pixels(rng *rand.Rand, n int, shape []int) data.Samples {
	b := make([]uint8, n*size(shape))
	for i := range b {
		b[i] = uint8(rng.IntN(256))
	}
	return data.Pixels(b, 255, shape...)
}

// normals are float32 values of a standard normal distribution, shifted
// and scaled so that the normalizations have work to do.
func normals(rng *rand.Rand, n int, shape []int) data.Samples {
	v := make([]float32, n*size(shape))
	for i := range v {
		v[i] = float32(3*rng.NormFloat64() + 1)
	}
	return data.Flat(v, shape...)
}

// indices are integer indices below 50, held as float32, as an Embedding
// of input_dim 50 takes them.
func indices(rng *rand.Rand, n int, shape []int) data.Samples {
	v := make([]float32, n*size(shape))
	for i := range v {
		v[i] = float32(rng.IntN(50))
	}
	return data.Flat(v, shape...)
}

var specs = []spec{
	{"mlp", func() []layers.Layer { // the CIFAR-10 MLP of cmd/train --model mlp
		return []layers.Layer{layers.Input(32, 32, 3), layers.Flatten(),
			layers.Dense(3000, layers.ReLU), layers.Dense(1000, layers.ReLU), layers.Dense(10, layers.Sigmoid)}
	}, nil, pixels},
	{"cnn", func() []layers.Layer { // Keras' cifar10_cnn, as cmd/train --model cnn
		return []layers.Layer{layers.Input(32, 32, 3),
			layers.Conv2D(32, 3, layers.Padding("same"), layers.ReLU), layers.Conv2D(32, 3, layers.ReLU),
			layers.MaxPooling2D(), layers.Dropout(0.25),
			layers.Conv2D(64, 3, layers.Padding("same"), layers.ReLU), layers.Conv2D(64, 3, layers.ReLU),
			layers.MaxPooling2D(), layers.Dropout(0.25),
			layers.Flatten(), layers.Dense(512, layers.ReLU), layers.Dropout(0.5), layers.Dense(10, layers.Softmax)}
	}, nil, pixels},
	{"images", func() []layers.Layer { // odd sizes, even kernels, "same" everywhere, normalizations
		return []layers.Layer{layers.Input(15, 14, 3),
			layers.Conv2D(8, 4, layers.Padding("same")), // even kernel: the extra pad at the end
			layers.BatchNormalization(), layers.NewActivation(layers.Tanh),
			layers.AveragePooling2D(layers.PoolSize(3), layers.Strides(2), layers.Padding("same")), // the padding excluded
			layers.Conv2D(6, 3, layers.DilationRate(2), layers.Padding("same"), layers.ReLU),
			layers.MaxPooling2D(layers.Padding("same")),
			layers.BatchNormalization(layers.WithoutScale(), layers.Epsilon(0.01)),
			layers.Conv2D(5, 2, layers.KernelSize(2, 3), layers.Strides(1, 2), layers.Padding("same"), layers.WithoutBias()),
			layers.LayerNormalization(layers.WithoutCenter()),
			layers.Dropout(0.3),
			layers.Conv2D(4, 1, layers.Softmax), // softmax over the channels of every pixel
			layers.GlobalMaxPooling2D(),
			layers.Dense(6, layers.WithoutBias()), layers.Reshape([]int{2, -1}), layers.NewActivation(layers.Softmax), // per row of 3
			layers.Flatten(),
		}
	}, nil, normals},
	{"sequences", func() []layers.Layer { // the 1D layers, Reshape and the global poolings
		return []layers.Layer{layers.Input(21, 4), // odd lengths: the poolings pad
			layers.Conv1D(8, 4, layers.Padding("same"), layers.ReLU),
			layers.BatchNormalization(),
			layers.MaxPooling1D(layers.PoolSize(3), layers.Strides(2), layers.Padding("same")),
			layers.AveragePooling1D(layers.Padding("same")),
			layers.Conv1D(8, 3, layers.Sigmoid), layers.LayerNormalization(),
			layers.Dense(8, layers.Softmax), // on every step: the last axis, a softmax over it
			layers.Reshape([]int{-1, 4}), layers.Conv1D(5, 2, layers.DilationRate(2), layers.Padding("same"), layers.Tanh),
			layers.GlobalAveragePooling1D(), layers.Dense(8, layers.Tanh), layers.Reshape([]int{4, 2}),
			layers.AveragePooling1D(layers.PoolSize(3), layers.Strides(1)), layers.GlobalMaxPooling1D(),
		}
	}, nil, normals},
	{"gelu", func() []layers.Layer { // GELU, written out with Erf below operator set 20, channels first and last
		return []layers.Layer{layers.Input(6, 5, 3), layers.Conv2D(4, 3, layers.Padding("same"), layers.GELU),
			layers.Flatten(), layers.Dense(16, layers.GELU), layers.NewActivation(layers.GELU), layers.Dense(3)}
	}, nil, normals},
	{"activations", func() []layers.Layer { // every other activation, channels first and last; TF.js lacks some
		return []layers.Layer{layers.Input(5, 5, 3), layers.Conv2D(4, 3, layers.Padding("same"), layers.GELUApproximate),
			layers.NewActivation(layers.LeakyReLU), layers.NewPReLU(layers.SharedAxes(1, 2), layers.AlphaInitializer(layers.RandomNormal(0.2, 0.1))),
			layers.Flatten(), layers.Dense(12, layers.Swish), layers.NewLeakyReLU(0.3), layers.Dense(12, layers.ELU), layers.NewELU(0.5),
			layers.Dense(12, layers.SELU), layers.Dense(12, layers.Softplus), layers.Dense(12, layers.Softsign),
			layers.Dense(12, layers.HardSigmoid), layers.Dense(3, layers.Exponential)}
	}, nil, normals},
	{"activations_tfjs", func() []layers.Layer { // the activations and activation layers TF.js has, for its check
		return []layers.Layer{layers.Input(8), layers.Dense(12, layers.Swish), layers.NewLeakyReLU(0.3),
			layers.NewPReLU(layers.AlphaInitializer(layers.RandomNormal(0.2, 0.1))), layers.Dense(12, layers.ELU), layers.NewELU(1),
			layers.Dense(12, layers.SELU), layers.Dense(12, layers.Softplus), layers.Dense(12, layers.Softsign),
			layers.NewActivation(layers.HardSigmoid), layers.Dense(3)}
	}, nil, normals},
	{"embedding", func() []layers.Layer {
		return []layers.Layer{layers.Input(12), layers.Embedding(50, 8),
			layers.BatchNormalization(), layers.Conv1D(8, 3, layers.Padding("same"), layers.ReLU),
			layers.LayerNormalization(), layers.GlobalAveragePooling1D(), layers.Dense(3, layers.Softmax)}
	}, nil, indices},
	{"recurrent", func() []layers.Layer { // an Embedding, an LSTM's sequences, a GRU: ONNX's LSTM (its gates reordered) and GRU (linear_before_reset)
		return []layers.Layer{layers.Input(12), layers.Embedding(50, 8),
			layers.LSTM(8, layers.ReturnSequences()), layers.GRU(6), layers.Dense(3, layers.Softmax)}
	}, nil, indices},
	{"recurrent_backwards", func() []layers.Layer { // go_backwards (ONNX's reverse direction, the sequences in Keras' order), every other activation (alphas and betas consumed in order), GRU without reset_after, no bias
		return []layers.Layer{layers.Input(7, 4), layers.Conv1D(4, 2, layers.Padding("same")), // channels first before the recurrence
			layers.SimpleRNN(6, layers.GoBackwards(), layers.ReturnSequences()),
			layers.LSTM(5, layers.RecurrentActivation(layers.HardSigmoid), layers.Softsign, layers.GoBackwards(), layers.ReturnSequences()),
			layers.GRU(4, layers.ResetAfter(false), layers.WithoutBias(), layers.ReturnSequences()),
			layers.SimpleRNN(4, layers.Linear, layers.ReturnSequences()), // Affine, its alpha and beta
			layers.LSTM(4, layers.RecurrentActivation(layers.HardSigmoid), layers.LeakyReLU, layers.ReturnSequences()),
			layers.GRU(4, layers.RecurrentActivation(layers.HardSigmoid), layers.ELU, layers.GoBackwards(), layers.ReturnSequences()),
			layers.SimpleRNN(4, layers.Softplus, layers.ReturnSequences()),
			layers.SimpleRNN(4, layers.ReLU, layers.GoBackwards()), layers.Dense(3)}
	}, nil, normals},
	{"bidirectional", func() []layers.Layer { // Bidirectional of each merge mode: an LSTM's sequences concatenated, a GRU's summed, multiplied, a SimpleRNN's last states averaged
		return []layers.Layer{layers.Input(9, 4),
			layers.Bidirectional(layers.LSTM(5, layers.ReturnSequences())),
			layers.Bidirectional(layers.GRU(4, layers.ReturnSequences()), layers.MergeMode("sum")),
			layers.Bidirectional(layers.LSTM(4, layers.ReturnSequences(), layers.GoBackwards()), layers.MergeMode("mul")),
			layers.Bidirectional(layers.SimpleRNN(3), layers.MergeMode("ave")), layers.Dense(3)}
	}, nil, normals},
	{"time_distributed", func() []layers.Layer { // TimeDistributed of a convolution (channels first inside), a pooling, Flatten and Dense, the steps folded into the batch; a GRU over them
		return []layers.Layer{layers.Input(5, 6, 6, 2), layers.TimeDistributed(layers.Conv2D(3, 3, layers.ReLU)),
			layers.TimeDistributed(layers.MaxPooling2D()), layers.TimeDistributed(layers.Flatten()),
			layers.TimeDistributed(layers.Dense(6, layers.Tanh)), layers.GRU(4, layers.ReturnSequences()),
			layers.TimeDistributed(layers.Dense(2)), layers.Flatten()}
	}, nil, normals},
	{"functional_recurrent_states", nil, func() (*nn.Model, error) { // return_state, initial states, Bidirectional with merge mode None and return_state: several outputs of one call
		in := nn.Input(8, 4)
		seq := nn.ApplyAll(layers.LSTM(6, layers.ReturnSequences(), layers.ReturnState()), in) // sequences, h, c
		y := nn.Apply(layers.LSTM(6, layers.GoBackwards()), seq[0], seq[1], seq[2])            // from the first's last states
		z := nn.Apply(layers.GRU(6), seq[0], seq[1])
		bi := nn.ApplyAll(layers.Bidirectional(layers.GRU(3, layers.ReturnState()), layers.MergeMode("")), seq[0]) // forward, backward, their last states
		v := nn.Apply(layers.Concatenate(-1), y, z, bi[0], bi[1], bi[2], bi[3])
		return nn.NewModel([]*nn.Tensor{in}, []*nn.Tensor{nn.Apply(layers.Dense(3), v)})
	}, normals},
	{"functional_images", nil, func() (*nn.Model, error) { // shared layers: a convolution applied twice, a Dense twice
		in := nn.Input(12, 11, 3)
		x := nn.Apply(layers.Conv2D(8, 3, layers.Padding("same"), layers.ReLU), in)
		conv := layers.Conv2D(8, 3, layers.Padding("same"), layers.Tanh)
		x = nn.Apply(conv, nn.Apply(conv, x)) // channels first from call to call, one kernel
		x = nn.Apply(layers.BatchNormalization(), x)
		x = nn.Apply(layers.MaxPooling2D(layers.Padding("same")), x)
		x = nn.Apply(layers.Flatten(), x)
		x = nn.Apply(layers.Dense(16, layers.ReLU), x)
		dense := layers.Dense(16, layers.Tanh)
		x = nn.Apply(dense, nn.Apply(dense, x))
		out := nn.Apply(layers.Dense(5, layers.Softmax), x)
		return nn.NewModel([]*nn.Tensor{in}, []*nn.Tensor{out})
	}, normals},
	{"functional_sequences", nil, func() (*nn.Model, error) { // a 1D convolution applied three times, GELU
		in := nn.Input(10, 4)
		conv := layers.Conv1D(4, 3, layers.Padding("same"), layers.GELU)
		x := nn.Apply(conv, nn.Apply(conv, nn.Apply(conv, in)))
		x = nn.Apply(layers.LayerNormalization(), x)
		x = nn.Apply(layers.GlobalAveragePooling1D(), x)
		out := nn.Apply(layers.Dense(3), x)
		return nn.NewModel([]*nn.Tensor{in}, []*nn.Tensor{out})
	}, normals},
	{"functional_merges", nil, func() (*nn.Model, error) { // every merge layer: a residual Add, Concatenate of images and of vectors, a broadcast Multiply
		in := nn.Input(8, 8, 3)
		x := nn.Apply(layers.Conv2D(6, 3, layers.Padding("same"), layers.ReLU), in)
		y := nn.Apply(layers.BatchNormalization(), nn.Apply(layers.Conv2D(6, 3, layers.Padding("same")), x))
		x = nn.Apply(layers.NewActivation(layers.ReLU), nn.Apply(layers.Add(), x, y))
		gate := nn.Apply(layers.Conv2D(1, 1, layers.Sigmoid), x)                      // (8, 8, 1)
		x = nn.Apply(layers.Concatenate(-1), x, nn.Apply(layers.Multiply(), x, gate)) // (8, 8, 12)
		x = nn.Apply(layers.Flatten(), nn.Apply(layers.MaxPooling2D(), x))
		a := nn.Apply(layers.Dense(8, layers.Tanh), x)
		b := nn.Apply(layers.Dense(8, layers.ReLU), x)
		v := nn.Apply(layers.Concatenate(1), nn.Apply(layers.Subtract(), a, b), nn.Apply(layers.Average(), a, b),
			nn.Apply(layers.Maximum(), a, b), nn.Apply(layers.Minimum(), a, b))
		out := nn.Apply(layers.Dense(4, layers.Softmax), v)
		return nn.NewModel([]*nn.Tensor{in}, []*nn.Tensor{out})
	}, normals},
	{"functional_merges_tfjs", nil, func() (*nn.Model, error) { // the merges TensorFlow.js has (no Subtract), for its check
		in := nn.Input(8, 8, 3)
		x := nn.Apply(layers.Conv2D(6, 3, layers.Padding("same"), layers.ReLU), in)
		y := nn.Apply(layers.BatchNormalization(), nn.Apply(layers.Conv2D(6, 3, layers.Padding("same")), x))
		x = nn.Apply(layers.NewActivation(layers.ReLU), nn.Apply(layers.Add(), x, y))
		gate := nn.Apply(layers.Conv2D(1, 1, layers.Sigmoid), x)
		x = nn.Apply(layers.Concatenate(-1), x, nn.Apply(layers.Multiply(), x, gate))
		x = nn.Apply(layers.Flatten(), nn.Apply(layers.MaxPooling2D(), x))
		a := nn.Apply(layers.Dense(8, layers.Tanh), x)
		b := nn.Apply(layers.Dense(8, layers.ReLU), x)
		v := nn.Apply(layers.Concatenate(1), nn.Apply(layers.Average(), a, b), nn.Apply(layers.Maximum(), a, b), nn.Apply(layers.Minimum(), a, b))
		return nn.NewModel([]*nn.Tensor{in}, []*nn.Tensor{nn.Apply(layers.Dense(4, layers.Softmax), v)})
	}, normals},
	{"functional_resize", nil, func() (*nn.Model, error) { // ZeroPadding2D, Cropping2D and UpSampling2D on either layout, Identity, ReLU
		in := nn.Input(8, 8, 3)
		x := nn.Apply(layers.ZeroPadding2D(1, 0, 2, 1), in)  // channels last: (9, 11, 3)
		x = nn.Apply(layers.Conv2D(4, 3), x)                 // channels first from here: (7, 9, 4)
		x = nn.Apply(layers.ZeroPadding2DSymmetric(1, 1), x) // (9, 11, 4)
		x = nn.Apply(layers.Cropping2D(1, 2, 0, 3), x)       // (6, 8, 4)
		x = nn.Apply(layers.UpSampling2D(2, 1), x)           // (12, 8, 4)
		x = nn.Apply(layers.NewReLU(), nn.Apply(layers.Identity(), nn.Apply(layers.MaxPooling2D(), x)))
		a := nn.Apply(layers.UpSampling2D(1, 2), nn.Apply(layers.Cropping2DSymmetric(2, 1), in)) // channels last: (4, 12, 3)
		a = nn.Apply(layers.Identity(), a)
		v := nn.Apply(layers.Concatenate(-1), nn.Apply(layers.Flatten(), x), nn.Apply(layers.Flatten(), a))
		out := nn.Apply(layers.Dense(4, layers.Softmax), v)
		return nn.NewModel([]*nn.Tensor{in}, []*nn.Tensor{out})
	}, normals},
	{"functional_two_by_two", nil, func() (*nn.Model, error) { // two inputs, two outputs, one of which the other reads: inputs input_1 and input_2, outputs class and mask
		img, vec := nn.Input(10, 9, 3), nn.Input(6)
		x := nn.Apply(layers.MaxPooling2D(), nn.Apply(layers.Conv2D(6, 3, layers.Padding("same"), layers.ReLU), img)) // channels first: (5, 4, 6)
		m := nn.Apply(layers.Conv2D(1, 1, layers.Sigmoid), x)                                                         // (5, 4, 1)
		mask := nn.Apply(layers.Flatten(layers.Named("mask")), m)                                                     // an output, channels last: (20)
		gated := nn.Apply(layers.GlobalAveragePooling2D(), nn.Apply(layers.Multiply(), x, m))
		v := nn.Apply(layers.Dense(8, layers.Tanh), vec)
		h := nn.Apply(layers.Concatenate(-1), gated, mask, v)
		class := nn.Apply(layers.Dense(4, layers.Softmax, layers.Named("class")), h)
		return nn.NewModel([]*nn.Tensor{img, vec}, []*nn.Tensor{class, mask})
	}, normals},
	{"functional_dot", nil, func() (*nn.Model, error) { // Dot along every pair of axes, normalized or not, of inputs channels first and last
		in := nn.Input(6, 4)
		c := nn.Apply(layers.Conv1D(4, 3, layers.Padding("same"), layers.Tanh), in) // channels first: (6, 4)
		r := nn.Apply(layers.Reshape([]int{4, 6}), c)
		s := nn.Apply(layers.Dot(2, layers.Normalize()), c, in)        // (6, 6), cosines of rows
		p := nn.Apply(layers.DotAxes(2, 1), c, r)                      // (6, 6)
		q := nn.Apply(layers.DotAxes(1, 1), c, in)                     // (4, 4)
		u := nn.Apply(layers.DotAxes(1, 2, layers.Normalize()), in, r) // (4, 4), cosines of columns with rows
		f := nn.Apply(layers.Flatten(), in)
		a, b := nn.Apply(layers.Dense(8, layers.Tanh), f), nn.Apply(layers.Dense(8), f)
		v := nn.Apply(layers.Concatenate(-1), nn.Apply(layers.Dot(1, layers.Normalize()), a, b), nn.Apply(layers.Dot(-1), a, b),
			nn.Apply(layers.Flatten(), s), nn.Apply(layers.Flatten(), p), nn.Apply(layers.Flatten(), q), nn.Apply(layers.Flatten(), u))
		out := nn.Apply(layers.Dense(4, layers.Softmax), v)
		return nn.NewModel([]*nn.Tensor{in}, []*nn.Tensor{out})
	}, normals},
	{"preprocessing", func() []layers.Layer { // the random layers (trained through, then left out) and Rescaling (Mul, Add) on either layout
		return []layers.Layer{layers.Input(10, 9, 3), layers.RandomFlip("horizontal_and_vertical"), layers.RandomTranslation(0.2, 0.1),
			layers.RandomZoom(0.2, layers.FillMode("constant")), layers.RandomRotation(0.1),
			layers.RandomBrightness(0.1, layers.ValueRange(-5, 5)), layers.RandomContrast(0.3), layers.Rescaling(1.0/127.5, -1),
			layers.Conv2D(4, 3, layers.ReLU), layers.Rescaling(0.5, 0.25), layers.Flatten(), layers.Dense(3, layers.Softmax)}
	}, nil, normals},
	{"resizing", func() []layers.Layer { // RandomCrop (trained through, exported as its resizing), Resizing (cropped to its aspect, bilinear; nearest) and CenterCrop (resizing a smaller image; cropping after a convolution): Slice, Resize
		return []layers.Layer{layers.Input(10, 9, 3), layers.RandomCrop(9, 9), layers.Resizing(8, 12, layers.CropToAspectRatio()), layers.CenterCrop(10, 5),
			layers.Resizing(6, 7, layers.Interpolation("nearest")), layers.Conv2D(4, 3, layers.ReLU), layers.CenterCrop(3, 3),
			layers.Flatten(), layers.Dense(3, layers.Softmax)}
	}, nil, normals},
	{"normalization", func() []layers.Layer { // Normalization given its statistics (Sub, Div) and inverted after a convolution (Mul, Add), channels first; TF.js has none
		return []layers.Layer{layers.Input(10, 9, 3), layers.Normalization(layers.MeanVariance([]float64{0.1, -0.2, 0.3}, []float64{4, 2, 9})),
			layers.Conv2D(4, 3, layers.ReLU), layers.Normalization(layers.NormalizationAxis(1, 2), layers.MeanVariance([]float64{0.5}, []float64{0.0625}), layers.Invert()),
			layers.Flatten(), layers.Dense(3, layers.Softmax)}
	}, nil, normals},
}

func main() {
	out := flag.String("out", "", "the folder to write the models, inputs and outputs to (made if missing)")
	flag.Parse()
	if *out == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: go run ./scripts/onnx/export -out DIR")
		os.Exit(2)
	}
	if err := run(context.Background(), *out, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "export:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, dir string, log io.Writer) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var manifest []entry
	for i, s := range specs {
		start := time.Now()
		e, err := export(ctx, dir, s, uint64(i+1))
		if err != nil {
			return fmt.Errorf("model %s: %w", s.name, err)
		}
		fmt.Fprintf(log, "exported %s: inputs %s, outputs %s (%.1fs)\n", s.name, describe(e.Inputs), describe(e.Outputs), time.Since(start).Seconds())
		manifest = append(manifest, e)
	}
	js, err := json.MarshalIndent(manifest, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "manifest.json"), append(js, '\n'), 0o644)
}

// export trains the model for a few steps on random data, so that its
// weights and BatchNormalization's moving statistics are not the initial
// ones, exports it, and writes its inputs and Predict's outputs.
func export(ctx context.Context, dir string, s spec, seed uint64) (entry, error) {
	var model *nn.Model
	if s.layers != nil {
		model = nn.NewSequential(s.layers()...)
	} else {
		var err error
		if model, err = s.model(); err != nil {
			return entry{}, err
		}
	}
	model.SetSeed(seed)
	rng := rand.New(rand.NewPCG(seed, 0x6f6e6e78))
	// Keras' SGD, whose small steps keep the outputs away from the
	// saturated 0s and 1s of a sigmoid, which would compare equal anyway.
	sgd, err := optim.NewSGD(optim.SGDConfig{})
	if err != nil {
		return entry{}, err
	}
	if err := model.Compile(sgd, losses.MeanSquaredError{}, nil, nn.OnDevice("/CPU:0")); err != nil {
		return entry{}, err
	}
	defer model.Close()
	inShapes, outShapes := model.InputShapes(), model.OutputShapes()
	// samples makes n samples of the model's inputs, each sample's row
	// holding its inputs one after another (data.InputTuple).
	samples := func(n int) data.Samples {
		parts := make([]data.Samples, len(inShapes))
		for k, shape := range inShapes {
			parts[k] = s.samples(rng, n, shape)
		}
		return data.InputTuple(parts...)
	}

	row := 0 // the values of a sample's inputs
	for _, shape := range inShapes {
		row += size(shape)
	}
	// Random targets of each output's shape, for samples gathered first.
	const n = 96
	trainIn, err := data.SliceInputs(samples(n))
	if err != nil {
		return entry{}, err
	}
	trainX, err := gatherAll(trainIn, row)
	if err != nil {
		return entry{}, err
	}
	targets := make([][]float32, len(outShapes))
	for k, shape := range outShapes {
		targets[k] = make([]float32, n*size(shape))
		for i := range targets[k] {
			targets[k][i] = rng.Float32()
		}
	}
	ds, err := data.FuncParts(n, inShapes, outShapes, func(i int, x, y [][]float32) error {
		at := i * row
		for k := range x {
			at += copy(x[k], trainX[at:])
		}
		for k := range y {
			copy(y[k], targets[k][i*len(y[k]):])
		}
		return nil
	})
	if err != nil {
		return entry{}, err
	}
	if _, err := model.Fit(ctx, ds, nn.Epochs(1), nn.BatchSize(32), nn.Verbose(0), nn.Seed(seed)); err != nil {
		return entry{}, err
	}

	// 37 samples: Predict's last batch is a partial one.
	inputs, err := data.SliceInputs(samples(37))
	if err != nil {
		return entry{}, err
	}
	preds, err := model.PredictOutputs(ctx, inputs)
	if err != nil {
		return entry{}, err
	}
	// The values the model's graph received: what the ONNX model takes,
	// each sample's row split into the inputs.
	x, err := gatherAll(inputs, row)
	if err != nil {
		return entry{}, err
	}
	m := inputs.Len()

	e := entry{Name: s.name, ONNX: s.name + ".onnx"}
	if err := onnx.ExportFile(model, filepath.Join(dir, e.ONNX)); err != nil {
		return entry{}, err
	}
	// The TF.js export too (scripts/check-tfjs.sh checks it).
	if err := tfjs.Export(model, filepath.Join(dir, s.name+".tfjs")); err != nil {
		e.TFJSRefused = err.Error()
	} else {
		e.TFJS = s.name + ".tfjs"
	}
	// The graph's names: "input" and "output" for one of each, else the
	// Input layers' names and the output layers' (package onnx's doc).
	inNames, outNames := []string{"input"}, []string{"output"}
	if len(inShapes) > 1 || len(outShapes) > 1 {
		if err := model.View("list the inputs", func(v nn.ModelView) error {
			inNames = slices.Clone(v.Inputs)
			return nil
		}); err != nil {
			return entry{}, err
		}
		outNames = model.OutputNames()
	}
	at := 0
	for k, shape := range inShapes {
		part := make([]float32, 0, m*size(shape))
		for i := range m {
			part = append(part, x[i*row+at:i*row+at+size(shape)]...)
		}
		at += size(shape)
		t := tensor{Name: inNames[k], File: s.name + "." + inNames[k] + ".bin", Shape: append([]int{m}, shape...)}
		if err := writeFloats(filepath.Join(dir, t.File), part); err != nil {
			return entry{}, err
		}
		e.Inputs = append(e.Inputs, t)
	}
	for k, shape := range outShapes {
		y := preds[k].Values()
		if err := informative(y); err != nil {
			return entry{}, fmt.Errorf("output %s: %w", outNames[k], err)
		}
		t := tensor{Name: outNames[k], File: s.name + "." + outNames[k] + ".bin", Shape: append([]int{m}, shape...)}
		if err := writeFloats(filepath.Join(dir, t.File), y); err != nil {
			return entry{}, err
		}
		e.Outputs = append(e.Outputs, t)
	}
	return e, nil
}

// gatherAll gathers every sample of in, of row values each.
func gatherAll(in data.Inputs, row int) ([]float32, error) {
	x := make([]float32, in.Len()*row)
	all := make([]int, in.Len())
	for i := range all {
		all[i] = i
	}
	if err := in.GatherInputs(all, x); err != nil {
		return nil, err
	}
	return x, nil
}

// describe lists a model's inputs or outputs: names and shapes.
func describe(ts []tensor) string {
	var parts []string
	for _, t := range ts {
		parts = append(parts, fmt.Sprintf("%s %v", t.Name, t.Shape))
	}
	return strings.Join(parts, ", ")
}

// informative checks that outputs can tell a wrong graph from a right
// one: not NaN, not mostly saturated at 0 or 1, not all the same.
func informative(y []float32) error {
	saturated := 0
	for _, v := range y {
		if v != v {
			return errors.New("Predict returned NaN")
		}
		if math.Abs(float64(v)) < 1e-6 || math.Abs(float64(v)-1) < 1e-6 {
			saturated++
		}
	}
	if saturated > len(y)/10 {
		return fmt.Errorf("%d of Predict's %d outputs are 0 or 1: saturated outputs compare equal whatever the graph; train less", saturated, len(y))
	}
	if slices.Min(y) == slices.Max(y) {
		return fmt.Errorf("Predict's outputs are all %v", y[0])
	}
	return nil
}

func writeFloats(path string, v []float32) error {
	b := make([]byte, 0, 4*len(v))
	for _, f := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(f))
	}
	return os.WriteFile(path, b, 0o644)
}

func size(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}
