package layers

import (
	"fmt"
	"math"

	"github.com/gokeras/gokeras/ops"
)

// The recurrent layers' ONNX mapping: a SimpleRNN, LSTM or GRU is one
// node of ONNX's RNN, LSTM or GRU operator (operator set 14's, layout 0:
// sequences time first), between Transpose nodes; a Bidirectional layer
// is two such nodes, one per direction, and its merge.

// onnxOp is ONNX's operator for the cell.
func (k cellKind) onnxOp() string {
	switch k {
	case lstmCell:
		return "LSTM"
	case gruCell:
		return "GRU"
	}
	return "RNN"
}

// onnxGates lists, for each gate block of ONNX's operator in its order,
// the block of Keras' kernels that holds it: ONNX's LSTM orders its gates
// i, o, f, c where Keras has i, f, c, o; GRU's z, r, h are in the same
// order in both.
func (k cellKind) onnxGates() []int {
	switch k {
	case lstmCell:
		return []int{0, 3, 1, 2}
	case gruCell:
		return []int{0, 1, 2}
	}
	return []int{0}
}

// onnxRecurrentActivation is ONNX's name for a recurrent operator's
// activation a (an entry of its activations attribute), and the alpha and
// beta it takes, if any (activation_alpha and activation_beta, which the
// operator consumes in the order of its activations).
func onnxRecurrentActivation(a Activation) (name string, alpha, beta []float32, err error) {
	switch a.act {
	case ops.Tanh:
		return "Tanh", nil, nil, nil
	case ops.Sigmoid:
		return "Sigmoid", nil, nil, nil
	case ops.ReLU:
		return "Relu", nil, nil, nil
	case ops.Linear:
		return "Affine", []float32{1}, []float32{0}, nil
	case ops.HardSigmoid:
		// Keras 2's hard_sigmoid, clip(0.2·x + 0.5, 0, 1).
		return "HardSigmoid", []float32{0.2}, []float32{0.5}, nil
	case ops.ELU:
		return "Elu", []float32{float32(ops.DefaultAlpha(a.act))}, nil, nil
	case ops.LeakyReLU:
		return "LeakyRelu", []float32{float32(ops.DefaultAlpha(a.act))}, nil, nil
	case ops.Softsign:
		return "Softsign", nil, nil, nil
	case ops.Softplus:
		return "Softplus", nil, nil, nil
	}
	return "", nil, nil, fmt.Errorf("activation %s has no counterpart among the activations of ONNX's recurrent operators (tanh, sigmoid, relu, linear, hard_sigmoid, elu, leaky_relu, softsign, softplus): use one of those", a.act)
}

// onnxActivations are the attributes naming the layer's activations in
// the order its ONNX operator takes them: SimpleRNN's activation; an
// LSTM's recurrent activation (its gates), activation (the candidate)
// and activation (of the cell state); a GRU's recurrent activation and
// activation.
func (l *RecurrentLayer) onnxActivations() ([]ONNXAttr, error) {
	acts := []Activation{l.activation}
	switch l.cell {
	case lstmCell:
		acts = []Activation{l.recurrentActivation, l.activation, l.activation}
	case gruCell:
		acts = []Activation{l.recurrentActivation, l.activation}
	}
	var names []string
	var alphas, betas []float32
	for _, a := range acts {
		name, alpha, beta, err := onnxRecurrentActivation(a)
		if err != nil {
			return nil, err
		}
		names = append(names, name)
		alphas = append(alphas, alpha...)
		betas = append(betas, beta...)
	}
	attrs := []ONNXAttr{stringsAttr("activations", names...)}
	if len(alphas) > 0 {
		attrs = append(attrs, floatsAttr("activation_alpha", alphas...))
	}
	if len(betas) > 0 {
		attrs = append(attrs, floatsAttr("activation_beta", betas...))
	}
	return attrs, nil
}

// onnxWeights returns the weights of ONNX's operator for one direction,
// from the layer's Keras weights params (kernel, recurrent kernel and,
// if the layer has one, bias): W (gates·units, features) and R
// (gates·units, units), the kernels transposed with their gate blocks in
// ONNX's order, and B (2·gates·units), the input bias then the recurrent
// one, so ordered (zeros for a layer without a bias; the recurrent bias
// is zero but for a GRU with reset_after, which has its own).
func (l *RecurrentLayer) onnxWeights(params []*Param) (w, r, b []float32, err error) {
	if len(params) < 2 || len(params) > 3 {
		return nil, nil, nil, fmt.Errorf("%d weights, want a kernel, a recurrent kernel and a bias if the layer has one (was the layer built?)", len(params))
	}
	u := l.units
	order := l.cell.onnxGates()
	gu := len(order) * u
	kernel := params[0].Value.Data().([]float32)
	rec := params[1].Value.Data().([]float32)
	if len(kernel)%gu != 0 || len(rec) != u*gu {
		return nil, nil, nil, fmt.Errorf("a kernel of %d values and a recurrent kernel of %d for %d units of %d gates: the weights are not the layer's", len(kernel), len(rec), u, len(order))
	}
	// transpose reorders a Keras kernel (rows, gates·units) into ONNX's
	// (gates·units, rows).
	transpose := func(k []float32) []float32 {
		rows := len(k) / gu
		out := make([]float32, len(k))
		for g, kg := range order {
			for j := range u {
				for i := range rows {
					out[(g*u+j)*rows+i] = k[i*gu+kg*u+j]
				}
			}
		}
		return out
	}
	// gates reorders a bias of Keras' gate blocks into ONNX's order.
	gates := func(v []float32) []float32 {
		out := make([]float32, gu)
		for g, kg := range order {
			copy(out[g*u:(g+1)*u], v[kg*u:(kg+1)*u])
		}
		return out
	}
	b = make([]float32, 2*gu)
	if len(params) == 3 {
		bias := params[2].Value.Data().([]float32)
		switch len(bias) {
		case gu:
			copy(b, gates(bias))
		case 2 * gu: // a GRU's with reset_after: the input bias, then the recurrent one
			copy(b, gates(bias[:gu]))
			copy(b[gu:], gates(bias[gu:]))
		default:
			return nil, nil, nil, fmt.Errorf("a bias of %d values for %d units of %d gates: the weights are not the layer's", len(bias), u, len(order))
		}
	}
	return transpose(kernel), transpose(rec), b, nil
}

// onnxNode adds the layer's ONNX operator, of one direction (reverse for
// go_backwards), reading x, sequences time first (steps, batch,
// features), with its weights params, named with scope before them
// (a Bidirectional layer's half's name, "forward_lstm/W"), and initial states init (none: zero
// states; else h, and an LSTM's c, each (batch, units)). It returns the
// operator's outputs: Y (steps, 1, batch, units), each step's output in
// the order of the steps, whichever way the layer reads them; Y_h (1,
// batch, units), the last state; and an LSTM's Y_c, its last cell state.
func (l *RecurrentLayer) onnxNode(g ONNXGraph, x, scope string, params []*Param, init []string) ([]string, error) {
	attrs, err := l.onnxActivations()
	if err != nil {
		return nil, err
	}
	w, r, b, err := l.onnxWeights(params)
	if err != nil {
		return nil, err
	}
	gu, features := len(b)/2, len(w)/(len(b)/2)
	direction := "forward"
	if l.goBackwards {
		direction = "reverse"
	}
	attrs = append(attrs, intAttr("hidden_size", int64(l.units)), stringAttr("direction", direction))
	if l.cell == gruCell && l.resetAfter {
		attrs = append(attrs, intAttr("linear_before_reset", 1))
	}
	name := func(what string) string { return scope + what }
	inputs := []string{x,
		g.Weight(name("W"), []int{1, gu, features}, w),
		g.Weight(name("R"), []int{1, gu, l.units}, r),
		g.Weight(name("B"), []int{1, 2 * gu}, b)}
	if len(init) > 0 {
		if len(init) != l.stateCount() {
			return nil, fmt.Errorf("%d initial states, want %d", len(init), l.stateCount())
		}
		inputs = append(inputs, "") // sequence_lens: every sequence whole
		for _, s := range init {
			inputs = append(inputs, g.Node("Unsqueeze", []string{s, g.Int64s("axes", 0)}))
		}
	}
	outs := 2
	if l.cell == lstmCell {
		outs = 3
	}
	return g.NodeOutputs(l.cell.onnxOp(), inputs, outs, attrs...), nil
}

// onnxCall adds the layer (whose weights are params) to g, reading the
// sequences seq time first (steps, batch, features; onnxSteps makes them)
// and initial states init (none: zero), and returns its outputs as Keras has them: the output, (batch,
// steps, units) with return_sequences, else (batch, units), then, with
// return_state, the last states, (batch, units) each. With
// return_sequences the steps' outputs are in the order the layer
// computes them (the last step's first with go_backwards), or in the
// other order where flip is set (Bidirectional's backward half, which
// Keras puts back in the order of the steps). Its weights are named with
// scope before them, as onnxNode names them.
func (l *RecurrentLayer) onnxCall(g ONNXGraph, seq, scope string, params []*Param, init []string, flip bool) ([]string, error) {
	y, err := l.onnxNode(g, seq, scope, params, init)
	if err != nil {
		return nil, err
	}
	var out string
	if l.returnSequences {
		// Y is in the order of the steps; Keras outputs a backward
		// layer's in the order it computes them, the last step's first.
		ys := y[0]
		if l.goBackwards != flip {
			ys = g.Node("Slice", []string{ys, g.Int64s("starts", -1), g.Int64s("ends", math.MinInt64), g.Int64s("axes", 0), g.Int64s("steps", -1)})
		}
		ys = g.Node("Squeeze", []string{ys, g.Int64s("axes", 1)})
		out = g.Node("Transpose", []string{ys}, intsAttr("perm", 1, 0, 2))
	} else {
		out = g.Node("Squeeze", []string{y[1], g.Int64s("axes", 0)})
	}
	outs := []string{out}
	if l.returnState {
		for _, s := range y[1:] {
			outs = append(outs, g.Node("Squeeze", []string{s, g.Int64s("axes", 0)}))
		}
	}
	return outs, nil
}

// onnxSteps returns x, the layer's input sequences (batch, steps,
// features), time first, (steps, batch, features), as ONNX's recurrent
// operators take them.
func onnxSteps(g ONNXGraph, x string) (string, error) {
	if sh := g.InputShape(); len(sh) != 2 {
		return "", fmt.Errorf("input samples of shape %v: want sequences (timesteps, features)", sh)
	}
	return g.Node("Transpose", []string{g.ChannelsLast(x)}, intsAttr("perm", 1, 0, 2)), nil
}

// ONNX adds the layer as ONNX's RNN, LSTM or GRU operator, between
// Transpose nodes (ONNX's operators take their sequences time first):
// the kernels transposed, an LSTM's gates reordered from Keras' i, f, c,
// o to ONNX's i, o, f, c, a GRU with reset_after as ONNX's
// linear_before_reset, and go_backwards as the reverse direction, its
// outputs with return_sequences put in the order Keras gives them. An
// activation ONNX's recurrent operators lack (gelu, swish, selu,
// exponential) is refused, named. A layer with return_state outputs
// several tensors: ONNXOutputs adds it.
func (l *RecurrentLayer) ONNX(g ONNXGraph, in string) (string, error) {
	outs, err := l.ONNXOutputs(g, []string{in})
	if err != nil {
		return "", err
	}
	return outs[0], nil
}

// ONNXOutputs adds the layer to g, as ONNX does, reading its sequences
// and, after them, its initial states if it was called with them (Keras'
// initial_state: h, and an LSTM's c), and returns its outputs: the
// output, then, with return_state, its last states.
func (l *RecurrentLayer) ONNXOutputs(g ONNXGraph, in []string) ([]string, error) {
	if len(in) != 1 && len(in) != 1+l.stateCount() {
		return nil, fmt.Errorf("%s layer %q: called on %d tensors, want its sequences and, optionally, %d initial state(s)", l.Type(), l.name, len(in), l.stateCount())
	}
	seq, err := onnxSteps(g, in[0])
	var outs []string
	if err == nil {
		outs, err = l.onnxCall(g, seq, "", l.Params(), in[1:], false)
	}
	if err != nil {
		return nil, fmt.Errorf("%s layer %q: %w", l.Type(), l.name, err)
	}
	return outs, nil
}

// ONNX adds Bidirectional as two nodes of its layer's ONNX operator, the
// forward half's and the backward one's, whose outputs with
// return_sequences are put back in the order of the steps before they
// are merged, as Keras does: concatenated (Concat), summed (Add),
// multiplied (Mul) or averaged (Add, then Mul by 0.5). With merge mode
// None or return_state the layer outputs several tensors: ONNXOutputs
// adds it.
func (l *BidirectionalLayer) ONNX(g ONNXGraph, in string) (string, error) {
	outs, err := l.ONNXOutputs(g, []string{in})
	if err != nil {
		return "", err
	}
	return outs[0], nil
}

// ONNXOutputs adds the layer to g, as ONNX does, and returns its outputs:
// the merged output (the forward and backward outputs, two, with merge
// mode None), then, with return_state, the forward half's last states and
// the backward half's.
func (l *BidirectionalLayer) ONNXOutputs(g ONNXGraph, in []string) ([]string, error) {
	what := fmt.Sprintf("bidirectional layer %q", l.name)
	if len(in) != 1 {
		return nil, fmt.Errorf("%s: called on %d tensors: the ONNX export maps a Bidirectional layer called on its sequences only", what, len(in))
	}
	if l.forward == nil || len(l.params)%2 != 0 {
		return nil, fmt.Errorf("%s: not built", what)
	}
	seq, err := onnxSteps(g, in[0])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	half := len(l.params) / 2
	fw, err := l.forward.onnxCall(g, seq, l.forward.name+"/", l.params[:half], nil, false)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", what, l.forward.name, err)
	}
	bw, err := l.backward.onnxCall(g, seq, l.backward.name+"/", l.params[half:], nil, true)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", what, l.backward.name, err)
	}
	y, yRev := fw[0], bw[0]
	var outs []string
	switch l.mergeMode {
	case "":
		outs = []string{y, yRev}
	case "concat":
		outs = []string{g.Node("Concat", []string{y, yRev}, intAttr("axis", -1))}
	case "sum":
		outs = []string{g.Node("Add", []string{y, yRev})}
	case "mul":
		outs = []string{g.Node("Mul", []string{y, yRev})}
	case "ave":
		sum := g.Node("Add", []string{y, yRev})
		outs = []string{g.Node("Mul", []string{sum, g.Weight("half", nil, []float32{0.5})})}
	default:
		return nil, fmt.Errorf("%s: merge mode %q has no ONNX mapping", what, l.mergeMode)
	}
	outs = append(outs, fw[1:]...)
	return append(outs, bw[1:]...), nil
}
