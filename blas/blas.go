package blas

import (
	"errors"
	"fmt"
	"github.com/gokeras/gokeras/internal/kernels/matrix"
	"os"
	"runtime"
	"strings"

	gblas "gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// EnvVar names the environment variable that chooses how gokeras
// multiplies; Choose documents its values.
const EnvVar = "GOKERAS_BLAS"

// kernelsEnvVar is the older switch for the kernels alone:
// GOKERAS_CPU_KERNELS=blas still turns them off, as GOKERAS_BLAS=native
// does.
const kernelsEnvVar = "GOKERAS_CPU_KERNELS"

// InstallHint says what to install for a native library, shown when the
// pure-Go implementation is in use.
const InstallHint = "install libopenblas0-pthread (Debian/Ubuntu: apt-get install libopenblas0-pthread) or set " + EnvVar + " to a BLAS library: training steps are several times faster than in pure Go on CPUs without AVX-512"

// Library is one BLAS: a native library loaded at run time, or gonum's
// pure-Go BLAS. A Library is safe for concurrent use.
type Library struct {
	name    string // "OpenBLAS 0.3.21", "pure Go (gonum)"
	file    string // what was loaded, as given to Open
	detail  string // the kernel OpenBLAS picked, if it says
	note    string // for the pure-Go library: why no native one is in use
	native  *nativeLib
	threads func() int
}

// PureGo returns gonum's pure-Go BLAS, which needs nothing installed.
func PureGo() *Library {
	return &Library{name: "pure Go (gonum)", threads: func() int { return runtime.GOMAXPROCS(0) }}
}

// setting is what the environment asks for.
type setting struct {
	kernels bool   // the kernels (AVX-512 or AVX2) may run
	library string // "" finds a native library, "go" is gonum, else a path or name for Open
	origin  string // the variable and value that chose library or turned the kernels off, "" for neither
}

// readSetting reads GOKERAS_BLAS and GOKERAS_CPU_KERNELS; getenv is
// os.Getenv but in tests.
func readSetting(getenv func(string) string) setting {
	s := setting{kernels: true}
	if v := strings.TrimSpace(getenv(kernelsEnvVar)); strings.EqualFold(v, "blas") {
		s.kernels, s.origin = false, kernelsEnvVar+"="+v
	}
	v := strings.TrimSpace(getenv(EnvVar))
	switch strings.ToLower(v) {
	case "", "auto":
	case "native":
		s.kernels, s.origin = false, EnvVar+"="+v
	case "go", "purego", "gonum", "none":
		s.kernels, s.library, s.origin = false, "go", EnvVar+"="+v
	default:
		s.kernels, s.library, s.origin = false, v, EnvVar+"="+v
	}
	return s
}

// Load returns the BLAS library that GOKERAS_BLAS asks for: the one it
// names (a path or a file name for the system's loader), gonum's for "go",
// and otherwise (unset, "auto" or "native") the first of the well-known
// libraries (OpenBLAS, MKL, BLIS, Accelerate on macOS) that loads and
// passes a check of its results, else PureGo. It never fails: when no
// native library loads, String on the result says why and what to
// install. Load leaves the kernels (AVX-512 or AVX2) out: Choose puts them in front.
func Load() *Library { return load(readSetting(os.Getenv)) }

func load(s setting) *Library {
	switch s.library {
	case "go":
		lib := PureGo()
		lib.note = s.origin
		return lib
	case "":
	default:
		lib, err := Open(s.library)
		if err == nil {
			return lib
		}
		fallback := PureGo()
		fallback.note = fmt.Sprintf("%s: %v", s.origin, err)
		return fallback
	}
	var tried []string
	for _, name := range candidates() {
		lib, err := Open(name)
		if err == nil {
			return lib
		}
		if !errors.Is(err, errNotFound) {
			tried = append(tried, err.Error())
		}
	}
	lib := PureGo()
	lib.note = InstallHint
	if len(tried) > 0 {
		lib.note = strings.Join(tried, "; ") + "; " + InstallHint
	}
	return lib
}

// errNotFound marks a library that is not installed, as opposed to one that
// is installed but unusable: Load only reports the second kind.
var errNotFound = errors.New("not found")

// Open loads the BLAS shared library at path, which may also be a bare
// file name for the system's loader to find ("libopenblas.so.0"). The
// library must export the Fortran sgemm_ and dgemm_; Open checks a few
// products against the pure-Go results before returning it.
func Open(path string) (*Library, error) {
	nl, err := openNative(path)
	if err != nil {
		return nil, err
	}
	lib := &Library{name: nl.name, file: path, detail: nl.detail, native: nl, threads: nl.threads}
	if err := selfCheck(lib); err != nil {
		nl.close()
		return nil, fmt.Errorf("blas: %s: %w", path, err)
	}
	return lib, nil
}

// Native reports whether the library is a native BLAS rather than gonum's.
func (l *Library) Native() bool { return l.native != nil }

// Name is the library's name and version, e.g. "OpenBLAS 0.3.21" or
// "pure Go (gonum)".
func (l *Library) Name() string { return l.name }

// Path is what was loaded, as given to Open; empty for PureGo.
func (l *Library) Path() string { return l.file }

// Threads is the number of threads the library computes a product with,
// 0 when the library does not say.
func (l *Library) Threads() int {
	if l.threads == nil {
		return 0
	}
	return l.threads()
}

// Core is the CPU kernel set a native library chose for this machine,
// where it says (OpenBLAS' core name, such as "Zen" or "Cooperlake", which
// OPENBLAS_CORETYPE overrides), else "". Libraries that pick their kernels
// by CPU round differently on different CPUs.
func (l *Library) Core() string { return l.detail }

// String describes the library in one line for people, e.g.
// "OpenBLAS 0.3.21 (libopenblas.so.0, Cooperlake, 2 threads)" or
// "pure Go (gonum, 2 threads); install libopenblas0-pthread ...".
func (l *Library) String() string {
	if l.native == nil {
		s := fmt.Sprintf("pure Go (gonum, %d threads)", l.Threads())
		if l.note != "" {
			s += "; " + l.note
		}
		return s
	}
	parts := []string{l.file}
	if l.detail != "" {
		parts = append(parts, l.detail)
	}
	if t := l.Threads(); t > 0 {
		parts = append(parts, fmt.Sprintf("%d threads", t))
	}
	return fmt.Sprintf("%s (%s)", l.name, strings.Join(parts, ", "))
}

// Sgemm computes c = alpha·op(a)·op(b) + beta·c for row-major float32
// matrices, like gonum's blas32.Gemm: op(a) is m×k, op(b) is k×n and c is
// m×n; op transposes its matrix when transA or transB says so; lda, ldb and
// ldc are the row strides of a, b and c as stored. When beta is 0, c need
// not hold numbers on entry. It returns an error, and computes nothing,
// when a dimension is negative or a slice is too short for its matrix.
func (l *Library) Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) error {
	if err := matrix.CheckArgs(transA, transB, m, n, k, len(a), lda, len(b), ldb, len(c), ldc); err != nil {
		return fmt.Errorf("blas: sgemm: %w", err)
	}
	if m == 0 || n == 0 {
		return nil
	}
	if k == 0 || alpha == 0 {
		matrix.ScaleRows(m, n, beta, c, ldc)
		return nil
	}
	if l.native != nil {
		l.native.sgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return nil
	}
	gonum.Implementation{}.Sgemm(trans(transA), trans(transB), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	return nil
}

// Dgemm is Sgemm for float64 matrices.
func (l *Library) Dgemm(transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) error {
	if err := matrix.CheckArgs(transA, transB, m, n, k, len(a), lda, len(b), ldb, len(c), ldc); err != nil {
		return fmt.Errorf("blas: dgemm: %w", err)
	}
	if m == 0 || n == 0 {
		return nil
	}
	if k == 0 || alpha == 0 {
		matrix.ScaleRows(m, n, beta, c, ldc)
		return nil
	}
	if l.native != nil {
		l.native.dgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return nil
	}
	pureGoDgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	return nil
}

func pureGoDgemm(transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	gonum.Implementation{}.Dgemm(trans(transA), trans(transB), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

func trans(t bool) gblas.Transpose {
	if t {
		return gblas.Trans
	}
	return gblas.NoTrans
}

// selfCheck multiplies small matrices, every transposition and a beta that
// accumulates, and compares with gonum: a library with another integer
// size or calling convention gives wrong numbers rather than an error.
func selfCheck(l *Library) error {
	const m, n, k = 3, 4, 5
	a := make([]float32, m*k)
	b := make([]float32, k*n)
	for i := range a {
		a[i] = float32(i%7) - 2.5
	}
	for i := range b {
		b[i] = float32(i%5)*0.5 - 1
	}
	ref := PureGo()
	for _, ta := range []bool{false, true} {
		for _, tb := range []bool{false, true} {
			lda, ldb := k, n
			if ta {
				lda = m
			}
			if tb {
				ldb = k
			}
			got := make([]float32, m*n)
			want := make([]float32, m*n)
			for i := range got {
				got[i], want[i] = float32(i), float32(i)
			}
			if err := l.Sgemm(ta, tb, m, n, k, 1.5, a, lda, b, ldb, 0.5, got, n); err != nil {
				return err
			}
			if err := ref.Sgemm(ta, tb, m, n, k, 1.5, a, lda, b, ldb, 0.5, want, n); err != nil {
				return err
			}
			for i := range got {
				if d := got[i] - want[i]; d > 1e-4 || d < -1e-4 {
					return fmt.Errorf("sgemm_ (transA=%t, transB=%t) gives %v where %v is right: the library's calling convention is not the reference BLAS one", ta, tb, got, want)
				}
			}
		}
	}
	return nil
}
