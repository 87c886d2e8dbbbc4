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
// Predictions are a model's outputs as plain Go values (Row, Rows, Argmax).
//
// Every constructor checks what it is given and returns an error naming
// the mistake (ragged rows, a class out of range, a value too large for
// float32) before any training starts. This package does not import the
// trainer: code that prepares data needs only it.
package data
