package callbacks_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/gokeras/gokeras/callbacks"
	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/metrics"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/optim"
	"gorgonia.org/tensor"
)

// ExampleTensorBoard writes a run for TensorBoard (view it with
// `tensorboard --logdir logs`) and reads the event files back.
func ExampleTensorBoard() {
	// Two separable classes of 2-D points; the last 40 validate.
	rng := rand.New(rand.NewPCG(1, 2))
	x, y := make([]float32, 200*2), make([]float32, 200*2)
	for i := range 200 {
		c := i % 2
		x[2*i] = float32(4*c-2) + float32(rng.NormFloat64())
		x[2*i+1] = float32(rng.NormFloat64())
		y[2*i+c] = 1
	}
	ds, _ := data.TensorData(tensor.New(tensor.WithShape(200, 2), tensor.WithBacking(x)),
		tensor.New(tensor.WithShape(200, 2), tensor.WithBacking(y)))
	model := nn.NewSequential(layers.Input(2), layers.Dense(2, layers.Softmax))
	model.SetSeed(1)
	opt, _ := optim.NewSGD(optim.SGDConfig{LearningRate: 0.1})
	if err := model.Compile(opt, losses.CategoricalCrossentropy{}, []metrics.Metric{&metrics.Accuracy{}}, nn.OnDevice("/CPU:0")); err != nil {
		fmt.Println(err)
		return
	}

	logDir, _ := os.MkdirTemp("", "logs")
	defer os.RemoveAll(logDir)
	tb := callbacks.NewTensorBoard(logDir)
	tb.HistogramFreq = 1 // the weights' histograms every epoch
	tb.UpdateFreq = 5    // the batch figures every 5 batches
	if _, err := model.Fit(context.Background(), ds, nn.Epochs(2), nn.Seed(3), nn.Verbose(0),
		nn.ValidationSplit(0.2), nn.Callbacks(tb)); err != nil {
		fmt.Println(err)
		return
	}

	for _, run := range []string{"train", "validation"} {
		files, _ := filepath.Glob(filepath.Join(logDir, run, "events.out.tfevents.*"))
		events, err := callbacks.ReadTensorBoardEvents(files[0])
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s: %s\n", run, events[0].FileVersion)
		for _, e := range events[1:] {
			for _, v := range e.Values {
				if e.Step == 0 || v.Tag == "batch_loss" {
					fmt.Printf("  step %d: %s\n", e.Step, v.Tag)
				}
			}
		}
	}
	// Output:
	// train: brain.Event:2
	//   step 5: batch_loss
	//   step 0: epoch_accuracy
	//   step 0: epoch_learning_rate
	//   step 0: epoch_loss
	//   step 0: dense/kernel_0/histogram
	//   step 0: dense/bias_0/histogram
	//   step 10: batch_loss
	// validation: brain.Event:2
	//   step 0: epoch_accuracy
	//   step 0: epoch_loss
}
