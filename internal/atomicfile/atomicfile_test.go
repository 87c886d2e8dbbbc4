package atomicfile_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/internal/atomicfile"
)

// entries lists the names in dir, to catch temporary files left behind.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range des {
		names = append(names, d.Name())
	}
	return names
}

func TestWrite(t *testing.T) {
	boom := errors.New("injected failure")
	tests := []struct {
		name    string
		write   func(w io.Writer) error
		want    string // content afterwards
		wantErr error
	}{
		{"replaces the file", func(w io.Writer) error {
			_, err := io.WriteString(w, "new content")
			return err
		}, "new content", nil},
		{"fails before writing", func(w io.Writer) error { return boom }, "old content", boom},
		{"fails midway", func(w io.Writer) error {
			// More than the buffer holds, so part of it reaches the temporary file.
			if _, err := w.Write(make([]byte, 3<<20)); err != nil {
				return err
			}
			return boom
		}, "old content", boom},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "weights.safetensors")
			if err := os.WriteFile(path, []byte("old content"), 0o644); err != nil {
				t.Fatal(err)
			}
			err := atomicfile.Write(path, tc.write)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Write error = %v, want %v", err, tc.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), path) {
				t.Errorf("error %q does not name the file", err)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("file holds %.20q, want %q", got, tc.want)
			}
			if names := entries(t, dir); len(names) != 1 {
				t.Errorf("directory holds %v, want only the file", names)
			}
			info, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantErr == nil && info.Mode().Perm() != 0o644 {
				t.Errorf("mode %v, want 0644", info.Mode().Perm())
			}
		})
	}
}

func TestWriteCreatesAndReportsMissingDirectory(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "new.csv")
	if err := atomicfile.WriteBytes(path, []byte("a,b\r\n")); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != "a,b\r\n" {
		t.Errorf("file holds %q", got)
	}
	err := atomicfile.WriteBytes(filepath.Join(dir, "missing", "x.csv"), nil)
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("writing into a missing directory: error %v, want one wrapping os.ErrNotExist", err)
	}
	if err := atomicfile.WriteBytes(dir+"/", nil); err == nil {
		t.Error("writing to a directory path succeeded")
	}
}
