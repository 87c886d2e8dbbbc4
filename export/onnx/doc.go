// Package onnx exports a gokeras model's inference graph as an ONNX model
// (IR version 8, operator set 17), which ONNX Runtime runs and
// onnx.checker accepts:
//
//	if err := onnx.ExportFile(model, "model.onnx"); err != nil { ... }
//
// It reads the model through nn's public API (Sequential.View); each
// layer of package layers maps itself, beside its code.
package onnx
