//go:build (linux || darwin || freebsd) && (amd64 || arm64)

package mpi

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"

	"github.com/ebitengine/purego"
	"github.com/gokeras/gokeras/internal/sys/dynlib"
)

// candidates are the libraries Load tries, in order, when GOKERAS_MPI is
// unset.
func candidates() []string {
	if runtime.GOOS == "darwin" {
		return []string{
			"libmpi.40.dylib",
			"/opt/homebrew/lib/libmpi.dylib",
			"/usr/local/lib/libmpi.dylib",
		}
	}
	// libmpi.so.40 is Open MPI 4 (Debian 12's libopenmpi3); the
	// unversioned name is only there with the -dev package or a build
	// from source.
	return []string{"libmpi.so.40", "libmpi.so"}
}

// open loads one library and looks up everything gokeras calls; its
// errors, for load to complete, name the library but neither the package
// nor the fix.
func open(path string) (*Lib, error) {
	// RTLD_GLOBAL: Open MPI loads its components (mca_*.so) with dlopen
	// itself, and those resolve symbols of libmpi and libopen-pal through
	// the global scope; loaded RTLD_LOCAL, some builds of Open MPI fail
	// in MPI_Init with undefined symbols.
	handle, err := dynlib.Open(path, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		if strings.Contains(path, "/") {
			if _, statErr := os.Stat(path); errors.Is(statErr, os.ErrNotExist) {
				return nil, fmt.Errorf("%s: %w (%w)", path, ErrNotFound, statErr)
			}
		} else if strings.Contains(err.Error(), "No such file") || strings.Contains(err.Error(), "not found") {
			return nil, fmt.Errorf("%s: %w (%v)", path, ErrNotFound, err)
		}
		return nil, fmt.Errorf("cannot load %s: %w", path, err)
	}
	l := &Lib{path: path}
	fail := func(err error) (*Lib, error) {
		_ = purego.Dlclose(handle)
		return nil, err
	}
	if _, err := purego.Dlsym(handle, "MPI_Init_thread"); err != nil {
		return fail(fmt.Errorf("%s exports no MPI_Init_thread: it is not an MPI library", path))
	}
	vars := []struct {
		name string
		addr *uintptr
	}{
		{"ompi_mpi_comm_world", &l.commWorld},
		{"ompi_mpi_float", &l.float},
		{"ompi_mpi_byte", &l.byte},
		{"ompi_mpi_op_sum", &l.opSum},
		{"ompi_mpi_errors_return", &l.errorsReturn},
	}
	for _, v := range vars {
		p, err := purego.Dlsym(handle, v.name)
		if err != nil || p == 0 {
			return fail(fmt.Errorf("%s exports no %s: it is an MPI library but not Open MPI "+
				"(MPICH and its kin encode MPI_COMM_WORLD and the other handles as integers, which gokeras does not speak)",
				path, v.name))
		}
		*v.addr = p
	}
	funcs := []struct {
		name string
		fn   any
	}{
		{"MPI_Init_thread", &l.initThread},
		{"MPI_Finalize", &l.finalize},
		{"MPI_Comm_rank", &l.commRank},
		{"MPI_Comm_size", &l.commSize},
		{"MPI_Allreduce", &l.allreduce},
		{"MPI_Bcast", &l.bcast},
		{"MPI_Barrier", &l.barrier},
		{"MPI_Comm_set_errhandler", &l.setErrhandler},
		{"MPI_Error_string", &l.errorString},
		{"MPI_Get_library_version", &l.libVersion},
	}
	for _, f := range funcs {
		p, err := purego.Dlsym(handle, f.name)
		if err != nil || p == 0 {
			return fail(fmt.Errorf("%s exports no %s: an MPI older than MPI-3 or a broken install", path, f.name))
		}
		purego.RegisterFunc(f.fn, p)
	}
	// MPI-3 allows MPI_Get_library_version before MPI_Init.
	var buf [maxLibraryVersionString + 1]byte
	var n int32
	if rc := l.libVersion(&buf[0], &n); rc == success && n > 0 && int(n) <= len(buf) {
		l.version, _, _ = strings.Cut(strings.TrimRight(string(buf[:n]), "\x00"), "\n")
		l.version = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(l.version), ","))
	}
	return l, nil
}
