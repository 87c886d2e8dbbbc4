package cuinit

// This file builds without cgo and without the cudavm tag, so that its
// tests run in every build: it only turns what cuInit returned into words.

// RequireGPUEnv names the environment variable that, set to a non-empty
// value, makes a test binary fail instead of skip when there is no usable
// GPU (scripts/gpu-verify.sh sets it).
const RequireGPUEnv = "GOKERAS_REQUIRE_GPU"

// errStubLibrary is CUDA_ERROR_STUB_LIBRARY: every call into the CUDA
// toolkit's link stub (lib64/stubs/libcuda.so) returns it, and the stub's
// cuGetErrorName fails too, so the driver cannot name it.
const errStubLibrary = 34

// errorNames names the CUresults a failing cuInit returns most often, for
// when the loaded library cannot name them itself (the stub cannot).
var errorNames = map[int]string{
	3:              "CUDA_ERROR_NOT_INITIALIZED",
	errStubLibrary: "CUDA_ERROR_STUB_LIBRARY",
	35:             "CUDA_ERROR_INSUFFICIENT_DRIVER",
	100:            "CUDA_ERROR_NO_DEVICE",
	101:            "CUDA_ERROR_INVALID_DEVICE",
	304:            "CUDA_ERROR_OPERATING_SYSTEM",
	999:            "CUDA_ERROR_UNKNOWN",
}

// Why describes a failed cuInit. code is the CUresult; name and desc are
// what cuGetErrorName and cuGetErrorString said ("" where they failed);
// lib is the path of the libcuda.so.1 the dynamic loader chose ("" when
// not known).
func Why(code int, name, desc, lib string) string {
	if name == "" {
		name = errorNames[code]
	}
	if name == "" {
		name = "unknown CUDA error"
	}
	s := "cuInit failed: " + name + " (" + itoa(code) + ")"
	if desc != "" {
		s += ": " + desc
	}
	if code == errStubLibrary {
		where := "the libcuda.so.1 loaded"
		if lib != "" {
			where = lib
		}
		return s + ": " + where + " is the CUDA toolkit's link stub (lib64/stubs/libcuda.so, or .cuda/lib/stubs " +
			"from scripts/install-cuda.sh), which only lets programs link; at run time the NVIDIA driver's " +
			"libcuda.so.1 must be loaded instead: run on a machine with an NVIDIA GPU and its driver installed " +
			"(nvidia-smi works there), and take the stubs directory out of LD_LIBRARY_PATH"
	}
	if lib != "" {
		s += " (libcuda.so.1: " + lib + ")"
	}
	return s
}

// itoa formats an int (strconv is not imported: see the package
// documentation for why this package imports so little).
func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	neg := n < 0
	u := uint64(n)
	if neg {
		u = uint64(-n)
	}
	var b [21]byte
	i := len(b)
	for ; u > 0; u /= 10 {
		i--
		b[i] = byte('0' + u%10)
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}
