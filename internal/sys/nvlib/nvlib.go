// Package nvlib finds NVIDIA's run-time libraries (cuBLAS, NCCL) the one
// way gokeras looks for them: the candidates in order, and the first that
// loads and passes the caller's check wins.
//
//  1. the file an environment variable names, and nothing else when it is set;
//  2. the sonames, newest first, on the loader's path (dlopen searches
//     LD_LIBRARY_PATH, ldconfig's cache and the default directories);
//  3. files matching fixed globs (a CUDA toolkit's directories), newest
//     soname first;
//  4. python3's site-packages, where pip's nvidia-* wheels (and so torch)
//     put them: a python3 script lists them (run only when everything
//     before it failed, since it starts python3).
//
// The error from a failed search lists every candidate tried, why each
// failed, and where the search looked. The package opens nothing itself
// (the caller's try does) and has no build tag and no cgo, so its tests and
// those of its users run in every build.
package nvlib

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

// Spec says what to look for and how to talk about it.
type Spec struct {
	// Name is the library as messages name it ("cuBLAS").
	Name string
	// Env is the environment variable that, when set, names the only
	// candidate ("GOKERAS_CUBLAS").
	Env string
	// Sonames are tried on the loader's path, in order (newest first).
	Sonames []string
	// Globs are file patterns tried after the sonames, newest soname first.
	Globs []string
	// PyDir and PyLib are what the site-packages script looks for:
	// nvidia/<PyDir>/lib/<PyLib>.so.<N>, PyDir a glob ("cu*"), PyLib a
	// plain file-name stem ("libcublas").
	PyDir, PyLib string
	// Where says where the search looks, for messages.
	Where string
	// EnvWants says what Env should name ("a libcublas.so.13, .so.12 or
	// .so.11 that works with this driver").
	EnvWants string
	// Install says how to install one ("pip install nvidia-cublas-cu12, or
	// the CUDA toolkit; Debian: libcublas12").
	Install string
}

// PythonScript is the python3 program that prints Spec's libraries under
// site-packages (and the rest of sys.path), one a line, newest soname
// first.
func (s Spec) PythonScript() string {
	return `import glob, os, re, site, sys
dirs = list(getattr(site, "getsitepackages", lambda: [])()) + [site.getusersitepackages()] + sys.path
found = {}
for d in dirs:
    for f in glob.glob(os.path.join(d or ".", "nvidia", "` + s.PyDir + `", "lib", "` + s.PyLib + `.so.*")):
        m = re.search(r"/` + s.PyLib + `[.]so[.]([0-9]+)$", f)
        if m:
            found.setdefault(os.path.abspath(f), int(m.group(1)))
for f, v in sorted(found.items(), key=lambda kv: -kv[1]):
    print(f)`
}

// Candidate is one library to try.
type Candidate struct {
	Path  string // what dlopen is given: a soname or a file's path
	Where string // how it was found
}

// Where-strings of the candidates.
const (
	WhereLoader   = "the loader's path"
	WhereToolkit  = "a CUDA toolkit"
	WherePython   = "python3's site-packages"
	whereEnvStart = "$"
)

// Lookup is the outside world the search sees; tests replace its fields.
type Lookup struct {
	Getenv func(string) string
	Glob   func(string) ([]string, error)
	// SitePackages lists python3's libraries (run only when the candidates
	// before it all failed: it starts python3).
	SitePackages func() ([]string, error)
}

// DefaultLookup is the process's environment, file system and python3.
func DefaultLookup(s Spec) Lookup {
	script := s.PythonScript()
	return Lookup{Getenv: os.Getenv, Glob: filepath.Glob, SitePackages: func() ([]string, error) { return RunPython(script) }}
}

// RunPython runs a script with python3 from $PATH and returns the fields
// of what it prints.
func RunPython(script string) ([]string, error) {
	py, err := exec.LookPath("python3")
	if err != nil {
		return nil, errors.New("no python3 on $PATH")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, py, "-c", script).Output()
	if err != nil {
		return nil, fmt.Errorf("%s -c ...: %w", py, err)
	}
	return strings.Fields(string(out)), nil
}

// Choose tries the candidates in order (try opens one and checks it: a
// cuBLAS creates a handle) and returns the first that works. A library
// that loads but fails the check is passed over for the next. The error
// lists every candidate tried, why each failed, and where the search
// looked.
func Choose[L any](s Spec, lk Lookup, try func(Candidate) (L, error)) (L, Candidate, error) {
	var failures []string
	attempt := func(c Candidate) (L, bool) {
		l, err := try(c)
		if err != nil {
			failures = append(failures, fmt.Sprintf("%s (%s): %v", c.Path, c.Where, err))
			return l, false
		}
		return l, true
	}
	var zero L
	if p := lk.Getenv(s.Env); p != "" {
		c := Candidate{Path: p, Where: whereEnvStart + s.Env}
		if l, ok := attempt(c); ok {
			return l, c, nil
		}
		return zero, Candidate{}, fmt.Errorf("%s from $%s does not work: %s: set $%s to %s, or unset it to search %s",
			s.Name, s.Env, failures[0], s.Env, s.EnvWants, s.Where)
	}
	for _, name := range s.Sonames {
		c := Candidate{Path: name, Where: WhereLoader}
		if l, ok := attempt(c); ok {
			return l, c, nil
		}
	}
	var files []string
	for _, g := range s.Globs {
		m, _ := lk.Glob(g) // only ErrBadPattern, and the patterns are fixed
		files = append(files, m...)
	}
	slices.SortStableFunc(files, NewestFirst)
	for _, f := range files {
		c := Candidate{Path: f, Where: WhereToolkit}
		if l, ok := attempt(c); ok {
			return l, c, nil
		}
	}
	py, err := lk.SitePackages()
	if err != nil {
		failures = append(failures, WherePython+": "+err.Error())
	}
	for _, f := range py {
		c := Candidate{Path: f, Where: WherePython}
		if l, ok := attempt(c); ok {
			return l, c, nil
		}
	}
	return zero, Candidate{}, fmt.Errorf("no usable %s (looked in %s; tried %s): install one (%s), add its directory "+
		"to LD_LIBRARY_PATH, or set $%s to the library's path", s.Name, s.Where, strings.Join(failures, "; "), s.Install, s.Env)
}

// NewestFirst orders library files by soname version, newest first, then
// by path, later toolkits first.
func NewestFirst(a, b string) int {
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
