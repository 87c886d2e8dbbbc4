// Package ops is the vocabulary of graph operations gokeras models are made of.
//
// A gokeras model compiles into a gorgonia expression graph. Rather than
// spelling a dense layer as a dozen of gorgonia's generic nodes, each layer
// and loss is one op defined here, with its derivative written out as other
// ops of this package:
//
//   - Affine computes x·W + b, the linear part of a dense layer.
//   - Activate applies linear, relu, sigmoid, tanh or softmax.
//   - Flatten reshapes (batch, d1, d2, ...) to (batch, d1·d2·...).
//   - Loss computes the batch mean of one of the Keras losses, and
//     for cross-entropies after a sigmoid or softmax it works from the
//     logits, as TensorFlow does.
//
// gorgonia still builds the graph and its symbolic gradients (gorgonia.Grad
// calls each op's SymDiff), so a model is one gorgonia graph whatever runs it.
// Because every node of a model graph is an op of this small, known set, a
// machine for another device (the CUDA machine, a fused CPU machine) can run
// the same graph by implementing these ops, and nothing else.
//
// Every op works on float32 and float64 tensors: models train in float32,
// and the tests check gradients against finite differences in float64.
package ops
