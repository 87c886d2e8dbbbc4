// Command image_folder trains a small CNN on a folder of images, as Keras'
// "image classification from scratch" does: one folder per class, read
// with data.ImageDatasetFromDirectory (a validation subset held out with a
// seed), the pixels rescaled and augmented in the model (Rescaling,
// RandomFlip, RandomTranslation: on the model's device, in training
// only), then convolutions.
//
//	go run ./examples/image_folder --make-demo demo    # a folder of generated PNGs
//	go run ./examples/image_folder --dir demo --epochs 10
//	go run ./examples/image_folder --dir ~/flowers --image-size 96 --epochs 20
//
// --make-demo writes a folder of three classes of 32×32 PNG images it
// draws with a fixed seed (discs, squares and stripes of random colours,
// sizes and places, on noise), for a run with no data at hand.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"

	"github.com/gokeras/gokeras/data"
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
		fmt.Fprintln(os.Stderr, "image_folder:", err)
		os.Exit(1)
	}
}

// run is the whole program; main only wires it to the process, so a test
// can run it with its own flags and output.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("image_folder", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", "", "the folder of class folders of images (BMP, GIF, JPEG, PNG)")
	demo := fs.String("make-demo", "", "write a folder of generated images (three classes) here and exit")
	perClass := fs.Int("demo-images", 200, "images per class --make-demo writes")
	size := fs.Int("image-size", 32, "the height and width images are resized to")
	epochs := fs.Int("epochs", 10, "epochs to train")
	batch := fs.Int("batch-size", 32, "samples per step")
	seed := fs.Uint64("seed", 1, "seed of the split, the shuffles, the weights and the augmentation")
	deviceName := fs.String("device", device.DefaultSpec().Short(), `device for the model ("/GPU:0" or "/CPU:0")`)
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("unexpected arguments %q: image_folder takes flags only (see -h)", fs.Args())
	case *demo != "":
		return makeDemo(*demo, *perClass, *seed, stdout)
	case *dir == "":
		return errors.New("no --dir given: name a folder of class folders of images, or make one with --make-demo DIR")
	case *size <= 0 || *epochs <= 0 || *batch <= 0:
		return errors.New("--image-size, --epochs and --batch-size must be positive")
	}
	spec, err := device.ParseSpec(*deviceName)
	if err != nil {
		return fmt.Errorf("--device: %w", err)
	}

	// image_dataset_from_directory(dir, validation_split=0.2,
	// subset="training"/"validation", seed=..., image_size=...)
	open := func(subset string) (*data.ImageFolder, error) {
		return data.ImageDatasetFromDirectory(*dir, data.ImageFolderOptions{
			ImageSize: [2]int{*size, *size}, ValidationSplit: 0.2, Subset: subset, Seed: *seed})
	}
	train, err := open("training")
	if err != nil {
		return err
	}
	val, err := open("validation")
	if err != nil {
		return err
	}
	classes := train.ClassNames()
	fmt.Fprintf(stdout, "Found %d files belonging to %d classes (%v).\nUsing %d files for training, %d for validation.\n",
		train.Len()+val.Len(), len(classes), classes, train.Len(), val.Len())

	// The model: rescale and augment, then two convolutions.
	model := nn.NewSequential(
		layers.Input(*size, *size, 3),
		layers.Rescaling(1.0/255, 0),
		layers.RandomFlip("horizontal"),
		layers.RandomTranslation(0.1, 0.1),
		layers.Conv2D(16, 3, layers.Padding("same"), layers.ReLU),
		layers.MaxPooling2D(),
		layers.Conv2D(32, 3, layers.Padding("same"), layers.ReLU),
		layers.MaxPooling2D(),
		layers.Flatten(),
		layers.Dense(64, layers.ReLU),
		layers.Dense(len(classes), layers.Softmax),
	)
	model.SetSeed(*seed)
	opt, err := optim.NewAdam(optim.AdamConfig{LearningRate: 1e-3})
	if err != nil {
		return err
	}
	if err := model.Compile(opt, losses.SparseCategoricalCrossentropy{}, []metrics.Metric{&metrics.Accuracy{}}, nn.OnDevice(spec)); err != nil {
		return err
	}
	defer model.Close()
	if err := model.Summary(stdout); err != nil {
		return err
	}
	// The images are decoded and resized once (Cache), on another
	// goroutine while the model trains (Prefetch).
	hist, err := model.Fit(ctx, data.Prefetch(data.Cache(train)), nn.Epochs(*epochs), nn.BatchSize(*batch),
		nn.ValidationData(data.Cache(val)), nn.Seed(*seed), nn.Output(stdout))
	if err != nil {
		return err
	}
	last := hist.Epoch(len(hist.Epochs) - 1)
	fmt.Fprintf(stdout, "validation accuracy after %d epochs: %.4f\n", *epochs, last["val_accuracy"])
	return nil
}

// makeDemo writes dir/discs, dir/squares and dir/stripes, n PNG images
// each, drawn from seed.
func makeDemo(dir string, n int, seed uint64, stdout io.Writer) error {
	if n <= 0 {
		return errors.New("--demo-images must be positive")
	}
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return fmt.Errorf("--make-demo %s: the folder is not empty: give a new one", dir)
	}
	rng := rand.New(rand.NewPCG(seed, 0x64656d6f))
	const side = 32
	for _, class := range []string{"discs", "squares", "stripes"} {
		if err := os.MkdirAll(filepath.Join(dir, class), 0o755); err != nil {
			return err
		}
		for i := range n {
			img := image.NewNRGBA(image.Rect(0, 0, side, side))
			ink := color.NRGBA{uint8(rng.IntN(256)), uint8(rng.IntN(256)), uint8(rng.IntN(256)), 255}
			cx, cy := 8+rng.Float64()*16, 8+rng.Float64()*16
			r := 5 + rng.Float64()*6
			for y := range side {
				for x := range side {
					dx, dy := float64(x)-cx, float64(y)-cy
					var on bool
					switch class {
					case "discs":
						on = dx*dx+dy*dy <= r*r
					case "squares":
						on = math.Abs(dx) <= r && math.Abs(dy) <= r
					default:
						on = int(math.Floor(float64(x+y)/(r/2)))%2 == 0
					}
					c := color.NRGBA{uint8(rng.IntN(64)), uint8(rng.IntN(64)), uint8(rng.IntN(64)), 255}
					if on {
						c = ink
					}
					img.SetNRGBA(x, y, c)
				}
			}
			f, err := os.Create(filepath.Join(dir, class, fmt.Sprintf("%s_%04d.png", class, i)))
			if err != nil {
				return err
			}
			err = png.Encode(f, img)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		}
	}
	fmt.Fprintf(stdout, "wrote %d images in 3 classes to %s\n", 3*n, dir)
	return nil
}
