package layers_test

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/nn"
	"gorgonia.org/tensor"
)

// TestTimeDistributed checks TimeDistributed(Dense) against the Dense
// worked out by hand at each step (its kernel and bias applied to each
// step's features), that it hands a mask on (a masked LSTM after it
// outputs what it outputs on the unpadded steps), its refusals, and the
// same predictions after a round trip through each file format.
func TestTimeDistributed(t *testing.T) {
	const n, steps, features, units = 3, 4, 2, 3
	xv := make([]float32, n*steps*features)
	for i := range xv {
		xv[i] = float32(math.Sin(float64(3*i + 1)))
	}
	clear(xv[(0*steps+3)*features : (0*steps+4)*features]) // sample 0's last step: padding
	xs, err := data.TensorInputs(tensor.New(tensor.WithShape(n, steps, features), tensor.WithBacking(xv)))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	td := layers.TimeDistributed(layers.Dense(units, layers.Tanh))
	m := nn.NewSequential(layers.Input(steps, features), td, layers.Flatten())
	if err := m.Build(steps, features); err != nil {
		t.Fatal(err)
	}
	compiled(t, m)
	defer m.Close()
	p, err := m.Predict(ctx, xs)
	if err != nil {
		t.Fatal(err)
	}
	if names := []string{td.Params()[0].Name, td.Params()[1].Name}; !slices.Equal(names, []string{"kernel", "bias"}) {
		t.Errorf("weights %v, want kernel and bias", names)
	}
	k, b := td.Params()[0].Value.Data().([]float32), td.Params()[1].Value.Data().([]float32)
	for i := range n {
		var want []float64
		for s := range steps {
			for u := range units {
				v := float64(b[u])
				for f := range features {
					v += float64(xv[(i*steps+s)*features+f]) * float64(k[f*units+u])
				}
				want = append(want, math.Tanh(v))
			}
		}
		near(t, "output", i, p.Row(i), want)
	}
	checkLoadedPredicts(t, m, xs, "m.safetensors", "m.keras", "m.h5")

	// The mask passes through: Masking, TimeDistributed(Dense), LSTM.
	masked := compiled(t, buildSeq(t, []int{steps, features}, layers.Input(steps, features), layers.Masking(0),
		layers.TimeDistributed(layers.Dense(units)), layers.LSTM(2)))
	defer masked.Close()
	w, err := masked.GetWeights()
	if err != nil {
		t.Fatal(err)
	}
	short := compiled(t, buildSeq(t, []int{steps - 1, features}, layers.Input(steps-1, features), layers.TimeDistributed(layers.Dense(units)), layers.LSTM(2)))
	defer short.Close()
	if err := short.SetWeights(w); err != nil {
		t.Fatal(err)
	}
	got := predictRows(t, masked, xv[:steps*features], 1, steps, features)[0]
	want := predictRows(t, short, xv[:(steps-1)*features], 1, steps-1, features)[0]
	for j := range want {
		if math.Abs(float64(got[j]-want[j])) > 1e-6 {
			t.Errorf("masked: %v, want %v (the steps before the padding)", got, want)
			break
		}
	}

	for _, c := range []struct {
		l    layers.Layer
		want string
	}{
		{layers.TimeDistributed(layers.Add()), "takes several inputs"},
		{layers.TimeDistributed(layers.LSTM(2, layers.ReturnState())), "return_state"},
		{layers.TimeDistributed(nil), "no layer"},
	} {
		bad := nn.NewSequential(layers.Input(steps, features), c.l)
		if err := bad.Build(steps, features); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one saying %q", c.l, err, c.want)
		}
		bad.Close()
	}
}

func buildSeq(t *testing.T, shape []int, ls ...layers.Layer) *nn.Sequential {
	t.Helper()
	m := nn.NewSequential(ls...)
	m.SetSeed(2)
	if err := m.Build(shape...); err != nil {
		t.Fatal(err)
	}
	return m
}
