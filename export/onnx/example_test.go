package onnx_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/gokeras/gokeras/export/onnx"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/optim"
)

// ExampleExportFile writes a model's inference graph as an ONNX file that
// ONNX Runtime runs, e.g. in Python:
//
//	import onnxruntime as ort
//	session = ort.InferenceSession("model.onnx")
//	y = session.run(None, {"input": x})[0]  # x: float32, (batch, 32, 32, 3)
//
// and onnx.checker.check_model accepts; scripts/check-onnx.sh checks both.
func ExampleExportFile() {
	dir, err := os.MkdirTemp("", "onnx")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)

	model := nn.NewSequential(
		layers.Input(32, 32, 3),
		layers.Conv2D(8, 3, layers.Padding("same"), layers.ReLU),
		layers.MaxPooling2D(),
		layers.Dropout(0.25), // left out: the graph is Predict's
		layers.Flatten(),
		layers.Dense(10, layers.Softmax),
	)
	opt, err := optim.NewSGD(optim.SGDConfig{})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := model.Compile(opt, losses.CategoricalCrossentropy{}, nil, nn.OnDevice("/CPU:0")); err != nil {
		fmt.Println(err)
		return
	}
	// ... model.Fit(ctx, data) ...
	if err := onnx.ExportFile(model, filepath.Join(dir, "model.onnx")); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("wrote model.onnx")
	// Output:
	// wrote model.onnx
}
