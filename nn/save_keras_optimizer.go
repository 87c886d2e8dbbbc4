package nn

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gokeras/gokeras/internal/formats/hdf5"
	"github.com/gokeras/gokeras/internal/formats/shapes"
	"github.com/gokeras/gokeras/optim"
	"github.com/gokeras/gokeras/safetensors"
)

// An optimizer's state in a Keras 3 .keras archive: the group
// optimizer/vars of its model.weights.h5 (its "name" attribute the
// optimizer's, "adam"), holding the optimizer's variables in the order
// Keras makes them: 0 the step count (an int64 scalar), 1 the learning
// rate (a float32 scalar; none under a schedule), then the slots of each
// trainable weight in turn, in the order of model.trainable_variables
// (SGD's momentum; Adam's momentum and velocity, one weight's after the
// other's). gokeras writes and reads them for SGD and Adam (without
// amsgrad), whose updates are Keras 3's; for another optimizer, or a file
// whose variables do not fit that layout (another optimizer, another
// Keras version), none are written and the loaded model trains on from
// fresh slots, as Keras itself does with a warning.

// kerasOptimizerVars prefixes the tensors readKerasFile makes of a .keras
// archive's optimizer variables: "optimizer/vars/0", ... (optimizerPrefix
// keeps them out of the weights).
const kerasOptimizerVars = optimizerPrefix + "vars/"

// metaKerasIterations holds, in a Keras file read by readKerasFile, the
// step count of its optimizer variables, exactly.
const metaKerasIterations = metaPrefix + "keras.iterations"

// kerasOptimizerLayout is what the model's optimizer keeps in a .keras
// archive: its slots per weight in Keras' order, whether its learning rate
// is a variable (not a schedule), and the weights (name, shape) whose
// slots it holds; ok false for an optimizer whose variables gokeras does
// not write.
func (m *Sequential) kerasOptimizerLayout() (opt optim.Stateful, slots []string, rate bool, weights []planned, names []string, ok bool) {
	if m.compiled == nil {
		return nil, nil, false, nil, nil, false
	}
	opt, ok = m.compiled.optimizer.(optim.Stateful)
	if !ok {
		return nil, nil, false, nil, nil, false
	}
	slots = optim.SlotNames(opt)
	switch opt.Name() {
	case "SGD":
	case "Adam":
		if slices.Contains(slots, "vhat") {
			return nil, nil, false, nil, nil, false // amsgrad's velocity_hat: not written
		}
	default:
		return nil, nil, false, nil, nil, false
	}
	c, err := optim.ConfigOf(opt)
	if err != nil {
		return nil, nil, false, nil, nil, false
	}
	_, schedule := c.Config["learning_rate"].(optim.Config)
	for _, l := range m.kerasOrderOf() {
		for _, p := range l.Params() {
			if !p.NonTrainable {
				weights = append(weights, planned{l.Name(), p.Value.Shape().Clone()})
				names = append(names, l.Name()+"/"+p.Name)
			}
		}
	}
	return opt, slots, !schedule, weights, names, true
}

// writeKerasOptimizer adds the optimizer's variables to root, a .keras
// archive's model.weights.h5, when the optimizer is one whose variables
// gokeras writes.
func (m *Sequential) writeKerasOptimizer(root *hdf5.Node) error {
	opt, slots, rate, weights, names, ok := m.kerasOptimizerLayout()
	if !ok {
		return nil
	}
	st := opt.State()
	vars := root.Group("optimizer").Group("vars").Attr("name", hdf5.VarString(strings.ToLower(opt.Name())))
	vars.DatasetInt64("0", nil, []int64{st.Iterations})
	i := 1
	if rate {
		vars.Dataset("1", nil, []float32{float32(st.LearningRate)})
		i++
	}
	for k, name := range names {
		for _, slot := range slots {
			values := st.Slots[slot][name]
			if values == nil {
				values = make([]float32, shapes.Size(weights[k].shape)) // not updated yet: Keras' zeros
			}
			if j := firstNonFinite(values); j >= 0 {
				return m.diverged(fmt.Sprintf("optimizer slot %s of %s", slot, name), values[j], j)
			}
			vars.Dataset(strconv.Itoa(i), weights[k].shape, values)
			i++
		}
	}
	return nil
}

// restoreKerasOptimizer gives m's optimizer, just compiled from a Keras
// file f (read from path), the state f's optimizer variables hold, when
// they fit the layout kerasOptimizerLayout describes; otherwise the
// optimizer keeps its fresh state.
func (m *Sequential) restoreKerasOptimizer(f *safetensors.File, path string) error {
	byIndex := map[int]safetensors.Tensor{}
	for _, t := range f.Tensors {
		if rest, ok := strings.CutPrefix(t.Name, kerasOptimizerVars); ok {
			if i, err := strconv.Atoi(rest); err == nil {
				byIndex[i] = t
			}
		}
	}
	opt, slots, rate, weights, names, ok := m.kerasOptimizerLayout()
	if !ok || len(byIndex) == 0 {
		return nil
	}
	first := 1
	if rate {
		first = 2
	}
	if len(byIndex) != first+len(names)*len(slots) {
		return nil // another optimizer's or another layout's variables
	}
	st := opt.State()
	it, err := strconv.ParseInt(f.Metadata[metaKerasIterations], 10, 64)
	if err != nil || len(byIndex[0].Data) != 1 {
		return nil // a step count that is no integer scalar
	}
	st.Iterations = it
	if rate {
		lr := byIndex[1]
		if len(lr.Data) != 1 {
			return nil
		}
		// Keras keeps the rate as a float32: the config's rate stands
		// unless the variable says it was changed since (a callback's).
		if lr.Data[0] != float32(st.LearningRate) {
			st.LearningRate = float64(lr.Data[0])
		}
	}
	st.Slots = map[string]map[string][]float32{}
	i := first
	for k, name := range names {
		for _, slot := range slots {
			t := byIndex[i]
			if !slices.Equal(t.Shape, weights[k].shape) {
				return nil // not this model's slots
			}
			if st.Slots[slot] == nil {
				st.Slots[slot] = map[string][]float32{}
			}
			st.Slots[slot][name] = slices.Clone(t.Data)
			i++
		}
	}
	if err := opt.SetState(st); err != nil {
		return fmt.Errorf("%s: the optimizer's variables: %w", path, err)
	}
	return nil
}
