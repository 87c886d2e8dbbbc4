// Package blas multiplies matrices for gokeras with the fastest BLAS it can
// find at run time, and says which one it found.
//
// Training a dense network is almost all matrix products (sgemm). gonum's
// pure-Go BLAS computes them everywhere with nothing installed; a native
// BLAS tuned for the processor, such as OpenBLAS, computes them several
// times faster (a training step of gokeras' CIFAR-10 model, median of three
// runs on two AMD EPYC Zen 4 cores: 153 ms with gonum, 15 ms with OpenBLAS
// 0.3.21). On CPUs with AVX-512 the CPU machine of package device
// multiplies with kernels of its own and needs neither.
//
// This package loads a native library while the program runs, with dlopen
// through github.com/ebitengine/purego, so building gokeras needs neither
// cgo nor the library, and a program built on one machine uses whatever the
// machine it runs on has.
//
// Default is the library every op of gokeras uses. It is chosen once per
// process by Load:
//
//   - the GOKERAS_BLAS environment variable, if set, names it: a path
//     (GOKERAS_BLAS=/opt/OpenBLAS/lib/libopenblas.so), a file name the
//     system's loader finds (GOKERAS_BLAS=libblis.so.4), or "go" for the
//     pure-Go BLAS;
//   - otherwise the first of OpenBLAS, Intel MKL and BLIS (Apple's
//     Accelerate or Homebrew's OpenBLAS on macOS) that is installed;
//   - otherwise gonum's pure-Go BLAS.
//
// A library is used only if it exports the Fortran sgemm_ and its results
// on a few small products match gonum's. String describes the choice in one
// line, for programs to print when they start:
//
//	BLAS: OpenBLAS 0.3.21 (libopenblas.so.0, Cooperlake, 2 threads)
//	BLAS: pure Go (gonum, 2 threads); install libopenblas0-pthread ...
//
// On Debian and Ubuntu, `apt-get install libopenblas0-pthread` is all a
// machine needs. OpenBLAS reads OPENBLAS_NUM_THREADS for its thread count
// (default: one per core).
package blas
