package plan

import "slices"

// pointwise makes each convolution of a 1×1 window, strides 1 and no
// padding (Keras' Conv1D(n, 1) and Conv2D(n, 1): a Dense layer at every
// position) products of its images: its patches are the images
// themselves, so its Patches step, a copy, goes and the steps that read
// the patches read the images; its PatchesGrad step, a copy of the
// patches' gradient, goes too, and the product that computed that
// gradient writes the images' gradient itself. The convolution is then
// what a Dense layer's steps are (products, and its kernel's update
// folded into its gradient where the backend does that), with no grid
// (convolutions) nor copies. Patches or a gradient that something else
// reads (a Read) keep their steps.
func (c *compiler) pointwise() {
	p := c.p
	readers, kept := p.readers()
	drop := map[int]bool{}
	for i, s := range p.Steps {
		if s.Kind != Patches && s.Kind != PatchesGrad {
			continue
		}
		if w := s.Op.Window; w.KH != 1 || w.KW != 1 || w.StrideH != 1 || w.StrideW != 1 || w.DilationH != 1 || w.DilationW != 1 ||
			w.PadTop != 0 || w.PadLeft != 0 || w.OH != w.H || w.OW != w.W {
			continue
		}
		if s.Kind == Patches {
			cols := s.Out[0]
			if kept[cols] || p.Buffers[cols].Elems != p.Buffers[s.In[0]].Elems {
				continue
			}
			for _, r := range readers[cols] {
				p.Steps[r].In = renamed(p.Steps[r].In, cols, s.In[0])
			}
			p.Buffers[cols].Elems = 0
			drop[i] = true
			continue
		}
		dcols, dx := s.In[0], s.Out[0]
		at := p.lastWriter(dcols)
		if at < 0 || kept[dcols] || !slices.Equal(readers[dcols], []int{i}) || p.writers(dcols) != 1 ||
			p.Buffers[dcols].Elems != p.Buffers[dx].Elems || slices.Contains(p.Steps[at].In, dx) {
			continue
		}
		p.Steps[at].Out = renamed(p.Steps[at].Out, dcols, dx)
		p.Buffers[dcols].Elems = 0
		drop[i] = true
	}
	p.dropSteps(drop)
}

// renamed is a copy of the buffer list ids with buffer from replaced by
// to (a copy: steps' operand lists may share their arrays).
func renamed(ids []int, from, to int) []int {
	out := slices.Clone(ids)
	for j, b := range out {
		if b == from {
			out[j] = to
		}
	}
	return out
}
