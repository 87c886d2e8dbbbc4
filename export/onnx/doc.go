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
package onnx
