package nccl

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/internal/sys/nvlib"
)

const (
	tkNCCL = "/usr/local/cuda-12.4/lib64/libnccl.so.2"
	pyNCCL = "/venv/lib/python3.12/site-packages/nvidia/nccl/lib/libnccl.so.2"
)

// fakeMachine is the world load sees: which libraries open, and which of
// those answer ncclGetVersion.
type fakeMachine struct {
	env       map[string]string
	toolkit   []string
	python    []string
	opens     map[string]bool
	noVersion map[string]bool
	tried     []string
	ranPython bool
}

func (m *fakeMachine) lookup(t *testing.T) nvlib.Lookup {
	return nvlib.Lookup{
		Getenv: func(k string) string { return m.env[k] },
		Glob: func(p string) ([]string, error) {
			if !slices.Contains(spec.Globs, p) {
				t.Errorf("glob(%q): not one of NCCL's patterns", p)
			}
			if strings.Contains(p, "/lib64/") {
				return m.toolkit, nil
			}
			return nil, nil
		},
		SitePackages: func() ([]string, error) { m.ranPython = true; return m.python, nil },
	}
}

func (m *fakeMachine) open(path string) (*Lib, error) {
	m.tried = append(m.tried, path)
	if !m.opens[path] {
		return nil, errors.New(path + ": cannot open shared object file: No such file or directory")
	}
	f := &fakeNCCL{}
	if m.noVersion[path] {
		f.result = map[string]uintptr{"ncclGetVersion": 1}
		f.errTxt = map[int32][]byte{1: []byte("unhandled cuda error\x00")}
	}
	l := f.lib()
	l.path, l.where = "", ""
	return l, nil
}

func TestLoadOrder(t *testing.T) {
	m := &fakeMachine{toolkit: []string{tkNCCL}, python: []string{pyNCCL},
		opens: map[string]bool{tkNCCL: true, pyNCCL: true}, noVersion: map[string]bool{tkNCCL: true}}
	l, err := load(m.lookup(t), m.open)
	if err != nil || l.Path() != pyNCCL || l.Where() != "python3's site-packages" {
		t.Fatalf("load = %v, %v; want %s from python3's site-packages", l, err, pyNCCL)
	}
	if want := []string{"libnccl.so.2", tkNCCL, pyNCCL}; !slices.Equal(m.tried, want) {
		t.Errorf("tried %q, want %q", m.tried, want)
	}

	m = &fakeMachine{toolkit: []string{tkNCCL}, python: []string{pyNCCL}, opens: map[string]bool{"libnccl.so.2": true, pyNCCL: true}}
	if l, err := load(m.lookup(t), m.open); err != nil || l.String() != "libnccl.so.2 (the loader's path)" || m.ranPython {
		t.Errorf("load = %v, %v (python3 ran: %t); want libnccl.so.2 from the loader's path, without python3", l, err, m.ranPython)
	}
}

func TestLoadMissing(t *testing.T) {
	m := &fakeMachine{toolkit: []string{tkNCCL}, opens: map[string]bool{tkNCCL: true}, noVersion: map[string]bool{tkNCCL: true}}
	_, err := load(m.lookup(t), m.open)
	if err == nil {
		t.Fatal("load found an NCCL where none works")
	}
	for _, want := range []string{
		"nccl: no usable NCCL (looked in ",
		"libnccl.so.2 (the loader's path): libnccl.so.2: cannot open shared object file",
		tkNCCL + " (a CUDA toolkit): loads, but nccl: ncclGetVersion: unhandled cuda error (ncclResult_t 1)",
		"nvidia/nccl/lib",
		"pip install nvidia-nccl-cu12",
		"set $GOKERAS_NCCL to the library's path",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q\ndoes not contain %q", err, want)
		}
	}

	m = &fakeMachine{env: map[string]string{EnvVar: "/opt/nccl/libnccl.so.2"}, opens: map[string]bool{"libnccl.so.2": true}}
	_, err = load(m.lookup(t), m.open)
	if err == nil || !strings.Contains(err.Error(), "NCCL from $GOKERAS_NCCL does not work: /opt/nccl/libnccl.so.2") ||
		!slices.Equal(m.tried, []string{"/opt/nccl/libnccl.so.2"}) || m.ranPython {
		t.Errorf("with $GOKERAS_NCCL set: tried %q (python3 ran: %t): %v; want it alone, and an error naming it", m.tried, m.ranPython, err)
	}
}

// On this machine: NCCL loads and says its version, or the error says
// what to install. (No GPU is needed for either.)
func TestLoadHere(t *testing.T) {
	l, err := Load()
	if err != nil {
		if !strings.Contains(err.Error(), "pip install nvidia-nccl-cu12") || !strings.Contains(err.Error(), "$"+EnvVar) {
			t.Errorf("Load: %v; want it to name the wheel and $%s", err, EnvVar)
		}
		t.Skipf("no NCCL here: %v", err)
	}
	v, err := l.Version()
	if err != nil || v < 20000 || v > 100000 {
		t.Errorf("%s: Version = %d, %v; want NCCL 2's code (2.x.y: 2xxyy)", l, v, err)
	}
	t.Logf("%s: NCCL_VERSION_CODE %d", l, v)
}

func TestLoadEnvMissing(t *testing.T) {
	t.Setenv(EnvVar, "/nonexistent/libnccl.so.2")
	_, err := Load()
	if err == nil || !strings.Contains(err.Error(), "NCCL from $GOKERAS_NCCL does not work: /nonexistent/libnccl.so.2") ||
		!strings.Contains(err.Error(), "or unset it to search") {
		t.Errorf("Load with $%s missing: %v", EnvVar, err)
	}
}
