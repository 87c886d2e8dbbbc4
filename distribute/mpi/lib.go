package mpi

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"unsafe"
)

// Lib is Open MPI's library, loaded but not yet started: Init starts it.
// Loading has no effect on the process beyond dlopen, so a program may
// Load to report what it found and Init only when InMPIRun says it was
// launched by mpirun or srun.
type Lib struct {
	path    string // what was loaded, as given to dlopen
	version string // MPI_Get_library_version's first line

	// Open MPI's predefined handles are the addresses of global objects
	// of the library (mpi.h: MPI_COMM_WORLD is &ompi_mpi_comm_world), so
	// Load looks them up by name.
	commWorld, float, byte, opSum, errorsReturn uintptr

	initThread func(argc, argv unsafe.Pointer, required int32, provided *int32) int32
	finalize   func() int32
	commRank   func(comm uintptr, rank *int32) int32
	commSize   func(comm uintptr, size *int32) int32
	// send is a uintptr so that MPI_IN_PLACE, (void *)1, can be passed
	// without a misuse of unsafe.Pointer.
	allreduce     func(send uintptr, recv unsafe.Pointer, count int32, datatype, op, comm uintptr) int32
	bcast         func(buf unsafe.Pointer, count int32, datatype uintptr, root int32, comm uintptr) int32
	barrier       func(comm uintptr) int32
	setErrhandler func(comm, handler uintptr) int32
	errorString   func(code int32, s *byte, n *int32) int32
	libVersion    func(s *byte, n *int32) int32
}

// Load opens Open MPI's library: the file GOKERAS_MPI names (a path, or
// a file name for the system's loader) if it is set, else the first of
// libmpi.so.40 and libmpi.so that the loader finds. An error says what to
// install or set; errors.Is(err, ErrNotFound) tells a missing library
// from one that is there but unusable (another MPI, a broken install).
func Load() (*Lib, error) { return load(os.Getenv(EnvVar), candidates()) }

func load(setting string, names []string) (*Lib, error) {
	if setting = strings.TrimSpace(setting); setting != "" {
		l, err := open(setting)
		if err != nil {
			return nil, fmt.Errorf("mpi: %s=%s: %w; %s", EnvVar, setting, err, InstallHint)
		}
		return l, nil
	}
	var tried []string
	for _, name := range names {
		l, err := open(name)
		if err == nil {
			return l, nil
		}
		if !errors.Is(err, ErrNotFound) {
			// There, but not usable: say so rather than look further.
			return nil, fmt.Errorf("mpi: %w; %s", err, InstallHint)
		}
		tried = append(tried, name)
	}
	return nil, fmt.Errorf("mpi: Open MPI's library not found (tried %s): %w; %s",
		strings.Join(tried, ", "), ErrNotFound, InstallHint)
}

// Path is the library as it was given to dlopen ("libmpi.so.40", or what
// GOKERAS_MPI says).
func (l *Lib) Path() string { return l.path }

// Version is the library's own name for itself, such as "Open MPI
// v4.1.4, package: Debian OpenMPI, ident: 4.1.4, repo rev: v4.1.4, May
// 26, 2022"; empty if it gives none.
func (l *Lib) Version() string { return l.version }

// String names the library and where it came from.
func (l *Lib) String() string {
	if l.version == "" {
		return l.path
	}
	return l.version + " (" + l.path + ")"
}

// message is MPI_Error_string's text for code, or "" if it has none.
func (l *Lib) message(code int32) string {
	var buf [maxErrorString + 1]byte
	var n int32
	if l.errorString(code, &buf[0], &n) != success || n <= 0 || int(n) > len(buf) {
		return ""
	}
	return strings.TrimSpace(strings.TrimRight(string(buf[:n]), "\x00"))
}

// check turns an MPI return code into nil or a *CallError.
func (l *Lib) check(call string, code int32) error {
	if code == success {
		return nil
	}
	return &CallError{Call: call, Code: int(code), Message: l.message(code)}
}
