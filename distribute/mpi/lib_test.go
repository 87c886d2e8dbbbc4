package mpi

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A library that is not there is ErrNotFound, and the error says what to
// install.
func TestLoadMissingNamesThePackage(t *testing.T) {
	_, err := load("", []string{"libgokeras-no-such-mpi.so.40", "libgokeras-no-such-mpi.so"})
	if err == nil {
		t.Fatal("load of libraries that do not exist succeeded")
	}
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("error is not ErrNotFound: %v", err)
	}
	for _, want := range []string{"apt-get install openmpi-bin libopenmpi3", EnvVar, "libgokeras-no-such-mpi.so.40"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q: %v", want, err)
		}
	}
}

// GOKERAS_MPI is tried alone, and an error names the variable.
func TestLoadSettingMissing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "libmpi.so.40")
	_, err := load(path, candidates())
	if err == nil {
		t.Fatal("load of a path that does not exist succeeded")
	}
	if !errors.Is(err, ErrNotFound) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("error is not ErrNotFound and os.ErrNotExist: %v", err)
	}
	for _, want := range []string{EnvVar + "=" + path, "apt-get install openmpi-bin libopenmpi3"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q: %v", want, err)
		}
	}
}

// A file that is there but not a shared library, and a shared library
// that is not MPI, are refused as such, not as missing.
func TestLoadNotMPI(t *testing.T) {
	junk := filepath.Join(t.TempDir(), "libmpi.so")
	if err := os.WriteFile(junk, []byte("not an ELF file"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := load(junk, nil)
	if errors.Is(err, ErrUnsupported) {
		t.Skip("skipped: this platform loads no libraries:", err)
	}
	if err == nil || errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "cannot load") {
		t.Errorf("load of a file that is not a library: want a cannot-load error, got %v", err)
	}
	for _, libc := range []string{"/lib/x86_64-linux-gnu/libc.so.6", "/lib/aarch64-linux-gnu/libc.so.6", "/usr/lib/libSystem.B.dylib"} {
		if _, statErr := os.Stat(libc); statErr != nil {
			continue
		}
		_, err := load(libc, nil)
		if err == nil || errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "not an MPI library") {
			t.Errorf("load of %s: want a not-an-MPI-library error, got %v", libc, err)
		}
		return
	}
	t.Log("no libc at a known path: the not-an-MPI case is untested here")
}

func TestInMPIRun(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want bool
	}{
		{nil, false},
		{map[string]string{"OMPI_COMM_WORLD_SIZE": "2"}, true},
		{map[string]string{"PMIX_RANK": "0"}, true},
		{map[string]string{"PMI_SIZE": "4"}, true},
		{map[string]string{"PMI_RANK": "3"}, true},
		{map[string]string{"OMPI_COMM_WORLD_SIZE": " "}, false},
		{map[string]string{"SLURM_PROCID": "0"}, false}, // srun without an MPI plugin
	} {
		got := inMPIRun(func(k string) string { return tc.env[k] })
		if got != tc.want {
			t.Errorf("inMPIRun with %v = %v, want %v", tc.env, got, tc.want)
		}
	}
}

// Calls on nil or zero values, not from Load or Init, are errors, not
// panics or hangs.
func TestZeroValues(t *testing.T) {
	for i, l := range []*Lib{nil, {}} {
		if _, err := l.Init(); err == nil || !strings.Contains(err.Error(), "call Load first") {
			t.Errorf("Init on %s: want a call-Load-first error, got %v", [...]string{"nil", "a zero Lib"}[i], err)
		}
	}
	for i, c := range []*Comm{nil, {}} {
		if c.Rank() != 0 || c.Size() != 0 {
			t.Errorf("%s: rank %d of %d, want 0 of 0", [...]string{"nil", "a zero Comm"}[i], c.Rank(), c.Size())
		}
		for name, call := range map[string]func() error{
			"AllreduceSum": func() error { return c.AllreduceSum([]float32{1}) },
			"Bcast":        func() error { return c.Bcast([]float32{1}, 0) },
			"BcastBytes":   func() error { return c.BcastBytes(nil, 0) },
			"Barrier":      c.Barrier,
			"Finalize":     c.Finalize,
		} {
			if err := call(); err == nil || !strings.Contains(err.Error(), "call Init first") {
				t.Errorf("%s on %s: want a call-Init-first error, got %v", name, [...]string{"nil", "a zero Comm"}[i], err)
			}
		}
	}
}

func TestCallError(t *testing.T) {
	err := error(&CallError{Call: "MPI_Allreduce", Code: 15, Message: "MPI_ERR_TRUNCATE: message truncated"})
	if got, want := err.Error(), "MPI_Allreduce returned error code 15: MPI_ERR_TRUNCATE: message truncated"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	var ce *CallError
	if !errors.As(errors.Join(errors.New("context"), err), &ce) || ce.Code != 15 {
		t.Error("a wrapped CallError is not found by errors.As")
	}
}
