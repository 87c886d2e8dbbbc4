package cuda

// Where cuBLAS is looked for, and how one is chosen: the candidates in
// order, and the first that loads and creates a handle wins. This file has
// no build tag (it calls no C) so that its tests run in every build;
// blas.go opens the candidates. scripts/lib/cublas.sh looks in the same
// places in the same order for the scripts (gpu-verify.sh, bench/gpu.sh).

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// BLASEnv names an environment variable holding the path of the cuBLAS
// library to use (say /usr/local/cuda-12.4/lib64/libcublas.so.12); when set,
// nothing else is tried.
const BLASEnv = "GOKERAS_CUBLAS"

// blasSonames are tried on the loader's path, the newest cuBLAS first. The
// v2 API gokeras calls is the same in all of them.
var blasSonames = []string{"libcublas.so.13", "libcublas.so.12", "libcublas.so.11"}

// blasToolkitGlobs are where NVIDIA's CUDA toolkit installs cuBLAS.
var blasToolkitGlobs = []string{
	"/usr/local/cuda*/targets/x86_64-linux/lib/libcublas.so.1[0-9]",
	"/usr/local/cuda*/lib64/libcublas.so.1[0-9]",
}

// blasSitePackagesScript prints the cuBLAS libraries of python3's
// site-packages (pip's nvidia-cublas wheels, which torch depends on), one a
// line, newest soname first. scripts/lib/cublas.sh runs the same text
// (a test checks).
const blasSitePackagesScript = `import glob, os, re, site, sys
dirs = list(getattr(site, "getsitepackages", lambda: [])()) + [site.getusersitepackages()] + sys.path
found = {}
for d in dirs:
    for f in glob.glob(os.path.join(d or ".", "nvidia", "cu*", "lib", "libcublas.so.*")):
        m = re.search(r"/libcublas[.]so[.]([0-9]+)$", f)
        if m:
            found.setdefault(os.path.abspath(f), int(m.group(1)))
for f, v in sorted(found.items(), key=lambda kv: -kv[1]):
    print(f)`

// blasWhere says where the search looks, for error messages.
const blasWhere = "the loader's path (LD_LIBRARY_PATH, ldconfig -p) for libcublas.so.13, .12 and .11; " +
	"/usr/local/cuda*/targets/x86_64-linux/lib and /usr/local/cuda*/lib64; " +
	"python3's site-packages (nvidia/cublas/lib, nvidia/cu13/lib)"

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
	return blasLookup{getenv: os.Getenv, glob: filepath.Glob, sitePackages: pythonCuBLAS}
}

// pythonCuBLAS runs blasSitePackagesScript with python3.
func pythonCuBLAS() ([]string, error) {
	py, err := exec.LookPath("python3")
	if err != nil {
		return nil, errors.New("no python3 on $PATH")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, py, "-c", blasSitePackagesScript).Output()
	if err != nil {
		return nil, fmt.Errorf("%s -c ...: %w", py, err)
	}
	return strings.Fields(string(out)), nil
}

// chooseBLAS tries the candidates in order (try opens one and creates a
// handle with it) and returns the first that works. A library that loads
// but cannot create a handle (a cuBLAS newer than the driver, say) is
// passed over for the next. The error lists every candidate tried, why
// each failed, and where the search looked.
func chooseBLAS[L any](lk blasLookup, try func(blasCandidate) (L, error)) (L, blasCandidate, error) {
	var failures []string
	attempt := func(c blasCandidate) (L, bool) {
		l, err := try(c)
		if err != nil {
			failures = append(failures, fmt.Sprintf("%s (%s): %v", c.path, c.where, err))
			return l, false
		}
		return l, true
	}
	var zero L
	if p := lk.getenv(BLASEnv); p != "" {
		c := blasCandidate{path: p, where: "$" + BLASEnv}
		if l, ok := attempt(c); ok {
			return l, c, nil
		}
		return zero, blasCandidate{}, fmt.Errorf("cuBLAS from $%s does not work: %s: set $%s to a libcublas.so.13, "+
			".so.12 or .so.11 that works with this driver, or unset it to search %s", BLASEnv, failures[0], BLASEnv, blasWhere)
	}
	for _, name := range blasSonames {
		c := blasCandidate{path: name, where: "the loader's path"}
		if l, ok := attempt(c); ok {
			return l, c, nil
		}
	}
	var files []string
	for _, g := range blasToolkitGlobs {
		m, _ := lk.glob(g) // only ErrBadPattern, and the patterns are fixed
		files = append(files, m...)
	}
	slices.SortStableFunc(files, newestBLASFirst)
	for _, f := range files {
		c := blasCandidate{path: f, where: "a CUDA toolkit"}
		if l, ok := attempt(c); ok {
			return l, c, nil
		}
	}
	py, err := lk.sitePackages()
	if err != nil {
		failures = append(failures, "python3's site-packages: "+err.Error())
	}
	for _, f := range py {
		c := blasCandidate{path: f, where: "python3's site-packages"}
		if l, ok := attempt(c); ok {
			return l, c, nil
		}
	}
	return zero, blasCandidate{}, fmt.Errorf("no usable cuBLAS (looked in %s; tried %s): install one (pip install "+
		"nvidia-cublas-cu12, or the CUDA toolkit; Debian: libcublas12), add its directory to LD_LIBRARY_PATH, "+
		"or set $%s to the library's path", blasWhere, strings.Join(failures, "; "), BLASEnv)
}

// newestBLASFirst orders cuBLAS files by soname version, newest first, then
// by path, later toolkits first.
func newestBLASFirst(a, b string) int {
	ver := func(p string) string { _, v, _ := strings.Cut(filepath.Base(p), ".so."); return v }
	va, vb := ver(a), ver(b)
	if len(va) != len(vb) {
		return len(vb) - len(va)
	}
	if c := strings.Compare(vb, va); c != 0 {
		return c
	}
	return strings.Compare(b, a)
}
