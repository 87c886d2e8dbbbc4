package plan

import (
	"slices"
	"testing"

	"github.com/gokeras/gokeras/ops"
)

// TestConvSteps compiles the convolutional network with a backend that
// computes stride-1 convolutions without patches: each convolution's
// Patches and forward product become a ConvInputGrid and a ConvForward,
// its kernel gradient's product a ConvKernelGrad; the second one's
// patches' gradient product and PatchesGrad a ConvInputGrad (the first
// convolution reads the data, whose gradient no one needs); one
// ConvOutputGrid a convolution lays its output's gradient out before the
// first step that reads it. The patches and their gradient take no memory,
// the other buffers are what the backend asked for, and training gives the
// same bits as the patches and the products.
func TestConvSteps(t *testing.T) {
	var asked []ops.Window
	caps := Capabilities{Conv: func(w ops.Window, filters int) (ConvMemory, bool) {
		asked = append(asked, w)
		return ConvMemory{InputGrid: w.InputSize(), OutputGrid: w.Positions() * filters, Forward: 100 + filters, InputGrad: 200 + filters}, true
	}}
	n := newConvNet(t, 1)
	p, err := Compile(n.g, n.params, caps)
	if err != nil {
		t.Fatal(err)
	}
	count := map[Kind]int{}
	first := map[Kind]int{}
	for i, s := range p.Steps {
		if _, ok := first[s.Kind]; !ok {
			first[s.Kind] = i
		}
		count[s.Kind]++
		switch s.Kind {
		case Patches, PatchesGrad:
			t.Errorf("step %d is left: %v", i, s)
		case Gemm:
			if s.M == s.Op.Window.Positions() && s.Op.Window.Positions() > 0 {
				t.Errorf("step %d is a convolution's product: %v", i, s)
			}
		case ConvForward:
			if got := p.Buffers[s.Out[1]].Elems; got != 100+s.K {
				t.Errorf("step %d: scratch of %d values, want %d", i, got, 100+s.K)
			}
		case ConvInputGrad:
			if got := p.Buffers[s.Out[1]].Elems; got != 200+s.K {
				t.Errorf("step %d: scratch of %d values, want %d", i, got, 200+s.K)
			}
			if w := s.Op.Window; w.C != 4 || w.H != 4 || s.K != 3 || s.N != 9*4 || s.M != w.Positions() {
				t.Errorf("step %d: %v: want the second convolution (4×4×4 images, 3 filters)", i, s)
			}
		}
	}
	want := map[Kind]int{ConvInputGrid: 2, ConvForward: 2, ConvKernelGrad: 2, ConvOutputGrid: 2, ConvInputGrad: 1}
	for k, c := range want {
		if count[k] != c {
			t.Errorf("%d %v steps, want %d", count[k], k, c)
		}
	}
	if !(first[ConvOutputGrid] < first[ConvKernelGrad] && first[ConvOutputGrid] < first[ConvInputGrad]) {
		t.Errorf("the output gradient's grid comes after a step reading it: %v", p.Steps)
	}
	if len(asked) != 3 {
		t.Errorf("the backend was asked %d times, want 3 (each convolution, then the second one's input gradient)", len(asked))
	}
	for i, b := range p.Buffers {
		if b.Node == nil || b.Elems != 0 {
			continue
		}
		if k := b.Node.Op(); k == nil {
			continue
		}
		info, _ := ops.Inspect(b.Node.Op())
		if info.Kind != ops.OpPatches && info.Kind != ops.OpMatMul {
			t.Errorf("buffer %d (%s, %v) has no memory", i, b.Node.Name(), info.Kind)
		}
	}

	wantL, wantW, _, _ := trainConvWith(t, hostBackendOn(&subDevice{}), Capabilities{})
	got, gotW, _, _ := trainConvWith(t, capsBackend{hostBackendOn(&subDevice{}), caps}, caps)
	if !slices.Equal(got, wantL) {
		t.Errorf("losses and gradients differ with the Conv steps:\n%v\nwant %v", got, wantL)
	}
	for i := range wantW {
		if !slices.Equal(gotW[i], wantW[i]) {
			t.Errorf("weight %d differs with the Conv steps", i)
		}
	}

	// A backend whose convolutions read the tensors in place (no grids:
	// Winograd's on the CPU) gets no grid steps; its steps read the
	// images and the output's gradient themselves. The same bits again.
	inPlace := Capabilities{Conv: func(w ops.Window, filters int) (ConvMemory, bool) {
		return ConvMemory{Forward: 100 + filters, InputGrad: 200 + filters}, true
	}}
	q, err := Compile(n.g, n.params, inPlace)
	if err != nil {
		t.Fatal(err)
	}
	count = map[Kind]int{}
	for i, s := range q.Steps {
		count[s.Kind]++
		if s.Kind == ConvForward || s.Kind == ConvKernelGrad || s.Kind == ConvInputGrad {
			if e, w := q.Buffers[s.In[0]].Elems, s.Op.Window; e != w.InputSize() && e != w.Positions()*s.K {
				t.Errorf("step %d (%v) reads a buffer of %d values, want the images' %d or the output gradient's %d", i, s, e, w.InputSize(), w.Positions()*s.K)
			}
		}
	}
	want = map[Kind]int{Patches: 0, ConvInputGrid: 0, ConvOutputGrid: 0, ConvForward: 2, ConvKernelGrad: 2, ConvInputGrad: 1}
	for k, c := range want {
		if count[k] != c {
			t.Errorf("in place: %d %v steps, want %d", count[k], k, c)
		}
	}
	got, gotW, _, _ = trainConvWith(t, capsBackend{hostBackendOn(&subDevice{}), inPlace}, inPlace)
	if !slices.Equal(got, wantL) {
		t.Errorf("losses and gradients differ with the Conv steps in place:\n%v\nwant %v", got, wantL)
	}
	for i := range wantW {
		if !slices.Equal(gotW[i], wantW[i]) {
			t.Errorf("weight %d differs with the Conv steps in place", i)
		}
	}

	// With the bias in the forward step, the ReLU after each convolution
	// folds into it where the backend says so: the same bits again.
	caps.BiasInGemm = true
	folds := caps
	folds.FoldsReLU = func(s *Step) bool { return s.Kind == ConvForward }
	wantL, wantW, _, _ = trainConvWith(t, capsBackend{hostBackendOn(&subDevice{}), caps}, caps)
	got, gotW, _, m := trainConvWith(t, capsBackend{hostBackendOn(&subDevice{}), folds}, folds)
	relus, folded := 0, 0
	for _, s := range m.plan.Steps {
		switch {
		case s.Kind == BiasAct && s.Op.Activation == ops.ReLU:
			relus++
		case s.Kind == ConvForward && s.Op.Activation == ops.ReLU:
			folded++
		}
	}
	if relus != 0 || folded != 2 {
		t.Errorf("with the ReLUs folded: %d ReLU steps and %d convolutions with a ReLU, want 0 and 2", relus, folded)
	}
	if !slices.Equal(got, wantL) {
		t.Errorf("losses and gradients differ with the ReLUs folded into the convolutions:\n%v\nwant %v", got, wantL)
	}
	for i := range wantW {
		if !slices.Equal(gotW[i], wantW[i]) {
			t.Errorf("weight %d differs with the ReLUs folded into the convolutions", i)
		}
	}
}

// capsBackend is a Backend that reports caps.
type capsBackend struct {
	Backend
	caps Capabilities
}

func (b capsBackend) Capabilities() Capabilities { return b.caps }
