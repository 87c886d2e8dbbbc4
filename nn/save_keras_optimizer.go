package nn

import (
	"fmt"
	"math"
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
// Keras 3 makes them: 0 the step count (an int64 scalar), 1 the learning
// rate (a float32 scalar; none under a schedule), then the slots of the
// trainable weights (in the order of model.trainable_variables), in
// groups: the slots of one group are interleaved, a weight's after the
// other's, and the groups follow one another (kerasSlotGroups). SGD:
// momentum; Adam and AdamW: momentum and velocity, then with amsgrad every
// velocity_hat; RMSprop: every velocity, then every momentum (momentum >
// 0), then every average_gradient (centered); Adagrad: accumulator;
// Adadelta: accumulated_grad and accumulated_delta_var; Adamax: momentum
// and norm; Nadam: momentum and velocity, with u_product, the float32
// scalar product of its momentum schedule, before them (Keras 3.0 to 3.9,
// as gokeras writes, naming 3.9.2 in metadata.json) or after them (3.10
// on); gokeras reads either and computes u_product from the step count
// (it writes its float32 value). For a
// file whose variables do not fit that layout (another optimizer, another
// Keras version), the loaded model trains on from fresh slots, as Keras
// itself does with a warning.

// kerasSlotGroups cuts slots, an optimizer's slot names in gokeras' order
// (optim.SlotNames), into the groups Keras 3 makes its variables in, and
// reports whether it has a scalar u_product too (Nadam); ok false for an
// optimizer gokeras does not write the variables of.
func kerasSlotGroups(name string, slots []string) (groups [][]string, uProduct, ok bool) {
	switch name {
	case "SGD", "Adagrad", "Adadelta", "Adamax":
		return [][]string{slots}, false, true
	case "Adam", "AdamW":
		if i := slices.Index(slots, "vhat"); i >= 0 {
			return [][]string{slices.Delete(slices.Clone(slots), i, i+1), {"vhat"}}, false, true
		}
		return [][]string{slots}, false, true
	case "RMSprop":
		for _, s := range slots {
			groups = append(groups, []string{s})
		}
		return groups, false, true
	case "Nadam":
		return [][]string{slots}, true, true
	}
	return nil, false, false
}

// kerasSlot is one of an optimizer's variables after the step count and
// the learning rate: the slot of trainable weight weight, or, with
// weight -1, Nadam's u_product.
type kerasSlot struct {
	slot   string
	weight int
}

// nadamUProduct is Keras 3's Nadam u_product after steps steps: the
// product of β1·(1 - 0.5·0.96^s) for s = 1 to steps (gokeras computes it
// in float64 from the step count; Keras keeps it in float32).
func nadamUProduct(beta1 float64, steps int64) float32 {
	p := 1.0
	for s := int64(1); s <= steps; s++ {
		p *= beta1 * (1 - 0.5*math.Pow(0.96, float64(s)))
	}
	return float32(p)
}

// kerasOptimizerVars prefixes the tensors readKerasFile makes of a .keras
// archive's optimizer variables: "optimizer/vars/0", ... (optimizerPrefix
// keeps them out of the weights).
const kerasOptimizerVars = optimizerPrefix + "vars/"

// metaKerasIterations holds, in a Keras file read by readKerasFile, the
// step count of its optimizer variables, exactly.
const metaKerasIterations = metaPrefix + "keras.iterations"

// kerasOptimizerLayout is what the model's optimizer keeps in a .keras
// archive: its variables after the step count and the learning rate, in
// Keras' order, whether its learning rate is a variable (not a schedule),
// and the trainable weights (name, shape) whose slots it holds; ok false
// for an optimizer whose variables gokeras does not write.
func (m *Sequential) kerasOptimizerLayout() (opt optim.Stateful, vars []kerasSlot, rate bool, weights []planned, names []string, ok bool) {
	if m.compiled == nil {
		return nil, nil, false, nil, nil, false
	}
	opt, ok = m.compiled.optimizer.(optim.Stateful)
	if !ok {
		return nil, nil, false, nil, nil, false
	}
	groups, uProduct, ok := kerasSlotGroups(opt.Name(), optim.SlotNames(opt))
	if !ok {
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
				weights = append(weights, planned{l.Name(), kerasWeightShape(l, p)})
				names = append(names, l.Name()+"/"+p.Name)
			}
		}
	}
	if uProduct {
		vars = append(vars, kerasSlot{"u_product", -1}) // Keras 3.9's place
	}
	for _, g := range groups {
		for k := range names {
			for _, slot := range g {
				vars = append(vars, kerasSlot{slot, k})
			}
		}
	}
	return opt, vars, !schedule, weights, names, true
}

// writeKerasOptimizer adds the optimizer's variables to root, a .keras
// archive's model.weights.h5, when the optimizer is one whose variables
// gokeras writes.
func (m *Sequential) writeKerasOptimizer(root *hdf5.Node) error {
	opt, slotVars, rate, weights, names, ok := m.kerasOptimizerLayout()
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
	for _, v := range slotVars {
		if v.weight < 0 {
			vars.Dataset(strconv.Itoa(i), nil, []float32{nadamUProduct(opt.NextUpdate().Beta1, st.Iterations)})
			i++
			continue
		}
		name := names[v.weight]
		values := st.Slots[v.slot][name]
		if values == nil {
			// Not updated yet: Keras' initial values.
			values = make([]float32, shapes.Size(weights[v.weight].shape))
			if init := opt.NextUpdate().SlotInit(v.slot); init != 0 {
				for j := range values {
					values[j] = init
				}
			}
		}
		if j := firstNonFinite(values); j >= 0 {
			return m.diverged(fmt.Sprintf("optimizer slot %s of %s", v.slot, name), values[j], j)
		}
		vars.Dataset(strconv.Itoa(i), weights[v.weight].shape, values)
		i++
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
	opt, slotVars, rate, weights, names, ok := m.kerasOptimizerLayout()
	if !ok || len(byIndex) == 0 {
		return nil
	}
	first := 1
	if rate {
		first = 2
	}
	if len(byIndex) != first+len(slotVars) {
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
	if len(slotVars) > 1 && slotVars[0].weight < 0 && len(byIndex[first].Shape) > 0 && len(byIndex[len(byIndex)-1].Shape) == 0 {
		// Nadam's u_product last: Keras 3.10 and later.
		slotVars = append(slices.Clone(slotVars[1:]), slotVars[0])
	}
	st.Slots = map[string]map[string][]float32{}
	for j, v := range slotVars {
		t := byIndex[first+j]
		if v.weight < 0 {
			if len(t.Data) != 1 || len(t.Shape) != 0 {
				return nil // no u_product scalar: not Nadam's layout
			}
			continue // gokeras computes it from the step count
		}
		if !slices.Equal(t.Shape, weights[v.weight].shape) {
			return nil // not this model's slots
		}
		if st.Slots[v.slot] == nil {
			st.Slots[v.slot] = map[string][]float32{}
		}
		st.Slots[v.slot][names[v.weight]] = slices.Clone(t.Data)
	}
	if err := opt.SetState(st); err != nil {
		return fmt.Errorf("%s: the optimizer's variables: %w", path, err)
	}
	return nil
}
