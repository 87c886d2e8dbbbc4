package blas

import (
	"errors"
	"fmt"
	"github.com/gokeras/gokeras/internal/kernels/matrix"
	"os"
	"runtime"
	"strings"
	"sync"

	"github.com/gokeras/gokeras/internal/kernels/avx2"
	"github.com/gokeras/gokeras/internal/kernels/avx512"
)

// KernelsAvailable reports whether this CPU runs gokeras' kernels: the
// AVX-512 ones (amd64 with AVX-512F) or, without AVX-512, the AVX2 ones
// (amd64 with AVX2 and FMA), in a build without the purego tag.
func KernelsAvailable() bool { return avx512.Available() || avx2.Available() }

// useAVX2 reports whether the kernels are package avx2's: the hook that
// picks them, on CPUs with AVX2 and FMA but not AVX-512.
func useAVX2() bool { return !avx512.Available() && avx2.Available() }

// kernelsName names the kernels this CPU runs, for messages.
func kernelsName() string {
	if useAVX2() {
		return "AVX2"
	}
	return "AVX-512"
}

// Multiplier is how gokeras multiplies matrices: the kernels (AVX-512, else
// AVX2) for the float32 products they compute, when they are on, and a
// Library for the rest (products of two transposed operands, float64) and
// for everything when they are off. A Multiplier is safe for concurrent use.
type Multiplier struct {
	lib     *Library
	kernels bool
	off     string // on a CPU with the kernels, the setting that turned them off

	// kernelSgemm is (*avx512.Workspace).Sgemm; tests substitute
	// stand-ins to check the fallback on CPUs without AVX-512.
	kernelSgemm func(ws *avx512.Workspace, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) error

	free workspaces[*avx512.Workspace]

	// On CPUs with AVX2 and not AVX-512, avx2Gemm computes in place of
	// kernelSgemm, with workspaces from free2.
	avx2     bool
	free2    workspaces[*avx2.Workspace]
	avx2Gemm func(ws *avx2.Workspace, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) error

	// one and one2 keep the one-goroutine workspaces of SgemmBatch.
	one  workspaces[*avx512.Workspace]
	one2 workspaces[*avx2.Workspace]
}

// defaultMultiplier is Choose's result, computed on first use.
var defaultMultiplier = sync.OnceValue(Choose)

// Default returns the Multiplier Choose picks, chosen once per process:
// every matrix product of gokeras goes through it, the ops' and those of
// the CPU machines of package device alike.
func Default() *Multiplier { return defaultMultiplier() }

// Choose picks how to multiply, fastest first:
//
//  1. the AVX-512 kernels, where the CPU has AVX-512F, else the AVX2
//     kernels, where it has AVX2 and FMA, if GOKERAS_BLAS is unset or
//     "auto";
//  2. for the products the kernels do not compute, or all of them without
//     the kernels, the BLAS library Load finds: the one GOKERAS_BLAS names,
//     else OpenBLAS, MKL or BLIS if installed, else gonum's pure-Go BLAS.
//
// GOKERAS_BLAS=native turns the kernels off and uses the native library
// Load finds; GOKERAS_BLAS=go turns them off and uses gonum; a path or
// library name turns them off and uses that library. GOKERAS_CPU_KERNELS=
// blas, the older switch, turns the kernels off as "native" does.
func Choose() *Multiplier {
	s := readSetting(os.Getenv)
	m := NewMultiplier(load(s), s.kernels)
	if !s.kernels {
		m.off = s.origin
	}
	return m
}

// NewMultiplier returns a Multiplier that computes with lib (PureGo when
// lib is nil), after the AVX-512 or AVX2 kernels when kernels is true and
// the CPU has them.
func NewMultiplier(lib *Library, kernels bool) *Multiplier {
	if lib == nil {
		lib = PureGo()
	}
	on := kernels && KernelsAvailable()
	return &Multiplier{lib: lib, kernels: on, kernelSgemm: (*avx512.Workspace).Sgemm,
		avx2: on && useAVX2(), avx2Gemm: (*avx2.Workspace).Sgemm}
}

// Kernels reports whether the kernels (AVX-512 or AVX2) compute m's float32
// products.
func (m *Multiplier) Kernels() bool { return m.kernels }

// Library is the BLAS library that computes what the kernels do not, or
// everything when they are off.
func (m *Multiplier) Library() *Library { return m.lib }

// String describes m in one line, for programs to print when they start,
// e.g. "AVX-512 kernels (2 threads); other products: OpenBLAS 0.3.21
// (libopenblas.so.0, Cooperlake, 2 threads)" (or "AVX2 kernels ..."), or
// the Library's String where the kernels are not used, followed on a CPU
// with kernels by what turned them off.
func (m *Multiplier) String() string {
	if m.kernels {
		other := m.lib.Name() // its install hint matters little next to the kernels
		if m.lib.Native() {
			other = m.lib.String()
		}
		return fmt.Sprintf("%s kernels (%d threads); other products: %s", kernelsName(), runtime.GOMAXPROCS(0), other)
	}
	s := m.lib.String()
	if KernelsAvailable() {
		s += "; " + kernelsName() + " kernels off"
		if m.off != "" && !strings.Contains(s, m.off) {
			s += " (" + m.off + ")"
		}
	}
	return s
}

// Sgemm computes c = alpha·op(a)·op(b) + beta·c for row-major float32
// matrices, with the arguments and errors of Library.Sgemm.
func (m *Multiplier) Sgemm(transA, transB bool, mm, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) error {
	if err := matrix.CheckArgs(transA, transB, mm, n, k, len(a), lda, len(b), ldb, len(c), ldc); err != nil {
		return fmt.Errorf("blas: sgemm: %w", err)
	}
	return m.sgemm(runtime.GOMAXPROCS(0), &m.free, &m.free2, transA, transB, mm, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// sgemm is Sgemm on checked arguments, the kernels computing with threads
// goroutines and workspaces from free (AVX-512) or free2 (AVX2).
func (m *Multiplier) sgemm(threads int, free *workspaces[*avx512.Workspace], free2 *workspaces[*avx2.Workspace],
	transA, transB bool, mm, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) error {
	if m.avx2 && !(m.lib.Native() && manyRows(transA, mm, k) && !avx2.Tall(transA, transB, mm, n, k)) {
		ws := free2.get(threads, avx2.NewWorkspace)
		err := m.avx2Gemm(ws, transA, transB, mm, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		free2.put(ws)
		if !errors.Is(err, avx2.ErrUnsupported) {
			return err
		}
	} else if m.kernels {
		ws := free.get(threads, avx512.NewWorkspace)
		err := m.kernelSgemm(ws, transA, transB, mm, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		free.put(ws)
		if !errors.Is(err, avx512.ErrUnsupported) {
			return err
		}
	}
	return m.lib.Sgemm(transA, transB, mm, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// SgemmBatch computes batch products c_s = alpha·op(a_s)·op(b_s) +
// beta·c_s, s < batch, sample s's matrices starting at a[s·strideA],
// b[s·strideB] and c[s·strideC], each with the leading dimension given
// and the other arguments of Sgemm. The samples are split between the
// cores and each product is computed on one: a batch of small products
// (attention's, one per sample and head) costs less so than with threads
// for each. The kernels give each product the same bits as Sgemm. The
// samples' c must not overlap.
func (m *Multiplier) SgemmBatch(transA, transB bool, batch, mm, n, k int, alpha float32, a []float32, strideA, lda int,
	b []float32, strideB, ldb int, beta float32, c []float32, strideC, ldc int) error {
	if batch < 0 || strideA < 0 || strideB < 0 || strideC < 0 {
		return fmt.Errorf("blas: sgemm batch: negative batch %d or stride (%d, %d, %d)", batch, strideA, strideB, strideC)
	}
	if batch == 0 {
		return nil
	}
	last := batch - 1
	// Each sample's operands are in their slices when the last one's are
	// (the strides are not negative).
	if last*strideA > len(a) || last*strideB > len(b) || last*strideC > len(c) {
		return fmt.Errorf("blas: sgemm batch: %d samples at strides %d, %d and %d need more values than a, b and c hold (%d, %d, %d)",
			batch, strideA, strideB, strideC, len(a), len(b), len(c))
	}
	if err := matrix.CheckArgs(transA, transB, mm, n, k, len(a)-last*strideA, lda, len(b)-last*strideB, ldb, len(c)-last*strideC, ldc); err != nil {
		return fmt.Errorf("blas: sgemm batch: sample %d: %w", last, err)
	}
	workers := min(runtime.GOMAXPROCS(0), batch)
	errs := make([]error, workers)
	matrix.Parallel(workers, batch, 1, func(w, lo, hi int) {
		for s := lo; s < hi && errs[w] == nil; s++ {
			errs[w] = m.sgemm(1, &m.one, &m.one2, transA, transB, mm, n, k, alpha, a[s*strideA:], lda, b[s*strideB:], ldb, beta, c[s*strideC:], ldc)
		}
	})
	return errors.Join(errs...)
}

// kernelRows is the most rows of examples (the dimension the batch runs
// along: m of a·b and a·bᵀ, k of aᵀ·b) the AVX2 kernels take when a native
// BLAS is there, unless the product is one of their tall ones
// (avx2.Tall). They are built for dense layers at training batch sizes,
// a few rows against large weights, and for convolutions' products, a
// row per output pixel (28,800 at batch 32 in the second layer of Keras'
// cifar10_cnn) against a few dozen filters: there, on a Zen 3, the tall
// kernels measured 95 GFLOP/s on two threads where OpenBLAS gave 40-50
// (BenchmarkConvolutionShapes). Other products with many rows (a dense
// layer at a batch of thousands) go to the native BLAS.
const kernelRows = 2048

// manyRows reports whether a product has more rows of examples than the
// AVX2 kernels take outside their tall shapes (see kernelRows).
func manyRows(transA bool, m, k int) bool {
	if transA {
		return k > kernelRows
	}
	return m > kernelRows
}

// Dgemm is Sgemm for float64 matrices, which the Library computes.
func (m *Multiplier) Dgemm(transA, transB bool, mm, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) error {
	return m.lib.Dgemm(transA, transB, mm, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// workspaces keeps kernel workspaces not in use, one per concurrent
// product at most, so that products allocate nothing once each concurrent
// caller has one.
type workspaces[W interface{ Workers() int }] struct {
	mu   sync.Mutex
	free []W
}

// get takes a workspace for one product on threads goroutines (made with
// newWorkspace when none fits); put gives it back.
func (p *workspaces[W]) get(threads int, newWorkspace func(workers int) W) W {
	p.mu.Lock()
	var ws W
	found := false
	if n := len(p.free); n > 0 {
		ws, p.free, found = p.free[n-1], p.free[:n-1], true
	}
	p.mu.Unlock()
	if !found || ws.Workers() != threads {
		ws = newWorkspace(threads)
	}
	return ws
}

func (p *workspaces[W]) put(ws W) {
	p.mu.Lock()
	p.free = append(p.free, ws)
	p.mu.Unlock()
}
