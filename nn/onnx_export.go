package nn

import (
	"fmt"
	"maps"
	"reflect"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/gokeras/gokeras/internal/atomicfile"
	"github.com/gokeras/gokeras/internal/onnx"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/ops"
)

// The names of the exported graph's input and output, and of its batch
// dimension.
const (
	onnxInputName  = "input"
	onnxOutputName = "output"
	onnxBatch      = "batch"
)

// ExportONNX writes the model's inference graph to path as an ONNX model
// (IR version 8, operator set 17): what Predict computes, for any number
// of samples. Dropout is left out, as Predict leaves it out, and
// BatchNormalization normalizes with its moving statistics.
//
// The graph's input, "input", is a float32 tensor of shape (batch, the
// model's input shape), the values Predict's Inputs gather: the model's
// own input, after any scaling the data does (nn.Pixels and the CIFAR-10
// loader divide by 255 as they gather, so the ONNX model takes the scaled
// values, as the gokeras model does). Its output, "output", is float32 of
// shape (batch, the model's output shape), what Predict returns. The
// batch dimension is symbolic ("batch").
//
// Every layer of package layers is mapped, channels last as in Keras:
// convolutions and poolings run on ONNX's channels-first layout between
// Transpose nodes, with the kernels reordered and "same" padding written
// as explicit pads (the extra row or column at the end, as TensorFlow
// pads); Embedding casts its float32 indices to int64 and gathers. Where
// Predict refuses an index that is not a row of the table, the runtime
// refuses one past the end only: ONNX's Gather counts a negative index
// from the end, and the cast truncates a fraction. A layer defined
// outside package layers has no ONNX mapping: the error names it.
//
// The model must be built, or declare its input shape. The path is
// checked first, so that a directory or a missing folder fails before
// anything else; the file is replaced atomically, and weights holding a
// NaN or an infinity are not written, as SaveWeights refuses them.
func (m *Sequential) ExportONNX(path string) error {
	if m == nil {
		return fmt.Errorf("export ONNX: %w", ErrNilModel)
	}
	release, err := m.claim("export ONNX", false)
	if err != nil {
		return err
	}
	defer release()
	if err := m.exportONNX(path); err != nil {
		return fmt.Errorf("export ONNX: %w", err)
	}
	return nil
}

func (m *Sequential) exportONNX(path string) error {
	if err := atomicfile.Check(path); err != nil {
		return err
	}
	if err := m.ensureBuilt(); err != nil {
		return err
	}
	if n := 4 * int64(m.CountParams()); n > onnxMaxBytes {
		return onnxTooLarge(m.name, n, "of weights")
	}
	model, err := m.onnxModel()
	if err != nil {
		return err
	}
	var size countingWriter
	if err := model.Write(&size); err != nil {
		return err
	}
	if int64(size) > onnxMaxBytes {
		return onnxTooLarge(m.name, int64(size), "as an ONNX file")
	}
	return atomicfile.Write(path, model.Write)
}

// onnxMaxBytes is the largest ONNX file ExportONNX writes: a protobuf
// message is at most 2 GiB (2^31-1 bytes), and ONNX Runtime and
// onnx.checker refuse a larger model file. (A variable so that a test can
// lower it.)
var onnxMaxBytes int64 = 1<<31 - 1

// onnxTooLarge is the error for a model that does not fit in one ONNX file.
func onnxTooLarge(model string, n int64, what string) error {
	return fmt.Errorf("model %q takes %d bytes %s, more than the %d (2 GiB) a protobuf message, and so an ONNX file, can hold: "+
		"ONNX keeps larger weights in external data files, which gokeras does not write yet; export a smaller model, "+
		"or save this one with Save or SaveWeights (safetensors has no such limit)", model, n, what, onnxMaxBytes)
}

// countingWriter counts the bytes written to it.
type countingWriter int64

func (c *countingWriter) Write(p []byte) (int, error) {
	*c += countingWriter(len(p))
	return len(p), nil
}

// onnxModel builds the ONNX model of the model's inference graph, from
// its weights on the host.
func (m *Sequential) onnxModel() (*onnx.Model, error) {
	if err := m.syncWeights(); err != nil {
		return nil, err
	}
	for _, w := range m.weights() {
		data := w.value.Data().([]float32)
		if i := firstNonFinite(data); i >= 0 {
			return nil, m.diverged("weight "+w.name, data[i], i)
		}
	}
	g := &onnxGraph{cur: onnxInputName, shape: slices.Clone(m.inputShape), used: map[string]bool{onnxInputName: true, onnxOutputName: true}}
	in := m.inputShape
	for i, l := range m.layers {
		if err := g.addLayer(l, in, m.layerOut[i]); err != nil {
			return nil, fmt.Errorf("layer %d (%q): %w", i+1, l.Name(), err)
		}
		in = m.layerOut[i]
	}
	g.finish()
	g.g.Name = m.name
	g.g.DocString = fmt.Sprintf("The inference graph of the gokeras Sequential model %q, as its Predict computes it.", m.name)
	g.g.Inputs = []onnx.ValueInfo{onnxValue(onnxInputName, m.inputShape)}
	g.g.Outputs = []onnx.ValueInfo{onnxValue(onnxOutputName, m.outShape)}
	return &onnx.Model{
		IRVersion:       onnx.IRVersion,
		Opsets:          []onnx.OpsetID{{Version: onnx.OpsetVersion}},
		ProducerName:    "gokeras",
		ProducerVersion: producerVersion(),
		Graph:           g.g,
	}, nil
}

// onnxValue describes a float32 value of the given sample shape, batch
// first.
func onnxValue(name string, sample []int) onnx.ValueInfo {
	dims := []onnx.Dim{{Param: onnxBatch}}
	for _, d := range sample {
		dims = append(dims, onnx.Dim{Value: int64(d)})
	}
	return onnx.ValueInfo{Name: name, ElemType: onnx.Float, Dims: dims}
}

// producerVersion is gokeras' module version, as the build knows it.
func producerVersion() string {
	const module = "github.com/gokeras/gokeras"
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	if info.Main.Path == module {
		return info.Main.Version
	}
	for _, d := range info.Deps {
		if d.Path == module {
			return d.Version
		}
	}
	return ""
}

// onnxGraph is an ONNX graph being built, layer after layer.
type onnxGraph struct {
	g onnx.Graph
	// prefix is the name of the layer being exported: its nodes and
	// initializers are named after it.
	prefix string
	// cur is the value the next layer reads, shape its sample shape as
	// gokeras has it (channels last), first whether cur holds it channels
	// first, (batch, channels, spatial axes...), as ONNX's convolutions
	// and poolings take it.
	cur   string
	shape []int
	first bool
	used  map[string]bool // the names of nodes and values
}

// name returns an unused name for a node or initializer of the layer.
func (g *onnxGraph) name(what string) string {
	base := g.prefix + "/" + what
	name := base
	for i := 1; g.used[name]; i++ {
		name = fmt.Sprintf("%s_%d", base, i)
	}
	g.used[name] = true
	return name
}

// node adds a node of one output, named after it, and returns the output.
func (g *onnxGraph) node(op string, inputs []string, attrs ...onnx.Attribute) string {
	name := g.name(op)
	g.g.Nodes = append(g.g.Nodes, onnx.Node{Name: name, OpType: op, Inputs: inputs, Outputs: []string{name}, Attributes: attrs})
	return name
}

// apply adds a node that reads cur, then the extra inputs, and makes its
// output cur.
func (g *onnxGraph) apply(op string, extra []string, attrs ...onnx.Attribute) {
	g.cur = g.node(op, append([]string{g.cur}, extra...), attrs...)
}

// weight adds a float32 initializer of the layer and returns its name.
func (g *onnxGraph) weight(what string, dims []int, values []float32) string {
	name := g.name(what)
	t := onnx.Tensor{Name: name, DataType: onnx.Float, Floats: values}
	for _, d := range dims {
		t.Dims = append(t.Dims, int64(d))
	}
	g.g.Initializers = append(g.g.Initializers, t)
	return name
}

// int64s adds an int64 vector initializer of the layer and returns its name.
func (g *onnxGraph) int64s(what string, values ...int64) string {
	name := g.name(what)
	g.g.Initializers = append(g.g.Initializers, onnx.Tensor{Name: name, DataType: onnx.Int64, Dims: []int64{int64(len(values))}, Int64s: values})
	return name
}

// channelsFirst makes cur hold its value channels first; values of one
// axis of features are the same either way.
func (g *onnxGraph) channelsFirst() {
	r := len(g.shape) + 1
	if g.first || r < 3 {
		return
	}
	perm := []int64{0, int64(r - 1)}
	for i := 1; i < r-1; i++ {
		perm = append(perm, int64(i))
	}
	g.apply("Transpose", nil, onnx.IntsAttr("perm", perm...))
	g.first = true
}

// channelsLast makes cur hold its value channels last, as gokeras does.
func (g *onnxGraph) channelsLast() {
	r := len(g.shape) + 1
	if !g.first || r < 3 {
		g.first = false
		return
	}
	perm := []int64{0}
	for i := 2; i < r; i++ {
		perm = append(perm, int64(i))
	}
	perm = append(perm, 1)
	g.apply("Transpose", nil, onnx.IntsAttr("perm", perm...))
	g.first = false
}

// finish gives the graph's last value the output's name, channels last.
func (g *onnxGraph) finish() {
	g.channelsLast()
	if n := len(g.g.Nodes); n > 0 && g.g.Nodes[n-1].Outputs[0] == g.cur {
		g.g.Nodes[n-1].Outputs[0] = onnxOutputName
	} else { // no node: the model passes its input through
		g.prefix = onnxOutputName
		g.g.Nodes = append(g.g.Nodes, onnx.Node{Name: g.name("Identity"), OpType: "Identity", Inputs: []string{g.cur}, Outputs: []string{onnxOutputName}})
	}
	g.cur = onnxOutputName
}

// onnxLayer adds a layer to an ONNX graph, given its config's arguments
// and its input and output sample shapes.
type onnxLayer func(g *onnxGraph, l layers.Layer, args map[string]any, in, out []int) error

// onnxLayers maps each class of package layers to what adds it to an ONNX
// graph. (A function, not a variable: the mappings call addLayer, which
// reads it.)
func onnxLayers() map[string]onnxLayer {
	return map[string]onnxLayer{
		"Dense":                  onnxDense,
		"Conv1D":                 onnxConv,
		"Conv2D":                 onnxConv,
		"MaxPooling1D":           onnxPool,
		"MaxPooling2D":           onnxPool,
		"AveragePooling1D":       onnxPool,
		"AveragePooling2D":       onnxPool,
		"GlobalMaxPooling1D":     onnxGlobalPool,
		"GlobalMaxPooling2D":     onnxGlobalPool,
		"GlobalAveragePooling1D": onnxGlobalPool,
		"GlobalAveragePooling2D": onnxGlobalPool,
		"Dropout":                onnxIdentity,
		"InputLayer":             onnxIdentity,
		"BatchNormalization":     onnxBatchNorm,
		"LayerNormalization":     onnxLayerNorm,
		"Embedding":              onnxEmbedding,
		"Reshape":                onnxReshape,
		"Flatten":                onnxFlatten,
		"Activation":             onnxActivationLayer,
	}
}

// layersPackage is the import path of package layers, whose layer types
// are the ones ExportONNX maps.
var layersPackage = reflect.TypeFor[layers.Config]().PkgPath()

// addLayer adds one layer of the model, of input and output sample shapes
// in and out, to the graph.
func (g *onnxGraph) addLayer(l layers.Layer, in, out []int) error {
	t := reflect.TypeOf(l)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	mappings := onnxLayers()
	known := strings.Join(slices.Sorted(maps.Keys(mappings)), ", ")
	if t.PkgPath() != layersPackage {
		return fmt.Errorf("%s layer %q is a %T, which has no ONNX mapping: ExportONNX maps the layers of package layers only (%s); build the model from those to export it",
			l.Type(), l.Name(), l, known)
	}
	cfg, err := layers.ConfigOf(l)
	if err != nil {
		return err
	}
	add, ok := mappings[cfg.ClassName]
	if !ok {
		return fmt.Errorf("layer class %s has no ONNX mapping yet: ExportONNX maps %s", cfg.ClassName, known)
	}
	g.prefix = l.Name()
	if err := add(g, l, cfg.Config, in, out); err != nil {
		return err
	}
	g.shape = slices.Clone(out)
	return nil
}

// onnxIdentity adds nothing: Dropout (in inference) and a non-leading
// Input pass their input through.
func onnxIdentity(*onnxGraph, layers.Layer, map[string]any, []int, []int) error { return nil }

// onnxDense adds activation(x·kernel + bias) as Gemm.
func onnxDense(g *onnxGraph, l layers.Layer, args map[string]any, in, out []int) error {
	kernel, bias := layerParam(l, "kernel"), layerParam(l, "bias")
	if kernel == nil {
		return fmt.Errorf("%s layer %q has no kernel: is the model built?", l.Type(), l.Name())
	}
	inputs := []string{g.weight("kernel", kernel.Value.Shape(), kernel.Value.Data().([]float32))}
	if bias != nil {
		inputs = append(inputs, g.weight("bias", bias.Value.Shape(), bias.Value.Data().([]float32)))
	}
	g.apply("Gemm", inputs)
	return g.activation(args)
}

// onnxConv adds a convolution: Keras' kernel (spatial axes..., channels,
// filters) reordered as ONNX's (filters, channels, spatial axes...), on
// the input channels first.
func onnxConv(g *onnxGraph, l layers.Layer, args map[string]any, in, out []int) error {
	kernel, bias := layerParam(l, "kernel"), layerParam(l, "bias")
	if kernel == nil {
		return fmt.Errorf("%s layer %q has no kernel: is the model built?", l.Type(), l.Name())
	}
	size, err := intsArg(args, "kernel_size")
	if err != nil {
		return err
	}
	strides, err := intsArg(args, "strides")
	if err != nil {
		return err
	}
	dilation, err := intsArg(args, "dilation_rate")
	if err != nil {
		return err
	}
	same, err := sameArg(args)
	if err != nil {
		return err
	}
	pads, err := onnxPads(in, size, strides, dilation, same)
	if err != nil {
		return err
	}
	kshape := kernel.Value.Shape()
	spatial, channels, filters := 1, kshape[len(kshape)-2], kshape[len(kshape)-1]
	for _, d := range kshape[:len(kshape)-2] {
		spatial *= d
	}
	src := kernel.Value.Data().([]float32)
	oihw := make([]float32, len(src))
	for s := range spatial {
		for c := range channels {
			for f := range filters {
				oihw[(f*channels+c)*spatial+s] = src[(s*channels+c)*filters+f]
			}
		}
	}
	dims := append([]int{filters, channels}, kshape[:len(kshape)-2]...)
	inputs := []string{g.weight("kernel", dims, oihw)}
	if bias != nil {
		inputs = append(inputs, g.weight("bias", bias.Value.Shape(), bias.Value.Data().([]float32)))
	}
	g.channelsFirst()
	g.apply("Conv", inputs, onnx.IntsAttr("kernel_shape", int64s(size)...), onnx.IntsAttr("strides", int64s(strides)...),
		onnx.IntsAttr("dilations", int64s(dilation)...), onnx.IntsAttr("pads", pads...), onnx.IntAttr("group", 1))
	return g.activation(args)
}

// onnxPool adds a max or average pooling; the average excludes the
// padding, as Keras' does.
func onnxPool(g *onnxGraph, l layers.Layer, args map[string]any, in, out []int) error {
	size, err := intsArg(args, "pool_size")
	if err != nil {
		return err
	}
	strides, err := intsArg(args, "strides")
	if err != nil {
		return err
	}
	same, err := sameArg(args)
	if err != nil {
		return err
	}
	ones := make([]int, len(size))
	for i := range ones {
		ones[i] = 1
	}
	pads, err := onnxPads(in, size, strides, ones, same)
	if err != nil {
		return err
	}
	attrs := []onnx.Attribute{onnx.IntsAttr("kernel_shape", int64s(size)...), onnx.IntsAttr("strides", int64s(strides)...), onnx.IntsAttr("pads", pads...)}
	op := "MaxPool"
	if strings.HasPrefix(l.Type(), "Average") {
		op = "AveragePool"
		attrs = append(attrs, onnx.IntAttr("count_include_pad", 0))
	}
	g.channelsFirst()
	g.apply(op, nil, attrs...)
	return nil
}

// onnxPads returns ONNX's pads for a window on samples of shape in
// (spatial axes, then channels): the padding before each spatial axis,
// then after each, by TensorFlow's rules as package ops places windows.
func onnxPads(in, kernel, strides, dilation []int, same bool) ([]int64, error) {
	rank := len(in) - 1
	if rank < 1 || rank > 2 || len(kernel) != rank || len(strides) != rank || len(dilation) != rank {
		return nil, fmt.Errorf("a window of size %v, strides %v and dilation %v on samples %v: want one value per spatial axis", kernel, strides, dilation, in)
	}
	// A 1D window is a 2D one of height 1, as package layers places it.
	h, spec := 1, ops.WindowSpec{Kernel: [2]int{1, kernel[0]}, Strides: [2]int{1, strides[0]}, Dilation: [2]int{1, dilation[0]}, Same: same}
	if rank == 2 {
		h = in[0]
		spec = ops.WindowSpec{Kernel: [2]int{kernel[0], kernel[1]}, Strides: [2]int{strides[0], strides[1]}, Dilation: [2]int{dilation[0], dilation[1]}, Same: same}
	}
	win, err := spec.On(1, h, in[rank-1], in[rank])
	if err != nil {
		return nil, err
	}
	after := func(size, k, stride, dil, out, before int) int64 {
		return int64(max((out-1)*stride+(k-1)*dil+1-size-before, 0))
	}
	bottom := after(win.H, win.KH, win.StrideH, win.DilationH, win.OH, win.PadTop)
	right := after(win.W, win.KW, win.StrideW, win.DilationW, win.OW, win.PadLeft)
	if rank == 1 {
		return []int64{int64(win.PadLeft), right}, nil
	}
	return []int64{int64(win.PadTop), int64(win.PadLeft), bottom, right}, nil
}

// onnxGlobalPool adds the mean or maximum over the spatial axes, in
// whichever layout cur has.
func onnxGlobalPool(g *onnxGraph, l layers.Layer, _ map[string]any, in, out []int) error {
	var axes []int64
	for i := range len(in) - 1 {
		if g.first {
			axes = append(axes, int64(i+2))
		} else {
			axes = append(axes, int64(i+1))
		}
	}
	op := "ReduceMax"
	if strings.HasPrefix(l.Type(), "GlobalAverage") {
		op = "ReduceMean"
	}
	g.apply(op, nil, onnx.IntsAttr("axes", axes...), onnx.IntAttr("keepdims", 0))
	g.first = false
	return nil
}

// onnxBatchNorm adds BatchNormalization with the moving statistics, on
// the channels at axis 1 as ONNX takes them.
func onnxBatchNorm(g *onnxGraph, l layers.Layer, args map[string]any, in, out []int) error {
	eps, err := floatArg(args, "epsilon")
	if err != nil {
		return err
	}
	mean, variance := layerParam(l, "moving_mean"), layerParam(l, "moving_variance")
	if mean == nil || variance == nil {
		return fmt.Errorf("%s layer %q has no moving statistics: is the model built?", l.Type(), l.Name())
	}
	scale, shift := g.gammaBeta(l, in, true)
	inputs := []string{scale, shift,
		g.weight("moving_mean", mean.Value.Shape(), mean.Value.Data().([]float32)),
		g.weight("moving_variance", variance.Value.Shape(), variance.Value.Data().([]float32))}
	g.channelsFirst()
	g.apply("BatchNormalization", inputs, onnx.FloatAttr("epsilon", float32(eps)))
	return nil
}

// onnxLayerNorm adds LayerNormalization over the last axis.
func onnxLayerNorm(g *onnxGraph, l layers.Layer, args map[string]any, in, out []int) error {
	eps, err := floatArg(args, "epsilon")
	if err != nil {
		return err
	}
	scale, shift := g.gammaBeta(l, in, false)
	inputs := []string{scale}
	if shift != "" {
		inputs = append(inputs, shift)
	}
	g.channelsLast()
	g.apply("LayerNormalization", inputs, onnx.IntAttr("axis", -1), onnx.FloatAttr("epsilon", float32(eps)))
	return nil
}

// gammaBeta adds a normalization's gamma and beta, ones and zeros for
// those it was made without (WithoutScale, WithoutCenter); without
// needBeta, a missing beta is left out ("").
func (g *onnxGraph) gammaBeta(l layers.Layer, in []int, needBeta bool) (gamma, beta string) {
	channels := in[len(in)-1]
	constant := func(v float32) []float32 {
		d := make([]float32, channels)
		for i := range d {
			d[i] = v
		}
		return d
	}
	if p := layerParam(l, "gamma"); p != nil {
		gamma = g.weight("gamma", p.Value.Shape(), p.Value.Data().([]float32))
	} else {
		gamma = g.weight("no_gamma", []int{channels}, constant(1))
	}
	if p := layerParam(l, "beta"); p != nil {
		beta = g.weight("beta", p.Value.Shape(), p.Value.Data().([]float32))
	} else if needBeta {
		beta = g.weight("no_beta", []int{channels}, constant(0))
	}
	return gamma, beta
}

// onnxEmbedding adds the look-up: the float32 indices cast to int64, then
// Gather of the table's rows.
func onnxEmbedding(g *onnxGraph, l layers.Layer, _ map[string]any, in, out []int) error {
	table := layerParam(l, "embeddings")
	if table == nil {
		return fmt.Errorf("%s layer %q has no table: is the model built?", l.Type(), l.Name())
	}
	name := g.weight("embeddings", table.Value.Shape(), table.Value.Data().([]float32))
	g.channelsLast()
	g.apply("Cast", nil, onnx.IntAttr("to", int64(onnx.Int64)))
	g.cur = g.node("Gather", []string{name, g.cur}, onnx.IntAttr("axis", 0))
	return nil
}

// onnxReshape adds Reshape to the layer's resolved output shape, the
// batch axis kept (0 copies it).
func onnxReshape(g *onnxGraph, _ layers.Layer, _ map[string]any, in, out []int) error {
	g.channelsLast()
	g.apply("Reshape", []string{g.int64s("shape", append([]int64{0}, int64s(out)...)...)})
	return nil
}

// onnxFlatten adds Flatten, channels last as Keras flattens; flat samples
// pass through.
func onnxFlatten(g *onnxGraph, _ layers.Layer, _ map[string]any, in, out []int) error {
	if len(in) == 1 {
		return nil
	}
	g.channelsLast()
	g.apply("Flatten", nil, onnx.IntAttr("axis", 1))
	return nil
}

// onnxActivationLayer adds an Activation layer's function.
func onnxActivationLayer(g *onnxGraph, _ layers.Layer, args map[string]any, in, out []int) error {
	return g.activation(args)
}

// activation adds the activation named by the layer's "activation"
// argument; softmax works on the channels, as Keras' on the last axis.
func (g *onnxGraph) activation(args map[string]any) error {
	name, err := stringArg(args, "activation")
	if err != nil {
		return err
	}
	switch name {
	case "linear":
	case "relu":
		g.apply("Relu", nil)
	case "sigmoid":
		g.apply("Sigmoid", nil)
	case "tanh":
		g.apply("Tanh", nil)
	case "softmax":
		axis := int64(-1)
		if g.first {
			axis = 1
		}
		g.apply("Softmax", nil, onnx.IntAttr("axis", axis))
	default:
		return fmt.Errorf("activation %q has no ONNX mapping yet: ExportONNX maps linear, relu, sigmoid, softmax and tanh", name)
	}
	return nil
}

// layerParam returns the layer's weight of that name, nil if it has none.
func layerParam(l layers.Layer, name string) *layers.Param {
	for _, p := range l.Params() {
		if p.Name == name {
			return p
		}
	}
	return nil
}

func int64s(v []int) []int64 {
	out := make([]int64, len(v))
	for i, x := range v {
		out[i] = int64(x)
	}
	return out
}

// The arguments of a layer's Config, as package layers gives them.

func configArg[T any](args map[string]any, key string) (T, error) {
	v, ok := args[key].(T)
	if !ok {
		var zero T
		return zero, fmt.Errorf("the layer's config has %q = %#v, want a %T", key, args[key], zero)
	}
	return v, nil
}

func intsArg(args map[string]any, key string) ([]int, error) { return configArg[[]int](args, key) }

func floatArg(args map[string]any, key string) (float64, error) {
	return configArg[float64](args, key)
}

func stringArg(args map[string]any, key string) (string, error) {
	return configArg[string](args, key)
}

// sameArg reads the padding argument: true for "same".
func sameArg(args map[string]any) (bool, error) {
	p, err := stringArg(args, "padding")
	if err != nil {
		return false, err
	}
	if p != "same" && p != "valid" {
		return false, fmt.Errorf(`the layer's config has padding %q, want "valid" or "same"`, p)
	}
	return p == "same", nil
}
