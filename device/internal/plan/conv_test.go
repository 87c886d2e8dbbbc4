package plan

import (
	"slices"
	"testing"

	"github.com/gokeras/gokeras/ops"
	"gorgonia.org/gorgonia"
)

// TestConvInputGradStep compiles the convolutional network with a backend
// that computes convolutions' input gradients in one step: the second
// convolution's patches' gradient product and its PatchesGrad become one
// ConvInputGrad step (the first convolution reads the data, whose gradient
// no one needs), the patches' gradient takes no memory, the scratch is
// what the backend asked for, and training gives the same bits as the
// product and the PatchesGrad.
func TestConvInputGradStep(t *testing.T) {
	var asked []ops.Window
	caps := Capabilities{ConvInputGrad: func(w ops.Window, filters int) int {
		asked = append(asked, w)
		return 1000 + filters
	}}
	n := newConvNet(t, 1)
	p, err := Compile(n.g, n.params, caps)
	if err != nil {
		t.Fatal(err)
	}
	var fused []Step
	for _, s := range p.Steps {
		switch s.Kind {
		case PatchesGrad:
			t.Errorf("a PatchesGrad step is left: %v", s)
		case ConvInputGrad:
			fused = append(fused, s)
		}
	}
	if len(fused) != 1 || len(asked) != 1 {
		t.Fatalf("%d ConvInputGrad steps, the backend asked %d times: want 1 each", len(fused), len(asked))
	}
	s := fused[0]
	if w := s.Op.Window; w.C != 4 || w.H != 4 || s.K != 3 || s.N != 9*4 || s.M != w.Positions() {
		t.Errorf("step %v: want the second convolution (4×4×4 images, 3 filters)", s)
	}
	if got := p.Buffers[s.Out[1]].Elems; got != 1003 {
		t.Errorf("scratch of %d values, want the 1003 asked for", got)
	}
	it := n.g.From(s.Node.ID())
	if !it.Next() {
		t.Fatalf("the step's node %s has no operand", s.Node.Name())
	}
	if b, ok := p.BufferOf(it.Node().(*gorgonia.Node)); !ok || p.Buffers[b].Elems != 0 {
		t.Errorf("the patches' gradient still has a buffer of %d values", p.Buffers[b].Elems)
	}

	want, wantW, _, _ := trainConvWith(t, hostBackendOn(&subDevice{}), Capabilities{})
	got, gotW, _, _ := trainConvWith(t, capsBackend{hostBackendOn(&subDevice{}), caps}, caps)
	if !slices.Equal(got, want) {
		t.Errorf("losses and gradients differ with ConvInputGrad:\n%v\nwant %v", got, want)
	}
	for i := range wantW {
		if !slices.Equal(gotW[i], wantW[i]) {
			t.Errorf("weight %d differs with ConvInputGrad", i)
		}
	}
}

// capsBackend is a Backend that reports caps.
type capsBackend struct {
	Backend
	caps Capabilities
}

func (b capsBackend) Capabilities() Capabilities { return b.caps }
