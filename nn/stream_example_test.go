package nn_test

import (
	"context"
	"fmt"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/metrics"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/optim"
)

// Fit on a stream without end, as Keras' fit on a generator: samples are
// made as they are needed, shuffled, batched and made ahead while the
// model trains; StepsPerEpoch says how many batches make an epoch.
func ExampleSequential_Fit_stream() {
	// Two classes of points: is x above the line y = x?
	points := data.FromFunc(data.Infinite, []int{2}, []int{2}, func(i int, x, y []float32) error {
		x[0], x[1] = float32(i%17)/17-0.5, float32(i%13)/13-0.5
		if x[1] > x[0] {
			y[1] = 1
		} else {
			y[0] = 1
		}
		return nil
	})
	train := points.Shuffle(256, 1).Batch(32, false).Prefetch(2)

	model := nn.NewSequential(layers.Dense(16, layers.ReLU), layers.Dense(2, layers.Softmax))
	model.SetSeed(1)
	opt, err := optim.NewAdam(optim.AdamConfig{LearningRate: 0.01})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := model.Compile(opt, losses.CategoricalCrossentropy{}, []metrics.Metric{&metrics.Accuracy{}}); err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	if _, err := model.Fit(ctx, train, nn.Epochs(5), nn.StepsPerEpoch(50), nn.Verbose(0)); err != nil {
		fmt.Println(err)
		return
	}
	logs, err := model.Evaluate(ctx, points.Batch(100, false), nn.Steps(10), nn.Verbose(0))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("accuracy above 0.95:", logs["accuracy"] > 0.95)
	// Output: accuracy above 0.95: true
}
