package callbacks_test

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/gokeras/gokeras/callbacks"
	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/optim"
	"gorgonia.org/tensor"
)

// lossPrinter is a callback of one's own: embed nn.CallbackBase and define
// the hooks you need.
type lossPrinter struct{ nn.CallbackBase }

func (p *lossPrinter) OnEpochEnd(epoch int, logs nn.Logs) error {
	fmt.Printf("epoch %d: loss below 1: %t, lr %.3f\n", epoch+1, logs["loss"] < 1, logs["lr"])
	return nil
}

// Example stops training once the loss improves by less than 0.5 in an
// epoch, halves the learning rate each epoch, and prints each epoch's
// figures with a callback of one's own.
func Example() {
	// Two separable classes of 2-D points.
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
	if err := model.Compile(opt, losses.CategoricalCrossentropy{}, nil, nn.OnDevice("/CPU:0")); err != nil {
		fmt.Println(err)
		return
	}
	stop := callbacks.NewEarlyStopping()
	stop.Monitor = "loss"
	stop.MinDelta = 0.5 // stop as soon as an epoch improves the loss by less than 0.5
	halve := callbacks.NewLearningRateScheduler(func(epoch int, lr float64) float64 {
		if epoch == 0 {
			return lr
		}
		return lr / 2
	})
	hist, err := model.Fit(context.Background(), ds, nn.Epochs(10), nn.Seed(3), nn.Verbose(0),
		nn.Callbacks(halve, stop, &lossPrinter{}))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("epochs run:", len(hist.Epochs), "stopped at epoch", stop.StoppedEpoch()+1)
	// Output:
	// epoch 1: loss below 1: true, lr 0.100
	// epoch 2: loss below 1: true, lr 0.050
	// epoch 3: loss below 1: true, lr 0.025
	// epochs run: 3 stopped at epoch 3
}
