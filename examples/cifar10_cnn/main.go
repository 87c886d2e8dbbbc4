// Command cifar10_cnn is Keras' classic example cifar10_cnn.py ("Train a
// simple deep CNN on the CIFAR10 small images dataset") written in Go with
// gokeras, line for line: each step carries, in a comment, the Keras line
// it stands for.
//
//	go run ./examples/cifar10_cnn                  # 100 epochs, as the example
//	go run ./examples/cifar10_cnn --epochs 1 --device=/CPU:0
//	go run ./examples/cifar10_cnn --data ~/cifar-10-binary.tar.gz
//
// Where gokeras lacks what the example uses, the comment says what stands
// in: the example's data_augmentation = False branch, as gokeras has no
// ImageDataGenerator; the weights saved as safetensors where Keras saves
// the whole model as HDF5.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"

	"github.com/gokeras/gokeras/datasets/cifar10"
	"github.com/gokeras/gokeras/device"
	"github.com/gokeras/gokeras/layers"
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
		fmt.Fprintln(os.Stderr, "cifar10_cnn:", err)
		os.Exit(1)
	}
}

// run is the whole program; main only wires it to the process, so a test
// can run it with its own flags and output.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("cifar10_cnn", flag.ContinueOnError)
	fs.SetOutput(stderr)
	// batch_size = 32; num_classes = 10; epochs = 100
	batchSize := fs.Int("batch-size", 32, "samples per step, as the example's batch_size")
	epochs := fs.Int("epochs", 100, "epochs to train, as the example's epochs")
	deviceName := fs.String("device", device.DefaultSpec().Short(), `device for the model ("/GPU:0" or "/CPU:0")`)
	data := fs.String("data", "", "a CIFAR-10 copy you already have (cifar-10-binary.tar.gz or its extracted directory); "+
		"default: download once into the cache, as cifar10.load_data does")
	// save_dir = os.path.join(os.getcwd(), 'saved_models')
	saveDir := fs.String("save-dir", "saved_models", "directory the trained weights are saved in, as the example's save_dir")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q: cifar10_cnn takes flags only (see -h)", fs.Args())
	}
	const numClasses = 10
	// model_name = 'keras_cifar10_trained_model.h5'
	const modelName = "keras_cifar10_trained_model.safetensors"

	// Not in the example: check the device before loading 170 MB of data.
	spec, err := device.ParseSpec(*deviceName)
	if err != nil {
		return fmt.Errorf("--device: %w", err)
	}
	if _, err := device.Resolve(ctx, &spec, device.PlaceOptions{}); err != nil {
		return fmt.Errorf("--device: %w", err)
	}

	// (x_train, y_train), (x_test, y_test) = cifar10.load_data()
	ds, err := cifar10.Load(ctx, cifar10.Options{Path: *data, Progress: stderr})
	if err != nil {
		return err
	}
	// print('x_train shape:', x_train.shape)
	fmt.Fprintf(stdout, "x_train shape: (%d, 32, 32, 3)\n", ds.Train.Len())
	// print(x_train.shape[0], 'train samples'); print(x_test.shape[0], 'test samples')
	fmt.Fprintf(stdout, "%d train samples\n%d test samples\n", ds.Train.Len(), ds.Test.Len())
	// y_train = keras.utils.to_categorical(y_train, num_classes), and
	// x_train.astype('float32') / 255 further down: the OneHot view does
	// both, batch by batch.
	train, test := ds.Train.OneHot(), ds.Test.OneHot()

	// model = Sequential(), then model.add(...) for each layer.
	model := nn.NewSequential(
		// Conv2D(32, (3, 3), padding='same', input_shape=x_train.shape[1:])
		layers.Input(32, 32, 3),
		layers.Conv2D(32, 3, layers.Padding("same")),
		layers.NewActivation(layers.ReLU),          // Activation('relu')
		layers.Conv2D(32, 3),                       // Conv2D(32, (3, 3))
		layers.NewActivation(layers.ReLU),          // Activation('relu')
		layers.MaxPooling2D(layers.PoolSize(2, 2)), // MaxPooling2D(pool_size=(2, 2))
		layers.Dropout(0.25),                       // Dropout(0.25)

		layers.Conv2D(64, 3, layers.Padding("same")), // Conv2D(64, (3, 3), padding='same')
		layers.NewActivation(layers.ReLU),            // Activation('relu')
		layers.Conv2D(64, 3),                         // Conv2D(64, (3, 3))
		layers.NewActivation(layers.ReLU),            // Activation('relu')
		layers.MaxPooling2D(layers.PoolSize(2, 2)),   // MaxPooling2D(pool_size=(2, 2))
		layers.Dropout(0.25),                         // Dropout(0.25)

		layers.Flatten(),                     // Flatten()
		layers.Dense(512),                    // Dense(512)
		layers.NewActivation(layers.ReLU),    // Activation('relu')
		layers.Dropout(0.5),                  // Dropout(0.5)
		layers.Dense(numClasses),             // Dense(num_classes)
		layers.NewActivation(layers.Softmax), // Activation('softmax')
	)

	// opt = keras.optimizers.RMSprop(learning_rate=0.0001, decay=1e-6):
	// Keras 2's decay makes each step's rate 0.0001/(1 + 1e-6·iterations),
	// which is the schedule InverseTimeDecay(0.0001, 1, 1e-6).
	opt, err := optim.NewRMSprop(optim.RMSpropConfig{Options: optim.Options{
		Schedule: optim.InverseTimeDecay{InitialLearningRate: 0.0001, DecaySteps: 1, DecayRate: 1e-6}}})
	if err != nil {
		return err
	}
	// model.compile(loss='categorical_crossentropy', optimizer=opt, metrics=['accuracy'])
	err = device.With(ctx, *deviceName, func(ctx context.Context) error {
		return model.CompileContext(ctx, opt, losses.CategoricalCrossentropy{}, []metrics.Metric{&metrics.Accuracy{}})
	})
	if err != nil {
		return err
	}
	defer model.Close()
	if err := model.Summary(stdout); err != nil {
		return err
	}

	// Not in the example: check where the weights go before training.
	if err := os.MkdirAll(*saveDir, 0o755); err != nil {
		return fmt.Errorf("--save-dir: %w", err)
	}

	// if not data_augmentation: print('Not using data augmentation.')
	fmt.Fprintln(stdout, "Not using data augmentation.")
	// model.fit(x_train, y_train, batch_size=batch_size, epochs=epochs,
	//           validation_data=(x_test, y_test), shuffle=True)
	if _, err := model.Fit(ctx, train, nn.BatchSize(*batchSize), nn.Epochs(*epochs),
		nn.ValidationData(test), nn.Shuffle(true), nn.Output(stdout)); err != nil {
		return err
	}

	// model_path = os.path.join(save_dir, model_name); model.save(model_path)
	modelPath := filepath.Join(*saveDir, modelName)
	if err := model.SaveWeights(modelPath); err != nil {
		return err
	}
	// print('Saved trained model at %s ' % model_path)
	fmt.Fprintf(stdout, "Saved trained model at %s \n", modelPath)

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
