package ops

import (
	"fmt"
	"hash"
	"math"
	"runtime"
	"sync"

	"github.com/chewxy/hm"
	"github.com/gokeras/gokeras/internal/kernels/avx2"
	"github.com/gokeras/gokeras/internal/kernels/avx512"
	mat "github.com/gokeras/gokeras/internal/kernels/matrix"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// NormKind is one of the normalization ops, all on matrices x of rows ×
// cols: batch normalization works per column (a channel, over every row:
// the batch and, for images, the pixels), layer normalization per row.
type NormKind int

const (
	// ColumnMean: (x) → the mean of each column, (cols). Not differentiated.
	ColumnMean NormKind = iota + 1
	// ColumnVariance: (x, mean) → the variance of each column about mean,
	// divided by rows (biased), (cols). Not differentiated.
	ColumnVariance
	// BatchNorm: (x, mean, variance, gamma, beta) → gamma·(x-mean)/√(variance+ε) + beta,
	// per column.
	BatchNorm
	// BatchNormGrad: (x, mean, variance, gamma, dy) → dx. With batch
	// statistics (mean and variance computed from x), the gradient
	// includes their dependence on x.
	BatchNormGrad
	// BatchNormGammaGrad: (x, mean, variance, dy) → dgamma, (cols).
	BatchNormGammaGrad
	// LayerNorm: (x, gamma, beta) → gamma·(x-mean)/√(variance+ε) + beta,
	// the mean and variance of each row.
	LayerNorm
	// LayerNormGrad: (x, gamma, dy) → dx.
	LayerNormGrad
	// LayerNormGammaGrad: (x, dy) → dgamma, (cols).
	LayerNormGammaGrad
)

var normNames = [...]string{ColumnMean: "ColumnMean", ColumnVariance: "ColumnVariance", BatchNorm: "BatchNorm",
	BatchNormGrad: "BatchNormGrad", BatchNormGammaGrad: "BatchNormGammaGrad", LayerNorm: "LayerNorm",
	LayerNormGrad: "LayerNormGrad", LayerNormGammaGrad: "LayerNormGammaGrad"}

func (k NormKind) String() string {
	if k <= 0 || int(k) >= len(normNames) {
		return fmt.Sprintf("NormKind(%d)", int(k))
	}
	return normNames[k]
}

// arity is the number of inputs of the kind.
func (k NormKind) arity() int {
	switch k {
	case ColumnMean:
		return 1
	case ColumnVariance, LayerNormGammaGrad:
		return 2
	case LayerNorm, LayerNormGrad:
		return 3
	case BatchNormGammaGrad:
		return 4
	}
	return 5
}

// perColumn says whether the kind's output is one value per column.
func (k NormKind) perColumn() bool {
	return k == ColumnMean || k == ColumnVariance || k == BatchNormGammaGrad || k == LayerNormGammaGrad
}

// NormParams are the parameters of a normalization op: its epsilon, and
// for batch normalization whether the mean and variance are the batch's
// own (training) rather than moving averages (inference).
type NormParams struct {
	Epsilon    float64
	BatchStats bool
}

// ColumnMoments adds the nodes of the mean and the biased variance of
// each column of x. No gradient flows through them: BatchNormalize's
// gradient, given BatchStats, accounts for them.
func ColumnMoments(x *gorgonia.Node) (mean, variance *gorgonia.Node, err error) {
	if x.Dims() != 2 {
		return nil, nil, fmt.Errorf("column moments: want a matrix, got shape %v", x.Shape())
	}
	if mean, err = gorgonia.ApplyOp(normOp{kind: ColumnMean}, x); err != nil {
		return nil, nil, err
	}
	variance, err = gorgonia.ApplyOp(normOp{kind: ColumnVariance}, x, mean)
	return mean, variance, err
}

// BatchNormalize adds gamma·(x-mean)/√(variance+ε) + beta, per column of
// the matrix x. inputGrad says whether gradients must flow into x.
func BatchNormalize(x, mean, variance, gamma, beta *gorgonia.Node, p NormParams, inputGrad bool) (*gorgonia.Node, error) {
	if x.Dims() != 2 {
		return nil, fmt.Errorf("batch normalization: want a matrix, got shape %v", x.Shape())
	}
	cols := x.Shape()[1]
	for _, v := range []*gorgonia.Node{mean, variance, gamma, beta} {
		if v.Dims() != 1 || v.Shape()[0] != cols {
			return nil, fmt.Errorf("batch normalization: %q has shape %v, want (%d)", v.Name(), v.Shape(), cols)
		}
	}
	return gorgonia.ApplyOp(normOp{kind: BatchNorm, p: p, inputGrad: inputGrad}, x, mean, variance, gamma, beta)
}

// LayerNormalize adds gamma·(x-mean)/√(variance+ε) + beta with the mean
// and variance of each row of the matrix x.
func LayerNormalize(x, gamma, beta *gorgonia.Node, epsilon float64, inputGrad bool) (*gorgonia.Node, error) {
	if x.Dims() != 2 {
		return nil, fmt.Errorf("layer normalization: want a matrix, got shape %v", x.Shape())
	}
	cols := x.Shape()[1]
	for _, v := range []*gorgonia.Node{gamma, beta} {
		if v.Dims() != 1 || v.Shape()[0] != cols {
			return nil, fmt.Errorf("layer normalization: %q has shape %v, want (%d)", v.Name(), v.Shape(), cols)
		}
	}
	return gorgonia.ApplyOp(normOp{kind: LayerNorm, p: NormParams{Epsilon: epsilon}, inputGrad: inputGrad}, x, gamma, beta)
}

type normOp struct {
	common
	kind      NormKind
	p         NormParams
	inputGrad bool
}

func (op normOp) String() string {
	return fmt.Sprintf("%v{eps=%v, batchStats=%t, inputGrad=%t}", op.kind, op.p.Epsilon, op.p.BatchStats, op.inputGrad)
}
func (op normOp) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op normOp) Hashcode() uint32      { return hashOf(op) }
func (op normOp) Arity() int            { return op.kind.arity() }

func (op normOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	m, v := gorgonia.TensorType{Dims: 2, Of: a}, gorgonia.TensorType{Dims: 1, Of: a}
	var in []hm.Type
	switch op.kind {
	case ColumnMean:
		in = []hm.Type{m}
	case ColumnVariance:
		in = []hm.Type{m, v}
	case BatchNorm, BatchNormGrad:
		last := hm.Type(v)
		if op.kind == BatchNormGrad {
			last = m
		}
		in = []hm.Type{m, v, v, v, last}
	case BatchNormGammaGrad:
		in = []hm.Type{m, v, v, m}
	case LayerNorm:
		in = []hm.Type{m, v, v}
	case LayerNormGrad:
		in = []hm.Type{m, v, m}
	case LayerNormGammaGrad:
		in = []hm.Type{m, m}
	}
	out := hm.Type(m)
	if op.kind.perColumn() {
		out = v
	}
	return hm.NewFnType(append(in, out)...)
}

func (op normOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapeOf(op, in, 0)
	if err != nil {
		return nil, err
	}
	if len(s) != 2 {
		return nil, fmt.Errorf("%v: input has shape %v, want a matrix", op, s)
	}
	if op.kind.perColumn() {
		return tensor.Shape{s[1]}, nil
	}
	return s.Clone(), nil
}

func (op normOp) Do(args ...gorgonia.Value) (gorgonia.Value, error) {
	ts := make([]*tensor.Dense, op.Arity())
	for i := range ts {
		t, err := denseArg(op, args, i)
		if err != nil {
			return nil, err
		}
		ts[i] = t
	}
	if err := sameDtype(op, ts...); err != nil {
		return nil, err
	}
	rows, cols := rowsCols(ts[0].Shape())
	shape := []int{rows, cols}
	if op.kind.perColumn() {
		shape = []int{cols}
	}
	out := newLike(ts[0].Dtype(), shape...)
	switch od := out.Data().(type) {
	case []float32:
		normalize(op.kind, op.p, rows, cols, datas[float32](ts), od)
	case []float64:
		normalize(op.kind, op.p, rows, cols, datas[float64](ts), od)
	}
	return out, nil
}

func datas[T float](ts []*tensor.Dense) [][]T {
	out := make([][]T, len(ts))
	for i, t := range ts {
		out[i] = t.Data().([]T)
	}
	return out
}

func (op normOp) DiffWRT(inputs int) []bool {
	d := make([]bool, inputs)
	switch op.kind {
	case BatchNorm:
		d[0], d[3], d[4] = op.inputGrad, true, true
	case LayerNorm:
		d[0], d[1], d[2] = op.inputGrad, true, true
	}
	return d
}

func (op normOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	grads := make(gorgonia.Nodes, len(inputs))
	var err error
	wrap := func(err error) error { return fmt.Errorf("%v: gradient: %w", op, err) }
	switch op.kind {
	case BatchNorm:
		x, mean, variance, gamma := inputs[0], inputs[1], inputs[2], inputs[3]
		if op.inputGrad {
			if grads[0], err = gorgonia.ApplyOp(normOp{kind: BatchNormGrad, p: op.p}, x, mean, variance, gamma, grad); err != nil {
				return nil, wrap(err)
			}
		}
		if grads[3], err = gorgonia.ApplyOp(normOp{kind: BatchNormGammaGrad, p: op.p}, x, mean, variance, grad); err != nil {
			return nil, wrap(err)
		}
		if grads[4], err = gorgonia.ApplyOp(sumRowsOp{}, grad); err != nil {
			return nil, wrap(err)
		}
	case LayerNorm:
		x, gamma := inputs[0], inputs[1]
		if op.inputGrad {
			if grads[0], err = gorgonia.ApplyOp(normOp{kind: LayerNormGrad, p: op.p}, x, gamma, grad); err != nil {
				return nil, wrap(err)
			}
		}
		if grads[1], err = gorgonia.ApplyOp(normOp{kind: LayerNormGammaGrad, p: op.p}, x, grad); err != nil {
			return nil, wrap(err)
		}
		if grads[2], err = gorgonia.ApplyOp(sumRowsOp{}, grad); err != nil {
			return nil, wrap(err)
		}
	default:
		return nil, fmt.Errorf("%v has no gradient", op)
	}
	return grads, nil
}

// NormForward computes a normalization op of the given kind on rows×cols
// matrices, its inputs in the order the kind lists them, into out, as the
// op's Do does.
func NormForward(kind NormKind, p NormParams, rows, cols int, in [][]float32, out []float32) {
	normalize(kind, p, rows, cols, in, out)
}

// ColumnMeanVariance computes NormForward's ColumnMean of x into mean and
// its ColumnVariance about that mean into variance, with the bits of the
// two one after the other, reading x from memory once: where a plan
// computes both in one step (plan.Capabilities).
func ColumnMeanVariance(rows, cols int, x, mean, variance []float32) {
	parts := columnParts(rows, cols, 2, func(lo, hi, r0, r1 int, sum [][]float64) {
		partMoments(x, rows, cols, lo, hi, r0, r1, sum[0], sum[1])
	})
	p, k := *parts, rowParts(rows, cols)
	for c := range mean[:cols] {
		mean[c] = float32(partTotal(p, k, 2, cols, 0, c) / float64(rows))
	}
	variances(rows, cols, p, mean, variance)
	normScratchPoolT[float64]().Put(parts)
}

// partSums adds the sums of x's columns [lo, hi) over the rows [r0, r1),
// each in sumChains chains (on the AVX-512 kernels where it can), to sum.
func partSums[T float](x []T, rows, cols, lo, hi, r0, r1 int, sum []float64) {
	done := 0
	if xf, ok := asFloat32(x); ok {
		done = avx512.ColumnSums(xf[r0*cols+lo:], cols, r1-r0, hi-lo, sum)
	}
	if done == hi-lo {
		return
	}
	var chains [sumChains][normBlock]float64
	for r := r0; r < r1; r++ {
		part := &chains[(r-r0)%sumChains]
		for j, v := range x[r*cols+lo+done : r*cols+hi] {
			part[done+j] += float64(v)
		}
	}
	addChains(&chains, sum, done)
}

// partMoments adds, for x's columns [lo, hi) over the rows [r0, r1), the
// sums to sum and the sums of squares about the rows' own mean
// (sum/(r1-r0)) to squares, each in sumChains chains: the second pass
// reads the rows from the caches.
func partMoments[T float](x []T, rows, cols, lo, hi, r0, r1 int, sum, squares []float64) {
	partSums(x, rows, cols, lo, hi, r0, r1, sum)
	var mc [normBlock]float64
	m := mc[:hi-lo]
	for j := range m {
		m[j] = sum[j] / float64(r1-r0)
	}
	done := 0
	if xf, ok := asFloat32(x); ok {
		done = avx512.ColumnSquares(xf[r0*cols+lo:], cols, r1-r0, hi-lo, m, squares)
	}
	if done == hi-lo {
		return
	}
	var chains [sumChains][normBlock]float64
	for r := r0; r < r1; r++ {
		part := &chains[(r-r0)%sumChains]
		for j, v := range x[r*cols+lo+done : r*cols+hi] {
			d := float64(v) - m[done+j]
			part[done+j] += d * d
		}
	}
	addChains(&chains, squares, done)
}

// variances writes each column's variance about mean into out from the
// parts' sums and sums of squares about their own means (partMoments, as
// columnParts lays them out, 2 sums a part): the squares about mean are
// each part's squares plus n·d·d, d its mean less mean, n its rows; the
// parts' added in order, divided by the rows. (Σ(x-a)² = Σ(x-m)² +
// n·(m-a)² for the part's mean m: one pass over each part from memory,
// the squares about its mean from the caches.)
func variances[T float](rows, cols int, parts []float64, mean, out []T) {
	k := rowParts(rows, cols)
	for c := range out[:cols] {
		a := float64(mean[c])
		var m2 float64
		for part := 0; part < k; part++ {
			r0, r1 := partRows(rows, k, part)
			n := float64(r1 - r0)
			d := parts[2*part*cols+c]/n - a
			m2 += parts[(2*part+1)*cols+c] + n*d*d // from +0: the first part's term exactly
		}
		out[c] = T(m2 / float64(rows))
	}
}

// sumChains is the number of partial sums a column's sum over the rows
// keeps for the batch statistics and their gradient's sums: within a part
// of the rows (rowParts), the part's row r0+r goes into chain r mod
// sumChains, in order, and the part's sum is (c0+c1)+(c2+c3).
// Chains of additions that do not wait on each other keep the cores busy
// where a few columns' sums (16 channels) would wait on each addition; the
// AVX-512 kernels (package avx512's ColumnSums, ColumnSquares,
// ColumnGradSums) sum the same way, so either gives the same bits.
const sumChains = 4

// addChains adds each column's chains, (c0+c1)+(c2+c3), to sum, from
// column from on.
func addChains(chains *[sumChains][normBlock]float64, sum []float64, from int) {
	for j := from; j < len(sum); j++ {
		sum[j] += (chains[0][j] + chains[1][j]) + (chains[2][j] + chains[3][j])
	}
}

// normalize computes every NormKind; sums are kept in float64. Every
// column's sums run over the rows in an order fixed by the shape (parts of
// rows, rowParts, each in sumChains chains), so splitting the work over
// the cores (columnSums) or the rows of an elementwise pass (parallel)
// gives the same bits as one goroutine; per-column constants such as
// 1/√(variance+ε) are computed once, by the same expression, so the
// results are those of the per-value code before (refNormalize in
// norm_ref_test.go), bit for bit. Layer normalization sums each row in
// lanes (rowLanes) and the gradient of gamma in blocks of rows
// (gammaRowBlock), the same on any number of cores.
func normalize[T float](kind NormKind, p NormParams, rows, cols int, in [][]T, out []T) {
	x := in[0]
	n := float64(rows)
	switch kind {
	case ColumnMean:
		sums := columnSums(rows, cols, 1, func(lo, hi, r0, r1 int, sum [][]float64) {
			partSums(x, rows, cols, lo, hi, r0, r1, sum[0])
		})
		for c, v := range (*sums)[:cols] {
			out[c] = T(v / n)
		}
		normScratchPoolT[float64]().Put(sums)
	case ColumnVariance:
		parts := columnParts(rows, cols, 2, func(lo, hi, r0, r1 int, sum [][]float64) {
			partMoments(x, rows, cols, lo, hi, r0, r1, sum[0], sum[1])
		})
		variances(rows, cols, *parts, in[1], out)
		normScratchPoolT[float64]().Put(parts)
	case BatchNorm:
		batchNorm(p, rows, cols, in, out, false)
	case BatchNormGrad:
		batchNormGrad(p, rows, cols, in, out, nil, nil)
	case BatchNormGammaGrad:
		mean, variance, dy := in[1], in[2], in[3]
		sums := columnSums(rows, cols, 1, func(lo, hi, r0, r1 int, sum [][]float64) {
			var mcs, rss [normBlock]float64
			m, rs := mcs[:hi-lo], rss[:hi-lo]
			for j := range m {
				m[j], rs[j] = float64(mean[lo+j]), rstdOf(variance[lo+j], p.Epsilon)
			}
			done := 0
			if xf, ok := asFloat32(x); ok {
				done = avx512.ColumnGammaGrad(xf[r0*cols+lo:], any(dy).([]float32)[r0*cols+lo:], cols, r1-r0, hi-lo, m, rs, sum[0])
			}
			for r := r0; r < r1 && done < hi-lo; r++ {
				xs := x[r*cols+lo : r*cols+hi]
				for j := done; j < hi-lo; j++ {
					sum[0][j] += float64(float64(dy[r*cols+lo+j]) * (float64(xs[j]) - m[j]) * rs[j]) // rounded before the sum, as the kernel: no fused multiply-add
				}
			}
		})
		for c, v := range (*sums)[:cols] {
			out[c] = T(v)
		}
		normScratchPoolT[float64]().Put(sums)
	case LayerNorm, LayerNormGrad, LayerNormGammaGrad:
		layerNorm(kind, p.Epsilon, rows, cols, in, out)
	}
}

// batchNorm is normalize's BatchNorm, into out, then with relu the ReLU
// of each value (as the ReLU activation: the value where it is above 0,
// else 0), the rows split over the cores.
func batchNorm[T float](p NormParams, rows, cols int, in [][]T, out []T, relu bool) {
	scale, shift, buf := scaleShift(p, cols, in)
	defer normScratchPoolT[T]().Put(buf)
	parallel(rows, cols, func(lo, hi int) { scaleShiftRows(in[0], out, scale, shift, cols, lo, hi, relu) })
}

// scaleShift returns BatchNorm's per-column factors, x·scale + shift, for
// in's mean, variance, gamma and beta (in[1:5]), in a scratch slice to put
// back into normScratchPoolT[T]().
func scaleShift[T float](p NormParams, cols int, in [][]T) (scale, shift []T, buf *[]T) {
	mean, variance, gamma, beta := in[1], in[2], in[3], in[4]
	buf = normScratchT[T](2 * cols)
	scale, shift = (*buf)[:cols], (*buf)[cols:2*cols]
	for c := range scale {
		s := float64(gamma[c]) * rstdOf(variance[c], p.Epsilon)
		scale[c], shift[c] = T(s), T(float64(beta[c])-s*float64(mean[c]))
	}
	return scale, shift, buf
}

// scaleShiftRows writes x·scale + shift into out for the rows [lo, hi),
// then with relu the ReLU of each value.
func scaleShiftRows[T float](x, out, scale, shift []T, cols, lo, hi int, relu bool) {
	done := 0
	if xf, ok := asFloat32(x); ok {
		done = avx512.ScaleShiftRows(xf[lo*cols:], any(out).([]float32)[lo*cols:], cols, hi-lo, cols,
			any(scale).([]float32), any(shift).([]float32), relu)
	}
	for r := lo; r < hi && done < cols; r++ {
		o := out[r*cols : (r+1)*cols]
		for c := done; c < cols; c++ {
			v := T(x[r*cols+c]*scale[c]) + shift[c] // rounded after each operation, as the kernel
			if relu && !(v > 0) {
				v = 0
			}
			o[c] = v
		}
	}
}

// BatchNormReLU computes NormForward's BatchNorm (in holds x, mean,
// variance, gamma and beta) followed by the ReLU activation, in one pass
// over x, into out: where a plan folds a ReLU into the normalization
// before it (plan.Capabilities).
func BatchNormReLU(p NormParams, rows, cols int, in [][]float32, out []float32) {
	batchNorm(p, rows, cols, in, out, true)
}

// BatchNormAdd computes NormForward's BatchNorm (in holds x, mean,
// variance, gamma and beta) plus addend (rows×cols values), then with relu
// the ReLU activation, into out: the values of BatchNorm, then
// BinaryForward's elementwise add, then the ReLU (BinaryReLUForward), a
// block of normAddValues values at a time, each normalized, added to and
// masked in the caches: where a plan folds a residual connection's add
// into the normalization before it (plan.Capabilities), so that the
// normalized values never go to memory.
func BatchNormAdd(p NormParams, rows, cols int, in [][]float32, addend, out []float32, relu bool) {
	scale, shift, buf := scaleShift(p, cols, in)
	defer normScratchPoolT[float32]().Put(buf)
	step := max(1, normAddValues/cols)
	blocks := (rows + step - 1) / step
	parallel(blocks, step*cols, func(lo, hi int) {
		for b := lo; b < hi; b++ {
			r0, r1 := b*step, min(rows, (b+1)*step)
			scaleShiftRows(in[0], out, scale, shift, cols, r0, r1, false)
			o := out[r0*cols : r1*cols]
			avx2.Add(o, o, addend[r0*cols:r1*cols]) // as AddValues
			if relu {
				maskPositive(o, o, o)
			}
		}
	})
}

// normAddValues is how many values BatchNormAdd normalizes, then adds to,
// at a time: 32 KiB of float32s, which stay in the first-level cache.
const normAddValues = 1 << 13

// batchNormGrad is normalize's BatchNormGrad, into out; with dgamma, also
// the gradient of gamma from the same sums: Σ dy·x̂ over the rows, with
// batch statistics (BatchNormGammaGrad's sum, x̂ rounded first as here:
// dy·((x-m)·r) where that kind sums (dy·(x-m))·r); with dbias, also the
// sums of out's columns added to dbias, as sumRows adds them, each block
// of rows summed as soon as it is written.
func batchNormGrad[T float](p NormParams, rows, cols int, in [][]T, out, dgamma, dbias []T) {
	x := in[0]
	n := float64(rows)
	mean, variance, gamma, dy := in[1], in[2], in[3], in[4]
	// dx = γ·r·(dy - [Σdy + x̂·Σ(dy·x̂)]/n) with batch statistics,
	// γ·r·dy with fixed ones.
	buf := normScratchT[float64](5 * cols)
	defer normScratchPoolT[float64]().Put(buf)
	s := *buf
	rs, mc, gr, sumDy, sumDyXhat := s[:cols], s[cols:2*cols], s[2*cols:3*cols], s[3*cols:4*cols], s[4*cols:5*cols]
	for c := range rs {
		rs[c] = rstdOf(variance[c], p.Epsilon)
		mc[c] = float64(mean[c])
		gr[c] = float64(gamma[c]) * rs[c]
	}
	if p.BatchStats {
		sums := columnSums(rows, cols, 2, func(lo, hi, r0, r1 int, sum [][]float64) {
			m, r := mc[lo:hi], rs[lo:hi]
			done := 0
			if xf, ok := asFloat32(x); ok {
				done = avx512.ColumnGradSums(xf[r0*cols+lo:], any(dy).([]float32)[r0*cols+lo:], cols, r1-r0, hi-lo, m, r, sum[0], sum[1])
			}
			if done == hi-lo {
				return
			}
			var dyChains, dyxChains [sumChains][normBlock]float64
			for row := r0; row < r1; row++ {
				xs := x[row*cols+lo : row*cols+hi]
				pd, pdx := &dyChains[(row-r0)%sumChains], &dyxChains[(row-r0)%sumChains]
				for j := done; j < hi-lo; j++ {
					g := dy[row*cols+lo+j]
					xhat := (float64(xs[j]) - m[j]) * r[j]
					pd[j] += float64(g)
					pdx[j] += float64(float64(g) * xhat) // rounded before the sum, as the kernel
				}
			}
			addChains(&dyChains, sum[0], done)
			addChains(&dyxChains, sum[1], done)
		})
		copy(sumDy, (*sums)[:cols])
		copy(sumDyXhat, (*sums)[cols:2*cols])
		normScratchPoolT[float64]().Put(sums)
		for c := range dgamma {
			dgamma[c] = T(sumDyXhat[c])
		}
	}
	k := avx512.NormGrad{Mean: mc, Rstd: rs, GammaRstd: gr, SumDy: sumDy, SumDyXhat: sumDyXhat, N: n,
		BatchStats: p.BatchStats}
	write := func(lo, hi int) {
		done := 0
		if xf, ok := asFloat32(x); ok {
			done = avx512.NormGradRows(xf[lo*cols:], any(dy).([]float32)[lo*cols:], any(out).([]float32)[lo*cols:],
				cols, hi-lo, cols, &k)
		}
		for r := lo; r < hi && done < cols; r++ {
			o, xs := out[r*cols:(r+1)*cols], x[r*cols:(r+1)*cols]
			for c := done; c < cols; c++ {
				g := dy[r*cols+c]
				v := float64(g)
				if p.BatchStats {
					xhat := (float64(xs[c]) - mc[c]) * rs[c]
					v -= (sumDy[c] + float64(xhat*sumDyXhat[c])) / n // the product rounded before the sum, as the kernel
				}
				o[c] = T(gr[c] * v)
			}
		}
	}
	if dbias != nil {
		sumRowsAfter(rows, cols, out[:rows*cols], dbias, write)
		return
	}
	parallel(rows, cols, write)
}

// BatchNormGradWithGamma computes BatchNormGrad into dx, as NormForward
// does (in holds x, mean, variance, gamma and dy), and the gradient of
// gamma, Σ dy·x̂ over the rows, into dgamma: from the sums BatchNormGrad
// makes anyway where it uses the batch's statistics, otherwise as
// BatchNormGammaGrad computes it. It is the two gradients in one pass over
// x and dy, where a plan computes them together (plan.Capabilities).
func BatchNormGradWithGamma(p NormParams, rows, cols int, in [][]float32, dx, dgamma []float32) {
	if !p.BatchStats {
		normalize(BatchNormGrad, p, rows, cols, in, dx)
		normalize(BatchNormGammaGrad, p, rows, cols, [][]float32{in[0], in[1], in[2], in[4]}, dgamma)
		return
	}
	batchNormGrad(p, rows, cols, in, dx, dgamma[:cols], nil)
}

// BatchNormGradWithBias computes BatchNormGradWithGamma into dx and dgamma
// and the sums of dx's columns into dbias, with SumRows' bits: the
// gradient of a bias added just before the normalization (a convolution's
// or a dense layer's), each block of dx's rows summed from the caches as
// soon as it is written, where a plan computes the three together
// (plan.Capabilities).
func BatchNormGradWithBias(p NormParams, rows, cols int, in [][]float32, dx, dgamma, dbias []float32) {
	clear(dbias[:cols])
	if !p.BatchStats {
		BatchNormGradWithGamma(p, rows, cols, in, dx, dgamma)
		sumRows(rows, cols, dx, dbias)
		return
	}
	batchNormGrad(p, rows, cols, in, dx, dgamma[:cols], dbias)
}

// asFloat32 returns s as a []float32 when T is float32: the AVX-512
// kernels (package avx512) take float32 matrices and do the same float64
// arithmetic as the Go code here, giving its bits.
func asFloat32[T float](s []T) ([]float32, bool) {
	f, ok := any(s).([]float32)
	return f, ok
}

// rstdOf is 1/√(v+ε), in float64.
func rstdOf[T float](v T, eps float64) float64 { return 1 / math.Sqrt(float64(v)+eps) }

// normBlock is the most columns one reduction of normalize sums at once:
// its sums live on the goroutine's stack, so cores never write to the
// same cache line.
const normBlock = 64

// normPartValues is how many values of x a part of the rows of a column
// reduction holds, at least (rowParts), and normMaxParts the most parts:
// up to 16 parts, a part of float32s takes 512 KiB to 1 MiB, which
// partMoments' second pass reads back from the caches (ResNet-20's
// first stage at batch 128: 16 parts of 512 KiB).
const (
	normPartValues = 1 << 17
	normMaxParts   = 16
)

// rowParts returns the number of parts of consecutive rows whose sums a
// column reduction of a rows×cols matrix keeps apart, then adds in order
// (columnSums): one per normPartValues values of the matrix, at most
// normMaxParts. It depends on the shape only, so the sums' bits do not
// depend on the number of cores.
func rowParts(rows, cols int) int {
	return max(1, min(normMaxParts, rows, rows*cols/normPartValues))
}

// partRows returns the rows [r0, r1) of part k of rowParts(rows, cols)
// parts: the rows split as evenly as integers allow.
func partRows(rows, parts, k int) (r0, r1 int) {
	return k * rows / parts, (k + 1) * rows / parts
}

// columnSums computes k (1 or 2) sums of each column of a rows×cols
// matrix: columnParts' sums, each column's part 0's plus part 1's, and so
// on in order. It returns them, sum i of column c at [i·cols + c], in a
// scratch slice to put back into normScratchPoolT[float64]().
func columnSums(rows, cols, k int, body func(lo, hi, r0, r1 int, sum [][]float64)) *[]float64 {
	buf := columnParts(rows, cols, k, body)
	partial, parts := *buf, rowParts(rows, cols)
	for i := 0; i < k; i++ {
		for c := 0; c < cols; c++ {
			partial[i*cols+c] = partTotal(partial, parts, k, cols, i, c) // over part 0's, which it reads first
		}
	}
	*buf = partial[:k*cols]
	return buf
}

// partTotal is sum i of column c over the parts of columnParts' layout
// (parts parts of k sums): part 0's plus part 1's, and so on in order.
func partTotal(partial []float64, parts, k, cols, i, c int) float64 {
	s := partial[i*cols+c]
	for part := 1; part < parts; part++ {
		s += partial[(part*k+i)*cols+c]
	}
	return s
}

// columnParts computes k (1 or 2) sums of each column of a rows×cols
// matrix over each part of its rows (rowParts): body adds the sums of the
// columns [lo, hi) (at most normBlock) over the rows [r0, r1) to
// sum[i][:hi-lo], which start at zero. It returns the parts' sums, sum i
// of column c over part p at [(p·k + i)·cols + c], in a scratch slice to
// put back into normScratchPoolT[float64]().
//
// The parts and column blocks run on every core when the matrix is large
// enough to pay for the goroutines. The blocks are narrower than
// normBlock where there are fewer parts than cores (ResNet-20's last
// stage at batch 32: one part, 64 columns), but at least 16 columns: a
// 64-byte line of a row of float32s, so that two cores never both read
// a line. How the columns are split leaves the bits as they are.
func columnParts(rows, cols, k int, body func(lo, hi, r0, r1 int, sum [][]float64)) *[]float64 {
	parts := rowParts(rows, cols)
	buf := normScratchT[float64](parts * k * cols)
	partial := *buf
	workers := 1
	if rows*cols >= 1<<15 {
		workers = runtime.GOMAXPROCS(0)
	}
	width := normBlock
	if parts < workers {
		split := (workers + parts - 1) / parts
		width = min(normBlock, max(16, (cols+split-1)/split+15)/16*16)
	}
	blocks := (cols + width - 1) / width
	mat.Parallel(min(workers, blocks*parts), blocks*parts, 1, func(_, lo, hi int) {
		for task := lo; task < hi; task++ {
			blk, part := task/parts, task%parts
			c0, c1 := blk*width, min(cols, (blk+1)*width)
			r0, r1 := partRows(rows, parts, part)
			var acc [2][normBlock]float64
			sum := [][]float64{acc[0][:c1-c0], acc[1][:c1-c0]}[:k]
			body(c0, c1, r0, r1, sum)
			for i := range sum {
				copy(partial[(part*k+i)*cols+c0:], sum[i])
			}
		}
	})
	return buf
}

// normScratch32 and normScratch64 hold the scratch slices of normalize,
// so that a step's normalizations allocate no memory once warm.
var normScratch32, normScratch64 sync.Pool

// normScratchPoolT is the pool of scratch slices of T.
func normScratchPoolT[T float]() *sync.Pool {
	if _, ok := any(T(0)).(float32); ok {
		return &normScratch32
	}
	return &normScratch64
}

// normScratchT returns a pooled scratch slice of n values (not cleared);
// put it back into normScratchPoolT[T]() when done.
func normScratchT[T float](n int) *[]T {
	p, _ := normScratchPoolT[T]().Get().(*[]T)
	if p == nil {
		p = new([]T)
	}
	if cap(*p) < n {
		*p = make([]T, n)
	}
	*p = (*p)[:n]
	return p
}
