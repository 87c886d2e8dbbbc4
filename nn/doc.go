// Package nn trains Keras-style models: stacks of layers (Sequential) and
// graphs of layer calls (Keras' functional API: NewModel).
//
// A model is made of layers (package layers). Compile picks the
// optimizer, the loss, the metrics and the device; Fit trains, Evaluate
// scores and Predict infers, with Keras' defaults and its progress format:
//
//	model := nn.NewSequential(
//		layers.Input(32, 32, 3),
//		layers.Flatten(),
//		layers.Dense(3000, layers.ReLU),
//		layers.Dense(1000, layers.ReLU),
//		layers.Dense(10, layers.Sigmoid),
//	)
//	err := model.Compile(sgd, losses.CategoricalCrossentropy{}, []metrics.Metric{&metrics.Accuracy{}})
//	history, err := model.Fit(ctx, ds, nn.Epochs(10))
//
// # Functional models
//
// NewModel makes a model of any graph of layer calls, as Keras' functional
// API does: Input makes the input tensor, Apply applies a layer to tensors,
// and a layer applied twice shares its weights. Model is the type of both
// kinds; a Sequential is the special case of a stack.
//
// A functional model may have several inputs and outputs. Its data has one
// part per input and one label part per output (data.InputTuple,
// data.LabelTuple); it trains on the weighted sum of its outputs' losses
// (LossFor, OutputLosses, LossWeights), counts metrics per output
// (MetricsFor), logs them under Keras' names (dense_1_loss,
// dense_1_accuracy) and predicts with PredictOutputs.
//
// # Graphs and devices
//
// Compile fixes the device: nn.OnDevice, else the device scope in the
// context given to CompileContext (set with device.With), else /GPU:0 when
// one is usable, else /CPU:0.
// The model is compiled into a gorgonia expression graph — forward pass,
// loss and symbolic gradients — for each batch size it meets, and each
// graph is bound to a machine on that device. The graphs share the
// weights, so the last, smaller batch of an epoch is trained too, and
// Predict and Evaluate take any number of samples.
//
// # Keras semantics
//
// Fit shuffles before each epoch and keeps the last partial batch (50,000
// samples at batch 32 is 1,563 steps). The loss and metrics shown are
// running means over the epoch weighted by batch size. Verbose(1) draws a
// live bar on a terminal and, elsewhere (CI, pipes, files), writes only the
// clean end-of-epoch line (this one from train on generated data,
// bench/results/train-sample-2026-11-27.txt):
//
//	1563/1563 [==============================] - 19s 12ms/step - loss: 1.9987 - accuracy: 0.2734
//
// Automatic layer names follow Keras in a fresh session (dense, dense_1,
// ...), counted per model rather than per process; layers.Named gives a
// layer its own. Build refuses an empty name, a name with "/" and two
// layers with the same name, which would give two weights one name.
//
// # Callbacks
//
// Fit calls the callbacks given with the Callbacks option at Keras' hooks (see
// Callback); package callbacks has Keras' EarlyStopping, ModelCheckpoint,
// CSVLogger, ReduceLROnPlateau and LearningRateScheduler. The progress bar
// is a callback too, which Fit puts first when Verbose is not 0, as Keras'
// fit adds its ProgbarLogger.
//
// On a GPU, Fit starts each batch before it finishes the one before, so
// that the GPU never waits for the host: a batch's hooks then run while the
// next batch trains. It does so only when every callback allows it: see
// AsyncBatchHooks.
//
// # Data
//
// Fit and Evaluate take a data.Dataset or a *data.Stream (data read in
// order, perhaps without end, each element a batch: give StepsPerEpoch for
// one without end), Predict takes data.Inputs or either and returns
// data.Predictions (PredictTensor returns a gorgonia tensor): see package
// data for slices, tensors, functions, streams and prefetching.
//
// Fit's ClassWeight and SampleWeight weigh each sample's loss as Keras'
// class_weight and sample_weight do.
//
// A model may output a sequence, (None, steps, n): a recurrent layer with
// layers.ReturnSequences then a Dense (or TimeDistributed(Dense)), as a
// tagger or a language model ends. The loss is computed at each step over
// the last axis and averaged over every step of every sample, Keras'
// sum_over_batch_size; the metrics count every step; the labels are
// (None, steps) or (None, steps, 1) class indices for the sparse losses,
// (None, steps, n) for the others (or those values in one row); Predict
// returns (N, steps, n). SampleWeight weighs a sample's steps,
// TemporalSampleWeight each step (Keras' temporal sample_weight);
// ClassWeight is refused, as Keras refuses it. A mask that reaches the
// output (Embedding's MaskZero, Masking) leaves the masked steps out: the
// loss is Σ mask·loss / Σ mask, as tf.keras 2 reduces it, and the metrics
// count the kept steps only.
//
// # Errors
//
// Mismatched shapes, labels that do not fit the loss, empty data, bad
// options and a loss that becomes NaN or infinite are errors that name the
// cause and the fix. Nothing in this package panics on bad input; exactly:
//
//   - every method of a nil *Model returns ErrNilModel (or a zero
//     value, for those without an error), and the zero Model is an
//     empty Sequential;
//   - a nil context given to Fit, Evaluate or Predict is taken as
//     context.Background() (CompileContext takes it as no device scope);
//     Go's convention is still to pass a real one;
//   - nil options, a nil writer for Output and a nil layer given to
//     NewSequential are ignored; Summary(nil) and a nil optimizer, loss,
//     metric, layer (Add) or callback are errors;
//   - a batch size larger than the data is taken as the data's size, as in
//     Keras, so no count a caller gives is allocated as such;
//   - Fit, Evaluate and Predict on a model that is already running one of
//     them return an error matching ErrBusy ("model is already fitting").
//
// Code the caller supplies — a data.Dataset's methods, a callback, a layer — is
// called as is: if it panics, the panic goes through.
//
// Weights and checkpoints hold finite numbers only: LoadWeights,
// LoadCheckpoint and SetWeights refuse a NaN or an infinity, naming the
// tensor (or optimizer slot) and the index of the first; SaveWeights and
// SaveCheckpoint refuse to write one (training diverged: lower the learning
// rate). Files are checked before they are read: see package safetensors.
//
// # Keras and TensorFlow.js files
//
// Save writes gokeras' own format (safetensors with the model's config);
// SaveWeights writes Keras' HDF5 weights files for a .weights.h5 (Keras 3)
// or .h5 (Keras 2) name. LoadWeights reads those and the weights of Keras'
// .keras archives and .h5 model files; LoadModel makes the model of a
// Keras .keras or .h5 file, or of a TensorFlow.js layers model, and
// compiles it with the file's training settings:
//
//	model, err := nn.LoadModel("trained.keras")  // or "trained.h5", or a TF.js folder
//	err = model.SaveWeights("tuned.weights.h5") // Keras 3's model.load_weights reads it
package nn
