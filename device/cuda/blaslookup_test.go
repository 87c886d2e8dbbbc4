package cuda

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fakeBLAS is a machine for chooseBLAS: which files exist and which
// libraries load but cannot create a handle.
type fakeBLAS struct {
	t         *testing.T
	env       map[string]string
	toolkit   map[string][]string // glob pattern → files
	python    []string
	pythonErr error
	works     map[string]bool // loads and creates a handle
	noHandle  map[string]bool // loads, cublasCreate fails
	tried     []string        // in order
	ranPython bool
}

func (f *fakeBLAS) lookup() blasLookup {
	return blasLookup{
		getenv: func(k string) string { return f.env[k] },
		glob: func(p string) ([]string, error) {
			if !slices.Contains(blasToolkitGlobs, p) {
				f.t.Errorf("glob(%q): not a toolkit pattern", p)
			}
			return f.toolkit[p], nil
		},
		sitePackages: func() ([]string, error) { f.ranPython = true; return f.python, f.pythonErr },
	}
}

func (f *fakeBLAS) try(c blasCandidate) (string, error) {
	f.tried = append(f.tried, c.path)
	switch {
	case f.works[c.path]:
		return "lib:" + c.path, nil
	case f.noHandle[c.path]:
		return "", errors.New("loads, but cublasCreate: CUBLAS_STATUS_NOT_INITIALIZED (1)")
	}
	return "", errors.New(c.path + ": cannot open shared object file: No such file or directory")
}

const (
	tk12 = "/usr/local/cuda-12.4/targets/x86_64-linux/lib/libcublas.so.12"
	tk13 = "/usr/local/cuda-13.0/targets/x86_64-linux/lib/libcublas.so.13"
	py13 = "/venv/lib/python3.12/site-packages/nvidia/cublas/lib/libcublas.so.13"
	py12 = "/venv/lib/python3.12/site-packages/nvidia/cublas/lib/libcublas.so.12"
)

func TestChooseBLASOnTheLoaderPath(t *testing.T) {
	f := &fakeBLAS{t: t, works: map[string]bool{"libcublas.so.12": true, tk13: true}}
	lib, c, err := chooseBLAS(f.lookup(), f.try)
	if err != nil || lib != "lib:libcublas.so.12" || c.where != "the loader's path" {
		t.Fatalf("chooseBLAS = %q, %+v, %v; want libcublas.so.12 from the loader's path", lib, c, err)
	}
	if want := []string{"libcublas.so.13", "libcublas.so.12"}; !slices.Equal(f.tried, want) {
		t.Errorf("tried %q, want %q (newest first, stop at the first that works)", f.tried, want)
	}
	if f.ranPython {
		t.Error("python3 ran although the loader found cuBLAS")
	}
}

// A cuBLAS that loads but cannot create a handle (newer than the driver)
// is passed over for the next candidate.
func TestChooseBLASSkipsOneThatCannotCreateAHandle(t *testing.T) {
	f := &fakeBLAS{t: t,
		toolkit:  map[string][]string{blasToolkitGlobs[0]: {tk12, tk13}},
		noHandle: map[string]bool{"libcublas.so.13": true, tk13: true},
		works:    map[string]bool{tk12: true, py13: true},
		python:   []string{py13},
	}
	lib, c, err := chooseBLAS(f.lookup(), f.try)
	if err != nil || lib != "lib:"+tk12 || c.where != "a CUDA toolkit" {
		t.Fatalf("chooseBLAS = %q, %+v, %v; want %s from a CUDA toolkit", lib, c, err, tk12)
	}
	if want := []string{"libcublas.so.13", "libcublas.so.12", "libcublas.so.11", tk13, tk12}; !slices.Equal(f.tried, want) {
		t.Errorf("tried %q, want %q", f.tried, want)
	}
}

func TestChooseBLASFromPythonSitePackages(t *testing.T) {
	f := &fakeBLAS{t: t, python: []string{py13, py12}, noHandle: map[string]bool{py13: true}, works: map[string]bool{py12: true}}
	lib, c, err := chooseBLAS(f.lookup(), f.try)
	if err != nil || lib != "lib:"+py12 || c.where != "python3's site-packages" {
		t.Fatalf("chooseBLAS = %q, %+v, %v; want %s from python3's site-packages", lib, c, err, py12)
	}
	if c.lt() != "/venv/lib/python3.12/site-packages/nvidia/cublas/lib/libcublasLt.so.12" {
		t.Errorf("libcublasLt beside %s: %q", c.path, c.lt())
	}
}

func TestChooseBLASNoneWorks(t *testing.T) {
	f := &fakeBLAS{t: t,
		toolkit:   map[string][]string{blasToolkitGlobs[1]: {"/usr/local/cuda-11.8/lib64/libcublas.so.11"}},
		noHandle:  map[string]bool{"/usr/local/cuda-11.8/lib64/libcublas.so.11": true},
		pythonErr: errors.New("no python3 on $PATH"),
	}
	_, _, err := chooseBLAS(f.lookup(), f.try)
	if err == nil {
		t.Fatal("chooseBLAS found a cuBLAS where none works")
	}
	msg := err.Error()
	for _, want := range []string{
		"no usable cuBLAS",
		"libcublas.so.13 (the loader's path): libcublas.so.13: cannot open shared object file",
		"libcublas.so.11 (the loader's path)",
		"/usr/local/cuda-11.8/lib64/libcublas.so.11 (a CUDA toolkit): loads, but cublasCreate: CUBLAS_STATUS_NOT_INITIALIZED",
		"python3's site-packages: no python3 on $PATH",
		"LD_LIBRARY_PATH, ldconfig -p",
		"/usr/local/cuda*/targets/x86_64-linux/lib",
		"nvidia/cublas/lib",
		"set $GOKERAS_CUBLAS to the library's path",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q\ndoes not contain %q", msg, want)
		}
	}
}

// $GOKERAS_CUBLAS is the only candidate when set.
func TestChooseBLASFromEnv(t *testing.T) {
	const p = "/opt/cublas/libcublas.so.12"
	f := &fakeBLAS{t: t, env: map[string]string{BLASEnv: p}, works: map[string]bool{p: true, "libcublas.so.13": true}}
	if lib, c, err := chooseBLAS(f.lookup(), f.try); err != nil || lib != "lib:"+p || c.where != "$GOKERAS_CUBLAS" {
		t.Fatalf("chooseBLAS = %q, %+v, %v; want %s from $GOKERAS_CUBLAS", lib, c, err, p)
	}

	f = &fakeBLAS{t: t, env: map[string]string{BLASEnv: p}, works: map[string]bool{"libcublas.so.13": true}}
	_, _, err := chooseBLAS(f.lookup(), f.try)
	if err == nil || !strings.Contains(err.Error(), "cuBLAS from $GOKERAS_CUBLAS does not work: "+p) ||
		!strings.Contains(err.Error(), "or unset it to search") {
		t.Errorf("chooseBLAS with a bad $GOKERAS_CUBLAS: %v", err)
	}
	if !slices.Equal(f.tried, []string{p}) || f.ranPython {
		t.Errorf("with $GOKERAS_CUBLAS set, tried %q (python3 ran: %t), want only it", f.tried, f.ranPython)
	}
}

func TestNewestBLASFirst(t *testing.T) {
	files := []string{
		"/usr/local/cuda-11.8/lib64/libcublas.so.11",
		"/usr/local/cuda-12.4/lib64/libcublas.so.12",
		"/usr/local/cuda-13.0/lib64/libcublas.so.13",
		"/usr/local/cuda-12.9/lib64/libcublas.so.12",
		"/usr/local/cuda-9.2/lib64/libcublas.so.9",
	}
	slices.SortStableFunc(files, newestBLASFirst)
	want := []string{
		"/usr/local/cuda-13.0/lib64/libcublas.so.13",
		"/usr/local/cuda-12.9/lib64/libcublas.so.12",
		"/usr/local/cuda-12.4/lib64/libcublas.so.12",
		"/usr/local/cuda-11.8/lib64/libcublas.so.11",
		"/usr/local/cuda-9.2/lib64/libcublas.so.9",
	}
	if !slices.Equal(files, want) {
		t.Errorf("sorted:\n%q\nwant\n%q", files, want)
	}
	if lt := (blasCandidate{path: "libcublas.so.13"}).lt(); lt != "" {
		t.Errorf("a soname has no libcublasLt path beside it, got %q", lt)
	}
}

// fakeSitePackages makes a site-packages directory holding cuBLAS as pip's
// nvidia-cublas wheels install it (CUDA 12 and 13 layouts).
func fakeSitePackages(t *testing.T) (dir string, libs []string) {
	t.Helper()
	dir = t.TempDir()
	for _, p := range []string{"nvidia/cublas/lib/libcublas.so.12", "nvidia/cublas/lib/libcublasLt.so.12",
		"nvidia/cu13/lib/libcublas.so.13", "nvidia/cu13/lib/libcublasLt.so.13", "nvidia/cuda_runtime/lib/libcudart.so.12"} {
		f := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, []string{filepath.Join(dir, "nvidia/cu13/lib/libcublas.so.13"), filepath.Join(dir, "nvidia/cublas/lib/libcublas.so.12")}
}

// The python3 script finds pip's cuBLAS on sys.path, newest first, and
// nothing else.
func TestPythonFindsSitePackagesCuBLAS(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3 on $PATH")
	}
	dir, want := fakeSitePackages(t)
	t.Setenv("PYTHONPATH", dir)
	got, err := pythonCuBLAS()
	if err != nil {
		t.Fatal(err)
	}
	var ours []string
	for _, f := range got {
		if strings.HasPrefix(f, dir+"/") {
			ours = append(ours, f)
		}
	}
	if !slices.Equal(ours, want) {
		t.Errorf("python3 found %q in %s, want %q", ours, dir, want)
	}
}

// scripts/lib/cublas.sh runs the same python3 script as the Go loader.
func TestScriptRunsTheSamePython(t *testing.T) {
	sh, err := os.ReadFile("../../scripts/lib/cublas.sh")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(sh), "\ncublas_python_script='")
	script, _, ok2 := strings.Cut(rest, "'\n")
	if !ok || !ok2 {
		t.Fatal("scripts/lib/cublas.sh has no cublas_python_script='...' line")
	}
	if script != blasSitePackagesScript {
		t.Errorf("scripts/lib/cublas.sh's python script differs from blasSitePackagesScript:\n%s\nwant\n%s", script, blasSitePackagesScript)
	}
}

// cublasSh runs bash with scripts/lib/cublas.sh sourced.
func cublasSh(t *testing.T, env []string, cmd string) (string, error) {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	c := exec.Command(bash, "-c", "set -euo pipefail; . ../../scripts/lib/cublas.sh; "+cmd)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, BLASEnv+"=") && !strings.HasPrefix(kv, "LD_LIBRARY_PATH=") && !strings.HasPrefix(kv, "PYTHON") {
			c.Env = append(c.Env, kv)
		}
	}
	c.Env = append(c.Env, env...)
	var stderr strings.Builder
	c.Stderr = &stderr
	out, err := c.Output()
	if stderr.Len() > 0 {
		t.Errorf("%s wrote to standard error:\n%s", cmd, stderr.String())
	}
	return string(out), err
}

// The scripts' lookup keeps the Go loader's order: the loader's path,
// newest soname first, before python3's site-packages.
func TestScriptLookupOrder(t *testing.T) {
	ld := t.TempDir()
	for _, f := range []string{"libcublas.so.12", "libcublas.so.13"} {
		if err := os.WriteFile(filepath.Join(ld, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	site, pyLibs := fakeSitePackages(t)
	env := []string{"LD_LIBRARY_PATH=/nonexistent:" + ld, "PYTHONPATH=" + site}
	if _, err := exec.LookPath("python3"); err != nil {
		pyLibs = nil
	}
	out, err := cublasSh(t, env, "cublas_candidates")
	if err != nil {
		t.Fatalf("cublas_candidates: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	want := []string{ld + "/libcublas.so.13\tLD_LIBRARY_PATH", ld + "/libcublas.so.12\tLD_LIBRARY_PATH"}
	for _, f := range pyLibs {
		want = append(want, f+"\tpython3's site-packages")
	}
	var ours []string
	for _, l := range lines {
		if strings.HasPrefix(l, ld+"/") || strings.HasPrefix(l, site+"/") {
			ours = append(ours, l)
		}
	}
	if !slices.Equal(ours, want) || lines[0] != want[0] {
		t.Errorf("cublas_candidates:\n%s\nwant these lines in this order, the first first:\n%s", out, strings.Join(want, "\n"))
	}

	out, err = cublasSh(t, env, `cublas_find; echo "[$CUBLAS_LIB] [$CUBLAS_WHERE]"`)
	if want := "cuBLAS: " + ld + "/libcublas.so.13 (LD_LIBRARY_PATH)\n[" + ld + "/libcublas.so.13] [LD_LIBRARY_PATH]\n"; err != nil || out != want {
		t.Errorf("cublas_find: %v\n%s\nwant\n%s", err, out, want)
	}

	lib := filepath.Join(ld, "libcublas.so.12")
	out, err = cublasSh(t, append(env, BLASEnv+"="+lib), "cublas_candidates")
	if err != nil || out != lib+"\t$GOKERAS_CUBLAS\n" {
		t.Errorf("cublas_candidates with $%s set: %v\n%s", BLASEnv, err, out)
	}
	out, err = cublasSh(t, append(env, BLASEnv+"=/nonexistent/libcublas.so.12"), "cublas_find")
	if err == nil || !strings.Contains(out, "$GOKERAS_CUBLAS=/nonexistent/libcublas.so.12 does not exist") {
		t.Errorf("cublas_find with $%s set to a missing file: %v\n%s", BLASEnv, err, out)
	}
}
