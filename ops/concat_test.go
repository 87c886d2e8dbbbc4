package ops

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func TestConcatenateGradients(t *testing.T) {
	cases := []struct {
		axis   int
		shapes [][]int
	}{
		{1, [][]int{{3, 2}, {3, 4}}},
		{-1, [][]int{{3, 2}, {3, 1}, {3, 3}}},
		{1, [][]int{{2, 1, 3}, {2, 3, 3}}},
		{2, [][]int{{2, 3, 1}, {2, 3, 2}, {2, 3, 2}}},
		{-2, [][]int{{2, 2, 2, 3}, {2, 2, 1, 3}}},
	}
	for ci, c := range cases {
		t.Run(fmt.Sprintf("axis %d of %v", c.axis, c.shapes), func(t *testing.T) {
			g := gorgonia.NewGraph()
			rng := rand.New(rand.NewPCG(uint64(ci), 3))
			xs := make([]*gorgonia.Node, len(c.shapes))
			for i, s := range c.shapes {
				xs[i] = matrix(g, fmt.Sprintf("x%d", i), tensor.Shape(s), randomData(rng, tensor.Shape(s).TotalSize(), 1))
			}
			y, err := Concatenate(c.axis, xs...)
			if err != nil {
				t.Fatal(err)
			}
			axis := c.axis
			if axis < 0 {
				axis += len(c.shapes[0])
			}
			want := slices.Clone(c.shapes[0])
			want[axis] = 0
			for _, s := range c.shapes {
				want[axis] += s[axis]
			}
			if !slices.Equal(y.Shape(), want) {
				t.Fatalf("shape %v, want %v", y.Shape(), want)
			}
			checkGradients(t, g, flatCost(t, g, rng, y), xs...)
		})
	}
}

// TestConcatenateValues: values joined by hand, and the slices back.
func TestConcatenateValues(t *testing.T) {
	// (2, 2, 1) and (2, 2, 2) along the last axis.
	p := ConcatParams{Axis: 2, Shapes: [][]int{{2, 2, 1}, {2, 2, 2}}}
	a, b := []float64{1, 2, 3, 4}, []float64{10, 11, 20, 21, 30, 31, 40, 41}
	y := run(t, concatOp{p: p}, t64(a, 2, 2, 1), t64(b, 2, 2, 2))
	sameFloats(t, "concatenate along axis 2", y, []float64{1, 10, 11, 2, 20, 21, 3, 30, 31, 4, 40, 41})
	for i, want := range [][]float64{a, b} {
		p.Piece = i
		sameFloats(t, fmt.Sprintf("slice %d", i), run(t, concatGradOp{p: p}, t64(y, 2, 2, 3)), want)
	}
	// The same along axis 1: whole rows of each.
	p = ConcatParams{Axis: 1, Shapes: [][]int{{2, 1, 2}, {2, 2, 2}}}
	sameFloats(t, "concatenate along axis 1", run(t, concatOp{p: p}, t64([]float64{1, 2, 3, 4}, 2, 1, 2), t64(b, 2, 2, 2)),
		[]float64{1, 2, 10, 11, 20, 21, 3, 4, 30, 31, 40, 41})
	if p.Rows() != 2 || p.Cols(0) != 2 || p.Cols(1) != 4 || p.Offset(1) != 2 || p.OutCols() != 6 {
		t.Errorf("layout of %+v: rows %d, cols %d and %d, offset %d, out %d", p, p.Rows(), p.Cols(0), p.Cols(1), p.Offset(1), p.OutCols())
	}
}

func TestConcatenateRefusesBadInputs(t *testing.T) {
	g := gorgonia.NewGraph()
	mk := func(shape ...int) *gorgonia.Node {
		return gorgonia.NewTensor(g, tensor.Float32, len(shape), gorgonia.WithShape(shape...))
	}
	cases := []struct {
		axis int
		xs   []*gorgonia.Node
	}{
		{0, []*gorgonia.Node{mk(2, 3), mk(2, 3)}},    // the batch axis
		{-2, []*gorgonia.Node{mk(2, 3), mk(2, 3)}},   // the batch axis, from the end
		{2, []*gorgonia.Node{mk(2, 3), mk(2, 3)}},    // no such axis
		{1, []*gorgonia.Node{mk(2, 3), mk(3, 3)}},    // batch sizes differ
		{1, []*gorgonia.Node{mk(2, 3, 4), mk(2, 3)}}, // ranks differ
		{2, []*gorgonia.Node{mk(2, 3, 4), mk(2, 2, 4)}},
		{1, nil},
	}
	for _, c := range cases {
		if _, err := Concatenate(c.axis, c.xs...); err == nil {
			t.Errorf("Concatenate along %d of %d inputs was accepted", c.axis, len(c.xs))
		}
	}
	x := mk(2, 3)
	if y, err := Concatenate(-1, x); err != nil || y != x {
		t.Errorf("Concatenate of one input: %v, %v", y, err)
	}
	p := ConcatParams{Axis: 1, Shapes: [][]int{{2, 3}, {2, 1}}, Piece: 1}
	info, ok := Inspect(concatGradOp{p: p})
	if !ok || info.Kind != OpConcatGrad || info.Concat.Piece != 1 || !slices.Equal(info.Concat.Shapes[1], []int{2, 1}) {
		t.Errorf("Inspect: %+v, %v", info, ok)
	}
	info.Concat.Shapes[0][0] = 99
	if p.Shapes[0][0] != 2 {
		t.Error("Info shares the op's shapes")
	}
}

// ColumnsOf takes each part of rows of parts side by side, and refuses
// parts that do not make the rows.
func TestColumnsOf(t *testing.T) {
	g := gorgonia.NewGraph()
	x := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(2, 5), gorgonia.WithName("x"))
	rows := t64([]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 2, 5)
	for i, want := range [][]float64{{1, 2, 6, 7}, {3, 4, 5, 8, 9, 10}} {
		n, err := ColumnsOf(x, []int{2, 3}, i)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal([]int(n.Shape()), []int{2, []int{2, 3}[i]}) {
			t.Errorf("part %d has shape %v", i, n.Shape())
		}
		sameFloats(t, fmt.Sprintf("part %d", i), run(t, n.Op(), rows), want)
	}
	for _, cols := range [][]int{{2, 2}, {5, 0}, {6}} {
		if _, err := ColumnsOf(x, cols, 0); err == nil {
			t.Errorf("ColumnsOf(x of 5 columns, %v) made a node", cols)
		}
	}
}
