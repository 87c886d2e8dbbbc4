//go:build (linux || darwin || freebsd) && (amd64 || arm64)

package blas

import (
	"errors"
	"fmt"
	"github.com/gokeras/gokeras/internal/kernels/matrix"
	"os"
	"runtime"
	"strings"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/gokeras/gokeras/internal/sys/dynlib"
)

// nativeLib is a BLAS shared library opened with dlopen (through purego,
// so no C compiler is needed to build gokeras) and called through its
// Fortran interface, sgemm_ and dgemm_, which takes every argument by
// address: floats and integers alike travel as pointers.
type nativeLib struct {
	handle       uintptr
	sgemmFn      uintptr
	dgemmFn      uintptr // 0 when the library has no dgemm_: gonum does float64
	name, detail string
	threads      func() int
	args         sync.Pool // of *gemmArgs
	// split, above 1, is how many goroutines share a large product, each
	// calling the library on its part: OpenBLAS is then told to use one
	// thread, so that no thread of its own spins waiting for work while
	// gokeras' other kernels run between its calls (see splitSgemm).
	split int
}

// gemmArgs holds the by-address arguments of one call. Integers are 64 bits
// wide with the value in the low half, which a little-endian library reads
// correctly whether it takes 32-bit (LP64) or 64-bit (ILP64) integers.
type gemmArgs struct {
	m, n, k, lda, ldb, ldc int64
	alpha32, beta32        float32
	alpha64, beta64        float64
	transA, transB         byte
}

// candidates are the libraries Load tries, best first.
func candidates() []string {
	if runtime.GOOS == "darwin" {
		return []string{
			"/opt/homebrew/opt/openblas/lib/libopenblas.dylib",
			"/usr/local/opt/openblas/lib/libopenblas.dylib",
			"/System/Library/Frameworks/Accelerate.framework/Accelerate",
		}
	}
	return []string{
		"libopenblas.so.0", "libopenblas.so", "libopenblasp.so.0",
		"libmkl_rt.so.2", "libmkl_rt.so",
		"libblis.so.4", "libblis.so",
	}
}

// openBLASThreadVars are the variables OpenBLAS reads its thread count
// from when it loads.
var openBLASThreadVars = []string{"OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS"}

func openNative(path string) (*nativeLib, error) {
	// OpenBLAS starts its threads when it loads, and told afterwards to
	// use one, they still wake and spin (sched_yield) for a while, taking
	// CPU from gokeras' own kernels: 13 ms of CPU a step of Keras'
	// cifar10_cnn on a 2-core Zen 3, where no product even went to
	// OpenBLAS. Unless the user set a thread count, load it with one
	// thread (the variable is set just for dlopen): gokeras shares large
	// products among goroutines itself (nativeLib.split).
	single := true
	for _, v := range openBLASThreadVars {
		if _, set := os.LookupEnv(v); set {
			single = false
		}
	}
	if single {
		if err := os.Setenv(openBLASThreadVars[0], "1"); err != nil {
			single = false
		}
	}
	handle, err := dynlib.Open(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if single {
		_ = os.Unsetenv(openBLASThreadVars[0])
	}
	if err != nil {
		if strings.Contains(path, "/") {
			if _, statErr := os.Stat(path); errors.Is(statErr, os.ErrNotExist) {
				return nil, fmt.Errorf("blas: %s: %w (%w)", path, errNotFound, statErr)
			}
		} else if strings.Contains(err.Error(), "No such file") || strings.Contains(err.Error(), "not found") {
			return nil, fmt.Errorf("blas: %s: %w (%v)", path, errNotFound, err)
		}
		return nil, fmt.Errorf("blas: cannot load %s: %w", path, err)
	}
	sgemm, err := purego.Dlsym(handle, "sgemm_")
	if err != nil || sgemm == 0 {
		_ = purego.Dlclose(handle)
		return nil, fmt.Errorf("blas: %s exports no sgemm_: it is not a BLAS library", path)
	}
	nl := &nativeLib{handle: handle, sgemmFn: sgemm, name: "BLAS"}
	nl.args.New = func() any { return new(gemmArgs) }
	if d, err := purego.Dlsym(handle, "dgemm_"); err == nil {
		nl.dgemmFn = d
	}
	nl.identify(path, single)
	return nl, nil
}

func (nl *nativeLib) close() { _ = purego.Dlclose(nl.handle) }

// sym returns a function of the library bound to fn, or false if the
// library does not export name.
func sym[F any](nl *nativeLib, name string, fn *F) bool {
	p, err := purego.Dlsym(nl.handle, name)
	if err != nil || p == 0 {
		return false
	}
	purego.RegisterFunc(fn, p)
	return true
}

// identify names the library and finds how to ask its thread count;
// single says it was loaded told to use one thread, which gokeras' split
// makes up for.
func (nl *nativeLib) identify(path string, single bool) {
	var config, corename func() string
	if sym(nl, "openblas_get_config", &config) {
		// "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY Cooperlake MAX_THREADS=64"
		f := strings.Fields(config())
		nl.name = "OpenBLAS"
		if len(f) >= 2 {
			nl.name = f[0] + " " + f[1]
		}
		if sym(nl, "openblas_get_corename", &corename) {
			nl.detail = corename()
		}
		var n func() int32
		if sym(nl, "openblas_get_num_threads", &n) {
			nl.threads = func() int { return int(n()) }
		}
		var set func(int32)
		if nl.threads != nil && sym(nl, "openblas_set_num_threads", &set) {
			t := min(nl.threads(), runtime.GOMAXPROCS(0))
			if single {
				t = runtime.GOMAXPROCS(0)
			}
			if t > 1 {
				set(1)
				nl.split = t
				nl.threads = func() int { return t }
			}
		}
		return
	}
	var version func() string
	if sym(nl, "bli_info_get_version_str", &version) {
		nl.name = "BLIS " + version()
		var n func() int64
		if sym(nl, "bli_thread_get_num_threads", &n) {
			nl.threads = func() int { return max(1, int(n())) }
		}
		return
	}
	var mklThreads func() int32
	if sym(nl, "MKL_Get_Max_Threads", &mklThreads) {
		nl.name = "Intel MKL"
		nl.threads = func() int { return int(mklThreads()) }
		return
	}
	if strings.Contains(path, "Accelerate") {
		nl.name = "Apple Accelerate"
	}
}

// splitWork is the least arithmetic (2·m·n·k) worth splitting a product
// over goroutines for.
const splitWork = 1 << 21

func (nl *nativeLib) sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if nl.split <= 1 || 2*m*n*k < splitWork {
		nl.sgemm1(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	// Split c along its longer side into one part per goroutine. OpenBLAS
	// may round a part's last bits otherwise than the whole (as its own
	// threads may); the parts depend only on the shape and the number of
	// goroutines, so runs repeat bit for bit.
	side := max(m, n)
	// One part per goroutine, cut at multiples of 16 rows or columns.
	part := (side/nl.split + 15) &^ 15
	parts := (side + part - 1) / part
	matrix.Parallel(nl.split, parts, 1, func(_, first, last int) {
		for i := first; i < last; i++ {
			lo, hi := i*part, min(side, (i+1)*part)
			if m >= n {
				ao := lo * lda
				if transA {
					ao = lo
				}
				nl.sgemm1(transA, transB, hi-lo, n, k, alpha, a[ao:], lda, b, ldb, beta, c[lo*ldc:], ldc)
				continue
			}
			bo := lo
			if transB {
				bo = lo * ldb
			}
			nl.sgemm1(transA, transB, m, hi-lo, k, alpha, a, lda, b[bo:], ldb, beta, c[lo:], ldc)
		}
	})
}

func (nl *nativeLib) sgemm1(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	p := nl.args.Get().(*gemmArgs)
	// Row-major C = op(A)·op(B) is column-major Cᵀ = op(B)ᵀ·op(A)ᵀ: swap the
	// operands and their dimensions.
	*p = gemmArgs{m: int64(n), n: int64(m), k: int64(k), lda: int64(ldb), ldb: int64(lda), ldc: int64(ldc),
		alpha32: alpha, beta32: beta, transA: transChar(transB), transB: transChar(transA)}
	purego.SyscallN(nl.sgemmFn,
		uintptr(unsafe.Pointer(&p.transA)), uintptr(unsafe.Pointer(&p.transB)),
		uintptr(unsafe.Pointer(&p.m)), uintptr(unsafe.Pointer(&p.n)), uintptr(unsafe.Pointer(&p.k)),
		uintptr(unsafe.Pointer(&p.alpha32)),
		uintptr(unsafe.Pointer(&b[0])), uintptr(unsafe.Pointer(&p.lda)),
		uintptr(unsafe.Pointer(&a[0])), uintptr(unsafe.Pointer(&p.ldb)),
		uintptr(unsafe.Pointer(&p.beta32)),
		uintptr(unsafe.Pointer(&c[0])), uintptr(unsafe.Pointer(&p.ldc)),
		1, 1) // the hidden lengths of the two character arguments
	runtime.KeepAlive(a)
	runtime.KeepAlive(b)
	runtime.KeepAlive(c)
	nl.args.Put(p)
}

func (nl *nativeLib) dgemm(transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	if nl.dgemmFn == 0 {
		pureGoDgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	p := nl.args.Get().(*gemmArgs)
	*p = gemmArgs{m: int64(n), n: int64(m), k: int64(k), lda: int64(ldb), ldb: int64(lda), ldc: int64(ldc),
		alpha64: alpha, beta64: beta, transA: transChar(transB), transB: transChar(transA)}
	purego.SyscallN(nl.dgemmFn,
		uintptr(unsafe.Pointer(&p.transA)), uintptr(unsafe.Pointer(&p.transB)),
		uintptr(unsafe.Pointer(&p.m)), uintptr(unsafe.Pointer(&p.n)), uintptr(unsafe.Pointer(&p.k)),
		uintptr(unsafe.Pointer(&p.alpha64)),
		uintptr(unsafe.Pointer(&b[0])), uintptr(unsafe.Pointer(&p.lda)),
		uintptr(unsafe.Pointer(&a[0])), uintptr(unsafe.Pointer(&p.ldb)),
		uintptr(unsafe.Pointer(&p.beta64)),
		uintptr(unsafe.Pointer(&c[0])), uintptr(unsafe.Pointer(&p.ldc)),
		1, 1)
	runtime.KeepAlive(a)
	runtime.KeepAlive(b)
	runtime.KeepAlive(c)
	nl.args.Put(p)
}

func transChar(t bool) byte {
	if t {
		return 'T'
	}
	return 'N'
}
