// Package losses holds the Keras losses gokeras models train on, with
// Keras' names and its exact arithmetic.
//
// # Making losses
//
// A loss is a struct value named after its Keras class; its fields are the
// arguments Keras takes by keyword, and its zero value is Keras' default:
//
//	losses.CategoricalCrossentropy{}                 // keras.losses.CategoricalCrossentropy()
//	losses.BinaryCrossentropy{FromLogits: true}      // from_logits=True
//	losses.CategoricalCrossentropy{LabelSmoothing: 0.1}
//	losses.MeanSquaredError{}
//	losses.Huber{Delta: 0.5}                         // Huber{} is delta=1.0
//
// The losses are Keras 2's: the cross-entropies (categorical, sparse
// categorical, binary), MeanSquaredError, MeanAbsoluteError,
// MeanAbsolutePercentageError, MeanSquaredLogarithmicError, Huber,
// LogCosh, KLDivergence, Poisson, Hinge, SquaredHinge, CategoricalHinge
// and CosineSimilarity.
//
// Package metrics makes its metrics the same way. Get finds a loss by the
// string compile(loss="...") takes: "categorical_crossentropy", "mse", or
// a class name; an unknown name is an error that lists the known ones.
//
// # Arithmetic
//
// Every loss here is the mean over the batch of a per-sample loss, Keras'
// default "sum_over_batch_size" reduction; for the elementwise losses
// (the mean errors, Huber, LogCosh, Poisson, Hinge and SquaredHinge) the
// per-sample loss is the mean over the last axis, as in Keras, and
// KLDivergence sums over it. Clipping and epsilons are Keras': 1e-7 (keras.backend.epsilon()),
// and 1e-12 under CosineSimilarity's norms, as tf.math.l2_normalize.
// Hinge and SquaredHinge read a batch whose labels are all 0 or 1 as -1
// and 1, as Keras does. Label smoothing replaces the labels by
// y·(1-ls) + ls/classes (categorical) or y·(1-ls) + ls/2 (binary) before
// either form of the cross-entropy. Cross-entropies compute from
// probabilities by clipping them to [1e-7, 1-1e-7]; but when the model's
// output comes from a sigmoid or softmax activation they compute from the
// pre-activation logits instead, exactly as Keras on TensorFlow does: the
// values agree, and the logit form is stable where probabilities saturate.
// So categorical cross-entropy after a sigmoid output is the softmax
// cross-entropy of the logits, as it was in the Keras runs gokeras mirrors.
package losses
