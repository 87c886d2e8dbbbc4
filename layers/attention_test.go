package layers

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gorgonia.org/gorgonia"
)

// attentionCase is one MultiHeadAttention call: the layer, the sample
// shapes, the inputs (query, value, then key and mask when given) and the
// weights, in float64.
type attentionCase struct {
	l               *MultiHeadAttentionLayer
	batch           int
	shapes          [][]int
	inputs, weights [][]float64
}

// attentionGraph builds c's call in a float64 graph, with a cost (the mean
// squared error of the output against target) when target is given.
type attentionGraph struct {
	g                 *gorgonia.ExprGraph
	ins, ws           []*gorgonia.Node
	out, scores, cost *gorgonia.Node
	outRead, scRead   *gorgonia.Value
}

func newAttentionGraph(t *testing.T, c attentionCase, target []float64) attentionGraph {
	t.Helper()
	g := gorgonia.NewGraph()
	a := attentionGraph{g: g, outRead: new(gorgonia.Value), scRead: new(gorgonia.Value)}
	node := func(name string, shape []int, v []float64) *gorgonia.Node {
		return float64Node(g, name, slices.Clone(v), shape...)
	}
	var flows []Flow
	for i, s := range c.shapes {
		n := node(fmt.Sprintf("in%d", i), append([]int{c.batch}, s...), c.inputs[i])
		a.ins = append(a.ins, n)
		flows = append(flows, Flow{Node: n, NeedsGrad: true})
	}
	for i, p := range c.l.Params() {
		a.ws = append(a.ws, node(strings.ReplaceAll(p.Name, "/", "_"), p.Value.Shape(), c.weights[i]))
	}
	out, sc, err := c.l.CallWithScores(flows, a.ws)
	if err != nil {
		t.Fatal(err)
	}
	a.out, a.scores = out.Node, sc.Node
	gorgonia.Read(a.out, a.outRead)
	gorgonia.Read(a.scores, a.scRead)
	if target != nil {
		a.cost = mseCost(t, a.out, c.batch, slices.Clone(target), "y")
	}
	return a
}

// referenceAttention computes Keras' MultiHeadAttention with loops, from
// its definition: the projections as Keras' einsums, softmax of the
// scaled scores with (1-mask)·-1e9 added, the weighted values, the output
// projection. It returns the output (batch, T_q, out) and the scores
// (batch, heads, T_q, T_v).
func referenceAttention(c attentionCase) (out, scores []float64) {
	l := c.l
	h, kd, vd := l.numHeads, l.keyDim, l.ValueDim()
	b := c.batch
	tq, dq := c.shapes[0][0], c.shapes[0][1]
	tv, dv := c.shapes[1][0], c.shapes[1][1]
	q, v := c.inputs[0], c.inputs[1]
	k, dk := v, dv
	nIn := 2
	if l.maskInput {
		nIn++
	}
	if len(c.shapes) > nIn {
		k, dk = c.inputs[2], c.shapes[2][1]
	}
	var mask []float64
	if l.maskInput {
		mask = c.inputs[len(c.inputs)-1]
	}
	w := c.weights
	next := 0
	take := func() []float64 { x := w[next]; next++; return x }
	proj := func(x []float64, t, d, dim int) []float64 { // (b, t, h, dim)
		kernel := take()
		var bias []float64
		if l.useBias {
			bias = take()
		}
		p := make([]float64, b*t*h*dim)
		for s := range b {
			for i := range t {
				for hh := range h {
					for j := range dim {
						sum := 0.0
						if bias != nil {
							sum = bias[hh*dim+j]
						}
						for e := range d {
							sum += x[(s*t+i)*d+e] * kernel[(e*h+hh)*dim+j]
						}
						p[((s*t+i)*h+hh)*dim+j] = sum
					}
				}
			}
		}
		return p
	}
	Q := proj(q, tq, dq, kd)
	K := proj(k, tv, dk, kd)
	V := proj(v, tv, dv, vd)
	dout := dq
	if l.outputDim > 0 {
		dout = l.outputDim
	}
	scores = make([]float64, b*h*tq*tv)
	heads := make([]float64, b*tq*h*vd)
	for s := range b {
		for hh := range h {
			for i := range tq {
				row := scores[((s*h+hh)*tq+i)*tv:][:tv]
				for j := range tv {
					sum := 0.0
					for c := range kd {
						sum += Q[((s*tq+i)*h+hh)*kd+c] / math.Sqrt(float64(kd)) * K[((s*tv+j)*h+hh)*kd+c]
					}
					allowed := 1.0
					if mask != nil {
						allowed = mask[(s*tq+i)*tv+j]
					}
					if l.causal && j > i {
						allowed = 0
					}
					row[j] = sum + (1-allowed)*-1e9
				}
				top := slices.Max(row)
				total := 0.0
				for j := range row {
					row[j] = math.Exp(row[j] - top)
					total += row[j]
				}
				for j := range row {
					row[j] /= total
				}
				for c := range vd {
					sum := 0.0
					for j := range tv {
						sum += row[j] * V[((s*tv+j)*h+hh)*vd+c]
					}
					heads[((s*tq+i)*h+hh)*vd+c] = sum
				}
			}
		}
	}
	wo := take()
	var bo []float64
	if l.useBias {
		bo = take()
	}
	out = make([]float64, b*tq*dout)
	for s := range b {
		for i := range tq {
			for e := range dout {
				sum := 0.0
				if bo != nil {
					sum = bo[e]
				}
				for hc := range h * vd {
					sum += heads[(s*tq+i)*h*vd+hc] * wo[hc*dout+e]
				}
				out[(s*tq+i)*dout+e] = sum
			}
		}
	}
	return out, scores
}

// randomAttentionCase builds l for the given sample shapes and fills the
// inputs and weights with random values (a random 0/1 mask, each row
// keeping at least one position).
func randomAttentionCase(t *testing.T, l *MultiHeadAttentionLayer, batch int, shapes [][]int, seed uint64) attentionCase {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	if _, err := l.BuildInputs(shapes, rng); err != nil {
		t.Fatal(err)
	}
	c := attentionCase{l: l, batch: batch, shapes: shapes}
	for i, s := range shapes {
		n := batch * s[0] * s[1]
		if l.maskInput && i == len(shapes)-1 {
			m := make([]float64, n)
			for r := range batch * s[0] {
				for j := range s[1] {
					if j == r%s[1] || rng.IntN(3) > 0 {
						m[r*s[1]+j] = 1
					}
				}
			}
			c.inputs = append(c.inputs, m)
			continue
		}
		c.inputs = append(c.inputs, uniformValues(rng, n, 1))
	}
	for _, p := range l.Params() {
		c.weights = append(c.weights, uniformValues(rng, p.Size(), 1))
	}
	return c
}

func runGraph(t *testing.T, g *gorgonia.ExprGraph) {
	t.Helper()
	m := gorgonia.NewTapeMachine(g)
	defer m.Close()
	if err := m.RunAll(); err != nil {
		t.Fatal(err)
	}
}

// TestMultiHeadAttentionHandComputed: one head of one feature, weights of
// ones and no biases: the query 1 scores the values 0 and ln 3 as
// themselves, softmax gives 1/4 and 3/4, and the output is (3/4)·ln 3;
// masking the second value leaves the first alone (output 0), as does
// the causal mask for the first query step.
func TestMultiHeadAttentionHandComputed(t *testing.T) {
	ln3 := math.Log(3)
	for _, tc := range []struct {
		name       string
		opts       []AttentionOption
		shapes     [][]int
		inputs     [][]float64
		want       []float64
		wantScores []float64
	}{
		{"plain", nil, [][]int{{1, 1}, {2, 1}}, [][]float64{{1}, {0, ln3}}, []float64{0.75 * ln3}, []float64{0.25, 0.75}},
		{"mask", []AttentionOption{WithAttentionMask()}, [][]int{{1, 1}, {2, 1}, {1, 2}}, [][]float64{{1}, {0, ln3}, {1, 0}}, []float64{0}, []float64{1, 0}},
		{"causal", []AttentionOption{UseCausalMask()}, [][]int{{2, 1}, {2, 1}}, [][]float64{{1, 1}, {0, ln3}}, []float64{0, 0.75 * ln3}, []float64{1, 0, 0.25, 0.75}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := MultiHeadAttention(1, 1, append(tc.opts, WithoutBias(), KernelInitializer(Ones()))...)
			if _, err := l.BuildInputs(tc.shapes, rand.New(rand.NewPCG(1, 2))); err != nil {
				t.Fatal(err)
			}
			c := attentionCase{l: l, batch: 1, shapes: tc.shapes, inputs: tc.inputs}
			for range l.Params() {
				c.weights = append(c.weights, []float64{1})
			}
			a := newAttentionGraph(t, c, nil)
			runGraph(t, a.g)
			got, scores := (*a.outRead).Data().([]float64), (*a.scRead).Data().([]float64)
			for i := range tc.want {
				if math.Abs(got[i]-tc.want[i]) > 1e-12 {
					t.Errorf("output %d: %v, want %v", i, got[i], tc.want[i])
				}
			}
			for i := range tc.wantScores {
				if math.Abs(scores[i]-tc.wantScores[i]) > 1e-12 {
					t.Errorf("score %d: %v, want %v", i, scores[i], tc.wantScores[i])
				}
			}
		})
	}
}

// attentionCases are the layouts the reference and gradient tests run:
// self- and cross-attention, a separate key, value_dim and output_shape,
// no biases, masks and the causal mask.
func attentionCases() []struct {
	name   string
	l      func() *MultiHeadAttentionLayer
	shapes [][]int
} {
	return []struct {
		name   string
		l      func() *MultiHeadAttentionLayer
		shapes [][]int
	}{
		{"self", func() *MultiHeadAttentionLayer { return MultiHeadAttention(2, 3) }, [][]int{{4, 5}, {4, 5}}},
		{"cross/key/value_dim/output_shape", func() *MultiHeadAttentionLayer {
			return MultiHeadAttention(3, 2, ValueDim(4), OutputShape(3))
		}, [][]int{{3, 5}, {4, 2}, {4, 6}}},
		{"no bias", func() *MultiHeadAttentionLayer { return MultiHeadAttention(2, 2, WithoutBias()) }, [][]int{{3, 4}, {5, 3}}},
		{"mask", func() *MultiHeadAttentionLayer { return MultiHeadAttention(2, 3, WithAttentionMask()) }, [][]int{{3, 4}, {5, 4}, {3, 5}}},
		{"causal", func() *MultiHeadAttentionLayer { return MultiHeadAttention(2, 3, UseCausalMask()) }, [][]int{{4, 4}, {4, 4}}},
		{"mask+causal+key", func() *MultiHeadAttentionLayer {
			return MultiHeadAttention(2, 2, WithAttentionMask(), UseCausalMask())
		}, [][]int{{4, 3}, {4, 3}, {4, 2}, {4, 4}}},
	}
}

// TestMultiHeadAttentionMatchesReference checks outputs and scores
// against the loops of referenceAttention.
func TestMultiHeadAttentionMatchesReference(t *testing.T) {
	for i, tc := range attentionCases() {
		t.Run(tc.name, func(t *testing.T) {
			c := randomAttentionCase(t, tc.l(), 2, tc.shapes, uint64(i+10))
			a := newAttentionGraph(t, c, nil)
			runGraph(t, a.g)
			wantOut, wantScores := referenceAttention(c)
			got, scores := (*a.outRead).Data().([]float64), (*a.scRead).Data().([]float64)
			if len(got) != len(wantOut) || len(scores) != len(wantScores) {
				t.Fatalf("%d outputs and %d scores, want %d and %d", len(got), len(scores), len(wantOut), len(wantScores))
			}
			for j := range got {
				if math.Abs(got[j]-wantOut[j]) > 1e-12 {
					t.Errorf("output %d: %v, reference %v", j, got[j], wantOut[j])
				}
			}
			for j := range scores {
				if math.Abs(scores[j]-wantScores[j]) > 1e-12 {
					t.Errorf("score %d: %v, reference %v", j, scores[j], wantScores[j])
				}
			}
		})
	}
}

// TestMultiHeadAttentionGradients checks the gradients of every input
// (but the mask) and weight against central finite differences.
func TestMultiHeadAttentionGradients(t *testing.T) {
	for i, tc := range attentionCases() {
		t.Run(tc.name, func(t *testing.T) {
			c := randomAttentionCase(t, tc.l(), 2, tc.shapes, uint64(i+20))
			out, _ := referenceAttention(c)
			rng := rand.New(rand.NewPCG(uint64(i), 3))
			target := make([]float64, len(out))
			for j := range target {
				target[j] = 2*rng.Float64() - 1
			}
			a := newAttentionGraph(t, c, target)
			wrt := slices.Clone(a.ins)
			if c.l.maskInput {
				wrt = wrt[:len(wrt)-1]
			}
			wrt = append(wrt, a.ws...)
			checkGradients(t, a.g, a.cost, wrt...)
		})
	}
}

// TestMultiHeadAttentionShapes checks the weights' names and shapes
// against Keras' (and the parameter count Keras' summary shows), the
// output shape, and the refusals.
func TestMultiHeadAttentionShapes(t *testing.T) {
	l := MultiHeadAttention(4, 8, ValueDim(6))
	out, err := l.BuildInputs([][]int{{10, 16}, {12, 20}, {12, 24}}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out, []int{10, 16}) {
		t.Errorf("output shape %v, want [10 16]", out)
	}
	var got []string
	total := 0
	for _, p := range l.Params() {
		got = append(got, fmt.Sprintf("%s%v", p.Name, []int(p.Value.Shape())))
		total += p.Size()
	}
	want := []string{"query/kernel[16 4 8]", "query/bias[4 8]", "key/kernel[24 4 8]", "key/bias[4 8]",
		"value/kernel[20 4 6]", "value/bias[4 6]", "attention_output/kernel[4 6 16]", "attention_output/bias[16]"}
	if !slices.Equal(got, want) {
		t.Errorf("weights %v, want %v", got, want)
	}
	// Keras: 16·32+32 + 24·32+32 + 20·24+24 + 24·16+16.
	if total != 544+800+504+400 {
		t.Errorf("%d parameters, want %d", total, 544+800+504+400)
	}
	// glorot_uniform with Keras' fans of (16, 4, 8): 64 and 128.
	limit := math.Sqrt(6.0 / (64 + 128))
	for _, v := range l.Params()[0].Value.Data().([]float32) {
		if math.Abs(float64(v)) > limit {
			t.Fatalf("query/kernel value %v outside the glorot_uniform limit %v", v, limit)
		}
	}
	for _, tc := range []struct {
		l      *MultiHeadAttentionLayer
		shapes [][]int
		want   string
	}{
		{MultiHeadAttention(2, 4), [][]int{{3, 4}}, "applied to 1 inputs"},
		{MultiHeadAttention(2, 4), [][]int{{3, 4}, {5}}, "samples (steps, features)"},
		{MultiHeadAttention(2, 4), [][]int{{3, 4}, {5, 4}, {6, 4}}, "same steps"},
		{MultiHeadAttention(2, 4, WithAttentionMask()), [][]int{{3, 4}, {5, 4}, {5, 3}}, "want (3, 5)"},
		{MultiHeadAttention(0, 4), [][]int{{3, 4}, {5, 4}}, "num_heads"},
		{MultiHeadAttention(2, 4, AttentionDropout(1)), [][]int{{3, 4}, {5, 4}}, "dropout"},
	} {
		if _, err := tc.l.PlanInputs(tc.shapes); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one saying %q", tc.shapes, err, tc.want)
		}
	}
}

// TestMultiHeadAttentionConfig: the config has Keras 2's arguments, and
// FromConfig makes the same layer back.
func TestMultiHeadAttentionConfig(t *testing.T) {
	l := MultiHeadAttention(4, 8, ValueDim(6), AttentionDropout(0.1), OutputShape(12), WithoutBias(), Named("mha"))
	c, err := ConfigOf(l)
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]any{"num_heads": 4, "key_dim": 8, "value_dim": 6, "dropout": 0.1, "output_shape": 12, "use_bias": false, "attention_axes": nil, "name": "mha"} {
		if got, ok := c.Config[k]; !ok || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("config %s = %v, want %v", k, got, want)
		}
	}
	back, err := FromConfig(c)
	if err != nil {
		t.Fatal(err)
	}
	c2, err := ConfigOf(back)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(c2) != fmt.Sprint(c) {
		t.Errorf("round trip: %v, want %v", c2, c)
	}
	if _, err := FromConfig(Config{"MultiHeadAttention", map[string]any{"num_heads": 2, "key_dim": 2, "attention_axes": []any{2.0}}}); err == nil {
		t.Error("attention_axes [2] accepted")
	}
	if _, err := FromConfig(Config{"MultiHeadAttention", map[string]any{"key_dim": 2}}); err == nil {
		t.Error("a config without num_heads accepted")
	}
}

// TestMultiHeadAttentionONNX: the export refuses the layer, naming it.
func TestMultiHeadAttentionONNX(t *testing.T) {
	_, err := MultiHeadAttention(2, 2, Named("att")).ONNXInputs(nil, []string{"q", "v"})
	if err == nil || !strings.Contains(err.Error(), `MultiHeadAttention layer "att"`) || !strings.Contains(err.Error(), "ONNX") {
		t.Errorf("error %v, want one naming the layer and ONNX", err)
	}
}
