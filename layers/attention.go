package layers

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/gokeras/gokeras/internal/formats/configargs"
	"github.com/gokeras/gokeras/internal/formats/shapes"
	"github.com/gokeras/gokeras/ops"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// AttentionOption configures a MultiHeadAttention layer: ValueDim,
// AttentionDropout, OutputShape, UseCausalMask, WithAttentionMask,
// ReturnAttentionScores, a
// WeightOption (WithoutBias, KernelInitializer, BiasInitializer, the
// regularizers), or any Option, such as Named.
type AttentionOption interface {
	applyAttention(*MultiHeadAttentionLayer)
}

type attentionOption func(*MultiHeadAttentionLayer)

func (f attentionOption) applyAttention(l *MultiHeadAttentionLayer) { f(l) }

func (f WeightOption) applyAttention(l *MultiHeadAttentionLayer) { f(&l.weights) }
func (o nameOption) applyAttention(l *MultiHeadAttentionLayer)   { o.applyLayer(&l.named) }

// ValueDim sets the size of each head's values (Keras' value_dim; the
// default is key_dim).
func ValueDim(n int) AttentionOption {
	return attentionOption(func(l *MultiHeadAttentionLayer) { l.valueDim = n })
}

// AttentionDropout drops the given fraction of the attention
// probabilities while the model trains (Keras' dropout argument of
// MultiHeadAttention and Attention).
func AttentionDropout(rate float64) SharedAttentionOption {
	return sharedAttentionOption{
		mha: func(l *MultiHeadAttentionLayer) { l.dropout = rate },
		dot: func(l *AttentionLayer) { l.dropout = rate },
	}
}

// OutputShape sets the size of the layer's output features (Keras'
// output_shape; the default is the query's last dimension).
func OutputShape(n int) AttentionOption {
	return attentionOption(func(l *MultiHeadAttentionLayer) { l.outputDim = n })
}

// UseCausalMask lets each query position attend only to the positions up
// to its own (Keras' call argument use_causal_mask=True), combined with
// an attention mask when there is one.
func UseCausalMask() SharedAttentionOption {
	return sharedAttentionOption{
		mha: func(l *MultiHeadAttentionLayer) { l.causal = true },
		dot: func(l *AttentionLayer) { l.causal = true },
	}
}

// ReturnAttentionScores makes the layer's call output the attention
// scores too, (heads, T_q, T_v) per sample, after its output (Keras' call
// argument return_attention_scores=True): nn.ApplyAll returns both.
func ReturnAttentionScores() AttentionOption {
	return attentionOption(func(l *MultiHeadAttentionLayer) { l.returnScores = true })
}

// WithAttentionMask says that the last input the layer is applied to is
// an attention mask (Keras' call argument attention_mask): samples of
// shape (T_q, T_v), 1 where a query position may attend to a value
// position and 0 where it may not.
func WithAttentionMask() AttentionOption {
	return attentionOption(func(l *MultiHeadAttentionLayer) { l.maskInput = true })
}

// MultiHeadAttentionLayer is keras.layers.MultiHeadAttention (Keras 2):
// scaled dot-product attention of several heads. It is applied, in a
// functional model, to a query of samples (T_q, d_q) and a value (T_v,
// d_v), then optionally a key (T_v, d_k) (the value when left out) and,
// with WithAttentionMask, an attention mask (T_q, T_v). Each head
// projects the query and key to key_dim features and the value to
// value_dim, takes softmax(q·kᵀ/√key_dim) over the value positions
// (masked positions get -1e9 added first, as Keras does), and averages
// the values with it; the heads' results are projected together to the
// output, of samples (T_q, output_shape).
//
// The weights are Keras': query/kernel (d_q, heads, key_dim), query/bias
// (heads, key_dim), key/kernel (d_k, heads, key_dim), key/bias,
// value/kernel (d_v, heads, value_dim), value/bias,
// attention_output/kernel (heads, value_dim, output_shape) and
// attention_output/bias (output_shape).
type MultiHeadAttentionLayer struct {
	named
	weights
	numHeads, keyDim, valueDim, outputDim int
	dropout                               float64
	causal, maskInput, returnScores       bool
	// key is the dropout's key, drawn when the layer is built.
	key uint64
	// The weights, in Keras' order.
	qk, qb, kk, kb, vk, vb, ok, ob *Param
}

// MultiHeadAttention makes a multi-head attention layer of numHeads heads
// whose queries and keys have keyDim features, like
// keras.layers.MultiHeadAttention(num_heads, key_dim): by default values
// of keyDim features too, no dropout, biases, a glorot_uniform kernel and
// zero biases, and an output of the query's size.
func MultiHeadAttention(numHeads, keyDim int, opts ...AttentionOption) *MultiHeadAttentionLayer {
	l := &MultiHeadAttentionLayer{numHeads: numHeads, keyDim: keyDim, weights: defaultWeights()}
	for _, o := range opts {
		if o != nil {
			o.applyAttention(l)
		}
	}
	return l
}

// Type returns "MultiHeadAttention".
func (l *MultiHeadAttentionLayer) Type() string { return "MultiHeadAttention" }

// NumHeads is the number of heads.
func (l *MultiHeadAttentionLayer) NumHeads() int { return l.numHeads }

// KeyDim is the size of each head's queries and keys.
func (l *MultiHeadAttentionLayer) KeyDim() int { return l.keyDim }

// ValueDim is the size of each head's values.
func (l *MultiHeadAttentionLayer) ValueDim() int {
	if l.valueDim == 0 {
		return l.keyDim
	}
	return l.valueDim
}

// CheckConfig checks the layer's arguments.
func (l *MultiHeadAttentionLayer) CheckConfig() error {
	if l.nameErr != nil {
		return fmt.Errorf("MultiHeadAttention layer: %w", l.nameErr)
	}
	switch {
	case l.numHeads <= 0:
		return fmt.Errorf("MultiHeadAttention layer %q: num_heads must be a positive integer, got %d", l.name, l.numHeads)
	case l.keyDim <= 0:
		return fmt.Errorf("MultiHeadAttention layer %q: key_dim must be a positive integer, got %d", l.name, l.keyDim)
	case l.valueDim < 0:
		return fmt.Errorf("MultiHeadAttention layer %q: value_dim must be a positive integer, got %d", l.name, l.valueDim)
	case l.outputDim < 0:
		return fmt.Errorf("MultiHeadAttention layer %q: output_shape must be a positive integer, got %d", l.name, l.outputDim)
	case !(l.dropout >= 0 && l.dropout < 1):
		return fmt.Errorf("MultiHeadAttention layer %q: dropout must be in [0, 1), got %v", l.name, l.dropout)
	}
	return nil
}

// attentionShapes are the sizes a call works with.
type attentionShapes struct {
	tq, tv, dq, dk, dv, dout int
}

// shapes checks the inputs' sample shapes: query, value, then key and the
// mask as the layer's options say.
func (l *MultiHeadAttentionLayer) shapes(in [][]int) (attentionShapes, error) {
	if err := l.CheckConfig(); err != nil {
		return attentionShapes{}, err
	}
	want := 2
	if l.maskInput {
		want++
	}
	what := "[query, value] or [query, value, key]"
	if l.maskInput {
		what = "[query, value, mask] or [query, value, key, mask] (WithAttentionMask)"
	}
	if len(in) != want && len(in) != want+1 {
		return attentionShapes{}, fmt.Errorf("MultiHeadAttention layer %q: applied to %d inputs; apply it to %s", l.name, len(in), what)
	}
	q, v := in[0], in[1]
	k := v
	if len(in) == want+1 {
		k = in[2]
	}
	for i, s := range [][]int{q, v, k} {
		if len(s) != 2 {
			return attentionShapes{}, fmt.Errorf("MultiHeadAttention layer %q: the %s has samples of shape %s: gokeras' MultiHeadAttention takes sequences, samples (steps, features), attending over the steps", l.name, []string{"query", "value", "key"}[i], shapes.String(s))
		}
	}
	if k[0] != v[0] {
		return attentionShapes{}, fmt.Errorf("MultiHeadAttention layer %q: the key has %d steps and the value %d: they must have the same steps", l.name, k[0], v[0])
	}
	s := attentionShapes{tq: q[0], tv: v[0], dq: q[1], dk: k[1], dv: v[1], dout: l.outputDim}
	if s.dout == 0 {
		s.dout = q[1]
	}
	if l.maskInput {
		if m := in[len(in)-1]; len(m) != 2 || m[0] != s.tq || m[1] != s.tv {
			return attentionShapes{}, fmt.Errorf("MultiHeadAttention layer %q: the attention mask has samples of shape %s: want (%d, %d), (query steps, value steps)", l.name, shapes.String(m), s.tq, s.tv)
		}
	}
	return s, nil
}

// PlanInputs returns the output's sample shape, (T_q, output_shape).
func (l *MultiHeadAttentionLayer) PlanInputs(inputShapes [][]int) ([]int, error) {
	s, err := l.shapes(inputShapes)
	if err != nil {
		return nil, err
	}
	return []int{s.tq, s.dout}, nil
}

// planInputs is PlanInputs with the weights BuildInputs makes.
func (l *MultiHeadAttentionLayer) planInputs(inputShapes [][]int) ([]int, []WeightShape, error) {
	s, err := l.shapes(inputShapes)
	if err != nil {
		return nil, nil, err
	}
	return []int{s.tq, s.dout}, l.weightShapes(s), nil
}

// OutputShapes are the sample shapes of the call's outputs: (T_q,
// output_shape), then with ReturnAttentionScores the scores' (heads, T_q,
// T_v).
func (l *MultiHeadAttentionLayer) OutputShapes(inputShapes [][]int) ([][]int, error) {
	s, err := l.shapes(inputShapes)
	if err != nil {
		return nil, err
	}
	out := [][]int{{s.tq, s.dout}}
	if l.returnScores {
		out = append(out, []int{l.numHeads, s.tq, s.tv})
	}
	return out, nil
}

// CallOutputs adds the attention to the graph and returns its output,
// then with ReturnAttentionScores the scores.
func (l *MultiHeadAttentionLayer) CallOutputs(in []Flow, params []*gorgonia.Node) ([]Flow, error) {
	out, scores, err := l.CallWithScores(in, params)
	if err != nil {
		return nil, err
	}
	if l.returnScores {
		return []Flow{out, scores}, nil
	}
	return []Flow{out}, nil
}

// weightShapes lists the weights in Keras' order.
func (l *MultiHeadAttentionLayer) weightShapes(s attentionShapes) []WeightShape {
	h, k, v := l.numHeads, l.keyDim, l.ValueDim()
	ws := []WeightShape{{"query/kernel", []int{s.dq, h, k}}}
	if l.useBias {
		ws = append(ws, WeightShape{"query/bias", []int{h, k}})
	}
	ws = append(ws, WeightShape{"key/kernel", []int{s.dk, h, k}})
	if l.useBias {
		ws = append(ws, WeightShape{"key/bias", []int{h, k}})
	}
	ws = append(ws, WeightShape{"value/kernel", []int{s.dv, h, v}})
	if l.useBias {
		ws = append(ws, WeightShape{"value/bias", []int{h, v}})
	}
	ws = append(ws, WeightShape{"attention_output/kernel", []int{h, v, s.dout}})
	if l.useBias {
		ws = append(ws, WeightShape{"attention_output/bias", []int{s.dout}})
	}
	return ws
}

// BuildInputs creates the weights and draws the dropout's key.
func (l *MultiHeadAttentionLayer) BuildInputs(inputShapes [][]int, rng *rand.Rand) ([]int, error) {
	s, err := l.shapes(inputShapes)
	if err != nil {
		return nil, err
	}
	var made []*Param
	for _, w := range l.weightShapes(s) {
		p := &Param{Name: w.Name, Value: tensor.New(tensor.Of(tensor.Float32), tensor.WithShape(w.Shape...))}
		init := l.kernelInit
		if len(w.Shape) < 3 {
			init = l.biasInit
		}
		// Keras' fans of a kernel of rank 3: the last two dimensions,
		// each times the first.
		fanIn, fanOut := w.Shape[0], w.Shape[0]
		if len(w.Shape) == 3 {
			fanIn, fanOut = w.Shape[0]*w.Shape[1], w.Shape[0]*w.Shape[2]
		}
		init.Fill(p.Value.Data().([]float32), fanIn, fanOut, rng)
		made = append(made, p)
	}
	l.qk, l.qb, l.kk, l.kb, l.vk, l.vb, l.ok, l.ob = nil, nil, nil, nil, nil, nil, nil, nil
	slots := []**Param{&l.qk, &l.kk, &l.vk, &l.ok}
	if l.useBias {
		slots = []**Param{&l.qk, &l.qb, &l.kk, &l.kb, &l.vk, &l.vb, &l.ok, &l.ob}
	}
	for i, p := range made {
		*slots[i] = p
	}
	l.key = rng.Uint64()
	return []int{s.tq, s.dout}, nil
}

func (l *MultiHeadAttentionLayer) oneInput() error {
	return fmt.Errorf("MultiHeadAttention layer %q: apply it to a query and a value (and optionally a key and a mask) with nn.Apply, in a functional model; for self-attention apply it to one tensor twice: nn.Apply(mha, x, x)", l.name)
}

// Build is an error: the layer takes a query and a value (nn.Apply).
func (l *MultiHeadAttentionLayer) Build([]int, *rand.Rand) ([]int, error) { return nil, l.oneInput() }

// plan is an error, as Build is.
func (l *MultiHeadAttentionLayer) plan([]int) ([]int, []WeightShape, error) {
	return nil, nil, l.oneInput()
}

// Call is an error, as Build is.
func (l *MultiHeadAttentionLayer) Call(Flow, []*gorgonia.Node) (Flow, error) {
	return Flow{}, l.oneInput()
}

// Params returns the weights in Keras' order: query, key, value and
// attention_output, each kernel then bias.
func (l *MultiHeadAttentionLayer) Params() []*Param {
	var ps []*Param
	for _, p := range []*Param{l.qk, l.qb, l.kk, l.kb, l.vk, l.vb, l.ok, l.ob} {
		if p != nil {
			ps = append(ps, p)
		}
	}
	return ps
}

// UsesStep reports whether the layer drops attention probabilities, and
// so needs the training step.
func (l *MultiHeadAttentionLayer) UsesStep() bool { return l.dropout > 0 }

// CallInputs adds the attention to the graph.
func (l *MultiHeadAttentionLayer) CallInputs(in []Flow, params []*gorgonia.Node) (Flow, error) {
	out, _, err := l.CallWithScores(in, params)
	return out, err
}

// CallWithScores adds the attention to the graph and returns, beside its
// output, the attention probabilities of each head, (batch, heads, T_q,
// T_v): what Keras returns with return_attention_scores=True (before
// dropout).
func (l *MultiHeadAttentionLayer) CallWithScores(in []Flow, params []*gorgonia.Node) (out, scores Flow, err error) {
	shapeList := make([][]int, len(in))
	for i, f := range in {
		if f.Node == nil || f.Node.Dims() < 1 {
			return Flow{}, Flow{}, fmt.Errorf("MultiHeadAttention layer %q: input %d has no batch axis", l.name, i)
		}
		shapeList[i] = f.Node.Shape()[1:]
	}
	s, err := l.shapes(shapeList)
	if err != nil {
		return Flow{}, Flow{}, err
	}
	if len(params) != len(l.Params()) || len(params) == 0 {
		return Flow{}, Flow{}, fmt.Errorf("MultiHeadAttention layer %q: got %d weight nodes for %d weights (was the layer built?)", l.name, len(params), len(l.Params()))
	}
	o, sc, err := l.attend(s, in, params)
	if err != nil {
		return Flow{}, Flow{}, fmt.Errorf("MultiHeadAttention layer %q: %w", l.name, err)
	}
	return o, sc, nil
}

// attend builds the graph. The projections are one product each over
// all the samples' steps (ops.Affine, the bias added in it); each
// sample's projected steps are then turned into features by steps, one
// head after another, by a transpose of each sample (ops.TransposeSamples),
// so that each head's queries, keys and values are contiguous matrices;
// the scores are qᵀ·k per sample and head, and the heads' outputs come out
// as vᵀ·pᵀ, (heads·value_dim × T_q), which a transpose turns back into
// steps for the output projection.
func (l *MultiHeadAttentionLayer) attend(s attentionShapes, in []Flow, params []*gorgonia.Node) (Flow, Flow, error) {
	q, v := in[0], in[1]
	k := v
	hasKey := len(in) == 3 && !l.maskInput || len(in) == 4
	if hasKey {
		k = in[2]
	}
	needsGrad := q.NeedsGrad || v.NeedsGrad || k.NeedsGrad || len(params) > 0
	qn := q.Node
	g, dt := qn.Graph(), qn.Dtype()
	batch := qn.Shape()[0]
	h, kd, vd := l.numHeads, l.keyDim, l.ValueDim()
	next := 0
	take := func() *gorgonia.Node { n := params[next]; next++; return n }
	// transposed is each sample of x, (batch, r, c), transposed: (batch,
	// c, r).
	transposed := ops.TransposeSamples
	// dense is x (batch, steps, d)·kernel (+ bias), (batch, steps, n).
	dense := func(x *gorgonia.Node, inputGrad bool, d, n int) (*gorgonia.Node, error) {
		steps := x.Shape()[1]
		x2, err := ops.Reshape(x, []int{batch * steps, d}, inputGrad)
		if err != nil {
			return nil, err
		}
		w, err := ops.Reshape(take(), []int{d, n}, true)
		if err != nil {
			return nil, err
		}
		var b *gorgonia.Node
		if l.useBias {
			if b, err = ops.Reshape(take(), []int{n}, true); err != nil {
				return nil, err
			}
		}
		p, err := ops.Affine(x2, w, b, inputGrad)
		if err != nil {
			return nil, err
		}
		return ops.Reshape(p, []int{batch, steps, n}, true)
	}
	// project returns x's projection, (batch, heads·dim, steps).
	project := func(f Flow, d, dim int) (*gorgonia.Node, error) {
		p, err := dense(f.Node, f.NeedsGrad, d, h*dim)
		if err != nil {
			return nil, err
		}
		return transposed(p)
	}
	qp, err := project(q, s.dq, kd)
	if err != nil {
		return Flow{}, Flow{}, fmt.Errorf("query projection: %w", err)
	}
	if qp, err = ops.Scale(qp, 1/math.Sqrt(float64(kd))); err != nil {
		return Flow{}, Flow{}, err
	}
	kp, err := project(k, s.dk, kd)
	if err != nil {
		return Flow{}, Flow{}, fmt.Errorf("key projection: %w", err)
	}
	vp, err := project(v, s.dv, vd)
	if err != nil {
		return Flow{}, Flow{}, fmt.Errorf("value projection: %w", err)
	}
	// Per sample and head: (key_dim × T_q)ᵀ·(key_dim × T_v).
	if qp, err = ops.Reshape(qp, []int{batch * h, kd, s.tq}, true); err != nil {
		return Flow{}, Flow{}, err
	}
	if kp, err = ops.Reshape(kp, []int{batch * h, kd, s.tv}, true); err != nil {
		return Flow{}, Flow{}, err
	}
	if vp, err = ops.Reshape(vp, []int{batch * h, vd, s.tv}, true); err != nil {
		return Flow{}, Flow{}, err
	}
	logits, err := ops.BatchDot(qp, kp, 1, 1)
	if err != nil {
		return Flow{}, Flow{}, fmt.Errorf("scores: %w", err)
	}
	if logits, err = ops.Reshape(logits, []int{batch, h, s.tq, s.tv}, true); err != nil {
		return Flow{}, Flow{}, err
	}
	if l.maskInput || l.causal {
		adder, err := l.maskAdder(g, dt, s, in[len(in)-1])
		if err != nil {
			return Flow{}, Flow{}, fmt.Errorf("attention mask: %w", err)
		}
		if logits, err = ops.Add(logits, adder); err != nil {
			return Flow{}, Flow{}, fmt.Errorf("attention mask: %w", err)
		}
	}
	probs, err := ops.Activate(ops.Softmax, logits)
	if err != nil {
		return Flow{}, Flow{}, fmt.Errorf("softmax: %w", err)
	}
	scores := Flow{Node: probs, NeedsGrad: needsGrad}
	if q.Training && l.dropout > 0 {
		if q.Step == nil {
			return Flow{}, Flow{}, errNoStep
		}
		if probs, err = ops.Dropout(probs, q.Step, ops.DropoutParams{Rate: l.dropout, Key: l.key}); err != nil {
			return Flow{}, Flow{}, fmt.Errorf("dropout: %w", err)
		}
	}
	if probs, err = ops.Reshape(probs, []int{batch * h, s.tq, s.tv}, true); err != nil {
		return Flow{}, Flow{}, err
	}
	// Per sample and head: (value_dim × T_v)·(T_q × T_v)ᵀ.
	heads, err := ops.BatchDot(vp, probs, 2, 2)
	if err != nil {
		return Flow{}, Flow{}, fmt.Errorf("weighted values: %w", err)
	}
	if heads, err = ops.Reshape(heads, []int{batch, h * vd, s.tq}, true); err != nil {
		return Flow{}, Flow{}, err
	}
	if heads, err = transposed(heads); err != nil {
		return Flow{}, Flow{}, fmt.Errorf("weighted values: %w", err)
	}
	out, err := dense(heads, true, h*vd, s.dout)
	if err != nil {
		return Flow{}, Flow{}, fmt.Errorf("output projection: %w", err)
	}
	f := Flow{Node: out, NeedsGrad: needsGrad}
	penalties, err := l.penalties(params, out)
	if err != nil {
		return Flow{}, Flow{}, err
	}
	f.Losses = penalties
	return f, scores, nil
}

// maskAdder returns what the masks add to the logits, (batch or 1, 1,
// T_q, T_v): 0 where a query position may attend, -1e9 where it may not,
// as Keras' masked softmax adds (1 - mask)·-1e9. The attention mask and
// the causal mask are combined first (a position must be allowed by
// both).
func (l *MultiHeadAttentionLayer) maskAdder(g *gorgonia.ExprGraph, dt tensor.Dtype, s attentionShapes, maskFlow Flow) (*gorgonia.Node, error) {
	var causal []float32
	if l.causal {
		causal = make([]float32, s.tq*s.tv)
		for i := range s.tq {
			for j := 0; j <= i && j < s.tv; j++ {
				causal[i*s.tv+j] = 1
			}
		}
	}
	if !l.maskInput {
		for i, c := range causal {
			causal[i] = (1 - c) * -1e9
		}
		return constantValues(g, dt, l.name+"/causal_mask", []int{1, 1, s.tq, s.tv}, causal), nil
	}
	batch := maskFlow.Node.Shape()[0]
	m, err := ops.Reshape(maskFlow.Node, []int{batch, 1, s.tq, s.tv}, false)
	if err != nil {
		return nil, err
	}
	if causal != nil {
		c := constantValues(g, dt, l.name+"/causal_mask", []int{1, 1, s.tq, s.tv}, causal)
		if m, err = ops.Multiply(m, c); err != nil {
			return nil, err
		}
	}
	return ops.Rescale(m, 1e9, -1e9)
}

// penalties are the regularizers' penalties: the kernel regularizer of
// each kernel, the bias regularizer of each bias, and the activity
// regularizer of the output.
func (l *MultiHeadAttentionLayer) penalties(params []*gorgonia.Node, out *gorgonia.Node) ([]*gorgonia.Node, error) {
	var ps []*gorgonia.Node
	add := func(r *Regularizer, x *gorgonia.Node, scale float64, what string) error {
		if r == nil {
			return nil
		}
		p, err := ops.Penalty(x, ops.PenaltyParams{L1: r.L1, L2: r.L2, Scale: scale})
		if err != nil {
			return fmt.Errorf("%s regularizer: %w", what, err)
		}
		ps = append(ps, p)
		return nil
	}
	for i, p := range l.Params() {
		r, what := l.kernelReg, "kernel"
		if p.Value.Dims() < 3 {
			r, what = l.biasReg, "bias"
		}
		if err := add(r, params[i], 0, what); err != nil {
			return nil, err
		}
	}
	if err := add(l.activityReg, out, 1/float64(out.Shape()[0]), "activity"); err != nil {
		return nil, err
	}
	return ps, nil
}

// constantNode is a constant of the given shape, every value v.
func constantNode(g *gorgonia.ExprGraph, dt tensor.Dtype, name string, shape []int, v float32) *gorgonia.Node {
	n := 1
	for _, d := range shape {
		n *= d
	}
	vals := make([]float32, n)
	for i := range vals {
		vals[i] = v
	}
	return constantValues(g, dt, name, shape, vals)
}

// constantValues is a constant of the given shape and values, in dtype
// dt (float32 or float64).
func constantValues(g *gorgonia.ExprGraph, dt tensor.Dtype, name string, shape []int, vals []float32) *gorgonia.Node {
	var val *tensor.Dense
	if dt == tensor.Float64 {
		d := make([]float64, len(vals))
		for i, x := range vals {
			d[i] = float64(x)
		}
		val = tensor.New(tensor.WithShape(shape...), tensor.WithBacking(d))
	} else {
		val = tensor.New(tensor.WithShape(shape...), tensor.WithBacking(vals))
	}
	return gorgonia.NewTensor(g, dt, len(shape), gorgonia.WithShape(shape...), gorgonia.WithName(name), gorgonia.WithValue(val))
}

// Config returns "MultiHeadAttention" with Keras 2's arguments: name,
// num_heads, key_dim, value_dim, dropout, use_bias, output_shape (null
// for the query's size), attention_axes (null: the steps), the
// initializers, regularizers and constraints (null). The call arguments
// use_causal_mask and attention_mask are not part of it.
func (l *MultiHeadAttentionLayer) Config() (Config, error) {
	var out any
	if l.outputDim > 0 {
		out = l.outputDim
	}
	args := map[string]any{"name": l.name, "num_heads": l.numHeads, "key_dim": l.keyDim, "value_dim": l.ValueDim(),
		"dropout": l.dropout, "output_shape": out, "attention_axes": nil, "kernel_constraint": nil, "bias_constraint": nil}
	if err := l.weights.config(args); err != nil {
		return Config{}, fmt.Errorf("MultiHeadAttention layer %q: %w", l.name, err)
	}
	return Config{ClassName: l.Type(), Config: args}, nil
}

func multiHeadAttentionFromConfig(args map[string]any) (Layer, error) {
	a := struct {
		baseArgs
		NumHeads         *int     `json:"num_heads"`
		KeyDim           *int     `json:"key_dim"`
		ValueDim         *int     `json:"value_dim"`
		Dropout          float64  `json:"dropout"`
		OutputShape      any      `json:"output_shape"`
		AttentionAxes    any      `json:"attention_axes"`
		KernelConstraint *Config  `json:"kernel_constraint"`
		BiasConstraint   *Config  `json:"bias_constraint"`
		QueryShape       []any    `json:"query_shape"`
		KeyShape         []any    `json:"key_shape"`
		ValueShape       []any    `json:"value_shape"`
		Seed             *float64 `json:"seed"`
		weightArgs
	}{weightArgs: weightArgs{UseBias: true}}
	if err := configargs.Decode(args, &a); err != nil {
		return nil, err
	}
	if a.NumHeads == nil {
		return nil, missing("num_heads")
	}
	if a.KeyDim == nil {
		return nil, missing("key_dim")
	}
	if a.KernelConstraint != nil || a.BiasConstraint != nil {
		return nil, fmt.Errorf("kernel_constraint or bias_constraint given: gokeras' MultiHeadAttention has no constraints; save the model without them")
	}
	opts := []AttentionOption{AttentionDropout(a.Dropout)}
	if a.ValueDim != nil {
		opts = append(opts, ValueDim(*a.ValueDim))
	}
	switch o := a.OutputShape.(type) {
	case nil:
	case float64:
		opts = append(opts, OutputShape(int(o)))
	case []any:
		if len(o) != 1 {
			return nil, fmt.Errorf("argument \"output_shape\" is %v: gokeras' MultiHeadAttention outputs one feature axis; give one size", o)
		}
		n, ok := o[0].(float64)
		if !ok {
			return nil, fmt.Errorf("argument \"output_shape\" is %v: want a size", o)
		}
		opts = append(opts, OutputShape(int(n)))
	default:
		return nil, fmt.Errorf("argument \"output_shape\" is %v: want a size or null", o)
	}
	switch ax := a.AttentionAxes.(type) {
	case nil:
	case []any:
		if len(ax) != 1 || (ax[0] != float64(1) && ax[0] != float64(-2)) {
			return nil, fmt.Errorf("argument \"attention_axes\" is %v: gokeras' MultiHeadAttention attends over the steps only (axis 1); leave attention_axes null", ax)
		}
	default:
		if ax != float64(1) && ax != float64(-2) {
			return nil, fmt.Errorf("argument \"attention_axes\" is %v: gokeras' MultiHeadAttention attends over the steps only (axis 1); leave attention_axes null", ax)
		}
	}
	wopts, err := a.options()
	if err != nil {
		return nil, err
	}
	for _, o := range wopts {
		opts = append(opts, o)
	}
	for _, o := range a.nameOptions() {
		opts = append(opts, o)
	}
	return MultiHeadAttention(*a.NumHeads, *a.KeyDim, opts...), nil
}

// KerasVariable is where Keras 3 keeps weight i of the layer in a .keras
// archive, under the layer's group: each projection is a sublayer of its
// own, "_query_dense/vars/0" (its kernel), "_query_dense/vars/1" (its
// bias), then _key_dense, _value_dense and _output_dense.
func (l *MultiHeadAttentionLayer) KerasVariable(i int) string {
	ps := l.Params()
	if i < 0 || i >= len(ps) {
		return ""
	}
	sub, w, _ := strings.Cut(ps[i].Name, "/")
	if sub == "attention_output" {
		sub = "output"
	}
	idx := "0"
	if w == "bias" {
		idx = "1"
	}
	return "_" + sub + "_dense/vars/" + idx
}

// KerasCall names the layer's inputs as Keras' call takes them, for n
// inputs: query and value are positional, key and attention_mask keyword
// arguments; use_causal_mask is a keyword argument too, true with
// UseCausalMask (and left out without it).
func (l *MultiHeadAttentionLayer) KerasCall(n int) (names []string, positional int, flags map[string]any) {
	names = []string{"query", "value"}
	if n == 4 || n == 3 && !l.maskInput {
		names = append(names, "key")
	}
	if l.maskInput {
		names = append(names, "attention_mask")
	}
	if l.causal || l.returnScores {
		flags = map[string]any{}
	}
	if l.causal {
		flags["use_causal_mask"] = true
	}
	if l.returnScores {
		flags["return_attention_scores"] = true
	}
	return names, 2, flags
}

// SetKerasCall takes a saved Keras call: the names of the inputs it is
// given (query and value, then key and attention_mask when given) and its
// other keyword arguments (use_causal_mask, return_attention_scores,
// training). It returns the order the layer takes the named inputs in.
func (l *MultiHeadAttentionLayer) SetKerasCall(names []string, flags map[string]any) ([]string, error) {
	order := []string{"query", "value", "key", "attention_mask"}
	given := map[string]bool{}
	for _, n := range names {
		if !slices.Contains(order, n) {
			return nil, fmt.Errorf("MultiHeadAttention layer %q: a call argument %q: Keras' call takes query, value, key and attention_mask", l.name, n)
		}
		given[n] = true
	}
	if !given["query"] || !given["value"] {
		return nil, fmt.Errorf("MultiHeadAttention layer %q: a call without a query or a value", l.name)
	}
	for k, v := range flags {
		switch k {
		case "use_causal_mask":
			on, ok := v.(bool)
			if !ok {
				return nil, fmt.Errorf("MultiHeadAttention layer %q: use_causal_mask is %v, not true or false", l.name, v)
			}
			l.causal = on
		case "return_attention_scores":
			on, ok := v.(bool)
			if !ok {
				return nil, fmt.Errorf("MultiHeadAttention layer %q: return_attention_scores is %v, not true or false", l.name, v)
			}
			l.returnScores = on
		case "training":
			if v != nil {
				return nil, fmt.Errorf("MultiHeadAttention layer %q: a call with training=%v: gokeras sets the mode by Fit and Predict", l.name, v)
			}
		default:
			return nil, fmt.Errorf("MultiHeadAttention layer %q: a call argument %q that gokeras does not take", l.name, k)
		}
	}
	l.maskInput = given["attention_mask"]
	var out []string
	for _, n := range order {
		if given[n] {
			out = append(out, n)
		}
	}
	return out, nil
}

// ONNXInputs is an error: the ONNX export does not map MultiHeadAttention
// yet.
func (l *MultiHeadAttentionLayer) ONNXInputs(ONNXGraph, []string) (string, error) {
	return "", fmt.Errorf("MultiHeadAttention layer %q: the ONNX export does not support MultiHeadAttention yet: export a model without it, or save it as a Keras file (nn.SaveKeras)", l.name)
}
