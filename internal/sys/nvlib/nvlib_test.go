package nvlib

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var testSpec = Spec{
	Name:     "libfoo",
	Env:      "TEST_FOO",
	Sonames:  []string{"libfoo.so.3", "libfoo.so.2"},
	Globs:    []string{"/opt/foo*/lib/libfoo.so.[0-9]"},
	PyDir:    "foo",
	PyLib:    "libfoo",
	Where:    "WHERE",
	EnvWants: "a libfoo.so.3 or .so.2",
	Install:  "pip install foo",
}

// The search walks the spec's places in order and stops at the first
// candidate try accepts; python3 runs only when all before it failed.
func TestChooseOrderAndSpec(t *testing.T) {
	ranPython := false
	lk := Lookup{
		Getenv: func(string) string { return "" },
		Glob: func(p string) ([]string, error) {
			if p != testSpec.Globs[0] {
				t.Errorf("glob(%q): not the spec's pattern", p)
			}
			return []string{"/opt/foo1/lib/libfoo.so.2", "/opt/foo2/lib/libfoo.so.3"}, nil
		},
		SitePackages: func() ([]string, error) { ranPython = true; return []string{"/site/nvidia/foo/lib/libfoo.so.2"}, nil },
	}
	var tried []string
	try := func(c Candidate) (string, error) {
		tried = append(tried, c.Path+"|"+c.Where)
		if c.Where == WherePython {
			return c.Path, nil
		}
		return "", errors.New("nope")
	}
	got, c, err := Choose(testSpec, lk, try)
	if err != nil || got != "/site/nvidia/foo/lib/libfoo.so.2" || c.Where != WherePython {
		t.Fatalf("Choose = %q, %+v, %v", got, c, err)
	}
	want := []string{"libfoo.so.3|" + WhereLoader, "libfoo.so.2|" + WhereLoader,
		"/opt/foo2/lib/libfoo.so.3|" + WhereToolkit, "/opt/foo1/lib/libfoo.so.2|" + WhereToolkit,
		"/site/nvidia/foo/lib/libfoo.so.2|" + WherePython}
	if !slices.Equal(tried, want) || !ranPython {
		t.Errorf("tried\n%q\nwant\n%q (python ran: %t)", tried, want, ranPython)
	}

	lk.SitePackages = func() ([]string, error) { return nil, errors.New("no python3 on $PATH") }
	_, _, err = Choose(testSpec, lk, try)
	if err == nil {
		t.Fatal("Choose found a library where none works")
	}
	for _, w := range []string{"no usable libfoo (looked in WHERE; tried libfoo.so.3 (the loader's path): nope;",
		"python3's site-packages: no python3 on $PATH", "install one (pip install foo)", "set $TEST_FOO to the library's path"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q\ndoes not contain %q", err, w)
		}
	}

	lk.Getenv = func(k string) string { return map[string]string{"TEST_FOO": "/x/libfoo.so.3"}[k] }
	tried = nil
	_, _, err = Choose(testSpec, lk, try)
	if err == nil || err.Error() != "libfoo from $TEST_FOO does not work: /x/libfoo.so.3 ($TEST_FOO): nope: "+
		"set $TEST_FOO to a libfoo.so.3 or .so.2, or unset it to search WHERE" || len(tried) != 1 {
		t.Errorf("with $TEST_FOO set: tried %q, error %v", tried, err)
	}
}

// The python3 script finds the spec's libraries on sys.path, newest
// first, and nothing else.
func TestPythonScript(t *testing.T) {
	if _, err := RunPython("print(1)"); err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	for _, p := range []string{"nvidia/foo/lib/libfoo.so.2", "nvidia/foo/lib/libfoo.so.10", "nvidia/foo/lib/libfoobar.so.3",
		"nvidia/bar/lib/libfoo.so.4"} {
		f := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PYTHONPATH", dir)
	got, err := RunPython(testSpec.PythonScript())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{dir + "/nvidia/foo/lib/libfoo.so.10", dir + "/nvidia/foo/lib/libfoo.so.2"}
	if !slices.Equal(got, want) {
		t.Errorf("found %q, want %q", got, want)
	}
}
