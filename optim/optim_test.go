package optim

import (
	"reflect"
	"strings"
	"testing"
)

// TestGetRoundTrips makes every optimizer by its Keras name and its class
// name, in any case, and checks it has Keras' defaults.
func TestGetRoundTrips(t *testing.T) {
	sgd, _ := NewSGD(SGDConfig{})
	adam, _ := NewAdam(AdamConfig{})
	for _, want := range []Optimizer{sgd, adam} {
		for _, name := range []string{want.Name(), strings.ToLower(want.Name()), strings.ToUpper(want.Name()), " " + want.Name() + " "} {
			got, err := Get(name)
			if err != nil {
				t.Errorf("Get(%q): %v", name, err)
				continue
			}
			if got.Name() != want.Name() || !reflect.DeepEqual(got.NextUpdate(), want.NextUpdate()) {
				t.Errorf("Get(%q) = %s %+v, want %s %+v with Keras' defaults", name, got.Name(), got.NextUpdate(), want.Name(), want.NextUpdate())
			}
		}
	}
}

func TestGetUnknownListsKnownNames(t *testing.T) {
	_, err := Get("lion")
	if err == nil {
		t.Fatal(`Get("lion") found an optimizer`)
	}
	for _, want := range []string{`"lion"`, "sgd, adam, adamw, rmsprop, adagrad, adadelta, adamax, nadam", "NewSGD"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

// TestConstructorErrorsNameTheOptimizer checks that a bad setting is an
// error that says which optimizer and which setting.
func TestConstructorErrorsNameTheOptimizer(t *testing.T) {
	for _, tc := range []struct {
		make func() error
		want []string
	}{
		{func() error { _, err := NewSGD(SGDConfig{LearningRate: -1}); return err }, []string{"SGD", "learning rate", "-1"}},
		{func() error { _, err := NewSGD(SGDConfig{Momentum: 2}); return err }, []string{"SGD", "momentum", "2"}},
		{func() error { _, err := NewAdam(AdamConfig{LearningRate: -1}); return err }, []string{"Adam", "learning rate", "-1"}},
		{func() error { _, err := NewAdam(AdamConfig{Beta2: F(1)}); return err }, []string{"Adam", "beta", "1"}},
	} {
		err := tc.make()
		if err == nil {
			t.Errorf("no error, want one saying %q", tc.want)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("error %q does not say %q", err, w)
			}
		}
	}
}
