package nn

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/metrics"
	"github.com/gokeras/gokeras/optim"
)

// Keras files' training settings: Keras 3's compile_config (beside the
// model's config in a .keras archive's config.json) and Keras 2's
// training_config attribute of an .h5 model file. LoadModel compiles the
// model with them, as Keras' load_model does, when they name an optimizer
// and a loss gokeras has; read as the layers are (kerasLayer): Keras'
// extra arguments accepted at their defaults, anything else an error
// naming it. The optimizer's state is read from a .keras archive
// (restoreKerasOptimizer), not from a Keras 2 file: training then goes on
// from fresh slots (Adam's moments at zero).

// metaKerasCompile holds, in a Keras file read by readKerasFile, the JSON
// of its training settings.
const metaKerasCompile = metaPrefix + "keras.compile"

// kerasOptimizerDefaults are arguments of Keras' optimizer configs that
// gokeras' optimizers do not take, with the values that mean what gokeras
// does; anyDefault accepts every value (a setting without effect here).
var kerasOptimizerDefaults = map[string]any{
	"name":                        anyDefault,
	"use_ema":                     false,
	"ema_momentum":                anyDefault, // read only with use_ema
	"ema_overwrite_frequency":     anyDefault,
	"loss_scale_factor":           nil,
	"gradient_accumulation_steps": nil,
	"jit_compile":                 anyDefault,
	"is_legacy_optimizer":         false,
	"decay":                       0.0,
	"weight_decay":                nil,
}

// kerasLossDefaults are the arguments of Keras' loss configs gokeras'
// losses do not take, at their values that mean what gokeras does.
var kerasLossDefaults = map[string]any{
	"name":      anyDefault,
	"reduction": anyDefault, // checked by kerasReduction
	"dtype":     nil,
	"axis":      -1.0,
}

// anyDefault marks an argument accepted whatever its value.
var anyDefault = &struct{}{}

// kerasTrainingConfig is both files' training settings, as far as read.
type kerasTrainingConfig struct {
	Optimizer       json.RawMessage `json:"optimizer"`        // Keras 3
	OptimizerConfig json.RawMessage `json:"optimizer_config"` // Keras 2
	Loss            json.RawMessage `json:"loss"`
	Metrics         json.RawMessage `json:"metrics"`
	WeightedMetrics json.RawMessage `json:"weighted_metrics"`
	LossWeights     json.RawMessage `json:"loss_weights"`
}

// kerasCompile reads training settings (JSON) for a model whose outputs
// are named outputs. ok is false when they name no loss (Keras compiles
// without one; gokeras needs one): the model then stays uncompiled. A
// loss, loss weight or list of metrics per output (Keras' lists in output
// order, or objects by output name) comes back as compile options.
func kerasCompile(js, where string, outputs ...string) (opt optim.Optimizer, loss losses.Loss, ms []metrics.Metric, opts []CompileOption, ok bool, err error) {
	var tc kerasTrainingConfig
	if err := decodeNumbers([]byte(js), &tc); err != nil {
		return nil, nil, nil, nil, false, fmt.Errorf("%s: its training settings are not valid JSON: %v", where, err)
	}
	if isNull(tc.Loss) {
		return nil, nil, nil, nil, false, nil
	}
	fix := "load it with nn.LoadCompiled(false) and compile it yourself"
	if !isNull(tc.WeightedMetrics) {
		return nil, nil, nil, nil, false, fmt.Errorf("%s: its training settings have weighted_metrics %s, which gokeras does not read from Keras files: %s", where, tc.WeightedMetrics, fix)
	}
	optJSON := tc.Optimizer
	if isNull(optJSON) {
		optJSON = tc.OptimizerConfig
	}
	if opt, err = kerasOptimizer(optJSON); err != nil {
		return nil, nil, nil, nil, false, fmt.Errorf("%s: the optimizer of its training settings: %w: %s", where, err, fix)
	}
	fail := func(what string, err error) (optim.Optimizer, losses.Loss, []metrics.Metric, []CompileOption, bool, error) {
		return nil, nil, nil, nil, false, fmt.Errorf("%s: the %s of its training settings: %w: %s", where, what, err, fix)
	}
	n := max(len(outputs), 1)
	if each, per, err := kerasPerOutput(tc.Loss, outputs, "a loss"); err != nil {
		return fail("loss", err)
	} else if per && n > 1 {
		ls := make([]losses.Loss, n)
		for i, js := range each {
			if ls[i], err = kerasLoss(js); err != nil {
				return fail(fmt.Sprintf("loss of output %q", outputs[i]), err)
			}
		}
		opts = append(opts, OutputLosses(ls...))
	} else {
		if per {
			tc.Loss = each[0]
		}
		if loss, err = kerasLoss(tc.Loss); err != nil {
			return fail("loss", err)
		}
	}
	if !isNull(tc.LossWeights) {
		each, _, err := kerasPerOutput(tc.LossWeights, outputs, "a loss weight")
		if err != nil {
			return fail("loss_weights", err)
		}
		ws := make([]float64, len(each))
		for i, js := range each {
			if err := json.Unmarshal(js, &ws[i]); err != nil {
				return fail("loss_weights", fmt.Errorf("%s is not a number", js))
			}
		}
		opts = append(opts, LossWeights(ws...))
	}
	if each, per, err := kerasPerOutput(tc.Metrics, outputs, "a list of metrics"); err == nil && per && n > 1 && nestedLists(tc.Metrics) {
		for i, js := range each {
			m, err := kerasMetrics(js)
			if err != nil {
				return fail(fmt.Sprintf("metrics of output %q", outputs[i]), err)
			}
			opts = append(opts, MetricsFor(outputs[i], m...))
		}
	} else if ms, err = kerasMetrics(tc.Metrics); err != nil {
		return fail("metrics", err)
	}
	return opt, loss, ms, opts, true, nil
}

// nestedLists says whether js is a list of lists (Keras' metrics per
// output) or an object by output name, not a list of metrics.
func nestedLists(js json.RawMessage) bool {
	b := strings.TrimSpace(string(js))
	if strings.HasPrefix(b, "{") {
		return true
	}
	var list []json.RawMessage
	if json.Unmarshal(js, &list) != nil || len(list) == 0 {
		return false
	}
	for _, item := range list {
		if !strings.HasPrefix(strings.TrimSpace(string(item)), "[") {
			return false
		}
	}
	return true
}

// kerasPerOutput reads a setting (what: "a loss", ...) given per output,
// as a list in the order of outputs or an object by output name, into a
// list in output order; per is false for a setting given once (a name, a
// number or a serialized object).
func kerasPerOutput(js json.RawMessage, outputs []string, what string) (each []json.RawMessage, per bool, err error) {
	b := strings.TrimSpace(string(js))
	n := max(len(outputs), 1)
	switch {
	case strings.HasPrefix(b, "["):
		if err := json.Unmarshal(js, &each); err != nil {
			return nil, false, err
		}
	case strings.HasPrefix(b, "{") && !strings.Contains(b, `"class_name"`):
		var byName map[string]json.RawMessage
		if err := json.Unmarshal(js, &byName); err != nil {
			return nil, false, err
		}
		if len(byName) != len(outputs) {
			return nil, false, fmt.Errorf("%s is %s per output for %d outputs, but the model has %d (%s)", js, what, len(byName), len(outputs), strings.Join(outputs, ", "))
		}
		for _, name := range outputs {
			v, ok := byName[name]
			if !ok {
				return nil, false, fmt.Errorf("%s is %s per output without output %q (the model's outputs: %s)", js, what, name, strings.Join(outputs, ", "))
			}
			each = append(each, v)
		}
	default:
		return []json.RawMessage{js}, false, nil
	}
	if len(each) != n {
		return nil, false, fmt.Errorf("%s is %s per output for %d outputs, but the model has %d", js, what, len(each), n)
	}
	return each, true, nil
}

// kerasOptimizer reads an optimizer: a name ("adam") or a serialized one.
func kerasOptimizer(js json.RawMessage) (optim.Optimizer, error) {
	if isNull(js) {
		return nil, fmt.Errorf("none given")
	}
	var name string
	if json.Unmarshal(js, &name) == nil {
		return optim.Get(name)
	}
	class, cfg, err := kerasSerialized(js)
	if err != nil {
		return nil, err
	}
	// Keras 2.11's optimizers are registered as "Custom>Adam".
	class = strings.TrimPrefix(class, "Custom>")
	if useEMA, _ := cfg["use_ema"].(bool); useEMA {
		return nil, fmt.Errorf("%s with use_ema true: gokeras keeps no moving average of the weights", class)
	}
	if lr, ok := cfg["learning_rate"].(map[string]any); ok {
		// A schedule, which Keras 3 serializes with its module.
		cfg["learning_rate"] = kerasObject(lr)
	}
	if wd, ok := number(cfg["weight_decay"]); ok && wd == 0 && class != "AdamW" {
		delete(cfg, "weight_decay") // Keras 3 writes 0 or null for none
	}
	var o optim.Optimizer
	err = withoutDefaults(cfg, defaultsIn(kerasOptimizerDefaults), class, func() (err error) {
		o, err = optim.FromConfig(optim.Config{ClassName: class, Config: cfg})
		return err
	})
	return o, err
}

// kerasLoss reads a loss: a name or a serialized one.
func kerasLoss(js json.RawMessage) (losses.Loss, error) {
	var name string
	if json.Unmarshal(js, &name) == nil {
		return losses.Get(name)
	}
	if b := strings.TrimSpace(string(js)); strings.HasPrefix(b, "[") || (strings.HasPrefix(b, "{") && !strings.Contains(b, `"class_name"`)) {
		return nil, fmt.Errorf("%s is a loss per output, which gokeras does not read from Keras files", js)
	}
	class, cfg, err := kerasSerialized(js)
	if err != nil {
		return nil, err
	}
	if r, ok := cfg["reduction"]; ok {
		if s, _ := r.(string); s != "auto" && s != "sum_over_batch_size" {
			return nil, fmt.Errorf("%s with reduction %s: gokeras' losses take the batch mean (sum_over_batch_size)", class, jsonOf(r))
		}
	}
	if class == "LossFunctionWrapper" {
		// Keras 3 wraps a function given by name: {"fn": "mse", ...}.
		if fn, ok := cfg["fn"].(string); ok {
			return losses.Get(fn)
		}
	}
	var l losses.Loss
	err = withoutDefaults(cfg, defaultsIn(kerasLossDefaults), class, func() (err error) {
		l, err = losses.FromConfig(losses.Config{ClassName: class, Config: cfg})
		return err
	})
	return l, err
}

// kerasMetrics reads the metrics: a list of names or serialized metrics,
// or Keras 2's list of one such list per output (one output here).
func kerasMetrics(js json.RawMessage) ([]metrics.Metric, error) {
	if isNull(js) {
		return nil, nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal(js, &list); err != nil {
		return nil, fmt.Errorf("%s is not a list of metrics", js)
	}
	if len(list) == 1 && strings.HasPrefix(strings.TrimSpace(string(list[0])), "[") {
		if err := json.Unmarshal(list[0], &list); err != nil {
			return nil, fmt.Errorf("%s is not a list of metrics", js)
		}
	}
	var ms []metrics.Metric
	for _, item := range list {
		m, err := kerasMetric(item)
		if err != nil {
			return nil, err
		}
		ms = append(ms, m)
	}
	return ms, nil
}

func kerasMetric(js json.RawMessage) (metrics.Metric, error) {
	var name string
	if json.Unmarshal(js, &name) == nil {
		return metrics.Get(name)
	}
	class, cfg, err := kerasSerialized(js)
	if err != nil {
		return nil, err
	}
	if class == "MeanMetricWrapper" {
		// A function given by name, reported under the metric's name
		// ("acc" for categorical_accuracy, in Keras 2).
		fn, _ := cfg["fn"].(string)
		name, _ := cfg["name"].(string)
		if m, err := metrics.Get(name); err == nil && name != "" {
			if _, err := metrics.Get(fn); err == nil {
				return m, nil
			}
		}
		return metrics.Get(fn)
	}
	var m metrics.Metric
	err = withoutDefaults(cfg, defaultsIn(map[string]any{"name": anyDefault, "dtype": anyDefault}), class, func() (err error) {
		m, err = metrics.FromConfig(metrics.Config{ClassName: class, Config: cfg})
		return err
	})
	return m, err
}

// kerasSerialized reads a serialized Keras object: its class and config,
// Keras 3's module and registered_name left out.
func kerasSerialized(js json.RawMessage) (string, map[string]any, error) {
	var obj struct {
		ClassName string         `json:"class_name"`
		Config    map[string]any `json:"config"`
	}
	if err := decodeNumbers(js, &obj); err != nil || obj.ClassName == "" {
		return "", nil, fmt.Errorf("%s is neither a name nor a serialized Keras object", js)
	}
	if obj.Config == nil {
		obj.Config = map[string]any{}
	}
	return obj.ClassName, obj.Config, nil
}

// withoutDefaults calls make until it succeeds, dropping from cfg each
// argument it does not know whose value is the one defaultOf gives (or any
// value, for anyDefault); any other unknown argument is the error. It is
// how every Keras config (layers, optimizers, losses, metrics) is read.
func withoutDefaults(cfg map[string]any, defaultOf func(key string) (any, bool), class string, make func() error) error {
	for {
		err := make()
		if err == nil {
			return nil
		}
		key, unknown := unknownArgument(err)
		if !unknown {
			return err
		}
		want, known := defaultOf(key)
		if !known || (want != anyDefault && !sameJSON(cfg[key], want)) {
			return fmt.Errorf("Keras argument %s = %s has no gokeras equivalent (gokeras' %s does what Keras does with its default, %s)",
				key, jsonOf(cfg[key]), class, kerasDefaultText(known, want))
		}
		delete(cfg, key)
	}
}

// defaultsIn looks a default up in a table.
func defaultsIn(table map[string]any) func(string) (any, bool) {
	return func(key string) (any, bool) {
		want, ok := table[key]
		return want, ok
	}
}

func isNull(js json.RawMessage) bool {
	s := strings.TrimSpace(string(js))
	return s == "" || s == "null"
}
