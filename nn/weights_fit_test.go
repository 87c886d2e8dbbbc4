package nn

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/optim"
)

func weightedModel(t *testing.T, reference bool) *Sequential {
	t.Helper()
	m := NewSequential(layers.Input(4, 4, 2), layers.Flatten(), layers.Dense(8, layers.ReLU), layers.Dense(10, layers.Softmax))
	m.SetSeed(6)
	opt, err := optim.NewSGD(optim.SGDConfig{LearningRate: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Compile(opt, losses.CategoricalCrossentropy{}, nil, OnDevice("/CPU:0")); err != nil {
		t.Fatal(err)
	}
	m.compiled.reference = reference
	return m
}

// TestSampleAndClassWeights checks Keras' weighting: weights of 1 change
// nothing, weights of 2 double the loss, a class weighted 0 leaves only the
// others' losses (summed over the whole batch, as Keras divides), and the
// plan machine agrees with the tape machine.
func TestSampleAndClassWeights(t *testing.T) {
	data := imageData(t, 64, 4, 4, 2, 9, true)
	fit := func(reference bool, opts ...Option) []float64 {
		m := weightedModel(t, reference)
		defer m.Close()
		h, err := m.Fit(context.Background(), data, append([]Option{Epochs(2), BatchSize(64), Shuffle(false), Verbose(0)}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		if !reference {
			requirePlanMachines(t, m)
		}
		return h.Get("loss")
	}
	ones, twos := make([]float32, 64), make([]float32, 64)
	for i := range ones {
		ones[i], twos[i] = 1, 2
	}
	plain := fit(false)
	if got := fit(false, SampleWeight(ones)); got[0] != plain[0] || got[1] != plain[1] {
		t.Errorf("weights of 1: losses %v, want %v", got, plain)
	}
	// The first epoch's loss is the first step's, before any update.
	if got := fit(false, SampleWeight(twos)); math.Abs(got[0]-2*plain[0]) > 1e-6*plain[0] {
		t.Errorf("weights of 2: first loss %v, want %v", got[0], 2*plain[0])
	}
	// Class 3 weighted 0, the others 1: the first loss is the others' losses
	// summed, over the whole batch.
	cw := map[int]float64{}
	for c := range 10 {
		cw[c] = 1
	}
	cw[3] = 0
	keep := make([]float32, 64)
	labels := make([]float32, 64*10)
	if err := data.GatherLabels(seq(64), labels); err != nil {
		t.Fatal(err)
	}
	for i := range keep {
		if labels[i*10+3] != 1 {
			keep[i] = 1
		}
	}
	byClass, bySample := fit(false, ClassWeight(cw)), fit(false, SampleWeight(keep))
	if byClass[0] != bySample[0] || byClass[1] != bySample[1] {
		t.Errorf("class weights %v and the same as sample weights %v differ", byClass, bySample)
	}
	if !(byClass[0] < plain[0]) {
		t.Errorf("leaving class 3 out did not lower the first loss: %v vs %v", byClass[0], plain[0])
	}
	mixed := make([]float32, 64)
	for i := range mixed {
		mixed[i] = float32(i%5) * 0.5
	}
	tape, planned := fit(true, SampleWeight(mixed), ClassWeight(cw)), fit(false, SampleWeight(mixed), ClassWeight(cw))
	for e := range tape {
		if math.Abs(tape[e]-planned[e]) > 1e-5*tape[e] {
			t.Errorf("epoch %d: weighted loss %v on the plan machine, %v on the tape machine", e, planned[e], tape[e])
		}
	}
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

func TestWeightErrors(t *testing.T) {
	data := imageData(t, 64, 4, 4, 2, 9, true)
	for _, tc := range []struct {
		opt  Option
		want string
	}{
		{SampleWeight(make([]float32, 10)), "10 weights for 64 samples"},
		{SampleWeight([]float32{float32(math.NaN())}), "sample 0 has weight NaN"},
		{ClassWeight(map[int]float64{0: 1, 2: 1}), "1 is missing"},
		{ClassWeight(map[int]float64{0: 1, 1: 1}), "2 classes but the labels have 10"},
		{ClassWeight(map[int]float64{0: -1}), "class 0 has weight -1"},
	} {
		m := weightedModel(t, false)
		_, err := m.Fit(context.Background(), data, tc.opt, Verbose(0))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Fit: %v; want an error saying %q", err, tc.want)
		}
		m.Close()
	}
}
