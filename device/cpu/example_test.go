package cpu_test

import (
	"fmt"

	"github.com/gokeras/gokeras/device"
	_ "github.com/gokeras/gokeras/device/cpu" // registers /CPU:0
	"github.com/gokeras/gokeras/device/driver"
	"github.com/gokeras/gokeras/ops"
	"github.com/gokeras/gokeras/optim"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// A machine that is a Trainer runs the whole step, the SGD update
// included, and hands back only what the graph's Read nodes ask for.
func ExampleTrainer() {
	g := gorgonia.NewGraph()
	matrix := func(name string, rows, cols int, v ...float32) *gorgonia.Node {
		return gorgonia.NewTensor(g, tensor.Float32, 2, gorgonia.WithShape(rows, cols), gorgonia.WithName(name),
			gorgonia.WithValue(tensor.New(tensor.WithShape(rows, cols), tensor.WithBacking(v))))
	}
	x := matrix("x", 2, 2, 1, 2, 3, 4)
	y := matrix("y", 2, 1, 1, 2)
	w := matrix("w", 2, 1, 0, 0)
	pred, err := ops.Affine(x, w, nil, false)
	if err != nil {
		fmt.Println(err)
		return
	}
	loss, err := ops.Loss(ops.MeanSquaredError, pred, y)
	if err != nil {
		fmt.Println(err)
		return
	}
	var lossValue gorgonia.Value
	gorgonia.Read(loss, &lossValue)
	if _, err := gorgonia.Grad(loss, w); err != nil {
		fmt.Println(err)
		return
	}
	m, err := device.NewMachine(device.Spec{Kind: driver.CPU}, g, driver.MachineOptions{Learnables: []*gorgonia.Node{w}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer m.Close()
	tr, ok := m.(driver.Trainer)
	if !ok {
		fmt.Println("not a Trainer")
		return
	}
	// loss = ((0-1)² + (0-2)²)/2 = 2.5; the gradient of w is xᵀ·(pred-y) =
	// (-7, -10), so w becomes 0 - 0.1·(-7, -10) = (0.7, 1).
	if err := tr.Train(optim.Update{Rule: optim.RuleSGD, LearningRate: 0.1, Iteration: 1}); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("loss %v, w %.4g\n", lossValue, w.Value().Data())
	// Output: loss 2.5, w [0.7 1]
}
