// Command cifar10_mlp is a Keras notebook, "CPU and GPU Performance",
// written in Go with gokeras: it loads CIFAR-10, builds the
// Flatten → Dense(3000, relu) → Dense(1000, relu) → Dense(10, sigmoid)
// model, compiles it with SGD and categorical cross-entropy, and trains it
// for 10 epochs inside a device scope, timing the whole cell as the
// notebook's %%timeit did.
//
//	go run ./examples/cifar10_mlp                       # GPU when usable, else CPU; 10 epochs
//	go run ./examples/cifar10_mlp --device=/CPU:0       # the notebook's CPU variant
//	go run ./examples/cifar10_mlp --epochs 1 --data ~/cifar-10-binary.tar.gz
//
// Each step of the program carries, in a comment, the notebook line it
// stands for. Only gokeras' public API is used. The train command does the
// same work with more options (batch size, optimizer, validation, a test
// evaluation at the end).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

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
		fmt.Fprintln(os.Stderr, "cifar10_mlp:", err)
		os.Exit(1)
	}
}

// run is the whole program; main only wires it to the process, so a test
// can run it with its own flags and output.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("cifar10_mlp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	deviceName := fs.String("device", device.DefaultSpec().Short(),
		`device for the model, as the notebook's tf.device names it ("/GPU:0" or "/CPU:0")`)
	epochs := fs.Int("epochs", 10, "epochs to train, as the notebook's fit(epochs=10)")
	data := fs.String("data", "", "a CIFAR-10 copy you already have (cifar-10-binary.tar.gz or its extracted directory); "+
		"default: download once into the cache, as load_data does")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q: cifar10_mlp takes flags only (see -h)", fs.Args())
	}

	// Not in the notebook: check the device before loading 170 MB of data,
	// so asking for a GPU that is not there fails at once.
	spec, err := device.ParseSpec(*deviceName)
	if err != nil {
		return fmt.Errorf("--device: %w", err)
	}
	if _, err := device.Resolve(ctx, &spec, device.PlaceOptions{}); err != nil {
		return fmt.Errorf("--device: %w", err)
	}

	// The notebook's first cell: load CIFAR-10 into train and test splits
	// of uint8 images and labels (downloaded into the cache on first use).
	ds, err := cifar10.Load(ctx, cifar10.Options{Path: *data, Progress: stderr})
	if err != nil {
		return err
	}
	// The notebook divides every pixel by 255 and one-hot encodes the
	// labels into ten float32 columns. The OneHot view does both, batch by
	// batch, as fit asks for samples, instead of holding a float copy of
	// the whole split. (The notebook prepares the test split the same way
	// and never uses it, so it is left alone here.)
	trainEncoded := ds.Train.OneHot()

	// The %%timeit -n1 -r1 cell magic: one run of the cell, timed.
	start := time.Now()
	// with tf.device('/GPU:0'): everything the block creates goes on the
	// device, here the one --device names.
	err = device.With(ctx, *deviceName, func(ctx context.Context) error {
		// model_gpu = get_model()
		model, err := getModel(ctx)
		if err != nil {
			return err
		}
		defer model.Close()
		// model_gpu.fit(X_train_scaled, y_train_encoded, epochs = 10), with
		// Keras' defaults: batches of 32, shuffled each epoch, a progress bar.
		_, err = model.Fit(ctx, trainEncoded, nn.Epochs(*epochs), nn.Output(stdout))
		return err
	})
	if err != nil {
		return err
	}
	// What %%timeit printed after the cell: the time of its single run.
	elapsed := time.Since(start)
	if elapsed >= time.Minute {
		elapsed = elapsed.Round(time.Second)
	} else {
		elapsed = elapsed.Round(time.Millisecond)
	}
	fmt.Fprintf(stdout, "%s per loop (1 run, 1 loop each)\n", elapsed)
	return nil
}

// getModel is the notebook's get_model(): a new model each call, compiled.
func getModel(ctx context.Context) (*nn.Sequential, error) {
	// keras.Sequential([...]) with its four layers.
	model := nn.NewSequential(
		// Flatten(input_shape=(32,32,3)): the input shape is a layer of its
		// own here, ahead of the Flatten that turns 32×32×3 into 3,072.
		layers.Input(32, 32, 3),
		layers.Flatten(),
		// Dense(3000, activation='relu')
		layers.Dense(3000, layers.ReLU),
		// Dense(1000, activation='relu')
		layers.Dense(1000, layers.ReLU),
		// Dense(10, activation='sigmoid'): one output per class.
		layers.Dense(10, layers.Sigmoid),
	)
	// compile(optimizer='SGD', loss='categorical_crossentropy',
	// metrics=['accuracy']), looked up by the same Keras names.
	opt, err := optim.Get("SGD")
	if err != nil {
		return nil, err
	}
	loss, err := losses.Get("categorical_crossentropy")
	if err != nil {
		return nil, err
	}
	accuracy, err := metrics.Get("accuracy")
	if err != nil {
		return nil, err
	}
	if err := model.CompileContext(ctx, opt, loss, []metrics.Metric{accuracy}); err != nil {
		return nil, err
	}
	// return model
	return model, nil
}
