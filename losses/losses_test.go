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
		{"categorical smoothed after softmax", CategoricalCrossentropy{LabelSmoothing: 0.1}, true, false, ops.SoftmaxCrossEntropy},
		{"categorical smoothed on probabilities", CategoricalCrossentropy{LabelSmoothing: 0.1}, false, false, ops.CategoricalCrossentropy},
		{"categorical smoothed from_logits", CategoricalCrossentropy{FromLogits: true, LabelSmoothing: 0.2}, false, false, ops.SoftmaxCrossEntropy},
		{"binary smoothed after sigmoid", BinaryCrossentropy{LabelSmoothing: 0.1}, true, false, ops.SigmoidCrossEntropy},
		{"binary smoothed on probabilities", BinaryCrossentropy{LabelSmoothing: 0.1}, false, false, ops.BinaryCrossentropy},
		{"binary smoothed from_logits", BinaryCrossentropy{FromLogits: true, LabelSmoothing: 0.3}, false, false, ops.SigmoidCrossEntropy},
		{"mae ignores logits", MeanAbsoluteError{}, true, false, ops.MeanAbsoluteError},
		{"mape ignores logits", MeanAbsolutePercentageError{}, true, false, ops.MeanAbsolutePercentageError},
		{"msle ignores logits", MeanSquaredLogarithmicError{}, true, false, ops.MeanSquaredLogarithmicError},
		{"huber ignores logits", Huber{}, true, false, ops.Huber},
		{"huber with delta", Huber{Delta: 0.5}, false, false, ops.Huber},
		{"log_cosh ignores logits", LogCosh{}, true, false, ops.LogCosh},
		{"kld ignores logits", KLDivergence{}, true, false, ops.KLDivergence},
		{"poisson ignores logits", Poisson{}, true, false, ops.Poisson},
		{"hinge ignores logits", Hinge{}, true, false, ops.Hinge},
		{"squared_hinge ignores logits", SquaredHinge{}, true, false, ops.SquaredHinge},
		{"categorical_hinge ignores logits", CategoricalHinge{}, true, false, ops.CategoricalHinge},
		{"cosine_similarity ignores logits", CosineSimilarity{}, true, false, ops.CosineSimilarity},
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
			if want := wantParams(tc.loss); info.LossParams != want {
				t.Errorf("loss node has parameters %+v, want %+v", info.LossParams, want)
			}
			wantInput := pred
			if tc.withLogits && (tc.want == ops.SoftmaxCrossEntropy || tc.want == ops.SparseSoftmaxCrossEntropy || tc.want == ops.SigmoidCrossEntropy) {
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

// wantParams is the parameters the loss op of l must carry.
func wantParams(l Loss) ops.LossParams {
	switch l := l.(type) {
	case CategoricalCrossentropy:
		return ops.LossParams{LabelSmoothing: l.LabelSmoothing}
	case BinaryCrossentropy:
		return ops.LossParams{LabelSmoothing: l.LabelSmoothing}
	case Huber:
		return ops.LossParams{Delta: l.Delta}
	}
	return ops.LossParams{}
}

// TestBadArgumentsFailAtNode checks that arguments Keras would reject or
// misuse fail when the loss is added to the graph.
func TestBadArgumentsFailAtNode(t *testing.T) {
	tests := []struct {
		loss Loss
		want string
	}{
		{CategoricalCrossentropy{LabelSmoothing: 1.5}, "label smoothing must be in [0, 1]"},
		{BinaryCrossentropy{LabelSmoothing: -0.1}, "label smoothing must be in [0, 1]"},
		{Huber{Delta: -1}, "delta must be a finite number > 0"},
	}
	for _, tc := range tests {
		g := gorgonia.NewGraph()
		pred := gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(2, 3), gorgonia.WithName("pred"))
		y := gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(2, 3), gorgonia.WithName("y"))
		if _, err := tc.loss.Node(pred, nil, y); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%#v: error %v, want one saying %q", tc.loss, err, tc.want)
		}
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
		{MeanAbsoluteError{}, []int{2}, []int{2}, ""},
		{Huber{}, []int{}, []int{1}, ""},
		{Hinge{}, []int{1}, []int{1}, ""},
		{KLDivergence{}, []int{4}, []int{3}, "kl_divergence"},
		{CategoricalHinge{}, []int{1}, []int{10}, "same shape"},
		{CosineSimilarity{}, []int{3}, []int{3}, ""},
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
	all := []Loss{CategoricalCrossentropy{}, SparseCategoricalCrossentropy{}, BinaryCrossentropy{}, MeanSquaredError{},
		MeanAbsoluteError{}, MeanAbsolutePercentageError{}, MeanSquaredLogarithmicError{}, Huber{}, LogCosh{},
		KLDivergence{}, Poisson{}, Hinge{}, SquaredHinge{}, CategoricalHinge{}, CosineSimilarity{}}
	if len(all) != len(known) {
		t.Errorf("%d loss types, %d known to Get", len(all), len(known))
	}
	for _, l := range all {
		got, err := Get(l.Name())
		if err != nil || got != l {
			t.Errorf("Get(%q) = %#v, %v; want %#v, Keras' default", l.Name(), got, err, l)
		}
	}
}

// TestGetKerasNames looks up every name and alias compile(loss=...) takes
// in Keras 2 for the losses here, as Keras spells them.
func TestGetKerasNames(t *testing.T) {
	tests := []struct {
		name string
		want Loss
	}{
		{"categorical_crossentropy", CategoricalCrossentropy{}},
		{"sparse_categorical_crossentropy", SparseCategoricalCrossentropy{}},
		{"binary_crossentropy", BinaryCrossentropy{}},
		{"mean_squared_error", MeanSquaredError{}},
		{"mse", MeanSquaredError{}},
		{"MSE", MeanSquaredError{}},
		{"mean_absolute_error", MeanAbsoluteError{}},
		{"mae", MeanAbsoluteError{}},
		{"MAE", MeanAbsoluteError{}},
		{"mean_absolute_percentage_error", MeanAbsolutePercentageError{}},
		{"mape", MeanAbsolutePercentageError{}},
		{"MAPE", MeanAbsolutePercentageError{}},
		{"mean_squared_logarithmic_error", MeanSquaredLogarithmicError{}},
		{"msle", MeanSquaredLogarithmicError{}},
		{"MSLE", MeanSquaredLogarithmicError{}},
		{"huber", Huber{}},
		{"huber_loss", Huber{}},
		{"Huber", Huber{}},
		{"log_cosh", LogCosh{}},
		{"logcosh", LogCosh{}},
		{"LogCosh", LogCosh{}},
		{"kl_divergence", KLDivergence{}},
		{"kld", KLDivergence{}},
		{"KLD", KLDivergence{}},
		{"kullback_leibler_divergence", KLDivergence{}},
		{"KLDivergence", KLDivergence{}},
		{"poisson", Poisson{}},
		{"Poisson", Poisson{}},
		{"hinge", Hinge{}},
		{"Hinge", Hinge{}},
		{"squared_hinge", SquaredHinge{}},
		{"SquaredHinge", SquaredHinge{}},
		{"categorical_hinge", CategoricalHinge{}},
		{"CategoricalHinge", CategoricalHinge{}},
		{"cosine_similarity", CosineSimilarity{}},
		{"CosineSimilarity", CosineSimilarity{}},
	}
	for _, tc := range tests {
		got, err := Get(tc.name)
		if err != nil || got != tc.want {
			t.Errorf("Get(%q) = %#v, %v; want %#v", tc.name, got, err, tc.want)
		}
	}
}

func TestGetUnknownListsKnownNames(t *testing.T) {
	_, err := Get("binary_focal_crossentropy")
	if err == nil {
		t.Fatal(`Get("binary_focal_crossentropy") found a loss`)
	}
	for _, want := range []string{`"binary_focal_crossentropy"`,
		"binary_crossentropy, categorical_crossentropy, categorical_hinge, cosine_similarity, hinge, huber, huber_loss, " +
			"kl_divergence, kld, kullback_leibler_divergence, log_cosh, logcosh, mae, mape, mean_absolute_error, " +
			"mean_absolute_percentage_error, mean_squared_error, mean_squared_logarithmic_error, mse, msle, poisson, " +
			"sparse_categorical_crossentropy, squared_hinge",
		"class names"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}
