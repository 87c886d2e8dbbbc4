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

// readBefore reports whether a step before step end reads buffer b.
func readBefore(steps []Step, b, end int) bool {
	return slices.ContainsFunc(steps[:end], func(s Step) bool { return slices.Contains(s.In, b) })
}
