package nn_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/metrics"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/optim"
	"github.com/gokeras/gokeras/safetensors"
)

// A batch larger than the data is the whole data, as in Keras: Fit (with
// its validation), Evaluate and Predict give exactly what a batch of all
// the samples gives, and allocate nothing by the number asked for.
func TestBatchLargerThanTheDataIsTheData(t *testing.T) {
	const n = 20
	train, val := blobs(t, n, 4, 1, true), blobs(t, 7, 4, 2, true)
	run := func(t *testing.T, batch int) (losses []float64, eval map[string]float64, pred []float32, progress string) {
		t.Helper()
		m := smallModel(t, 3, nil, 5)
		var out bytes.Buffer
		hist, err := m.Fit(context.Background(), train, nn.Epochs(2), nn.BatchSize(batch), nn.ValidationData(val),
			nn.Shuffle(false), nn.Verbose(2), nn.Output(&out))
		if err != nil {
			t.Fatalf("Fit with batch size %d: %v", batch, err)
		}
		losses = append(hist.Get("loss"), hist.Get("val_loss")...)
		if eval, err = m.Evaluate(context.Background(), val, nn.BatchSize(batch), nn.Verbose(0)); err != nil {
			t.Fatalf("Evaluate with batch size %d: %v", batch, err)
		}
		p, err := m.PredictTensor(context.Background(), val, nn.BatchSize(batch))
		if err != nil {
			t.Fatalf("Predict with batch size %d: %v", batch, err)
		}
		return losses, eval, p.Data().([]float32), out.String()
	}
	wantLosses, wantEval, wantPred, _ := run(t, n)
	for _, batch := range []int{n + 1, 1_000_000_000, 1 << 62, math.MaxInt} {
		t.Run("", func(t *testing.T) {
			gotLosses, gotEval, gotPred, progress := run(t, batch)
			if !slices.Equal(gotLosses, wantLosses) {
				t.Errorf("batch size %d: losses %v, want those of batch size %d: %v", batch, gotLosses, n, wantLosses)
			}
			if gotEval["loss"] != wantEval["loss"] || !slices.Equal(gotPred, wantPred) {
				t.Errorf("batch size %d: evaluation %v and predictions differ from batch size %d's %v", batch, gotEval, n, wantEval)
			}
			if !strings.Contains(progress, "1/1 - ") {
				t.Errorf("batch size %d: progress %q, want one step per epoch", batch, progress)
			}
		})
	}
}

func TestStepsPerEpochBeyondTheDataAtAHugeBatch(t *testing.T) {
	m := smallModel(t, 3, nil, 5)
	_, err := m.Fit(context.Background(), blobs(t, 20, 4, 1, true), nn.BatchSize(math.MaxInt), nn.StepsPerEpoch(math.MaxInt), nn.Verbose(0))
	// 2^63-2 steps of the 20 samples after the first need
	// (2^63-2)·20 + 1 samples.
	for _, want := range []string{"9223372036854775807 steps per epoch at batch size 20", "at least 184467440737095516121 samples", "there are 20", "at most 1 steps"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want one mentioning %q", err, want)
		}
	}
}

// nonFiniteFiles writes copies of a good checkpoint with one value
// replaced, and the path of the good one.
func nonFiniteFiles(t *testing.T) (good string, bad map[string]string) {
	t.Helper()
	dir := t.TempDir()
	adam, err := optim.NewAdam(optim.AdamConfig{LearningRate: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	m := smallModel(t, 1, adam, 3)
	if _, err := m.Fit(context.Background(), blobs(t, 64, 4, 1, true), nn.Seed(1), nn.Verbose(0)); err != nil {
		t.Fatal(err)
	}
	good = filepath.Join(dir, "good.safetensors")
	if err := m.SaveCheckpoint(good, nn.Checkpoint{Epoch: 1}); err != nil {
		t.Fatal(err)
	}
	bad = map[string]string{}
	for _, c := range []struct {
		tensor string
		index  int
		value  float64
	}{
		{"dense/bias", 1, math.NaN()},
		{"dense_1/kernel", 17, math.Inf(1)},
		{"optimizer/dense/kernel/m", 5, math.NaN()},
		{"optimizer/dense_1/bias/v", 0, math.Inf(-1)},
	} {
		f, err := safetensors.ReadFile(good)
		if err != nil {
			t.Fatal(err)
		}
		tn, _ := f.Tensor(c.tensor)
		tn.Data[c.index] = float32(c.value)
		path := filepath.Join(dir, strings.ReplaceAll(c.tensor, "/", "_")+".safetensors")
		if err := safetensors.WriteFile(path, f.Tensors, f.Metadata); err != nil {
			t.Fatal(err)
		}
		bad[c.tensor] = path
	}
	return good, bad
}

func TestLoadRefusesNonFiniteValues(t *testing.T) {
	good, bad := nonFiniteFiles(t)
	tests := []struct {
		name, path  string
		checkpoint  bool
		weightsOnly bool // LoadWeights ignores optimizer slots
		want        string
	}{
		{"NaN bias", bad["dense/bias"], true, false, "weight dense/bias holds NaN at index 1"},
		{"infinite kernel", bad["dense_1/kernel"], true, false, "weight dense_1/kernel holds +Inf at index 17"},
		{"NaN slot", bad["optimizer/dense/kernel/m"], true, true, "optimizer slot m of dense/kernel holds NaN at index 5"},
		{"infinite slot", bad["optimizer/dense_1/bias/v"], true, true, "optimizer slot v of dense_1/bias holds -Inf at index 0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			adam, _ := optim.NewAdam(optim.AdamConfig{})
			m := smallModel(t, 9, adam, 3)
			before := flatWeights(t, m)
			_, err := m.LoadCheckpoint(tc.path)
			for _, want := range []string{tc.want, tc.path, "diverged", "learning rate"} {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("LoadCheckpoint: %v, want an error mentioning %q", err, want)
				}
			}
			if !slices.Equal(before, flatWeights(t, m)) || adam.Iterations() != 0 {
				t.Error("a refused checkpoint changed the model or its optimizer")
			}
			err = m.LoadWeights(tc.path)
			if tc.weightsOnly {
				if err != nil {
					t.Errorf("LoadWeights, which ignores the optimizer's slots: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("LoadWeights: %v, want an error mentioning %q", err, tc.want)
			}
			if !slices.Equal(before, flatWeights(t, m)) {
				t.Error("refused weights changed the model")
			}
		})
	}
	adam, _ := optim.NewAdam(optim.AdamConfig{})
	if _, err := smallModel(t, 9, adam, 3).LoadCheckpoint(good); err != nil {
		t.Errorf("the good checkpoint: %v", err)
	}
}

func TestSaveRefusesNonFiniteValues(t *testing.T) {
	poison := []struct {
		name string
		set  func(m *nn.Sequential, opt optim.Optimizer) error
		want string
	}{
		{"NaN bias", func(m *nn.Sequential, _ optim.Optimizer) error {
			m.Layers()[0].Params()[1].Value.Data().([]float32)[2] = float32(math.NaN())
			return nil
		}, "weight dense/bias holds NaN at index 2"},
		{"infinite kernel", func(m *nn.Sequential, _ optim.Optimizer) error {
			m.Layers()[1].Params()[0].Value.Data().([]float32)[4] = float32(math.Inf(-1))
			return nil
		}, "weight dense_1/kernel holds -Inf at index 4"},
		{"NaN slot", func(_ *nn.Sequential, opt optim.Optimizer) error {
			v, err := opt.Slot("dense_1/kernel", "v", 30)
			v[17] = float32(math.NaN())
			return err
		}, "optimizer slot v of dense_1/kernel holds NaN at index 17"},
	}
	for _, tc := range poison {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			adam, _ := optim.NewAdam(optim.AdamConfig{LearningRate: 0.5})
			m := smallModel(t, 1, adam, 3)
			if _, err := m.Fit(context.Background(), blobs(t, 16, 4, 1, true), nn.Verbose(0)); err != nil {
				t.Fatal(err)
			}
			weights, ck := filepath.Join(dir, "w.safetensors"), filepath.Join(dir, "ck.safetensors")
			if err := m.SaveCheckpoint(ck, nn.Checkpoint{Epoch: 1}); err != nil {
				t.Fatal(err)
			}
			old, _ := os.ReadFile(ck)
			if err := tc.set(m, adam); err != nil {
				t.Fatal(err)
			}
			err := m.SaveCheckpoint(ck, nn.Checkpoint{Epoch: 2})
			for _, want := range []string{tc.want, "diverged", "lower the learning rate (now 0.5)"} {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("SaveCheckpoint: %v, want an error mentioning %q", err, want)
				}
			}
			if now, _ := os.ReadFile(ck); !bytes.Equal(now, old) {
				t.Error("a refused SaveCheckpoint changed the previous checkpoint")
			}
			err = m.SaveWeights(weights)
			if strings.Contains(tc.want, "slot") {
				if err != nil {
					t.Errorf("SaveWeights, which writes no slots: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("SaveWeights: %v, want an error mentioning %q", err, tc.want)
			}
			if _, err := os.Stat(weights); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a refused SaveWeights wrote %s (%v)", weights, err)
			}
		})
	}
}

func TestSetWeightsRefusesNonFiniteValues(t *testing.T) {
	m := smallModel(t, 1, nil, 3)
	ws, err := m.GetWeights()
	if err != nil {
		t.Fatal(err)
	}
	before := flatWeights(t, m)
	ws[3].Data().([]float32)[6] = float32(math.NaN())
	if err := m.SetWeights(ws); err == nil || !strings.Contains(err.Error(), "dense_1/bias holds NaN at index 6") {
		t.Errorf("SetWeights with a NaN: %v", err)
	}
	if !slices.Equal(before, flatWeights(t, m)) {
		t.Error("refused weights changed the model")
	}
}

func TestLoadRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	for _, path := range []string{dir, "/dev/zero"} {
		if _, err := os.Stat(path); err != nil {
			continue
		}
		want := "is a device"
		if path == dir {
			want = "is a directory"
		}
		m := smallModel(t, 1, nil, 3)
		_, ckErr := nn.ReadCheckpoint(path)
		_, loadErr := m.LoadCheckpoint(path)
		for name, err := range map[string]error{"ReadCheckpoint": ckErr, "LoadCheckpoint": loadErr, "LoadWeights": m.LoadWeights(path)} {
			if err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, safetensors.ErrNotRegular) {
				t.Errorf("%s(%s): %v, want an error saying it %s", name, path, err, want)
			}
		}
	}
}

// gate is a Dataset that holds its first gather until released, so that a
// test can act while Fit, Evaluate or Predict is running.
type gate struct {
	data.Dataset
	once             sync.Once
	entered, release chan struct{}
}

func newGate(d data.Dataset) *gate {
	return &gate{Dataset: d, entered: make(chan struct{}), release: make(chan struct{})}
}

func (g *gate) GatherInputs(idx []int, dst []float32) error {
	g.once.Do(func() { close(g.entered); <-g.release })
	return g.Dataset.GatherInputs(idx, dst)
}

// While Fit, Evaluate or Predict runs, another of them on the same model
// is refused (it would share the model's machines); afterwards all work.
func TestOneCallAtATimePerModel(t *testing.T) {
	ds := blobs(t, 32, 4, 1, true)
	ctx := context.Background()
	calls := map[string]func(m *nn.Sequential, d data.Dataset) error{
		"fit":      func(m *nn.Sequential, d data.Dataset) error { _, err := m.Fit(ctx, d, nn.Verbose(0)); return err },
		"evaluate": func(m *nn.Sequential, d data.Dataset) error { _, err := m.Evaluate(ctx, d, nn.Verbose(0)); return err },
		"predict":  func(m *nn.Sequential, d data.Dataset) error { _, err := m.PredictTensor(ctx, d); return err },
	}
	running := map[string]string{"fit": "fitting", "evaluate": "evaluating", "predict": "predicting"}
	for first, call := range calls {
		t.Run(first, func(t *testing.T) {
			m := smallModel(t, 1, nil, 3)
			g := newGate(ds)
			done := make(chan error)
			go func() { done <- call(m, g) }()
			<-g.entered
			for second, other := range calls {
				err := other(m, ds)
				want := second + `: model "sequential" is already ` + running[first]
				if !errors.Is(err, nn.ErrBusy) || !strings.Contains(err.Error(), want) {
					t.Errorf("%s during %s: %v, want an error saying %q", second, first, err, want)
				}
			}
			close(g.release)
			if err := <-done; err != nil {
				t.Fatalf("the first call: %v", err)
			}
			for second, other := range calls {
				if err := other(m, ds); err != nil {
					t.Errorf("%s after %s returned: %v", second, first, err)
				}
			}
		})
	}
}

// evaluator calls Evaluate from inside Fit, as a callback might.
type evaluator struct {
	nn.CallbackBase
	data data.Dataset
	err  error
}

func (e *evaluator) OnEpochEnd(int, nn.Logs) error {
	_, e.err = e.Model.Evaluate(context.Background(), e.data, nn.Verbose(0))
	return nil
}

func TestEvaluateFromAFitCallbackIsRefused(t *testing.T) {
	m := smallModel(t, 1, nil, 3)
	ds := blobs(t, 16, 4, 1, true)
	cb := &evaluator{data: ds}
	if _, err := m.Fit(context.Background(), ds, nn.Verbose(0), nn.Callbacks(cb)); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(cb.err, nn.ErrBusy) || !strings.Contains(cb.err.Error(), "already fitting") {
		t.Errorf("Evaluate inside Fit: %v, want ErrBusy", cb.err)
	}
}

// Run with -race: calls racing on one model are refused, not interleaved.
func TestConcurrentFitsOnOneModel(t *testing.T) {
	m := smallModel(t, 1, nil, 3)
	ds := blobs(t, 256, 4, 1, true)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { _, errs[i] = m.Fit(context.Background(), ds, nn.Epochs(2), nn.BatchSize(8), nn.Verbose(0)) })
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case !errors.Is(err, nn.ErrBusy):
			t.Errorf("a concurrent Fit failed with %v, want ErrBusy", err)
		}
	}
	if ok == 0 {
		t.Error("no Fit succeeded")
	}
}

func TestNilModelReturnsErrors(t *testing.T) {
	var m *nn.Sequential
	ctx := context.Background()
	ds := blobs(t, 4, 4, 1, true)
	calls := map[string]func() error{
		"Add":            func() error { return m.Add(layers.Dense(1)) },
		"Build":          func() error { return m.Build(4) },
		"Compile":        func() error { return m.Compile(newSGD(t, 0.1), losses.MeanSquaredError{}, nil) },
		"CompileContext": func() error { return m.CompileContext(ctx, newSGD(t, 0.1), losses.MeanSquaredError{}, nil) },
		"Device":         func() error { _, err := m.Device(); return err },
		"Close":          func() error { return m.Close() },
		"Summary":        func() error { return m.Summary(&bytes.Buffer{}) },
		"Fit":            func() error { _, err := m.Fit(ctx, ds); return err },
		"Evaluate":       func() error { _, err := m.Evaluate(ctx, ds); return err },
		"Predict":        func() error { _, err := m.PredictTensor(ctx, ds); return err },
		"GetWeights":     func() error { _, err := m.GetWeights(); return err },
		"SetWeights":     func() error { return m.SetWeights(nil) },
		"SaveWeights":    func() error { return m.SaveWeights(filepath.Join(t.TempDir(), "w")) },
		"LoadWeights":    func() error { return m.LoadWeights(filepath.Join(t.TempDir(), "w")) },
		"SaveCheckpoint": func() error { return m.SaveCheckpoint(filepath.Join(t.TempDir(), "w"), nn.Checkpoint{}) },
		"LoadCheckpoint": func() error { _, err := m.LoadCheckpoint(filepath.Join(t.TempDir(), "w")); return err },
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, nn.ErrNilModel) {
			t.Errorf("%s on a nil model: %v, want ErrNilModel", name, err)
		}
	}
	m.SetName("x")
	m.SetSeed(1)
	m.StopTraining()
	if m.Name() != "" || m.Built() || m.Layers() != nil || m.InputShape() != nil || m.OutputShape() != nil ||
		m.CountParams() != 0 || m.Optimizer() != nil {
		t.Error("a nil model's accessors returned something")
	}
}

func TestNilArgumentsReturnErrorsOrDefaults(t *testing.T) {
	m := smallModel(t, 1, nil, 3)
	if err := m.Summary(nil); err == nil || !strings.Contains(err.Error(), "no writer") {
		t.Errorf("Summary(nil): %v", err)
	}
	// A nil context is taken as context.Background().
	ds := blobs(t, 8, 4, 1, true)
	var noContext context.Context
	if _, err := m.Fit(noContext, ds, nn.Verbose(0)); err != nil {
		t.Errorf("Fit(nil ctx): %v", err)
	}
	if _, err := m.Evaluate(noContext, ds, nn.Verbose(0)); err != nil {
		t.Errorf("Evaluate(nil ctx): %v", err)
	}
	if _, err := m.PredictTensor(noContext, ds); err != nil {
		t.Errorf("Predict(nil ctx): %v", err)
	}
	if err := m.Compile(newSGD(t, 0.1), losses.CategoricalCrossentropy{}, []metrics.Metric{&metrics.Accuracy{}}, nil); err != nil {
		t.Errorf("Compile with a nil option: %v", err)
	}
	// The zero Sequential is an empty model, like NewSequential().
	var zero nn.Sequential
	if err := zero.Add(layers.Dense(2)); err != nil {
		t.Errorf("Add to a zero Sequential: %v", err)
	}
	if err := zero.Build(3); err != nil || zero.CountParams() != 8 {
		t.Errorf("Build of a zero Sequential: %v, %d params", err, zero.CountParams())
	}
}

// uncounted is data whose Len is negative, which a Dataset should never say.
type uncounted struct{ data.Dataset }

func (uncounted) Len() int { return -1 }

func TestNegativeLenIsAnError(t *testing.T) {
	m := smallModel(t, 1, nil, 3)
	d := uncounted{blobs(t, 4, 4, 1, true)}
	_, fitErr := m.Fit(context.Background(), d, nn.Verbose(0))
	_, evalErr := m.Evaluate(context.Background(), d, nn.Verbose(0))
	_, predErr := m.PredictTensor(context.Background(), d)
	for name, err := range map[string]error{"Fit": fitErr, "Evaluate": evalErr, "Predict": predErr} {
		if err == nil || !strings.Contains(err.Error(), "Len() is -1") {
			t.Errorf("%s of data with Len -1: %v", name, err)
		}
	}
}

// A checkpoint whose optimizer state is damaged in ways that are finite
// numbers is refused by name, changing nothing: every slot gone after
// steps were taken (restored as zeros, training would go on from another
// state), one weight's slot gone, a negative Adam second moment (whose
// square root is NaN), and an iteration count of 2^63-1 (one step more
// wraps it negative, and the next checkpoint is refused).
func TestLoadRefusesDamagedOptimizerState(t *testing.T) {
	good, _ := nonFiniteFiles(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		name   string
		damage func(f *safetensors.File)
		want   string
	}{
		{"all slots missing", func(f *safetensors.File) {
			f.Tensors = slices.DeleteFunc(f.Tensors, func(t safetensors.Tensor) bool { return strings.HasPrefix(t.Name, "optimizer/") })
		}, "optimizer slot m of dense/kernel is missing, though Adam took"},
		{"one weight's v missing", func(f *safetensors.File) {
			f.Tensors = slices.DeleteFunc(f.Tensors, func(t safetensors.Tensor) bool { return t.Name == "optimizer/dense_1/bias/v" })
		}, "optimizer slot v of dense_1/bias is missing"},
		{"negative second moment", func(f *safetensors.File) {
			tn, _ := f.Tensor("optimizer/dense/kernel/v")
			tn.Data[3] = -0.25
		}, "optimizer slot v of dense/kernel holds -0.25 at index 3, but it accumulates squares"},
		{"iterations 2^63-1", func(f *safetensors.File) {
			f.Metadata["gokeras.optimizer.iterations"] = "9223372036854775807"
		}, "9223372036854775807 iterations is more than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := safetensors.ReadFile(good)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := f.Metadata["gokeras.optimizer.iterations"]; !ok {
				t.Fatalf("no iterations in the metadata %v", f.Metadata)
			}
			tc.damage(f)
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".safetensors")
			if err := safetensors.WriteFile(path, f.Tensors, f.Metadata); err != nil {
				t.Fatal(err)
			}
			adam, _ := optim.NewAdam(optim.AdamConfig{})
			m := smallModel(t, 9, adam, 3)
			before := flatWeights(t, m)
			_, err = m.LoadCheckpoint(path)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("LoadCheckpoint: %v, want an error naming the file and mentioning %q", err, tc.want)
			}
			if !slices.Equal(before, flatWeights(t, m)) || adam.Iterations() != 0 {
				t.Error("a refused checkpoint changed the model or its optimizer")
			}
		})
	}
}

// sparseFile writes a valid-looking safetensors file whose header declares
// tensors of the given shapes and metadata, and whose data is a hole: a
// few kilobytes on disk, however large the size the header declares.
func sparseFile(t *testing.T, path string, meta map[string]string, shapes map[string][]int) {
	t.Helper()
	header := map[string]any{"__metadata__": meta}
	var offset int64
	for _, name := range slices.Sorted(maps.Keys(shapes)) {
		n := int64(4)
		for _, d := range shapes[name] {
			n *= int64(d)
		}
		header[name] = map[string]any{"dtype": "F32", "shape": shapes[name], "data_offsets": []int64{offset, offset + n}}
		offset += n
	}
	h, err := json.Marshal(header)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var prefix [8]byte
	binary.LittleEndian.PutUint64(prefix[:], uint64(len(h)))
	if _, err := f.Write(append(prefix[:], h...)); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(8 + int64(len(h)) + offset); err != nil {
		t.Fatal(err)
	}
}

// A valid-looking file that declares huge tensors (4 KB on disk, a sparse
// file) is refused by LoadWeights, LoadCheckpoint and LoadModel from its
// header, before any data is read or allocated: it once ran the process
// out of memory before the shapes were checked. 64 GiB of declared
// kernel, or many tensors each no larger than a weight, are refused alike.
func TestLoadRefusesFilesDeclaringHugeTensors(t *testing.T) {
	dir := t.TempDir()
	m := smallModel(t, 1, nil, 3)
	saved := filepath.Join(dir, "model.safetensors")
	if err := m.Save(saved); err != nil {
		t.Fatal(err)
	}
	modelMeta, err := safetensors.ReadMetadata(saved)
	if err != nil {
		t.Fatal(err)
	}
	huge := map[string][]int{"dense/kernel": {1 << 20, 1 << 14}, "dense/bias": {3}, "dense_1/kernel": {3, 10}, "dense_1/bias": {10}}
	many := map[string][]int{}
	for i := range 500 {
		many[fmt.Sprintf("optimizer/dense_1/kernel/s%d", i)] = []int{3, 10}
	}
	for _, tc := range []struct {
		name   string
		meta   map[string]string
		shapes map[string][]int
		load   func(path string) error
		want   string
	}{
		{"LoadWeights", nil, huge, m.LoadWeights, `tensor "dense/kernel" has shape (1048576, 16384), 17179869184 values, more than any weight of model`},
		{"LoadCheckpoint", map[string]string{"gokeras.optimizer": "SGD"}, huge, func(p string) error { _, err := m.LoadCheckpoint(p); return err }, `tensor "dense/kernel" has shape (1048576, 16384)`},
		{"LoadModel", modelMeta, huge, func(p string) error { _, err := nn.LoadModel(p); return err }, `tensor "dense/kernel" has shape (1048576, 16384)`},
		{"many small tensors", nil, many, m.LoadWeights, "the file declares 15000 values in 500 tensors, more than model"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name+".safetensors")
			sparseFile(t, path, tc.meta, tc.shapes)
			err := tc.load(path)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("%v, want an error naming the file and saying %q", err, tc.want)
			}
		})
	}
}

// While Fit, Evaluate or Predict runs a step, the methods that read or
// replace the weights, called from another goroutine, are refused with
// ErrBusy instead of racing with the step (a checkpoint saved then mixed
// two steps; Close could crash the run); Close and Compile are refused
// during the whole run. Afterwards, and from Fit's callbacks, they work.
func TestWeightMethodsDuringARunAreRefused(t *testing.T) {
	ds := blobs(t, 32, 4, 1, true)
	dir := t.TempDir()
	ctx := context.Background()
	runs := map[string]func(m *nn.Sequential, d data.Dataset) error{
		"fit":      func(m *nn.Sequential, d data.Dataset) error { _, err := m.Fit(ctx, d, nn.Verbose(0)); return err },
		"evaluate": func(m *nn.Sequential, d data.Dataset) error { _, err := m.Evaluate(ctx, d, nn.Verbose(0)); return err },
		"predict":  func(m *nn.Sequential, d data.Dataset) error { _, err := m.PredictTensor(ctx, d); return err },
	}
	calls := map[string]func(m *nn.Sequential) error{
		"get weights": func(m *nn.Sequential) error { _, err := m.GetWeights(); return err },
		"set weights": func(m *nn.Sequential) error {
			ws, err := smallModel(t, 2, nil, 3).GetWeights()
			if err != nil {
				return err
			}
			return m.SetWeights(ws)
		},
		"save weights": func(m *nn.Sequential) error { return m.SaveWeights(filepath.Join(dir, "w.safetensors")) },
		"save checkpoint": func(m *nn.Sequential) error {
			return m.SaveCheckpoint(filepath.Join(dir, "ck.safetensors"), nn.Checkpoint{})
		},
		"save model": func(m *nn.Sequential) error { return m.Save(filepath.Join(dir, "m.safetensors")) },
		"close":      func(m *nn.Sequential) error { return m.Close() },
		"compile": func(m *nn.Sequential) error {
			return m.Compile(newSGD(t, 0.1), losses.CategoricalCrossentropy{}, nil, nn.OnDevice("/CPU:0"))
		},
	}
	for run, call := range runs {
		t.Run(run, func(t *testing.T) {
			m := smallModel(t, 1, nil, 3)
			if err := m.SaveWeights(filepath.Join(dir, "w.safetensors")); err != nil {
				t.Fatal(err)
			}
			g := newGate(ds)
			done := make(chan error)
			go func() { done <- call(m, g) }()
			<-g.entered // the run holds the model, mid-step
			for name, other := range calls {
				err := other(m)
				if !errors.Is(err, nn.ErrBusy) || !strings.HasPrefix(err.Error(), name+`: model "sequential" is `) {
					t.Errorf("%s during %s: %v, want ErrBusy", name, run, err)
				}
			}
			for _, name := range []string{"load weights", "load checkpoint"} {
				var err error
				if name == "load weights" {
					err = m.LoadWeights(filepath.Join(dir, "w.safetensors"))
				} else {
					_, err = m.LoadCheckpoint(filepath.Join(dir, "w.safetensors"))
				}
				if !errors.Is(err, nn.ErrBusy) {
					t.Errorf("%s during %s: %v, want ErrBusy", name, run, err)
				}
			}
			close(g.release)
			if err := <-done; err != nil {
				t.Fatalf("the run: %v", err)
			}
			for name, other := range calls {
				if err := other(m); err != nil {
					t.Errorf("%s after %s: %v", name, run, err)
				}
			}
		})
	}
}

// saver saves a checkpoint and sets the weights from Fit's callbacks, as
// ModelCheckpoint and EarlyStopping do: between steps, which is allowed.
type saver struct {
	nn.CallbackBase
	path string
	errs []error
}

func (s *saver) OnTrainBatchEnd(step int, _ nn.Logs) error {
	s.errs = append(s.errs, s.Model.SaveCheckpoint(s.path, nn.Checkpoint{Step: step}))
	ws, err := s.Model.GetWeights()
	if err == nil {
		err = s.Model.SetWeights(ws)
	}
	s.errs = append(s.errs, err)
	return nil
}

// From Fit's callbacks the weight methods run; from another goroutine,
// hammering them during Fit, each call either runs between two steps or
// is refused with ErrBusy: run with -race, nothing races.
func TestWeightMethodsFromCallbacksAndOtherGoroutines(t *testing.T) {
	dir := t.TempDir()
	m := smallModel(t, 1, nil, 3)
	cb := &saver{path: filepath.Join(dir, "cb.safetensors")}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var ran, refused int
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			var err error
			switch i % 3 {
			case 0:
				err = m.SaveCheckpoint(filepath.Join(dir, "other.safetensors"), nn.Checkpoint{})
			case 1:
				_, err = m.GetWeights()
			case 2:
				err = m.SaveWeights(filepath.Join(dir, "w.safetensors"))
			}
			switch {
			case err == nil:
				ran++
			case errors.Is(err, nn.ErrBusy):
				refused++
			default:
				t.Errorf("call %d from another goroutine: %v, want nil or ErrBusy", i, err)
				return
			}
		}
	})
	_, err := m.Fit(context.Background(), blobs(t, 256, 4, 1, true), nn.Epochs(3), nn.BatchSize(8), nn.Verbose(0), nn.Callbacks(cb))
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	for i, err := range cb.errs {
		if err != nil {
			t.Fatalf("call %d from a callback: %v", i, err)
		}
	}
	if len(cb.errs) != 2*3*32 {
		t.Errorf("%d calls from callbacks, want %d", len(cb.errs), 2*3*32)
	}
	t.Logf("from another goroutine during Fit: %d ran, %d refused", ran, refused)
}
