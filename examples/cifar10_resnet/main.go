// Command cifar10_resnet is Keras' example cifar10_resnet.py ("Trains a
// ResNet on the CIFAR10 dataset"), version 1 at depth 20, written in Go
// with gokeras: each step carries, in a comment, the Keras line it stands
// for. The model is a functional one: applications.ResNetV1 makes it with
// nn.Input, nn.Apply and layers.Add, as the example's resnet_v1 does with
// Keras' functional API.
//
//	go run ./examples/cifar10_resnet                  # 200 epochs, as the example
//	go run ./examples/cifar10_resnet --epochs 1 --device=/CPU:0
//	go run ./examples/cifar10_resnet --data ~/cifar-10-binary.tar.gz
//
// Where gokeras lacks what the example uses, the comment says what stands
// in: the example's data_augmentation = False branch, as gokeras has no
// ImageDataGenerator yet; the best weights saved as safetensors where Keras
// saves the whole model as HDF5.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"

	"github.com/gokeras/gokeras/applications"
	"github.com/gokeras/gokeras/callbacks"
	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/datasets/cifar10"
	"github.com/gokeras/gokeras/device"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/metrics"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/optim"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "cifar10_resnet:", err)
		os.Exit(1)
	}
}

// lrSchedule is the example's lr_schedule: 1e-3, divided by 10 after
// epochs 80, 120 and 160, and by 2 more after 180.
func lrSchedule(epoch int) float64 {
	lr := 1e-3
	switch {
	case epoch > 180:
		lr *= 0.5e-3
	case epoch > 160:
		lr *= 1e-3
	case epoch > 120:
		lr *= 1e-2
	case epoch > 80:
		lr *= 1e-1
	}
	return lr
}

// run is the whole program; main only wires it to the process, so a test
// can run it with its own flags and output.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("cifar10_resnet", flag.ContinueOnError)
	fs.SetOutput(stderr)
	// batch_size = 32; epochs = 200
	batchSize := fs.Int("batch-size", 32, "samples per step, as the example's batch_size")
	epochs := fs.Int("epochs", 200, "epochs to train, as the example's epochs")
	deviceName := fs.String("device", device.DefaultSpec().Short(), `device for the model ("/GPU:0" or "/CPU:0")`)
	dataPath := fs.String("data", "", "a CIFAR-10 copy you already have (cifar-10-binary.tar.gz or its extracted directory); "+
		"default: download once into the cache, as cifar10.load_data does")
	// save_dir = os.path.join(os.getcwd(), 'saved_models')
	saveDir := fs.String("save-dir", "saved_models", "directory the best weights are saved in, as the example's save_dir")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q: cifar10_resnet takes flags only (see -h)", fs.Args())
	}
	// n = 3; version = 1; depth = n * 6 + 2; num_classes = 10
	const depth, numClasses = 3*6 + 2, 10
	// model_name = 'cifar10_ResNet20v1_model.{epoch:03d}.h5'
	const modelName = "cifar10_ResNet20v1_model.safetensors"

	// Not in the example: check the device and where the weights go
	// before loading 170 MB of data.
	spec, err := device.ParseSpec(*deviceName)
	if err != nil {
		return fmt.Errorf("--device: %w", err)
	}
	if _, err := device.Resolve(ctx, &spec, device.PlaceOptions{}); err != nil {
		return fmt.Errorf("--device: %w", err)
	}
	if err := os.MkdirAll(*saveDir, 0o755); err != nil {
		return fmt.Errorf("--save-dir: %w", err)
	}

	// (x_train, y_train), (x_test, y_test) = cifar10.load_data()
	ds, err := cifar10.Load(ctx, cifar10.Options{Path: *dataPath, Progress: stderr})
	if err != nil {
		return err
	}
	// x_train = x_train.astype('float32') / 255 and to_categorical: the
	// OneHot view does both, batch by batch. subtract_pixel_mean = True:
	// x_train_mean = np.mean(x_train, axis=0); x_train -= x_train_mean;
	// x_test -= x_train_mean.
	mean, err := pixelMean(ds.Train.OneHot())
	if err != nil {
		return err
	}
	train := meanSubtracted{Dataset: ds.Train.OneHot(), mean: mean}
	test := meanSubtracted{Dataset: ds.Test.OneHot(), mean: mean}
	// print('x_train shape:', x_train.shape) ...
	fmt.Fprintf(stdout, "x_train shape: (%d, 32, 32, 3)\n", ds.Train.Len())
	fmt.Fprintf(stdout, "%d train samples\n%d test samples\n", ds.Train.Len(), ds.Test.Len())

	// model = resnet_v1(input_shape=input_shape, depth=depth)
	model, err := applications.ResNetV1(depth, []int{32, 32, 3}, numClasses)
	if err != nil {
		return err
	}
	// optimizer=Adam(learning_rate=lr_schedule(0))
	opt, err := optim.NewAdam(optim.AdamConfig{LearningRate: lrSchedule(0)})
	if err != nil {
		return err
	}
	// model.compile(loss='categorical_crossentropy', optimizer=..., metrics=['accuracy'])
	if err := model.Compile(opt, losses.CategoricalCrossentropy{}, []metrics.Metric{&metrics.Accuracy{}}, nn.OnDevice(spec)); err != nil {
		return err
	}
	defer model.Close()
	// model.summary(); print(model_type)
	if err := model.Summary(stdout); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "ResNet%dv1\n", depth)

	// checkpoint = ModelCheckpoint(filepath=filepath, monitor='val_acc',
	//                              verbose=1, save_best_only=True)
	checkpoint := callbacks.NewModelCheckpoint(filepath.Join(*saveDir, modelName))
	checkpoint.Monitor, checkpoint.Verbose, checkpoint.SaveBestOnly = "val_accuracy", 1, true
	checkpoint.SaveWeightsOnly = true
	// lr_scheduler = LearningRateScheduler(lr_schedule)
	scheduler := callbacks.NewLearningRateScheduler(func(epoch int, _ float64) float64 { return lrSchedule(epoch) })
	// lr_reducer = ReduceLROnPlateau(factor=np.sqrt(0.1), cooldown=0,
	//                                patience=5, min_lr=0.5e-6)
	reducer := callbacks.NewReduceLROnPlateau()
	reducer.Factor, reducer.Cooldown, reducer.Patience, reducer.MinLR = math.Sqrt(0.1), 0, 5, 0.5e-6

	// if not data_augmentation: print('Not using data augmentation.')
	fmt.Fprintln(stdout, "Not using data augmentation.")
	// model.fit(x_train, y_train, batch_size=batch_size, epochs=epochs,
	//           validation_data=(x_test, y_test), shuffle=True,
	//           callbacks=[checkpoint, lr_reducer, lr_scheduler])
	if _, err := model.Fit(ctx, train, nn.BatchSize(*batchSize), nn.Epochs(*epochs),
		nn.ValidationData(test), nn.Shuffle(true), nn.Output(stdout),
		nn.Callbacks(checkpoint, reducer, scheduler)); err != nil {
		return err
	}

	// scores = model.evaluate(x_test, y_test, verbose=1)
	scores, err := model.Evaluate(ctx, test, nn.Verbose(1), nn.Output(stdout))
	if err != nil {
		return err
	}
	// print('Test loss:', scores[0]); print('Test accuracy:', scores[1])
	fmt.Fprintln(stdout, "Test loss:", scores["loss"])
	fmt.Fprintln(stdout, "Test accuracy:", scores["accuracy"])
	return nil
}

// pixelMean is the mean image of a dataset (np.mean(x_train, axis=0)),
// gathered a thousand samples at a time.
func pixelMean(ds data.Dataset) ([]float32, error) {
	size := 1
	for _, d := range ds.SampleShape() {
		size *= d
	}
	sum := make([]float64, size)
	const chunk = 1000
	buf := make([]float32, chunk*size)
	idx := make([]int, 0, chunk)
	for lo := 0; lo < ds.Len(); lo += chunk {
		idx = idx[:0]
		for i := lo; i < min(lo+chunk, ds.Len()); i++ {
			idx = append(idx, i)
		}
		x := buf[:len(idx)*size]
		if err := ds.GatherInputs(idx, x); err != nil {
			return nil, fmt.Errorf("the mean image: %w", err)
		}
		for i, v := range x {
			sum[i%size] += float64(v)
		}
	}
	mean := make([]float32, size)
	for i, s := range sum {
		mean[i] = float32(s / float64(ds.Len()))
	}
	return mean, nil
}

// meanSubtracted is a dataset with the mean image subtracted from each
// sample as it is gathered.
type meanSubtracted struct {
	data.Dataset
	mean []float32
}

func (m meanSubtracted) GatherInputs(indices []int, dst []float32) error {
	if err := m.Dataset.GatherInputs(indices, dst); err != nil {
		return err
	}
	for i := range dst {
		dst[i] -= m.mean[i%len(m.mean)]
	}
	return nil
}
