package layers_test

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/metrics"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/optim"
)

// A tiny transformer encoder block: self-attention with a residual Add and
// LayerNormalization, then a feed-forward network applied at each step
// (Conv1D with a kernel of 1 is a Dense per step) with its own residual
// and normalization, trained for a few epochs to tell whether a sequence
// starts high or low. The causal mask lets each step see only the steps
// before it, so every step can see the first.
func ExampleMultiHeadAttention() {
	const steps, width, n = 8, 16, 256
	x := nn.Input(steps, width)
	att := nn.Apply(layers.MultiHeadAttention(4, 4, layers.UseCausalMask()), x, x)
	h := nn.Apply(layers.LayerNormalization(), nn.Apply(layers.Add(), x, att))
	ff := nn.Apply(layers.Conv1D(32, 1, layers.ReLU), h)
	ff = nn.Apply(layers.Conv1D(width, 1), ff)
	h = nn.Apply(layers.LayerNormalization(), nn.Apply(layers.Add(), h, ff))
	out := nn.Apply(layers.Dense(2, layers.Softmax), nn.Apply(layers.GlobalAveragePooling1D(), h))
	model, err := nn.NewModel([]*nn.Tensor{x}, []*nn.Tensor{out})
	if err != nil {
		fmt.Println(err)
		return
	}
	model.SetSeed(1)
	defer model.Close()

	// Sequences of noise whose first step is shifted up or down.
	rng := rand.New(rand.NewPCG(1, 2))
	seqs := make([]float32, n*steps*width)
	classes := make([]int, n)
	for i := range n {
		classes[i] = i % 2
		for k := range steps * width {
			seqs[i*steps*width+k] = float32(rng.NormFloat64())
		}
		for k := range width {
			seqs[i*steps*width+k] += float32(4*classes[i] - 2)
		}
	}
	ds, err := data.SliceData(data.Flat(seqs, steps, width), data.OneHot(classes, 2))
	if err != nil {
		fmt.Println(err)
		return
	}
	adam, err := optim.NewAdam(optim.AdamConfig{LearningRate: 0.005})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := model.Compile(adam, losses.CategoricalCrossentropy{}, []metrics.Metric{&metrics.CategoricalAccuracy{}}, nn.OnDevice("/CPU:0")); err != nil {
		fmt.Println(err)
		return
	}
	history, err := model.Fit(context.Background(), ds, nn.Epochs(5), nn.Verbose(0))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, l := range model.Layers() {
		if l.Type() == "MultiHeadAttention" {
			for _, p := range l.Params() {
				fmt.Printf("%s/%s %v\n", l.Name(), p.Name, p.Value.Shape())
			}
		}
	}
	loss, acc := history.Get("loss"), history.Get("categorical_accuracy")
	fmt.Println("loss fell:", loss[len(loss)-1] < loss[0]/2)
	fmt.Println("accuracy above 0.95:", acc[len(acc)-1] > 0.95)
	// Output:
	// multi_head_attention/query/kernel (16, 4, 4)
	// multi_head_attention/query/bias (4, 4)
	// multi_head_attention/key/kernel (16, 4, 4)
	// multi_head_attention/key/bias (4, 4)
	// multi_head_attention/value/kernel (16, 4, 4)
	// multi_head_attention/value/bias (4, 4)
	// multi_head_attention/attention_output/kernel (4, 4, 16)
	// multi_head_attention/attention_output/bias (16)
	// loss fell: true
	// accuracy above 0.95: true
}
