// Package data holds what a model reads: samples and labels, gathered a
// batch at a time into float32 buffers.
//
// A Dataset (labelled samples: what a model's Fit and Evaluate take) and
// Inputs (samples alone: what Predict takes) are small interfaces, so data
// can stay compact until a batch is needed: the CIFAR-10 loader keeps uint8
// pixels. Make one from plain Go values with SliceData, choosing how the
// samples are laid out (Rows, Flat or Pixels) and what the labels are
// (Classes, OneHot, Targets or TargetRows):
//
//	ds, err := data.SliceData(data.Rows(x), data.Classes(y, 10))
//
// TensorData and TensorInputs take gorgonia tensors, as Keras' fit takes
// arrays; FuncData calls a function for each sample (images decoded from
// files, say); Subset picks samples by index; Prefetch gathers the next
// training batch while the model trains on the one before.
//
// A model of several inputs or several outputs reads samples of several
// parts: an image and a row of features, say, with a class and a number to
// predict. InputTuple joins the Samples of each input and LabelTuple the
// Labels of each output, as Keras' fit takes lists of arrays; FuncParts
// and TensorTuple do the same for FuncData and TensorData:
//
//	ds, err := data.SliceData(
//		data.InputTuple(data.Pixels(images, 255, 28, 28), data.Rows(features)),
//		data.LabelTuple(data.Classes(digits, 10), data.Targets(angles)))
//
// Such data still gathers one row per sample, its parts one after another,
// so everything that takes a Dataset takes it unchanged; InputParts and
// LabelParts give the shape of each part, for the model to cut a batch
// into its inputs and its outputs' labels.
//
// ImageDatasetFromDirectory reads a folder of class folders of images
// (BMP, GIF, JPEG, PNG), as Keras' image_dataset_from_directory: labels
// from the folders' names, images resized to one size, a validation
// subset held out with a seed:
//
//	train, err := data.ImageDatasetFromDirectory("flowers", data.ImageFolderOptions{
//		ImageSize: [2]int{180, 180}, ValidationSplit: 0.2, Subset: "training", Seed: 123})
//
// tf.data's transformations that suit data of random access are here too:
// Map (a function of each sample, on several goroutines), Cache (each
// sample kept in memory once gathered), Take, Skip and Repeat. Fit
// shuffles and batches itself, and Prefetch gathers ahead:
//
//	ds, err := data.Map(images, []int{64, 64, 3}, nil, 0, crop) // then data.Prefetch(data.Cache(ds))
//
// A Stream is data read in order, perhaps without end, as Keras' fit reads
// a Python generator or a tf.data pipeline: FromFunc calls a function for
// sample 0, 1, 2, ... of each pass (a count of samples, Infinite, or
// Unknown for the function to end a pass with io.EOF), FromDataset reads a
// Dataset in order, and NewStream takes an Iterator of your own (a file
// read from its start). Its methods chain as tf.data's do, each returning
// a new Stream: Map (on several goroutines, the order kept), Shuffle (a
// buffer, seeded, reshuffled each pass), Batch, Take, Skip, Repeat (-1: without
// end), Cache (in memory, or a file written whole or not at all) and
// Prefetch (batches made on a goroutine while the model trains):
//
//	train := data.FromFunc(data.Infinite, []int{28, 28}, []int{10}, generate).
//		Shuffle(1000, 7).Batch(32, false).Prefetch(2)
//	h, err := model.Fit(ctx, train, nn.Epochs(10), nn.StepsPerEpoch(100))
//
// Fit, Evaluate and Predict take a Stream as they take a Dataset, each of
// its elements a batch; a stream without end needs StepsPerEpoch (Steps
// for Evaluate and Predict), and a finite one ends an epoch when a pass
// ends. Open reads a pass by hand: Next gives Batch after Batch until
// io.EOF, and Close stops the goroutines reading ahead. A mistake in an
// argument is kept and returned by Err and Open, naming the method, so
// that calls chain; an error in a generator or a Map ends the pass with
// that error, naming the sample.
//
// Predictions are a model's outputs as plain Go values (Row, Rows, Argmax).
//
// Texts become sequences of token indices with package data/text, Keras'
// TextVectorization: its Vectorizer's rows go to Rows as they are.
//
// Every constructor checks what it is given and returns an error naming
// the mistake (ragged rows, a class out of range, a value too large for
// float32) before any training starts. This package does not import the
// trainer: code that prepares data needs only it.
package data
