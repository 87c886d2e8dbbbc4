package optim_test

import (
	"fmt"

	"github.com/gokeras/gokeras/optim"
)

// A learning-rate schedule gives each step its rate; the optimizer
// evaluates it at its iteration count, as Keras does.
func ExampleCosineDecay() {
	sgd, err := optim.NewSGD(optim.SGDConfig{Momentum: 0.9, Options: optim.Options{
		ClipNorm: 1,
		Schedule: optim.CosineDecay{InitialLearningRate: 0.1, DecaySteps: 4},
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	for i := range 5 {
		if i > 0 {
			fmt.Print(" ")
		}
		fmt.Printf("%.4f", sgd.LearningRate())
		sgd.Advance() // as a model's device does after each step
	}
	fmt.Println()
	_, err = optim.NewRMSprop(optim.RMSpropConfig{Rho: optim.F(1.5)})
	fmt.Println(err)
	// Output:
	// 0.1000 0.0854 0.0500 0.0146 0.0000
	// RMSprop: rho must be in [0, 1), got 1.5
}
