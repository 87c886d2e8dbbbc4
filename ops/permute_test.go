package ops

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestPermuteValues: values placed by hand, forward and back.
func TestPermuteValues(t *testing.T) {
	cases := []struct {
		name      string
		shape     []int
		dims      []int
		x, want   []float64
		wantShape []int
	}{
		{"one 2×3 matrix transposed", []int{1, 2, 3}, []int{2, 1},
			[]float64{1, 2, 3, 4, 5, 6}, []float64{1, 4, 2, 5, 3, 6}, []int{1, 3, 2}},
		{"two 2×2 matrices, each transposed", []int{2, 2, 2}, []int{2, 1},
			[]float64{0, 1, 2, 3, 4, 5, 6, 7}, []float64{0, 2, 1, 3, 4, 6, 5, 7}, []int{2, 2, 2}},
		// x[h][w] = (10h+w, 100+10h+w): rows and columns swap, the
		// channels stay together.
		{"height and width of 2×3 images of 2 channels", []int{1, 2, 3, 2}, []int{2, 1, 3},
			[]float64{0, 100, 1, 101, 2, 102, 10, 110, 11, 111, 12, 112},
			[]float64{0, 100, 10, 110, 1, 101, 11, 111, 2, 102, 12, 112}, []int{1, 3, 2, 2}},
		// x[a][b][c] = 100a+10b+c, out[c][b][a] = x[a][b][c].
		{"three axes reversed", []int{1, 2, 2, 2}, []int{3, 2, 1},
			[]float64{0, 1, 10, 11, 100, 101, 110, 111},
			[]float64{0, 100, 10, 110, 1, 101, 11, 111}, []int{1, 2, 2, 2}},
		{"channels first", []int{1, 2, 1, 3}, []int{3, 1, 2},
			[]float64{1, 2, 3, 4, 5, 6}, []float64{1, 4, 2, 5, 3, 6}, []int{1, 3, 2, 1}},
		{"nothing moves", []int{2, 3}, []int{1},
			[]float64{1, 2, 3, 4, 5, 6}, []float64{1, 2, 3, 4, 5, 6}, []int{2, 3}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := gorgonia.NewGraph()
			x := gorgonia.NewTensor(g, tensor.Float64, len(c.shape), gorgonia.WithShape(c.shape...))
			y, err := Permute(x, c.dims)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(y.Shape(), c.wantShape) {
				t.Fatalf("shape %v, want %v", y.Shape(), c.wantShape)
			}
			info, ok := Inspect(y.Op())
			if !ok || info.Kind != OpPermute {
				t.Fatalf("Inspect: %+v, %v", info, ok)
			}
			p := info.Permute
			sameFloats(t, "forward", run(t, permuteOp{p: p}, t64(c.x, c.shape...)), c.want)
			sameFloats(t, "back", run(t, permuteOp{p: p.Inverse()}, t64(c.want, c.wantShape...)), c.x)
			got32 := make([]float32, len(c.x))
			PermuteForward(p, f32(c.x), got32)
			sameFloats(t, "float32", f64(got32), c.want)
		})
	}
}

func f32(x []float64) []float32 {
	out := make([]float32, len(x))
	for i, v := range x {
		out[i] = float32(v)
	}
	return out
}

func f64(x []float32) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}

// TestPermuteMerged: the smallest form of a permutation, which the
// kernels run.
func TestPermuteMerged(t *testing.T) {
	cases := []struct {
		shape, perm       []int
		dims, merged      []int
		batch, rows, cols int
		transposes        bool
	}{
		{[]int{32, 128, 128}, []int{0, 2, 1}, []int{32, 128, 128}, []int{0, 2, 1}, 32, 128, 128, true},
		{[]int{1, 4, 5}, []int{0, 2, 1}, []int{4, 5}, []int{1, 0}, 1, 4, 5, true},
		{[]int{2, 3, 4, 5}, []int{0, 1, 3, 2}, []int{6, 4, 5}, []int{0, 2, 1}, 6, 4, 5, true},
		{[]int{2, 3, 4, 5}, []int{0, 3, 1, 2}, []int{2, 12, 5}, []int{0, 2, 1}, 2, 12, 5, true},
		{[]int{2, 3, 4, 5}, []int{0, 2, 3, 1}, []int{2, 3, 20}, []int{0, 2, 1}, 2, 3, 20, true},
		{[]int{2, 3, 1, 5}, []int{0, 3, 2, 1}, []int{2, 3, 5}, []int{0, 2, 1}, 2, 3, 5, true},
		{[]int{2, 3, 4}, []int{0, 1, 2}, []int{24}, []int{0}, 1, 1, 24, true},
		{[]int{1, 1, 1}, []int{0, 2, 1}, []int{1}, []int{0}, 1, 1, 1, true},
		{[]int{2, 3, 4, 5}, []int{0, 2, 1, 3}, []int{2, 3, 4, 5}, []int{0, 2, 1, 3}, 0, 0, 0, false},
		{[]int{2, 3, 4, 5}, []int{0, 3, 2, 1}, []int{2, 3, 4, 5}, []int{0, 3, 2, 1}, 0, 0, 0, false},
	}
	for _, c := range cases {
		p := PermuteParams{Shape: c.shape, Perm: c.perm}
		dims, perm := p.Merged()
		if !slices.Equal(dims, c.dims) || !slices.Equal(perm, c.merged) {
			t.Errorf("%v: merged %v perm %v, want %v perm %v", p, dims, perm, c.dims, c.merged)
		}
		b, r, cl, ok := p.Transposes()
		if ok != c.transposes || b != c.batch || r != c.rows || cl != c.cols {
			t.Errorf("%v: transposes %d×%d×%d %v, want %d×%d×%d %v", p, b, r, cl, ok, c.batch, c.rows, c.cols, c.transposes)
		}
	}
}

// TestPermuteMatchesIndexing checks the kernel against indexing by every
// axis, on random shapes (axes of size 1 among them) and permutations.
func TestPermuteMatchesIndexing(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 7))
	for trial := range 200 {
		rank := 2 + rng.IntN(4)
		shape := make([]int, rank)
		for a := range shape {
			shape[a] = 1 + rng.IntN(4)
		}
		perm := append([]int{0}, rng.Perm(rank-1)...)
		for i := 1; i < rank; i++ {
			perm[i]++
		}
		p := PermuteParams{Shape: shape, Perm: perm}
		x := randomData(rng, tensor.Shape(shape).TotalSize(), 1)
		got := make([]float64, len(x))
		permute(p, x, got)
		out := p.Out()
		want := make([]float64, len(x))
		idx := make([]int, rank)
		for o := range want {
			// idx: output o's index on each output axis.
			for a, r := rank-1, o; a >= 0; a-- {
				idx[a], r = r%out[a], r/out[a]
			}
			src := 0
			for a := range rank {
				// Input axis a is output axis i where perm[i] == a.
				src = src*shape[a] + idx[slices.Index(perm, a)]
			}
			want[o] = x[src]
		}
		sameFloats(t, fmt.Sprintf("trial %d: %v", trial, p), got, want)
	}
}

// TestPermuteGradients checks Permute's gradient by finite differences.
func TestPermuteGradients(t *testing.T) {
	cases := []struct {
		shape, dims []int
	}{
		{[]int{2, 3, 4}, []int{2, 1}},
		{[]int{2, 3, 4, 2}, []int{3, 1, 2}},
		{[]int{1, 2, 3, 2}, []int{2, 1, 3}},
		{[]int{2, 2, 3, 2}, []int{3, 2, 1}},
	}
	for ci, c := range cases {
		t.Run(fmt.Sprint(c.shape, c.dims), func(t *testing.T) {
			g := gorgonia.NewGraph()
			rng := rand.New(rand.NewPCG(uint64(ci), 11))
			x := matrix(g, "x", tensor.Shape(c.shape), randomData(rng, tensor.Shape(c.shape).TotalSize(), 1))
			y, err := Permute(x, c.dims)
			if err != nil {
				t.Fatal(err)
			}
			checkGradients(t, g, flatCost(t, g, rng, y), x)
		})
	}
	// TransposeSamples twice is x again.
	g := gorgonia.NewGraph()
	rng := rand.New(rand.NewPCG(9, 11))
	x := matrix(g, "x", tensor.Shape{2, 3, 5}, randomData(rng, 30, 1))
	y, err := TransposeSamples(x)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(y.Shape(), []int{2, 5, 3}) {
		t.Fatalf("shape %v", y.Shape())
	}
	checkGradients(t, g, flatCost(t, g, rng, y), x)
}

func TestPermuteRefusesBadInputs(t *testing.T) {
	g := gorgonia.NewGraph()
	mk := func(shape ...int) *gorgonia.Node {
		return gorgonia.NewTensor(g, tensor.Float32, len(shape), gorgonia.WithShape(shape...))
	}
	x := mk(2, 3, 4)
	for i, f := range []func() (*gorgonia.Node, error){
		func() (*gorgonia.Node, error) { return Permute(x, []int{1}) },       // too few
		func() (*gorgonia.Node, error) { return Permute(x, []int{1, 2, 3}) }, // too many
		func() (*gorgonia.Node, error) { return Permute(x, []int{0, 2}) },    // the batch
		func() (*gorgonia.Node, error) { return Permute(x, []int{2, 2}) },    // twice
		func() (*gorgonia.Node, error) { return Permute(x, []int{3, 1}) },    // no such axis
		func() (*gorgonia.Node, error) { return Permute(mk(4), nil) },
		func() (*gorgonia.Node, error) { return TransposeSamples(mk(2, 3)) },
	} {
		if _, err := f(); err == nil {
			t.Errorf("case %d was accepted", i)
		}
	}
	a := permuteOp{p: PermuteParams{Shape: []int{2, 3, 4}, Perm: []int{0, 2, 1}}}
	b := permuteOp{p: PermuteParams{Shape: []int{2, 4, 3}, Perm: []int{0, 2, 1}}}
	if fmt.Sprint(a) == fmt.Sprint(b) {
		t.Error("permutations of two shapes hash alike")
	}
	if _, err := a.InferShape(tensor.Shape{2, 4, 3}); err == nil {
		t.Error("InferShape took the wrong shape")
	}
}

// TestTransposeSamplesIsTheIdentityProduct: each sample transposed is,
// bit for bit, its batched product with the identity, x·I along the rows
// (BatchDot(x, I, 1, 1), which MultiHeadAttention used), forward and in
// the gradient of x: every value is a product by 1 and sums of zeros.
func TestTransposeSamplesIsTheIdentityProduct(t *testing.T) {
	const batch, r, c = 3, 7, 5
	rng := rand.New(rand.NewPCG(2, 2))
	xs := f32(randomData(rng, batch*r*c, 1))
	dy := f32(randomData(rng, batch*r*c, 1))
	id := make([]float32, batch*r*r)
	for b := range batch {
		for i := range r {
			id[(b*r+i)*r+i] = 1
		}
	}
	// both returns y and x's gradient given y's, dy.
	both := func(viaProduct bool) (y, dx []float32) {
		g := gorgonia.NewGraph()
		x := gorgonia.NewTensor(g, tensor.Float32, 3, gorgonia.WithShape(batch, r, c), gorgonia.WithName("x"),
			gorgonia.WithValue(tensor.New(tensor.WithShape(batch, r, c), tensor.WithBacking(slices.Clone(xs)))))
		var out *gorgonia.Node
		var err error
		if viaProduct {
			i := gorgonia.NewTensor(g, tensor.Float32, 3, gorgonia.WithShape(batch, r, r), gorgonia.WithName("identity"),
				gorgonia.WithValue(tensor.New(tensor.WithShape(batch, r, r), tensor.WithBacking(slices.Clone(id)))))
			out, err = BatchDot(x, i, 1, 1)
		} else {
			out, err = TransposeSamples(x)
		}
		if err != nil {
			t.Fatal(err)
		}
		w := gorgonia.NewTensor(g, tensor.Float32, 3, gorgonia.WithShape(batch, c, r), gorgonia.WithName("dy"),
			gorgonia.WithValue(tensor.New(tensor.WithShape(batch, c, r), tensor.WithBacking(slices.Clone(dy)))))
		prod, err := Multiply(out, w)
		if err != nil {
			t.Fatal(err)
		}
		cost := gorgonia.Must(gorgonia.Sum(prod))
		if _, err := gorgonia.Grad(cost, x); err != nil {
			t.Fatal(err)
		}
		var yv gorgonia.Value
		gorgonia.Read(out, &yv)
		m := gorgonia.NewTapeMachine(g, gorgonia.BindDualValues(x))
		defer m.Close()
		if err := m.RunAll(); err != nil {
			t.Fatal(err)
		}
		gx, err := x.Grad()
		if err != nil {
			t.Fatal(err)
		}
		return slices.Clone(yv.Data().([]float32)), slices.Clone(gx.Data().([]float32))
	}
	y1, dx1 := both(false)
	y2, dx2 := both(true)
	if !slices.Equal(y1, y2) {
		t.Errorf("transposed %v, product with the identity %v", y1, y2)
	}
	if !slices.Equal(dx1, dx2) {
		t.Errorf("gradients: transposed %v, product with the identity %v", dx1, dx2)
	}
}
