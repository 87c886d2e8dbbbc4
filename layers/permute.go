package layers

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/gokeras/gokeras/internal/formats/configargs"
	"github.com/gokeras/gokeras/internal/formats/shapes"
	"github.com/gokeras/gokeras/ops"
	"gorgonia.org/gorgonia"
)

// PermuteLayer reorders the axes of each sample, like
// keras.layers.Permute.
type PermuteLayer struct {
	named
	dims []int
}

// Permute makes a Permute layer: output axis i of a sample is its input
// axis dims[i-1], axes numbered from 1 (the batch, axis 0, stays where it
// is), as in Keras; Permute([]int{2, 1}) transposes each sample's matrix.
func Permute(dims []int, opts ...Option) *PermuteLayer {
	p := &PermuteLayer{dims: slices.Clone(dims)}
	applyOptions(&p.named, opts)
	return p
}

// Type returns "Permute".
func (p *PermuteLayer) Type() string { return "Permute" }

// plan is Permute's shape rule: the input's axes in the order of dims; no
// weights.
func (p *PermuteLayer) plan(inputShape []int) ([]int, []WeightShape, error) {
	n := len(inputShape)
	seen := make([]bool, n+1)
	ok := len(p.dims) == n
	for _, d := range p.dims {
		if !ok || d < 1 || d > n || seen[d] {
			ok = false
			break
		}
		seen[d] = true
	}
	if !ok {
		return nil, nil, fmt.Errorf("permute layer %q: dims %v for samples of shape %s: want each of 1..%d once (axes numbered from 1 after the batch)",
			p.name, p.dims, shapes.String(inputShape), n)
	}
	out := make([]int, n)
	for i, d := range p.dims {
		out[i] = inputShape[d-1]
	}
	return out, nil, nil
}

// Build returns the permuted sample shape.
func (p *PermuteLayer) Build(inputShape []int, _ *rand.Rand) ([]int, error) {
	if p.nameErr != nil {
		return nil, fmt.Errorf("permute layer: %w", p.nameErr)
	}
	out, _, err := p.plan(inputShape)
	return out, err
}

// Params returns nil: Permute has no weights.
func (p *PermuteLayer) Params() []*Param { return nil }

// Call adds the permutation to the graph.
func (p *PermuteLayer) Call(in Flow, _ []*gorgonia.Node) (Flow, error) {
	out, err := ops.Permute(in.Node, p.dims)
	if err != nil {
		return Flow{}, fmt.Errorf("permute layer %q: %w", p.name, err)
	}
	return Flow{Node: out, NeedsGrad: in.NeedsGrad}, nil
}

// Config returns "Permute" with name and dims.
func (p *PermuteLayer) Config() (Config, error) {
	return Config{ClassName: p.Type(), Config: map[string]any{"name": p.name, "dims": slices.Clone(p.dims)}}, nil
}

func permuteFromConfig(args map[string]any) (Layer, error) {
	var a struct {
		baseArgs
		Dims []int `json:"dims"`
	}
	if err := configargs.Decode(args, &a); err != nil {
		return nil, err
	}
	if a.Dims == nil {
		return nil, missing("dims")
	}
	return Permute(a.Dims, a.nameOptions()...), nil
}

// ONNX adds a Transpose of the samples, channels last, to an ONNX graph:
// perm is 0 (the batch) then dims.
func (p *PermuteLayer) ONNX(b ONNXGraph, in string) (string, error) {
	perm := []int64{0}
	for _, d := range p.dims {
		perm = append(perm, int64(d))
	}
	return b.Apply("Transpose", b.ChannelsLast(in), nil, intsAttr("perm", perm...)), nil
}
