// Package layers holds the building blocks of a gokeras model: Flatten,
// Dense and Activation, their activations and weight initializers, with
// Keras' names and defaults.
//
// A layer is configured when it is made and built when the model learns the
// shape of its input: Build creates the weights, drawn from a seeded random
// stream so that the same seed gives the same initial model. Call adds the
// layer to a gorgonia graph. A layer is owned by one model.
//
//	layers.Flatten()
//	layers.Dense(3000, layers.ReLU)
//	layers.Dense(10, layers.Sigmoid, layers.WithoutBias())
//
// Dense defaults to Keras': glorot_uniform kernel, zero bias, no activation.
package layers
