package avx512

import "sync"

// The layer-normalization kernels: package ops' LayerNorm ops on whole
// rows of a float32 matrix whose rows lie one after another (cols values
// apart), for cols a multiple of 8, with AVX-512 or, on CPUs without it,
// AVX2 (layerNormRowsAVX2). Each returns false, doing nothing, where the
// CPU has neither or the shapes do not fit; the caller then runs its Go
// code, which computes the same bits.
//
// Everything is computed in float64, one rounding per operation (no fused
// multiply-adds), in this order for each row x of n = cols values:
//
//   - a row's sum: value c is added to lane c mod 8, in order of c, and
//     the lanes l0…l7 are added ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7));
//   - mean = sum(x)/n, rstd = 1/√(sum((x-mean)·(x-mean))/n + eps);
//   - LayerNorm: out = float32(((gamma·(x-mean))·rstd) + beta);
//   - LayerNormGrad, g = gamma·dy: sG = sum(g), sGX = sum((g·(x-mean))·rstd),
//     out = float32(rstd·(g - (sG/n + ((x-mean)·rstd)·(sGX/n))));
//   - LayerNormGammaGrad: sum[c] += (dy·(x-mean))·rstd, row after row.
//
// gamma and beta are float32 values widened to float64, as x and dy.

// Kinds of layerNormRows.
const (
	lnForward = iota
	lnGrad
	lnGammaGrad
)

// lnArgs holds layerNormRows' arguments.
type lnArgs struct {
	x, gamma, b, out *float32 // b: beta (forward) or dy
	sum              *float64
	rows, groups     int
	eps, n           float64 // n: the values of a row, 8·groups
	kind             int
	wide             *float64 // scratch: 4·cols values
}

// lnScratch holds the kernels' scratch memory: two rows of x widened to
// float64 and gamma and beta widened.
var lnScratch sync.Pool

// wideScratch returns pooled scratch of 4·cols float64s, gamma and beta
// widened into its last 2·cols; put it back into lnScratch when done.
func wideScratch(cols int, gamma, beta []float32) *[]float64 {
	p, _ := lnScratch.Get().(*[]float64)
	if p == nil {
		p = new([]float64)
	}
	if cap(*p) < 4*cols {
		*p = make([]float64, 4*cols)
	}
	*p = (*p)[:4*cols]
	w := *p
	for c, v := range gamma[:min(len(gamma), cols)] {
		w[2*cols+c] = float64(v)
	}
	for c, v := range beta[:min(len(beta), cols)] {
		w[3*cols+c] = float64(v)
	}
	return p
}

// lnFits reports whether the kernels can run on rows × cols matrices held
// in the slices of lengths ns.
func lnFits(rows, cols int, ns ...int) bool {
	if !(haveKernels || lnAVX2) || rows <= 0 || cols <= 0 || cols%8 != 0 {
		return false
	}
	for _, n := range ns {
		if n < rows*cols {
			return false
		}
	}
	return true
}

// runLayerNorm runs the kernel this CPU has.
func runLayerNorm(a *lnArgs) {
	if lnAVX2 {
		layerNormRowsAVX2(a)
		return
	}
	layerNormRows(a)
}

// LayerNormRows writes the layer normalization of each of the rows of x
// with gamma and beta (cols values each) to out.
func LayerNormRows(x, gamma, beta, out []float32, rows, cols int, eps float64) bool {
	if !lnFits(rows, cols, len(x), len(out)) || len(gamma) < cols || len(beta) < cols {
		return false
	}
	w := wideScratch(cols, gamma, beta)
	defer lnScratch.Put(w)
	runLayerNorm(&lnArgs{x: &x[0], gamma: &gamma[0], b: &beta[0], out: &out[0], rows: rows, groups: cols / 8,
		eps: eps, n: float64(cols), kind: lnForward, wide: &(*w)[0]})
	return true
}

// LayerNormGradRows writes the gradient of the layer normalization of
// each of the rows of x with gamma with respect to x, given the
// gradient dy of its output, to out.
func LayerNormGradRows(x, gamma, dy, out []float32, rows, cols int, eps float64) bool {
	if !lnFits(rows, cols, len(x), len(dy), len(out)) || len(gamma) < cols {
		return false
	}
	w := wideScratch(cols, gamma, nil)
	defer lnScratch.Put(w)
	runLayerNorm(&lnArgs{x: &x[0], gamma: &gamma[0], b: &dy[0], out: &out[0], rows: rows, groups: cols / 8,
		eps: eps, n: float64(cols), kind: lnGrad, wide: &(*w)[0]})
	return true
}

// LayerNormGammaGradRows adds each row's (dy·(x-mean))·rstd to sum, row
// after row: the gradient of gamma over these rows.
func LayerNormGammaGradRows(x, dy []float32, rows, cols int, eps float64, sum []float64) bool {
	if !lnFits(rows, cols, len(x), len(dy)) || len(sum) < cols {
		return false
	}
	w := wideScratch(cols, nil, nil)
	defer lnScratch.Put(w)
	runLayerNorm(&lnArgs{x: &x[0], b: &dy[0], sum: &sum[0], rows: rows, groups: cols / 8, eps: eps,
		n: float64(cols), kind: lnGammaGrad, wide: &(*w)[0]})
	return true
}
