package layers_test

import (
	"context"
	"slices"
	"testing"

	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/optim"
)

// TestRecurrentDropoutFit: an LSTM(16) with dropout and recurrent
// dropout 0.2 (and a GRU and a SimpleRNN with them, and a Bidirectional
// LSTM) trains on /CPU:0 and learns, its first epoch's loss not the one
// without dropout; Predict drops nothing: it predicts
// what the same layer without dropout predicts from the same weights, and
// the same values every time; saved and loaded, the model keeps its rates
// and predicts the same.
func TestRecurrentDropoutFit(t *testing.T) {
	drop := []layers.RecurrentOption{layers.InputDropout(0.2), layers.RecurrentDropout(0.2)}
	for _, c := range []struct {
		name string
		mk   func(...layers.RecurrentOption) layers.Layer
	}{
		{"LSTM", func(o ...layers.RecurrentOption) layers.Layer { return layers.LSTM(16, o...) }},
		{"GRU", func(o ...layers.RecurrentOption) layers.Layer { return layers.GRU(8, o...) }},
		{"SimpleRNN", func(o ...layers.RecurrentOption) layers.Layer { return layers.SimpleRNN(8, o...) }},
		{"Bidirectional", func(o ...layers.RecurrentOption) layers.Layer { return layers.Bidirectional(layers.LSTM(8, o...)) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := signModel(c.mk(drop...), 8)
			defer m.Close()
			h, ds, _ := fitSign(t, m, "/CPU:0", 15)
			loss := h.Get("loss")
			if first, last := loss[0], loss[len(loss)-1]; !(last < 0.7*first) {
				t.Errorf("loss %v after 15 epochs from %v: the model did not learn", last, first)
			}
			// Fit drops units: the first epoch's loss is not the one of the
			// same model, from the same weights, without dropout.
			ref := signModel(c.mk(), 8)
			defer ref.Close()
			if rh, _, _ := fitSign(t, ref, "/CPU:0", 1); rh.Get("loss")[0] == loss[0] {
				t.Errorf("the first epoch's loss %v is the one without dropout", loss[0])
			}
			test, ty := signData(t, 256, 8, 99)
			acc := accuracy(t, m, test, ty)
			t.Logf("loss %v -> %v, held-out accuracy %.3f", loss[0], loss[len(loss)-1], acc)
			if acc < 0.85 {
				t.Errorf("held-out accuracy %.3f, want at least 0.85", acc)
			}
			ctx := context.Background()
			got, err := m.PredictTensor(ctx, ds)
			if err != nil {
				t.Fatal(err)
			}
			again, err := m.PredictTensor(ctx, ds)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Data().([]float32), again.Data().([]float32)) {
				t.Error("two Predicts differ")
			}
			// Saved and loaded, the model keeps its rates and predicts the same.
			loaded := saveAndLoad(t, m, "model.safetensors")
			lc, err := layers.ConfigOf(loaded.Layers()[0])
			if err != nil {
				t.Fatal(err)
			}
			args := lc.Config
			if inner, ok := args["layer"].(map[string]any); ok { // Bidirectional's wrapped layer
				args, _ = inner["config"].(map[string]any)
			}
			if args["dropout"] != 0.2 || args["recurrent_dropout"] != 0.2 {
				t.Errorf("the loaded layer's dropout %v and recurrent_dropout %v, want 0.2 each", args["dropout"], args["recurrent_dropout"])
			}
			lp, err := loaded.PredictTensor(ctx, ds)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(lp.Data().([]float32), got.Data().([]float32)) {
				t.Error("the loaded model predicts other values")
			}
			plain := signModel(c.mk(), 8)
			defer plain.Close()
			if err := plain.Build(8, 1); err != nil {
				t.Fatal(err)
			}
			ws, err := m.GetWeights()
			if err != nil {
				t.Fatal(err)
			}
			if err := plain.SetWeights(ws); err != nil {
				t.Fatal(err)
			}
			compileSGD(t, plain, optim.SGDConfig{}, losses.BinaryCrossentropy{}, "/CPU:0")
			want, err := plain.PredictTensor(ctx, ds)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Data().([]float32), want.Data().([]float32)) {
				t.Error("Predict of the layer with dropout differs from the layer without it, given the same weights")
			}
		})
	}
}
