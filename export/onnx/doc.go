// Package onnx exports a gokeras model's inference graph as an ONNX model
// (IR version 8, operator set 17), which ONNX Runtime runs and
// onnx.checker accepts:
//
//	if err := onnx.ExportFile(model, "model.onnx"); err != nil { ... }
//
// It reads the model through nn's public API (Sequential.View), the
// model's graph of layer calls (a Sequential's, a chain), and adds each
// call's nodes; each layer of package layers maps itself, beside its
// code, and a shared layer's weights are written once.
//
// The graph's inputs and outputs are named for ONNX Runtime's feeds and
// fetches. A model of one input and one output (every Sequential) takes
// "input" and returns "output". Any other functional model takes one
// input per model input, named after its Input layer ("input_1",
// "input_2", ...), and returns one output per model output, named after
// the layer that computes it (the model's OutputNames: "class",
// "value"), both in the model's order:
//
//	class, value = ort.InferenceSession("model.onnx").run(["class", "value"], {"input_1": a, "input_2": b})
package onnx
