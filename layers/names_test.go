package layers_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/safetensors"
)

// namedLayers makes one of each layer, with the given options.
var namedLayers = []struct {
	typ  string
	make func(...layers.Option) layers.Layer
}{
	{"Input", func(o ...layers.Option) layers.Layer { return layers.Input(4).With(o...) }},
	{"Flatten", func(o ...layers.Option) layers.Layer { return layers.Flatten(o...) }},
	{"Dense", func(o ...layers.Option) layers.Layer {
		opts := []layers.DenseOption{layers.ReLU}
		for _, x := range o {
			opts = append(opts, x)
		}
		return layers.Dense(3, opts...)
	}},
	{"Activation", func(o ...layers.Option) layers.Layer { return layers.NewActivation(layers.Softmax, o...) }},
}

func TestEveryLayerAcceptsNamed(t *testing.T) {
	for _, tc := range namedLayers {
		t.Run(tc.typ, func(t *testing.T) {
			if got := tc.make().Name(); got != "" {
				t.Errorf("unnamed %s has the name %q before a model names it", tc.typ, got)
			}
			if got := tc.make(layers.Named("mine")).Name(); got != "mine" {
				t.Errorf("%s with Named(\"mine\") is named %q", tc.typ, got)
			}
			if got := tc.make(layers.Named("first"), nil, layers.Named("second")).Name(); got != "second" {
				t.Errorf("%s with two Named options is named %q, want the last, \"second\"", tc.typ, got)
			}
		})
	}
}

// TestNamesInSummaryAndWeights checks that a name given with Named is the
// layer's in Summary and in its weights' names, that the others keep
// Keras' automatic names, and that a named layer does not use up an
// automatic one.
func TestNamesInSummaryAndWeights(t *testing.T) {
	tests := []struct {
		name         string
		layers       []layers.Layer
		summaryNames []string // "name (Type)", in order
		weightNames  []string
	}{
		{
			"automatic",
			[]layers.Layer{layers.Input(2, 2), layers.Flatten(), layers.Dense(3), layers.NewActivation(layers.ReLU), layers.Dense(2)},
			[]string{"flatten (Flatten)", "dense (Dense)", "activation (Activation)", "dense_1 (Dense)"},
			[]string{"dense/kernel", "dense/bias", "dense_1/kernel", "dense_1/bias"},
		},
		{
			"every layer named",
			[]layers.Layer{
				layers.Input(2, 2).With(layers.Named("pixels")),
				layers.Flatten(layers.Named("flat")),
				layers.Dense(3, layers.ReLU, layers.Named("hidden")),
				layers.NewActivation(layers.Tanh, layers.Named("squash")),
				layers.Dense(2, layers.Named("scores"), layers.WithoutBias()),
			},
			[]string{"flat (Flatten)", "hidden (Dense)", "squash (Activation)", "scores (Dense)"},
			[]string{"hidden/kernel", "hidden/bias", "scores/kernel"},
		},
		{
			"some named",
			[]layers.Layer{layers.Input(4), layers.Dense(3, layers.Named("hidden")), layers.Dense(3), layers.Dense(2)},
			[]string{"hidden (Dense)", "dense (Dense)", "dense_1 (Dense)"},
			[]string{"hidden/kernel", "hidden/bias", "dense/kernel", "dense/bias", "dense_1/kernel", "dense_1/bias"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := nn.NewSequential(tc.layers...)
			m.SetSeed(1)
			var b strings.Builder
			if err := m.Summary(&b); err != nil {
				t.Fatal(err)
			}
			var rows []string
			for _, line := range strings.Split(b.String(), "\n") {
				if f := strings.Fields(line); len(f) >= 2 && strings.HasPrefix(f[1], "(") && f[0] != "Layer" {
					rows = append(rows, f[0]+" "+f[1])
				}
			}
			if !slices.Equal(rows, tc.summaryNames) {
				t.Errorf("summary names %q, want %q\n%s", rows, tc.summaryNames, b.String())
			}
			path := filepath.Join(t.TempDir(), "w.safetensors")
			if err := m.SaveWeights(path); err != nil {
				t.Fatal(err)
			}
			f, err := safetensors.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			got, want := f.Names(), slices.Clone(tc.weightNames)
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("weight names %q, want %q", got, want)
			}
		})
	}
}

// TestBadNamesFailTheBuild checks that empty names, names with "/" and
// names used twice are errors, when the model is built, that say which
// layers and what to do.
func TestBadNamesFailTheBuild(t *testing.T) {
	var tests []struct {
		name   string
		layers []layers.Layer
		want   []string
	}
	add := func(name string, want []string, ls ...layers.Layer) {
		tests = append(tests, struct {
			name   string
			layers []layers.Layer
			want   []string
		}{name, ls, want})
	}
	for _, l := range namedLayers[1:] { // a Sequential model keeps no Input layer
		add(l.typ+" named empty", []string{`layers.Named("")`, "must not be empty", "leave Named out", "layer 2 (" + l.typ + ")"},
			layers.Dense(4), l.make(layers.Named("")))
		add(l.typ+" named with a slash", []string{`layers.Named("a/b")`, `must not contain "/"`, "layer 1 (" + l.typ + ")"},
			l.make(layers.Named("a/b")), layers.Dense(2))
		add(l.typ+" named twice", []string{`layers 1 (Dense) and 3 (` + l.typ + `) are both named "x"`, "unique", "layers.Named"},
			layers.Dense(4, layers.Named("x")), layers.Dense(4), l.make(layers.Named("x")))
	}
	add("a name an automatic one takes", []string{`layers 1 (Dense) and 2 (Dense) are both named "dense"`},
		layers.Dense(4, layers.Named("dense")), layers.Dense(4))
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := nn.NewSequential(tc.layers...)
			err := m.Build(4)
			if err == nil {
				t.Fatal("the model was built")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if m.Built() {
				t.Error("the model counts as built after the error")
			}
		})
	}
}

// TestBuildRefusesABadNameOutsideAModel checks that a layer built on its
// own reports a name Named refused too.
func TestBuildRefusesABadNameOutsideAModel(t *testing.T) {
	for _, tc := range namedLayers {
		if _, err := tc.make(layers.Named("")).Build([]int{4}, nil); err == nil || !strings.Contains(err.Error(), "must not be empty") {
			t.Errorf("%s named \"\": Build returned %v", tc.typ, err)
		}
	}
}
