//go:build cudavm && cgo && !kernelemu

package cuda

/*
#cgo LDFLAGS: -ldl
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <link.h>
#include <stdlib.h>
#include <cuda.h>

// The few cuBLAS entry points gokeras uses, with the C types of cublas_v2.h
// (handles and streams are pointers, enums are ints). cuBLAS is opened with
// dlopen, not linked: see blas.go.
typedef int (*cublasCreate_t)(void **handle);
typedef int (*cublasDestroy_t)(void *handle);
typedef int (*cublasSetStream_t)(void *handle, CUstream stream);
typedef int (*cublasGetVersion_t)(void *handle, int *version);
typedef int (*cublasSgemm_t)(void *handle, int transa, int transb, int m, int n, int k,
	const float *alpha, const float *A, int lda, const float *B, int ldb,
	const float *beta, float *C, int ldc);

typedef struct {
	void *lib;
	cublasCreate_t create;
	cublasDestroy_t destroy;
	cublasSetStream_t setStream;
	cublasGetVersion_t getVersion;
	cublasSgemm_t sgemm;
} gk_cublas;

// gk_cublas_open dlopens path (first lt, its libcublasLt, when not "": a
// library found by its path may not find the one beside it) and finds the
// entry points; on failure it returns the dlerror text (static storage) and
// closes the library.
static const char *gk_cublas_open(const char *path, const char *lt, gk_cublas *b) {
	if (lt[0]) (void)dlopen(lt, RTLD_NOW | RTLD_LOCAL); // its own failure shows in libcublas'
	b->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!b->lib) return dlerror();
	b->create = (cublasCreate_t)dlsym(b->lib, "cublasCreate_v2");
	b->destroy = (cublasDestroy_t)dlsym(b->lib, "cublasDestroy_v2");
	b->setStream = (cublasSetStream_t)dlsym(b->lib, "cublasSetStream_v2");
	b->getVersion = (cublasGetVersion_t)dlsym(b->lib, "cublasGetVersion_v2");
	b->sgemm = (cublasSgemm_t)dlsym(b->lib, "cublasSgemm_v2");
	if (!b->create || !b->destroy || !b->setStream || !b->getVersion || !b->sgemm) {
		dlclose(b->lib);
		b->lib = NULL;
		return "a cuBLAS v2 entry point (cublasCreate_v2, cublasDestroy_v2, cublasSetStream_v2, cublasGetVersion_v2 or cublasSgemm_v2) is missing";
	}
	return NULL;
}

// gk_cublas_file is the file the loader opened for b, or "".
static const char *gk_cublas_file(gk_cublas *b) {
	struct link_map *lm = NULL;
	if (dlinfo(b->lib, RTLD_DI_LINKMAP, &lm) != 0 || !lm || !lm->l_name) return "";
	return lm->l_name;
}

static int gk_cublas_create(gk_cublas *b, void **h) { return b->create(h); }
static int gk_cublas_destroy(gk_cublas *b, void *h) { return b->destroy(h); }
static int gk_cublas_set_stream(gk_cublas *b, void *h, CUstream s) { return b->setStream(h, s); }
static int gk_cublas_version(gk_cublas *b, void *h, int *v) { return b->getVersion(h, v); }

// gk_sgemm takes alpha and beta by value and device pointers as integers.
static int gk_sgemm(gk_cublas *b, void *h, int ta, int tb, int m, int n, int k,
		float alpha, CUdeviceptr A, int lda, CUdeviceptr B, int ldb, float beta, CUdeviceptr C, int ldc) {
	return b->sgemm(h, ta, tb, m, n, k, &alpha, (const float *)A, lda, (const float *)B, ldb, &beta, (float *)C, ldc);
}
*/
import "C"

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"gorgonia.org/cu"
)

// cuBLAS is opened with dlopen at run time instead of being linked, unlike
// gorgonia.org/cu/blas: that package links libcublas.so.11 and its
// versioned symbols, so a binary built against Debian's CUDA 11.8 would
// refuse to start on a machine that has only CUDA 12 or 13. Only
// libcuda.so.1, the driver itself, is linked. blaslookup.go says where
// cuBLAS is looked for.
//
// The first library that loads and creates a handle is kept for the
// process and never closed; one that loads but cannot create a handle is
// left loaded (closing a half-initialised cuBLAS is not safe) and passed
// over.
var blasChosen struct {
	mu  sync.Mutex
	lib *blasLib
}

// blasLib is an opened cuBLAS.
type blasLib struct {
	c    *C.gk_cublas // C memory: the function table
	path string       // what was opened: a soname or a path
	file string       // the file the loader opened, or ""
}

func (l *blasLib) String() string {
	if l.file == "" || l.file == l.path {
		return l.path
	}
	return l.path + " (" + l.file + ")"
}

// openBLAS opens one candidate.
func openBLAS(c blasCandidate) (*blasLib, error) {
	tab := (*C.gk_cublas)(C.calloc(1, C.size_t(unsafe.Sizeof(C.gk_cublas{}))))
	cpath, clt := C.CString(c.path), C.CString(c.lt())
	defer C.free(unsafe.Pointer(cpath))
	defer C.free(unsafe.Pointer(clt))
	if msg := C.gk_cublas_open(cpath, clt, tab); msg != nil {
		C.free(unsafe.Pointer(tab))
		return nil, errors.New(C.GoString(msg))
	}
	return &blasLib{c: tab, path: c.path, file: C.GoString(C.gk_cublas_file(tab))}, nil
}

// create makes a cuBLAS handle bound to the current context.
func (l *blasLib) create() (unsafe.Pointer, error) {
	var h unsafe.Pointer
	if err := blasStatus(C.gk_cublas_create(l.c, &h)); err != nil {
		return nil, fmt.Errorf("cublasCreate: %w", err)
	}
	return h, nil
}

// createBLASHandle creates a handle with the chosen cuBLAS, choosing it
// the first time (see chooseBLAS); call it inside gpu.do. A failed choice
// is not remembered: the next machine searches again.
func createBLASHandle() (*blasLib, unsafe.Pointer, error) {
	blasChosen.mu.Lock()
	defer blasChosen.mu.Unlock()
	if lib := blasChosen.lib; lib != nil {
		h, err := lib.create()
		if err != nil {
			return nil, nil, fmt.Errorf("%w (cuBLAS %s)", err, lib)
		}
		return lib, h, nil
	}
	var h unsafe.Pointer
	lib, _, err := chooseBLAS(defaultBLASLookup(), func(c blasCandidate) (*blasLib, error) {
		lib, err := openBLAS(c)
		if err != nil {
			return nil, err
		}
		if h, err = lib.create(); err != nil {
			return nil, fmt.Errorf("%s loads, but %w", lib, err)
		}
		return lib, nil
	})
	if err != nil {
		return nil, nil, err
	}
	blasChosen.lib = lib
	return lib, h, nil
}

// blasStatus names a cublasStatus_t.
func blasStatus(s C.int) error {
	if s == 0 {
		return nil
	}
	names := map[C.int]string{
		1: "CUBLAS_STATUS_NOT_INITIALIZED", 3: "CUBLAS_STATUS_ALLOC_FAILED", 7: "CUBLAS_STATUS_INVALID_VALUE",
		8: "CUBLAS_STATUS_ARCH_MISMATCH", 11: "CUBLAS_STATUS_MAPPING_ERROR", 13: "CUBLAS_STATUS_EXECUTION_FAILED",
		14: "CUBLAS_STATUS_INTERNAL_ERROR", 15: "CUBLAS_STATUS_NOT_SUPPORTED", 16: "CUBLAS_STATUS_LICENSE_ERROR",
	}
	if n, ok := names[s]; ok {
		return fmt.Errorf("%s (%d)", n, int(s))
	}
	return fmt.Errorf("cuBLAS status %d", int(s))
}

// blasHandle is a cuBLAS handle bound to one stream: one per machine, so
// machines on different goroutines never share a handle.
type blasHandle struct {
	lib     *blasLib
	h       unsafe.Pointer
	version int
}

// newBLASHandle creates a handle that queues its work on stream; call it
// inside gpu.do (cuBLAS binds the handle to the current context).
func newBLASHandle(stream cu.Stream) (*blasHandle, error) {
	lib, h, err := createBLASHandle()
	if err != nil {
		return nil, err
	}
	b := &blasHandle{lib: lib, h: h}
	if err := blasStatus(C.gk_cublas_set_stream(lib.c, h, C.CUstream(unsafe.Pointer(stream.C())))); err != nil {
		return nil, errors.Join(fmt.Errorf("cublasSetStream: %w", err), b.close())
	}
	var v C.int
	if err := blasStatus(C.gk_cublas_version(lib.c, h, &v)); err != nil {
		return nil, errors.Join(fmt.Errorf("cublasGetVersion: %w", err), b.close())
	}
	b.version = int(v)
	return b, nil
}

// close destroys the handle; call it inside gpu.do.
func (b *blasHandle) close() error {
	if b.h == nil {
		return nil
	}
	h := b.h
	b.h = nil
	if err := blasStatus(C.gk_cublas_destroy(b.lib.c, h)); err != nil {
		return fmt.Errorf("cublasDestroy: %w", err)
	}
	return nil
}

// sgemm implements gpuBLAS: cublasSgemm, column-major.
func (b *blasHandle) sgemm(transA, transB bool, m, n, k int, alpha float32, a devicePtr, lda int, bm devicePtr, ldb int,
	beta float32, c devicePtr, ldc int) error {
	op := func(trans bool) C.int {
		if trans {
			return 1 // CUBLAS_OP_T
		}
		return 0 // CUBLAS_OP_N
	}
	return blasStatus(C.gk_sgemm(b.lib.c, b.h, op(transA), op(transB), C.int(m), C.int(n), C.int(k),
		C.float(alpha), C.CUdeviceptr(a), C.int(lda), C.CUdeviceptr(bm), C.int(ldb),
		C.float(beta), C.CUdeviceptr(c), C.int(ldc)))
}
