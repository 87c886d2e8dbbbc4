// Package blas is the one place gokeras decides how to multiply matrices,
// and says what it decided.
//
// Training a dense network is almost all matrix products (sgemm). gonum's
// pure-Go BLAS computes them everywhere with nothing installed; a native
// BLAS tuned for the processor, such as OpenBLAS, computes them several
// times faster; on CPUs with AVX-512, kernels of gokeras' own, written for
// a batch against large weights, are faster still, and on CPUs with AVX2
// and FMA but not AVX-512, AVX2 kernels of the same design. The repository's
// docs/performance.md gives measured figures, each with its results file.
//
// Default is the Multiplier every product goes through, the ops' and the
// CPU machines' alike. Choose picks it once per process, first that
// applies:
//
//  1. the AVX-512 kernels (package internal/kernels/avx512), where the CPU has
//     AVX-512F, else the AVX2 kernels (internal/kernels/avx2), where it has AVX2
//     and FMA, for the products they compute (all float32 products but
//     those of two transposed operands, which training never needs);
//  2. a native BLAS, loaded while the program runs with dlopen through
//     github.com/ebitengine/purego (so building gokeras needs neither cgo
//     nor the library): the first of OpenBLAS, Intel MKL and BLIS
//     (Apple's Accelerate or Homebrew's OpenBLAS on macOS) that is
//     installed, exports sgemm_ and gives the right results on a few
//     small products;
//  3. gonum's pure-Go BLAS.
//
// The GOKERAS_BLAS environment variable overrides the choice:
//
//	GOKERAS_BLAS=auto (or unset)          the order above
//	GOKERAS_BLAS=native                   no kernels: a native BLAS, else gonum
//	GOKERAS_BLAS=go                       gonum only
//	GOKERAS_BLAS=/opt/lib/libopenblas.so  no kernels: this library (a path, or a
//	GOKERAS_BLAS=libblis.so.4             file name the system's loader finds)
//
// GOKERAS_CPU_KERNELS=blas, the older switch for the kernels, still turns
// them off, as GOKERAS_BLAS=native does. A library that does not load is
// not an error: gonum computes instead, and String says why.
//
// String describes the choice in one line, for programs to print when they
// start:
//
//	BLAS: AVX-512 kernels (2 threads); other products: OpenBLAS 0.3.21 (libopenblas.so.0, SkylakeX, 2 threads)
//	BLAS: AVX2 kernels (2 threads); other products: OpenBLAS 0.3.21 (libopenblas.so.0, Zen, 2 threads)
//	BLAS: OpenBLAS 0.3.21 (libopenblas.so.0, Zen, 2 threads)
//	BLAS: pure Go (gonum, 2 threads); install libopenblas0-pthread ...
//
// On Debian and Ubuntu, `apt-get install libopenblas0-pthread` is all a
// machine without AVX2 needs. OpenBLAS reads OPENBLAS_NUM_THREADS for
// its thread count (default: one per core); the kernels and gonum use
// GOMAXPROCS threads. When OpenBLAS would use more than one thread, gokeras
// sets it to one and shares each large product among that many goroutines
// itself, each calling OpenBLAS on its part of the output: OpenBLAS's own
// threads spin waiting for work after each product, and on a machine with
// few cores they took the cores from gokeras' kernels that run between its
// calls (pooling, dropout, patches), which then ran at half speed.
//
// Library is one BLAS on its own (Load, Open, PureGo), for programs that
// want a particular one; NewMultiplier puts the kernels in front of any.
package blas
