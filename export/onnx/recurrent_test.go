package onnx

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/nn"
)

// TestRecurrentRefused: a model with a recurrent layer is refused, the
// error naming the layer, rather than exported without its recurrence.
func TestRecurrentRefused(t *testing.T) {
	for _, l := range []layers.Layer{layers.SimpleRNN(2), layers.LSTM(2), layers.GRU(2)} {
		m := nn.NewSequential(layers.Input(3, 4), l, layers.Dense(1))
		m.SetSeed(1)
		if err := m.Build(3, 4); err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		err := Export(m, &b)
		if err == nil || !strings.Contains(err.Error(), l.Type()) || !strings.Contains(err.Error(), "ONNX yet") {
			t.Errorf("%s: %v", l.Type(), err)
		}
		m.Close()
	}
}
