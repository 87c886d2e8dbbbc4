package plan

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gokeras/gokeras/ops"
	"github.com/gokeras/gokeras/optim"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// pointwiseNet is a 3×3 convolution and its ReLU, then a convolution of
// a 1×1 window (as patches and a product, or, asDense, as the Dense layer
// it is: the images reshaped to rows of channels, times the kernel), its
// ReLU, a dense layer and softmax cross-entropy; with stride2 the 1×1
// convolution takes every other pixel instead.
func pointwiseNet(t *testing.T, asDense, stride2 bool) *convNet {
	t.Helper()
	const batch, h, w, c, f1, f2, classes = 3, 4, 6, 2, 5, 4, 3
	rng := rand.New(rand.NewPCG(21, 22))
	n := &convNet{g: gorgonia.NewGraph()}
	mk := func(name string, scale float64, shape ...int) *gorgonia.Node {
		v := make([]float32, tensor.Shape(shape).TotalSize())
		for i := range v {
			v[i] = float32(scale * rng.NormFloat64())
		}
		return gorgonia.NewTensor(n.g, tensor.Float32, len(shape), gorgonia.WithShape(shape...), gorgonia.WithName(name),
			gorgonia.WithValue(tensor.New(tensor.WithShape(shape...), tensor.WithBacking(v))))
	}
	must := mustNode(t)
	x := mk("x", 1, batch, h, w, c)
	oh, ow := h, w
	if stride2 {
		oh, ow = h/2, w/2
	}
	k1, b1 := mk("k1", 0.3, 9*c, f1), mk("b1", 0.1, f1)
	k2, b2 := mk("k2", 0.3, f1, f2), mk("b2", 0.1, f2)
	w3 := mk("w3", 0.3, oh*ow*f2, classes)
	y := oneHotLabels(n.g, rng, batch, classes)
	a := must(ops.Patches(x, ops.WindowSpec{Kernel: [2]int{3, 3}, Same: true}, false))
	a = must(ops.Activate(ops.ReLU, must(ops.Affine(a, k1, b1, true))))
	if asDense {
		a = must(ops.Reshape(a, []int{batch * h * w, f1}, true))
	} else {
		a = must(ops.Reshape(a, []int{batch, h, w, f1}, true))
		spec := ops.WindowSpec{Kernel: [2]int{1, 1}}
		if stride2 {
			spec.Strides = [2]int{2, 2}
		}
		a = must(ops.Patches(a, spec, true))
	}
	a = must(ops.Activate(ops.ReLU, must(ops.Affine(a, k2, b2, true))))
	a = must(ops.Reshape(a, []int{batch, oh * ow * f2}, true))
	n.loss = must(ops.Loss(ops.SoftmaxCrossEntropy, must(ops.Affine(a, w3, nil, true)), y))
	gorgonia.Read(n.loss, &n.lossRead)
	n.params = []*gorgonia.Node{k1, b1, k2, b2, w3}
	if _, err := gorgonia.Grad(n.loss, n.params...); err != nil {
		t.Fatal(err)
	}
	for _, p := range n.params {
		n.weights = append(n.weights, p.Value().Data().([]float32))
	}
	return n
}

// TestPointwiseConvolutionIsDense: a 1×1 convolution with strides 1 and
// no padding compiles to the steps of a Dense layer, no Patches nor
// PatchesGrad left (the 3×3 one keeps its own), and trains to the same
// bits as the same network written with a Dense layer; with strides 2 the
// 1×1 convolution keeps its patches.
func TestPointwiseConvolutionIsDense(t *testing.T) {
	train := func(n *convNet) ([]float64, [][]float32, *Plan) {
		p, err := Compile(n.g, n.params, Capabilities{})
		if err != nil {
			t.Fatal(err)
		}
		m, err := New(p, hostBackendOn(&subDevice{}), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		var losses []float64
		for it := range 3 {
			if err := m.Train(optim.Update{Rule: optim.RuleSGD, LearningRate: 0.1, Iteration: int64(it + 1)}); err != nil {
				t.Fatal(err)
			}
			losses = append(losses, scalar(t, n.lossRead))
		}
		var w [][]float32
		for _, d := range n.weights {
			w = append(w, slices.Clone(d))
		}
		return losses, w, p
	}
	patchSteps := func(p *Plan) (patches, grads int) {
		for _, s := range p.Steps {
			switch s.Kind {
			case Patches:
				patches++
			case PatchesGrad:
				grads++
			}
		}
		return patches, grads
	}
	got, gotW, p := train(pointwiseNet(t, false, false))
	if pa, gr := patchSteps(p); pa != 1 || gr != 0 {
		t.Errorf("%d Patches and %d PatchesGrad steps, want the 3×3 convolution's Patches only:\n%v", pa, gr, p.Steps)
	}
	want, wantW, _ := train(pointwiseNet(t, true, false))
	sameTraining(t, got, want, gotW, wantW)
	_, _, p = train(pointwiseNet(t, false, true))
	if pa, gr := patchSteps(p); pa != 2 || gr != 1 {
		t.Errorf("with strides 2: %d Patches and %d PatchesGrad steps, want 2 and 1", pa, gr)
	}
}
