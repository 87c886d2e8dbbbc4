package cuda

// Where cuBLAS is looked for, and how one is chosen: the candidates in
// order, and the first that loads and creates a handle wins. This file has
// no build tag (it calls no C) so that its tests run in every build;
// blas.go opens the candidates; internal/sys/nvlib, shared with NCCL,
// does the search. scripts/lib/cublas.sh looks in the same
// places in the same order for the scripts (gpu-verify.sh, bench/gpu.sh).

import (
	"path/filepath"
	"strings"

	"github.com/gokeras/gokeras/internal/sys/nvlib"
)

// BLASEnv names an environment variable holding the path of the cuBLAS
// library to use (say /usr/local/cuda-12.4/lib64/libcublas.so.12); when set,
// nothing else is tried.
const BLASEnv = "GOKERAS_CUBLAS"

// blasSpec is what internal/sys/nvlib, the search shared with NCCL, looks for.
var blasSpec = nvlib.Spec{
	Name: "cuBLAS",
	Env:  BLASEnv,
	// The v2 API gokeras calls is the same in all of them.
	Sonames: []string{"libcublas.so.13", "libcublas.so.12", "libcublas.so.11"},
	// Where NVIDIA's CUDA toolkit installs cuBLAS.
	Globs: []string{
		"/usr/local/cuda*/targets/x86_64-linux/lib/libcublas.so.1[0-9]",
		"/usr/local/cuda*/lib64/libcublas.so.1[0-9]",
	},
	// pip's nvidia-cublas-cu12 puts it in nvidia/cublas/lib,
	// nvidia-cublas (CUDA 13) in nvidia/cu13/lib.
	PyDir: "cu*",
	PyLib: "libcublas",
	Where: "the loader's path (LD_LIBRARY_PATH, ldconfig -p) for libcublas.so.13, .12 and .11; " +
		"/usr/local/cuda*/targets/x86_64-linux/lib and /usr/local/cuda*/lib64; " +
		"python3's site-packages (nvidia/cublas/lib, nvidia/cu13/lib)",
	EnvWants: "a libcublas.so.13, .so.12 or .so.11 that works with this driver",
	Install:  "pip install nvidia-cublas-cu12, or the CUDA toolkit; Debian: libcublas12",
}

// blasSonames are tried on the loader's path, the newest cuBLAS first.
var blasSonames = blasSpec.Sonames

// blasToolkitGlobs are where NVIDIA's CUDA toolkit installs cuBLAS.
var blasToolkitGlobs = blasSpec.Globs

// blasSitePackagesScript prints the cuBLAS libraries of python3's
// site-packages (pip's nvidia-cublas wheels, which torch depends on), one a
// line, newest soname first. scripts/lib/cublas.sh runs the same text
// (a test checks).
var blasSitePackagesScript = blasSpec.PythonScript()

// blasCandidate is one library to try.
type blasCandidate struct {
	path  string // what dlopen is given: a soname or a file's path
	where string // how it was found
}

// lt is the libcublasLt of the same release beside a library given by its
// path (cuBLAS needs it; pip's wheels and the toolkit keep it in the same
// directory, which need not be on the loader's path), or "".
func (c blasCandidate) lt() string {
	dir, base := filepath.Split(c.path)
	if dir == "" || !strings.HasPrefix(base, "libcublas.so") {
		return ""
	}
	return dir + "libcublasLt" + strings.TrimPrefix(base, "libcublas")
}

// blasLookup finds the candidates; its fields are the outside world, so
// tests can replace them.
type blasLookup struct {
	getenv func(string) string
	glob   func(string) ([]string, error)
	// sitePackages lists python3's cuBLAS libraries (run only when the
	// candidates before it all failed: it starts python3).
	sitePackages func() ([]string, error)
}

func defaultBLASLookup() blasLookup {
	lk := nvlib.DefaultLookup(blasSpec)
	return blasLookup{getenv: lk.Getenv, glob: lk.Glob, sitePackages: lk.SitePackages}
}

// pythonCuBLAS runs blasSitePackagesScript with python3.
func pythonCuBLAS() ([]string, error) { return nvlib.RunPython(blasSitePackagesScript) }

// chooseBLAS tries the candidates in order (try opens one and creates a
// handle with it) and returns the first that works (nvlib.Choose). A
// library that loads but cannot create a handle (a cuBLAS newer than the
// driver, say) is passed over for the next. The error lists every
// candidate tried, why each failed, and where the search looked.
func chooseBLAS[L any](lk blasLookup, try func(blasCandidate) (L, error)) (L, blasCandidate, error) {
	l, c, err := nvlib.Choose(blasSpec, nvlib.Lookup{Getenv: lk.getenv, Glob: lk.glob, SitePackages: lk.sitePackages},
		func(c nvlib.Candidate) (L, error) { return try(blasCandidate{path: c.Path, where: c.Where}) })
	return l, blasCandidate{path: c.Path, where: c.Where}, err
}

// newestBLASFirst orders cuBLAS files by soname version, newest first, then
// by path, later toolkits first.
func newestBLASFirst(a, b string) int { return nvlib.NewestFirst(a, b) }
