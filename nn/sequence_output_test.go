package nn_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/internal/formats/shapes"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/metrics"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/optim"
)

// tagData are n sequences of steps tokens in [1, vocab), each token tagged
// by how it compares with the one before (0 before the first): 0 smaller,
// 1 equal, 2 larger. It returns the tokens, the tags, and a dataset of them
// with labels of shape (steps,): class indices per step.
func tagData(t *testing.T, n, steps, vocab int, seed uint64) (x, y []float32, ds data.Dataset) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 2))
	x, y = make([]float32, n*steps), make([]float32, n*steps)
	for i := range n {
		prev := 0
		for k := range steps {
			tok := 1 + rng.IntN(vocab-1)
			if k > 0 && rng.IntN(4) == 0 {
				tok = prev // repeats, so that "equal" is not rare
			}
			x[i*steps+k] = float32(tok)
			switch {
			case tok < prev:
				y[i*steps+k] = 0
			case tok == prev:
				y[i*steps+k] = 1
			default:
				y[i*steps+k] = 2
			}
			prev = tok
		}
	}
	ds, err := data.TensorData(tensor.New(tensor.WithShape(n, steps), tensor.WithBacking(x)), tensor.New(tensor.WithShape(n, steps), tensor.WithBacking(slices.Clone(y))))
	if err != nil {
		t.Fatal(err)
	}
	return x, y, ds
}

// tagger is a tagging model: Embedding(vocab, embed) (MaskZero), an
// LSTM(units, return_sequences) and a softmax Dense of 3 units at every
// step, its weights drawn from seed.
type tagger struct {
	steps, vocab, embed, units int
	seed                       uint64
	maskZero                   bool
}

// compile makes the model and compiles it on dev with Adam (0.02), sparse
// categorical cross-entropy and accuracy, and more.
func (c tagger) compile(t *testing.T, dev string, more ...nn.CompileOption) *nn.Sequential {
	t.Helper()
	m := nn.NewSequential(layers.Input(c.steps), layers.Embedding(c.vocab, c.embed, layers.MaskZero(c.maskZero)),
		layers.LSTM(c.units, layers.ReturnSequences()), layers.Dense(3, layers.Softmax))
	m.SetSeed(c.seed)
	adam, err := optim.NewAdam(optim.AdamConfig{LearningRate: 0.02})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Compile(adam, losses.SparseCategoricalCrossentropy{}, []metrics.Metric{&metrics.Accuracy{}}, append([]nn.CompileOption{nn.OnDevice(dev)}, more...)...); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestSequenceTagger: Embedding, LSTM(return_sequences) and a softmax Dense
// on every step learn to tag each token by how it compares with the one
// before, trained with sparse_categorical_crossentropy on labels of shape
// (N, steps); Evaluate's accuracy is the share of all N·steps tags right,
// which Predict's (N, steps, 3) outputs give too.
func TestSequenceTagger(t *testing.T) {
	const n, steps, vocab = 512, 6, 6
	m := tagger{steps: steps, vocab: vocab, embed: 8, units: 24, seed: 5}.compile(t, seqDevice)
	defer m.Close()
	_, _, ds := tagData(t, n, steps, vocab, 1)
	ctx := context.Background()
	h, err := m.Fit(ctx, ds, nn.Epochs(25), nn.BatchSize(32), nn.Verbose(0))
	if err != nil {
		t.Fatal(err)
	}
	loss := h.Get("loss")
	t.Logf("loss %.4f -> %.4f, accuracy %.4f -> %.4f", loss[0], loss[len(loss)-1], h.Get("accuracy")[0], h.Get("accuracy")[len(loss)-1])
	_, ty, test := tagData(t, 256, steps, vocab, 2)
	logs, err := m.Evaluate(ctx, test, nn.Verbose(0))
	if err != nil {
		t.Fatal(err)
	}
	if logs["accuracy"] < 0.95 {
		t.Errorf("test accuracy %.4f after training, want at least 0.95 (logs %v)", logs["accuracy"], logs)
	}
	pred, err := m.PredictTensor(ctx, test)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{256, steps, 3}; !slices.Equal(pred.Shape(), want) {
		t.Fatalf("Predict's shape %v, want %v", pred.Shape(), want)
	}
	right, p := 0, pred.Data().([]float32)
	for r := range len(ty) {
		row := p[r*3 : (r+1)*3]
		if float32(slices.Index(row, slices.Max(row))) == ty[r] {
			right++
		}
	}
	if got := float64(right) / float64(len(ty)); math.Abs(got-logs["accuracy"]) > 1e-6 {
		t.Errorf("Evaluate's accuracy %.6f, but Predict's outputs tag %.6f of the %d steps right", logs["accuracy"], got, len(ty))
	}
	// A saved tagger loads, compiled, and predicts the same.
	path := filepath.Join(t.TempDir(), "tagger.keras")
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := nn.LoadModel(path)
	if err != nil {
		t.Fatal(err)
	}
	defer back.Close()
	again, err := back.PredictTensor(ctx, test)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(again.Shape(), pred.Shape()) || !slices.Equal(again.Data().([]float32), p) {
		t.Errorf("the loaded tagger predicts differently: shape %v, want %v", again.Shape(), pred.Shape())
	}
	bl, err := back.Evaluate(ctx, test, nn.Verbose(0))
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(bl["loss"]-logs["loss"]) > 1e-6 || bl["accuracy"] != logs["accuracy"] {
		t.Errorf("the loaded tagger evaluates to %v, the saved one to %v", bl, logs)
	}
}

// TestSequenceOutputErrors: labels that do not fit an output of several
// steps, ClassWeight, and a mask over the output's steps are refused
// before training, naming both shapes and the fix.
func TestSequenceOutputErrors(t *testing.T) {
	f := newSeqFixture()
	ctx := context.Background()
	cases := []struct {
		name       string
		loss       losses.Loss
		labelShape []int
		opts       []nn.Option
		want       []string
	}{
		{"sparse, steps+1", losses.SparseCategoricalCrossentropy{}, []int{f.steps + 1}, nil,
			[]string{"labels of shape (None, 4) do not fit a model output of shape (None, 3, 3)", "shape (None, 3, 3), or (None, 3) of class indices"}},
		{"categorical, 4 classes", losses.CategoricalCrossentropy{}, []int{f.steps, 4}, nil,
			[]string{"labels of shape (None, 3, 4) for a model output of shape (None, 3, 3), read step by step", "categorical_crossentropy"}},
		{"categorical, class indices", losses.CategoricalCrossentropy{}, []int{f.steps}, nil,
			[]string{"labels of shape (None, 3) for a model output of shape (None, 3, 3)", "use sparse_categorical_crossentropy"}},
		{"sparse, one-hot", losses.SparseCategoricalCrossentropy{}, []int{f.steps, 3}, nil,
			[]string{"labels of shape (None, 3, 3) for a model output of shape (None, 3, 3)", "look one-hot"}},
		{"mse, flat of another size", losses.MeanSquaredError{}, []int{f.steps*3 + 1}, nil,
			[]string{"labels of shape (None, 10) do not fit a model output of shape (None, 3, 3)"}},
		{"class weight", losses.SparseCategoricalCrossentropy{}, []int{f.steps}, []nn.Option{nn.ClassWeight(map[int]float64{0: 1, 1: 2, 2: 1})},
			[]string{"ClassWeight is not supported", "(None, 3, 3)", "SampleWeight"}},
		{"temporal weights, one per sample", losses.SparseCategoricalCrossentropy{}, []int{f.steps}, []nn.Option{nn.TemporalSampleWeight(make([]float32, f.n))},
			[]string{"TemporalSampleWeight has 4 weights for 4 samples of 3 steps", "(12)"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := f.model(t, false, c.loss)
			defer m.Close()
			labels := make([]float32, f.n*shapes.Size(c.labelShape))
			ds := f.dataset(t, labels, c.labelShape...)
			_, err := m.Fit(ctx, ds, append([]nn.Option{nn.Verbose(0)}, c.opts...)...)
			if err == nil {
				t.Fatal("Fit: no error")
			}
			t.Logf("Fit: %v", err)
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Fit: error %q does not say %q", err, w)
				}
			}
			if c.opts == nil {
				if _, err := m.Evaluate(ctx, ds, nn.Verbose(0)); err == nil || !strings.Contains(err.Error(), c.want[0]) {
					t.Errorf("Evaluate: error %v, want one saying %q", err, c.want[0])
				}
			}
		})
	}
}

// seqFixture is a batch of n sequences of steps rows of 2 features, a
// softmax Dense of 3 units with fixed weights, and the float64 reference
// of its outputs.
type seqFixture struct {
	n, steps     int
	x            []float32
	kernel, bias []float32
	// masked: the model masks the steps whose features are all 0
	// (Masking(0)).
	masked bool
}

func newSeqFixture() seqFixture {
	f := seqFixture{n: 4, steps: 3, kernel: []float32{0.5, -0.25, 0.75, -1, 0.125, 0.5}, bias: []float32{0.1, -0.2, 0.05}}
	rng := rand.New(rand.NewPCG(9, 9))
	f.x = make([]float32, f.n*f.steps*2)
	for i := range f.x {
		f.x[i] = float32(rng.NormFloat64())
	}
	return f
}

// probs are the softmax outputs of row r (sample r/steps, step r%steps) in
// float64.
func (f seqFixture) probs(r int) []float64 {
	z := make([]float64, 3)
	for j := range 3 {
		z[j] = float64(f.bias[j])
		for i := range 2 {
			z[j] += float64(f.x[r*2+i]) * float64(f.kernel[i*3+j])
		}
	}
	mx := slices.Max(z)
	sum := 0.0
	for j := range z {
		z[j] = math.Exp(z[j] - mx)
		sum += z[j]
	}
	for j := range z {
		z[j] /= sum
	}
	return z
}

func (f seqFixture) model(t *testing.T, timeDistributed bool, loss losses.Loss, ms ...metrics.Metric) *nn.Sequential {
	t.Helper()
	var dense layers.Layer = layers.Dense(3, layers.Softmax)
	if timeDistributed {
		dense = layers.TimeDistributed(dense)
	}
	ls := []layers.Layer{layers.Input(f.steps, 2), dense}
	if f.masked {
		ls = []layers.Layer{layers.Input(f.steps, 2), layers.Masking(0), dense}
	}
	m := nn.NewSequential(ls...)
	sgd, err := optim.NewSGD(optim.SGDConfig{LearningRate: 1e-3})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Compile(sgd, loss, ms, nn.OnDevice(seqDevice)); err != nil {
		t.Fatal(err)
	}
	f.setWeights(t, m)
	return m
}

// setWeights gives the model the fixture's weights.
func (f seqFixture) setWeights(t *testing.T, m *nn.Sequential) {
	t.Helper()
	if err := m.SetWeights([]*tensor.Dense{
		tensor.New(tensor.WithShape(2, 3), tensor.WithBacking(slices.Clone(f.kernel))),
		tensor.New(tensor.WithShape(3), tensor.WithBacking(slices.Clone(f.bias))),
	}); err != nil {
		t.Fatal(err)
	}
}

func (f seqFixture) dataset(t *testing.T, labels []float32, labelShape ...int) data.Dataset {
	t.Helper()
	ds, err := data.TensorData(tensor.New(tensor.WithShape(f.n, f.steps, 2), tensor.WithBacking(slices.Clone(f.x))),
		tensor.New(tensor.WithShape(append([]int{f.n}, labelShape...)...), tensor.WithBacking(slices.Clone(labels))))
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// seqDevice is where the sequence tests run. Not /GPU:0 in the emulated
// GPU's build: importing the CUDA backend into this package's tests gives
// every test of the package a GPU, where the device tests (scope_test.go,
// errors_test.go) need a build without one. The emulated GPU trains a
// model of sequence outputs in examples/char_rnn's test (--all-steps).
const seqDevice = "/CPU:0"

// TestSequenceLossByHand: for fixed weights, the loss of an output of
// several steps is each step's loss over the last axis, averaged over all
// samples and steps (Keras' sum_over_batch_size), checked against a float64
// reference for sparse labels (N, steps), one-hot labels (N, steps, 3) and
// mean squared error; with sample weights, each sample's weight weighs its
// steps and the sum is still divided by N·steps; the accuracy counts every
// step. Each check is shown to tell the right averaging from the wrong
// ones: summing the steps, or dividing the weighted sum by the weights'.
func TestSequenceLossByHand(t *testing.T) {
	f := newSeqFixture()
	rows := f.n * f.steps
	rng := rand.New(rand.NewPCG(4, 4))
	classes, onehot, targets := make([]float32, rows), make([]float32, rows*3), make([]float32, rows*3)
	for r := range rows {
		classes[r] = float32(rng.IntN(3))
		onehot[r*3+int(classes[r])] = 1
	}
	for i := range targets {
		targets[i] = float32(rng.Float64())
	}
	weights := []float32{2, 0.5, 0, 3}
	stepWeights := make([]float32, rows)
	for r := range stepWeights {
		stepWeights[r] = float32(r%5) * 0.5
	}
	// Each row's loss in float64, and the accuracy over every step.
	ce, se := make([]float64, rows), make([]float64, rows)
	right := 0
	for r := range rows {
		p := f.probs(r)
		ce[r] = -math.Log(p[int(classes[r])])
		for j := range 3 {
			d := p[j] - float64(targets[r*3+j])
			se[r] += d * d / 3
		}
		if slices.Index(p, slices.Max(p)) == int(classes[r]) {
			right++
		}
	}
	mean := func(l []float64, w []float32) (keras, sumSteps, byWeights float64) {
		var sum, wsum float64
		for r, v := range l {
			wt := 1.0
			if w != nil {
				wt = float64(w[r/f.steps])
			}
			sum += wt * v
			wsum += wt
		}
		return sum / float64(rows), sum / float64(f.n), sum / wsum
	}
	cases := []struct {
		name       string
		loss       losses.Loss
		labels     []float32
		labelShape []int
		rowLoss    []float64
	}{
		{"sparse (N, steps)", losses.SparseCategoricalCrossentropy{}, classes, []int{f.steps}, ce},
		{"sparse (N, steps, 1)", losses.SparseCategoricalCrossentropy{}, classes, []int{f.steps, 1}, ce},
		{"one-hot (N, steps, 3)", losses.CategoricalCrossentropy{}, onehot, []int{f.steps, 3}, ce},
		{"one-hot flat (N, steps·3)", losses.CategoricalCrossentropy{}, onehot, []int{f.steps * 3}, ce},
		{"mse (N, steps, 3)", losses.MeanSquaredError{}, targets, []int{f.steps, 3}, se},
	}
	ctx := context.Background()
	for _, c := range cases {
		for _, td := range []bool{false, true} {
			name := c.name
			if td {
				name += ", TimeDistributed"
			}
			t.Run(name, func(t *testing.T) {
				check := func(what string, got float64, w []float32) {
					t.Helper()
					want, sumSteps, byWeights := mean(c.rowLoss, w)
					if d := math.Abs(got - want); d > 1e-5*max(1, want) {
						t.Errorf("%s: loss %.7f, want %.7f", what, got, want)
					}
					// The control: the wrong averagings are far from
					// the right one, so the check above would fail.
					for _, wrong := range []float64{sumSteps, byWeights} {
						if w == nil && wrong == byWeights {
							continue // the same without weights
						}
						if math.Abs(wrong-want) < 1e-3 {
							t.Fatalf("%s: the wrong averaging %.7f is as close as %.7f: the check tells nothing", what, wrong, want)
						}
					}
				}
				var ms []metrics.Metric
				if _, sparse := c.loss.(losses.SparseCategoricalCrossentropy); sparse {
					ms = []metrics.Metric{&metrics.Accuracy{}}
				}
				m := f.model(t, td, c.loss, ms...)
				defer m.Close()
				ds := f.dataset(t, c.labels, c.labelShape...)
				// Batches of 3 then 1: Evaluate weighs each batch's mean
				// by its samples.
				logs, err := m.Evaluate(ctx, ds, nn.BatchSize(3), nn.Verbose(0))
				if err != nil {
					t.Fatal(err)
				}
				check("Evaluate", logs["loss"], nil)
				if ms != nil {
					if want := float64(right) / float64(rows); math.Abs(logs["accuracy"]-want) > 1e-6 {
						t.Errorf("accuracy %.6f, want %.6f (%d of %d steps)", logs["accuracy"], want, right, rows)
					}
				}
				// One step on the whole batch: its loss is the weights'
				// before the update.
				h, err := m.Fit(ctx, ds, nn.BatchSize(f.n), nn.Shuffle(false), nn.SampleWeight(weights), nn.Verbose(0))
				if err != nil {
					t.Fatal(err)
				}
				check("Fit with SampleWeight", h.Get("loss")[0], weights)
				// A weight per step (Keras' temporal sample_weight): Σ
				// w·loss / (N·steps), from the fixed weights again.
				f.setWeights(t, m)
				h, err = m.Fit(ctx, ds, nn.BatchSize(f.n), nn.Shuffle(false), nn.TemporalSampleWeight(stepWeights), nn.Verbose(0))
				if err != nil {
					t.Fatal(err)
				}
				var want, byWeights, wsum float64
				for r, l := range c.rowLoss {
					want += float64(stepWeights[r]) * l
					wsum += float64(stepWeights[r])
				}
				want, byWeights = want/float64(rows), want/wsum
				if got := h.Get("loss")[0]; math.Abs(got-want) > 1e-5*max(1, want) || math.Abs(byWeights-want) < 1e-3 {
					t.Errorf("Fit with TemporalSampleWeight: loss %.7f, want %.7f (not %.7f)", got, want, byWeights)
				}
			})
		}
	}
}

// TestSequenceMaskedLossByHand: with a mask over the output's steps
// (Masking(0) before the Dense), the loss of a batch is Σ mask·loss /
// Σ mask, the mean over the steps kept, as tf.keras 2 reduces it (times
// each sample's weight, still divided by Σ mask); Evaluate averages the
// batches' losses by their samples, as Keras' loss tracker does; the
// accuracy counts the kept steps only. The wrong reductions (every step
// counted, or divided by N·steps) are shown to be told apart.
func TestSequenceMaskedLossByHand(t *testing.T) {
	f := newSeqFixture()
	f.masked = true
	zero := []int{2, 5, 7, 8} // rows (sample·steps + step) of zeros: masked
	for _, r := range zero {
		f.x[r*2], f.x[r*2+1] = 0, 0
	}
	rows := f.n * f.steps
	kept := func(r int) bool { return !slices.Contains(zero, r) }
	rng := rand.New(rand.NewPCG(6, 6))
	classes, onehot := make([]float32, rows), make([]float32, rows*3)
	for r := range rows {
		classes[r] = float32(rng.IntN(3))
		onehot[r*3+int(classes[r])] = 1
	}
	weights := []float32{2, 0.5, 1, 3}
	ce := make([]float64, rows)
	right, nKept := 0, 0
	for r := range rows {
		p := f.probs(r)
		ce[r] = -math.Log(p[int(classes[r])])
		if kept(r) {
			nKept++
			if slices.Index(p, slices.Max(p)) == int(classes[r]) {
				right++
			}
		}
	}
	// masked is the loss of samples [lo, hi): Σ m·w·l / Σ m; all counts
	// every step instead, and byRows divides by the rows.
	masked := func(lo, hi int, w []float32) (want, all, byRows float64) {
		var sum, sumAll, m float64
		for r := lo * f.steps; r < hi*f.steps; r++ {
			wt := 1.0
			if w != nil {
				wt = float64(w[r/f.steps])
			}
			sumAll += wt * ce[r]
			if kept(r) {
				sum += wt * ce[r]
				m++
			}
		}
		n := float64((hi - lo) * f.steps)
		return sum / m, sumAll / n, sum / n
	}
	ctx := context.Background()
	for _, c := range []struct {
		name       string
		loss       losses.Loss
		labels     []float32
		labelShape []int
	}{
		{"sparse", losses.SparseCategoricalCrossentropy{}, classes, []int{f.steps}},
		{"one-hot", losses.CategoricalCrossentropy{}, onehot, []int{f.steps, 3}},
	} {
		for _, td := range []bool{false, true} {
			name := c.name
			if td {
				name += ", TimeDistributed"
			}
			t.Run(name, func(t *testing.T) {
				check := func(what string, got, want float64, wrong ...float64) {
					t.Helper()
					if d := math.Abs(got - want); d > 1e-5*max(1, want) {
						t.Errorf("%s: loss %.7f, want %.7f", what, got, want)
					}
					for _, v := range wrong {
						if math.Abs(v-want) < 1e-3 {
							t.Fatalf("%s: the wrong reduction %.7f is as close as %.7f: the check tells nothing", what, v, want)
						}
					}
				}
				m := f.model(t, td, c.loss, &metrics.Accuracy{})
				defer m.Close()
				ds := f.dataset(t, c.labels, c.labelShape...)
				logs, err := m.Evaluate(ctx, ds, nn.BatchSize(3), nn.Verbose(0))
				if err != nil {
					t.Fatal(err)
				}
				l1, a1, r1 := masked(0, 3, nil)
				l2, a2, r2 := masked(3, 4, nil)
				check("Evaluate", logs["loss"], (3*l1+l2)/4, (3*a1+a2)/4, (3*r1+r2)/4)
				if want := float64(right) / float64(nKept); math.Abs(logs["accuracy"]-want) > 1e-6 {
					t.Errorf("accuracy %.6f, want %.6f (%d of the %d steps kept)", logs["accuracy"], want, right, nKept)
				}
				h, err := m.Fit(ctx, ds, nn.BatchSize(f.n), nn.Shuffle(false), nn.SampleWeight(weights), nn.Verbose(0))
				if err != nil {
					t.Fatal(err)
				}
				want, all, byRows := masked(0, f.n, weights)
				check("Fit with SampleWeight", h.Get("loss")[0], want, all, byRows)
			})
		}
	}
}

// TestSequenceMaskedTagger: sequences of different lengths, padded with
// token 0 which Embedding(mask_zero=True) masks, tagged as
// TestSequenceTagger tags them, with random tags on the padding: the mask
// leaves those out of the loss and the accuracy, so the tagger learns the
// real tags and its accuracy over them reaches what it reaches unpadded
// (the random pad tags would hold it near 0.8 were they counted).
func TestSequenceMaskedTagger(t *testing.T) {
	const n, steps, vocab = 512, 6, 6
	make := func(seed uint64) data.Dataset {
		x, y, _ := tagData(t, n, steps, vocab, seed)
		rng := rand.New(rand.NewPCG(seed, 3))
		for i := range n {
			for k := 3 + rng.IntN(steps-2); k < steps; k++ { // 3 to steps real tokens
				x[i*steps+k], y[i*steps+k] = 0, float32(rng.IntN(3))
			}
		}
		ds, err := data.TensorData(tensor.New(tensor.WithShape(n, steps), tensor.WithBacking(x)), tensor.New(tensor.WithShape(n, steps), tensor.WithBacking(y)))
		if err != nil {
			t.Fatal(err)
		}
		return ds
	}
	m := tagger{steps: steps, vocab: vocab, embed: 8, units: 24, seed: 5, maskZero: true}.compile(t, seqDevice)
	defer m.Close()
	ctx := context.Background()
	h, err := m.Fit(ctx, make(1), nn.Epochs(25), nn.BatchSize(32), nn.Verbose(0))
	if err != nil {
		t.Fatal(err)
	}
	loss, acc := h.Get("loss"), h.Get("accuracy")
	t.Logf("loss %.4f -> %.4f, accuracy %.4f -> %.4f", loss[0], loss[len(loss)-1], acc[0], acc[len(acc)-1])
	logs, err := m.Evaluate(ctx, make(2), nn.Verbose(0))
	if err != nil {
		t.Fatal(err)
	}
	if logs["accuracy"] < 0.95 {
		t.Errorf("test accuracy over the real tokens %.4f, want at least 0.95 (logs %v)", logs["accuracy"], logs)
	}
}

// TestTemporalSampleWeightNeedsSteps: TemporalSampleWeight is refused for
// a model whose output has no steps, naming its shape and SampleWeight.
func TestTemporalSampleWeightNeedsSteps(t *testing.T) {
	m := nn.NewSequential(layers.Input(2), layers.Dense(3, layers.Softmax))
	defer m.Close()
	sgd, err := optim.NewSGD(optim.SGDConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Compile(sgd, losses.SparseCategoricalCrossentropy{}, nil, nn.OnDevice(seqDevice)); err != nil {
		t.Fatal(err)
	}
	ds, err := data.TensorData(tensor.New(tensor.WithShape(2, 2), tensor.WithBacking([]float32{1, 2, 3, 4})), tensor.New(tensor.WithShape(2), tensor.WithBacking([]float32{0, 1})))
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Fit(context.Background(), ds, nn.TemporalSampleWeight([]float32{1, 1}), nn.Verbose(0))
	if err == nil || !strings.Contains(err.Error(), "output has shape (None, 3)") || !strings.Contains(err.Error(), "SampleWeight") {
		t.Errorf("Fit: error %v, want one saying the output has no steps", err)
	}
}

// TestSequenceOutputStrategyAndStream: the tagger of TestSequenceTagger
// trains to the same losses and accuracies epoch by epoch under a
// strategy of one replica (which sums the metrics' states itself: a
// sample's steps must count as rows there too) and from a stream of the
// same samples in the same order.
func TestSequenceOutputStrategyAndStream(t *testing.T) {
	const n, steps, vocab = 128, 5, 6
	_, _, ds := tagData(t, n, steps, vocab, 3)
	fit := func(s nn.Strategy, stream bool) []float64 {
		// On /CPU:0: a strategy on a GPU all-reduces in device memory,
		// which alone does not.
		var opts []nn.CompileOption
		if s != nil {
			opts = append(opts, nn.WithStrategy(s))
		}
		m := tagger{steps: steps, vocab: vocab, embed: 4, units: 8, seed: 2}.compile(t, "/CPU:0", opts...)
		defer m.Close()
		var src data.Source = ds
		fitOpts := []nn.Option{nn.Epochs(3), nn.Shuffle(false), nn.Verbose(0)}
		if stream {
			src = data.FromDataset(ds).Batch(16, false)
		} else {
			fitOpts = append(fitOpts, nn.BatchSize(16))
		}
		h, err := m.Fit(context.Background(), src, fitOpts...)
		if err != nil {
			t.Fatal(err)
		}
		return append(h.Get("loss"), h.Get("accuracy")...)
	}
	want := fit(nil, false)
	t.Logf("losses and accuracies %v", want)
	for _, c := range []struct {
		name string
		got  []float64
	}{{"a strategy of one", fit(&alone{}, false)}, {"a stream", fit(nil, true)}} {
		for i := range want {
			if math.Abs(want[i]-c.got[i]) > 1e-5*math.Abs(want[i]) {
				t.Errorf("%s: figure %d is %v, %v from the dataset alone", c.name, i, c.got[i], want[i])
			}
		}
	}
}

// TestSequenceOutputBesideAnother: a functional model with an output of
// several steps ("tags", sparse labels per step) beside one of one value
// ("total"): the tags' loss and accuracy are each step's, averaged over
// every step, as in a model of that output alone, with each output's
// labels cut from the tuple; SampleWeight weighs the tags' every step and
// the total, each output's loss divided by its own rows.
func TestSequenceOutputBesideAnother(t *testing.T) {
	f := newSeqFixture()
	rows := f.n * f.steps
	in := nn.Input(f.steps, 2)
	tags := nn.Apply(layers.Dense(3, layers.Softmax, layers.Named("tags")), in)
	total := nn.Apply(layers.Dense(1, layers.Named("total")), nn.Apply(layers.Flatten(), in))
	m, err := nn.NewModel([]*nn.Tensor{in}, []*nn.Tensor{tags, total})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	sgd, err := optim.NewSGD(optim.SGDConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Compile(sgd, nil, []metrics.Metric{&metrics.Accuracy{}}, nn.OnDevice(seqDevice),
		nn.LossFor("tags", losses.SparseCategoricalCrossentropy{}), nn.LossFor("total", losses.MeanSquaredError{}), nn.MetricsFor("total")); err != nil {
		t.Fatal(err)
	}
	ws, err := m.GetWeights()
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range ws { // the tags' kernel and bias are the fixture's
		switch {
		case slices.Equal(w.Shape(), []int{2, 3}):
			ws[i] = tensor.New(tensor.WithShape(2, 3), tensor.WithBacking(slices.Clone(f.kernel)))
		case slices.Equal(w.Shape(), []int{3}):
			ws[i] = tensor.New(tensor.WithShape(3), tensor.WithBacking(slices.Clone(f.bias)))
		}
	}
	if err := m.SetWeights(ws); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(8, 8))
	classes := make([][]float32, f.n)
	values := make([]float32, f.n)
	ce, right := 0.0, 0
	for i := range f.n {
		classes[i] = make([]float32, f.steps)
		for s := range f.steps {
			c := rng.IntN(3)
			classes[i][s] = float32(c)
			p := f.probs(i*f.steps + s)
			ce -= math.Log(p[c])
			if slices.Index(p, slices.Max(p)) == c {
				right++
			}
		}
		values[i] = float32(i)
	}
	ds, err := data.SliceData(data.Flat(slices.Clone(f.x), f.steps, 2), data.LabelTuple(data.TargetRows(classes), data.Targets(values)))
	if err != nil {
		t.Fatal(err)
	}
	logs, err := m.Evaluate(context.Background(), ds, nn.Verbose(0))
	if err != nil {
		t.Fatal(err)
	}
	if want := ce / float64(rows); math.Abs(logs["tags_loss"]-want) > 1e-5*want {
		t.Errorf("tags_loss %.7f, want %.7f (logs %v)", logs["tags_loss"], want, logs)
	}
	if want := float64(right) / float64(rows); math.Abs(logs["tags_accuracy"]-want) > 1e-6 {
		t.Errorf("tags_accuracy %.6f, want %.6f (logs %v)", logs["tags_accuracy"], want, logs)
	}
	if sum := logs["tags_loss"] + logs["total_loss"]; math.Abs(logs["loss"]-sum) > 1e-5*sum {
		t.Errorf("loss %v, want tags_loss + total_loss = %v", logs["loss"], sum)
	}
	// A sample's weight weighs each step of the tags and its total: one
	// step on the whole batch reports the losses of the weights before it.
	preds, err := m.PredictOutputs(context.Background(), ds)
	if err != nil {
		t.Fatal(err)
	}
	weights := []float32{2, 0.5, 0, 3}
	var tagsWant, totalWant float64
	for i := range f.n {
		for s := range f.steps {
			p := f.probs(i*f.steps + s)
			tagsWant -= float64(weights[i]) * math.Log(p[int(classes[i][s])])
		}
		d := float64(preds[1].Row(i)[0]) - float64(values[i])
		totalWant += float64(weights[i]) * d * d
	}
	tagsWant /= float64(rows)
	totalWant /= float64(f.n)
	h, err := m.Fit(context.Background(), ds, nn.BatchSize(f.n), nn.Shuffle(false), nn.SampleWeight(weights), nn.Verbose(0))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		key  string
		want float64
	}{{"tags_loss", tagsWant}, {"total_loss", totalWant}, {"loss", tagsWant + totalWant}} {
		if got := h.Get(c.key)[0]; math.Abs(got-c.want) > 1e-5*max(1, c.want) {
			t.Errorf("Fit with SampleWeight: %s %.7f, want %.7f", c.key, got, c.want)
		}
	}
	// A weight per step needs outputs of as many steps.
	_, err = m.Fit(context.Background(), ds, nn.TemporalSampleWeight(make([]float32, rows)), nn.Verbose(0))
	if err == nil || !strings.Contains(err.Error(), `outputs "tags" and "total" have 3 and 1 steps: TemporalSampleWeight needs outputs of as many steps`) {
		t.Errorf("Fit with TemporalSampleWeight: error %v, want one naming the outputs' steps", err)
	}
}

// TestOutputOfSeveralAxes: an output of more than one axis before the
// classes, a Conv2D's (None, 4, 4, 3) of a class per pixel, trains on
// labels of shape (None, 4, 4), its loss the mean over every pixel of
// every sample: Evaluate's loss and accuracy are those of Predict's
// probabilities, computed here.
func TestOutputOfSeveralAxes(t *testing.T) {
	const n, side = 64, 4
	rng := rand.New(rand.NewPCG(12, 12))
	x, y := make([]float32, n*side*side), make([]float32, n*side*side)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
		switch { // a pixel's class by its value: learnable by a 1×1 convolution
		case x[i] < -0.5:
			y[i] = 0
		case x[i] < 0.5:
			y[i] = 1
		default:
			y[i] = 2
		}
	}
	ds, err := data.TensorData(tensor.New(tensor.WithShape(n, side, side, 1), tensor.WithBacking(x)), tensor.New(tensor.WithShape(n, side, side), tensor.WithBacking(y)))
	if err != nil {
		t.Fatal(err)
	}
	m := nn.NewSequential(layers.Input(side, side, 1), layers.Conv2D(8, 1, layers.ReLU), layers.Conv2D(3, 1, layers.Softmax))
	m.SetSeed(3)
	defer m.Close()
	adam, err := optim.NewAdam(optim.AdamConfig{LearningRate: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Compile(adam, losses.SparseCategoricalCrossentropy{}, []metrics.Metric{&metrics.Accuracy{}}, nn.OnDevice(seqDevice)); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := m.Fit(ctx, ds, nn.Epochs(10), nn.BatchSize(16), nn.Verbose(0)); err != nil {
		t.Fatal(err)
	}
	logs, err := m.Evaluate(ctx, ds, nn.BatchSize(n), nn.Verbose(0))
	if err != nil {
		t.Fatal(err)
	}
	pred, err := m.PredictTensor(ctx, ds)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{n, side, side, 3}; !slices.Equal(pred.Shape(), want) {
		t.Fatalf("Predict's shape %v, want %v", pred.Shape(), want)
	}
	ce, right, p := 0.0, 0, pred.Data().([]float32)
	for r, c := range y {
		row := p[r*3 : (r+1)*3]
		ce -= math.Log(float64(row[int(c)]))
		if slices.Index(row, slices.Max(row)) == int(c) {
			right++
		}
	}
	ce /= float64(len(y))
	t.Logf("loss %.4f, accuracy %.4f", logs["loss"], logs["accuracy"])
	if math.Abs(logs["loss"]-ce) > 1e-4*ce {
		t.Errorf("Evaluate's loss %.6f, the pixels' mean cross-entropy %.6f", logs["loss"], ce)
	}
	if acc := float64(right) / float64(len(y)); math.Abs(logs["accuracy"]-acc) > 1e-6 || acc < 0.9 {
		t.Errorf("Evaluate's accuracy %.6f, the pixels' %.6f (want at least 0.9)", logs["accuracy"], acc)
	}
}

// TestSequenceAllStepsMasked: a batch whose every step is masked has no
// step to average the loss over (NaN, as in Keras): Evaluate and Fit say
// so, and how to avoid it.
func TestSequenceAllStepsMasked(t *testing.T) {
	m := tagger{steps: 3, vocab: 4, embed: 2, units: 2, seed: 1, maskZero: true}.compile(t, seqDevice)
	defer m.Close()
	ds, err := data.TensorData(tensor.New(tensor.WithShape(2, 3), tensor.WithBacking(make([]float32, 6))), tensor.New(tensor.WithShape(2, 3), tensor.WithBacking(make([]float32, 6))))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_, err = m.Evaluate(ctx, ds, nn.Verbose(0))
	if !errors.Is(err, nn.ErrNonFiniteLoss) || !strings.Contains(err.Error(), "every step is masked (all padding)") {
		t.Errorf("Evaluate: error %v, want one saying every step is masked", err)
	}
	_, err = m.Fit(ctx, ds, nn.Verbose(0))
	if !errors.Is(err, nn.ErrNonFiniteLoss) || !strings.Contains(err.Error(), "leave such samples out") {
		t.Errorf("Fit: error %v, want one saying to leave the all-masked samples out", err)
	}
}
