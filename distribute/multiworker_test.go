package distribute_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/distribute"
	"github.com/gokeras/gokeras/internal/sys/mpitest"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/metrics"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/optim"
	"gorgonia.org/tensor"
)

// The tests start jobs of this test binary under mpirun, whose processes
// run TestMultiWorkerWorker with workerVar naming what to do, as package
// distribute/mpi's tests do; GOKERAS_REQUIRE_MPI=1 turns a missing Open
// MPI into a failure instead of a skip.
const (
	workerVar  = "GOKERAS_DISTRIBUTE_TEST_WORKER"
	dirVar     = "GOKERAS_DISTRIBUTE_TEST_DIR"
	jobTimeout = 120 * time.Second
)

// job runs this test binary's worker mode under mpirun with np processes.
func job(t *testing.T, mpirun string, np int, mode string) (string, error, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), jobTimeout)
	defer cancel()
	cmd := mpitest.Command(t, ctx, mpirun, np, []string{workerVar, dirVar}, nil,
		os.Args[0], "-test.run=^TestMultiWorkerWorker$", "-test.count=1", "-test.timeout=110s")
	cmd.Env = append(cmd.Env, workerVar+"="+mode, dirVar+"="+t.TempDir())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%v did not end within %v: a hang\n%s", cmd.Args, jobTimeout, out.String())
	}
	return out.String(), err, time.Since(start)
}

// Two processes with a global batch train what one process trains with
// that batch: the losses of every step within 1e-6 relative, the replicas'
// weights bit-identical after every epoch; evaluation likewise.
func TestMultiWorkerFitMatchesOneProcess(t *testing.T) {
	mpirun := mpitest.Need(t)
	jobOK(t, mpirun, 2, "fit")
}

// A functional model too: a residual block (Add), a shared layer and a
// Concatenate train data-parallel as in one process.
func TestMultiWorkerFitFunctionalMatchesOneProcess(t *testing.T) {
	mpirun := mpitest.Need(t)
	jobOK(t, mpirun, 2, "fitfunctional")
}

// With Dropout too: each replica drops the units of its shard that one
// process drops in the whole batch (the shard's first row goes with the
// step), so two processes still train what one does.
func TestMultiWorkerFitWithDropoutMatchesOneProcess(t *testing.T) {
	mpirun := mpitest.Need(t)
	jobOK(t, mpirun, 2, "fitdropout")
}

// With RandomFlip and RandomTranslation too: each replica transforms the
// images of its shard as one process transforms them in the whole batch
// (each image's map drawn from its index in the global batch), so two
// processes still train what one does.
func TestMultiWorkerFitWithAugmentationMatchesOneProcess(t *testing.T) {
	mpirun := mpitest.Need(t)
	jobOK(t, mpirun, 2, "fitaugment")
}

// Replicas given different batch sizes refuse to start, naming it.
func TestMultiWorkerRefusesDifferentRuns(t *testing.T) {
	mpirun := mpitest.Need(t)
	out, err, took := job(t, mpirun, 2, "mismatch")
	if err != nil {
		t.Fatalf("mpirun -np 2: %v\n%s", err, out)
	}
	for r := range 2 {
		if want := fmt.Sprintf("worker rank %d of 2: ok", r); !strings.Contains(out, want) {
			t.Errorf("no %q in the output:\n%s", want, out)
		}
	}
	t.Logf("mpirun -np 2: %v", took.Round(time.Millisecond))
}

// A replica that dies mid-epoch (exit status 3 at step 5) stops the job:
// mpirun exits non-zero, and the other replica never finishes its Fit.
func TestMultiWorkerReplicaDiesMidEpoch(t *testing.T) {
	mpirun := mpitest.Need(t)
	out, err, took := job(t, mpirun, 2, "dies")
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() == 0 {
		t.Fatalf("mpirun with rank 1 exiting at step 5: want a non-zero exit, got %v\n%s", err, out)
	}
	if strings.Contains(out, "fit ended") {
		t.Errorf("a replica finished its Fit without rank 1:\n%s", out)
	}
	t.Logf("mpirun exited %d after %v", exit.ExitCode(), took.Round(time.Millisecond))
}

// A replica that hangs mid-epoch (asleep at step 5) stops the job within
// the others' timeout (2 s here), with a message that says so.
func TestMultiWorkerReplicaHangs(t *testing.T) {
	mpirun := mpitest.Need(t)
	out, err, took := job(t, mpirun, 2, "hangs")
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() == 0 {
		t.Fatalf("mpirun with rank 1 asleep at step 5: want a non-zero exit, got %v\n%s", err, out)
	}
	if !regexp.MustCompile(`rank 0 of 2: AllReduceSum of \d+ floats waited more than 2s for the other replicas: one of them hangs`).MatchString(out) {
		t.Errorf("rank 0 did not say why it stopped:\n%s", out)
	}
	if took > 30*time.Second {
		t.Errorf("the job took %v to stop", took)
	}
	t.Logf("mpirun exited %d after %v", exit.ExitCode(), took.Round(time.Millisecond))
}

// TestMultiWorkerWorker is one process of the jobs above; run as a test
// it skips.
func TestMultiWorkerWorker(t *testing.T) {
	mode := os.Getenv(workerVar)
	if mode == "" {
		t.Skip("skipped: a process of the mpirun jobs of this package's tests, not a test by itself")
	}
	s, err := distribute.MultiWorker()
	if err != nil {
		t.Fatal(err)
	}
	if again, err := distribute.MultiWorker(); again != s || err != nil {
		t.Errorf("a second MultiWorker: %p, %v; want the first, %p", again, err, s)
	}
	if got := s.Timeout(); got != distribute.DefaultTimeout {
		t.Errorf("Timeout() = %v before any SetTimeout, want DefaultTimeout %v", got, distribute.DefaultTimeout)
	}
	switch mode {
	case "fit":
		workerFit(t, s)
	case "fitgpu": // gpu_test.go: each replica on its process's /GPU:0
		mlpDevice = "/GPU:0"
		workerFit(t, s)
	case "fitgpuserial": // gpu_test.go: as fitgpu, reducing after the backward pass
		mlpDevice, mlpOverlap = "/GPU:0", false
		workerFit(t, s)
	case "fitdropout":
		mlpDropout = 0.3
		workerFit(t, s)
	case "fitfunctional":
		mlpFunctional = true
		workerFit(t, s)
	case "fitaugment":
		mlpAugment = true
		workerFit(t, s)
	case "fitseveral": // multi_io_test.go
		workerFitSeveral(t, s)
	case "mismatch":
		workerMismatch(t, s)
	case "files":
		workerFiles(t, s, os.Getenv(dirVar))
	case "resume":
		workerResume(t, s, os.Getenv(dirVar))
	case "evalcancel":
		s.SetTimeout(20 * time.Second) // a replica left waiting fails the job soon
		workerEvalCancel(t, s)
	case "batchnorm":
		workerBatchNorm(t, s)
	case "dies", "hangs":
		if mode == "hangs" {
			s.SetTimeout(2 * time.Second)
			if got := s.Timeout(); got != 2*time.Second {
				t.Errorf("Timeout() = %v after SetTimeout(2s)", got)
			}
		}
		workerDies(t, s, mode)
	default:
		t.Fatalf("unknown %s=%s", workerVar, mode)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if !t.Failed() {
		fmt.Printf("worker rank %d of %d: ok\n", s.Rank(), s.Size())
	}
}

// mlpData is n samples of 20 features with one-hot labels of 10 classes,
// the same on every rank.
func mlpData(t *testing.T, n int) data.Dataset {
	rng := rand.New(rand.NewPCG(7, 11))
	x := make([]float32, n*20)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	y := make([]float32, n*10)
	for i := range n {
		y[i*10+rng.IntN(10)] = 1
	}
	ds, err := data.TensorData(tensor.New(tensor.WithShape(n, 20), tensor.WithBacking(x)), tensor.New(tensor.WithShape(n, 10), tensor.WithBacking(y)))
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// mlpDevice is where mlp compiles: /GPU:0 in the GPU workers (gpu_test.go).
// mlpDropout, when not 0, is the rate of a Dropout layer after the hidden
// one. mlpOverlap is its nn.OverlapReduce.
var (
	mlpDevice  = "/CPU:0"
	mlpDropout = 0.0
	mlpOverlap = true
	// mlpFunctional makes mlp a functional model of the same input and
	// output, with a residual block, a shared layer and a Concatenate.
	mlpFunctional = false
	// mlpAugment puts the features, as 4×5 images, through RandomFlip and
	// RandomTranslation first.
	mlpAugment = false
)

// mlp is Input(20) -> Dense(64, relu) [-> Dropout] -> Dense(10, softmax),
// compiled with opt on mlpDevice, with the strategy when s is not nil.
func mlp(t *testing.T, opt optim.Optimizer, s nn.Strategy) *nn.Sequential {
	ls := []layers.Layer{layers.Input(20)}
	if mlpAugment {
		ls = append(ls, layers.Reshape([]int{4, 5, 1}), layers.RandomFlip("horizontal_and_vertical"),
			layers.RandomTranslation(0.3, 0.3), layers.Flatten())
	}
	ls = append(ls, layers.Dense(64, layers.ReLU))
	if mlpDropout != 0 {
		ls = append(ls, layers.Dropout(mlpDropout))
	}
	m := nn.NewSequential(append(ls, layers.Dense(10, layers.Softmax))...)
	if mlpFunctional {
		in := nn.Input(20)
		h := nn.Apply(layers.Dense(64, layers.ReLU), in)
		r := nn.Apply(layers.Add(), in, nn.Apply(layers.Dense(20), h))
		shared := layers.Dense(20, layers.Tanh)
		x := nn.Apply(layers.Concatenate(-1), nn.Apply(shared, r), nn.Apply(shared, nn.Apply(shared, r)))
		var err error
		if m, err = nn.NewModel([]*nn.Tensor{in}, []*nn.Tensor{nn.Apply(layers.Dense(10, layers.Softmax), x)}); err != nil {
			t.Fatal(err)
		}
	}
	m.SetSeed(5)
	opts := []nn.CompileOption{nn.OnDevice(mlpDevice)}
	if s != nil {
		opts = append(opts, nn.WithStrategy(s), nn.OverlapReduce(mlpOverlap))
	}
	if err := m.Compile(opt, losses.CategoricalCrossentropy{}, []metrics.Metric{&metrics.Accuracy{}}, opts...); err != nil {
		t.Fatal(err)
	}
	return m
}

// recorder keeps each step's batch loss and accuracy (from the epoch's
// running means, which Fit keeps in float64) and, with a strategy, checks
// at the end of each epoch that every replica holds rank 0's weights, bit
// for bit.
type recorder struct {
	nn.CallbackBase
	t                *testing.T
	s                nn.Strategy
	loss, acc        []float64
	prevLoss, prevAc float64
	epochs           int
}

func (r *recorder) OnEpochBegin(int, nn.Logs) error { r.prevLoss, r.prevAc = 0, 0; return nil }

func (r *recorder) OnTrainBatchEnd(batch int, logs nn.Logs) error {
	k := float64(batch + 1)
	r.loss = append(r.loss, k*logs["loss"]-(k-1)*r.prevLoss)
	r.acc = append(r.acc, k*logs["accuracy"]-(k-1)*r.prevAc)
	r.prevLoss, r.prevAc = logs["loss"], logs["accuracy"]
	return nil
}

func (r *recorder) OnEpochEnd(epoch int, _ nn.Logs) error {
	r.epochs++
	if r.s == nil {
		return nil
	}
	ws, err := r.Model.GetWeights()
	if err != nil {
		return err
	}
	h := fnv.New64a()
	for _, w := range ws {
		for _, v := range w.Data().([]float32) {
			h.Write(binary.LittleEndian.AppendUint32(nil, math.Float32bits(v)))
		}
	}
	mine := h.Sum(nil)
	root := bytes.Clone(mine)
	if err := r.s.BcastBytes(root, 0); err != nil {
		return err
	}
	if !bytes.Equal(mine, root) {
		r.t.Errorf("rank %d, after epoch %d: weights hash %x, rank 0's %x", r.s.Rank(), epoch+1, mine, root)
	}
	return nil
}

func workerFit(t *testing.T, s *distribute.MultiWorkerStrategy) {
	ds := mlpData(t, 1600)
	evalData := mlpData(t, 100) // batches of 33: 33, 33, 33, 1
	rules := []struct {
		name string
		opt  func() (optim.Optimizer, error)
	}{
		{"sgd", func() (optim.Optimizer, error) { return optim.NewSGD(optim.SGDConfig{LearningRate: 0.1}) }},
		{"momentum", func() (optim.Optimizer, error) {
			return optim.NewSGD(optim.SGDConfig{LearningRate: 0.05, Momentum: 0.9})
		}},
		{"adam", func() (optim.Optimizer, error) {
			return optim.NewAdam(optim.AdamConfig{LearningRate: 0.01, Options: optim.Options{GlobalClipNorm: 1}})
		}},
	}
	for _, batch := range []int{64, 33} { // 33: shards of 16 and 17
		for _, r := range rules {
			name := fmt.Sprintf("%s, batch %d", r.name, batch)
			var recs [2]*recorder
			var evals [2]map[string]float64
			for i, strategy := range []nn.Strategy{nil, s} {
				opt, err := r.opt()
				if err != nil {
					t.Fatal(err)
				}
				m := mlp(t, opt, strategy)
				recs[i] = &recorder{t: t, s: strategy}
				// Prefetched: each replica's shards are gathered ahead,
				// once each, when the batch splits evenly.
				counted := &counting{Dataset: ds}
				if _, err := m.Fit(context.Background(), data.Prefetch(counted), nn.BatchSize(batch), nn.Epochs(2), nn.StepsPerEpoch(25),
					nn.Seed(3), nn.Verbose(0), nn.Callbacks(recs[i])); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if got := counted.gathers.Load(); batch%2 == 0 && got != 50 {
					t.Errorf("%s: the data gathered %d batches for 50 steps", name, got)
				}
				if evals[i], err = m.Evaluate(context.Background(), evalData, nn.BatchSize(33), nn.Verbose(0)); err != nil {
					t.Fatalf("%s: evaluate: %v", name, err)
				}
			}
			one, dist := recs[0], recs[1]
			if len(dist.loss) != 50 || len(one.loss) != 50 || dist.epochs != 2 {
				t.Fatalf("%s: %d and %d steps, %d epochs; want 50 and 2", name, len(one.loss), len(dist.loss), dist.epochs)
			}
			for i := range one.loss {
				if !close(one.loss[i], dist.loss[i], 1e-6) {
					t.Errorf("%s: step %d: loss %v on 2 replicas, %v in one process", name, i+1, dist.loss[i], one.loss[i])
				}
				if math.Abs(one.acc[i]-dist.acc[i]) > 1e-6 {
					t.Errorf("%s: step %d: accuracy %v on 2 replicas, %v in one process", name, i+1, dist.acc[i], one.acc[i])
				}
			}
			for k, v := range evals[0] {
				if !close(v, evals[1][k], 1e-6) {
					t.Errorf("%s: evaluate: %s %v on 2 replicas, %v in one process", name, k, evals[1][k], v)
				}
			}
			if s.Rank() == 0 {
				fmt.Printf("%s: step 50 loss %.7f (one process %.7f), evaluate %v\n", name, dist.loss[49], one.loss[49], evals[1])
			}
		}
	}
}

// workerDies: rank 1 exits (dies) or sleeps for a minute (hangs) at step
// 5 of a Fit of 50 steps.
func workerDies(t *testing.T, s *distribute.MultiWorkerStrategy, mode string) {
	opt, err := optim.NewSGD(optim.SGDConfig{})
	if err != nil {
		t.Fatal(err)
	}
	m := mlp(t, opt, s)
	_, err = m.Fit(context.Background(), mlpData(t, 3200), nn.BatchSize(64), nn.Seed(1), nn.Verbose(0), nn.Callbacks(&dier{rank: s.Rank(), hang: mode == "hangs"}))
	fmt.Printf("rank %d: fit ended: %v\n", s.Rank(), err)
}

type dier struct {
	nn.CallbackBase
	rank int
	hang bool
}

func (d *dier) OnTrainBatchEnd(batch int, _ nn.Logs) error {
	if d.rank == 1 && batch == 4 {
		if d.hang {
			time.Sleep(time.Minute)
		}
		os.Exit(3)
	}
	return nil
}

// counting counts the batches gathered from the data.
type counting struct {
	data.Dataset
	gathers atomic.Int32
}

func (c *counting) GatherInputs(idx []int, dst []float32) error {
	c.gathers.Add(1)
	return c.Dataset.GatherInputs(idx, dst)
}

func close(a, b, rel float64) bool {
	return math.Abs(a-b) <= rel*math.Max(math.Abs(a), math.Abs(b))
}

// Rank 1 asks for another batch size, in Fit and in Evaluate: both ranks
// refuse, rank 1 naming the difference, rank 0 naming rank 1.
func workerMismatch(t *testing.T, s *distribute.MultiWorkerStrategy) {
	opt, err := optim.NewSGD(optim.SGDConfig{})
	if err != nil {
		t.Fatal(err)
	}
	m := mlp(t, opt, s)
	batch := 64
	if s.Rank() == 1 {
		batch = 32
	}
	_, err = m.Fit(context.Background(), mlpData(t, 256), nn.BatchSize(batch), nn.Seed(1), nn.Verbose(0))
	want := "rank 1 of 2 does not run what rank 0 runs: batch size: 32 here, 64 on rank 0"
	if s.Rank() == 0 {
		want = "ranks [1] do not run what rank 0 runs"
	}
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("rank %d: want an error with %q, got %v", s.Rank(), want, err)
	}
	_, err = m.Evaluate(context.Background(), mlpData(t, 256), nn.BatchSize(batch), nn.Verbose(0))
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("rank %d: evaluate: want an error with %q, got %v", s.Rank(), want, err)
	}
}

// Saves come from rank 0 (the other ranks write nothing and return nil);
// loads are collective and refuse, on every rank, a file that a rank
// could not read or read other content from.
func TestMultiWorkerSavesOnRankZeroLoadsAgreed(t *testing.T) {
	mpirun := mpitest.Need(t)
	jobOK(t, mpirun, 2, "files")
}

// weightsHash is an FNV-64a of the model's weights.
func weightsHash(t *testing.T, m *nn.Sequential) uint64 {
	ws, err := m.GetWeights()
	if err != nil {
		t.Fatal(err)
	}
	h := fnv.New64a()
	for _, w := range ws {
		for _, v := range w.Data().([]float32) {
			h.Write(binary.LittleEndian.AppendUint32(nil, math.Float32bits(v)))
		}
	}
	return h.Sum64()
}

func workerFiles(t *testing.T, s *distribute.MultiWorkerStrategy, dir string) {
	if dir == "" {
		t.Fatalf("no %s", dirVar)
	}
	momentum := func() optim.Optimizer {
		opt, err := optim.NewSGD(optim.SGDConfig{LearningRate: 0.05, Momentum: 0.9})
		if err != nil {
			t.Fatal(err)
		}
		return opt
	}
	m := mlp(t, momentum(), s)
	if _, err := m.Fit(context.Background(), mlpData(t, 256), nn.BatchSize(64), nn.StepsPerEpoch(2), nn.Seed(1), nn.Verbose(0)); err != nil {
		t.Fatal(err)
	}
	at := func(name string, rank int) string { return fmt.Sprintf("%s/%s-rank%d.safetensors", dir, name, rank) }
	r := s.Rank()
	saves := map[string]func(string) error{
		"weights":    m.SaveWeights,
		"checkpoint": func(p string) error { return m.SaveCheckpoint(p, nn.Checkpoint{Epoch: 1}) },
		"model":      func(p string) error { return m.Save(p) },
	}
	for name, save := range saves {
		if err := save(at(name, r)); err != nil {
			t.Errorf("rank %d: saving the %s: %v", r, name, err)
		}
		_, err := os.Stat(at(name, r))
		if r == 0 && err != nil {
			t.Errorf("rank 0 did not write its %s: %v", name, err)
		}
		if r != 0 && err == nil {
			t.Errorf("rank %d wrote a %s file", r, name)
		}
	}
	if err := s.Barrier(); err != nil { // rank 0 has written
		t.Fatal(err)
	}
	want := weightsHash(t, m)
	fresh := mlp(t, momentum(), s)
	if _, err := fresh.LoadCheckpoint(at("checkpoint", 0)); err != nil {
		t.Errorf("rank %d: LoadCheckpoint: %v", r, err)
	} else if got := weightsHash(t, fresh); got != want {
		t.Errorf("rank %d: weights loaded from the checkpoint hash to %x, the saved ones to %x", r, got, want)
	}
	if err := fresh.LoadWeights(at("weights", 0)); err != nil {
		t.Errorf("rank %d: LoadWeights: %v", r, err)
	}
	loaded, err := nn.LoadModel(at("model", 0), nn.CompileOptions(nn.OnDevice("/CPU:0"), nn.WithStrategy(s)))
	if err != nil {
		t.Errorf("rank %d: LoadModel: %v", r, err)
	} else if got := weightsHash(t, loaded); got != want {
		t.Errorf("rank %d: LoadModel's weights hash to %x, the saved ones to %x", r, got, want)
	}

	// Each rank writes its own file, without the strategy; rank 1's
	// differs in one weight.
	plain := mlp(t, momentum(), nil)
	ws, err := plain.GetWeights()
	if err != nil {
		t.Fatal(err)
	}
	ws[0].Data().([]float32)[0] += float32(r)
	if err := plain.SetWeights(ws); err != nil {
		t.Fatal(err)
	}
	if err := plain.SaveWeights(at("own", r)); err != nil {
		t.Fatal(err)
	}
	if err := s.Barrier(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path         string
		rank0, rank1 string
	}{
		{at("own", r), "ranks [1] read other content from", "rank 1 of 2 read other content from"},
		{map[bool]string{true: at("weights", 0), false: dir + "/missing.safetensors"}[r == 0], "ranks [1] could not read", "rank 1 of 2: "},
	} {
		err := m.LoadWeights(tc.path)
		msg := map[bool]string{true: tc.rank0, false: tc.rank1}[r == 0]
		if err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("rank %d: LoadWeights(%s): want an error with %q, got %v", r, tc.path, msg, err)
		}
	}
	if got := weightsHash(t, m); got != want {
		t.Errorf("rank %d: the refused loads changed the weights", r)
	}
}

// Rank 1 alone is interrupted mid-epoch: both ranks stop after the same
// step, rank 0's checkpoint then resumes the job on both ranks, and the
// final weights equal the uninterrupted job's, bit for bit.
func TestMultiWorkerInterruptAndResume(t *testing.T) {
	mpirun := mpitest.Need(t)
	jobOK(t, mpirun, 2, "resume")
}

// canceller cancels its context after step at of epoch epoch.
type canceller struct {
	nn.CallbackBase
	epoch, at, now int
	cancel         func()
}

func (c *canceller) OnEpochBegin(epoch int, _ nn.Logs) error { c.now = epoch; return nil }

func (c *canceller) OnTrainBatchEnd(batch int, _ nn.Logs) error {
	if c.cancel != nil && c.now == c.epoch && batch == c.at {
		c.cancel()
	}
	return nil
}

func workerResume(t *testing.T, s *distribute.MultiWorkerStrategy, dir string) {
	adam := func() optim.Optimizer {
		opt, err := optim.NewAdam(optim.AdamConfig{LearningRate: 0.01})
		if err != nil {
			t.Fatal(err)
		}
		return opt
	}
	ds := mlpData(t, 1600)
	fit := func(m *nn.Sequential, ctx context.Context, more ...nn.Option) error {
		opts := append([]nn.Option{nn.BatchSize(64), nn.Epochs(3), nn.StepsPerEpoch(10), nn.Seed(3), nn.Verbose(0)}, more...)
		_, err := m.Fit(ctx, ds, opts...)
		return err
	}
	full := mlp(t, adam(), s)
	if err := fit(full, context.Background()); err != nil {
		t.Fatal(err)
	}
	want := weightsHash(t, full)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := &canceller{epoch: 1, at: 4}
	if s.Rank() == 1 {
		c.cancel = cancel
	}
	m := mlp(t, adam(), s)
	err := fit(m, ctx, nn.Callbacks(c))
	var ie *nn.InterruptedError
	if !errors.As(err, &ie) || !errors.Is(err, context.Canceled) {
		t.Fatalf("rank %d: want an InterruptedError matching context.Canceled, got %v", s.Rank(), err)
	}
	// Rank 1 cancels after step 5 (index 4); its wish travels with step
	// 6's results, so both stop after step 6.
	if ie.Epoch != 1 || ie.Step != 6 {
		t.Errorf("rank %d: interrupted in epoch %d after step %d, want epoch 1 after step 6", s.Rank(), ie.Epoch, ie.Step)
	}
	path := dir + "/ck.safetensors"
	if err := m.SaveCheckpoint(path, nn.Checkpoint{Epoch: ie.Epoch, Step: ie.Step}); err != nil {
		t.Fatal(err)
	}
	if err := s.Barrier(); err != nil {
		t.Fatal(err)
	}
	resumed := mlp(t, adam(), s)
	ck, err := resumed.LoadCheckpoint(path)
	if err != nil {
		t.Fatalf("rank %d: %v", s.Rank(), err)
	}
	if err := fit(resumed, context.Background(), nn.InitialEpoch(ck.Epoch), nn.InitialStep(ck.Step)); err != nil {
		t.Fatal(err)
	}
	if got := weightsHash(t, resumed); got != want {
		t.Errorf("rank %d: resumed job's weights hash to %x, the uninterrupted job's to %x", s.Rank(), got, want)
	} else if s.Rank() == 0 {
		fmt.Printf("interrupted in epoch %d after step %d; resumed weights hash %x = uninterrupted\n", ie.Epoch+1, ie.Step, got)
	}
}

// jobOK runs the worker mode on np ranks under mpirun and requires every
// rank to report ok.
func jobOK(t *testing.T, mpirun string, np int, mode string) {
	t.Helper()
	out, err, took := job(t, mpirun, np, mode)
	if err != nil {
		t.Fatalf("mpirun -np %d: %v\n%s", np, err, out)
	}
	for r := range np {
		if want := fmt.Sprintf("worker rank %d of %d: ok", r, np); !strings.Contains(out, want) {
			t.Errorf("no %q in the output:\n%s", want, out)
		}
	}
	t.Logf("mpirun -np %d: %v\n%s", np, took.Round(time.Millisecond), out)
}

// BatchNormalization under a strategy: each replica normalizes its shard
// with the shard's own statistics, and the moving mean and variance are
// the mean over the replicas of what each replica's updates give (Keras'
// variables synchronized on read, aggregated by MEAN), the same on every
// rank: the replicas' weights, moving statistics included, are
// bit-identical after every epoch.
func TestMultiWorkerBatchNormMovingMean(t *testing.T) {
	mpirun := mpitest.Need(t)
	jobOK(t, mpirun, 2, "batchnorm")
}

func workerBatchNorm(t *testing.T, s *distribute.MultiWorkerStrategy) {
	const n, batch, features, epochs = 256, 64, 4, 2
	// Rank 0's shard of each batch (its first half, unshuffled) is
	// centred on 0 with spread 1, rank 1's on 2 with spread 3: their
	// moving statistics alone differ widely.
	x := make([]float32, n*features)
	y := make([]float32, n*3)
	for i := range n {
		shift, spread := 0.0, 1.0
		if i%batch >= batch/2 {
			shift, spread = 2, 3
		}
		for j := range features {
			x[i*features+j] = float32(shift + spread*math.Sin(float64(i*features+j)*0.7))
		}
		y[i*3+i%3] = 1
	}
	ds, err := data.TensorData(tensor.New(tensor.WithShape(n, features), tensor.WithBacking(x)), tensor.New(tensor.WithShape(n, 3), tensor.WithBacking(y)))
	if err != nil {
		t.Fatal(err)
	}
	m := nn.NewSequential(layers.Input(features), layers.BatchNormalization(), layers.Dense(3, layers.Softmax))
	m.SetSeed(1)
	opt, err := optim.NewSGD(optim.SGDConfig{LearningRate: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Compile(opt, losses.CategoricalCrossentropy{}, []metrics.Metric{&metrics.Accuracy{}}, nn.OnDevice("/CPU:0"), nn.WithStrategy(s)); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{t: t, s: s} // weights bit-identical after every epoch
	if _, err := m.Fit(context.Background(), ds, nn.BatchSize(batch), nn.Epochs(epochs), nn.Shuffle(false), nn.Seed(1), nn.Verbose(0), nn.Callbacks(rec)); err != nil {
		t.Fatal(err)
	}
	if rec.epochs != epochs {
		t.Fatalf("%d epochs, want %d", rec.epochs, epochs)
	}
	// The moving statistics computed here in float64: the mean over the
	// two replicas of each one's own track (momentum 0.99, the shard's
	// mean and biased variance, as Keras 2 takes it for a rank-2 input),
	// and rank 0's own track alone.
	type track struct{ mean, variance [features]float64 }
	start := func() track {
		var tr track
		for j := range features {
			tr.variance[j] = 1
		}
		return tr
	}
	var replicas [2]track
	replicas[0], replicas[1] = start(), start()
	for range epochs {
		for lo := 0; lo < n; lo += batch {
			for r := range 2 {
				rows := x[(lo+r*batch/2)*features : (lo+(r+1)*batch/2)*features]
				k := float64(batch / 2)
				for j := range features {
					var sum, sq float64
					for i := j; i < len(rows); i += features {
						sum += float64(rows[i])
					}
					mu := sum / k
					for i := j; i < len(rows); i += features {
						sq += (float64(rows[i]) - mu) * (float64(rows[i]) - mu)
					}
					replicas[r].mean[j] = 0.99*replicas[r].mean[j] + 0.01*mu
					replicas[r].variance[j] = 0.99*replicas[r].variance[j] + 0.01*sq/k
				}
			}
		}
	}
	ws, err := m.GetWeights() // gamma, beta, moving_mean, moving_variance, kernel, bias
	if err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{"moving_mean", "moving_variance"} {
		got := ws[2+i].Data().([]float32)
		for j := range features {
			own := [2]float64{replicas[0].mean[j], replicas[1].mean[j]}
			if i == 1 {
				own = [2]float64{replicas[0].variance[j], replicas[1].variance[j]}
			}
			want := (own[0] + own[1]) / 2
			if math.Abs(float64(got[j])-want) > 1e-5*math.Max(1, math.Abs(want)) {
				t.Errorf("rank %d: %s[%d] = %v, want %v, the mean of the replicas' own %v and %v", s.Rank(), name, j, got[j], want, own[0], own[1])
			}
			if math.Abs(own[0]-want) < 1e-3 {
				t.Fatalf("%s[%d]: rank 0's own track %v is too close to the mean %v for the test to tell them apart", name, j, own[0], want)
			}
		}
	}
	if s.Rank() == 0 {
		fmt.Printf("batchnorm: moving_mean %v, moving_variance %v\n", ws[2].Data(), ws[3].Data())
	}
}

// Rank 1's context is cancelled during a standalone Evaluate: both ranks
// stop after the same batch, neither hangs; rank 1's error wraps its
// context's, rank 0's says another replica was interrupted. A later
// Evaluate runs to the end on both.
func TestMultiWorkerEvaluateCancelled(t *testing.T) {
	mpirun := mpitest.Need(t)
	jobOK(t, mpirun, 2, "evalcancel")
}

// cancelAt cancels its context when the data is gathered for the at-th
// time (1-based), nil cancel: never.
type cancelAt struct {
	data.Dataset
	at, calls int
	cancel    func()
}

func (c *cancelAt) GatherInputs(idx []int, dst []float32) error {
	c.calls++
	if c.calls == c.at && c.cancel != nil {
		c.cancel()
	}
	return c.Dataset.GatherInputs(idx, dst)
}

func workerEvalCancel(t *testing.T, s *distribute.MultiWorkerStrategy) {
	opt, err := optim.NewSGD(optim.SGDConfig{})
	if err != nil {
		t.Fatal(err)
	}
	m := mlp(t, opt, s)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ds := &cancelAt{Dataset: mlpData(t, 640), at: 3} // 10 batches of 64
	if s.Rank() == 1 {
		ds.cancel = cancel
	}
	_, err = m.Evaluate(ctx, ds, nn.BatchSize(64), nn.Verbose(0))
	// Rank 1 cancels while gathering batch 3; its wish travels with batch
	// 4's results, so both stop before batch 5, at sample 256.
	const at = "evaluate: stopped at sample 256 of 640: "
	switch {
	case err == nil || !strings.Contains(err.Error(), at) || !errors.Is(err, context.Canceled):
		t.Errorf("rank %d: want an error with %q matching context.Canceled, got %v", s.Rank(), at, err)
	case s.Rank() == 0 && !strings.Contains(err.Error(), "another replica was interrupted"):
		t.Errorf("rank 0: want an error saying another replica was interrupted, got %v", err)
	case s.Rank() == 1 && strings.Contains(err.Error(), "another replica"):
		t.Errorf("rank 1: want its own context's error, got %v", err)
	}
	if ds.calls != 4 {
		t.Errorf("rank %d: gathered %d batches, want 4", s.Rank(), ds.calls)
	}
	fmt.Printf("rank %d: evaluate: %v\n", s.Rank(), err)
	res, err := m.Evaluate(context.Background(), mlpData(t, 640), nn.BatchSize(64), nn.Verbose(0))
	if err != nil {
		t.Fatalf("rank %d: evaluate again: %v", s.Rank(), err)
	}
	b := []float32{float32(res["loss"])}
	if err := s.Bcast(b, 0); err != nil {
		t.Fatal(err)
	}
	if b[0] != float32(res["loss"]) {
		t.Errorf("rank %d: evaluate again: loss %v, rank 0's %v", s.Rank(), res["loss"], b[0])
	}
}
