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
//	&metrics.Precision{TopK: 3, ClassID: new(2)}      // top_k=3, class_id=2
//	&metrics.AUC{Curve: "PR"}                         // curve="PR"
//	&metrics.F1Score{Average: "macro"}                // average="macro"
//
// The metrics are Keras 2's, under the names Keras logs them: accuracy,
// binary_accuracy, categorical_accuracy and sparse_categorical_accuracy;
// top_k_categorical_accuracy and sparse_top_k_categorical_accuracy;
// precision, recall, auc and f1_score; mean_absolute_error,
// mean_squared_error and root_mean_squared_error.
//
// Package losses makes its losses the same way. Get finds a metric by the
// string compile(metrics=[...]) takes: one of those names, one of Keras'
// aliases ("acc", "mae", "mse"), or a class name; an unknown name is an
// error that lists the known ones.
//
// # Semantics
//
// A metric accumulates over an epoch, one batch at a time, and its Result is
// its figure over every sample seen since the last Reset, as if the epoch
// were one batch: the means weight each batch by its size, and precision,
// recall, AUC and F1 keep their confusion counts (true and false
// positives, ...) until the end, as Keras does. Mean is the running mean;
// its zero value is ready to use too.
//
// Every metric is OnDevice: package nn adds its batch state to the
// compiled graph (ops.MetricState), so that the model's device computes it
// and only that state comes back (two numbers a batch for the accuracies
// and mean errors, a sum of scores in float32 as Keras' metric variables
// keep it; the confusion counts of Precision, Recall and F1Score; AUC's
// histogram), never the outputs. The metrics add each batch's state in
// float64. Update computes the same state on the host (ops.MetricBatch),
// for callers with outputs in hand.
//
// A figure is one number per name in the logs: F1Score with Keras' default
// average=None, whose Keras result is one score per class, reports their
// unweighted mean (see F1Score), and Precision, Recall and AUC take one
// threshold setting, not Keras' lists of thresholds.
//
// "accuracy" is resolved the way Keras resolves it, from the shapes of the
// labels and outputs: binary accuracy when the model has one output per
// sample, sparse categorical accuracy when labels are class indices, and
// categorical accuracy (argmax equality) otherwise.
package metrics
