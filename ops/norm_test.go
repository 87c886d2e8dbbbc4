package ops

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func TestGradientsOfNormalizationAndGather(t *testing.T) {
	type build func(g *gorgonia.ExprGraph, rng *rand.Rand) (*gorgonia.Node, []*gorgonia.Node, error)
	const rows, cols = 6, 4
	mse := func(g *gorgonia.ExprGraph, rng *rand.Rand, y *gorgonia.Node) (*gorgonia.Node, error) {
		tn := matrix(g, "target", y.Shape().Clone(), randomData(rng, y.Shape().TotalSize(), 1))
		return Loss(MeanSquaredError, y, tn)
	}
	batchNorm := func(batchStats bool) build {
		return func(g *gorgonia.ExprGraph, rng *rand.Rand) (*gorgonia.Node, []*gorgonia.Node, error) {
			x := matrix(g, "x", tensor.Shape{rows, cols}, randomData(rng, rows*cols, 2))
			gamma := matrix(g, "gamma", tensor.Shape{cols}, randomData(rng, cols, 1))
			beta := matrix(g, "beta", tensor.Shape{cols}, randomData(rng, cols, 1))
			var mean, variance *gorgonia.Node
			var err error
			if batchStats {
				if mean, variance, err = ColumnMoments(x); err != nil {
					return nil, nil, err
				}
			} else {
				mean = matrix(g, "moving_mean", tensor.Shape{cols}, randomData(rng, cols, 1))
				v := randomData(rng, cols, 1)
				for i := range v {
					v[i] = 0.5 + math.Abs(v[i])
				}
				variance = matrix(g, "moving_variance", tensor.Shape{cols}, v)
			}
			y, err := BatchNormalize(x, mean, variance, gamma, beta, NormParams{Epsilon: 1e-3, BatchStats: batchStats}, true)
			if err != nil {
				return nil, nil, err
			}
			cost, err := mse(g, rng, y)
			return cost, []*gorgonia.Node{x, gamma, beta}, err
		}
	}
	layerNorm := func(g *gorgonia.ExprGraph, rng *rand.Rand) (*gorgonia.Node, []*gorgonia.Node, error) {
		x := matrix(g, "x", tensor.Shape{rows, cols}, randomData(rng, rows*cols, 2))
		gamma := matrix(g, "gamma", tensor.Shape{cols}, randomData(rng, cols, 1))
		beta := matrix(g, "beta", tensor.Shape{cols}, randomData(rng, cols, 1))
		y, err := LayerNormalize(x, gamma, beta, 1e-3, true)
		if err != nil {
			return nil, nil, err
		}
		cost, err := mse(g, rng, y)
		return cost, []*gorgonia.Node{x, gamma, beta}, err
	}
	gather := func(g *gorgonia.ExprGraph, rng *rand.Rand) (*gorgonia.Node, []*gorgonia.Node, error) {
		table := matrix(g, "table", tensor.Shape{5, 3}, randomData(rng, 15, 1))
		idx := matrix(g, "indices", tensor.Shape{7}, []float64{4, 0, 2, 2, 4, 1, 4})
		y, err := Gather(table, idx)
		if err != nil {
			return nil, nil, err
		}
		cost, err := mse(g, rng, y)
		return cost, []*gorgonia.Node{table}, err
	}
	tests := []struct {
		name  string
		build build
	}{
		{"batch norm, batch statistics", batchNorm(true)},
		{"batch norm, moving statistics", batchNorm(false)},
		{"layer norm", layerNorm},
		{"gather with repeated indices", gather},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := gorgonia.NewGraph()
			cost, wrt, err := tc.build(g, rand.New(rand.NewPCG(uint64(i), 13)))
			if err != nil {
				t.Fatal(err)
			}
			checkGradients(t, g, cost, wrt...)
		})
	}
}

func TestNormalizationValues(t *testing.T) {
	// Columns normalised with their own statistics have mean 0 and
	// variance var/(var+eps); rows with layer norm likewise.
	rng := rand.New(rand.NewPCG(1, 2))
	const rows, cols, eps = 50, 3, 1e-3
	x := randomData(rng, rows*cols, 3)
	mean, variance := make([]float64, cols), make([]float64, cols)
	normalize(ColumnMean, NormParams{}, rows, cols, [][]float64{x}, mean)
	normalize(ColumnVariance, NormParams{}, rows, cols, [][]float64{x, mean}, variance)
	ones, zeros := []float64{1, 1, 1}, []float64{0, 0, 0}
	y := make([]float64, rows*cols)
	normalize(BatchNorm, NormParams{Epsilon: eps}, rows, cols, [][]float64{x, mean, variance, ones, zeros}, y)
	m2, v2 := make([]float64, cols), make([]float64, cols)
	normalize(ColumnMean, NormParams{}, rows, cols, [][]float64{y}, m2)
	normalize(ColumnVariance, NormParams{}, rows, cols, [][]float64{y, m2}, v2)
	for c := 0; c < cols; c++ {
		if math.Abs(m2[c]) > 1e-12 || math.Abs(v2[c]-variance[c]/(variance[c]+eps)) > 1e-12 {
			t.Errorf("column %d after batch norm: mean %v, variance %v", c, m2[c], v2[c])
		}
	}
	normalize(LayerNorm, NormParams{Epsilon: eps}, rows, cols, [][]float64{x, ones, zeros}, y)
	for r := 0; r < rows; r++ {
		row := y[r*cols : (r+1)*cols]
		if s := row[0] + row[1] + row[2]; math.Abs(s) > 1e-12 {
			t.Fatalf("row %d after layer norm sums to %v", r, s)
		}
	}
}

func TestGatherRejectsBadIndices(t *testing.T) {
	table := []float32{1, 2, 3, 4}
	out := make([]float32, 2)
	for _, v := range []float32{-1, 2, 0.5, float32(math.NaN())} {
		err := GatherForward(2, 2, table, []float32{0, v}[1:], out)
		var ie *IndexError
		if !errors.As(err, &ie) || ie.At != 0 || ie.Rows != 2 {
			t.Errorf("index %v: error %v, want an IndexError at 0 for 2 rows", v, err)
		}
	}
	if err := GatherForward(2, 2, table, []float32{1}, out); err != nil || out[0] != 3 || out[1] != 4 {
		t.Errorf("index 1: %v, %v", out, err)
	}
}

// TestBatchNormGradWithGamma checks the fused gradients against the two
// kinds apart: the input's gradient to the bit, gamma's within float32
// rounding of the same sum (x̂ is rounded before the product there, after
// it in BatchNormGammaGrad), and both to the bit without batch statistics.
func TestBatchNormGradWithGamma(t *testing.T) {
	for _, batchStats := range []bool{true, false} {
		for _, shape := range [][2]int{{300, 16}, {64, 70}, {5, 3}} {
			rows, cols := shape[0], shape[1]
			val := func(n, k int) []float32 {
				v := make([]float32, n)
				for i := range v {
					v[i] = float32((i*k)%97)/40 - 1.1
				}
				return v
			}
			x, dy := val(rows*cols, 7), val(rows*cols, 13)
			mean, variance, gamma := val(cols, 3), val(cols, 5), val(cols, 11)
			for i := range variance {
				variance[i] = variance[i]*variance[i] + 0.1
			}
			p := NormParams{Epsilon: 1e-3, BatchStats: batchStats}
			in := [][]float32{x, mean, variance, gamma, dy}
			wantDx, wantG := make([]float32, rows*cols), make([]float32, cols)
			NormForward(BatchNormGrad, p, rows, cols, in, wantDx)
			NormForward(BatchNormGammaGrad, p, rows, cols, [][]float32{x, mean, variance, dy}, wantG)
			dx, dg := make([]float32, rows*cols), make([]float32, cols)
			BatchNormGradWithGamma(p, rows, cols, in, dx, dg)
			for i := range dx {
				if math.Float32bits(dx[i]) != math.Float32bits(wantDx[i]) {
					t.Fatalf("batch stats %v, %d×%d: dx[%d] = %v, want %v", batchStats, rows, cols, i, dx[i], wantDx[i])
				}
			}
			for c := range dg {
				tol := 0.0
				if batchStats {
					tol = 1e-6 * (1 + math.Abs(float64(wantG[c])))
				}
				if d := math.Abs(float64(dg[c] - wantG[c])); d > tol {
					t.Fatalf("batch stats %v, %d×%d: dgamma[%d] = %v, want %v", batchStats, rows, cols, c, dg[c], wantG[c])
				}
			}
		}
	}
}

// TestBatchNormGradWithBias checks the three gradients in one step
// against BatchNormGradWithGamma, then SumRows of its dx into a cleared
// gradient (the steps a plan runs without the fusion), all to the bit: on
// one block of sumRowsBlock rows and on several, a partial last one
// included, with and without batch statistics, on one core and two, on
// columns the AVX-512 kernels take whole and in part, with a dbias that
// starts dirty (the step overwrites it).
func TestBatchNormGradWithBias(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, batchStats := range []bool{true, false} {
		for _, shape := range [][2]int{{300, 16}, {sumRowsBlock, 20}, {3*sumRowsBlock + 37, 16}, {2000, 64}, {5, 3}} {
			rows, cols := shape[0], shape[1]
			in := normInputs[float32](rng, BatchNormGrad, rows, cols)
			p := NormParams{Epsilon: 1e-3, BatchStats: batchStats}
			wantDx, wantG, wantB := make([]float32, rows*cols), make([]float32, cols), make([]float32, cols)
			BatchNormGradWithGamma(p, rows, cols, in, wantDx, wantG)
			SumRows(rows, cols, wantDx, wantB)
			for _, procs := range []int{1, 2} {
				prev := runtime.GOMAXPROCS(procs)
				dx, dg, db := make([]float32, rows*cols), make([]float32, cols), make([]float32, cols)
				for c := range db {
					db[c] = 7
				}
				BatchNormGradWithBias(p, rows, cols, in, dx, dg, db)
				runtime.GOMAXPROCS(prev)
				name := fmt.Sprintf("batch stats %v, %d×%d, GOMAXPROCS %d", batchStats, rows, cols, procs)
				for _, g := range []struct {
					what      string
					got, want []float32
				}{{"dx", dx, wantDx}, {"dgamma", dg, wantG}, {"dbias", db, wantB}} {
					for i := range g.want {
						if math.Float32bits(g.got[i]) != math.Float32bits(g.want[i]) {
							t.Fatalf("%s: %s[%d] = %v, want %v", name, g.what, i, g.got[i], g.want[i])
						}
					}
				}
			}
		}
	}
}

// TestBatchNormReLU checks the normalization with its ReLU in one pass
// against the normalization, then the ReLU activation, bit for bit, on
// widths the AVX-512 kernel takes whole, in part and not at all, with NaN
// and values that normalize to 0 and to -0 among the inputs.
func TestBatchNormReLU(t *testing.T) {
	for _, cols := range []int{5, 16, 24, 29} {
		const rows = 70
		rng := rand.New(rand.NewPCG(uint64(cols), 1))
		x := make([]float32, rows*cols)
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		x[3], x[cols+1] = float32(math.NaN()), 0
		in := append([][]float32{x}, normStats(rng, cols)...)
		p := NormParams{Epsilon: 1e-3, BatchStats: true}
		want := make([]float32, len(x))
		NormForward(BatchNorm, p, rows, cols, in, want)
		ActivationForward(ReLU, 0, cols, want, want)
		got := make([]float32, len(x))
		BatchNormReLU(p, rows, cols, in, got)
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%d columns: value %d = %v, want %v", cols, i, got[i], want[i])
			}
		}
	}
}

// normStats draws a BatchNorm's mean, variance, gamma and beta for cols
// columns, column 1's normalizing x = 0 to -0.
func normStats(rng *rand.Rand, cols int) [][]float32 {
	mean, variance, gamma, beta := make([]float32, cols), make([]float32, cols), make([]float32, cols), make([]float32, cols)
	for c := range cols {
		mean[c], variance[c] = float32(rng.NormFloat64()*0.1), float32(0.5+rng.Float64())
		gamma[c], beta[c] = float32(rng.NormFloat64()), float32(rng.NormFloat64()*0.2)
	}
	mean[1], beta[1], gamma[1] = 0, 0, -1 // x = 0 normalizes to -0
	return [][]float32{mean, variance, gamma, beta}
}

// TestBatchNormAdd checks the normalization with a residual connection's
// add (and its ReLU) in one pass against BatchNorm, then the elementwise
// Binary add of the shortcut and the normalized values (then the ReLU:
// BinaryReLUForward), bit for bit: on widths the AVX-512 kernel takes
// whole, in part and not at all, on one block of rows and on several with
// a partial last one, on one core and two, with NaN, and sums of -0 and
// +0, among the values.
func TestBatchNormAdd(t *testing.T) {
	for _, shape := range [][2]int{{70, 5}, {70, 16}, {3*normAddValues/16 + 5, 16}, {2000, 29}, {600, 64}} {
		rows, cols := shape[0], shape[1]
		rng := rand.New(rand.NewPCG(uint64(rows), uint64(cols)))
		x, shortcut := make([]float32, rows*cols), make([]float32, rows*cols)
		for i := range x {
			x[i], shortcut[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
		}
		x[3], x[cols+1], shortcut[cols+1] = float32(math.NaN()), 0, float32(math.Copysign(0, -1))
		shortcut[2*cols] = float32(math.NaN())
		in := append([][]float32{x}, normStats(rng, cols)...)
		p := NormParams{Epsilon: 1e-3, BatchStats: true}
		normalized := make([]float32, len(x))
		NormForward(BatchNorm, p, rows, cols, in, normalized)
		add := BinaryParams{Kind: BinaryAdd, A: []int{rows, cols}, B: []int{rows, cols}}
		for _, relu := range []bool{false, true} {
			want := make([]float32, len(x))
			if relu {
				BinaryReLUForward(add, shortcut, normalized, want)
			} else {
				BinaryForward(add, shortcut, normalized, want)
			}
			for _, procs := range []int{1, 2} {
				prev := runtime.GOMAXPROCS(procs)
				got := make([]float32, len(x))
				BatchNormAdd(p, rows, cols, in, shortcut, got, relu)
				runtime.GOMAXPROCS(prev)
				for i := range want {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%d×%d, relu %v, GOMAXPROCS %d: value %d = %v, want %v", rows, cols, relu, procs, i, got[i], want[i])
					}
				}
			}
		}
	}
}
