// Package gemmtest checks float32 and float64 matrix products, for the
// tests of package blas and of the AVX-512 kernels, against a reference
// computed in float64 from the same operands, with a tolerance derived
// from rounding-error analysis rather than picked by hand.
//
// A product c = alpha·op(a)·op(b) + beta·c sums, for each element, k+1
// terms (alpha·a_ip·b_pj for each p, and beta·c_ij). Whatever the order of
// the additions, blocking or fused multiply-adds, each term goes through at
// most two multiplications and k additions, so the computed element
// differs from the exact one by at most
//
//	γ_{k+2} · (|alpha|·Σ_p |a_ip|·|b_pj| + |beta|·|c_ij|),  γ_n = n·u/(1-n·u),
//
// where u is the unit roundoff of the arithmetic: 2⁻²⁴ for float32, 2⁻⁵³
// for float64 (the standard bound on an inner product; see Higham,
// Accuracy and Stability of Numerical Algorithms, §3.1). The reference's
// own float64 error is added to the bound, so a check never fails because
// of it.
package gemmtest

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Unit roundoffs: half the distance from 1 to the next number.
const (
	U32 = 0x1p-24 // float32
	U64 = 0x1p-53 // float64
)

// Gamma is γ_n = n·u/(1-n·u), the bound on the relative error of n
// roundings with unit roundoff u. It is +Inf when n·u ≥ 1.
func Gamma(n int, u float64) float64 {
	nu := float64(n) * u
	if nu >= 1 {
		return math.Inf(1)
	}
	return nu / (1 - nu)
}

// Case is one product, c = alpha·op(a)·op(b) + beta·c, on row-major
// matrices: op(a) is M×K, op(b) is K×N, c is M×N. A, B and C hold exactly
// what their shapes and strides need and no more, so that an
// implementation reading or writing past a matrix runs off its slice.
type Case struct {
	TransA, TransB bool
	M, N, K        int
	Alpha, Beta    float32
	A              []float32
	Lda            int
	B              []float32
	Ldb            int
	C              []float32 // c before the product: compute into a copy (Fresh)
	Ldc            int
}

// NewCase draws a, b and c uniformly from [-1, 1), with pad unused values
// at the end of each row (the stride is the row's length plus pad). When
// beta is 0, c holds NaN: an implementation must not read it.
func NewCase(rng *rand.Rand, transA, transB bool, m, n, k int, alpha, beta float32, pad int) Case {
	ar, ac := m, k
	if transA {
		ar, ac = k, m
	}
	br, bc := k, n
	if transB {
		br, bc = n, k
	}
	c := Case{TransA: transA, TransB: transB, M: m, N: n, K: k, Alpha: alpha, Beta: beta,
		Lda: max(1, ac+pad), Ldb: max(1, bc+pad), Ldc: max(1, n+pad)}
	c.A = random(rng, size(ar, ac, c.Lda))
	c.B = random(rng, size(br, bc, c.Ldb))
	c.C = random(rng, size(m, n, c.Ldc))
	if beta == 0 {
		for i := range c.C {
			c.C[i] = float32(math.NaN())
		}
	}
	return c
}

// size is the number of values a rows×cols matrix with row stride ld
// occupies: the last row needs only its cols.
func size(rows, cols, ld int) int {
	if rows == 0 || cols == 0 {
		return 0
	}
	return (rows-1)*ld + cols
}

func random(rng *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = rng.Float32()*2 - 1
	}
	return s
}

// String names the case for test output.
func (c Case) String() string {
	return fmt.Sprintf("%d×%d×%d/transA=%t,transB=%t/alpha=%g,beta=%g/strides=%d,%d,%d",
		c.M, c.N, c.K, c.TransA, c.TransB, c.Alpha, c.Beta, c.Lda, c.Ldb, c.Ldc)
}

// Fresh returns a copy of C to compute into.
func (c Case) Fresh() []float32 { return append([]float32(nil), c.C...) }

// Float64 returns the operands as float64, exactly: a float64 product
// computed from them has the same reference.
func (c Case) Float64() (a, b, cc []float64) { return widen(c.A), widen(c.B), widen(c.C) }

func widen(s []float32) []float64 {
	out := make([]float64, len(s))
	for i, v := range s {
		out[i] = float64(v)
	}
	return out
}

// reference returns, for element (i, j), the product computed in float64
// and the sum of the absolute values of its terms.
func (c Case) reference(i, j int) (want, mag float64) {
	alpha := float64(c.Alpha)
	var s, abs float64
	for p := 0; p < c.K; p++ {
		av, bv := c.at(i, p), c.bt(p, j)
		s += av * bv
		abs += math.Abs(av * bv)
	}
	want, mag = alpha*s, math.Abs(alpha)*abs
	if c.Beta != 0 {
		cv := float64(c.C[i*c.Ldc+j])
		want += float64(c.Beta) * cv
		mag += math.Abs(float64(c.Beta) * cv)
	}
	return want, mag
}

func (c Case) at(i, p int) float64 {
	if c.TransA {
		return float64(c.A[p*c.Lda+i])
	}
	return float64(c.A[i*c.Lda+p])
}

func (c Case) bt(p, j int) float64 {
	if c.TransB {
		return float64(c.B[j*c.Ldb+p])
	}
	return float64(c.B[p*c.Ldb+j])
}

// Bound is the largest error allowed on an element whose terms' absolute
// values sum to mag, for arithmetic with unit roundoff u: γ_{K+2}·mag, plus
// twice float64's own for the reference and for mag.
func (c Case) Bound(mag, u float64) float64 {
	return (Gamma(c.K+2, u) + 2*Gamma(c.K+2, U64)) * mag
}

// CheckFloat32 compares got, the c a float32 product left, with the
// reference. It returns an error naming the first element outside its
// bound, or a value written in the stride padding of c, and otherwise the
// largest error seen as a fraction of its bound (how close the
// implementation came to the limit: 0 for exact results).
func (c Case) CheckFloat32(got []float32) (worst float64, err error) {
	return c.check(len(got), func(i int) float64 { return float64(got[i]) }, U32)
}

// CheckFloat64 is CheckFloat32 for a float64 product of the operands that
// Float64 returns.
func (c Case) CheckFloat64(got []float64) (worst float64, err error) {
	return c.check(len(got), func(i int) float64 { return got[i] }, U64)
}

func (c Case) check(n int, got func(int) float64, u float64) (worst float64, err error) {
	if n != len(c.C) {
		return 0, fmt.Errorf("%v: c holds %d values after the product, want %d", c, n, len(c.C))
	}
	for i := range c.C {
		row, col := i/c.Ldc, i%c.Ldc
		g := got(i)
		if col >= c.N { // stride padding: never written
			if orig := float64(c.C[i]); !(g == orig || math.IsNaN(g) && math.IsNaN(orig)) {
				return 0, fmt.Errorf("%v: wrote %v into the stride padding of c at (%d, %d)", c, g, row, col)
			}
			continue
		}
		want, mag := c.reference(row, col)
		bound := c.Bound(mag, u)
		d := math.Abs(g - want)
		if !(d <= bound) {
			return 0, fmt.Errorf("%v: c[%d,%d] = %v, want %v within %.3g (the rounding-error bound), off by %.3g", c, row, col, g, want, bound, d)
		}
		if bound > 0 {
			worst = max(worst, d/bound)
		}
	}
	return worst, nil
}
