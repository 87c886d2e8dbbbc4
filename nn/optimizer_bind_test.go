package nn_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/optim"
)

// TestCompileRefusesAnOptimizerOfAnotherModel: an optimizer's slots are
// keyed by variable names every model has ("dense/kernel"), so a second
// model compiled with it would train on the first one's momentum. Compile
// refuses it, naming both models; once the first model is compiled with
// another optimizer, the second may have it.
func TestCompileRefusesAnOptimizerOfAnotherModel(t *testing.T) {
	newModel := func(name string) *nn.Sequential {
		m := nn.NewSequential(layers.Input(4), layers.Dense(3, layers.Softmax))
		m.SetName(name)
		return m
	}
	shared, err := optim.NewAdam(optim.AdamConfig{})
	if err != nil {
		t.Fatal(err)
	}
	a, b := newModel("first"), newModel("second")
	compile := func(m *nn.Sequential, opt optim.Optimizer) error {
		return m.Compile(opt, losses.CategoricalCrossentropy{}, nil, nn.OnDevice("/CPU:0"))
	}
	if err := compile(a, shared); err != nil {
		t.Fatal(err)
	}
	if err := compile(a, shared); err != nil {
		t.Errorf("compiling the same model again with its own optimizer: %v", err)
	}
	err = compile(b, shared)
	if !errors.Is(err, optim.ErrBound) || !strings.Contains(err.Error(), `"first"`) || !strings.Contains(err.Error(), `"second"`) {
		t.Fatalf("second model with the first one's optimizer: %v; want an error wrapping optim.ErrBound naming both models", err)
	}
	other, err := optim.NewSGD(optim.SGDConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if err := compile(a, other); err != nil {
		t.Fatal(err)
	}
	if err := compile(b, shared); err != nil {
		t.Errorf("after the first model took another optimizer, the second could not have the old one: %v", err)
	}
}
