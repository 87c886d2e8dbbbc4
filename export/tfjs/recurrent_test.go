package tfjs_test

import (
	"strings"
	"testing"

	"github.com/gokeras/gokeras/export/tfjs"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/nn"
)

// TestRecurrentRefused: a model with a recurrent layer, or a
// Bidirectional one, is refused, the error naming the layer's class.
func TestRecurrentRefused(t *testing.T) {
	for _, l := range []layers.Layer{layers.SimpleRNN(2), layers.LSTM(2), layers.GRU(2), layers.Bidirectional(layers.GRU(2))} {
		m := nn.NewSequential(layers.Input(3, 4), l, layers.Dense(1))
		if err := tfjs.Check(m); err == nil || !strings.Contains(err.Error(), l.Type()+" layer to TensorFlow.js") {
			t.Errorf("%s: %v", l.Type(), err)
		}
		m.Close()
	}
}
