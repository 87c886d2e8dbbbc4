package nn_test

import (
	"strings"
	"testing"

	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/nn"
)

// flagship is the seeds' CIFAR-10 MLP.
func flagship() *nn.Sequential {
	return nn.NewSequential(
		layers.Input(32, 32, 3),
		layers.Flatten(),
		layers.Dense(3000, layers.ReLU),
		layers.Dense(1000, layers.ReLU),
		layers.Dense(10, layers.Sigmoid),
	)
}

func TestSummaryOfTheFlagshipModel(t *testing.T) {
	model := flagship()
	model.SetSeed(1)
	var b strings.Builder
	if err := model.Summary(&b); err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		`Model: "sequential"`,
		`_________________________________________________________________`,
		` Layer (type)                Output Shape              Param #   `,
		`=================================================================`,
		` flatten (Flatten)           (None, 3072)              0         `,
		`                                                                 `,
		` dense (Dense)               (None, 3000)              9219000   `,
		`                                                                 `,
		` dense_1 (Dense)             (None, 1000)              3001000   `,
		`                                                                 `,
		` dense_2 (Dense)             (None, 10)                10010     `,
		`                                                                 `,
		`=================================================================`,
		`Total params: 12,230,010`,
		`Trainable params: 12,230,010`,
		`Non-trainable params: 0`,
		`_________________________________________________________________`,
		``,
	}, "\n")
	if got := b.String(); got != want {
		t.Errorf("summary:\n%s\nwant:\n%s", got, want)
	}
	if n := model.CountParams(); n != 12230010 {
		t.Errorf("CountParams = %d, want 12230010", n)
	}
}

func TestSummaryNeedsAShape(t *testing.T) {
	model := nn.NewSequential(layers.Flatten(), layers.Dense(3))
	var b strings.Builder
	err := model.Summary(&b)
	if err == nil || !strings.Contains(err.Error(), "Build") {
		t.Fatalf("Summary of an unbuilt model returned %v, want an error that says to Build", err)
	}
}

func TestBuildErrors(t *testing.T) {
	tests := []struct {
		name  string
		model *nn.Sequential
		shape []int
		want  string
	}{
		{"a convolution on flat samples", nn.NewSequential(layers.Conv2D(3, 3)), []int{32}, "expects images"},
		{"no layers", nn.NewSequential(), []int{4}, "no layers"},
		{"zero units", nn.NewSequential(layers.Dense(0)), []int{4}, "units must be a positive integer"},
		{"bad shape", nn.NewSequential(layers.Dense(2)), []int{0}, "non-positive"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.model.Build(tc.shape...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Build(%v) = %v, want an error mentioning %q", tc.shape, err, tc.want)
			}
		})
	}
}
