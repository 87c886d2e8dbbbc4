package layers_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/optim"
	"gorgonia.org/tensor"
)

// TestBidirectional checks Bidirectional around each layer, for each
// merge mode, with and without return_sequences: its outputs against the
// forward and backward cells worked out in float64 from its two halves'
// weights (the backward sequence put back in the order of the steps),
// merged as Keras merges them (within 1e-5); Keras' weight names; and
// the same predictions after a round trip through each file format.
func TestBidirectional(t *testing.T) {
	const n, steps, units = 5, 4, 3
	xv := make([]float32, n*steps)
	for i := range xv {
		xv[i] = float32(math.Sin(float64(7*i+3))) * 1.3
	}
	xs, err := data.TensorInputs(tensor.New(tensor.WithShape(n, steps, 1), tensor.WithBacking(xv)))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, kind := range []string{"LSTM", "GRU", "SimpleRNN"} {
		for _, mode := range []string{"concat", "sum", "mul", "ave", ""} {
			for _, seq := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/mode=%q/sequences=%t", kind, mode, seq), func(t *testing.T) {
					mk := map[string]func(int, ...layers.RecurrentOption) *layers.RecurrentLayer{"LSTM": layers.LSTM, "GRU": layers.GRU, "SimpleRNN": layers.SimpleRNN}[kind]
					var opts []layers.RecurrentOption
					if seq {
						opts = append(opts, layers.ReturnSequences())
					}
					bi := layers.Bidirectional(mk(units, opts...), layers.MergeMode(mode))
					in := nn.Input(steps, 1)
					outs := nn.ApplyAll(bi, in)
					if want := map[bool]int{true: 2, false: 1}[mode == ""]; len(outs) != want {
						t.Fatalf("%d outputs, want %d", len(outs), want)
					}
					for i := range outs {
						if seq {
							outs[i] = nn.Apply(layers.Flatten(), outs[i])
						}
					}
					m, err := nn.NewModel([]*nn.Tensor{in}, outs)
					if err != nil {
						t.Fatal(err)
					}
					defer m.Close()
					m.SetSeed(8)
					compileSGD(t, m, optim.SGDConfig{LearningRate: 0.01}, losses.MeanSquaredError{}, "/CPU:0")
					got, err := m.PredictOutputs(ctx, xs)
					if err != nil {
						t.Fatal(err)
					}
					ps := bi.Params()
					lower := map[string]string{"LSTM": "lstm", "GRU": "gru", "SimpleRNN": "simple_rnn"}[kind]
					if name := ps[0].Name; name != "forward_"+lower+"/"+lower+"_cell/kernel" {
						t.Errorf("first weight named %q", name)
					}
					if name := ps[len(ps)/2].Name; name != "backward_"+lower+"/"+lower+"_cell/kernel" {
						t.Errorf("first backward weight named %q", name)
					}
					var fw, bw [][]float32
					for i, p := range ps {
						if i < len(ps)/2 {
							fw = append(fw, p.Value.Data().([]float32))
						} else {
							bw = append(bw, p.Value.Data().([]float32))
						}
					}
					for i := range n {
						x := make([][]float64, steps)
						for k := range x {
							x[k] = []float64{float64(xv[i*steps+k])}
						}
						fo, fh, _ := refStates(kind, units, false, fw, x)
						bo, bh, _ := refStates(kind, units, true, bw, x)
						a, b := fh, bh
						if seq {
							slices.Reverse(bo) // back in the order of the steps
							a, b = slices.Concat(fo...), slices.Concat(bo...)
						}
						var want []float64
						for j := range a {
							switch mode {
							case "sum":
								want = append(want, a[j]+b[j])
							case "mul":
								want = append(want, a[j]*b[j])
							case "ave":
								want = append(want, (a[j]+b[j])/2)
							}
						}
						switch mode {
						case "concat":
							if seq {
								for k := range steps {
									want = append(want, a[k*units:(k+1)*units]...)
									want = append(want, b[k*units:(k+1)*units]...)
								}
							} else {
								want = slices.Concat(a, b)
							}
						case "":
							near(t, "backward output", i, got[1].Row(i), b)
							want = a
						}
						near(t, "output", i, got[0].Row(i), want)
					}
					checkLoadedPredicts(t, m, xs, "m.safetensors", "m.keras", "m.h5")
				})
			}
		}
	}
}
