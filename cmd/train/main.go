// Command train trains a Keras CIFAR-10 model with SGD and categorical
// cross-entropy, on the device asked for, printing Keras-format progress.
// The model is --model mlp (the default: Flatten → Dense(3000, relu) →
// Dense(1000, relu) → Dense(10, sigmoid)), --model cnn (Keras'
// cifar10_cnn example: four 3×3 convolutions, two max poolings, dropout,
// Dense(512, relu) → Dense(10, softmax)) or --model resnet20 (Keras'
// cifar10_resnet example: ResNet-20 v1, a functional model):
//
//	train --device=/GPU:0 --epochs 10
//	train --model cnn --synthetic --epochs 1 --steps-per-epoch 50
//	train --device=/CPU:0 --synthetic --epochs 2 --steps-per-epoch 50
//	train --epochs 10 --checkpoint ckpt.safetensors --plot history.png --trace
//	train --epochs 10 --checkpoint ckpt.safetensors --resume ckpt.safetensors
//	mpirun -np 2 train --device=/CPU:0 --synthetic --epochs 1 --batch-size 64 --distributed
//
// --distributed trains data-parallel, one replica per process of the MPI
// job (package distribute): --batch-size is the global batch, rank 0
// prints and writes the files, every rank reads the --resume checkpoint,
// and the last line gives the samples/s of the whole job. With --benchmark
// it times the whole job's steps. --distributed-timeout (default 10m, 0:
// for ever) is how long a collective waits for the other processes before
// the job stops, saying so.
//
// Every file train writes (--save, --checkpoint, --plot, --csv-log, --json,
// the --tensorboard event files) is checked before training starts, so a
// bad path fails at once, not after the work. --json writes a summary of
// the run for tools; with --json - the summary is all stdout holds, at
// any --verbose, and everything train prints for people goes to stderr.
// --verbose 0 prints errors only. A command line train cannot run exits
// with status 2.
//
// Ctrl-C, SIGTERM and SIGHUP stop training at the next step, save the
// --checkpoint and print the command that resumes the run; train then
// exits with status 128 plus the signal's number (130, 143, 129). A second
// signal ends train at once; the previous checkpoint is kept intact.
//
// Two environment variables, for debugging and timing, turn off overlaps
// that do not change the results: GOKERAS_PIPELINE=0 runs each training
// step to its end before the next starts (nn.PipelineSteps(false)), and
// GOKERAS_REDUCE_OVERLAP=0 makes --distributed all-reduce the gradients
// after the backward pass instead of during it (nn.OverlapReduce(false)).
//
// Run train -h for the flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/gokeras/gokeras/callbacks"
	"github.com/gokeras/gokeras/datasets/cifar10"
	"github.com/gokeras/gokeras/device"
	"github.com/gokeras/gokeras/distribute"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/metrics"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/optim"
)

func main() {
	ctx, stop := cancelOnSignal(context.Background())
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "train:", err)
		if errors.As(err, new(*usageError)) {
			fmt.Fprintln(os.Stderr, "Run train --help for the flags.")
		}
	}
	os.Exit(exitStatus(ctx, err))
}

// usageError is a command line train cannot run: a flag that does not
// exist, a value out of range, flags that exclude each other. train exits
// with status 2 for it, as Go's flag package and most Unix tools do.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// usage wraps err as a usage error.
func usage(err error) error { return &usageError{err} }

// usagef is a usage error from a format.
func usagef(format string, a ...any) error { return usage(fmt.Errorf(format, a...)) }

// config is what the flags ask for.
type config struct {
	// serialSteps and reduceAfterBackward come from the environment:
	// GOKERAS_PIPELINE=0 and GOKERAS_REDUCE_OVERLAP=0 (see the package doc).
	serialSteps, reduceAfterBackward bool
	model                            string
	augment                          bool
	clipNorm                         float64
	globalClipNorm                   float64
	clipValue                        float64
	weightDecay                      float64
	lrSchedule                       string
	device                           string
	softPlacement                    bool
	logPlacement                     bool
	epochs                           int
	batchSize                        int
	stepsPerEpoch                    int
	lr                               float64
	lrSet                            bool
	optimizer                        string
	momentum                         float64
	nesterov                         bool
	data                             string
	synthetic                        bool
	syntheticTrain                   int
	seed                             uint64
	seedSet                          bool
	verbose                          int
	validation                       bool
	validSplit                       float64
	patience                         int
	csvLog                           string
	jsonOut                          string
	tensorboard                      string
	distributed                      bool
	// distTimeout is --distributed-timeout, distTimeoutSet whether it was
	// given.
	distTimeout    time.Duration
	distTimeoutSet bool
	seedFromClock  bool              // no --seed, and no --resume checkpoint gave one
	flags          map[string]string // every flag with its value, for --json
	ux             uxFlags           // --save, --checkpoint, --resume, --plot, --trace, --throughput
	bench          benchFlags        // --benchmark, --benchmark-steps, --benchmark-warmup
}

// parseFlags reads the command line. --help prints the usage to stdout
// and returns flag.ErrHelp; every other error is a *usageError.
func parseFlags(args []string, stdout io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	// The flag package would print its error and the whole usage to the
	// output; main prints the error once, and --help prints the usage.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.StringVar(&c.device, "device", "", `device to train on, TensorFlow spelling ("/CPU:0", "/GPU:0"); default /GPU:0 when one is usable, else /CPU:0`)
	fs.BoolVar(&c.softPlacement, "soft-placement", false, "fall back to /CPU:0 with a warning when the device does not exist")
	fs.BoolVar(&c.logPlacement, "log-device-placement", false, "print the device of every variable and op")
	fs.StringVar(&c.model, "model", "mlp", "model to train: mlp (Flatten, Dense(3000, relu), Dense(1000, relu), Dense(10, sigmoid)), cnn (Keras' cifar10_cnn example: 4 convolutions, 2 max poolings, dropout, Dense(512, relu), Dense(10, softmax)) or resnet20 (Keras' cifar10_resnet example: ResNet-20 v1, a functional model of residual blocks)")
	fs.BoolVar(&c.augment, "augment", false, "augment the training images on the device, as Keras' cifar10_cnn and cifar10_resnet examples do with ImageDataGenerator(width_shift_range=0.1, height_shift_range=0.1, horizontal_flip=True, fill_mode=\"nearest\"): "+
		"RandomFlip(\"horizontal\") and RandomTranslation(0.1, 0.1, fill_mode=\"nearest\") first in the model (not the layers' default \"reflect\" fill), active in training only; evaluation, Predict and the saved model see the images as they are")
	fs.IntVar(&c.epochs, "epochs", 10, "epochs to train")
	fs.IntVar(&c.batchSize, "batch-size", 32, "samples per step")
	fs.IntVar(&c.stepsPerEpoch, "steps-per-epoch", 0, "end each epoch after this many steps (Keras' steps_per_epoch; 0: the whole training set)")
	fs.Float64Var(&c.lr, "lr", 0, "learning rate (default: Keras' for the optimizer, 0.01 for sgd, 0.001 for adam)")
	fs.StringVar(&c.optimizer, "optimizer", "sgd", "optimizer, by its Keras name: "+strings.Join(optim.Names, ", "))
	fs.Float64Var(&c.momentum, "momentum", 0, "SGD's momentum, in [0, 1] (Keras' default 0)")
	fs.Float64Var(&c.clipNorm, "clipnorm", 0, "scale each weight's gradient down to this L2 norm when longer (Keras' clipnorm; 0: off)")
	fs.Float64Var(&c.globalClipNorm, "global-clipnorm", 0, "scale all gradients of a step down together to this joint L2 norm when longer (Keras' global_clipnorm; 0: off; excludes --clipnorm)")
	fs.Float64Var(&c.clipValue, "clipvalue", 0, "clip each gradient value to [-v, v] (Keras' clipvalue; 0: off)")
	fs.Float64Var(&c.weightDecay, "weight-decay", 0, "decoupled weight decay, w -= w·decay·lr before each update (Keras' weight_decay; 0: off, adamw: 0.004)")
	fs.StringVar(&c.lrSchedule, "lr-schedule", "constant", "learning rate over the run: constant, or cosine (Keras' CosineDecay from the rate down to 0 over all the run's steps)")
	fs.BoolVar(&c.nesterov, "nesterov", false, "SGD with Nesterov momentum (needs --momentum)")
	fs.StringVar(&c.data, "data", "", "CIFAR-10 you already have: the extracted cifar-10-batches-bin directory, its parent, or cifar-10-binary.tar.gz. "+
		"Default: download once into $"+cifar10.HomeEnv+"/datasets (else the user cache dir, gokeras/datasets) and reuse it; "+
		"$"+cifar10.URLEnv+" names a mirror, and $"+cifar10.MD5Env+" its checksum when it repackaged the archive")
	fs.BoolVar(&c.synthetic, "synthetic", false, "train on generated CIFAR-shaped data instead of CIFAR-10: learnable but hard, it learns about as CIFAR-10 does (no download)")
	fs.IntVar(&c.syntheticTrain, "synthetic-samples", 50000, "training samples of the --synthetic dataset (test set: a fifth as many)")
	fs.Uint64Var(&c.seed, "seed", 0, "seed for the initial weights, the shuffles and --synthetic (default: from the clock)")
	fs.IntVar(&c.verbose, "verbose", 1, "0 quiet (errors only), 1 progress bar, 2 one line per epoch")
	fs.BoolVar(&c.validation, "validation", false, "evaluate on the test set after each epoch (val_loss, val_accuracy); the test set is then also the validation set")
	fs.Float64Var(&c.validSplit, "validation-split", 0, "hold out this fraction of the training set, its last samples, and evaluate on it after each epoch (Keras' validation_split; 0: off; excludes --validation)")
	fs.IntVar(&c.patience, "early-stopping", 0, "stop when the monitored figure has not improved for this many epochs (Keras' EarlyStopping patience; it monitors val_loss with --validation or --validation-split, else loss; 0: off)")
	fs.StringVar(&c.csvLog, "csv-log", "", "write each epoch's figures to this CSV file (Keras' CSVLogger; appended to with --resume)")
	fs.StringVar(&c.jsonOut, "json", "", "write a summary of the run (device, flags, seed, history per epoch, test scores, ms/step) as JSON to this file, or to stdout with -: stdout then holds the JSON alone, and the progress and every other line for people go to stderr")
	fs.StringVar(&c.tensorboard, "tensorboard", "", "write TensorBoard event files under this directory, in train/ and validation/: each epoch's figures and the learning rate (Keras' TensorBoard callback; view them with tensorboard --logdir DIR)")
	fs.BoolVar(&c.distributed, "distributed", false, "train data-parallel, one replica per process of an MPI job (Keras' MultiWorkerMirroredStrategy, on /CPU:0 unless --device=/GPU:0, one GPU per process summed by NCCL): launch with mpirun -np N train --distributed ...; --batch-size is the global batch, split between the processes; rank 0 prints")
	fs.DurationVar(&c.distTimeout, "distributed-timeout", distribute.DefaultTimeout, "with --distributed, how long each collective (all-reduce, broadcast) waits for the other processes before the job stops with a message (0: for ever); allow for the slowest process's start")
	c.ux.register(fs)
	c.bench.register(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printUsage(stdout, fs)
			return c, err
		}
		return c, usage(flagMessage(err))
	}
	if fs.NArg() > 0 {
		return c, usagef("unexpected arguments %q: train takes flags only", fs.Args())
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	c.lrSet, c.seedSet, c.distTimeoutSet = set["lr"], set["seed"], set["distributed-timeout"]
	c.flags = map[string]string{}
	fs.VisitAll(func(f *flag.Flag) { c.flags[f.Name] = f.Value.String() })
	switch {
	case models[strings.ToLower(c.model)] == nil:
		return c, usagef("--model %q: want %s", c.model, modelNames)
	case c.epochs < 0 || (c.epochs == 0 && c.ux.loadModel == ""):
		return c, usagef("--epochs must be positive, got %d (0, to evaluate only, needs --load-model)", c.epochs)
	case c.batchSize <= 0:
		return c, usagef("--batch-size must be positive, got %d", c.batchSize)
	case c.stepsPerEpoch < 0:
		return c, usagef("--steps-per-epoch must not be negative, got %d", c.stepsPerEpoch)
	case c.lrSet && !(c.lr > 0 && !math.IsInf(c.lr, 0)):
		return c, usagef("--lr must be a positive number, got %v", c.lr)
	case !(c.momentum >= 0 && c.momentum <= 1):
		return c, usagef("--momentum must be in [0, 1], got %v", c.momentum)
	case c.lrSchedule != "constant" && c.lrSchedule != "cosine":
		return c, usagef("--lr-schedule %q: want constant or cosine", c.lrSchedule)
	case (c.momentum != 0 || c.nesterov) && !strings.EqualFold(c.optimizer, "sgd"):
		return c, usagef("--momentum and --nesterov are SGD's: they do not apply to --optimizer %s", c.optimizer)
	case c.nesterov && c.momentum == 0:
		return c, usagef("--nesterov needs a --momentum above 0")
	case c.verbose < 0 || c.verbose > 2:
		return c, usagef("--verbose must be 0, 1 or 2, got %d", c.verbose)
	case c.synthetic && c.data != "":
		return c, usagef("--synthetic and --data exclude each other: pick one dataset")
	case c.syntheticTrain <= 0:
		return c, usagef("--synthetic-samples must be positive, got %d", c.syntheticTrain)
	case c.syntheticTrain > maxSyntheticSamples:
		return c, usagef("--synthetic-samples %d is more than the %d the generated dataset allows (%.1f GB of images with its test set): ask for fewer",
			c.syntheticTrain, maxSyntheticSamples, syntheticBytes(maxSyntheticSamples)/1e9)
	case c.synthetic && syntheticBytes(c.syntheticTrain) > memoryBytes()/2:
		return c, usagef("--synthetic-samples %d needs %.1f GB of memory for the images, more than half of this machine's %.1f GB: ask for fewer",
			c.syntheticTrain, syntheticBytes(c.syntheticTrain)/1e9, memoryBytes()/1e9)
	case !(c.validSplit >= 0 && c.validSplit < 1):
		return c, usagef("--validation-split must be at least 0 and below 1, got %v", c.validSplit)
	case c.validSplit > 0 && c.validation:
		return c, usagef("--validation and --validation-split exclude each other: validate on the test set or on part of the training set, not both")
	case c.patience < 0:
		return c, usagef("--early-stopping must not be negative, got %d (0 turns it off)", c.patience)
	case c.bench.inference && !c.bench.on:
		return c, usagef("--benchmark-inference changes what --benchmark times: add --benchmark")
	}
	if c.ux.loadModel != "" {
		// The file holds the model and how it trains.
		for _, f := range []string{"model", "augment", "optimizer", "lr", "momentum", "nesterov", "clipnorm", "global-clipnorm", "clipvalue", "weight-decay", "lr-schedule", "resume", "benchmark"} {
			if set[f] {
				return c, usagef("--load-model and --%s exclude each other: the model file holds the model, its optimizer and its state", f)
			}
		}
		if c.ux.checkpoint != "" {
			// A --resume of it would need the model file as well.
			return c, usagef("--load-model and --checkpoint exclude each other for now: save the run with --save-model, and go on from it with --load-model")
		}
	}
	if c.epochs == 0 {
		for _, f := range []string{"save", "checkpoint", "plot", "trace"} {
			if set[f] {
				return c, usagef("--epochs 0 only evaluates: --%s has nothing to write; drop it, or train for some epochs", f)
			}
		}
	}
	if err := c.distributedFlags(); err != nil {
		return c, err
	}
	if !c.seedSet {
		c.seed = uint64(time.Now().UnixNano())
		c.seedFromClock = true
	}
	return c, nil
}

// flagMessage words the flag package's errors with the flags spelled as
// train's usage and messages spell them, --name.
func flagMessage(err error) error {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		return fmt.Errorf("unknown flag --%s", name)
	}
	msg = regexp.MustCompile(`\bflag -([a-z-]+)`).ReplaceAllString(msg, "--$1")
	return errors.New(strings.Replace(msg, "flag needs an argument: -", "flag needs an argument: --", 1))
}

// printUsage writes --help's text: what train does and its flags, spelled
// --flag as docs/train.md and the messages spell them.
func printUsage(w io.Writer, fs *flag.FlagSet) {
	var b strings.Builder
	fs.SetOutput(&b)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
	fmt.Fprint(w, "Usage: train [flags]\n\n"+
		"train trains a Keras CIFAR-10 model (--model mlp: Flatten, Dense(3000, relu), Dense(1000, relu),\n"+
		"Dense(10, sigmoid); --model cnn: Keras' cifar10_cnn example) with SGD and categorical\n"+
		"cross-entropy, and prints Keras-format progress.\n\n"+
		"Flags:\n")
	fmt.Fprint(w, regexp.MustCompile(`(?m)^  -`).ReplaceAllString(b.String(), "  --"))
}

// The environment variables train reads (see the package doc).
const (
	pipelineEnv      = "GOKERAS_PIPELINE"
	reduceOverlapEnv = "GOKERAS_REDUCE_OVERLAP"
)

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return cliError(train(ctx, args, stdout, stderr))
}

// train is run before its error is worded for the command line.
func train(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	start := time.Now()
	cfg, err := parseFlags(args, stdout)
	if err != nil {
		return err
	}
	cfg.serialSteps = os.Getenv(pipelineEnv) == "0"
	cfg.reduceAfterBackward = os.Getenv(reduceOverlapEnv) == "0"
	var strategy *distribute.MultiWorkerStrategy
	if cfg.distributed {
		if strategy, err = startDistributed(&cfg); err != nil {
			return err
		}
		// Only after success: a rank that fails exits without finalizing,
		// and mpirun then stops the others.
		defer func() {
			if err == nil {
				err = strategy.Close()
			}
		}()
		if strategy.Rank() != 0 {
			stdout = io.Discard // rank 0 prints
			cfg.rankZeroOnly()
		}
	}
	if strategy == nil || strategy.Rank() == 0 { // rank 0 writes the files
		outputs := []output{{"csv-log", cfg.csvLog}}
		if cfg.jsonOut != "-" {
			outputs = append(outputs, output{"json", cfg.jsonOut})
		}
		if err := cfg.ux.checkOutputs(outputs...); err != nil {
			return err
		}
		files := append([]output{{"save", cfg.ux.save}, {"checkpoint", cfg.ux.checkpoint}, {"plot", cfg.ux.plot}}, outputs...)
		if err := checkTensorBoard(cfg.tensorboard, files); err != nil {
			return err
		}
	}
	if err := cfg.ux.prepare(&cfg, stderr); err != nil {
		return err
	}
	opt, err := newOptimizer(cfg)
	if err != nil {
		return err
	}
	// human is where the lines for people go: stdout, or stderr with
	// --json -, whose JSON is then all stdout holds. out is the progress
	// and the report: nothing at --verbose 0. What a flag asks for by name
	// (--trace, --log-device-placement, --benchmark's figures) still goes
	// to human.
	human := stdout
	if cfg.jsonOut == "-" {
		human = stderr
	}
	out := human
	if cfg.verbose == 0 {
		out = io.Discard
	}
	spec, err := chooseDevice(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Device: %s (%s)\n", spec.Short(), spec)
	if strategy != nil {
		printDistributed(out, strategy, cfg.batchSize)
	}
	if cfg.seedFromClock {
		fmt.Fprintf(out, "Seed: %d (pass --seed %d to repeat)\n", cfg.seed, cfg.seed)
	}
	if cfg.bench.on {
		var s nn.Strategy
		if strategy != nil {
			s = strategy
		}
		return runBenchmark(ctx, cfg, spec, opt, s, human)
	}

	data, err := loadData(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "x_train: (%d, 32, 32, 3) uint8, y_train: (%d, 1) uint8\n", data.Train.Len(), data.Train.Len())
	fmt.Fprintf(out, "x_test: (%d, 32, 32, 3) uint8, y_test: (%d, 1) uint8\n", data.Test.Len(), data.Test.Len())
	printMath(out, spec)

	compileOpts := []nn.CompileOption{nn.OnDevice(spec), nn.OverlapReduce(!cfg.reduceAfterBackward)}
	if cfg.logPlacement {
		compileOpts = append(compileOpts, nn.LogDevicePlacement(human))
	}
	if strategy != nil {
		compileOpts = append(compileOpts, nn.WithStrategy(strategy))
	}
	var model *nn.Model
	if cfg.ux.loadModel != "" {
		if model, err = nn.LoadModelContext(ctx, cfg.ux.loadModel, nn.CompileOptions(compileOpts...)); err != nil {
			return fmt.Errorf("--load-model: %w", err)
		}
		if model.Optimizer() == nil {
			model.Close()
			return fmt.Errorf("--load-model %s: the file holds no compile settings gokeras reads (a gokeras model saved uncompiled, or a Keras file that names no loss): save it compiled", cfg.ux.loadModel)
		}
		opt = model.Optimizer()
		defer model.Close()
		if err := model.Summary(out); err != nil {
			return err
		}
		fmt.Fprintf(out, "Model loaded from %s\n", cfg.ux.loadModel)
	} else {
		if model, err = newModel(cfg.model, cfg.seed, cfg.augment); err != nil {
			return err
		}
		if err := model.Summary(out); err != nil {
			return err
		}
		if err := model.Compile(opt, losses.CategoricalCrossentropy{}, []metrics.Metric{&metrics.Accuracy{}}, compileOpts...); err != nil {
			return err
		}
		defer model.Close()
	}
	resumeOpts, err := cfg.ux.restore(model, opt, cfg, out)
	if err != nil {
		return err
	}

	fitOpts := []nn.Option{nn.Epochs(cfg.epochs), nn.BatchSize(cfg.batchSize), nn.Verbose(cfg.verbose), nn.Seed(cfg.seed), nn.Output(out),
		nn.PipelineSteps(!cfg.serialSteps)}
	if cfg.stepsPerEpoch > 0 {
		fitOpts = append(fitOpts, nn.StepsPerEpoch(cfg.stepsPerEpoch))
	}
	if cfg.validation {
		fitOpts = append(fitOpts, nn.ValidationData(data.Test.OneHot()))
	}
	if cfg.validSplit > 0 {
		fitOpts = append(fitOpts, nn.ValidationSplit(cfg.validSplit))
	}
	timer := &epochTimer{}
	fitOpts = append(fitOpts, nn.Callbacks(timer))
	// The checkpoint is written before the logs at each epoch's end: a log
	// that cannot be written (a full disk) then stops the run with the
	// epoch's weights saved.
	cp, uxOpts := cfg.ux.fitOptions(cfg)
	fitOpts = append(fitOpts, uxOpts...)
	if cfg.csvLog != "" {
		csv := callbacks.NewCSVLogger(cfg.csvLog)
		if cfg.ux.resume != "" { // keep the epochs before the checkpoint's
			csv.Append, csv.ResumeEpoch = true, cfg.ux.from.Epoch
		}
		fitOpts = append(fitOpts, nn.Callbacks(csv))
	}
	var stopper *callbacks.EarlyStopping
	if cfg.patience > 0 {
		stopper = callbacks.NewEarlyStopping()
		stopper.Monitor = earlyStoppingMonitor(cfg)
		stopper.Patience = cfg.patience
		stopper.Verbose = min(cfg.verbose, 1)
		fitOpts = append(fitOpts, nn.Callbacks(stopper))
	}
	if cfg.tensorboard != "" {
		tb, opt := tensorBoard(cfg.tensorboard, out)
		defer tb.Close() // after a Fit that failed; the end of training closes it otherwise
		fitOpts = append(fitOpts, opt)
	}
	fitOpts = append(fitOpts, resumeOpts...)
	if err := cfg.ux.checkSpace(model, opt); err != nil {
		return err
	}
	if err := cfg.ux.checkModelExport(model); err != nil {
		return err
	}
	if cfg.epochs > 0 {
		if _, err := model.Fit(ctx, data.Train.OneHot(), fitOpts...); err != nil {
			return cfg.ux.onFitError(err, stoppedBy(ctx), cp, cfg, args, strategy)
		}
		if err := cfg.ux.afterFit(model, cp, out, human); err != nil {
			return err
		}
	} else if err := cfg.ux.writeModel(model, out); err != nil { // --epochs 0: evaluate only
		return err
	}
	res, err := model.Evaluate(ctx, data.Test.OneHot(), nn.BatchSize(cfg.batchSize), nn.Verbose(cfg.verbose), nn.Output(out))
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Test loss: %.4f - test accuracy: %.4f\n", res["loss"], res["accuracy"])
	elapsed := time.Since(start)
	if cfg.jsonOut != "" {
		s := newSummary(cfg, args, spec, data, cp.history, timer, stopper, res, elapsed)
		if err := writeSummary(cfg.jsonOut, s, stdout); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "Total time: %s\n", formatTime(elapsed))
	if strategy != nil {
		printJobThroughput(out, strategy, timer, cfg.batchSize, data.Train.Len())
	}
	return nil
}

// earlyStoppingMonitor is the figure --early-stopping watches: the
// validation loss when there is validation data, else the training loss.
func earlyStoppingMonitor(cfg config) string {
	if cfg.validation || cfg.validSplit > 0 {
		return "val_loss"
	}
	return "loss"
}

// chooseDevice resolves --device, or TensorFlow's default when it is empty.
func chooseDevice(ctx context.Context, cfg config, stderr io.Writer) (device.Spec, error) {
	var requested *device.Spec
	if cfg.device != "" {
		s, err := device.ParseSpec(cfg.device)
		if err != nil {
			return device.Spec{}, usagef("--device: %w", err)
		}
		requested = &s
	}
	s, err := device.Resolve(ctx, requested, device.PlaceOptions{Soft: cfg.softPlacement, Warn: stderr})
	if err != nil {
		return device.Spec{}, fmt.Errorf("--device: %w", err)
	}
	return s, nil
}

func loadData(ctx context.Context, cfg config, stderr io.Writer) (*cifar10.Dataset, error) {
	if cfg.synthetic {
		return cifar10.SyntheticHard(cfg.syntheticTrain, max(cfg.syntheticTrain/5, 1), cfg.seed), nil
	}
	progress := stderr
	if cfg.verbose == 0 {
		progress = nil // no download bar or status lines; errors still come back
	}
	data, err := cifar10.Load(ctx, cifar10.Options{Path: cfg.data, Progress: progress})
	if err != nil {
		return nil, fmt.Errorf("loading CIFAR-10: %w", err)
	}
	return data, nil
}

// newOptimizer makes the --optimizer with --lr, or with the optimizer's own
// Keras default rate when --lr is not given (cfg.lr is 0 then), and the
// options every optimizer takes: --clipnorm, --clipvalue, --weight-decay
// and --lr-schedule.
func newOptimizer(cfg config) (optim.Optimizer, error) {
	opts := optim.Options{ClipNorm: cfg.clipNorm, ClipValue: cfg.clipValue, WeightDecay: cfg.weightDecay, GlobalClipNorm: cfg.globalClipNorm}
	name := strings.ToLower(cfg.optimizer)
	if cfg.lrSchedule == "cosine" {
		// The rate must be known to build the schedule: take the
		// optimizer's Keras default when --lr is not given.
		def, err := optim.Get(name)
		if err != nil {
			return nil, optimizerUsage(cfg.optimizer)
		}
		lr := cfg.lr
		if lr == 0 {
			lr = def.LearningRate()
		}
		opts.Schedule = optim.CosineDecay{InitialLearningRate: lr, DecaySteps: max(1, totalSteps(cfg))}
	}
	var (
		opt optim.Optimizer
		err error
	)
	switch name {
	case "sgd":
		opt, err = optim.NewSGD(optim.SGDConfig{LearningRate: cfg.lr, Momentum: cfg.momentum, Nesterov: cfg.nesterov, Options: opts})
	case "adam":
		opt, err = optim.NewAdam(optim.AdamConfig{LearningRate: cfg.lr, Options: opts})
	case "adamw":
		opt, err = optim.NewAdamW(optim.AdamConfig{LearningRate: cfg.lr, Options: opts})
	case "rmsprop":
		opt, err = optim.NewRMSprop(optim.RMSpropConfig{LearningRate: cfg.lr, Options: opts})
	case "adagrad":
		opt, err = optim.NewAdagrad(optim.AdagradConfig{LearningRate: cfg.lr, Options: opts})
	case "adadelta":
		opt, err = optim.NewAdadelta(optim.AdadeltaConfig{LearningRate: cfg.lr, Options: opts})
	case "adamax":
		opt, err = optim.NewAdamax(optim.AdamaxConfig{LearningRate: cfg.lr, Options: opts})
	case "nadam":
		opt, err = optim.NewNadam(optim.NadamConfig{LearningRate: cfg.lr, Options: opts})
	default:
		return nil, optimizerUsage(cfg.optimizer)
	}
	if err != nil {
		return nil, usagef("--lr, --clipnorm, --global-clipnorm, --clipvalue or --weight-decay: %w", err)
	}
	return opt, nil
}

// optimizerUsage is the error for an --optimizer name optim.Get does not
// know: its list of the known names, without its hint for Go code.
func optimizerUsage(name string) error {
	_, err := optim.Get(name)
	msg, _, _ := strings.Cut(err.Error(), " (make one")
	return usagef("--optimizer: %s", msg)
}

// totalSteps is the number of training steps the run will take: --epochs
// times the steps of an epoch (--steps-per-epoch, else the training
// samples, less --validation-split's, in batches), at most math.MaxInt64
// however large the flags (a --batch-size near 2^63 once overflowed the
// rounding up, and the cosine schedule then decayed over one step).
func totalSteps(cfg config) int64 {
	per := int64(cfg.stepsPerEpoch)
	if per == 0 {
		n := 50000
		if cfg.synthetic {
			n = cfg.syntheticTrain
		}
		if cfg.validSplit > 0 {
			n = int(float64(n) * (1 - cfg.validSplit))
		}
		per = 1 // Fit's epoch takes at least one step
		if n > 0 {
			per = int64((n-1)/cfg.batchSize) + 1
		}
	}
	if per > math.MaxInt64/int64(cfg.epochs) {
		return math.MaxInt64
	}
	return int64(cfg.epochs) * per
}

// formatTime writes a duration the way IPython's %%timeit (in the Keras
// notebook this command mirrors) does: "2min 26s" from a minute up, else three significant
// digits with a unit, "712 ms".
func formatTime(d time.Duration) string {
	s := d.Seconds()
	if s >= 60 {
		var parts []string
		rest := int64(math.Round(s))
		for _, u := range []struct {
			name string
			secs int64
		}{{"d", 86400}, {"h", 3600}, {"min", 60}, {"s", 1}} {
			if n := rest / u.secs; n > 0 {
				parts = append(parts, fmt.Sprintf("%d%s", n, u.name))
				rest -= n * u.secs
			}
		}
		return strings.Join(parts, " ")
	}
	for _, u := range []struct {
		name  string
		scale float64
	}{{"s", 1}, {"ms", 1e3}, {"us", 1e6}} {
		// Round to three digits first, so 999.7 ms reads "1 s", not "1e+03 ms".
		if v, _ := strconv.ParseFloat(strconv.FormatFloat(s*u.scale, 'g', 3, 64), 64); v >= 1 {
			return strconv.FormatFloat(v, 'g', 3, 64) + " " + u.name
		}
	}
	return fmt.Sprintf("%d ns", d.Nanoseconds())
}
