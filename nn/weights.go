package nn

import (
	"fmt"
	"strings"

	"github.com/gokeras/gokeras/internal/formats/shapes"
	"gorgonia.org/tensor"
)

// weight is one of the model's weight tensors with its file name.
type weight struct {
	name      string // "<layer>/kernel", "<layer>/bias"
	layer     string // the name of the layer that holds it
	value     *tensor.Dense
	trainable bool // false for state such as BatchNormalization's moving statistics
}

// weights lists the model's weights in layer order. It is the one place
// that reads the weights off the layers.
func (m *Sequential) weights() []weight {
	var ws []weight
	for _, l := range m.layers {
		for _, p := range l.Params() {
			ws = append(ws, weight{name: l.Name() + "/" + p.Name, layer: l.Name(), value: p.Value, trainable: !p.NonTrainable})
		}
	}
	return ws
}

// syncWeights brings the weights and the optimizer's slots back to the
// host when the model's machines keep them on their device (a GPU keeps
// them there for the whole fit). Every host read of the weights calls it
// first, and so does the optimizer's State (see Compile).
func (m *Sequential) syncWeights() error {
	if m.compiled == nil || m.compiled.state == nil {
		return nil
	}
	if err := m.compiled.state.Sync(); err != nil {
		return fmt.Errorf("copying the weights back from %s: %w", m.compiled.device.Short(), err)
	}
	return nil
}

// weightsWritten tells the model that its host weights changed: machines
// holding device copies are dropped, and the next step binds new ones that
// start from the host values. Every host write of the weights calls it.
func (m *Sequential) weightsWritten() error {
	if err := m.closePrograms(); err != nil {
		return fmt.Errorf("releasing the machines that held the old weights: %w", err)
	}
	return nil
}

// weightShape writes a weight's shape as Python prints a tuple: (3072, 3000), (10,).
func weightShape(shape []int) string {
	s := strings.TrimPrefix(shapes.String(shape), "(None")
	s = strings.TrimPrefix(strings.TrimPrefix(s, ","), " ")
	if s == ")" {
		return "()"
	}
	return "(" + s
}

// GetWeights returns copies of the model's weights in layer order, each
// layer's kernel then bias, like Keras' get_weights.
func (m *Sequential) GetWeights() ([]*tensor.Dense, error) {
	if m == nil {
		return nil, fmt.Errorf("get weights: %w", ErrNilModel)
	}
	release, err := m.claim("get weights", false)
	if err != nil {
		return nil, err
	}
	defer release()
	if err := m.ensureBuilt(); err != nil {
		return nil, fmt.Errorf("get weights: %w", err)
	}
	if err := m.syncWeights(); err != nil {
		return nil, fmt.Errorf("get weights: %w", err)
	}
	var out []*tensor.Dense
	for _, w := range m.weights() {
		out = append(out, w.value.Clone().(*tensor.Dense))
	}
	return out, nil
}

// SetWeights replaces the model's weights with copies of ws, given in the
// order GetWeights returns them, like Keras' set_weights. Nothing changes
// unless every tensor has the right shape and holds finite numbers only
// (no NaN, no infinity).
func (m *Sequential) SetWeights(ws []*tensor.Dense) error {
	if m == nil {
		return fmt.Errorf("set weights: %w", ErrNilModel)
	}
	release, err := m.claim("set weights", false)
	if err != nil {
		return err
	}
	defer release()
	if err := m.ensureBuilt(); err != nil {
		return fmt.Errorf("set weights: %w", err)
	}
	own := m.weights()
	if len(ws) != len(own) {
		return fmt.Errorf("set weights: model %q has %d weight tensors but %d were given", m.name, len(own), len(ws))
	}
	for i, w := range own {
		if ws[i] == nil || !shapes.Equal(ws[i].Shape(), w.value.Shape()) || ws[i].Dtype() != tensor.Float32 {
			var got any = "nil"
			if ws[i] != nil {
				got = fmt.Sprintf("%s %v", weightShape(ws[i].Shape()), ws[i].Dtype())
			}
			return fmt.Errorf("set weights: %s has shape %s float32 in the model but the tensor given is %v", w.name, weightShape(w.value.Shape()), got)
		}
	}
	values := make([][]float32, len(own))
	for i, w := range own {
		src := ws[i]
		if !src.IsNativelyAccessible() || src.RequiresIterator() {
			src = src.Materialize().(*tensor.Dense)
		}
		values[i] = src.Data().([]float32)
		if j := firstNonFinite(values[i]); j >= 0 {
			return fmt.Errorf("set weights: the tensor given for %s holds %v at index %d: weights must be finite numbers", w.name, values[i][j], j)
		}
	}
	for i, w := range own {
		copy(w.value.Data().([]float32), values[i])
	}
	if err := m.weightsWritten(); err != nil {
		return fmt.Errorf("set weights: %w", err)
	}
	return nil
}

// firstNonFinite returns the index of the first NaN or infinity in v, or
// -1 when every value is a finite number.
func firstNonFinite(v []float32) int {
	for i, x := range v {
		if x-x != 0 { // NaN for NaN and ±Inf, 0 for every finite x
			return i
		}
	}
	return -1
}
