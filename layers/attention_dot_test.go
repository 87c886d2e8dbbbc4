package layers

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gorgonia.org/gorgonia"
)

// dotAttentionReference is keras.layers.Attention by its definition, with
// loops: scores (dot products times scale, or concat_score_weight times
// Σ tanh(scale·(q + k))), -1e9 above the diagonal with the causal mask,
// softmax over the value steps, the weighted values.
func dotAttentionReference(l *AttentionLayer, b, tq, tv, d, dv int, q, v, k, scale, concat []float64) []float64 {
	out := make([]float64, b*tq*dv)
	sc, cw := 1.0, 1.0
	if scale != nil && !l.additive {
		sc = scale[0]
	}
	if concat != nil {
		cw = concat[0]
	}
	for s := range b {
		for i := range tq {
			row := make([]float64, tv)
			for j := range tv {
				sum := 0.0
				for f := range d {
					qv, kv := q[(s*tq+i)*d+f], k[(s*tv+j)*d+f]
					switch {
					case l.additive && scale != nil:
						sum += scale[f] * math.Tanh(qv+kv)
					case l.additive:
						sum += math.Tanh(qv + kv)
					case l.scoreMode == "dot":
						sum += qv * kv
					default:
						sum += math.Tanh(sc * (qv + kv))
					}
				}
				if l.additive {
				} else if l.scoreMode == "dot" {
					sum *= sc
				} else {
					sum *= cw
				}
				if l.causal && j > i {
					sum -= 1e9
				}
				row[j] = sum
			}
			top := slices.Max(row)
			total := 0.0
			for j := range row {
				row[j] = math.Exp(row[j] - top)
				total += row[j]
			}
			for c := range dv {
				acc := 0.0
				for j := range tv {
					acc += row[j] / total * v[(s*tv+j)*dv+c]
				}
				out[(s*tq+i)*dv+c] = acc
			}
		}
	}
	return out
}

// TestAttentionLayer checks the output against the loops and every
// gradient (query, value, key, the scalars) against finite differences,
// for each score mode, with and without the scale, a key and the causal
// mask; and by hand: one query step 1 over the value steps 0 and ln 3
// gives (3/4)·ln 3.
func TestAttentionLayer(t *testing.T) {
	const b, tq, tv, d, dv = 2, 3, 4, 3, 2
	for i, tc := range []struct {
		opts     []DotAttentionOption
		key      bool
		additive bool
	}{
		{nil, false, false}, {[]DotAttentionOption{UseScale()}, true, false}, {[]DotAttentionOption{UseCausalMask()}, true, false},
		{[]DotAttentionOption{ScoreMode("concat")}, true, false}, {[]DotAttentionOption{ScoreMode("concat"), UseScale(), UseCausalMask()}, true, false},
		{nil, true, true}, {[]DotAttentionOption{WithoutAttentionScale(), UseCausalMask()}, false, true},
	} {
		l := Attention(tc.opts...)
		if tc.additive {
			l = AdditiveAttention(tc.opts...)
		}
		name := fmt.Sprintf("%s/%s/scale=%t/key=%t/causal=%t", l.Type(), l.scoreMode, l.useScale, tc.key, l.causal)
		t.Run(name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(i), 5))
			shapes := [][]int{{tq, d}, {tv, dv}}
			if !tc.key {
				shapes[1] = []int{tv, d}
			}
			vd := shapes[1][1]
			if tc.key {
				shapes = append(shapes, []int{tv, d})
			}
			if _, err := l.BuildInputs(shapes, rng); err != nil {
				t.Fatal(err)
			}
			g := gorgonia.NewGraph()
			var ins, ws []*gorgonia.Node
			var vals [][]float64
			var flows []Flow
			for j, s := range shapes {
				sh := append([]int{b}, s...)
				x := uniformValues(rng, b*s[0]*s[1], 1)
				vals = append(vals, x)
				n := float64Node(g, fmt.Sprint("in", j), x, sh...)
				ins = append(ins, n)
				flows = append(flows, Flow{Node: n, NeedsGrad: true})
			}
			var scalars [][]float64
			for _, p := range l.Params() {
				x := make([]float64, p.Size())
				for j := range x {
					x[j] = 0.5 + rng.Float64()
				}
				scalars = append(scalars, x)
				ws = append(ws, float64Node(g, p.Name, x, len(x)))
			}
			f, err := l.CallInputs(flows, ws)
			if err != nil {
				t.Fatal(err)
			}
			k := vals[1]
			if tc.key {
				k = vals[2]
			}
			var scale, concat []float64
			next := 0
			if l.useScale {
				scale, next = scalars[0], 1
			}
			if l.scoreMode == "concat" && !l.additive {
				concat = scalars[next]
			}
			want := dotAttentionReference(l, b, tq, tv, d, vd, vals[0], vals[1], k, scale, concat)
			target := uniformValues(rng, len(want), 1)
			cost := mseCost(t, f.Node, b, target, "y")
			var out gorgonia.Value
			gorgonia.Read(f.Node, &out)
			wrt := append(slices.Clone(ins), ws...)
			checkGradients(t, g, cost, wrt...)
			for j, w := range out.Data().([]float64) {
				if math.Abs(w-want[j]) > 1e-12 {
					t.Fatalf("output %d: %v, reference %v", j, w, want[j])
				}
			}
		})
	}
	t.Run("by hand", func(t *testing.T) {
		l := Attention()
		if _, err := l.BuildInputs([][]int{{1, 1}, {2, 1}}, rand.New(rand.NewPCG(1, 1))); err != nil {
			t.Fatal(err)
		}
		g := gorgonia.NewGraph()
		q := float64Node(g, "q", []float64{1}, 1, 1, 1)
		v := float64Node(g, "v", []float64{0, math.Log(3)}, 1, 2, 1)
		f, err := l.CallInputs([]Flow{{Node: q}, {Node: v}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var out gorgonia.Value
		gorgonia.Read(f.Node, &out)
		runGraph(t, g)
		if got, want := out.Data().([]float64)[0], 0.75*math.Log(3); math.Abs(got-want) > 1e-12 {
			t.Errorf("output %v, want %v", got, want)
		}
	})
}
