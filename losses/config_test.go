package losses

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestConfigRoundTrips checks every loss's config, and that FromConfig
// makes the same loss of its JSON.
func TestConfigRoundTrips(t *testing.T) {
	cases := []struct {
		loss Loss
		want string
		back Loss // what FromConfig makes, when not loss
	}{
		{loss: CategoricalCrossentropy{}, want: `{"class_name":"CategoricalCrossentropy","config":{"from_logits":false,"label_smoothing":0}}`},
		{loss: CategoricalCrossentropy{FromLogits: true, LabelSmoothing: 0.1}, want: `{"class_name":"CategoricalCrossentropy","config":{"from_logits":true,"label_smoothing":0.1}}`},
		{loss: &CategoricalCrossentropy{LabelSmoothing: 0.2}, want: `{"class_name":"CategoricalCrossentropy","config":{"from_logits":false,"label_smoothing":0.2}}`,
			back: CategoricalCrossentropy{LabelSmoothing: 0.2}},
		{loss: SparseCategoricalCrossentropy{FromLogits: true}, want: `{"class_name":"SparseCategoricalCrossentropy","config":{"from_logits":true}}`},
		{loss: BinaryCrossentropy{FromLogits: true, LabelSmoothing: 0.3}, want: `{"class_name":"BinaryCrossentropy","config":{"from_logits":true,"label_smoothing":0.3}}`},
		{loss: MeanSquaredError{}, want: `{"class_name":"MeanSquaredError","config":{}}`},
		{loss: MeanAbsoluteError{}, want: `{"class_name":"MeanAbsoluteError","config":{}}`},
		{loss: MeanAbsolutePercentageError{}, want: `{"class_name":"MeanAbsolutePercentageError","config":{}}`},
		{loss: MeanSquaredLogarithmicError{}, want: `{"class_name":"MeanSquaredLogarithmicError","config":{}}`},
		{loss: Huber{}, want: `{"class_name":"Huber","config":{"delta":1}}`, back: Huber{Delta: 1}},
		{loss: Huber{Delta: 2.5}, want: `{"class_name":"Huber","config":{"delta":2.5}}`},
		{loss: LogCosh{}, want: `{"class_name":"LogCosh","config":{}}`},
		{loss: KLDivergence{}, want: `{"class_name":"KLDivergence","config":{}}`},
		{loss: Poisson{}, want: `{"class_name":"Poisson","config":{}}`},
		{loss: Hinge{}, want: `{"class_name":"Hinge","config":{}}`},
		{loss: SquaredHinge{}, want: `{"class_name":"SquaredHinge","config":{}}`},
		{loss: CategoricalHinge{}, want: `{"class_name":"CategoricalHinge","config":{}}`},
		{loss: CosineSimilarity{}, want: `{"class_name":"CosineSimilarity","config":{}}`},
	}
	seen := map[string]bool{}
	for _, c := range cases {
		cfg, err := ConfigOf(c.loss)
		if err != nil {
			t.Fatal(err)
		}
		seen[cfg.ClassName] = true
		js, err := json.Marshal(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if string(js) != c.want {
			t.Errorf("%#v: config %s, want %s", c.loss, js, c.want)
		}
		var read Config
		if err := json.Unmarshal(js, &read); err != nil {
			t.Fatal(err)
		}
		want := c.back
		if want == nil {
			want = c.loss
		}
		if got, err := FromConfig(read); err != nil || got != want {
			t.Errorf("%s: made %#v (%v), want %#v", js, got, err, want)
		}
	}
	for _, k := range known {
		if !seen[k.class] {
			t.Errorf("no case of class %s", k.class)
		}
	}
}

type opaqueLoss struct{ Loss }

// TestConfigErrors checks that each way a config can be wrong, and a loss
// without a config, is an error that names it.
func TestConfigErrors(t *testing.T) {
	for _, c := range []struct {
		config Config
		want   []string
	}{
		{Config{"FocalLoss", nil}, []string{`unknown loss class "FocalLoss"`, "BinaryCrossentropy, CategoricalCrossentropy"}},
		{Config{"CategoricalCrossentropy", map[string]any{"axis": -1}}, []string{"CategoricalCrossentropy config", `unknown argument "axis"`}},
		{Config{"BinaryCrossentropy", map[string]any{"from_logits": "yes"}}, []string{`argument "from_logits" is a JSON string where true or false is wanted`}},
		{Config{"CategoricalCrossentropy", map[string]any{"label_smoothing": 1.5}}, []string{"label_smoothing must be in [0, 1], got 1.5"}},
		{Config{"Huber", map[string]any{"delta": 0}}, []string{"delta must be positive, got 0"}},
		{Config{"Poisson", map[string]any{"log_input": true}}, []string{`unknown argument "log_input"`}},
	} {
		_, err := FromConfig(c.config)
		if err == nil {
			t.Errorf("%v: no error", c.config)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: the error does not say %q:\n%v", c.config, w, err)
			}
		}
	}
	if _, err := ConfigOf((*Huber)(nil)); err == nil || !strings.Contains(err.Error(), "no loss") {
		t.Errorf("ConfigOf of a nil *Huber: %v", err)
	}
	for _, l := range []Loss{nil, opaqueLoss{Hinge{}}} {
		if _, err := ConfigOf(l); err == nil || (l != nil && !strings.Contains(err.Error(), "losses.opaqueLoss, which has no config")) {
			t.Errorf("ConfigOf(%#v): %v", l, err)
		}
	}
	if got, err := FromConfig(Config{ClassName: "Huber"}); err != nil || got != (Huber{Delta: 1}) {
		t.Errorf("Huber with no arguments: %#v (%v), want Keras' delta 1", got, err)
	}
}
