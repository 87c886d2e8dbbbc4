// Command placement walks a "GPU vs CPU tensor placement" pipeline,
// as TensorFlow tutorials show it, with gokeras, printing where each stage runs and what moving
// the data costs:
//
//  1. Data input: a 1000 × 10 dataset is made on the CPU.
//
//  2. Tensor placement: it is copied to /GPU:0 when there is one, else to
//     /CPU:0 (device.Place, TensorFlow's tf.identity under tf.device), and
//     each copy's size, time and rate are printed (device.CopyStats).
//
//  3. Model training: Dense(16, relu) → Dense(1, sigmoid) with binary
//     cross-entropy and SGD trains on that device for 5 epochs of 32-sample
//     batches, with TensorFlow's device placement log.
//
//  4. Metrics: the predictions come back to the CPU, where the loss and the
//     accuracy are computed, next to Evaluate's figures from the device.
//
//     go run ./examples/placement                    # /GPU:0 when usable, else /CPU:0
//     go run ./examples/placement --device=/CPU:0
//
// A default build has no GPU driver, so it runs on the CPU; build with
// -tags cudavm (scripts/build-cuda.sh) for the GPU. Only gokeras' public
// API is used.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/signal"
	"strings"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/device"
	_ "github.com/gokeras/gokeras/device/cuda" // the GPU driver, in -tags cudavm builds
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/metrics"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/optim"
	"gorgonia.org/tensor"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "placement:", err)
		os.Exit(1)
	}
}

// config is what the flags ask for.
type config struct {
	device       string
	samples      int
	epochs       int
	seed         uint64
	logPlacement bool
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("placement", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.device, "device", device.DefaultSpec().Short(), `device to place the data on and train on ("/GPU:0", "/CPU:0")`)
	fs.IntVar(&c.samples, "samples", 1000, "rows of the dataset")
	fs.IntVar(&c.epochs, "epochs", 5, "epochs to train")
	fs.Uint64Var(&c.seed, "seed", 1, "seed for the data, the initial weights and the shuffles")
	fs.BoolVar(&c.logPlacement, "log-device-placement", false, "print the device of every variable and op of every graph, as TensorFlow's log does (a summary is printed either way)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	switch {
	case fs.NArg() > 0:
		return c, fmt.Errorf("unexpected arguments %q: placement takes flags only (see -h)", fs.Args())
	case c.samples < 2:
		return c, fmt.Errorf("--samples must be at least 2, got %d", c.samples)
	case c.epochs <= 0:
		return c, fmt.Errorf("--epochs must be positive, got %d", c.epochs)
	}
	return c, nil
}

const features = 10

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	spec, err := device.ParseSpec(c.device)
	if err != nil {
		return fmt.Errorf("--device: %w", err)
	}
	if spec, err = device.Resolve(ctx, &spec, device.PlaceOptions{}); err != nil {
		return fmt.Errorf("--device: %w", err)
	}
	dev := spec.Short()
	gpus, err := device.ListPhysicalDevices(device.GPU)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "GPUs: %d", len(gpus))
	for _, g := range gpus {
		fmt.Fprintf(stdout, "; %s %s (%.1f GB, compute capability %d.%d)", g.Name, g.Description,
			float64(g.MemoryBytes)/1e9, g.ComputeCapability[0], g.ComputeCapability[1])
	}
	fmt.Fprintln(stdout)

	// Stage 1, data input: the dataset is made in host memory, on the CPU.
	x, y := makeData(c.samples, c.seed)
	fmt.Fprintf(stdout, "1. data input: x %v and y %v on /CPU:0\n", x.Shape(), y.Shape())

	// Stage 2, tensor placement: copy the data to the device, as
	// tf.identity under tf.device(dev) does, and back, and say what each
	// copy cost. (nn.Fit gathers each batch on the host and its machine
	// copies the batch to the device every step; these copies show what
	// moving the whole dataset costs.)
	var copies []device.CopyStats
	xDev, st, err := device.Place(x, dev)
	if err != nil {
		return fmt.Errorf("placing x on %s: %w", dev, err)
	}
	defer xDev.Free()
	copies = append(copies, st)
	yDev, st, err := device.Place(y, dev)
	if err != nil {
		return fmt.Errorf("placing y on %s: %w", dev, err)
	}
	defer yDev.Free()
	copies = append(copies, st)
	fmt.Fprintf(stdout, "2. tensor placement: %s, %s\n", xDev, yDev)
	for _, s := range copies {
		fmt.Fprintf(stdout, "   %v\n", s)
	}
	xBack, st, err := device.Copy(xDev, "/CPU:0")
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "   %v (back, to check the round trip)\n", st)
	if err := sameData(x, xBack); err != nil {
		return err
	}

	// Stage 3, model training on the device.
	model := nn.NewSequential(layers.Input(features), layers.Dense(16, layers.ReLU), layers.Dense(1, layers.Sigmoid))
	model.SetSeed(c.seed)
	opt, err := optim.NewSGD(optim.SGDConfig{LearningRate: 0.1})
	if err != nil {
		return err
	}
	var placement bytes.Buffer
	var log io.Writer = &placement
	if c.logPlacement {
		log = io.MultiWriter(&placement, stdout)
	}
	if err := model.Compile(opt, losses.BinaryCrossentropy{}, []metrics.Metric{&metrics.Accuracy{}}, nn.OnDevice(dev), nn.LogDevicePlacement(log)); err != nil {
		return err
	}
	defer model.Close()
	ds, err := data.TensorData(x, y)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "3. model training on %s (binary cross-entropy from the logits, as TensorFlow computes it after a sigmoid):\n", dev)
	hist, err := model.Fit(ctx, ds, nn.Epochs(c.epochs), nn.BatchSize(32), nn.Seed(c.seed), nn.Output(stdout))
	if err != nil {
		return err
	}
	onDevice, err := model.Evaluate(ctx, ds, nn.Verbose(0))
	if err != nil {
		return err
	}

	// Stage 4, metrics on the CPU: the predictions come back to host memory
	// (Predict's machine copies them off the device) and the loss and the
	// accuracy are computed here.
	inputs, err := data.TensorInputs(x)
	if err != nil {
		return err
	}
	pred, err := model.Predict(ctx, inputs, nn.Verbose(0))
	if err != nil {
		return err
	}
	p, labels := pred.Values(), y.Data().([]float32)
	acc := &metrics.BinaryAccuracy{}
	if err := acc.Update(labels, 1, p, 1); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "4. metrics on /CPU:0 from the %d predictions: loss %.4f (binary cross-entropy of the probabilities) - accuracy %.4f\n",
		len(p), binaryCrossentropy(p, labels), acc.Result())
	fmt.Fprintf(stdout, "   Evaluate on %s: loss %.4f - accuracy %.4f; first epoch's loss %.4f\n",
		dev, onDevice["loss"], onDevice["accuracy"], hist.Get("loss")[0])
	fmt.Fprintf(stdout, "where the graphs ran (training, its last partial batch, evaluation, prediction): %s\n", summarize(placement.String()))
	return nil
}

// summarize counts the lines of a device placement log by device: ops
// executed and tensors (variables, placeholders, constants) placed.
func summarize(log string) string {
	type count struct{ ops, tensors int }
	counts := map[string]*count{}
	var order []string
	for _, line := range strings.Split(log, "\n") {
		var dev string
		isOp := strings.HasPrefix(line, "Executing op ")
		if i := strings.LastIndex(line, " in device "); isOp && i >= 0 {
			dev = line[i+len(" in device "):]
		} else if i := strings.LastIndex(line, "): "); !isOp && i >= 0 {
			dev = line[i+len("): "):]
		} else {
			continue
		}
		if counts[dev] == nil {
			counts[dev] = &count{}
			order = append(order, dev)
		}
		if isOp {
			counts[dev].ops++
		} else {
			counts[dev].tensors++
		}
	}
	if len(order) == 0 {
		return "no placement log"
	}
	parts := make([]string, len(order))
	for i, dev := range order {
		parts[i] = fmt.Sprintf("%d ops and %d tensors on %s", counts[dev].ops, counts[dev].tensors, dev)
	}
	return strings.Join(parts, "; ")
}

// makeData makes n rows of 10 features in [0, 1) and a 0/1 label that a
// small network can learn: whether the first five features outweigh the
// last five.
func makeData(n int, seed uint64) (x, y *tensor.Dense) {
	rng := rand.New(rand.NewPCG(seed, 2))
	xs, ys := make([]float32, n*features), make([]float32, n)
	for i := 0; i < n; i++ {
		var d float32
		for j := 0; j < features; j++ {
			v := float32(rng.Float64())
			xs[i*features+j] = v
			if j < features/2 {
				d += v
			} else {
				d -= v
			}
		}
		if d > 0 {
			ys[i] = 1
		}
	}
	return tensor.New(tensor.WithShape(n, features), tensor.WithBacking(xs)), tensor.New(tensor.WithShape(n, 1), tensor.WithBacking(ys))
}

// sameData checks that a tensor came back from the device unchanged.
func sameData(want *tensor.Dense, got *device.Tensor) error {
	d, err := got.Dense()
	if err != nil {
		return err
	}
	w, g := want.Data().([]float32), d.Data().([]float32)
	if len(w) != len(g) {
		return fmt.Errorf("round trip: %d values came back, want %d", len(g), len(w))
	}
	for i := range w {
		if w[i] != g[i] {
			return fmt.Errorf("round trip: value %d came back as %v, want %v", i, g[i], w[i])
		}
	}
	return nil
}

// binaryCrossentropy is Keras' binary cross-entropy of probabilities p
// against 0/1 labels: clip to [1e-7, 1-1e-7], mean of
// -(y·log(p+ε) + (1-y)·log(1-p+ε)).
func binaryCrossentropy(p, labels []float32) float64 {
	const eps = 1e-7
	var sum float64
	for i, v := range p {
		q := math.Min(math.Max(float64(v), eps), 1-eps)
		t := float64(labels[i])
		sum -= t*math.Log(q+eps) + (1-t)*math.Log(1-q+eps)
	}
	return sum / float64(len(p))
}
