package layers_test

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/optim"
)

const attSteps, attFeatures = 6, 4

// attentionModel is self-attention over sequences of 6 steps of 4
// features with an attention mask input and the causal mask, flattened:
// the model's output is the layer's.
func attentionModel(t *testing.T, opts ...layers.AttentionOption) (*nn.Model, *layers.MultiHeadAttentionLayer) {
	t.Helper()
	x := nn.Input(attSteps, attFeatures)
	mask := nn.Input(attSteps, attSteps)
	mha := layers.MultiHeadAttention(2, 3, append(opts, layers.WithAttentionMask(), layers.UseCausalMask())...)
	out := nn.Apply(layers.Flatten(), nn.Apply(mha, x, x, mask))
	m, err := nn.NewModel([]*nn.Tensor{x, mask}, []*nn.Tensor{out})
	if err != nil {
		t.Fatal(err)
	}
	m.SetSeed(11)
	return m, mha
}

// attentionData are n samples: sequences and random 0/1 masks (each row
// keeps its diagonal) as two inputs, and targets: each step's running mean
// of the features, a sum over the past that attention can learn. It also
// returns the sequences and masks in float64.
func attentionData(t *testing.T, n int) (ds data.Dataset, xs, masks []float64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(3, 9))
	const seq, msk = attSteps * attFeatures, attSteps * attSteps
	x, mk := make([]float32, n*seq), make([]float32, n*msk)
	y := make([][]float32, n)
	for i := range n {
		row := x[i*seq:][:seq]
		for k := range row {
			row[k] = float32(rng.NormFloat64())
			xs = append(xs, float64(row[k]))
		}
		for k := range msk {
			if k/attSteps == k%attSteps || rng.IntN(4) > 0 {
				mk[i*msk+k] = 1
			}
			masks = append(masks, float64(mk[i*msk+k]))
		}
		y[i] = make([]float32, seq)
		for s := range attSteps {
			for f := range attFeatures {
				sum := 0.0
				for p := 0; p <= s; p++ {
					sum += float64(row[p*attFeatures+f])
				}
				y[i][s*attFeatures+f] = float32(sum / float64(s+1))
			}
		}
	}
	ds, err := data.SliceData(data.InputTuple(data.Flat(x, attSteps, attFeatures), data.Flat(mk, attSteps, attSteps)), data.TargetRows(y))
	if err != nil {
		t.Fatal(err)
	}
	return ds, xs, masks
}

// fitAttention compiles m for dev with Adam and mean squared error and
// fits it for the given epochs.
func fitAttention(t *testing.T, m *nn.Model, ds data.Dataset, dev string, epochs int) *nn.History {
	t.Helper()
	adam, err := optim.NewAdam(optim.AdamConfig{LearningRate: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Compile(adam, losses.MeanSquaredError{}, nil, nn.OnDevice(dev)); err != nil {
		t.Fatal(err)
	}
	h, err := m.Fit(context.Background(), ds, nn.Epochs(epochs), nn.BatchSize(16), nn.Verbose(0), nn.Shuffle(false))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestMultiHeadAttentionInAModel: in a functional model on /CPU:0 the
// layer predicts what the float64 loops compute from its weights, trains
// (with dropout on the probabilities: the loss goes down), and a saved
// model loads predicting the same.
func TestMultiHeadAttentionInAModel(t *testing.T) {
	const n = 64
	ds, xs, masks := attentionData(t, n)
	m, mha := attentionModel(t, layers.AttentionDropout(0.1))
	defer m.Close()
	h := fitAttention(t, m, ds, "/CPU:0", 8)
	loss := h.Get("loss")
	if first, last := loss[0], loss[len(loss)-1]; !(last < 0.5*first) {
		t.Errorf("loss %v after 8 epochs from %v: the model did not learn", last, first)
	}
	ctx := context.Background()
	got, err := m.PredictTensor(ctx, ds)
	if err != nil {
		t.Fatal(err)
	}
	shapes := [][]int{{attSteps, attFeatures}, {attSteps, attFeatures}, {attSteps, attSteps}}
	want, _ := layers.ReferenceAttention(mha, n, shapes, [][]float64{xs, xs, masks})
	for i, g := range got.Data().([]float32) {
		if math.Abs(float64(g)-want[i]) > 1e-5*max(1, math.Abs(want[i])) {
			t.Fatalf("prediction %d: %v, float64 loops %v", i, g, want[i])
		}
	}
	// gokeras' own file and Keras' two: the calls keep their key, mask and
	// causal mask (Keras' keyword arguments), the weights their values.
	checkLoadedPredicts(t, m, ds, "mha.safetensors", "mha.keras", "mha.h5")
}

// TestMultiHeadAttentionScoresOutput: with ReturnAttentionScores the
// call's second output (nn.ApplyAll) is the scores, as the float64 loops
// compute them, and a saved model keeps the call argument: it loads
// predicting the same from .safetensors, .keras and .h5.
func TestMultiHeadAttentionScoresOutput(t *testing.T) {
	const n = 8
	_, xs, masks := attentionData(t, n)
	x := nn.Input(attSteps, attFeatures)
	mask := nn.Input(attSteps, attSteps)
	mha := layers.MultiHeadAttention(2, 3, layers.WithAttentionMask(), layers.ReturnAttentionScores())
	outs := nn.ApplyAll(mha, x, x, mask)
	if len(outs) != 2 {
		t.Fatalf("%d outputs, want 2", len(outs))
	}
	if got := outs[1].Shape(); !slices.Equal(got, []int{2, attSteps, attSteps}) {
		t.Errorf("scores of shape %v, want [2 %d %d]", got, attSteps, attSteps)
	}
	m, err := nn.NewModel([]*nn.Tensor{x, mask}, []*nn.Tensor{nn.Apply(layers.Flatten(), outs[0]), nn.Apply(layers.Flatten(), outs[1])})
	if err != nil {
		t.Fatal(err)
	}
	m.SetSeed(4)
	defer m.Close()
	compileSGD(t, m, optim.SGDConfig{}, losses.MeanSquaredError{}, "/CPU:0")
	narrow := func(v []float64) []float32 {
		out := make([]float32, len(v))
		for i, x := range v {
			out[i] = float32(x)
		}
		return out
	}
	inputs, err := data.SliceInputs(data.InputTuple(data.Flat(narrow(xs), attSteps, attFeatures), data.Flat(narrow(masks), attSteps, attSteps)))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	preds, err := m.PredictOutputs(ctx, inputs)
	if err != nil {
		t.Fatal(err)
	}
	shapes := [][]int{{attSteps, attFeatures}, {attSteps, attFeatures}, {attSteps, attSteps}}
	wantOut, wantScores := layers.ReferenceAttention(mha, n, shapes, [][]float64{xs, xs, masks})
	for k, want := range [][]float64{wantOut, wantScores} {
		got := preds[k].Values()
		if len(got) != len(want) {
			t.Fatalf("output %d: %d values, want %d", k, len(got), len(want))
		}
		for i := range got {
			if math.Abs(float64(got[i])-want[i]) > 1e-5*max(1, math.Abs(want[i])) {
				t.Fatalf("output %d, value %d: %v, float64 loops %v", k, i, got[i], want[i])
			}
		}
	}
	checkLoadedPredicts(t, m, inputs, "scores.safetensors", "scores.keras", "scores.h5")
}
