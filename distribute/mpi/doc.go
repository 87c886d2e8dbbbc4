// Package mpi runs collectives between the processes of an MPI job
// through Open MPI, loaded while the program runs: the first step of
// gokeras' data-parallel training, which will all-reduce gradients with
// it.
//
// Like package blas, it opens the library with dlopen through
// github.com/ebitengine/purego, so building gokeras needs neither cgo nor
// MPI. Load finds Open MPI 4's libmpi.so.40 (Debian: apt-get install
// openmpi-bin libopenmpi3), or the library GOKERAS_MPI names:
//
//	lib, err := mpi.Load() // the error says what to install
//	if err != nil { ... }
//	world, err := lib.Init() // once per process
//	if err != nil { ... }
//	defer world.Finalize()
//	err = world.AllreduceSum(grads) // in place, on every rank
//
// Launch the program with mpirun (or Slurm's srun): one process per rank,
// each with its Rank() from 0 to Size()-1. As root, as in containers,
// mpirun wants --allow-run-as-root; more ranks than cores want
// --oversubscribe:
//
//	mpirun -np 2 ./prog
//
// InMPIRun tells a program started by a launcher from one started by
// hand.
//
// MPI, started with MPI_THREAD_FUNNELED, may be called only from the OS
// thread that started it, and Go moves goroutines between threads. So
// Init starts MPI on a goroutine locked to its thread, which then makes
// every MPI call of the Comm for whichever goroutine asks: a Comm may be
// used from any goroutine, one call at a time.
//
// A rank that exits without Finalize, failing or killed, makes mpirun
// stop the job's other processes and exit non-zero. A rank that hangs
// without exiting cannot be timed out here (an MPI call cannot be
// interrupted): package distribute, which trains with this package, puts
// a timeout around each collective. NCCL is not done.
// Only Open MPI is supported: MPICH and its kin encode MPI's handles
// differently.
package mpi
