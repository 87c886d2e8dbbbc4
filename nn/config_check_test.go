package nn

import (
	"strings"
	"testing"

	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/optim"
)

// TestCompileRejectsBadLayerArguments checks that arguments no input can
// make right fail at Compile, with or without a declared input shape, not
// at the first Fit.
func TestCompileRejectsBadLayerArguments(t *testing.T) {
	tests := []struct {
		name  string
		model *Sequential
		want  string
	}{
		{"Dense(0) with Input", NewSequential(layers.Input(4), layers.Dense(0)), "units must be a positive integer, got 0"},
		{"Dense(-3) without Input", NewSequential(layers.Dense(-3)), "units must be a positive integer, got -3"},
		{"Conv2D(0, 3)", NewSequential(layers.Conv2D(0, 3)), "filters must be a positive integer, got 0"},
		{"bad padding", NewSequential(layers.Conv2D(4, 3, layers.Padding("full"))), `padding "full"`},
		{"Dropout(1)", NewSequential(layers.Dense(3), layers.Dropout(1)), "rate must be in [0, 1), got 1"},
		{"Embedding(0, 4)", NewSequential(layers.Embedding(0, 4)), "input_dim and output_dim must be positive"},
		{"no layers", NewSequential(), "has no layers"},
		{"Input only", NewSequential(layers.Input(3)), "has no layers"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.model.Compile(newTestSGD(t), losses.MeanSquaredError{}, nil, OnDevice("/CPU:0"))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Compile: %v; want an error saying %q", err, tc.want)
			}
		})
	}
	// A good model without an input shape still compiles: Fit builds it.
	opt, err := optim.NewSGD(optim.SGDConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if err := NewSequential(layers.Dense(3)).Compile(opt, losses.MeanSquaredError{}, nil, OnDevice("/CPU:0")); err != nil {
		t.Errorf("a model to be built by Fit: %v", err)
	}
}
