package nn

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/metrics"
	"github.com/gokeras/gokeras/optim"
)

// A model of several outputs (NewModel) trains on the sum of its outputs'
// losses, each weighted, as Keras does: total = Σ weight·loss (plus the
// layers' regularization losses). Compile's loss and metrics go to every
// output unless LossFor, OutputLosses or MetricsFor say otherwise, and the
// logs name each output's figures after its layer (OutputNames), as Keras
// 2 does: loss, dense_1_loss, dense_2_loss, dense_1_accuracy, ...

// LossFor gives the output named output (its layer's name, see
// Model.OutputNames) its own loss, as Keras' compile(loss={"dense_1":
// ...}) does. Outputs not named take Compile's loss, which may then be
// nil only if every output has one.
func LossFor(output string, loss losses.Loss) CompileOption {
	return func(c *compileConfig) error {
		if loss == nil {
			return fmt.Errorf("LossFor(%q): no loss given", output)
		}
		if c.lossFor == nil {
			c.lossFor = map[string]losses.Loss{}
		}
		if _, ok := c.lossFor[output]; ok {
			return fmt.Errorf("LossFor(%q) given twice", output)
		}
		c.lossFor[output] = loss
		return nil
	}
}

// OutputLosses gives each output its loss, in the order of the model's
// outputs, as Keras' compile(loss=[...]) does; Compile's loss may then be
// nil.
func OutputLosses(ls ...losses.Loss) CompileOption {
	return func(c *compileConfig) error {
		for i, l := range ls {
			if l == nil {
				return fmt.Errorf("OutputLosses: loss %d is nil", i)
			}
		}
		c.outputLosses = slices.Clone(ls)
		return nil
	}
}

// LossWeights weighs the outputs' losses in the loss the model trains on
// and reports, one weight per output in order, as Keras' loss_weights:
// the total is Σ weight·loss. Each is 1 unless given.
func LossWeights(weights ...float64) CompileOption {
	return func(c *compileConfig) error {
		for i, w := range weights {
			if math.IsNaN(w) || math.IsInf(w, 0) {
				return fmt.Errorf("LossWeights: weight %d is %v: the weights must be finite", i, w)
			}
		}
		c.lossWeights = slices.Clone(weights)
		return nil
	}
}

// MetricsFor gives the output named output its own metrics instead of
// Compile's, as Keras' compile(metrics={"dense_1": [...]}) does.
func MetricsFor(output string, ms ...metrics.Metric) CompileOption {
	return func(c *compileConfig) error {
		if c.metricsFor == nil {
			c.metricsFor = map[string][]metrics.Metric{}
		}
		if _, ok := c.metricsFor[output]; ok {
			return fmt.Errorf("MetricsFor(%q) given twice", output)
		}
		c.metricsFor[output] = slices.Clone(ms)
		return nil
	}
}

// head is what Compile fixed for one of the model's outputs.
type head struct {
	// name names the output in the logs (OutputNames).
	name   string
	loss   losses.Loss
	weight float64
}

// outputLoss is the running mean of one output's loss, which a model of
// several outputs reports as <output>_loss. It sits among the compiled
// metrics, before the metrics proper, so that every figure of the logs is
// kept and reduced one way.
type outputLoss struct {
	name string
	mean metrics.Mean
}

func (o *outputLoss) Name() string { return o.name }
func (o *outputLoss) Update([]float32, int, []float32, int) error {
	return errors.New("an output's loss is read from the step, not updated from outputs")
}
func (o *outputLoss) Result() float64 { return o.mean.Result() }
func (o *outputLoss) Reset()          { o.mean.Reset() }

// resolveHeads fixes each output's loss, weight and metrics from
// Compile's arguments and options: the heads, the metrics in log order
// (the outputs' losses first when there are several, then each output's
// metrics), the output each metric reads, and the name each is logged
// under.
func resolveHeads(names []string, loss losses.Loss, ms []metrics.Metric, cfg *compileConfig) (heads []head, all []metrics.Metric, of []int, logNames []string, err error) {
	known := func(name string) error {
		if slices.Contains(names, name) {
			return nil
		}
		return fmt.Errorf("the model has no output named %q: its outputs are %s", name, strings.Join(quoteAll(names), ", "))
	}
	for name := range cfg.lossFor {
		if err := known(name); err != nil {
			return nil, nil, nil, nil, fmt.Errorf("LossFor: %w", err)
		}
	}
	for name := range cfg.metricsFor {
		if err := known(name); err != nil {
			return nil, nil, nil, nil, fmt.Errorf("MetricsFor: %w", err)
		}
	}
	if cfg.outputLosses != nil && len(cfg.outputLosses) != len(names) {
		return nil, nil, nil, nil, fmt.Errorf("OutputLosses: %d losses for %d outputs (%s): give one per output, in order", len(cfg.outputLosses), len(names), strings.Join(quoteAll(names), ", "))
	}
	if cfg.lossWeights != nil && len(cfg.lossWeights) != len(names) {
		return nil, nil, nil, nil, fmt.Errorf("LossWeights: %d weights for %d outputs (%s): give one per output, in order", len(cfg.lossWeights), len(names), strings.Join(quoteAll(names), ", "))
	}
	seenName := map[string]bool{}
	for _, n := range names {
		if seenName[n] {
			return nil, nil, nil, nil, fmt.Errorf("two outputs come from layer %q: the outputs name the logs, so each must come from its own layer (add an Identity layer to one)", n)
		}
		seenName[n] = true
	}
	multi := len(names) > 1
	heads = make([]head, len(names))
	for i, name := range names {
		h := head{name: name, loss: loss, weight: 1}
		if cfg.outputLosses != nil {
			h.loss = cfg.outputLosses[i]
		}
		if l, ok := cfg.lossFor[name]; ok {
			h.loss = l
		}
		if h.loss == nil {
			if multi {
				return nil, nil, nil, nil, fmt.Errorf("no loss for output %q: pass a loss to Compile for every output, or give this one LossFor(%q, ...)", name, name)
			}
			return nil, nil, nil, nil, errors.New("no loss given: pass one, e.g. losses.Get(\"categorical_crossentropy\")")
		}
		if cfg.lossWeights != nil {
			h.weight = cfg.lossWeights[i]
		}
		heads[i] = h
	}
	if multi {
		for i, h := range heads {
			all = append(all, &outputLoss{name: h.name + "_loss"})
			of = append(of, i)
			logNames = append(logNames, h.name+"_loss")
		}
	}
	seen := map[string]bool{"loss": true}
	for _, n := range logNames {
		seen[n] = true
	}
	for i, h := range heads {
		list, own := cfg.metricsFor[h.name]
		if !own {
			list = ms
		}
		for _, mt := range list {
			if mt == nil {
				return nil, nil, nil, nil, errors.New("nil metric")
			}
			if multi && !own {
				// Each output counts on its own copy of Compile's metric.
				c, err := metrics.ConfigOf(mt)
				if err != nil {
					return nil, nil, nil, nil, fmt.Errorf("metric %s goes to each of %d outputs, which needs a copy of it per output: %w; give each output its own with MetricsFor", mt.Name(), len(heads), err)
				}
				copied, err := metrics.FromConfig(c)
				if err != nil {
					return nil, nil, nil, nil, fmt.Errorf("copying metric %s for output %q: %w", mt.Name(), h.name, err)
				}
				mt = copied
			}
			name := mt.Name()
			if multi {
				name = h.name + "_" + name
			}
			if seen[name] {
				return nil, nil, nil, nil, fmt.Errorf("metric %q given twice", name)
			}
			if slices.Contains(all, mt) {
				return nil, nil, nil, nil, fmt.Errorf("metric %s is given to two outputs as one value: a metric counts for one output; give each its own", mt.Name())
			}
			seen[name] = true
			all = append(all, mt)
			of = append(of, i)
			logNames = append(logNames, name)
		}
	}
	return heads, all, of, logNames, nil
}

func quoteAll(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = strconv.Quote(n)
	}
	return out
}

// labelSplit is how a batch's label rows divide among the outputs: each
// output's label columns, as a program key holds them ("10,1"); empty for
// a model of one output, whose labels are all its own.
func labelSplit(parts [][]int, outputs int) string {
	if outputs < 2 {
		return ""
	}
	s := make([]string, len(parts))
	for i, p := range parts {
		n := 1
		for _, d := range p {
			n *= d
		}
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

// splitCols reads back labelSplit's columns.
func splitCols(split string) []int {
	if split == "" {
		return nil
	}
	parts := strings.Split(split, ",")
	cols := make([]int, len(parts))
	for i, p := range parts {
		cols[i], _ = strconv.Atoi(p)
	}
	return cols
}

// MarshalJSON writes the compile settings; those of a model of several
// outputs as Keras 3 writes them, each output's loss and metrics in lists.
func (cc compileConfigDocument) MarshalJSON() ([]byte, error) {
	type plain compileConfigDocument // without this method
	if cc.Outputs == nil {
		return json.Marshal(plain(cc))
	}
	return json.Marshal(struct {
		Optimizer   optim.Config       `json:"optimizer"`
		Loss        []losses.Config    `json:"loss"`
		LossWeights []float64          `json:"loss_weights"`
		Metrics     [][]metrics.Config `json:"metrics"`
	}{cc.Optimizer, cc.Outputs.Losses, cc.Outputs.Weights, cc.Outputs.Metrics})
}

// UnmarshalJSON reads the compile settings of a model of one output or of
// several (a list of losses), refusing fields it does not know.
func (cc *compileConfigDocument) UnmarshalJSON(b []byte) error {
	var raw struct {
		Optimizer   json.RawMessage `json:"optimizer"`
		Loss        json.RawMessage `json:"loss"`
		LossWeights []float64       `json:"loss_weights"`
		Metrics     json.RawMessage `json:"metrics"`
	}
	if err := decodeStrict(b, &raw); err != nil {
		return fmt.Errorf("compile_config: %w", err)
	}
	*cc = compileConfigDocument{}
	decode := func(js json.RawMessage, v any) error {
		if len(bytes.TrimSpace(js)) == 0 {
			return nil // left out: the zero value, as without this method
		}
		return decodeStrict(js, v)
	}
	if err := decode(raw.Optimizer, &cc.Optimizer); err != nil {
		return fmt.Errorf("compile_config: optimizer: %w", err)
	}
	if !bytes.HasPrefix(bytes.TrimSpace(raw.Loss), []byte("[")) {
		if raw.LossWeights != nil {
			return errors.New("compile_config: loss_weights without a list of losses: a model of one output has no loss weights")
		}
		if err := decode(raw.Loss, &cc.Loss); err != nil {
			return fmt.Errorf("compile_config: loss: %w", err)
		}
		if err := decode(raw.Metrics, &cc.Metrics); err != nil {
			return fmt.Errorf("compile_config: metrics: %w", err)
		}
		return nil
	}
	cc.Outputs = &outputsConfig{Weights: raw.LossWeights}
	if err := decode(raw.Loss, &cc.Outputs.Losses); err != nil {
		return fmt.Errorf("compile_config: loss: %w", err)
	}
	if err := decode(raw.Metrics, &cc.Outputs.Metrics); err != nil {
		return fmt.Errorf("compile_config: metrics: %w", err)
	}
	return nil
}
