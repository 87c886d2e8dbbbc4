package losses

import (
	"strings"
	"testing"

	"github.com/gokeras/gokeras/ops"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestLogitsAreUsedAsKerasUsesThem checks which computation each loss
// picks: the logit form when the output came from a sigmoid or softmax (or
// FromLogits is set), the probability form otherwise.
func TestLogitsAreUsedAsKerasUsesThem(t *testing.T) {
	tests := []struct {
		name       string
		loss       Loss
		withLogits bool
		sparse     bool
		want       ops.LossKind
	}{
		{"categorical after softmax/sigmoid", CategoricalCrossentropy{}, true, false, ops.SoftmaxCrossEntropy},
		{"categorical on probabilities", CategoricalCrossentropy{}, false, false, ops.CategoricalCrossentropy},
		{"categorical from_logits", CategoricalCrossentropy{FromLogits: true}, false, false, ops.SoftmaxCrossEntropy},
		{"sparse after softmax", SparseCategoricalCrossentropy{}, true, true, ops.SparseSoftmaxCrossEntropy},
		{"sparse on probabilities", SparseCategoricalCrossentropy{}, false, true, ops.SparseCategoricalCrossentropy},
		{"binary after sigmoid", BinaryCrossentropy{}, true, false, ops.SigmoidCrossEntropy},
		{"binary on probabilities", BinaryCrossentropy{}, false, false, ops.BinaryCrossentropy},
		{"mse ignores logits", MeanSquaredError{}, true, false, ops.MeanSquaredError},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := gorgonia.NewGraph()
			pred := gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(2, 3), gorgonia.WithName("pred"))
			var logits *gorgonia.Node
			if tc.withLogits {
				logits = gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(2, 3), gorgonia.WithName("logits"))
			}
			cols := 3
			if tc.sparse {
				cols = 1
			}
			y := gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(2, cols), gorgonia.WithName("y"))
			n, err := tc.loss.Node(pred, logits, y)
			if err != nil {
				t.Fatal(err)
			}
			info, ok := ops.Inspect(n.Op())
			if !ok || info.Kind != ops.OpLoss || info.Loss != tc.want {
				t.Fatalf("loss node is %v, want %v", n.Op(), tc.want)
			}
			wantInput := pred
			if tc.withLogits && tc.want != ops.MeanSquaredError {
				wantInput = logits
			}
			// gorgonia's edges run from a node to its inputs.
			if !g.HasEdgeFromTo(n.ID(), wantInput.ID()) {
				t.Errorf("the loss does not read %s", wantInput.Name())
			}
			if other := map[bool]*gorgonia.Node{true: pred, false: logits}[wantInput == logits]; other != nil && g.HasEdgeFromTo(n.ID(), other.ID()) {
				t.Errorf("the loss reads %s as well", other.Name())
			}
		})
	}
}

func TestCheckLabels(t *testing.T) {
	tests := []struct {
		loss        Loss
		label, out  []int
		wantErrText string // "" for no error
	}{
		{CategoricalCrossentropy{}, []int{10}, []int{10}, ""},
		{CategoricalCrossentropy{}, []int{1}, []int{10}, "sparse_categorical_crossentropy"},
		{CategoricalCrossentropy{}, []int{5}, []int{10}, "same shape"},
		{SparseCategoricalCrossentropy{}, []int{1}, []int{10}, ""},
		{SparseCategoricalCrossentropy{}, []int{}, []int{10}, ""},
		{SparseCategoricalCrossentropy{}, []int{10}, []int{10}, "one-hot"},
		{BinaryCrossentropy{}, []int{1}, []int{1}, ""},
		{MeanSquaredError{}, []int{3}, []int{2}, "(None, 3)"},
	}
	for _, tc := range tests {
		err := tc.loss.CheckLabels(tc.label, tc.out)
		switch {
		case tc.wantErrText == "" && err != nil:
			t.Errorf("%s labels %v output %v: unexpected error %v", tc.loss.Name(), tc.label, tc.out, err)
		case tc.wantErrText != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErrText)):
			t.Errorf("%s labels %v output %v: error %v, want one mentioning %q", tc.loss.Name(), tc.label, tc.out, err, tc.wantErrText)
		}
	}
}

// TestGetRoundTrips looks up every loss by its Keras name, its aliases and
// its class name, in any case, and every loss type by the name it reports.
func TestGetRoundTrips(t *testing.T) {
	for _, k := range known {
		for _, name := range append([]string{k.class, strings.ToUpper(k.names[0]), " " + k.names[0] + " "}, k.names...) {
			l, err := Get(name)
			if err != nil || l.Name() != k.names[0] {
				t.Errorf("Get(%q) = %v, %v; want %s", name, l, err, k.names[0])
			}
		}
	}
	for _, l := range []Loss{CategoricalCrossentropy{}, SparseCategoricalCrossentropy{}, BinaryCrossentropy{}, MeanSquaredError{}} {
		got, err := Get(l.Name())
		if err != nil || got != l {
			t.Errorf("Get(%q) = %#v, %v; want %#v, Keras' default", l.Name(), got, err, l)
		}
	}
}

func TestGetUnknownListsKnownNames(t *testing.T) {
	_, err := Get("hinge")
	if err == nil {
		t.Fatal(`Get("hinge") found a loss`)
	}
	for _, want := range []string{`"hinge"`, "binary_crossentropy, categorical_crossentropy, mean_squared_error, mse, sparse_categorical_crossentropy", "class names"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}
