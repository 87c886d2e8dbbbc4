package mpi

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"unsafe"
)

// process is MPI's state in this process: MPI starts at most once per
// process and cannot start again after MPI_Finalize.
var process struct {
	sync.Mutex
	state int // one of notStarted, running, over
}

const (
	notStarted = iota
	running
	over // finalized, or failed to start
)

// maxCount is the most elements one MPI call takes: counts are C ints.
// Longer buffers go in several calls.
const maxCount = math.MaxInt32

// Comm is MPI_COMM_WORLD of a started MPI: every process of the job, each
// with its rank. Its methods are collective: every rank must call the
// same ones in the same order with buffers of the same length, or the job
// hangs or fails. A Comm is safe for concurrent use; its calls run one at
// a time on the one OS thread that started MPI.
type Comm struct {
	lib        *Lib
	rank, size int

	mu        sync.Mutex
	calls     chan func() // run by serve on the MPI thread
	finalized bool
}

// Init starts MPI (MPI_Init_thread, asking for MPI_THREAD_FUNNELED) and
// returns the world of the job's processes. It may succeed once per
// process.
//
// Go runs goroutines on whichever OS threads it likes, and moves them
// between threads, while an MPI started with MPI_THREAD_FUNNELED may be
// called only from the thread that started it (MPI_THREAD_MULTIPLE, which
// would lift that, makes Open MPI lock on every call and is not always
// built in). So Init starts a goroutine locked to its OS thread
// (runtime.LockOSThread) that starts MPI and then makes every MPI call of
// the Comm, handed to it over a channel; the thread ends with Finalize.
//
// Errors of MPI calls are returned, not fatal: Init sets
// MPI_ERRORS_RETURN on MPI_COMM_WORLD. A rank that gets an error should
// exit non-zero: mpirun then stops the job's other processes.
func (l *Lib) Init() (*Comm, error) {
	if l == nil || l.initThread == nil {
		return nil, fmt.Errorf("mpi: Init on a Lib that Load did not return: call Load first")
	}
	process.Lock()
	defer process.Unlock()
	switch process.state {
	case running:
		return nil, fmt.Errorf("mpi: Init: %w", ErrInitialized)
	case over:
		return nil, fmt.Errorf("mpi: Init: %w", ErrFinalized)
	}
	c := &Comm{lib: l, calls: make(chan func())}
	started := make(chan error, 1)
	go c.serve(started)
	if err := <-started; err != nil {
		process.state = over
		return nil, err
	}
	process.state = running
	return c, nil
}

// serve starts MPI on a locked OS thread, reports to started, then runs
// the Comm's calls until Finalize closes c.calls. It never unlocks the
// thread: when serve returns, Go ends the thread, on which MPI ran.
func (c *Comm) serve(started chan<- error) {
	runtime.LockOSThread()
	l := c.lib
	var provided int32
	if err := l.check("MPI_Init_thread", l.initThread(nil, nil, threadFunneled, &provided)); err != nil {
		started <- fmt.Errorf("mpi: starting MPI with %s: %w", l.path, err)
		return
	}
	fail := func(err error) {
		_ = l.finalize()
		started <- err
	}
	if provided < threadFunneled {
		fail(fmt.Errorf("mpi: %s gives MPI_THREAD_SINGLE (%d) where gokeras needs MPI_THREAD_FUNNELED: "+
			"use an Open MPI built with thread support (Debian's is)", l.path, provided))
		return
	}
	if err := l.check("MPI_Comm_set_errhandler", l.setErrhandler(l.commWorld, l.errorsReturn)); err != nil {
		fail(fmt.Errorf("mpi: setting MPI_ERRORS_RETURN on MPI_COMM_WORLD: %w", err))
		return
	}
	var rank, size int32
	if err := l.check("MPI_Comm_rank", l.commRank(l.commWorld, &rank)); err != nil {
		fail(fmt.Errorf("mpi: %w", err))
		return
	}
	if err := l.check("MPI_Comm_size", l.commSize(l.commWorld, &size)); err != nil {
		fail(fmt.Errorf("mpi: %w", err))
		return
	}
	c.rank, c.size = int(rank), int(size)
	started <- nil
	for call := range c.calls {
		call()
	}
}

// do runs fn on the MPI thread and returns its error.
func (c *Comm) do(what string, fn func() error) error { return c.run(what, false, fn) }

// run runs fn on the MPI thread and returns its error; last ends the
// thread after fn, whatever fn returned (MPI_Finalize is the last MPI
// call a process may make).
func (c *Comm) run(what string, last bool, fn func() error) error {
	if c == nil || c.lib == nil {
		return fmt.Errorf("mpi: %s on a Comm that Init did not return: call Init first", what)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.finalized {
		return fmt.Errorf("mpi: %s: %w", what, ErrFinalized)
	}
	errc := make(chan error, 1)
	c.calls <- func() { errc <- fn() }
	err := <-errc
	if last {
		c.finalized = true
		close(c.calls)
		process.Lock()
		process.state = over
		process.Unlock()
	}
	return err
}

// Rank is this process's rank in the world, from 0 to Size()-1.
func (c *Comm) Rank() int {
	if c == nil {
		return 0
	}
	return c.rank
}

// Size is the number of processes in the world; 0 for a Comm that Init
// did not return.
func (c *Comm) Size() int {
	if c == nil {
		return 0
	}
	return c.size
}

// AllreduceSum replaces buf, on every rank, with the element-wise sum of
// every rank's buf (MPI_Allreduce, MPI_IN_PLACE, MPI_FLOAT, MPI_SUM).
// Every rank must pass the same length. Open MPI picks the summation
// order: the result is the same on every rank, but may differ in the last
// bits from a sum in rank order.
func (c *Comm) AllreduceSum(buf []float32) error {
	what := fmt.Sprintf("AllreduceSum of %d floats", len(buf))
	return c.do(what, func() error {
		l := c.lib
		for off := 0; off < len(buf); off += maxCount {
			n := min(len(buf)-off, maxCount)
			rc := l.allreduce(inPlace, unsafe.Pointer(&buf[off]), int32(n), l.float, l.opSum, l.commWorld)
			if err := l.check("MPI_Allreduce", rc); err != nil {
				return fmt.Errorf("mpi: %s (rank %d of %d): %w", what, c.rank, c.size, err)
			}
		}
		return nil
	})
}

// Bcast copies root's buf into every other rank's buf (MPI_Bcast of
// MPI_FLOAT). Every rank must pass the same length and root.
func (c *Comm) Bcast(buf []float32, root int) error {
	what := fmt.Sprintf("Bcast of %d floats from rank %d", len(buf), root)
	if len(buf) == 0 {
		return c.bcast(what, nil, 0, 0, root)
	}
	return c.bcast(what, unsafe.Pointer(&buf[0]), len(buf), 4, root)
}

// BcastBytes copies root's buf into every other rank's buf (MPI_Bcast of
// MPI_BYTE). Every rank must pass the same length and root.
func (c *Comm) BcastBytes(buf []byte, root int) error {
	what := fmt.Sprintf("BcastBytes of %d bytes from rank %d", len(buf), root)
	if len(buf) == 0 {
		return c.bcast(what, nil, 0, 1, root)
	}
	return c.bcast(what, unsafe.Pointer(&buf[0]), len(buf), 1, root)
}

// bcast broadcasts n elements of elemSize bytes at p (float32 for 4,
// bytes for 1).
func (c *Comm) bcast(what string, p unsafe.Pointer, n, elemSize, root int) error {
	return c.do(what, func() error {
		if root < 0 || root >= c.size {
			return fmt.Errorf("mpi: %s: root %d is not a rank of this world of %d (0 to %d)", what, root, c.size, c.size-1)
		}
		l := c.lib
		datatype := l.byte
		if elemSize == 4 {
			datatype = l.float
		}
		for off := 0; off < n; off += maxCount {
			m := min(n-off, maxCount)
			rc := l.bcast(unsafe.Add(p, off*elemSize), int32(m), datatype, int32(root), l.commWorld)
			if err := l.check("MPI_Bcast", rc); err != nil {
				return fmt.Errorf("mpi: %s (rank %d of %d): %w", what, c.rank, c.size, err)
			}
		}
		return nil
	})
}

// Barrier returns once every rank has called it (MPI_Barrier).
func (c *Comm) Barrier() error {
	return c.do("Barrier", func() error {
		if err := c.lib.check("MPI_Barrier", c.lib.barrier(c.lib.commWorld)); err != nil {
			return fmt.Errorf("mpi: Barrier (rank %d of %d): %w", c.rank, c.size, err)
		}
		return nil
	})
}

// Finalize shuts MPI down (MPI_Finalize) and ends the MPI thread. Every
// rank must call it before exiting with status 0, or mpirun reports the
// job as failed. After Finalize, every call of the Comm fails with
// ErrFinalized, and MPI cannot start again in this process.
func (c *Comm) Finalize() error {
	return c.run("Finalize", true, func() error {
		if err := c.lib.check("MPI_Finalize", c.lib.finalize()); err != nil {
			return fmt.Errorf("mpi: Finalize (rank %d of %d): %w", c.rank, c.size, err)
		}
		return nil
	})
}
