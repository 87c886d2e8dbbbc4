package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/gokeras/gokeras/blas"
	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/datasets/cifar10"
	"github.com/gokeras/gokeras/device"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/metrics"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/optim"
)

// benchFlags are the flags of --benchmark, which times training steps of
// the --model on generated data instead of training it.
type benchFlags struct {
	on            bool
	inference     bool
	steps, warmup int
}

func (b *benchFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&b.on, "benchmark", false, "time training steps of the model on --synthetic data and print ms/step (median), steps/s, samples/s and GFLOP/s instead of training; with --distributed, of the whole job at the global --batch-size (a step takes the slowest rank's time), printed by rank 0")
	fs.IntVar(&b.steps, "benchmark-steps", 50, "steps --benchmark times, after the warm-up")
	fs.IntVar(&b.warmup, "benchmark-warmup", 5, "steps --benchmark runs before timing")
	fs.BoolVar(&b.inference, "benchmark-inference", false, "with --benchmark, time inference instead of training: Predict on one batch at a time, each call's time from the batch's images to the probabilities in host memory")
}

// printMath says, on the CPU, what computes the matrix products.
func printMath(w io.Writer, spec device.Spec) {
	if spec.Kind == device.CPU {
		fmt.Fprintln(w, "BLAS:", blas.Default())
	}
}

// stepTimer records how long each training step takes: the time from one
// step's end (or the epoch's start) to the next step's end, which counts
// everything a step costs in a run of them, gathering its batch included.
// Its hooks may lag (nn.AsyncBatchHooks), so on a GPU the steps are timed
// as Fit runs them, each started while the one before is finished.
type stepTimer struct {
	nn.CallbackBase
	last  time.Time
	times []time.Duration
}

func (s *stepTimer) AsyncBatchHooks() bool { return true }

func (s *stepTimer) OnEpochBegin(int, nn.Logs) error { s.last = time.Now(); return nil }

func (s *stepTimer) OnTrainBatchEnd(int, nn.Logs) error {
	now := time.Now()
	s.times = append(s.times, now.Sub(s.last))
	s.last = now
	return nil
}

// trainingFLOPs is the arithmetic of one training step of a built model
// at a batch size, counting the matrix products: for each Dense or
// convolution layer the forward product, the weight gradient and, but for
// the first such layer (whose input needs none), the input gradient,
// 2·positions·inputs·outputs each, a convolution's positions being those
// of its output.
func trainingFLOPs(model *nn.Sequential, batch int) float64 {
	return productFLOPs(model, batch, 2, 3)
}

// inferenceFLOPs is the arithmetic of the forward pass of a built model
// at a batch size: each Dense and convolution layer's forward product.
func inferenceFLOPs(model *nn.Sequential, batch int) float64 {
	return productFLOPs(model, batch, 1, 1)
}

// productFLOPs counts first products of 2·positions·inputs·outputs for the
// first Dense or convolution layer of model, and then products for each
// of the others.
func productFLOPs(model *nn.Sequential, batch int, first, then float64) float64 {
	var total float64
	products := first
	for _, l := range model.Layers() {
		positions := 1
		switch l := l.(type) {
		case *layers.DenseLayer:
		case *layers.ConvLayer:
			shape := l.OutputShape()
			for _, d := range shape[:len(shape)-1] {
				positions *= d
			}
		default:
			continue
		}
		kernel := l.Params()[0].Size()
		total += products * 2 * float64(batch) * float64(positions) * float64(kernel)
		products = then
	}
	return total
}

// benchResult summarises the timed steps.
type benchResult struct {
	median, p10, p90 time.Duration
	stepsPerSec      float64
	gflops           float64
}

func summarize(times []time.Duration, flopsPerStep float64) benchResult {
	t := slices.Clone(times)
	slices.Sort(t)
	at := func(q float64) time.Duration { return t[min(len(t)-1, int(q*float64(len(t))))] }
	r := benchResult{median: at(0.5), p10: at(0.1), p90: at(0.9)}
	sec := r.median.Seconds()
	r.stepsPerSec = 1 / sec
	r.gflops = flopsPerStep / sec / 1e9
	return r
}

// runBenchmark times --benchmark-steps training steps of the --model
// at --batch-size on spec, after --benchmark-warmup steps, on generated
// CIFAR-shaped data, and prints the median and what follows from it.
//
// With a strategy (--distributed) --batch-size is the global batch: every
// rank generates the same data and Fit gives each its shard of every
// batch, as in training. Each rank times its own steps (the step ends
// after its all-reduces); the job's time for a step is the slowest rank's
// (jobStepTimes), and the figures are the whole job's: the median of those
// times, the global batch's samples and FLOPs over it. The caller has
// made stdout discard the other ranks' output: rank 0 prints.
func runBenchmark(ctx context.Context, cfg config, spec device.Spec, opt optim.Optimizer, s nn.Strategy, stdout io.Writer) error {
	b := cfg.bench
	if b.steps <= 0 || b.warmup < 0 {
		return fmt.Errorf("--benchmark-steps must be positive and --benchmark-warmup not negative, got %d and %d", b.steps, b.warmup)
	}
	// The generated data holds every step's batch: keep it to what memory
	// takes (3 KB a sample), and the products below from overflowing.
	const maxSamples = 1 << 20
	total := b.steps + b.warmup
	if total > maxSamples || cfg.batchSize > maxSamples/total {
		return fmt.Errorf("--benchmark: %d steps of --batch-size %d need more than %d generated samples: lower --batch-size or --benchmark-steps", total, cfg.batchSize, maxSamples)
	}
	ds := cifar10.Synthetic(total*cfg.batchSize, 0, cfg.seed)
	model, err := newModel(cfg.model, cfg.seed, cfg.augment)
	if err != nil {
		return err
	}
	if err := model.Build(32, 32, 3); err != nil {
		return err
	}
	compileOpts := []nn.CompileOption{nn.OnDevice(spec), nn.OverlapReduce(!cfg.reduceAfterBackward)}
	where := spec.Short()
	if s != nil {
		compileOpts = append(compileOpts, nn.WithStrategy(s))
		where += fmt.Sprintf(", %d processes", s.Size())
	}
	if err := model.Compile(opt, losses.CategoricalCrossentropy{}, []metrics.Metric{&metrics.Accuracy{}}, compileOpts...); err != nil {
		return err
	}
	defer model.Close()
	printMath(stdout, spec)
	if b.inference && s != nil {
		return fmt.Errorf("--benchmark-inference times Predict in one process: drop --distributed")
	}
	if b.inference {
		return benchmarkInference(ctx, cfg, model, ds.Train.OneHot(), where, stdout)
	}
	timer := &stepTimer{}
	fmt.Fprintf(stdout, "Benchmark: %s model, %d steps at batch size %d (after %d warm-up steps), %s lr %g, %s\n",
		cfg.model, b.steps, cfg.batchSize, b.warmup, opt.Name(), opt.LearningRate(), where)
	if _, err := model.Fit(ctx, ds.Train.OneHot(), nn.Epochs(1), nn.BatchSize(cfg.batchSize), nn.StepsPerEpoch(total),
		nn.Seed(cfg.seed), nn.Verbose(0), nn.Callbacks(timer), nn.PipelineSteps(!cfg.serialSteps)); err != nil {
		return err
	}
	times, err := jobStepTimes(s, timer.times[b.warmup:])
	if err != nil {
		return fmt.Errorf("--benchmark: gathering the ranks' step times: %w", err)
	}
	r := summarize(times, trainingFLOPs(model, cfg.batchSize))
	epoch := time.Duration(float64(r.median) * float64((50000+cfg.batchSize-1)/cfg.batchSize))
	fmt.Fprintf(stdout, "median %.2f ms/step (p10 %.2f, p90 %.2f) - %.1f steps/s - %.0f samples/s - %.1f GFLOP/s - %.1f s per 50000-sample epoch\n",
		ms(r.median), ms(r.p10), ms(r.p90), r.stepsPerSec, float64(cfg.batchSize)/r.median.Seconds(), r.gflops, epoch.Seconds())
	return nil
}

// benchmarkInference times --benchmark-steps calls of Predict, each on one
// batch of --batch-size images of images, after --benchmark-warmup calls,
// and prints the median and what follows from it. A call's time runs from
// the batch's uint8 images in host memory to its probabilities there, as
// a user's Predict on a batch takes; on a GPU that includes the copies.
func benchmarkInference(ctx context.Context, cfg config, model *nn.Model, images data.Dataset, where string, stdout io.Writer) error {
	b := cfg.bench
	fmt.Fprintf(stdout, "Benchmark: %s model, inference: Predict on %d batches of size %d (after %d warm-up batches), %s\n",
		cfg.model, b.steps, cfg.batchSize, b.warmup, where)
	var times []time.Duration
	for i := range b.warmup + b.steps {
		rest, err := data.Skip(images, i*cfg.batchSize)
		if err != nil {
			return fmt.Errorf("--benchmark-inference: batch %d: %w", i, err)
		}
		batch, err := data.Take(rest, cfg.batchSize)
		if err != nil {
			return fmt.Errorf("--benchmark-inference: batch %d: %w", i, err)
		}
		start := time.Now()
		if _, err := model.Predict(ctx, batch, nn.BatchSize(cfg.batchSize), nn.Verbose(0)); err != nil {
			return fmt.Errorf("--benchmark-inference: %w", err)
		}
		if i >= b.warmup {
			times = append(times, time.Since(start))
		}
	}
	r := summarize(times, inferenceFLOPs(model, cfg.batchSize))
	fmt.Fprintf(stdout, "median %.2f ms/batch (p10 %.2f, p90 %.2f) - %.1f batches/s - %.0f samples/s - %.1f GFLOP/s\n",
		ms(r.median), ms(r.p10), ms(r.p90), r.stepsPerSec, float64(cfg.batchSize)/r.median.Seconds(), r.gflops)
	return nil
}

// jobStepTimes is, for each timed step, the slowest rank's time: the
// step's time for the whole job. Every rank sends its times to every other
// (an all-reduce of one slot per rank and step); without a strategy the
// times are this process's.
func jobStepTimes(s nn.Strategy, times []time.Duration) ([]time.Duration, error) {
	if s == nil {
		return times, nil
	}
	n := len(times)
	buf := make([]float32, s.Size()*n)
	for i, d := range times {
		buf[s.Rank()*n+i] = float32(d.Seconds())
	}
	if err := s.AllReduceSum(buf); err != nil {
		return nil, err
	}
	job := make([]time.Duration, n)
	for i := range job {
		var slowest float32
		for r := range s.Size() {
			slowest = max(slowest, buf[r*n+i])
		}
		job[i] = time.Duration(float64(slowest) * float64(time.Second))
	}
	return job, nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
