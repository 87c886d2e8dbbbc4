package optim_test

import (
	"fmt"

	"github.com/gokeras/gokeras/optim"
)

// A checkpoint saves the optimizer's State with the weights; SetState on a
// fresh optimizer continues exactly where the first one stopped.
func ExampleStateful() {
	opt, _ := optim.NewSGD(optim.SGDConfig{LearningRate: 0.1, Momentum: 0.9})
	w := []float32{1}
	_ = opt.Apply([]optim.Variable{{Name: "w", Value: w, Grad: []float32{1}}})
	saved := opt.State()
	fmt.Println(saved.Iterations, saved.Slots["momentum"]["w"])

	restored, _ := optim.NewSGD(optim.SGDConfig{LearningRate: 0.1, Momentum: 0.9})
	if err := restored.SetState(saved); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(restored.Iterations(), optim.SlotNames(restored))
	// Output:
	// 1 [-0.1]
	// 1 [momentum]
}
