// Package ops is the vocabulary of graph operations gokeras models are made of.
//
// A gokeras model compiles into a gorgonia expression graph. Rather than
// spelling a dense layer as a dozen of gorgonia's generic nodes, each layer
// and loss is one op defined here, with its derivative written out as other
// ops of this package:
//
//   - Affine computes x·W + b, the linear part of a dense layer.
//   - Activate applies an activation by its Keras name: linear, relu,
//     sigmoid, tanh, softmax, gelu (exact, and gelu_approximate, the tanh
//     form), swish (Keras 3's silu), elu, selu, softplus, softsign,
//     hard_sigmoid (Keras 2's), exponential or leaky_relu; ActivateWith
//     gives ELU and LeakyReLU another alpha.
//   - Flatten and Reshape give values another shape.
//   - Patches gathers every window position of images into a row (im2col):
//     a convolution is Patches then Affine with the kernel as a matrix.
//   - Pool takes the max or the mean of windows; Dropout drops units with a
//     counter-based generator (Philox4x32-10) keyed by seed and step.
//   - ColumnMoments, BatchNormalize and LayerNormalize normalize;
//     MovingAverage updates a moving statistic (a non-trainable weight) in
//     a training graph; Gather looks rows of an embedding table up.
//   - Loss (LossWith, WeightedLoss) computes the batch mean of one of the
//     Keras losses, and for cross-entropies after a sigmoid or softmax it
//     works from the logits, as TensorFlow does; Penalty is a regularizer's.
//   - Binary (Add, Subtract, Multiply, Maximum, Minimum) and Scale (DivideBy)
//     are Keras' merge layers, inputs broadcast along axes of size 1
//     (Binary's Divide is Normalization's);
//     Concatenate joins tensors along an axis.
//   - Pad2D, Crop2D and UpSample2D (nearest) resize images, channels last:
//     Keras' ZeroPadding2D, Cropping2D and UpSampling2D; Resize resizes a
//     box of each image as tf.image.resize does (bilinear or nearest,
//     half-pixel centres, no antialiasing): Keras' Resizing and
//     CenterCrop. Resize has no gradient.
//   - Permute reorders the axes after the batch, as Keras' Permute layer;
//     TransposeSamples transposes each sample's matrix.
//   - BatchDot (each sample's product, a BatchMatMul) and L2Normalize are
//     Keras' Dot layer, normalize=True its cosine similarity.
//   - Recurrence runs a recurrent layer's steps (SimpleRNN's, LSTM's and
//     GRU's cells) from the inputs' projections and the recurrent
//     kernel; its gradient runs back through time.
//   - Rescale (x·scale + offset) is Keras' Rescaling; ImageTransform
//     samples each image at an affine map drawn for it from the step and
//     its place in the batch (Philox4x32-10, as Dropout), with TensorFlow's
//     fill modes and interpolations: flips, translations, zooms and
//     rotations, random windows' shifts, and (moving no pixel) brightness
//     and contrast changes, Keras' random augmentation layers. It has no
//     gradient.
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
