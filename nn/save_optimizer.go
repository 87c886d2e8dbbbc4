package nn

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/gokeras/gokeras/internal/formats/shapes"
	"github.com/gokeras/gokeras/optim"
	"github.com/gokeras/gokeras/safetensors"
)

// An optimizer's state is saved the same way in a checkpoint and in a model
// file (Save, unless IncludeOptimizer(false)), by optimizerTensors, and
// read by readOptimizerState alone:
//
//	tensors "optimizer/<weight>/<slot>"  a slot of a weight (SGD's
//	                                     "momentum", Adam's "m" and "v"), of
//	                                     the weight's shape
//	gokeras.optimizer                    the optimizer's name ("Adam")
//	gokeras.optimizer.iterations         its step count
//	gokeras.optimizer.learning_rate      its current learning rate
//
// What the optimizer checks itself when the state is restored
// (optim.Stateful.SetState: the step count at most optim.MaxIterations, a
// learning rate >= 0, slots that accumulate squares not negative, the
// slots it keeps and no other) is left to it.

// maxSlotsPerWeight is the most optimizer slots a rule keeps for one
// weight: AMSGrad's m, v and vhat; RMSprop's velocity, momentum and
// average gradient (optim.Update.SlotNames). It bounds what a file of a
// model's weights and optimizer state can declare (see weightPlan.fits).
const maxSlotsPerWeight = 3

// optimizerTensors returns the state of opt, m's optimizer, for a file: its
// slots as tensors, sorted by slot then weight, each of its weight's shape;
// and it adds the optimizer's name, step count and learning rate to meta.
// A slot holding a NaN or an infinity is refused (training diverged).
func (m *Sequential) optimizerTensors(opt optim.Stateful, meta map[string]string) ([]safetensors.Tensor, error) {
	// The slots may live on the device: bring them back first, so that a
	// failed copy is an error here, not stale state.
	if err := m.syncWeights(); err != nil {
		return nil, err
	}
	st := opt.State()
	meta[metaOptimizer] = opt.Name()
	meta[metaIterations] = strconv.FormatInt(st.Iterations, 10)
	meta[metaLearningRate] = strconv.FormatFloat(st.LearningRate, 'g', -1, 64)
	shapeOf := map[string][]int{}
	for _, w := range m.weights() {
		shapeOf[w.name] = w.value.Shape().Clone()
	}
	var ts []safetensors.Tensor
	for _, slot := range slices.Sorted(maps.Keys(st.Slots)) {
		for _, name := range slices.Sorted(maps.Keys(st.Slots[slot])) {
			values := st.Slots[slot][name]
			if i := firstNonFinite(values); i >= 0 {
				return nil, m.diverged(fmt.Sprintf("optimizer slot %s of %s", slot, name), values[i], i)
			}
			shape := []int{len(values)}
			if s, ok := shapeOf[name]; ok && shapes.Size(s) == len(values) {
				shape = s
			}
			ts = append(ts, safetensors.Tensor{Name: optimizerPrefix + name + "/" + slot, Shape: shape, Data: values})
		}
	}
	return ts, nil
}

// stateFile is a file readOptimizerState reads, as its errors speak of it.
type stateFile struct {
	path string
	// model names the model whose weights the slots are of.
	model string
	// damaged ends an error for content that contradicts itself, and
	// otherModel one for content that does not fit the model: what to do.
	damaged, otherModel string
	// otherOptimizer is the error for the state of the optimizer saved
	// when the model's is compiled.
	otherOptimizer func(saved, compiled string) error
}

// checkpointFile is a checkpoint read into m, a model made in code.
func checkpointFile(path string, m *Sequential) stateFile {
	return stateFile{
		path: path, model: fmt.Sprintf("model %q", m.name),
		damaged: ": the checkpoint is damaged", otherModel: ": was the checkpoint saved from another model?",
		otherOptimizer: func(saved, compiled string) error {
			return fmt.Errorf("%s holds the state of the %s optimizer but model %q is compiled with %s: compile with the optimizer the checkpoint was trained with", path, saved, m.name, compiled)
		},
	}
}

// modelFile is a model file, read into the model it describes: whatever
// does not fit is damage.
func modelFile(path string) stateFile {
	return stateFile{
		path: path, model: "the model it describes",
		damaged: "; " + saveAgain, otherModel: "; " + saveAgain,
		otherOptimizer: func(saved, compiled string) error {
			return fmt.Errorf("%s holds the state of the %s optimizer but its config is of %s; %s", path, saved, compiled, saveAgain)
		},
	}
}

// readOptimizerState reads the state of opt that f holds for m, built:
// the optimizer must be the one saved, the step count and learning rate
// numbers, each slot of one of m's weights, of its size, and finite; and
// after a step, every trainable weight must have each slot opt keeps (a
// slot missing is a damaged file, and restoring it as zeros would train on
// silently from another state). It changes nothing: the caller restores
// the state with opt's SetState.
func (m *Sequential) readOptimizerState(f *safetensors.File, opt optim.Optimizer, in stateFile) (optim.State, error) {
	meta, path := f.Metadata, in.path
	switch saved := meta[metaOptimizer]; saved {
	case opt.Name():
	case "":
		return optim.State{}, fmt.Errorf("%s: metadata %s is missing, so the optimizer it holds the state of is unknown%s", path, metaOptimizer, in.damaged)
	default:
		return optim.State{}, in.otherOptimizer(saved, opt.Name())
	}
	st := optim.State{Slots: map[string]map[string][]float32{}}
	var err error
	if st.Iterations, err = strconv.ParseInt(meta[metaIterations], 10, 64); err != nil {
		return optim.State{}, fmt.Errorf("%s: metadata %s is %q, not a count%s", path, metaIterations, meta[metaIterations], in.damaged)
	}
	if st.LearningRate, err = strconv.ParseFloat(meta[metaLearningRate], 64); err != nil {
		return optim.State{}, fmt.Errorf("%s: metadata %s is %q, not a number%s", path, metaLearningRate, meta[metaLearningRate], in.damaged)
	}
	ws := m.weights()
	sizes := map[string]int{}
	for _, w := range ws {
		sizes[w.name] = w.value.Shape().TotalSize()
	}
	for _, t := range f.Tensors {
		rest, ok := strings.CutPrefix(t.Name, optimizerPrefix)
		if !ok {
			continue
		}
		i := strings.LastIndexByte(rest, '/')
		if i < 0 {
			return optim.State{}, fmt.Errorf("%s: optimizer tensor %q is not named optimizer/<weight>/<slot>%s", path, t.Name, in.damaged)
		}
		name, slot := rest[:i], rest[i+1:]
		size, ok := sizes[name]
		if !ok {
			return optim.State{}, fmt.Errorf("%s holds optimizer state %q for weight %q, which %s does not have%s", path, t.Name, name, in.model, in.otherModel)
		}
		if len(t.Data) != size {
			return optim.State{}, fmt.Errorf("optimizer state %q has %d values in %s but weight %q has %d in %s%s", t.Name, len(t.Data), path, name, size, in.model, in.otherModel)
		}
		if j := firstNonFinite(t.Data); j >= 0 {
			return optim.State{}, nonFiniteLoaded(path, fmt.Sprintf("optimizer slot %s of %s", slot, name), t.Data[j], j)
		}
		if st.Slots[slot] == nil {
			st.Slots[slot] = map[string][]float32{}
		}
		st.Slots[slot][name] = t.Data
	}
	if st.Iterations > 0 {
		for _, slot := range optim.SlotNames(opt) {
			for _, w := range ws {
				if _, ok := st.Slots[slot][w.name]; w.trainable && !ok {
					return optim.State{}, fmt.Errorf("%s: optimizer slot %s of %s is missing, though %s took %d steps%s",
						path, slot, w.name, opt.Name(), st.Iterations, in.damaged)
				}
			}
		}
	}
	return st, nil
}
