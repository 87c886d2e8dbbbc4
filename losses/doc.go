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
//	losses.MeanSquaredError{}
//
// Package metrics makes its metrics the same way. Get finds a loss by the
// string compile(loss="...") takes: "categorical_crossentropy", "mse", or
// a class name; an unknown name is an error that lists the known ones.
//
// # Arithmetic
//
// Every loss here is the mean over the batch of a per-sample loss, Keras'
// default "sum_over_batch_size" reduction. Cross-entropies compute from
// probabilities by clipping them to [1e-7, 1-1e-7]; but when the model's
// output comes from a sigmoid or softmax activation they compute from the
// pre-activation logits instead, exactly as Keras on TensorFlow does: the
// values agree, and the logit form is stable where probabilities saturate.
// So categorical cross-entropy after a sigmoid output is the softmax
// cross-entropy of the logits, as it was in the Keras runs gokeras mirrors.
package losses
