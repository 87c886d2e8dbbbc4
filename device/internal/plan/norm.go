package plan

import (
	"slices"

	"github.com/gokeras/gokeras/ops"
)

// normGradients gives each BatchNormGrad step whose gamma gradient a
// BatchNormGammaGrad step computes from the same x, mean, variance and dy
// (with the same parameters and the batch's statistics) that gradient as
// its second output, and drops the other step, where the backend computes
// both in one pass (Capabilities.GammaInNormGrad).
func (c *compiler) normGradients() {
	p := c.p
	if !c.caps.GammaInNormGrad {
		return
	}
	drop := map[int]bool{}
	for i, g := range p.Steps {
		if g.Kind != Norm || g.Op.Norm != ops.BatchNormGammaGrad || !g.Op.NormParams.BatchStats {
			continue
		}
		for j := range p.Steps {
			s := &p.Steps[j]
			if s.Kind == Norm && s.Op.Norm == ops.BatchNormGrad && len(s.Out) == 1 && s.Op.NormParams == g.Op.NormParams &&
				s.M == g.M && s.N == g.N && slices.Equal(s.In[:3], g.In[:3]) && s.In[4] == g.In[3] && !readBefore(p.Steps, g.Out[0], j) {
				s.Out = append(s.Out, g.Out[0])
				drop[i] = true
				break
			}
		}
	}
	p.dropSteps(drop)
}

// normBiasSums gives each BatchNormGrad step with gamma's gradient
// (normGradients) the SumRows of its input gradient as a third output, and
// drops the SumRows step, where the backend sums those columns as it
// writes them (Capabilities.BiasInNormGrad): the gradient of a bias added
// just before the normalization. Only the SumRows step writes its output
// and only the BatchNormGrad step its input, so nothing reads the sums
// before, or changes the input after, the step that now computes them.
func (c *compiler) normBiasSums() {
	p := c.p
	if !c.caps.BiasInNormGrad {
		return
	}
	drop := map[int]bool{}
	for i, s := range p.Steps {
		if s.Kind != SumRows || len(s.In) != 1 || p.writers(s.Out[0]) != 1 || p.writers(s.In[0]) != 1 {
			continue
		}
		w := p.lastWriter(s.In[0])
		if w < 0 || w > i {
			continue
		}
		n := &p.Steps[w]
		if n.Kind == Norm && n.Op.Norm == ops.BatchNormGrad && len(n.Out) == 2 && n.Out[0] == s.In[0] && n.M == s.M && n.N == s.N &&
			!readBefore(p.Steps, s.Out[0], i) {
			n.Out = append(slices.Clip(n.Out), s.Out[0])
			drop[i] = true
		}
	}
	p.dropSteps(drop)
}

// moments gives each ColumnMean step the ColumnVariance of the same x
// about that mean as its second output, and drops the variance's step,
// where the backend computes both in one pass over x
// (Capabilities.MomentsInOneStep). Only the variance's step writes its
// output, so nothing reads it before.
func (c *compiler) moments() {
	p := c.p
	if !c.caps.MomentsInOneStep {
		return
	}
	drop := map[int]bool{}
	for i, v := range p.Steps {
		if v.Kind != Norm || v.Op.Norm != ops.ColumnVariance || len(v.In) != 2 || p.writers(v.Out[0]) != 1 {
			continue
		}
		w := p.lastWriter(v.In[1])
		if w < 0 || w > i {
			continue
		}
		m := &p.Steps[w]
		if m.Kind == Norm && m.Op.Norm == ops.ColumnMean && len(m.Out) == 1 && m.In[0] == v.In[0] && m.M == v.M && m.N == v.N {
			m.Out = append(slices.Clip(m.Out), v.Out[0])
			drop[i] = true
		}
	}
	p.dropSteps(drop)
}

// dropSteps removes the steps whose indices drop holds, keeping the
// others' order.
func (p *Plan) dropSteps(drop map[int]bool) {
	if len(drop) == 0 {
		return
	}
	steps := p.Steps[:0]
	for i, s := range p.Steps {
		if !drop[i] {
			steps = append(steps, s)
		}
	}
	p.Steps = steps
}

// lastWriter is the index of the last step that writes buffer buf, or -1.
func (p *Plan) lastWriter(buf int) int {
	for i := len(p.Steps) - 1; i >= 0; i-- {
		if slices.Contains(p.Steps[i].Out, buf) {
			return i
		}
	}
	return -1
}

// readBefore reports whether a step before step end reads buffer b.
func readBefore(steps []Step, b, end int) bool {
	return slices.ContainsFunc(steps[:end], func(s Step) bool { return slices.Contains(s.In, b) })
}

// readers returns the steps that read each buffer, in order, and the
// buffers read after the steps (the Reads, the learnables' gradients, the
// moving statistics' operands).
func (p *Plan) readers() (readers map[int][]int, kept map[int]bool) {
	readers, kept = map[int][]int{}, map[int]bool{}
	for i, s := range p.Steps {
		for _, b := range s.In {
			if b >= 0 {
				readers[b] = append(readers[b], i)
			}
		}
	}
	for _, r := range p.Reads {
		kept[r.Buf] = true
	}
	for _, g := range p.Grads {
		kept[g] = true
	}
	for _, m := range p.Moving {
		for _, b := range m.In {
			kept[b] = true
		}
	}
	return readers, kept
}

// reluFolds folds each ReLU that only follows a step into that step,
// where the backend applies it there (Capabilities.FoldsReLU): a BiasAct
// step of ops.ReLU without a bias whose input one step writes, as its
// first output, and no other step reads (a batch normalization's, a
// residual Add's, a convolution's). That step then writes the ReLU's
// output, its Op.Activation ops.ReLU, the BiasAct step goes, and the
// values before the ReLU take no memory: one pass over them less,
// forward. (The ReLU's gradient reads the ReLU's output, not its input:
// see the ActGrad steps.)
func (c *compiler) reluFolds() {
	p := c.p
	if c.caps.FoldsReLU == nil {
		return
	}
	readers, kept := p.readers()
	drop := map[int]bool{}
	for i, s := range p.Steps {
		if s.Kind != BiasAct || s.Op.Activation != ops.ReLU || s.In[1] != None || s.Out[0] != None || s.Out[1] == None {
			continue
		}
		x := s.In[0]
		w := p.lastWriter(x)
		if w < 0 || kept[x] || !slices.Equal(readers[x], []int{i}) {
			continue
		}
		n := &p.Steps[w]
		if n.Op.Activation != ops.Linear || n.Out[0] != x || !c.caps.FoldsReLU(n) {
			continue
		}
		n.Out[0], n.Op.Activation, n.Fused = s.Out[1], ops.ReLU, s.Node
		p.Buffers[x].Elems = 0
		drop[i] = true
	}
	p.dropSteps(drop)
}

// normAdds folds each elementwise Binary add of two tensors, one of them
// the output of a BatchNorm step without an activation that only the add
// reads (a residual block's last normalization), into that normalization,
// where the backend adds in its pass (Capabilities.AddInBatchNorm): the
// add's step becomes the BatchNorm step with the other tensor as its
// sixth input, the add's output as its own and the add's activation (a
// folded ReLU, reluFolds); the BatchNorm step goes, and its output takes
// no memory. The fused step runs where the add ran, after the other
// tensor (a projection shortcut computed after the normalization); the
// normalization's inputs are written once, so they still hold its
// operands there.
func (c *compiler) normAdds() {
	p := c.p
	if !c.caps.AddInBatchNorm {
		return
	}
	readers, kept := p.readers()
	drop := map[int]bool{}
	for i := range p.Steps {
		s := &p.Steps[i]
		if s.Kind != Binary || s.Op.Binary.Kind != ops.BinaryAdd || !slices.Equal(s.Op.Binary.A, s.Op.Binary.B) || len(s.In) != 2 {
			continue
		}
		for k, y := range s.In {
			w := p.lastWriter(y)
			if w < 0 || w > i || kept[y] || !slices.Equal(readers[y], []int{i}) || p.writers(y) != 1 {
				continue
			}
			n := p.Steps[w]
			if n.Kind != Norm || n.Op.Norm != ops.BatchNorm || n.Op.Activation != ops.Linear || len(n.In) != 5 || n.Out[0] != y || n.M*n.N != s.N {
				continue
			}
			n.In = append(slices.Clone(n.In), s.In[1-k])
			n.Out, n.Op.Activation, n.Fused = slices.Clone(s.Out), s.Op.Activation, s.Node
			p.Steps[i] = n
			p.Buffers[y].Elems = 0
			drop[w] = true
			break
		}
	}
	p.dropSteps(drop)
}

// reluGradFolds folds the gradient of each ReLU into the step that
// computes the gradient of the ReLU's output, where the backend applies it
// there (Capabilities.FoldsReLUGrad): an ActGrad step of a ReLU (reading
// the ReLU's output y) whose incoming gradient one step writes and only it
// reads goes; that step writes the ActGrad's output instead, reads y as
// its last input, and its Op.Activation becomes ops.ReLU. The incoming
// gradient then takes no memory and no pass of its own.
func (c *compiler) reluGradFolds() {
	p := c.p
	if c.caps.FoldsReLUGrad == nil {
		return
	}
	readers, kept := p.readers()
	drop := map[int]bool{}
	for i, s := range p.Steps {
		if s.Kind != ActGrad || s.Op.Activation != ops.ReLU || len(s.In) != 3 || s.In[0] != s.In[1] {
			continue
		}
		y, dy := s.In[1], s.In[2]
		w := p.lastWriter(dy)
		if w < 0 || kept[dy] || !slices.Equal(readers[dy], []int{i}) || p.writers(dy) != 1 {
			continue
		}
		n := &p.Steps[w]
		if n.Op.Activation != ops.Linear || n.Out[0] != dy || !c.caps.FoldsReLUGrad(n, y) {
			continue
		}
		n.In = append(slices.Clip(n.In), y)
		n.Out = slices.Clone(n.Out)
		n.Out[0], n.Op.Activation, n.Fused = s.Out[0], ops.ReLU, s.Node
		p.Buffers[dy].Elems = 0
		drop[i] = true
	}
	p.dropSteps(drop)
}

// writers is the number of steps that write buffer buf.
func (p *Plan) writers(buf int) int {
	n := 0
	for _, s := range p.Steps {
		if slices.Contains(s.Out, buf) {
			n++
		}
	}
	return n
}
