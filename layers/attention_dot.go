package layers

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/gokeras/gokeras/internal/formats/configargs"
	"github.com/gokeras/gokeras/internal/formats/shapes"
	"github.com/gokeras/gokeras/ops"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// DotAttentionOption configures an Attention layer: UseScale, ScoreMode,
// AttentionDropout, UseCausalMask, or any Option, such as Named.
type DotAttentionOption interface {
	applyDotAttention(*AttentionLayer)
}

// SharedAttentionOption is an option both MultiHeadAttention and
// Attention take: AttentionDropout, UseCausalMask.
type SharedAttentionOption interface {
	AttentionOption
	DotAttentionOption
}

type sharedAttentionOption struct {
	mha func(*MultiHeadAttentionLayer)
	dot func(*AttentionLayer)
}

func (o sharedAttentionOption) applyAttention(l *MultiHeadAttentionLayer) { o.mha(l) }
func (o sharedAttentionOption) applyDotAttention(l *AttentionLayer)       { o.dot(l) }

type dotAttentionOption func(*AttentionLayer)

func (f dotAttentionOption) applyDotAttention(l *AttentionLayer) { f(l) }
func (o nameOption) applyDotAttention(l *AttentionLayer)         { o.applyLayer(&l.named) }

// UseScale gives an Attention layer a trained scalar that multiplies its
// scores (Keras' use_scale=True): the weight "scale", starting at 1.
func UseScale() DotAttentionOption {
	return dotAttentionOption(func(l *AttentionLayer) { l.useScale = true })
}

// ScoreMode sets how an Attention layer scores a query against a key
// (Keras' score_mode): "dot", the default, their dot product; "concat",
// the sum of tanh(query + key) over the features, times a trained scalar
// "concat_score_weight" starting at 1.
func ScoreMode(mode string) DotAttentionOption {
	return dotAttentionOption(func(l *AttentionLayer) { l.scoreMode = mode })
}

// AttentionLayer is keras.layers.Attention (Keras 2): dot-product
// attention, as in Luong et al. It is applied, in a functional model, to
// a query of samples (T_q, d) and a value (T_v, d_v), then optionally a
// key (T_v, d) (the value when left out): each query step's scores over
// the key's steps (the dot products, or with ScoreMode("concat") the sum
// of tanh(query + key)), through softmax, weight the value's steps; the
// output has samples (T_q, d_v). With UseScale the scores are multiplied
// by a trained scalar. Keras' query and value masks are not taken yet.
type AttentionLayer struct {
	named
	// additive makes the layer AdditiveAttention.
	additive  bool
	useScale  bool
	scoreMode string
	dropout   float64
	causal    bool
	noScale   bool
	key       uint64
	// scale and concat are the scalar weights, when the layer has them,
	// each of shape (1) (Keras: a scalar).
	scale, concat *Param
}

// Attention makes a dot-product attention layer, like
// keras.layers.Attention(): no scale, score_mode "dot", no dropout.
func Attention(opts ...DotAttentionOption) *AttentionLayer {
	l := &AttentionLayer{scoreMode: "dot"}
	for _, o := range opts {
		if o != nil {
			o.applyDotAttention(l)
		}
	}
	return l
}

// AdditiveAttention makes an additive attention layer, like
// keras.layers.AdditiveAttention() (Bahdanau-style): each query step's
// score for a key step is Σ scale·tanh(query + key) over the features,
// with scale a trained vector of the features (the weight "scale",
// glorot_uniform; Keras' default use_scale=True), or Σ tanh(query + key)
// with WithoutAttentionScale. It takes the Attention layer's inputs,
// AttentionDropout and UseCausalMask.
func AdditiveAttention(opts ...DotAttentionOption) *AttentionLayer {
	l := Attention(opts...)
	l.additive, l.useScale = true, !l.noScale
	return l
}

// WithoutAttentionScale gives an AdditiveAttention layer no scale vector
// (Keras' use_scale=False).
func WithoutAttentionScale() DotAttentionOption {
	return dotAttentionOption(func(l *AttentionLayer) { l.noScale, l.useScale = true, false })
}

// Type returns "Attention" or "AdditiveAttention".
func (l *AttentionLayer) Type() string {
	if l.additive {
		return "AdditiveAttention"
	}
	return "Attention"
}

// CheckConfig checks the layer's arguments.
func (l *AttentionLayer) CheckConfig() error {
	if l.nameErr != nil {
		return fmt.Errorf("Attention layer: %w", l.nameErr)
	}
	if !l.additive && l.scoreMode != "dot" && l.scoreMode != "concat" {
		return fmt.Errorf("Attention layer %q: score_mode %q: received: score_mode=%s. Acceptable values are: [\"dot\", \"concat\"]", l.name, l.scoreMode, l.scoreMode)
	}
	if !(l.dropout >= 0 && l.dropout < 1) {
		return fmt.Errorf("Attention layer %q: dropout must be in [0, 1), got %v", l.name, l.dropout)
	}
	return nil
}

// PlanInputs returns the output's sample shape, (T_q, d_v).
func (l *AttentionLayer) PlanInputs(in [][]int) ([]int, error) {
	if err := l.CheckConfig(); err != nil {
		return nil, err
	}
	if len(in) != 2 && len(in) != 3 {
		return nil, fmt.Errorf("Attention layer %q: applied to %d inputs; apply it to [query, value] or [query, value, key]", l.name, len(in))
	}
	q, v := in[0], in[1]
	k := v
	if len(in) == 3 {
		k = in[2]
	}
	for i, s := range [][]int{q, v, k} {
		if len(s) != 2 {
			return nil, fmt.Errorf("Attention layer %q: the %s has samples of shape %s: gokeras' Attention takes sequences, samples (steps, features)", l.name, []string{"query", "value", "key"}[i], shapes.String(s))
		}
	}
	if k[0] != v[0] {
		return nil, fmt.Errorf("Attention layer %q: the key has %d steps and the value %d: they must have the same steps", l.name, k[0], v[0])
	}
	if q[1] != k[1] {
		return nil, fmt.Errorf("Attention layer %q: the query has %d features and the key %d: they must have the same features", l.name, q[1], k[1])
	}
	return []int{q[0], v[1]}, nil
}

// weightShapes lists the weights: scale (1) and concat_score_weight (1)
// for Attention, those it has; scale (features) for AdditiveAttention.
func (l *AttentionLayer) weightShapes(queryShape []int) []WeightShape {
	var ws []WeightShape
	if l.additive {
		if l.useScale {
			ws = append(ws, WeightShape{"scale", []int{queryShape[1]}})
		}
		return ws
	}
	if l.useScale {
		ws = append(ws, WeightShape{"scale", []int{1}})
	}
	if l.scoreMode == "concat" {
		ws = append(ws, WeightShape{"concat_score_weight", []int{1}})
	}
	return ws
}

// planInputs is PlanInputs with the weights BuildInputs makes.
func (l *AttentionLayer) planInputs(in [][]int) ([]int, []WeightShape, error) {
	out, err := l.PlanInputs(in)
	if err != nil {
		return nil, nil, err
	}
	return out, l.weightShapes(in[0]), nil
}

// BuildInputs creates the scalars (ones) and draws the dropout's key.
func (l *AttentionLayer) BuildInputs(in [][]int, rng *rand.Rand) ([]int, error) {
	out, err := l.PlanInputs(in)
	if err != nil {
		return nil, err
	}
	l.scale, l.concat = nil, nil
	for _, w := range l.weightShapes(in[0]) {
		p := &Param{Name: w.Name, Value: tensor.New(tensor.Of(tensor.Float32), tensor.WithShape(w.Shape...))}
		vals := p.Value.Data().([]float32)
		switch {
		case l.additive: // Keras' glorot_uniform of a vector: both fans its size
			GlorotUniform().Fill(vals, w.Shape[0], w.Shape[0], rng)
		default: // ones
			vals[0] = 1
		}
		if w.Name == "scale" {
			l.scale = p
		} else {
			l.concat = p
		}
	}
	l.key = rng.Uint64()
	return out, nil
}

func (l *AttentionLayer) oneInput() error {
	return fmt.Errorf("Attention layer %q: apply it to a query and a value (and optionally a key) with nn.Apply, in a functional model", l.name)
}

// Build is an error: the layer takes a query and a value (nn.Apply).
func (l *AttentionLayer) Build([]int, *rand.Rand) ([]int, error) { return nil, l.oneInput() }

// plan is an error, as Build is.
func (l *AttentionLayer) plan([]int) ([]int, []WeightShape, error) { return nil, nil, l.oneInput() }

// Call is an error, as Build is.
func (l *AttentionLayer) Call(Flow, []*gorgonia.Node) (Flow, error) { return Flow{}, l.oneInput() }

// Params returns scale and concat_score_weight, those the layer has.
func (l *AttentionLayer) Params() []*Param {
	var ps []*Param
	for _, p := range []*Param{l.scale, l.concat} {
		if p != nil {
			ps = append(ps, p)
		}
	}
	return ps
}

// UsesStep reports whether the layer drops attention weights.
func (l *AttentionLayer) UsesStep() bool { return l.dropout > 0 }

// CallInputs adds the attention to the graph.
func (l *AttentionLayer) CallInputs(in []Flow, params []*gorgonia.Node) (Flow, error) {
	shapeList := make([][]int, len(in))
	for i, f := range in {
		if f.Node == nil || f.Node.Dims() != 3 {
			return Flow{}, fmt.Errorf("Attention layer %q: input %d is not a batch of sequences", l.name, i)
		}
		shapeList[i] = f.Node.Shape()[1:]
	}
	if _, err := l.PlanInputs(shapeList); err != nil {
		return Flow{}, err
	}
	if len(params) != len(l.Params()) {
		return Flow{}, fmt.Errorf("Attention layer %q: got %d weight nodes for %d weights (was the layer built?)", l.name, len(params), len(l.Params()))
	}
	out, err := l.attend(in, params)
	if err != nil {
		return Flow{}, fmt.Errorf("Attention layer %q: %w", l.name, err)
	}
	return out, nil
}

func (l *AttentionLayer) attend(in []Flow, params []*gorgonia.Node) (Flow, error) {
	q, v := in[0].Node, in[1].Node
	k := v
	if len(in) == 3 {
		k = in[2].Node
	}
	needsGrad := slices.ContainsFunc(in, func(f Flow) bool { return f.NeedsGrad }) || len(params) > 0
	g, dt := q.Graph(), q.Dtype()
	b, tq, d := q.Shape()[0], q.Shape()[1], q.Shape()[2]
	tv := v.Shape()[1]
	var scale, concat *gorgonia.Node
	next := 0
	if l.useScale {
		scale, next = params[0], 1
	}
	if l.scoreMode == "concat" && !l.additive {
		concat = params[next]
	}
	scalar := func(w *gorgonia.Node, rank int) (*gorgonia.Node, error) {
		ones := make([]int, rank)
		for i := range ones {
			ones[i] = 1
		}
		return ops.Reshape(w, ones, true)
	}
	var scores *gorgonia.Node
	var err error
	if l.scoreMode == "dot" && !l.additive {
		if scores, err = ops.BatchDot(q, k, 2, 2); err != nil {
			return Flow{}, err
		}
		if scale != nil {
			s, err := scalar(scale, 3)
			if err == nil {
				scores, err = ops.Multiply(scores, s)
			}
			if err != nil {
				return Flow{}, err
			}
		}
	} else {
		// sum over the features of tanh(scale·(q + k)), per query and
		// key step, times concat_score_weight.
		q4, err := ops.Reshape(q, []int{b, tq, 1, d}, true)
		if err != nil {
			return Flow{}, err
		}
		k4, err := ops.Reshape(k, []int{b, 1, tv, d}, true)
		if err != nil {
			return Flow{}, err
		}
		sum, err := ops.Add(q4, k4)
		if err != nil {
			return Flow{}, err
		}
		if scale != nil && !l.additive {
			s, err := scalar(scale, 4)
			if err == nil {
				sum, err = ops.Multiply(sum, s)
			}
			if err != nil {
				return Flow{}, err
			}
		}
		th, err := ops.Activate(ops.Tanh, sum)
		if err != nil {
			return Flow{}, err
		}
		rows, err := ops.Reshape(th, []int{b * tq * tv, d}, true)
		if err != nil {
			return Flow{}, err
		}
		// The sum over the features, weighted by AdditiveAttention's
		// scale.
		weights := constantNode(g, dt, l.name+"/feature_sum", []int{d, 1}, 1)
		if l.additive && scale != nil {
			if weights, err = ops.Reshape(scale, []int{d, 1}, true); err != nil {
				return Flow{}, err
			}
		}
		summed, err := ops.Affine(rows, weights, nil, true)
		if err != nil {
			return Flow{}, err
		}
		if scores, err = ops.Reshape(summed, []int{b, tq, tv}, true); err != nil {
			return Flow{}, err
		}
		if concat != nil {
			c, err := scalar(concat, 3)
			if err == nil {
				scores, err = ops.Multiply(scores, c)
			}
			if err != nil {
				return Flow{}, err
			}
		}
	}
	if l.causal {
		m := make([]float32, tq*tv)
		for i := range tq {
			for j := i + 1; j < tv; j++ {
				m[i*tv+j] = -1e9
			}
		}
		if scores, err = ops.Add(scores, constantValues(g, dt, l.name+"/causal_mask", []int{1, tq, tv}, m)); err != nil {
			return Flow{}, err
		}
	}
	weights, err := ops.Activate(ops.Softmax, scores)
	if err != nil {
		return Flow{}, err
	}
	if in[0].Training && l.dropout > 0 {
		if in[0].Step == nil {
			return Flow{}, errNoStep
		}
		if weights, err = ops.Dropout(weights, in[0].Step, ops.DropoutParams{Rate: l.dropout, Key: l.key}); err != nil {
			return Flow{}, err
		}
	}
	out, err := ops.BatchDot(weights, v, 2, 1)
	if err != nil {
		return Flow{}, err
	}
	return Flow{Node: out, NeedsGrad: needsGrad}, nil
}

// Config returns "Attention" with Keras 2's arguments: name, use_scale,
// score_mode and dropout; with UseCausalMask also causal: true, the
// argument Keras 2 reads for it (Keras 3 takes it in the call).
func (l *AttentionLayer) Config() (Config, error) {
	args := map[string]any{"name": l.name, "use_scale": l.useScale, "score_mode": l.scoreMode, "dropout": l.dropout}
	if l.additive {
		delete(args, "score_mode")
	}
	if l.causal {
		args["causal"] = true
	}
	return Config{ClassName: l.Type(), Config: args}, nil
}

func attentionFromConfig(args map[string]any) (Layer, error) {
	a := struct {
		baseArgs
		UseScale  bool     `json:"use_scale"`
		ScoreMode string   `json:"score_mode"`
		Dropout   float64  `json:"dropout"`
		Causal    bool     `json:"causal"`
		Seed      *float64 `json:"seed"`
	}{ScoreMode: "dot"}
	if err := configargs.Decode(args, &a); err != nil {
		return nil, err
	}
	opts := []DotAttentionOption{ScoreMode(a.ScoreMode), AttentionDropout(a.Dropout)}
	if a.UseScale {
		opts = append(opts, UseScale())
	}
	if a.Causal {
		opts = append(opts, UseCausalMask())
	}
	for _, o := range a.nameOptions() {
		opts = append(opts, o)
	}
	return Attention(opts...), nil
}

// ONNXInputs is an error: the ONNX export does not map Attention yet.
func (l *AttentionLayer) ONNXInputs(ONNXGraph, []string) (string, error) {
	return "", fmt.Errorf("%s layer %q: the ONNX export does not support %s yet: export a model without it, or save it as a Keras file (nn.SaveKeras)", l.Type(), l.name, l.Type())
}

func additiveAttentionFromConfig(args map[string]any) (Layer, error) {
	a := struct {
		baseArgs
		UseScale bool     `json:"use_scale"`
		Dropout  float64  `json:"dropout"`
		Causal   bool     `json:"causal"`
		Seed     *float64 `json:"seed"`
	}{UseScale: true}
	if err := configargs.Decode(args, &a); err != nil {
		return nil, err
	}
	opts := []DotAttentionOption{AttentionDropout(a.Dropout)}
	if !a.UseScale {
		opts = append(opts, WithoutAttentionScale())
	}
	if a.Causal {
		opts = append(opts, UseCausalMask())
	}
	for _, o := range a.nameOptions() {
		opts = append(opts, o)
	}
	return AdditiveAttention(opts...), nil
}
