package layers

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/internal/formats/configargs"
	"github.com/gokeras/gokeras/internal/formats/shapes"
	"github.com/gokeras/gokeras/ops"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// normalizationEpsilon is Keras' backend.epsilon(), the least standard
// deviation Normalization divides by.
const normalizationEpsilon = 1e-7

// adaptBatchSize is the batch Adapt reads its data in when it is given
// none, Keras' adapt default.
const adaptBatchSize = 32

// NormalizationOption configures a Normalization layer: NormalizationAxis,
// MeanVariance, Invert, or any Option, such as Named.
type NormalizationOption interface{ applyNormalization(*NormalizationLayer) }

func (o nameOption) applyNormalization(l *NormalizationLayer) { o.applyLayer(&l.named) }

// NormalizationAxis gives the axes that keep a mean and a variance per
// index, Keras' axis argument, counted with the batch axis as 0 and
// negative from the end: the default is the last axis (-1), one mean and
// variance per channel; NormalizationAxis() with no axis is Keras'
// axis=None, one mean and variance over every value.
func NormalizationAxis(axes ...int) NormalizationOption { return normalizationAxis(slices.Clone(axes)) }

type normalizationAxis []int

func (o normalizationAxis) applyNormalization(l *NormalizationLayer) { l.axis = slices.Clone(o) }

// MeanVariance gives a Normalization layer its mean and variance, Keras'
// mean and variance arguments, instead of adapting it: one value each for
// every index of the kept axes, or as many as the kept axes have indices
// (in row-major order of those axes). Such a layer has no weights.
func MeanVariance(mean, variance []float64) NormalizationOption {
	return normalizationStats{mean: slices.Clone(mean), variance: slices.Clone(variance)}
}

type normalizationStats struct{ mean, variance []float64 }

func (o normalizationStats) applyNormalization(l *NormalizationLayer) {
	l.fixedMean, l.fixedVariance, l.fixed = o.mean, o.variance, true
}

// Invert makes a Normalization layer undo the normalization, Keras'
// invert=True: mean + x·max(√variance, 1e-7).
func Invert() NormalizationOption { return normalizationInvert{} }

type normalizationInvert struct{}

func (normalizationInvert) applyNormalization(l *NormalizationLayer) { l.invert = true }

// NormalizationLayer shifts and scales its input to a mean of 0 and a
// variance of 1 per index of its kept axes, like
// keras.layers.Normalization: (x - mean) / max(√variance, 1e-7), the mean
// and variance given (MeanVariance) or computed from data by Adapt.
type NormalizationLayer struct {
	named
	axis                     []int
	fixed                    bool // MeanVariance was given
	fixedMean, fixedVariance []float64
	invert                   bool

	// adapted holds Adapt's statistics until Build puts them in the
	// weights (and after: a rebuilt layer starts from them again).
	adapted *normalizationMoments
	// built: the input shape and the weights (when not fixed).
	in                    []int
	mean, variance, count *Param
}

// normalizationMoments are the statistics Adapt computed, for samples of
// shape in.
type normalizationMoments struct {
	in             []int
	mean, variance []float64
	count          float64
}

// Normalization makes a Normalization layer, Keras'
// Normalization(axis=-1, mean=None, variance=None, invert=False). Give it
// its statistics with MeanVariance, or call Adapt with samples of the
// data before the model's Fit, Evaluate or Predict: as Keras keeps them
// constant in a compiled graph, Adapt again a layer whose model has run
// and write the model's weights (SetWeights) for it to see them.
func Normalization(opts ...NormalizationOption) *NormalizationLayer {
	l := &NormalizationLayer{axis: []int{-1}}
	for _, o := range opts {
		if o != nil {
			o.applyNormalization(l)
		}
	}
	return l
}

// Type returns "Normalization".
func (l *NormalizationLayer) Type() string { return "Normalization" }

// Axis returns the kept axes as given, Keras' axis (empty: None).
func (l *NormalizationLayer) Axis() []int { return slices.Clone(l.axis) }

// Inverted reports whether the layer undoes the normalization (Invert).
func (l *NormalizationLayer) Inverted() bool { return l.invert }

// CheckConfig checks the name, the axes and the mean and variance given.
func (l *NormalizationLayer) CheckConfig() error {
	if l.nameErr != nil {
		return fmt.Errorf("Normalization layer: %w", l.nameErr)
	}
	what := fmt.Sprintf("Normalization layer %q", l.name)
	if slices.Contains(l.axis, 0) {
		return fmt.Errorf("%s: axis %v holds the batch axis 0, whose size is not known: keep axes of the samples (1 or more, or negative from the end)", what, l.axis)
	}
	for i, a := range l.axis {
		if slices.Contains(l.axis[:i], a) {
			return fmt.Errorf("%s: axis %v names axis %d twice", what, l.axis, a)
		}
	}
	if !l.fixed {
		return nil
	}
	if len(l.fixedMean) == 0 || len(l.fixedVariance) == 0 {
		return fmt.Errorf("%s: MeanVariance needs a mean and a variance (got %d and %d values): give both, or leave MeanVariance out and call Adapt", what, len(l.fixedMean), len(l.fixedVariance))
	}
	for _, v := range slices.Concat(l.fixedMean, l.fixedVariance) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%s: the mean and the variance must be finite numbers, got %v", what, v)
		}
	}
	for _, v := range l.fixedVariance {
		if v < 0 {
			return fmt.Errorf("%s: a variance is never negative, got %v", what, v)
		}
	}
	return nil
}

// keptAxes are the axes of a sample (0 its first, the batch axis left
// out) that keep a mean and a variance, sorted, and the shape they span:
// (1,) for none (Keras' axis=None, whose statistics Keras keeps as
// scalars; gokeras' weights are tensors).
func (l *NormalizationLayer) keptAxes(inputShape []int) (kept, statShape []int, err error) {
	ndim := len(inputShape) + 1
	for _, a := range l.axis {
		d := a
		if d < 0 {
			d += ndim
		}
		if d < 1 || d >= ndim {
			return nil, nil, fmt.Errorf("Normalization layer %q: axis %d is out of range for input shape %s: give axes in [%d, %d), not 0 (the batch axis)",
				l.name, a, shapes.String(inputShape), -ndim+1, ndim)
		}
		kept = append(kept, d-1)
	}
	slices.Sort(kept)
	if len(slices.Compact(slices.Clone(kept))) != len(kept) {
		return nil, nil, fmt.Errorf("Normalization layer %q: axis %v names one axis twice for input shape %s", l.name, l.axis, shapes.String(inputShape))
	}
	statShape = []int{1}
	if len(kept) > 0 {
		statShape = statShape[:0]
	}
	for _, k := range kept {
		statShape = append(statShape, inputShape[k])
	}
	return kept, statShape, nil
}

// plan is Normalization's shape rule: the input's shape; the weights
// mean, variance (the kept axes' shape) and count unless the layer was
// given its mean and variance. The count is a float32 of shape (1,), where
// Keras keeps an int64 scalar: gokeras' weights are float32 tensors; it is
// exact up to 2^24 values per index, and only its being above 0 matters
// (the layer was adapted).
func (l *NormalizationLayer) plan(inputShape []int) ([]int, []WeightShape, error) {
	_, stat, err := l.keptAxes(inputShape)
	if err != nil {
		return nil, nil, err
	}
	if l.fixed {
		n := shapes.Size(stat)
		for _, v := range [][]float64{l.fixedMean, l.fixedVariance} {
			if len(v) != 1 && len(v) != n {
				return nil, nil, fmt.Errorf("Normalization layer %q: %d values of the mean or the variance for kept axes of shape %s: give 1 value or %d",
					l.name, len(v), shapes.String(stat), n)
			}
		}
		return slices.Clone(inputShape), nil, nil
	}
	return slices.Clone(inputShape), []WeightShape{{"mean", stat}, {"variance", stat}, {"count", []int{1}}}, nil
}

// Build checks the input shape and, unless the layer was given its mean
// and variance, makes the non-trainable weights mean, variance and count:
// Adapt's statistics if it ran, else Keras' zeros, ones and 0.
func (l *NormalizationLayer) Build(inputShape []int, _ *rand.Rand) ([]int, error) {
	if err := l.CheckConfig(); err != nil {
		return nil, err
	}
	out, ws, err := l.plan(inputShape)
	if err != nil {
		return nil, err
	}
	if l.adapted != nil && !slices.Equal(l.adapted.in, inputShape) {
		return nil, fmt.Errorf("Normalization layer %q was adapted to samples of shape %s but its input has shape %s: adapt it to the model's input",
			l.name, shapes.String(l.adapted.in), shapes.String(inputShape))
	}
	l.in = slices.Clone(inputShape)
	l.mean, l.variance, l.count = nil, nil, nil
	if l.fixed {
		return out, nil
	}
	n := shapes.Size(ws[0].Shape)
	l.mean = &Param{Name: "mean", Value: tensor.New(tensor.Of(tensor.Float32), tensor.WithShape(ws[0].Shape...)), NonTrainable: true}
	l.variance = &Param{Name: "variance", Value: tensor.New(tensor.WithShape(ws[1].Shape...), tensor.WithBacking(filled(n, 1).Data())), NonTrainable: true}
	l.count = &Param{Name: "count", Value: tensor.New(tensor.WithShape(1), tensor.WithBacking([]float32{0})), NonTrainable: true}
	l.storeAdapted()
	return out, nil
}

// storeAdapted writes Adapt's statistics into the weights, when both are
// there.
func (l *NormalizationLayer) storeAdapted() {
	if l.adapted == nil || l.mean == nil {
		return
	}
	m, v := l.mean.Value.Data().([]float32), l.variance.Value.Data().([]float32)
	for i := range m {
		m[i], v[i] = float32(l.adapted.mean[i]), float32(l.adapted.variance[i])
	}
	l.count.Value.Data().([]float32)[0] = float32(l.adapted.count)
}

// Params returns the non-trainable weights mean, variance and count, in
// Keras' order, or nil for a layer given its mean and variance.
func (l *NormalizationLayer) Params() []*Param {
	if l.mean == nil {
		return nil
	}
	return []*Param{l.mean, l.variance, l.count}
}

// errNotAdapted is the error of a Normalization layer without statistics.
var errNotAdapted = errors.New("it has no mean and variance: call its Adapt with samples of the data before Fit, Evaluate or Predict, or give them with layers.MeanVariance")

// Adapt computes the mean and the variance of the samples of ds for each
// index of the layer's kept axes, over every other axis and every sample,
// as Keras' adapt: it reads ds batchSize samples at a time (32, Keras'
// default, when batchSize is 0 or less), sums in float64 and merges the
// batches' statistics (Chan's parallel update), so the result does not
// depend on the batch size beyond float64 rounding. The variance is the
// population variance (divided by n). A layer given MeanVariance cannot
// be adapted. Adapt the layer before its model's first Fit, Evaluate or
// Predict (see Normalization).
func (l *NormalizationLayer) Adapt(ds data.Inputs, batchSize int) error {
	what := fmt.Sprintf("Normalization layer %q: adapt", l.name)
	if err := l.CheckConfig(); err != nil {
		return err
	}
	if l.fixed {
		return fmt.Errorf("%s: the layer was given its mean and variance (MeanVariance): make it without them to adapt it", what)
	}
	if ds == nil || ds.Len() == 0 {
		return fmt.Errorf("%s: the data holds no samples: give at least one", what)
	}
	if batchSize <= 0 {
		batchSize = adaptBatchSize
	}
	in := ds.SampleShape()
	if l.in != nil && !slices.Equal(l.in, in) {
		return fmt.Errorf("%s: the layer was built for samples of shape %s but the data's have shape %s", what, shapes.String(l.in), shapes.String(in))
	}
	kept, stat, err := l.keptAxes(in)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	index := keptIndex(in, kept)
	k, size := shapes.Size(stat), shapes.Size(in)
	perSample := size / k // values of one sample per kept index
	m := normalizationMoments{in: slices.Clone(in), mean: make([]float64, k), variance: make([]float64, k)}
	m2 := make([]float64, k) // the running sums of squared deviations
	buf := make([]float32, batchSize*size)
	indices := make([]int, batchSize)
	bsum, bm2 := make([]float64, k), make([]float64, k)
	for first := 0; first < ds.Len(); first += batchSize {
		n := min(batchSize, ds.Len()-first)
		for i := range n {
			indices[i] = first + i
		}
		x := buf[:n*size]
		if err := ds.GatherInputs(indices[:n], x); err != nil {
			return fmt.Errorf("%s: reading samples %d to %d: %w", what, first, first+n-1, err)
		}
		clear(bsum)
		clear(bm2)
		for i, v := range x {
			bsum[index[i%size]] += float64(v)
		}
		cnt := float64(n * perSample)
		for j := range bsum {
			bsum[j] /= cnt // now the batch's mean
		}
		for i, v := range x {
			j := index[i%size]
			d := float64(v) - bsum[j]
			bm2[j] += d * d
		}
		total := m.count + cnt
		for j := range k {
			delta := bsum[j] - m.mean[j]
			m.mean[j] += delta * cnt / total
			m2[j] += bm2[j] + delta*delta*m.count*cnt/total
		}
		m.count = total
	}
	for j := range k {
		m.variance[j] = m2[j] / m.count
		if math.IsNaN(m.mean[j]) || math.IsInf(m.mean[j], 0) || math.IsNaN(m.variance[j]) || math.IsInf(m.variance[j], 0) {
			return fmt.Errorf("%s: the statistics of index %d are not finite numbers (mean %v, variance %v): the data holds a NaN or an infinity, or values too large",
				what, j, m.mean[j], m.variance[j])
		}
	}
	l.adapted = &m
	l.storeAdapted()
	return nil
}

// keptIndex maps each value of a sample of shape in to the index of its
// kept axes' values, in row-major order of those axes.
func keptIndex(in, kept []int) []int {
	index := make([]int, shapes.Size(in))
	coord := make([]int, len(in))
	for i := range index {
		j := 0
		for _, a := range kept {
			j = j*in[a] + coord[a]
		}
		index[i] = j
		for a := len(in) - 1; a >= 0; a-- {
			if coord[a]++; coord[a] < in[a] {
				break
			}
			coord[a] = 0
		}
	}
	return index
}

// statistics returns the mean and the denominator max(√variance, 1e-7),
// in float32 as TensorFlow computes them, for each index of the kept
// axes: the values given, or the weights' (Adapt's, or loaded).
func (l *NormalizationLayer) statistics(k int) (mean, denom []float32, err error) {
	var m, v []float32
	if l.fixed {
		m, v = broadcastValues(l.fixedMean, k), broadcastValues(l.fixedVariance, k)
	} else {
		if l.mean == nil {
			return nil, nil, errors.New("the layer is not built")
		}
		if l.count.Value.Data().([]float32)[0] <= 0 {
			return nil, nil, errNotAdapted
		}
		m, v = l.mean.Value.Data().([]float32), l.variance.Value.Data().([]float32)
	}
	denom = make([]float32, k)
	for i, x := range v {
		denom[i] = max(float32(math.Sqrt(float64(x))), float32(normalizationEpsilon))
	}
	return slices.Clone(m), denom, nil
}

// broadcastValues is v (one value, or k) as k float32 values.
func broadcastValues(v []float64, k int) []float32 {
	out := make([]float32, k)
	for i := range out {
		out[i] = float32(v[min(i, len(v)-1)])
	}
	return out
}

// broadcastShape is the shape the statistics broadcast against a sample
// with: the kept axes' sizes, 1 elsewhere.
func (l *NormalizationLayer) broadcastShape() ([]int, int, error) {
	kept, stat, err := l.keptAxes(l.in)
	if err != nil {
		return nil, 0, err
	}
	b := make([]int, len(l.in))
	for i := range b {
		b[i] = 1
	}
	for _, a := range kept {
		b[a] = l.in[a]
	}
	return b, shapes.Size(stat), nil
}

// Call adds (x - mean) / max(√variance, 1e-7) to the graph, or with
// Invert mean + x·max(√variance, 1e-7) (ops.Binary, broadcast along the
// axes not kept). The statistics are constants of the graph, read from
// the weights when it is made, as Keras' finalize_state keeps them.
func (l *NormalizationLayer) Call(in Flow, _ []*gorgonia.Node) (Flow, error) {
	what := fmt.Sprintf("Normalization layer %q", l.name)
	if l.in == nil {
		return Flow{}, fmt.Errorf("%s: the layer is not built", what)
	}
	bshape, k, err := l.broadcastShape()
	if err != nil {
		return Flow{}, err
	}
	mean, denom, err := l.statistics(k)
	if err != nil {
		return Flow{}, fmt.Errorf("%s: %w", what, err)
	}
	g, dt := in.Node.Graph(), in.Node.Dtype()
	shape := append([]int{1}, bshape...)
	constant := func(name string, v []float32) *gorgonia.Node {
		return constantValues(g, dt, l.name+"/"+name, shape, v)
	}
	m, d := constant("mean_value", mean), constant("std_value", denom)
	var out *gorgonia.Node
	if l.invert {
		if out, err = ops.Multiply(in.Node, d); err == nil {
			out, err = ops.Add(m, out)
		}
	} else if out, err = ops.Subtract(in.Node, m); err == nil {
		out, err = ops.Divide(out, d)
	}
	if err != nil {
		return Flow{}, fmt.Errorf("%s: %w", what, err)
	}
	return Flow{Node: out, NeedsGrad: in.NeedsGrad}, nil
}

// Config returns "Normalization" with name, axis (a list, as Keras 2
// stores its tuple: [] for None), mean and variance (those given, else
// null) and invert.
func (l *NormalizationLayer) Config() (Config, error) {
	axis := append([]int{}, l.axis...)
	statistic := func(v []float64) any {
		switch {
		case !l.fixed:
			return nil
		case len(v) == 1:
			return v[0]
		}
		return slices.Clone(v)
	}
	return Config{ClassName: l.Type(), Config: map[string]any{"name": l.name, "axis": axis,
		"mean": statistic(l.fixedMean), "variance": statistic(l.fixedVariance), "invert": l.invert}}, nil
}

func normalizationFromConfig(args map[string]any) (Layer, error) {
	a := struct {
		baseArgs
		Axis     json.RawMessage `json:"axis"`
		Mean     json.RawMessage `json:"mean"`
		Variance json.RawMessage `json:"variance"`
		Invert   bool            `json:"invert"`
	}{}
	if err := configargs.Decode(args, &a); err != nil {
		return nil, err
	}
	opts := []NormalizationOption{}
	for _, o := range a.nameOptions() {
		opts = append(opts, o)
	}
	axis, err := axisArg(a.Axis)
	if err != nil {
		return nil, err
	}
	opts = append(opts, NormalizationAxis(axis...))
	mean, err := numbersArg("mean", a.Mean)
	if err != nil {
		return nil, err
	}
	variance, err := numbersArg("variance", a.Variance)
	if err != nil {
		return nil, err
	}
	if (mean == nil) != (variance == nil) {
		return nil, errors.New("arguments \"mean\" and \"variance\": give both or neither")
	}
	if mean != nil {
		opts = append(opts, MeanVariance(mean, variance))
	}
	if a.Invert {
		opts = append(opts, Invert())
	}
	return Normalization(opts...), nil
}

// axisArg reads Keras' Normalization axis: absent (-1), null or [] (no
// axis, Keras' None), an integer or a list of them.
func axisArg(raw json.RawMessage) ([]int, error) {
	if len(raw) == 0 {
		return []int{-1}, nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("argument \"axis\": %w", err)
	}
	if v == nil {
		return nil, nil
	}
	var n int
	if json.Unmarshal(raw, &n) == nil {
		return []int{n}, nil
	}
	var l []int
	if err := json.Unmarshal(raw, &l); err != nil {
		return nil, fmt.Errorf("argument \"axis\" is %s: want null, an integer or a list of integers", raw)
	}
	return l, nil
}

// numbersArg reads a number or a (nested) list of numbers, row-major,
// nil for an absent or null argument.
func numbersArg(name string, raw json.RawMessage) ([]float64, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("argument %q: %w", name, err)
	}
	if v == nil {
		return nil, nil
	}
	var out []float64
	var walk func(any) bool
	walk = func(v any) bool {
		switch x := v.(type) {
		case float64:
			out = append(out, x)
			return true
		case []any:
			for _, e := range x {
				if !walk(e) {
					return false
				}
			}
			return true
		}
		return false
	}
	if !walk(v) || len(out) == 0 {
		return nil, fmt.Errorf("argument %q is %s: want a number or a list of numbers", name, raw)
	}
	return out, nil
}

// ONNX adds Sub and Div (or, inverted, Mul and Add) of initializers of the
// statistics, broadcast against the input channels last, to an ONNX graph.
func (l *NormalizationLayer) ONNX(b ONNXGraph, in string) (string, error) {
	if l.in == nil {
		return "", fmt.Errorf("Normalization layer %q is not built", l.name)
	}
	bshape, k, err := l.broadcastShape()
	if err != nil {
		return "", err
	}
	mean, denom, err := l.statistics(k)
	if err != nil {
		return "", fmt.Errorf("Normalization layer %q: %w", l.name, err)
	}
	x := b.ChannelsLast(in)
	m, d := b.Weight("mean", bshape, mean), b.Weight("std", bshape, denom)
	if l.invert {
		return b.Apply("Add", b.Apply("Mul", x, []string{d}), []string{m}), nil
	}
	return b.Apply("Div", b.Apply("Sub", x, []string{m}), []string{d}), nil
}
