package tfjs_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/gokeras/gokeras/export/tfjs"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/nn"
)

// A model exported for TensorFlow.js: a folder of model.json and its
// weights, for tf.loadLayersModel.
func ExampleExport() {
	model := nn.NewSequential(layers.Input(4), layers.Dense(8, layers.ReLU), layers.Dense(3, layers.Softmax))
	if err := model.Build(4); err != nil {
		fmt.Println(err)
		return
	}
	dir, err := os.MkdirTemp("", "tfjs")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	if err := tfjs.Export(model, filepath.Join(dir, "iris")); err != nil {
		fmt.Println(err)
		return
	}
	files, _ := os.ReadDir(filepath.Join(dir, "iris"))
	for _, f := range files {
		fmt.Println(f.Name())
	}
	// Output:
	// group1-shard1of1.bin
	// model.json
}
