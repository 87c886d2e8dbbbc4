package term

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/gokeras/gokeras/internal/sys/term/termtest"
)

// TestOnlyTTYsAreTerminals: buffers, files, pipes and /dev/null (a
// character device, but no tty) get plain lines; a pseudo-terminal is a
// terminal, with the width it was given.
func TestOnlyTTYsAreTerminals(t *testing.T) {
	open := func(path string) func(*testing.T) io.Writer {
		return func(t *testing.T) io.Writer {
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o600)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Close() })
			return f
		}
	}
	tests := []struct {
		name      string
		writer    func(*testing.T) io.Writer
		tty       bool
		wantWidth int
	}{
		{"a buffer", func(*testing.T) io.Writer { return &bytes.Buffer{} }, false, 0},
		{"a nil file", func(*testing.T) io.Writer { return (*os.File)(nil) }, false, 0},
		{"a regular file", open(filepath.Join(t.TempDir(), "log")), false, 0},
		{"/dev/null", open(os.DevNull), false, 0},
		{"a pipe", func(t *testing.T) io.Writer {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { r.Close(); w.Close() })
			return w
		}, false, 0},
		{"a closed terminal", func(t *testing.T) io.Writer {
			tty := termtest.Open(t, 80, 24).TTY
			tty.Close()
			return tty
		}, false, 0},
		{"an 80-column terminal", func(t *testing.T) io.Writer { return termtest.Open(t, 80, 24).TTY }, true, 80},
		{"a 132-column terminal", func(t *testing.T) io.Writer { return termtest.Open(t, 132, 50).TTY }, true, 132},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := tc.writer(t)
			if got := IsTerminal(w); got != tc.tty {
				t.Errorf("IsTerminal = %v, want %v", got, tc.tty)
			}
			width, ok := Width(w)
			if width != tc.wantWidth || ok != tc.tty {
				t.Errorf("Width = %d, %v; want %d, %v", width, ok, tc.wantWidth, tc.tty)
			}
		})
	}
}
