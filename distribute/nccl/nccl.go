package nccl

import (
	"fmt"
	"runtime"
	"unsafe"

	"github.com/gokeras/gokeras/internal/sys/nvlib"
)

// EnvVar names an environment variable holding the path of the libnccl.so.2
// to use; when set, nothing else is tried.
const EnvVar = "GOKERAS_NCCL"

// InstallHint says how to get NCCL.
const InstallHint = "pip install nvidia-nccl-cu12, or nvidia-nccl-cu13 with CUDA 13 (torch installs one); " +
	"from NVIDIA's apt repository: libnccl2"

// spec is where Load looks, with internal/sys/nvlib (the search cuBLAS uses).
// /usr/lib/x86_64-linux-gnu, where NVIDIA's libnccl2 package puts it, is
// one of the loader's default directories, so the soname finds it.
var spec = nvlib.Spec{
	Name:    "NCCL",
	Env:     EnvVar,
	Sonames: []string{"libnccl.so.2"},
	Globs: []string{
		"/usr/local/cuda*/targets/x86_64-linux/lib/libnccl.so.2",
		"/usr/local/cuda*/lib64/libnccl.so.2",
	},
	// pip's nvidia-nccl-cu12 and nvidia-nccl-cu13 wheels.
	PyDir: "nccl",
	PyLib: "libnccl",
	Where: "the loader's path (LD_LIBRARY_PATH, ldconfig -p, /usr/lib/x86_64-linux-gnu) for libnccl.so.2; " +
		"/usr/local/cuda*/targets/x86_64-linux/lib and /usr/local/cuda*/lib64; " +
		"python3's site-packages (nvidia/nccl/lib)",
	EnvWants: "a libnccl.so.2",
	Install:  InstallHint,
}

// The values of nccl.h's enums that gokeras passes or checks (NCCL 2.x:
// ncclResult_t, ncclDataType_t, ncclRedOp_t; unchanged since 2.0).
const (
	ncclSuccess = 0 // ncclResult_t: ncclSuccess = 0
	ncclFloat32 = 7 // ncclDataType_t: ncclFloat32 = 7 (= ncclFloat)
	ncclSum     = 0 // ncclRedOp_t: ncclSum = 0
)

// UniqueIDBytes is NCCL_UNIQUE_ID_BYTES of nccl.h.
const UniqueIDBytes = 128

// UniqueID is nccl.h's ncclUniqueId, struct { char internal[128]; }: rank
// 0 makes it (NewUniqueID) and sends it to the others (over MPI).
type UniqueID [UniqueIDBytes]byte

// Lib is a loaded NCCL.
type Lib struct {
	path, where string

	// call calls the C function at fn with integer and pointer arguments
	// (purego.SyscallN) and returns its integer result; tests replace it.
	call func(fn uintptr, args ...uintptr) uintptr

	// The addresses of the functions gokeras calls.
	getVersion, getUniqueID, commInitRank, allReduce, commDestroy, getErrorString uintptr
}

// Path is the library as it was given to dlopen, and Where how it was found.
func (l *Lib) Path() string  { return l.path }
func (l *Lib) Where() string { return l.where }

// String names the library and where it came from.
func (l *Lib) String() string { return l.path + " (" + l.where + ")" }

// Error is a call that did not return ncclSuccess.
type Error struct {
	Call string // "ncclAllReduce"
	Code int32  // ncclResult_t
	Text string // ncclGetErrorString's
}

func (e *Error) Error() string {
	return fmt.Sprintf("nccl: %s: %s (ncclResult_t %d)", e.Call, e.Text, e.Code)
}

// check turns a ncclResult_t into an error naming the call.
func (l *Lib) check(name string, r uintptr) error {
	code := int32(r) // ncclResult_t is a C enum: an int
	if code == ncclSuccess {
		return nil
	}
	return &Error{Call: name, Code: code, Text: l.errorString(code)}
}

// errorString is ncclGetErrorString(code).
func (l *Lib) errorString(code int32) string {
	p := l.call(l.getErrorString, uintptr(code))
	if p == 0 {
		return "unknown error"
	}
	return goString(p)
}

// goString copies the NUL-terminated C string at p (memory the library
// owns: ncclGetErrorString returns static text).
func goString(p uintptr) string {
	// The double indirection keeps go vet's unsafeptr check quiet about
	// a uintptr that is not a Go pointer.
	b := *(**byte)(unsafe.Pointer(&p))
	n := 0
	for *(*byte)(unsafe.Add(unsafe.Pointer(b), n)) != 0 && n < 4096 {
		n++
	}
	return string(unsafe.Slice(b, n))
}

// Version is ncclGetVersion's NCCL_VERSION_CODE: major*10000 +
// minor*100 + patch since NCCL 2.9 (22703 is 2.27.3), major*1000 +
// minor*100 + patch before. It needs no GPU.
func (l *Lib) Version() (int, error) {
	var pin runtime.Pinner
	defer pin.Unpin()
	v := new(int32)
	pin.Pin(v) // the library writes to it: keep it where it is
	if err := l.check("ncclGetVersion", l.call(l.getVersion, uintptr(unsafe.Pointer(v)))); err != nil {
		return 0, err
	}
	return int(*v), nil
}

// NewUniqueID is ncclGetUniqueId: rank 0 calls it and broadcasts the ID.
func (l *Lib) NewUniqueID() (UniqueID, error) {
	var pin runtime.Pinner
	defer pin.Unpin()
	id := new(UniqueID)
	pin.Pin(id)
	if err := l.check("ncclGetUniqueId", l.call(l.getUniqueID, uintptr(unsafe.Pointer(id)))); err != nil {
		return UniqueID{}, err
	}
	return *id, nil
}

// Comm is an NCCL communicator (ncclComm_t).
type Comm struct {
	lib    *Lib
	handle uintptr
}

// InitRank is ncclCommInitRank: every rank calls it, with the same ID and
// nranks, to make the communicator of rank rank (0 <= rank < nranks). It
// uses the current CUDA device of the calling thread.
func (l *Lib) InitRank(nranks int, id UniqueID, rank int) (Comm, error) {
	if nranks < 1 || nranks > 1<<31-1 || rank < 0 || rank >= nranks {
		return Comm{}, fmt.Errorf("nccl: ncclCommInitRank: rank %d of %d ranks: want 0 <= rank < nranks", rank, nranks)
	}
	var pin runtime.Pinner
	defer pin.Unpin()
	comm := new(uintptr)
	pin.Pin(comm)
	args, err := initRankArgs(runtime.GOARCH, uintptr(unsafe.Pointer(comm)), int32(nranks), &id, int32(rank), &pin)
	if err != nil {
		return Comm{}, err
	}
	if err := l.check("ncclCommInitRank", l.call(l.commInitRank, args...)); err != nil {
		return Comm{}, err
	}
	return Comm{lib: l, handle: *comm}, nil
}

// initRankArgs packs ncclCommInitRank(ncclComm_t* comm, int nranks,
// ncclUniqueId commId, int rank) for purego.SyscallN, which passes its
// first six arguments in the integer registers and the rest on the stack,
// in order, and knows nothing of structs. commId is a 128-byte struct
// passed by value, which each ABI passes its own way:
//
//   - amd64 (System V): a struct over 16 bytes is of class MEMORY and is
//     copied onto the stack, while the integer arguments after it still
//     take the next registers. So comm, nranks and rank go in rdi, rsi and
//     rdx, three unused words fill rcx, r8 and r9, and the ID's sixteen
//     eightbytes follow: SyscallN puts them on the stack, where the callee
//     reads the struct.
//   - arm64 (AAPCS64): a composite over 16 bytes is copied by the caller
//     and passed as a pointer to the copy, in the next register: comm,
//     nranks, &copy, rank in x0-x3. pin keeps the copy in place.
//
// (purego.RegisterFunc does the same for struct arguments; doing it here
// keeps the call behind l.call, where the tests see it.)
func initRankArgs(goarch string, comm uintptr, nranks int32, id *UniqueID, rank int32, pin *runtime.Pinner) ([]uintptr, error) {
	switch goarch {
	case "amd64":
		args := []uintptr{comm, uintptr(nranks), uintptr(rank), 0, 0, 0}
		for i := 0; i < UniqueIDBytes; i += 8 {
			var w uint64
			for j := 7; j >= 0; j-- { // little-endian eightbytes
				w = w<<8 | uint64(id[i+j])
			}
			args = append(args, uintptr(w))
		}
		return args, nil
	case "arm64":
		cp := new(UniqueID)
		*cp = *id
		pin.Pin(cp)
		return []uintptr{comm, uintptr(nranks), uintptr(unsafe.Pointer(cp)), uintptr(rank)}, nil
	}
	return nil, fmt.Errorf("nccl: ncclCommInitRank: passing ncclUniqueId by value is not implemented on %s (amd64 and arm64 are)", goarch)
}

// AllReduceSumFloat32 is ncclAllReduce(send, recv, count, ncclFloat32,
// ncclSum, comm, stream): it sums count float32s of device memory send
// over the ranks into device memory recv (send == recv is in place),
// enqueued on the CUDA stream (a CUstream; 0 is the legacy default
// stream). It returns once enqueued, not when done.
func (c Comm) AllReduceSumFloat32(send, recv, count, stream uintptr) error {
	return c.lib.check("ncclAllReduce", c.lib.call(c.lib.allReduce, send, recv, count, ncclFloat32, ncclSum, c.handle, stream))
}

// Destroy is ncclCommDestroy: it frees the communicator once the
// operations enqueued on it are done.
func (c Comm) Destroy() error {
	return c.lib.check("ncclCommDestroy", c.lib.call(c.lib.commDestroy, c.handle))
}
