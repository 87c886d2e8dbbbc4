package term

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestFilesAndBuffersAreNotTerminals(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if IsTerminal(f) || IsTerminal(&bytes.Buffer{}) {
		t.Error("a regular file or a buffer was taken for a terminal")
	}
	if null, err := os.Open(os.DevNull); err == nil {
		defer null.Close()
		if !IsTerminal(null) {
			t.Error("/dev/null is a character device and should count as one")
		}
	}
}
