package nn

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gokeras/gokeras/internal/formats/shapes"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/safetensors"
)

// planned is a weight a file must hold: the layer that makes it, and its
// shape.
type planned struct {
	layer string
	shape []int
}

// weightPlan is what a file must hold to be a model's weights: every
// weight, of its shape, and no other tensor but optimizer state. It is the
// one check of a file's tensors against a model, for LoadWeights,
// LoadCheckpoint and LoadModel: fits before the file's data is read, check
// once it is.
type weightPlan struct {
	model string             // the model's name
	names []string           // the weights, in the model's order
	of    map[string]planned // each weight's layer and shape
	// described is true when the model is the one the file's own config
	// describes (LoadModel): a tensor that does not fit it is damage, and
	// the errors say to save the model again.
	described bool
}

// builtPlan is the plan of m, built: the weights its layers hold.
func (m *Sequential) builtPlan() weightPlan {
	p := weightPlan{model: m.name, of: map[string]planned{}}
	for _, w := range m.weights() {
		p.names = append(p.names, w.name)
		p.of[w.name] = planned{w.layer, w.value.Shape().Clone()}
	}
	return p
}

// describedPlan is the plan of m, made from a file's config and not built
// yet, for its input shape: the weights its layers will make, allocating
// none.
func (m *Sequential) describedPlan(path string, input []int) (weightPlan, error) {
	if len(input) == 0 || slices.ContainsFunc(input, func(d int) bool { return d <= 0 }) {
		return weightPlan{}, fmt.Errorf("%s: the model config's input_shape %v is not a shape; %s", path, input, saveAgain)
	}
	of, names, err := m.planWeights(path, input)
	if err != nil {
		return weightPlan{}, err
	}
	return weightPlan{model: m.name, names: names, of: of, described: true}, nil
}

// planWeights lists the weights the layers of m, as its config describes
// them, make for input, by name and in order, without building them. It
// walks the model's graph as Build does: a shared layer's weights are
// listed once, at its first call.
func (m *Sequential) planWeights(path string, input []int) (map[string]planned, []string, error) {
	if err := layers.CheckNames(m.layers); err != nil {
		return nil, nil, fmt.Errorf("%s: model %q: %w; %s", path, m.name, err, saveAgain)
	}
	plan := map[string]planned{}
	var names []string
	index := make(map[layers.Layer]int, len(m.layers)) // in m.layers, for the errors
	for i, l := range m.layers {
		index[l] = i
	}
	ins, calls := m.callGraph()
	shapeOf := map[*Tensor][]int{ins[0]: input}
	if len(ins) > 1 { // a functional model's inputs know their shapes
		for _, t := range ins {
			shapeOf[t] = t.shape
		}
	}
	done := map[layers.Layer]bool{}
	for _, c := range calls {
		shapeList := make([][]int, len(c.in))
		for i, t := range c.in {
			shapeList[i] = shapeOf[t]
		}
		var out []int
		var ws []layers.WeightShape
		var err error
		if mi, ok := c.layer.(layers.MultiInputLayer); ok {
			out, ws, err = layers.PlanBuildInputs(mi, shapeList)
		} else {
			out, ws, err = layers.PlanBuild(c.layer, shapeList[0])
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s: layer %d of model %q: %w; %s", path, index[c.layer]+1, m.name, err, saveAgain)
		}
		shapeOf[c.out] = out
		for _, t := range c.extra {
			shapeOf[t] = t.shape
		}
		if done[c.layer] {
			continue
		}
		done[c.layer] = true
		l := c.layer
		for _, w := range ws {
			name := l.Name() + "/" + w.Name
			plan[name] = planned{l.Name(), w.Shape}
			names = append(names, name)
		}
	}
	return plan, names, nil
}

// fits is a check for safetensors.ReadFileChecked that refuses, before any
// data is read or allocated, a file that declares more than the model can
// hold: a tensor larger than its largest weight, or more values in all
// than its weights and an optimizer's slots for each of them. A
// valid-looking sparse file declaring huge tensors once exhausted memory
// before shapes were checked. What fits these bounds but is still not the
// model's, check explains once the file is read.
func (p weightPlan) fits(_ map[string]string, declared []safetensors.Declared) error {
	largest, most, total := "", 0, 0
	for _, name := range p.names {
		n := shapes.Size(p.of[name].shape)
		if n > most || largest == "" {
			largest, most = name, n
		}
		total += n
	}
	if len(declared) > 0 && total == 0 {
		return fmt.Errorf("the file declares %d tensors but model %q has no weights: the file is not this model's", len(declared), p.model)
	}
	all := 0
	for _, t := range declared {
		if t.Values > most {
			return fmt.Errorf("tensor %q has shape %s, %d values, more than any weight of model %q holds (the largest, %s, has %d): the file is not this model's, or it is damaged",
				t.Name, weightShape(t.Shape), t.Values, p.model, largest, most)
		}
		all += t.Values
	}
	if limit := total * (1 + maxSlotsPerWeight); all > limit {
		return fmt.Errorf("the file declares %d values in %d tensors, more than model %q's %d weights and an optimizer's slots for them can hold (%d): the file is not this model's, or it is damaged",
			all, len(declared), p.model, total, limit)
	}
	return nil
}

// check matches the tensors of f, read from path, to the plan's weights:
// no tensor but the weights and optimizer state, then each weight present,
// of its shape, and finite. It returns the weights in the model's order,
// for copyWeights; optimizer state is readOptimizerState's to read.
func (p weightPlan) check(f *safetensors.File, path string) ([]safetensors.Tensor, error) {
	held := make(map[string]safetensors.Tensor, len(f.Tensors))
	for _, t := range f.Tensors {
		if strings.HasPrefix(t.Name, optimizerPrefix) {
			continue
		}
		if _, ok := p.of[t.Name]; !ok {
			if p.described {
				return nil, fmt.Errorf("%s holds tensor %q, a weight of none of the layers its config describes (their weights: %s); %s",
					path, t.Name, strings.Join(p.names, ", "), saveAgain)
			}
			return nil, fmt.Errorf("%s holds tensor %q, which model %q does not have (its weights: %s): was the file saved from another model?",
				path, t.Name, p.model, strings.Join(p.names, ", "))
		}
		if _, ok := held[t.Name]; !ok {
			held[t.Name] = t
		}
	}
	src := make([]safetensors.Tensor, len(p.names))
	for i, name := range p.names {
		want := p.of[name]
		t, ok := held[name]
		switch {
		case !ok && p.described:
			return nil, fmt.Errorf("%s has no tensor %q, a weight of layer %q its config describes; %s", path, name, want.layer, saveAgain)
		case !ok:
			return nil, fmt.Errorf("%s has no tensor %q, a weight of model %q (the file holds: %s)", path, name, p.model, strings.Join(f.Names(), ", "))
		case !slices.Equal(t.Shape, want.shape) && p.described:
			return nil, fmt.Errorf("tensor %q has shape %s in %s, but layer %q as its config describes it makes shape %s; %s",
				name, weightShape(t.Shape), path, want.layer, weightShape(want.shape), saveAgain)
		case !slices.Equal(t.Shape, want.shape):
			return nil, fmt.Errorf("tensor %q has shape %s in %s but shape %s in model %q", name, weightShape(t.Shape), path, weightShape(want.shape), p.model)
		}
		if j := firstNonFinite(t.Data); j >= 0 {
			return nil, nonFiniteLoaded(path, "weight "+name, t.Data[j], j)
		}
		src[i] = t
	}
	return src, nil
}

// copyWeights copies the tensors check returned for m into its weights.
func (m *Sequential) copyWeights(src []safetensors.Tensor) error {
	for i, w := range m.weights() {
		copy(w.value.Data().([]float32), src[i].Data)
	}
	return m.weightsWritten()
}
