package layers

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// callOn builds l for images of the given sample shape, calls it on a
// batch of them holding x and returns its output's shape and values.
func callOn(t *testing.T, l Layer, sample []int, batch int, x []float32) ([]int, []float32) {
	t.Helper()
	out, err := l.Build(sample, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	g := gorgonia.NewGraph()
	shape := append([]int{batch}, sample...)
	in := gorgonia.NewTensor(g, tensor.Float32, len(shape), gorgonia.WithShape(shape...), gorgonia.WithName("x"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(shape...), tensor.WithBacking(x))))
	f, err := l.Call(Flow{Node: in}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Node.Shape(); !slices.Equal(got, append([]int{batch}, out...)) {
		t.Fatalf("%s: the graph's output has shape %v, Build says %v", l.Type(), got, out)
	}
	m := gorgonia.NewTapeMachine(g)
	defer m.Close()
	if err := m.RunAll(); err != nil {
		t.Fatal(err)
	}
	return out, slices.Clone(f.Node.Value().Data().([]float32))
}

// TestResizeLayersValues: ZeroPadding2D, Cropping2D, UpSampling2D,
// Identity and ReLU on a 2×3 image of one channel, by hand.
func TestResizeLayersValues(t *testing.T) {
	x := []float32{1, -2, 3, -4, 5, -6}
	for _, c := range []struct {
		l     Layer
		shape []int
		want  []float32
	}{
		{ZeroPadding2D(1, 0, 0, 1), []int{3, 4, 1}, []float32{0, 0, 0, 0, 1, -2, 3, 0, -4, 5, -6, 0}},
		{ZeroPadding2DSymmetric(0, 1), []int{2, 5, 1}, []float32{0, 1, -2, 3, 0, 0, -4, 5, -6, 0}},
		{Cropping2D(1, 0, 0, 1), []int{1, 2, 1}, []float32{-4, 5}},
		{Cropping2DSymmetric(0, 1), []int{2, 1, 1}, []float32{-2, 5}},
		{UpSampling2D(2, 1), []int{4, 3, 1}, []float32{1, -2, 3, 1, -2, 3, -4, 5, -6, -4, 5, -6}},
		{UpSampling2D(1, 2), []int{2, 6, 1}, []float32{1, 1, -2, -2, 3, 3, -4, -4, 5, 5, -6, -6}},
		{Identity(), []int{2, 3, 1}, x},
		{NewReLU(), []int{2, 3, 1}, []float32{1, 0, 3, 0, 5, 0}},
	} {
		shape, got := callOn(t, c.l, []int{2, 3, 1}, 1, x)
		if !slices.Equal(shape, c.shape) || !slices.Equal(got, c.want) {
			t.Errorf("%s: %v %v, want %v %v", c.l.Type(), shape, got, c.shape, c.want)
		}
	}
}

// TestResizeLayersRefuse: negative sides, a crop that leaves nothing, a
// size of 0 and inputs that are not images are errors that say so.
func TestResizeLayersRefuse(t *testing.T) {
	for _, c := range []struct {
		l     Layer
		input []int
		want  string
	}{
		{ZeroPadding2D(-1, 0, 0, 0), []int{4, 4, 1}, "every value must be 0 or more"},
		{Cropping2D(0, 0, 0, -2), []int{4, 4, 1}, "every value must be 0 or more"},
		{Cropping2D(2, 2, 0, 0), []int{4, 4, 1}, "too high for input shape (None, 4, 4, 1)"},
		{Cropping2DSymmetric(0, 3), []int{4, 5, 1}, "at least one row and one column must remain"},
		{UpSampling2D(0, 2), []int{4, 4, 1}, "size (0, 2): both must be 1 or more"},
		{ZeroPadding2DSymmetric(1, 1), []int{4, 4}, "expects images (height, width, channels)"},
		{UpSampling2D(2, 2), []int{8}, "expects images"},
	} {
		_, err := c.l.Build(c.input, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s on %v: %v, want an error saying %q", c.l.Type(), c.input, err, c.want)
		}
	}
}

// TestResizeLayersONNX: Pad's and Slice's axes follow the input's layout;
// Resize takes its input channels first.
func TestResizeLayersONNX(t *testing.T) {
	for _, c := range []struct {
		l     ONNXMapper
		first bool
		want  []string
	}{
		{ZeroPadding2D(1, 2, 3, 4), false, []string{"v1 = Pad(x, pads[0 1 3 0 0 2 4 0])"}},
		{ZeroPadding2D(1, 2, 3, 4), true, []string{"v1 = Pad(x, pads[0 0 1 3 0 0 2 4])"}},
		{Cropping2D(1, 2, 0, 1), false, []string{"v1 = Slice(x, starts[1 0], ends[4 4], axes[1 2])"}},
		{Cropping2D(1, 2, 0, 1), true, []string{"v1 = Slice(x, starts[1 0], ends[4 4], axes[2 3])"}},
		{UpSampling2D(2, 3), false, []string{"v1 = ToFirst(x)", "v2 = Resize(v1, , scales[1 1 2 3])"}},
		{Identity(), false, []string{"v1 = Identity(x)"}},
		{NewReLU(), true, []string{"v1 = Relu(x)"}},
	} {
		g := &fakeONNX{shapes: [][]int{{6, 5, 2}}, first: map[string]bool{"x": c.first}}
		out, err := c.l.ONNX(g, "x")
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(g.lines, c.want) {
			t.Errorf("%T (channels first %t): %q, want %q", c.l, c.first, g.lines, c.want)
		}
		if _, ok := c.l.(*UpSampling2DLayer); ok != g.first[out] && !c.first {
			t.Errorf("%T: output channels first %t", c.l, g.first[out])
		}
	}
}
