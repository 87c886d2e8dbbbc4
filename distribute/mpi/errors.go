package mpi

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
)

// EnvVar names the environment variable that points Load at a library: a
// path, or a file name for the system's loader.
const EnvVar = "GOKERAS_MPI"

// InstallHint says what to install, or set, for Load to find Open MPI.
const InstallHint = "install Open MPI (Debian/Ubuntu: apt-get install openmpi-bin libopenmpi3) or set " +
	EnvVar + " to the path of Open MPI's libmpi.so"

var (
	// ErrNotFound marks a library that is not installed, as opposed to
	// one that is installed but cannot be used.
	ErrNotFound = errors.New("not found")
	// ErrInitialized is Init's error when MPI was already started in
	// this process.
	ErrInitialized = errors.New("MPI is already initialized in this process (Init once per process, then use its Comm)")
	// ErrFinalized is the error of every call after Finalize: MPI cannot
	// start again in a process that finalized it.
	ErrFinalized = errors.New("MPI was finalized (or failed to start) in this process and cannot start again")
	// ErrUnsupported is Load's error on a platform gokeras does not load
	// Open MPI on.
	ErrUnsupported = errors.New("unsupported platform")
)

// CallError is an MPI function's error return.
type CallError struct {
	Call    string // the MPI function, "MPI_Allreduce"
	Code    int    // its return code
	Message string // MPI_Error_string's text for Code, if any
}

func (e *CallError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("%s returned error code %d", e.Call, e.Code)
	}
	return fmt.Sprintf("%s returned error code %d: %s", e.Call, e.Code, e.Message)
}

// Values of Open MPI's mpi.h.
const (
	success                 = 0   // MPI_SUCCESS
	threadFunneled          = 1   // MPI_THREAD_FUNNELED
	maxErrorString          = 256 // MPI_MAX_ERROR_STRING
	maxLibraryVersionString = 256 // MPI_MAX_LIBRARY_VERSION_STRING
	inPlace                 = 1   // MPI_IN_PLACE, (void *)1
)

// launchVars are variables a launcher sets in each process it starts:
// Open MPI's mpirun (OMPI_COMM_WORLD_SIZE), PMIx launchers such as Open
// MPI 5 and Slurm's srun --mpi=pmix (PMIX_RANK), and PMI-1/PMI-2
// launchers such as srun --mpi=pmi2 and MPICH's hydra (PMI_SIZE,
// PMI_RANK).
var launchVars = []string{"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "PMI_RANK"}

// LaunchVars returns the names of the variables MPI launchers set in each
// process they start, by which InMPIRun knows it was started by one. A
// program that is itself an MPI process and starts an MPI job of its own
// (as tests do) leaves them out of the job's environment.
func LaunchVars() []string { return slices.Clone(launchVars) }

// InMPIRun reports whether an MPI launcher (mpirun, mpiexec, srun)
// started this process, by the variables launchers set in the processes
// they start. A program started by hand is not: Init would then start a
// world of one process (Open MPI's singleton mode), which is rarely what
// was meant.
func InMPIRun() bool { return inMPIRun(os.Getenv) }

func inMPIRun(getenv func(string) string) bool {
	for _, v := range launchVars {
		if strings.TrimSpace(getenv(v)) != "" {
			return true
		}
	}
	return false
}
