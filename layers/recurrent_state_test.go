package layers_test

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/optim"
	"gorgonia.org/tensor"
)

// refStates runs a recurrent layer's cell over one sample x (steps,
// features) in float64 from its weights, as Keras' cells compute: the
// output of every step read, and the last h and c.
func refStates(kind string, units int, backwards bool, w [][]float32, x [][]float64) (outs [][]float64, h, c []float64) {
	return refStatesFrom(kind, units, backwards, w, x, make([]float64, units), make([]float64, units))
}

// refStatesFrom is refStates from the initial states h0 and c0.
func refStatesFrom(kind string, units int, backwards bool, w [][]float32, x [][]float64, h0, c0 []float64) (outs [][]float64, h, c []float64) {
	sig := func(v float64) float64 { return 1 / (1 + math.Exp(-v)) }
	g := map[string]int{"LSTM": 4, "GRU": 3, "SimpleRNN": 1}[kind]
	gu := g * units
	h, c = slices.Clone(h0), slices.Clone(c0)
	order := make([]int, len(x))
	for k := range order {
		order[k] = k
		if backwards {
			order[k] = len(x) - 1 - k
		}
	}
	for _, t := range order {
		xp, hp := make([]float64, gu), make([]float64, gu) // x·kernel + b_in, h·recurrent_kernel + b_rec
		for j := range gu {
			for f, v := range x[t] {
				xp[j] += v * float64(w[0][f*gu+j])
			}
			for i := range units {
				hp[j] += h[i] * float64(w[1][i*gu+j])
			}
			xp[j] += float64(w[2][j])
			if kind == "GRU" {
				hp[j] += float64(w[2][gu+j])
			}
		}
		next := make([]float64, units)
		for j := range units {
			switch kind {
			case "SimpleRNN":
				next[j] = math.Tanh(xp[j] + hp[j])
			case "LSTM":
				i, f := sig(xp[j]+hp[j]), sig(xp[units+j]+hp[units+j])
				cc, o := math.Tanh(xp[2*units+j]+hp[2*units+j]), sig(xp[3*units+j]+hp[3*units+j])
				c[j] = f*c[j] + i*cc
				next[j] = o * math.Tanh(c[j])
			case "GRU":
				z, r := sig(xp[j]+hp[j]), sig(xp[units+j]+hp[units+j])
				cand := math.Tanh(xp[2*units+j] + r*hp[2*units+j])
				next[j] = z*h[j] + (1-z)*cand
			}
		}
		h = next
		outs = append(outs, slices.Clone(h))
	}
	return outs, h, c
}

// TestRecurrentReturnState checks return_state in a functional model for
// each layer, read forwards and backwards, with and without
// return_sequences: ApplyAll's outputs are the output and the last
// states, of Keras' shapes, computed as the cells worked out in float64
// compute them (within 1e-5); the summary lists the call's shapes; and
// the model predicts the same after a round trip through each file
// format (safetensors, .keras, Keras 2's .h5).
func TestRecurrentReturnState(t *testing.T) {
	const n, steps, units = 6, 5, 3
	xv := make([]float32, n*steps)
	for i := range xv {
		xv[i] = float32(math.Sin(float64(3*i+1))) * 1.5
	}
	ds, err := data.TensorInputs(tensor.New(tensor.WithShape(n, steps, 1), tensor.WithBacking(xv)))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, kind := range []string{"LSTM", "GRU", "SimpleRNN"} {
		for _, v := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
			seq, back := v[0], v[1]
			t.Run(fmt.Sprintf("%s/sequences=%t/backwards=%t", kind, seq, back), func(t *testing.T) {
				opts := []layers.RecurrentOption{layers.ReturnState()}
				if seq {
					opts = append(opts, layers.ReturnSequences())
				}
				if back {
					opts = append(opts, layers.GoBackwards())
				}
				rec := map[string]func(int, ...layers.RecurrentOption) *layers.RecurrentLayer{"LSTM": layers.LSTM, "GRU": layers.GRU, "SimpleRNN": layers.SimpleRNN}[kind](units, opts...)
				in := nn.Input(steps, 1)
				outs := nn.ApplyAll(rec, in)
				states := 1
				if kind == "LSTM" {
					states = 2
				}
				if len(outs) != 1+states {
					t.Fatalf("ApplyAll gave %d tensors, want %d", len(outs), 1+states)
				}
				wantFirst := []int{units}
				if seq {
					wantFirst = []int{steps, units}
				}
				if !slices.Equal(outs[0].Shape(), wantFirst) || !slices.Equal(outs[1].Shape(), []int{units}) {
					t.Errorf("shapes %v and %v, want %v and [%d]", outs[0].Shape(), outs[1].Shape(), wantFirst, units)
				}
				first := outs[0]
				if seq {
					first = nn.Apply(layers.Flatten(), first)
				}
				m, err := nn.NewModel([]*nn.Tensor{in}, append([]*nn.Tensor{first}, outs[1:]...))
				if err != nil {
					t.Fatal(err)
				}
				defer m.Close()
				m.SetSeed(4)
				compileSGD(t, m, optim.SGDConfig{LearningRate: 0.01}, losses.MeanSquaredError{}, "/CPU:0")
				got, err := m.PredictOutputs(ctx, ds)
				if err != nil {
					t.Fatal(err)
				}
				var w [][]float32
				for _, p := range rec.Params() {
					w = append(w, p.Value.Data().([]float32))
				}
				for i := range n {
					x := make([][]float64, steps)
					for k := range x {
						x[k] = []float64{float64(xv[i*steps+k])}
					}
					seqOut, h, c := refStates(kind, units, back, w, x)
					var want []float64
					if seq {
						want = slices.Concat(seqOut...)
					} else {
						want = h
					}
					near(t, "output", i, got[0].Row(i), want)
					near(t, "h", i, got[1].Row(i), h)
					if kind == "LSTM" {
						near(t, "c", i, got[2].Row(i), c)
					}
				}
				var sb strings.Builder
				if err := m.Summary(&sb); err != nil {
					t.Fatal(err)
				}
				shape := fmt.Sprintf(`\(%s\) +\[\(None, %d\),[^\n]*\n +\(None, %d\)`, kind, units, units) // Keras wraps the list
				if seq {
					shape = fmt.Sprintf(`\(%s\) +\[\(None, %d, %d\),[^\n]*\n +\(None, %d\)`, kind, steps, units, units)
				}
				if !regexp.MustCompile(shape).MatchString(sb.String()) {
					t.Errorf("the summary has no shapes %q:\n%s", shape, sb.String())
				}
				checkLoadedPredicts(t, m, ds, "m.safetensors", "m.keras", "m.h5")
			})
		}
	}
}

func near(t *testing.T, what string, sample int, got []float32, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("sample %d: %s has %d values, want %d", sample, what, len(got), len(want))
		return
	}
	for j := range want {
		if math.Abs(float64(got[j])-want[j]) > 1e-5 {
			t.Errorf("sample %d: %s %v, want %v", sample, what, got, want)
			return
		}
	}
}

// TestReturnStateInSequential checks that a Sequential model refuses a
// layer with return_state, whose several outputs it cannot pass on,
// naming the way out.
func TestReturnStateInSequential(t *testing.T) {
	m := signModel(layers.LSTM(3, layers.ReturnState()), 4)
	defer m.Close()
	sgd, err := optim.NewSGD(optim.SGDConfig{LearningRate: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	err = m.Compile(sgd, losses.BinaryCrossentropy{}, nil, nn.OnDevice("/CPU:0"))
	if err == nil {
		var ds data.Inputs
		if ds, err = data.TensorInputs(tensor.New(tensor.WithShape(2, 4, 1), tensor.WithBacking(make([]float32, 8)))); err != nil {
			t.Fatal(err)
		}
		_, err = m.PredictTensor(context.Background(), ds)
	}
	if err == nil || !strings.Contains(err.Error(), "nn.ApplyAll") {
		t.Errorf("error %v, want one naming nn.ApplyAll", err)
	}
}

// TestRecurrentInitialState checks initial states as inputs (Keras'
// initial_state) in an encoder-decoder of each layer: the encoder's last
// states start the decoder, which reads the sequence again backwards;
// the decoder's outputs are those of its cell worked out in float64 from
// the encoder's states (within 1e-5); the summary connects the decoder to
// the three tensors; the model trains (the loss falls, the gradient
// reaching the encoder through the states); and it predicts the same
// after a round trip through each file format.
func TestRecurrentInitialState(t *testing.T) {
	const n, steps, units = 32, 4, 3
	xv, yv := make([]float32, n*steps), make([]float32, n)
	for i := range xv {
		xv[i] = float32(math.Cos(float64(5*i+2))) * 1.2
	}
	for i := range yv {
		yv[i] = float32(math.Sin(float64(i))) * 0.5
	}
	ctx := context.Background()
	for _, kind := range []string{"LSTM", "GRU", "SimpleRNN"} {
		t.Run(kind, func(t *testing.T) {
			mk := map[string]func(int, ...layers.RecurrentOption) *layers.RecurrentLayer{"LSTM": layers.LSTM, "GRU": layers.GRU, "SimpleRNN": layers.SimpleRNN}[kind]
			enc, dec := mk(units, layers.ReturnState()), mk(units, layers.ReturnSequences(), layers.GoBackwards())
			in := nn.Input(steps, 1)
			encOut := nn.ApplyAll(enc, in)
			seq := nn.Apply(dec, append([]*nn.Tensor{in}, encOut[1:]...)...)
			m, err := nn.NewModel([]*nn.Tensor{in}, []*nn.Tensor{nn.Apply(layers.Dense(1), nn.Apply(layers.Flatten(), seq))})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			m.SetSeed(6)
			compileSGD(t, m, optim.SGDConfig{LearningRate: 0.05}, losses.MeanSquaredError{}, "/CPU:0")
			xs, err := data.TensorInputs(tensor.New(tensor.WithShape(n, steps, 1), tensor.WithBacking(xv)))
			if err != nil {
				t.Fatal(err)
			}
			// The decoder's outputs, from a model of the same layers.
			view, err := nn.NewModel([]*nn.Tensor{in}, []*nn.Tensor{nn.Apply(layers.Flatten(), seq)})
			if err != nil {
				t.Fatal(err)
			}
			sgd2, err := optim.NewSGD(optim.SGDConfig{LearningRate: 0.05})
			if err != nil {
				t.Fatal(err)
			}
			defer view.Close()
			if err := view.Compile(sgd2, losses.MeanSquaredError{}, nil, nn.OnDevice("/CPU:0")); err != nil {
				t.Fatal(err)
			}
			got, err := view.Predict(ctx, xs)
			if err != nil {
				t.Fatal(err)
			}
			param := func(l *layers.RecurrentLayer) (w [][]float32) {
				for _, p := range l.Params() {
					w = append(w, p.Value.Data().([]float32))
				}
				return w
			}
			for i := range n {
				x := make([][]float64, steps)
				for k := range x {
					x[k] = []float64{float64(xv[i*steps+k])}
				}
				_, h, c := refStates(kind, units, false, param(enc), x)
				outs, _, _ := refStatesFrom(kind, units, true, param(dec), x, h, c)
				near(t, "decoder output", i, got.Row(i), slices.Concat(outs...))
			}
			var sb strings.Builder
			if err := m.Summary(&sb); err != nil {
				t.Fatal(err)
			}
			name := strings.ToLower(kind)
			if kind == "SimpleRNN" {
				name = "simple_rnn"
			}
			connected := fmt.Sprintf(`'input_1\[0\]\[0\]',\s+'%s\[0\]\[1\]'`, name)
			if !regexp.MustCompile(connected).MatchString(sb.String()) {
				t.Errorf("the summary does not connect the decoder to %s...:\n%s", connected, sb.String())
			}
			ds, err := data.TensorData(tensor.New(tensor.WithShape(n, steps, 1), tensor.WithBacking(xv)), tensor.New(tensor.WithShape(n, 1), tensor.WithBacking(yv)))
			if err != nil {
				t.Fatal(err)
			}
			encBefore := slices.Clone(enc.Params()[1].Value.Data().([]float32))
			hist, err := m.Fit(ctx, ds, nn.Epochs(5), nn.BatchSize(8), nn.Verbose(0))
			if err != nil {
				t.Fatal(err)
			}
			if l := hist.Get("loss"); !(l[len(l)-1] < l[0]) {
				t.Errorf("loss %v: the model did not learn", l)
			}
			if slices.Equal(encBefore, enc.Params()[1].Value.Data().([]float32)) {
				t.Error("training left the encoder's recurrent kernel as it was: no gradient reached it through the states")
			}
			checkLoadedPredicts(t, m, xs, "m.safetensors", "m.keras", "m.h5")
		})
	}
}
