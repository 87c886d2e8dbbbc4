package distribute

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gokeras/gokeras/distribute/mpi"
)

// MultiWorkerStrategy is Keras' MultiWorkerMirroredStrategy: one replica
// per process of an MPI job, on one machine or many. On /CPU:0 the
// gradients are all-reduced with MPI between the host memories; on a GPU
// (/GPU:0 in each process) with NCCL in device memory, on the step's
// stream (AllReduceSumDevice), MPI only starting NCCL. It implements
// nn.Strategy and driver.DeviceAllReducer.
type MultiWorkerStrategy struct {
	comm    *mpi.Comm
	timeout atomic.Int64 // a time.Duration: SetTimeout
	dev     deviceComm   // NCCL, for GPUs: AllReduceSumDevice
}

// DefaultTimeout is how long a collective of a MultiWorkerStrategy waits
// for the other replicas before it stops the job (SetTimeout).
const DefaultTimeout = 10 * time.Minute

// TimeoutStatus is the exit status of a process whose collective timed
// out.
const TimeoutStatus = 124

// exit ends the process when a collective times out.
var exit = os.Exit

// process holds the one MultiWorkerStrategy of the process: MPI starts
// once per process.
var process struct {
	sync.Mutex
	s   *MultiWorkerStrategy
	err error
}

// MultiWorker loads Open MPI and starts it (distribute/mpi's Load and
// Init), and returns the strategy over every process of the job: started
// by mpirun (or srun --mpi=pmix), one replica per process; started by
// hand, a world of one (mpi.InMPIRun tells them apart). A world smaller
// than the launcher says it started (srun without an MPI plugin starts
// each task as a world of one) is an error that names the fix. It starts
// MPI once per process: later calls return the same strategy, or the same
// error. The error of a missing Open MPI says what to install.
func MultiWorker() (*MultiWorkerStrategy, error) {
	process.Lock()
	defer process.Unlock()
	if process.s != nil || process.err != nil {
		return process.s, process.err
	}
	process.s, process.err = start()
	return process.s, process.err
}

func start() (*MultiWorkerStrategy, error) {
	lib, err := mpi.Load()
	if err != nil {
		return nil, fmt.Errorf("distribute: MultiWorker: %w", err)
	}
	comm, err := lib.Init()
	if err != nil {
		return nil, fmt.Errorf("distribute: MultiWorker: %w", err)
	}
	if err := launchedSize(os.Getenv, comm.Size()); err != nil {
		return nil, errors.Join(fmt.Errorf("distribute: MultiWorker: %w", err), comm.Finalize())
	}
	s := &MultiWorkerStrategy{comm: comm}
	s.timeout.Store(int64(DefaultTimeout))
	return s, nil
}

// launchedSize checks the world MPI started against the number of
// processes the launcher says it started: Slurm's srun without an MPI
// plugin (srun --mpi=pmix) starts each task as a world of one, which would
// train N separate models in silence.
func launchedSize(getenv func(string) string, size int) error {
	for _, v := range []string{"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_STEP_NUM_TASKS"} {
		n, err := strconv.Atoi(strings.TrimSpace(getenv(v)))
		if err != nil || n == size {
			continue
		}
		if v == "SLURM_STEP_NUM_TASKS" && size == 1 {
			return fmt.Errorf("srun started %d tasks (SLURM_STEP_NUM_TASKS), but MPI sees a world of one in each: the tasks are not one MPI job. Launch with srun --mpi=pmix (or pmi2), or with mpirun inside the allocation", n)
		}
		return fmt.Errorf("the launcher started %d processes (%s), but MPI sees %d: launch with the mpirun of the Open MPI this program loads", n, v, size)
	}
	return nil
}

// SetTimeout sets how long each collective waits for the other replicas
// (DefaultTimeout at first; 0: for ever). A replica that waits longer,
// because another hangs without exiting (one that exits makes mpirun stop
// the job at once), writes why to standard error and exits with status
// TimeoutStatus without finalizing MPI, so that mpirun stops the others: an
// MPI call cannot be interrupted, and a job that hangs silently is worse.
// Allow for the slowest start of a replica (loading data) before its
// first collective.
func (s *MultiWorkerStrategy) SetTimeout(d time.Duration) { s.timeout.Store(int64(max(d, 0))) }

// Timeout is how long each collective waits for the other replicas, as
// SetTimeout set it (0: for ever).
func (s *MultiWorkerStrategy) Timeout() time.Duration { return time.Duration(s.timeout.Load()) }

// watch runs a collective under the timeout.
func (s *MultiWorkerStrategy) watch(what string, f func() error) error {
	d := time.Duration(s.timeout.Load())
	if d <= 0 {
		return f()
	}
	t := time.AfterFunc(d, func() {
		fmt.Fprintf(os.Stderr, "distribute: rank %d of %d: %s waited more than %v for the other replicas: one of them hangs or is far behind; stopping the job (MultiWorkerStrategy.SetTimeout sets the wait)\n",
			s.Rank(), s.Size(), what, d)
		exit(TimeoutStatus)
	})
	defer t.Stop()
	return f()
}

// Rank is this process's replica, from 0 to Size()-1: rank 0 prints and
// saves.
func (s *MultiWorkerStrategy) Rank() int { return s.comm.Rank() }

// Size is the number of replicas, Keras' num_replicas_in_sync.
func (s *MultiWorkerStrategy) Size() int { return s.comm.Size() }

// NumReplicasInSync is Size, by its Keras name.
func (s *MultiWorkerStrategy) NumReplicasInSync() int { return s.Size() }

// AllReduceSum replaces buf, on every replica, with the element-wise sum
// of every replica's buf. Like every method below it is collective: every
// replica calls it, in the same order, with the same length.
func (s *MultiWorkerStrategy) AllReduceSum(buf []float32) error {
	return s.watch(fmt.Sprintf("AllReduceSum of %d floats", len(buf)), func() error { return s.comm.AllreduceSum(buf) })
}

// AllReduceMean replaces buf, on every replica, with the element-wise
// mean over the replicas.
func (s *MultiWorkerStrategy) AllReduceMean(buf []float32) error {
	if err := s.AllReduceSum(buf); err != nil {
		return err
	}
	inv := 1 / float32(s.Size())
	for i := range buf {
		buf[i] *= inv
	}
	return nil
}

// Bcast copies root's buf into every other replica's buf.
func (s *MultiWorkerStrategy) Bcast(buf []float32, root int) error {
	return s.watch(fmt.Sprintf("Bcast of %d floats from rank %d", len(buf), root), func() error { return s.comm.Bcast(buf, root) })
}

// BcastBytes copies root's buf into every other replica's buf.
func (s *MultiWorkerStrategy) BcastBytes(buf []byte, root int) error {
	return s.watch(fmt.Sprintf("BcastBytes of %d bytes from rank %d", len(buf), root), func() error { return s.comm.BcastBytes(buf, root) })
}

// Barrier returns once every replica has called it.
func (s *MultiWorkerStrategy) Barrier() error { return s.watch("Barrier", s.comm.Barrier) }

// Close shuts MPI down (MPI_Finalize). Every replica must call it before
// exiting with status 0, or mpirun reports the job as failed; afterwards
// the strategy's collectives fail, and MPI cannot start again in the
// process.
func (s *MultiWorkerStrategy) Close() error {
	if err := s.closeDevice(); err != nil {
		return errors.Join(err, s.comm.Finalize())
	}
	err := s.comm.Finalize()
	if errors.Is(err, mpi.ErrFinalized) {
		return nil // closed twice
	}
	return err
}
