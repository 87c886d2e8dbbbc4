package nn

import (
	"strings"
	"testing"
)

// Training settings as Keras writes them: read into gokeras' optimizer,
// loss and metrics, or refused naming what gokeras cannot do.
func TestKerasCompileSettings(t *testing.T) {
	tests := []struct {
		name, js string
		ok       bool
		opt      string
		metrics  int
		err      string
	}{
		{"Keras 3", `{"optimizer": {"module": "keras.optimizers", "class_name": "SGD", "config": {"name": "SGD", "learning_rate": 0.01, "weight_decay": null, "clipnorm": null, "global_clipnorm": null, "clipvalue": null, "use_ema": false, "ema_momentum": 0.99, "ema_overwrite_frequency": null, "loss_scale_factor": null, "gradient_accumulation_steps": null, "momentum": 0.9, "nesterov": true}, "registered_name": null}, "loss": {"module": "keras.losses", "class_name": "CategoricalCrossentropy", "config": {"name": "categorical_crossentropy", "reduction": "sum_over_batch_size", "from_logits": true, "label_smoothing": 0.1, "axis": -1}, "registered_name": null}, "loss_weights": null, "metrics": ["accuracy"], "weighted_metrics": null, "run_eagerly": false, "steps_per_execution": 1, "jit_compile": true}`,
			true, "SGD", 1, ""},
		{"Keras 2.11", `{"loss": "mse", "metrics": [["mae"]], "weighted_metrics": null, "loss_weights": null, "optimizer_config": {"class_name": "Custom>RMSprop", "config": {"name": "RMSprop", "weight_decay": null, "clipnorm": null, "global_clipnorm": null, "clipvalue": null, "use_ema": false, "ema_momentum": 0.99, "ema_overwrite_frequency": 100, "jit_compile": false, "is_legacy_optimizer": false, "learning_rate": 0.001, "rho": 0.9, "momentum": 0.0, "epsilon": 1e-07, "centered": false}}}`,
			true, "RMSprop", 1, ""},
		{"by name", `{"optimizer": "adamax", "loss": "sparse_categorical_crossentropy", "metrics": null}`, true, "Adamax", 0, ""},
		{"no loss", `{"loss": null, "optimizer_config": {"class_name": "Adam", "config": {}}}`, false, "", 0, ""},
		{"EMA", `{"optimizer": {"class_name": "Adam", "config": {"use_ema": true}}, "loss": "mse"}`, false, "", 0, "use_ema"},
		{"a loss per output", `{"optimizer": "adam", "loss": {"a": "mse", "b": "mae"}}`, false, "", 0, "a loss per output"},
		{"weighted metrics", `{"optimizer": "adam", "loss": "mse", "weighted_metrics": ["mae"]}`, false, "", 0, "weighted_metrics"},
		{"a sum reduction", `{"optimizer": "adam", "loss": {"class_name": "MeanSquaredError", "config": {"reduction": "sum"}}}`, false, "", 0, "reduction"},
		{"an unknown argument", `{"optimizer": {"class_name": "Adam", "config": {"amsgrad": false, "foo": 1}}, "loss": "mse"}`, false, "", 0, "foo = 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opt, loss, ms, _, ok, err := kerasCompile(tc.js, "f.keras")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "LoadCompiled(false)") {
					t.Fatalf("error %v, want one saying %q and the fix", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ok != tc.ok {
				t.Fatalf("ok %t, want %t", ok, tc.ok)
			}
			if !ok {
				return
			}
			if opt.Name() != tc.opt || loss == nil || len(ms) != tc.metrics {
				t.Errorf("optimizer %s, loss %v, %d metrics; want %s, a loss, %d metrics", opt.Name(), loss, len(ms), tc.opt, tc.metrics)
			}
		})
	}
}
