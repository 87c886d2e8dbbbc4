package plan

import (
	"maps"
	"slices"

	"github.com/gokeras/gokeras/ops"
)

// convolutions turns the patches and products of convolutions without
// dilation into Conv steps where the backend offers them
// (Capabilities.Conv, which decides which strides it takes):
//
//   - a Patches step whose patches only the forward product and the
//     kernel's gradient product read becomes a ConvInputGrid, the forward
//     product a ConvForward and the gradient product a ConvKernelGrad;
//   - a product dz·kᵀ whose result (the patches' gradient) only a
//     PatchesGrad reads becomes a ConvInputGrad, and the PatchesGrad goes;
//   - each output gradient those read gets one ConvOutputGrid step, before
//     the first of them.
//
// Where the backend's convolution has no grids (ConvMemory's InputGrid or
// OutputGrid 0: it reads the tensors in place), the steps read the images
// or the output's gradient themselves, and the Patches step goes with no
// ConvInputGrid in its place.
//
// The patches and their gradient then take no memory. A convolution whose
// patches something else reads (a Read of them, say) keeps its steps.
func (c *compiler) convolutions() {
	p := c.p
	if c.caps.Conv == nil {
		return
	}
	readers, kept := p.readers()
	only := func(buf, step int) bool { return !kept[buf] && slices.Equal(readers[buf], []int{step}) }
	newBuffer := func(elems int) int {
		p.Buffers = append(p.Buffers, Buffer{Elems: elems, Role: Temp})
		return len(p.Buffers) - 1
	}
	type outputGrid struct {
		buf, first int
		step       Step
	}
	grids := map[int]*outputGrid{} // by the output gradient's buffer
	gridOf := func(dz, user int, s Step, mem ConvMemory) int {
		if mem.OutputGrid == 0 {
			return dz // read in place
		}
		g, ok := grids[dz]
		if !ok {
			g = &outputGrid{buf: newBuffer(mem.OutputGrid), first: user,
				step: Step{Kind: ConvOutputGrid, Op: s.Op, Name: s.Name, Node: s.Node, M: s.M, K: s.K, N: s.N, In: []int{dz}}}
			g.step.Out = []int{g.buf}
			grids[dz] = g
		}
		g.first = min(g.first, user)
		return g.buf
	}
	drop := map[int]bool{}
	for i, s := range p.Steps {
		w := s.Op.Window
		if (s.Kind != Patches && s.Kind != PatchesGrad) || w.DilationH != 1 || w.DilationW != 1 {
			continue
		}
		if s.Kind == PatchesGrad {
			dcols := s.In[0]
			at := p.lastWriter(dcols)
			if at < 0 || !only(dcols, i) {
				continue
			}
			g := p.Steps[at]
			if g.Kind != Gemm || g.Op.Kind != ops.OpMatMul || g.Op.TransA || !g.Op.TransB || g.M != w.Positions() || g.N != w.PatchSize() {
				continue
			}
			mem, ok := c.caps.Conv(w, g.K)
			if !ok {
				continue
			}
			conv := Step{Kind: ConvInputGrad, Op: s.Op, Name: s.Name, Node: s.Node, M: g.M, K: g.K, N: g.N}
			conv.In = []int{gridOf(g.In[0], at, conv, mem), g.In[1]}
			conv.Out = []int{s.Out[0], newBuffer(mem.InputGrad)}
			p.Steps[at], drop[i] = conv, true
			p.Buffers[dcols].Elems = 0
			continue
		}
		cols := s.Out[0]
		if kept[cols] {
			continue
		}
		fwd, kernelGrad := -1, -1
		for _, r := range readers[cols] {
			g := p.Steps[r]
			switch {
			case g.Kind != Gemm || g.In[0] != cols || g.Op.TransB:
				fwd, kernelGrad = -2, -2
			case !g.Op.TransA && fwd == -1 && g.M == w.Positions() && g.K == w.PatchSize():
				fwd = r
			case g.Op.TransA && kernelGrad == -1 && g.K == w.Positions() && g.M == w.PatchSize():
				kernelGrad = r
			default:
				fwd, kernelGrad = -2, -2
			}
		}
		if fwd < 0 || kernelGrad == -2 {
			continue
		}
		f := p.Steps[fwd]
		mem, ok := c.caps.Conv(w, f.N)
		if !ok {
			continue
		}
		images := s.In[0] // read in place
		if mem.InputGrid > 0 {
			images = newBuffer(mem.InputGrid)
			p.Steps[i] = Step{Kind: ConvInputGrid, Op: s.Op, Name: s.Name, Node: s.Node, M: f.M, K: f.N, N: f.K, In: []int{s.In[0]}, Out: []int{images}}
		} else {
			drop[i] = true
		}
		bias := None
		if len(f.In) > 2 {
			bias = f.In[2]
		}
		p.Steps[fwd] = Step{Kind: ConvForward, Op: s.Op, Name: f.Name, Node: f.Node, M: f.M, K: f.N, N: f.K,
			In: []int{images, f.In[1], bias}, Out: []int{f.Out[0], newBuffer(mem.Forward)}}
		if kernelGrad >= 0 {
			g := p.Steps[kernelGrad]
			conv := Step{Kind: ConvKernelGrad, Op: s.Op, Name: g.Name, Node: g.Node, M: f.M, K: f.N, N: f.K}
			conv.In = []int{images, gridOf(g.In[1], kernelGrad, conv, mem)}
			conv.Out = []int{g.Out[0], newBuffer(mem.KernelGrad)}
			p.Steps[kernelGrad] = conv
		}
		p.Buffers[cols].Elems = 0
	}
	if len(grids) == 0 && len(drop) == 0 {
		return
	}
	before := map[int][]Step{}
	for _, dz := range slices.Sorted(maps.Keys(grids)) {
		g := grids[dz]
		before[g.first] = append(before[g.first], g.step)
	}
	steps := make([]Step, 0, len(p.Steps)+len(grids))
	for i, s := range p.Steps {
		steps = append(steps, before[i]...)
		if !drop[i] {
			steps = append(steps, s)
		}
	}
	p.Steps = steps
}
