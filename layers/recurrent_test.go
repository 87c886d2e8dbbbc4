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

// recurrentGraph calls l, built for samples (steps, features), on x
// (batch, steps, features) in float64, with its weights set to ws (in
// Params' order), and returns the graph's nodes: x, the weights, the
// output and a cost (the mean squared error of the output against
// target, when given).
type recurrentGraph struct {
	g         *gorgonia.ExprGraph
	x, out    *gorgonia.Node
	ws        []*gorgonia.Node
	cost      *gorgonia.Node
	outValues func() []float64
}

func newRecurrentGraph(t *testing.T, l *RecurrentLayer, batch, steps, features int, x []float64, ws [][]float64, target []float64) recurrentGraph {
	t.Helper()
	if _, err := l.Build([]int{steps, features}, rand.New(rand.NewPCG(1, 2))); err != nil {
		t.Fatal(err)
	}
	g := gorgonia.NewGraph()
	r := recurrentGraph{g: g}
	r.x = float64Node(g, "x", x, batch, steps, features)
	for i, p := range l.Params() {
		s := p.Value.Shape().Clone()
		if len(ws[i]) != s.TotalSize() {
			t.Fatalf("weight %s: %d values for shape %v", p.Name, len(ws[i]), s)
		}
		r.ws = append(r.ws, float64Node(g, p.Name, slices.Clone(ws[i]), s...))
	}
	f, err := l.Call(Flow{Node: r.x, NeedsGrad: true}, r.ws)
	if err != nil {
		t.Fatal(err)
	}
	r.out = f.Node
	var read gorgonia.Value
	gorgonia.Read(r.out, &read)
	r.outValues = func() []float64 { return slices.Clone(read.Data().([]float64)) }
	if target != nil {
		r.cost = mseCost(t, r.out, batch, target, "y")
	}
	return r
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// TestRecurrentHandComputed checks one unit over two steps of one
// feature against the cells' formulas worked out by hand, forwards and
// backwards, the last state and the sequence.
func TestRecurrentHandComputed(t *testing.T) {
	x := []float64{1, 2}
	// SimpleRNN: kernel 0.5, recurrent -1, bias 0.1.
	rnn := func(x1, x2 float64) []float64 {
		h1 := math.Tanh(0.5*x1 + 0.1)
		return []float64{h1, math.Tanh(0.5*x2 + 0.1 - h1)}
	}
	// LSTM: kernel (i, f, c, o), recurrent, bias.
	wk, wr, wb := []float64{0.5, -0.3, 0.8, 0.2}, []float64{0.1, 0.4, -0.6, 0.9}, []float64{0.05, 1, -0.1, 0.2}
	lstm := func(x1, x2 float64) []float64 {
		h, c := 0.0, 0.0
		var hs []float64
		for _, v := range []float64{x1, x2} {
			i := sigmoid(wk[0]*v + wr[0]*h + wb[0])
			f := sigmoid(wk[1]*v + wr[1]*h + wb[1])
			g := math.Tanh(wk[2]*v + wr[2]*h + wb[2])
			o := sigmoid(wk[3]*v + wr[3]*h + wb[3])
			c = f*c + i*g
			h = o * math.Tanh(c)
			hs = append(hs, h)
		}
		return hs
	}
	// GRU: kernel (z, r, h), recurrent, bias rows (input, recurrent).
	gk, gr, gb := []float64{0.7, -0.4, 0.3}, []float64{-0.2, 0.5, 0.6}, []float64{0.1, -0.1, 0.2, 0.3, 0.05, -0.25}
	gru := func(x1, x2 float64) []float64 {
		h := 0.0
		var hs []float64
		for _, v := range []float64{x1, x2} {
			z := sigmoid(gk[0]*v + gb[0] + gr[0]*h + gb[3])
			r := sigmoid(gk[1]*v + gb[1] + gr[1]*h + gb[4])
			hh := math.Tanh(gk[2]*v + gb[2] + r*(gr[2]*h+gb[5]))
			h = z*h + (1-z)*hh
			hs = append(hs, h)
		}
		return hs
	}
	// GRU without reset_after: one bias, the reset before the product.
	gb2 := []float64{0.1, -0.1, 0.2}
	gruBefore := func(x1, x2 float64) []float64 {
		h := 0.0
		var hs []float64
		for _, v := range []float64{x1, x2} {
			z := sigmoid(gk[0]*v + gb2[0] + gr[0]*h)
			r := sigmoid(gk[1]*v + gb2[1] + gr[1]*h)
			hh := math.Tanh(gk[2]*v + gb2[2] + gr[2]*(r*h))
			h = z*h + (1-z)*hh
			hs = append(hs, h)
		}
		return hs
	}
	cases := []struct {
		name string
		make func(...RecurrentOption) *RecurrentLayer
		ws   [][]float64
		ref  func(x1, x2 float64) []float64
	}{
		{"SimpleRNN", func(o ...RecurrentOption) *RecurrentLayer { return SimpleRNN(1, o...) }, [][]float64{{0.5}, {-1}, {0.1}}, rnn},
		{"LSTM", func(o ...RecurrentOption) *RecurrentLayer { return LSTM(1, o...) }, [][]float64{wk, wr, wb}, lstm},
		{"GRU", func(o ...RecurrentOption) *RecurrentLayer { return GRU(1, o...) }, [][]float64{gk, gr, gb}, gru},
		{"GRU/reset_after=false", func(o ...RecurrentOption) *RecurrentLayer { return GRU(1, append(o, ResetAfter(false))...) }, [][]float64{gk, gr, gb2}, gruBefore},
	}
	for _, c := range cases {
		for _, backwards := range []bool{false, true} {
			for _, seq := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/backwards=%t/sequences=%t", c.name, backwards, seq), func(t *testing.T) {
					var opts []RecurrentOption
					if backwards {
						opts = append(opts, GoBackwards())
					}
					if seq {
						opts = append(opts, ReturnSequences())
					}
					r := newRecurrentGraph(t, c.make(opts...), 1, 2, 1, x, c.ws, nil)
					m := gorgonia.NewTapeMachine(r.g)
					defer m.Close()
					if err := m.RunAll(); err != nil {
						t.Fatal(err)
					}
					want := c.ref(x[0], x[1])
					if backwards {
						want = c.ref(x[1], x[0])
					}
					if !seq {
						want = want[1:]
					}
					got := r.outValues()
					if len(got) != len(want) {
						t.Fatalf("%d outputs, want %d", len(got), len(want))
					}
					for i := range want {
						if math.Abs(got[i]-want[i]) > 1e-12 {
							t.Errorf("output %d: %.15g, want %.15g", i, got[i], want[i])
						}
					}
				})
			}
		}
	}
}

// TestRecurrentGradients checks the gradients of every layer's input and
// weights, with and without ReturnSequences and GoBackwards, against
// central finite differences in float64.
func TestRecurrentGradients(t *testing.T) {
	const batch, steps, features, units = 2, 3, 2, 3
	rng := rand.New(rand.NewPCG(3, 4))
	makers := map[string]func(...RecurrentOption) *RecurrentLayer{
		"SimpleRNN": func(o ...RecurrentOption) *RecurrentLayer { return SimpleRNN(units, o...) },
		"LSTM":      func(o ...RecurrentOption) *RecurrentLayer { return LSTM(units, o...) },
		"GRU":       func(o ...RecurrentOption) *RecurrentLayer { return GRU(units, o...) },
	}
	makers["GRU/reset_after=false"] = func(o ...RecurrentOption) *RecurrentLayer { return GRU(units, append(o, ResetAfter(false))...) }
	for _, name := range []string{"SimpleRNN", "LSTM", "GRU", "GRU/reset_after=false"} {
		for _, opts := range [][]RecurrentOption{nil, {ReturnSequences()}, {GoBackwards()}, {GoBackwards(), ReturnSequences()}, {WithoutBias(), ReturnSequences()}} {
			l := makers[name](opts...)
			label := fmt.Sprintf("%s/sequences=%t/backwards=%t/bias=%t", name, l.returnSequences, l.goBackwards, l.useBias)
			t.Run(label, func(t *testing.T) {
				if _, err := l.Build([]int{steps, features}, rand.New(rand.NewPCG(1, 2))); err != nil {
					t.Fatal(err)
				}
				var ws [][]float64
				for _, p := range l.Params() {
					ws = append(ws, uniformValues(rng, p.Size(), 0.8))
				}
				outSize := batch * units
				if l.returnSequences {
					outSize *= steps
				}
				r := newRecurrentGraph(t, l, batch, steps, features, uniformValues(rng, batch*steps*features, 1), ws, uniformValues(rng, outSize, 1))
				wrt := append([]*gorgonia.Node{r.x}, r.ws...)
				checkGradients(t, r.g, r.cost, wrt...)
			})
		}
	}
}

// TestRecurrentShapes checks the weights' shapes and the output shapes
// against Keras', the parameter counts Keras' summary shows, and the
// refusals of inputs that are not sequences.
func TestRecurrentShapes(t *testing.T) {
	cases := []struct {
		l      *RecurrentLayer
		params int
		shapes string
		out    []int
	}{
		{SimpleRNN(128), 24704, "kernel [64 128] recurrent_kernel [128 128] bias [128]", []int{128}},
		{LSTM(128), 98816, "kernel [64 512] recurrent_kernel [128 512] bias [512]", []int{128}},
		{GRU(128), 74496, "kernel [64 384] recurrent_kernel [128 384] bias [2 384]", []int{128}},
		{LSTM(8, ReturnSequences(), WithoutBias()), 4 * (64*8 + 8*8), "kernel [64 32] recurrent_kernel [8 32]", []int{10, 8}},
		{GRU(128, ResetAfter(false)), 74112, "kernel [64 384] recurrent_kernel [128 384] bias [384]", []int{128}},
	}
	for _, c := range cases {
		out, err := c.l.Build([]int{10, 64}, rand.New(rand.NewPCG(1, 2)))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(out, c.out) {
			t.Errorf("%s: output %v, want %v", c.l.Type(), out, c.out)
		}
		n := 0
		var shapes []string
		for _, p := range c.l.Params() {
			n += p.Size()
			shapes = append(shapes, fmt.Sprintf("%s %v", p.Name, []int(p.Value.Shape())))
		}
		if n != c.params || strings.Join(shapes, " ") != c.shapes {
			t.Errorf("%s: %d parameters (%s), want %d (%s)", c.l.Type(), n, strings.Join(shapes, " "), c.params, c.shapes)
		}
	}
	if _, err := LSTM(4).Build([]int{10}, rand.New(rand.NewPCG(1, 2))); err == nil || !strings.Contains(err.Error(), "(None, timesteps, features)") {
		t.Errorf("flat samples: %v", err)
	}
	if _, err := GRU(0).Build([]int{3, 4}, rand.New(rand.NewPCG(1, 2))); err == nil || !strings.Contains(err.Error(), "units must be a positive integer") {
		t.Errorf("zero units: %v", err)
	}
}

// TestLSTMUnitForgetBias checks that an LSTM's forget gate bias starts at
// 1 and the others at the bias initializer's values (Keras'
// unit_forget_bias), and all at it without.
func TestLSTMUnitForgetBias(t *testing.T) {
	l := LSTM(3, BiasInitializer(constant(0.5)))
	if _, err := l.Build([]int{2, 4}, rand.New(rand.NewPCG(1, 2))); err != nil {
		t.Fatal(err)
	}
	want := []float32{0.5, 0.5, 0.5, 1, 1, 1, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5}
	if got := l.bias.Value.Data().([]float32); !slices.Equal(got, want) {
		t.Errorf("bias %v, want %v", got, want)
	}
	l = LSTM(3, BiasInitializer(constant(0.5)), WithoutUnitForgetBias())
	if _, err := l.Build([]int{2, 4}, rand.New(rand.NewPCG(1, 2))); err != nil {
		t.Fatal(err)
	}
	for _, v := range l.bias.Value.Data().([]float32) {
		if v != 0.5 {
			t.Fatalf("bias %v without unit_forget_bias, want all 0.5", l.bias.Value.Data())
		}
	}
}

// TestOrthogonal checks that Orthogonal's matrices have orthonormal rows
// (fewer rows than columns) or columns (more), scaled by the gain, and
// that the same stream gives the same matrix.
func TestOrthogonal(t *testing.T) {
	for _, c := range []struct{ rows, cols int }{{4, 12}, {12, 4}, {5, 5}} {
		w := make([]float32, c.rows*c.cols)
		Orthogonal(2).Fill(w, c.rows, c.cols, rand.New(rand.NewPCG(5, 6)))
		// Gram matrix of the shorter side's vectors: 4·I.
		n, m := min(c.rows, c.cols), max(c.rows, c.cols)
		at := func(v, k int) float64 { // element k of vector v
			if c.rows <= c.cols {
				return float64(w[v*c.cols+k])
			}
			return float64(w[k*c.cols+v])
		}
		for a := range n {
			for b := range n {
				dot := 0.0
				for k := range m {
					dot += at(a, k) * at(b, k)
				}
				want := 0.0
				if a == b {
					want = 4
				}
				if math.Abs(dot-want) > 1e-5 {
					t.Errorf("%dx%d: vectors %d·%d = %g, want %g", c.rows, c.cols, a, b, dot, want)
				}
			}
		}
		again := make([]float32, len(w))
		Orthogonal(2).Fill(again, c.rows, c.cols, rand.New(rand.NewPCG(5, 6)))
		if !slices.Equal(w, again) {
			t.Errorf("%dx%d: another matrix from the same stream", c.rows, c.cols)
		}
	}
}

// TestRecurrentFusedMatchesUnrolled checks that the layers' one
// Recurrence op computes what the same recurrence unrolled over time in
// ops of their own computes, output and gradients in float64, for each
// cell with and without sequences, go_backwards and a bias, and other
// activations.
func TestRecurrentFusedMatchesUnrolled(t *testing.T) {
	const batch, steps, features, units = 3, 4, 2, 3
	rng := rand.New(rand.NewPCG(8, 9))
	type result struct{ out, grads []float64 }
	run := func(l *RecurrentLayer, fused bool, x, target []float64, ws [][]float64) result {
		g := gorgonia.NewGraph()
		xn := float64Node(g, "x", slices.Clone(x), batch, steps, features)
		wrt := []*gorgonia.Node{xn}
		for i, p := range l.Params() {
			wrt = append(wrt, float64Node(g, p.Name, slices.Clone(ws[i]), p.Value.Shape()...))
		}
		out, err := l.call(Flow{Node: xn, NeedsGrad: true}, wrt[1:], fused)
		if err != nil {
			t.Fatal(err)
		}
		var outv gorgonia.Value
		gorgonia.Read(out, &outv)
		cost := mseCost(t, out, batch, slices.Clone(target), "y")
		if _, err := gorgonia.Grad(cost, wrt...); err != nil {
			t.Fatal(err)
		}
		m := gorgonia.NewTapeMachine(g, gorgonia.BindDualValues(wrt...))
		defer m.Close()
		if err := m.RunAll(); err != nil {
			t.Fatal(err)
		}
		r := result{out: slices.Clone(outv.Data().([]float64))}
		for _, w := range wrt {
			gv, err := w.Grad()
			if err != nil {
				t.Fatal(err)
			}
			r.grads = append(r.grads, gv.Data().([]float64)...)
		}
		return r
	}
	makers := []func(...RecurrentOption) *RecurrentLayer{
		func(o ...RecurrentOption) *RecurrentLayer { return SimpleRNN(units, o...) },
		func(o ...RecurrentOption) *RecurrentLayer { return LSTM(units, o...) },
		func(o ...RecurrentOption) *RecurrentLayer { return GRU(units, o...) },
		func(o ...RecurrentOption) *RecurrentLayer { return GRU(units, append(o, ResetAfter(false))...) },
	}
	for _, mk := range makers {
		for _, opts := range [][]RecurrentOption{nil, {ReturnSequences()}, {GoBackwards()}, {GoBackwards(), ReturnSequences()},
			{WithoutBias(), ReturnSequences()}, {Softsign, RecurrentActivation(HardSigmoid), ReturnSequences()}, {ELU}} {
			l := mk(opts...)
			name := fmt.Sprintf("%s/reset_after=%t/act=%v/rec=%v/sequences=%t/backwards=%t/bias=%t", l.Type(), l.resetAfter, l.activation,
				l.recurrentActivation, l.returnSequences, l.goBackwards, l.useBias)
			t.Run(name, func(t *testing.T) {
				if _, err := l.Build([]int{steps, features}, rand.New(rand.NewPCG(1, 2))); err != nil {
					t.Fatal(err)
				}
				var ws [][]float64
				for _, p := range l.Params() {
					ws = append(ws, uniformValues(rng, p.Size(), 0.8))
				}
				outSize := batch * units
				if l.returnSequences {
					outSize *= steps
				}
				x, target := uniformValues(rng, batch*steps*features, 1), uniformValues(rng, outSize, 1)
				fused, unrolled := run(l, true, x, target, ws), run(l, false, x, target, ws)
				for _, c := range []struct {
					what      string
					got, want []float64
				}{{"output", fused.out, unrolled.out}, {"gradients", fused.grads, unrolled.grads}} {
					if len(c.got) != len(c.want) {
						t.Fatalf("%s: %d values, want %d", c.what, len(c.got), len(c.want))
					}
					for i := range c.want {
						if math.Abs(c.got[i]-c.want[i]) > 1e-12*max(1, math.Abs(c.want[i])) {
							t.Fatalf("%s %d: fused %.15g, unrolled %.15g", c.what, i, c.got[i], c.want[i])
						}
					}
				}
			})
		}
	}
}

// TestRecurrentStateAndMaskGradients checks, against central finite
// differences in float64, the gradients through a recurrent layer with
// return_state (the output and each last state in the cost), given a
// mask that skips steps, read forwards and backwards, with and without
// return_sequences: the layer's call (CallOutputs) cuts the fused op's
// output into its parts, whose gradients must reach the weights.
func TestRecurrentStateAndMaskGradients(t *testing.T) {
	const batch, steps, features, units = 2, 4, 2, 3
	rng := rand.New(rand.NewPCG(5, 8))
	for _, mk := range []func(...RecurrentOption) *RecurrentLayer{
		func(o ...RecurrentOption) *RecurrentLayer { return SimpleRNN(units, o...) },
		func(o ...RecurrentOption) *RecurrentLayer { return LSTM(units, o...) },
		func(o ...RecurrentOption) *RecurrentLayer { return GRU(units, o...) },
	} {
		for _, opts := range [][]RecurrentOption{{ReturnState()}, {ReturnState(), GoBackwards(), ReturnSequences()}, {ReturnState(), ReturnSequences()}} {
			l := mk(opts...)
			t.Run(fmt.Sprintf("%s/sequences=%t/backwards=%t", l.Type(), l.returnSequences, l.goBackwards), func(t *testing.T) {
				if _, err := l.Build([]int{steps, features}, rand.New(rand.NewPCG(1, 2))); err != nil {
					t.Fatal(err)
				}
				g := gorgonia.NewGraph()
				x := float64Node(g, "x", uniformValues(rng, batch*steps*features, 1), batch, steps, features)
				wrt := []*gorgonia.Node{x}
				for _, p := range l.Params() {
					wrt = append(wrt, float64Node(g, p.Name, uniformValues(rng, p.Size(), 0.8), p.Value.Shape()...))
				}
				// Sample 0 skips its second step, sample 1 its last two.
				mask := float64Node(g, "mask", []float64{1, 0, 1, 1, 1, 1, 0, 0}, batch, steps)
				outs, err := l.CallOutputs([]Flow{{Node: x, NeedsGrad: true, Mask: mask}}, wrt[1:])
				if err != nil {
					t.Fatal(err)
				}
				checkGradients(t, g, mseCostOfOutputs(t, outs, batch, rng), wrt...)
			})
		}
	}
}

// TestBidirectionalGradients checks, against central finite differences
// in float64, the gradients through Bidirectional for each merge mode,
// with return_sequences, and with return_state and a mask (constant,
// skipping steps): every output in the cost.
func TestBidirectionalGradients(t *testing.T) {
	const batch, steps, features, units = 2, 3, 2, 2
	rng := rand.New(rand.NewPCG(9, 4))
	type variant struct {
		mode            string
		seq, state, msk bool
	}
	var variants []variant
	for _, mode := range []string{"concat", "sum", "mul", "ave", ""} {
		variants = append(variants, variant{mode, true, false, false})
	}
	variants = append(variants, variant{"concat", false, true, true}, variant{"ave", true, true, true})
	for _, v := range variants {
		for _, mk := range []func(...RecurrentOption) *RecurrentLayer{
			func(o ...RecurrentOption) *RecurrentLayer { return LSTM(units, o...) },
			func(o ...RecurrentOption) *RecurrentLayer { return GRU(units, o...) },
		} {
			var opts []RecurrentOption
			if v.seq {
				opts = append(opts, ReturnSequences())
			}
			if v.state {
				opts = append(opts, ReturnState())
			}
			l := Bidirectional(mk(opts...), MergeMode(v.mode))
			t.Run(fmt.Sprintf("%s/%+v", l.layer.Type(), v), func(t *testing.T) {
				if _, err := l.Build([]int{steps, features}, rand.New(rand.NewPCG(1, 2))); err != nil {
					t.Fatal(err)
				}
				g := gorgonia.NewGraph()
				x := float64Node(g, "x", uniformValues(rng, batch*steps*features, 1), batch, steps, features)
				wrt := []*gorgonia.Node{x}
				for i, p := range l.Params() {
					wrt = append(wrt, float64Node(g, fmt.Sprintf("w%d", i), uniformValues(rng, p.Size(), 0.8), p.Value.Shape()...))
				}
				in := Flow{Node: x, NeedsGrad: true}
				if v.msk {
					in.Mask = float64Node(g, "mask", []float64{1, 0, 1, 1, 1, 0}, batch, steps)
				}
				outs, err := l.CallOutputs([]Flow{in}, wrt[1:])
				if err != nil {
					t.Fatal(err)
				}
				checkGradients(t, g, mseCostOfOutputs(t, outs, batch, rng), wrt...)
			})
		}
	}
}

// TestSequenceLayersRefuseONNX: the ONNX export refuses Masking and
// Embedding with mask_zero, naming the layer: ONNX's recurrent operators
// cannot carry Keras' masks, whose steps may be masked anywhere.
func TestSequenceLayersRefuseONNX(t *testing.T) {
	for _, c := range []struct {
		l    ONNXMapper
		want string
	}{
		{Masking(0, Named("m")), `masking layer "m"`},
		{Embedding(5, 2, MaskZero(true), Named("e")), `embedding layer "e"`},
	} {
		_, err := c.l.ONNX(nil, "x")
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "ONNX") {
			t.Errorf("error %v, want one naming %s and ONNX", err, c.want)
		}
	}
}
