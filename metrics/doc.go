// Package metrics holds what gokeras reports while a model trains, with
// Keras' names and semantics.
//
// # Making metrics
//
// A metric is a struct named after its Keras class, made as a pointer
// (it accumulates); its fields are the arguments Keras takes by keyword,
// and its zero value is Keras' default:
//
//	[]metrics.Metric{&metrics.Accuracy{}}              // metrics=["accuracy"]
//	&metrics.CategoricalAccuracy{}
//	&metrics.BinaryAccuracy{Threshold: 0.7}           // threshold=0.7
//
// Package losses makes its losses the same way. Get finds a metric by the
// string compile(metrics=[...]) takes: "accuracy", "acc", or a class name;
// an unknown name is an error that lists the known ones.
//
// # Semantics
//
// A metric accumulates over an epoch, one batch at a time, and its Result is
// the mean over every sample seen since the last Reset: epoch figures weight
// each batch by its size, as Keras does. Mean is that running mean; its
// zero value is ready to use too.
//
// "accuracy" is resolved the way Keras resolves it, from the shapes of the
// labels and outputs: binary accuracy when the model has one output per
// sample, sparse categorical accuracy when labels are class indices, and
// categorical accuracy (argmax equality) otherwise.
package metrics
