package nn

import (
	"errors"
	"fmt"
	"slices"

	"github.com/gokeras/gokeras/layers"
)

// ModelView is what a reader of a whole model sees of it, such as an
// exporter (package export/onnx): the model built, each layer with the
// shapes of the samples it takes and outputs, and the weights on the host,
// in the layers' Params. View gives one.
type ModelView struct {
	// Name is the model's name.
	Name string
	// InputShape and OutputShape are the shapes of the model's input and
	// output samples (no batch axis).
	InputShape, OutputShape []int
	// Layers are the model's layers, in order.
	Layers []LayerView

	m *Sequential
}

// LayerView is one layer of a ModelView: the layer, built, and the shapes
// of the samples it takes and outputs (no batch axis).
type LayerView struct {
	Layer                   layers.Layer
	InputShape, OutputShape []int
}

// View calls fn with a view of the model: built (from its declared input
// shape, as Save builds it, if it is not built yet), and its weights on
// the host, copied back from the device that trains them if any. While
// fn runs, nothing else uses the model: as GetWeights and Save, View
// called during a Fit, Evaluate or Predict from another goroutine is
// refused with an error that matches ErrBusy, and from Fit's callbacks it
// runs between two steps.
//
// call names what the caller does, as the model's own methods name
// theirs ("export ONNX"): View's errors start with it. fn's error is
// returned as it is. fn reads the layers and their weights in place: it
// must not change them or keep them after it returns, and must not call
// the model's methods that read or write the weights (GetWeights, Save,
// ...), which would wait for View to return.
func (m *Sequential) View(call string, fn func(ModelView) error) error {
	if m == nil {
		return fmt.Errorf("%s: %w", call, ErrNilModel)
	}
	if fn == nil {
		return fmt.Errorf("%s: View needs a function to call", call)
	}
	release, err := m.claim(call, false)
	if err != nil {
		return err
	}
	defer release()
	if err := m.ensureBuilt(); err != nil {
		return fmt.Errorf("%s: %w", call, err)
	}
	if m.graph != nil {
		return fmt.Errorf("%s: model %q is a functional model (NewModel), which a view of layers one after another cannot describe yet", call, m.name)
	}
	if err := m.syncWeights(); err != nil {
		return fmt.Errorf("%s: %w", call, err)
	}
	v := ModelView{Name: m.name, InputShape: slices.Clone(m.inputShape), OutputShape: slices.Clone(m.outShape), m: m}
	in := m.inputShape
	for i, l := range m.layers {
		v.Layers = append(v.Layers, LayerView{Layer: l, InputShape: slices.Clone(in), OutputShape: slices.Clone(m.layerOut[i])})
		in = m.layerOut[i]
	}
	return fn(v)
}

// CheckFinite returns the error SaveWeights returns for a weight that
// holds a NaN or an infinity, naming the weight and what to do, or nil
// when every weight is finite: a file of such weights would be refused
// when it is loaded, so a writer writes nothing.
func (v ModelView) CheckFinite() error {
	if v.m == nil {
		return errors.New("the ModelView is not a model's: get one from View")
	}
	for _, w := range v.m.weights() {
		data := w.value.Data().([]float32)
		if i := firstNonFinite(data); i >= 0 {
			return v.m.diverged("weight "+w.name, data[i], i)
		}
	}
	return nil
}
