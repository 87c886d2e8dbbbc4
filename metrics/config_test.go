package metrics

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
)

// TestConfigRoundTrips checks every metric's config, and that FromConfig
// makes of its JSON the same metric, with nothing accumulated.
func TestConfigRoundTrips(t *testing.T) {
	two := 2
	get := func(name string) Metric {
		m, err := Get(name)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	cases := []struct {
		metric Metric
		want   string
		back   Metric // what FromConfig makes, when not metric
	}{
		{metric: &Accuracy{}, want: `{"class_name":"accuracy","config":{"name":"accuracy"}}`},
		{metric: get("acc"), want: `{"class_name":"accuracy","config":{"name":"acc"}}`},
		{metric: &CategoricalAccuracy{}, want: `{"class_name":"CategoricalAccuracy","config":{"name":"categorical_accuracy"}}`},
		{metric: &SparseCategoricalAccuracy{}, want: `{"class_name":"SparseCategoricalAccuracy","config":{"name":"sparse_categorical_accuracy"}}`},
		{metric: &BinaryAccuracy{}, want: `{"class_name":"BinaryAccuracy","config":{"name":"binary_accuracy","threshold":0.5}}`,
			back: &BinaryAccuracy{Threshold: 0.5}},
		{metric: &BinaryAccuracy{Threshold: 0.7}, want: `{"class_name":"BinaryAccuracy","config":{"name":"binary_accuracy","threshold":0.7}}`},
		{metric: &BinaryAccuracy{Threshold: math.SmallestNonzeroFloat32}, want: `{"class_name":"BinaryAccuracy","config":{"name":"binary_accuracy","threshold":1e-45}}`},
		{metric: &TopKCategoricalAccuracy{}, want: `{"class_name":"TopKCategoricalAccuracy","config":{"k":5,"name":"top_k_categorical_accuracy"}}`,
			back: &TopKCategoricalAccuracy{K: 5}},
		{metric: &SparseTopKCategoricalAccuracy{K: 3}, want: `{"class_name":"SparseTopKCategoricalAccuracy","config":{"k":3,"name":"sparse_top_k_categorical_accuracy"}}`},
		{metric: &Precision{}, want: `{"class_name":"Precision","config":{"class_id":null,"name":"precision","thresholds":null,"top_k":null}}`},
		{metric: &Precision{Threshold: 0.3, TopK: 2, ClassID: &two}, want: `{"class_name":"Precision","config":{"class_id":2,"name":"precision","thresholds":0.3,"top_k":2}}`},
		{metric: &Recall{Threshold: 0.9}, want: `{"class_name":"Recall","config":{"class_id":null,"name":"recall","thresholds":0.9,"top_k":null}}`},
		{metric: &AUC{}, want: `{"class_name":"AUC","config":{"curve":"ROC","from_logits":false,"multi_label":false,"name":"auc","num_thresholds":200,"summation_method":"interpolation"}}`,
			back: &AUC{NumThresholds: 200, Curve: "ROC", SummationMethod: "interpolation"}},
		{metric: &AUC{NumThresholds: 10, Curve: "pr", SummationMethod: "Majoring", MultiLabel: true, FromLogits: true},
			want: `{"class_name":"AUC","config":{"curve":"PR","from_logits":true,"multi_label":true,"name":"auc","num_thresholds":10,"summation_method":"majoring"}}`,
			back: &AUC{NumThresholds: 10, Curve: "PR", SummationMethod: "majoring", MultiLabel: true, FromLogits: true}},
		{metric: &F1Score{}, want: `{"class_name":"F1Score","config":{"average":null,"name":"f1_score","threshold":null}}`},
		{metric: &F1Score{Average: "micro", Threshold: 0.4}, want: `{"class_name":"F1Score","config":{"average":"micro","name":"f1_score","threshold":0.4}}`},
		{metric: &MeanAbsoluteError{}, want: `{"class_name":"MeanAbsoluteError","config":{"name":"mean_absolute_error"}}`},
		{metric: get("mae"), want: `{"class_name":"MeanAbsoluteError","config":{"name":"mae"}}`},
		{metric: get("mse"), want: `{"class_name":"MeanSquaredError","config":{"name":"mse"}}`},
		{metric: &MeanSquaredError{}, want: `{"class_name":"MeanSquaredError","config":{"name":"mean_squared_error"}}`},
		{metric: &RootMeanSquaredError{}, want: `{"class_name":"RootMeanSquaredError","config":{"name":"root_mean_squared_error"}}`},
	}
	seen := map[string]bool{}
	for _, c := range cases {
		cfg, err := ConfigOf(c.metric)
		if err != nil {
			t.Fatal(err)
		}
		seen[cfg.ClassName] = true
		js, err := json.Marshal(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if string(js) != c.want {
			t.Errorf("%#v: config %s, want %s", c.metric, js, c.want)
		}
		var read Config
		if err := json.Unmarshal(js, &read); err != nil {
			t.Fatal(err)
		}
		want := c.back
		if want == nil {
			want = c.metric
		}
		got, err := FromConfig(read)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: made %#v (%v), want %#v", js, got, err, want)
		}
	}
	for _, class := range metricClasses() {
		if !seen[class] {
			t.Errorf("no case of class %s", class)
		}
	}
}

// TestConfigStartsEmpty checks that FromConfig of a metric that has
// accumulated batches makes one that has not.
func TestConfigStartsEmpty(t *testing.T) {
	m := &Precision{}
	if err := m.Update([]float32{1, 0}, 2, []float32{0.9, 0.2}, 2); err != nil {
		t.Fatal(err)
	}
	got, err := FromConfig(must(ConfigOf(m)))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, &Precision{}) {
		t.Errorf("made %#v, want a new Precision", got)
	}
}

func must(c Config, err error) Config {
	if err != nil {
		panic(err)
	}
	return c
}

type opaqueMetric struct{ Metric }

// TestConfigErrors checks that each way a config can be wrong, and a
// metric without a config, is an error that names it.
func TestConfigErrors(t *testing.T) {
	for _, c := range []struct {
		config Config
		want   []string
	}{
		{Config{"Accurate", nil}, []string{`unknown metric class "Accurate"`, "AUC, BinaryAccuracy", "accuracy"}},
		{Config{"Accuracy", nil}, []string{`unknown metric class "Accuracy"`}},
		{Config{"Precision", map[string]any{"thresholds": []float64{0.5, 0.7}}}, []string{"Precision config", `argument "thresholds" is a JSON array where a number is wanted`}},
		{Config{"Recall", map[string]any{"dtype": "float32"}}, []string{`unknown argument "dtype"`}},
		{Config{"AUC", map[string]any{"curve": "DET"}}, []string{`curve "DET" is not ROC or PR`}},
		{Config{"AUC", map[string]any{"num_thresholds": 1}}, []string{"num_thresholds 1 must be more than 1"}},
		{Config{"CategoricalAccuracy", map[string]any{"name": "cat_acc"}}, []string{`name "cat_acc"`, `reported as "categorical_accuracy"`}},
		{Config{"accuracy", map[string]any{"name": "mae"}}, []string{`name "mae"`}},
		{Config{"MeanSquaredError", map[string]any{"name": 3}}, []string{`argument "name" is 3, not a string`}},
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
	for _, m := range []Metric{nil, (*AUC)(nil), opaqueMetric{&Accuracy{}}, &AUC{Curve: "DET"}} {
		if _, err := ConfigOf(m); err == nil {
			t.Errorf("ConfigOf(%#v) made a config", m)
		}
	}
	if _, err := ConfigOf(opaqueMetric{&Accuracy{}}); err == nil || !strings.Contains(err.Error(), "metrics.opaqueMetric, which has no config") {
		t.Errorf("ConfigOf of another package's metric: %v", err)
	}
}
