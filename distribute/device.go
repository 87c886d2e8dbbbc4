package distribute

import (
	"fmt"
	"sync"

	"github.com/gokeras/gokeras/distribute/nccl"
	"github.com/gokeras/gokeras/internal/sys/collective"
)

// deviceComm is a job's NCCL communicator, made by the first all-reduce
// in device memory (AllReduceSumDevice).
type deviceComm struct {
	mu   sync.Mutex
	comm *nccl.Comm
	err  error // a failed start, returned again
}

// AllReduceSumDevice implements driver.DeviceAllReducer, so that Fit under
// the strategy runs on GPUs, one per process: it queues on stream (a
// CUstream) the in-place sum over the replicas of n float32s at device
// address buf, with NCCL's ncclAllReduce; the values never reach the host.
//
// The first call makes the job's NCCL communicator, collectively, on the
// caller's current GPU: every replica loads NCCL (package distribute/nccl:
// a missing library names the wheel to install) and says whether it
// could, rank 0 makes the job's ID and MPI broadcasts it, and every
// replica joins (ncclCommInitRank, under the strategy's timeout). A
// replica that fails makes every replica fail, naming it, instead of
// leaving the others waiting.
func (s *MultiWorkerStrategy) AllReduceSumDevice(buf uintptr, n int, stream uintptr) error {
	comm, err := s.deviceComm()
	if err != nil {
		return err
	}
	if err := comm.AllReduceSumFloat32(buf, buf, uintptr(n), stream); err != nil {
		return fmt.Errorf("distribute: rank %d of %d: %w", s.Rank(), s.Size(), err)
	}
	return nil
}

func (s *MultiWorkerStrategy) deviceComm() (*nccl.Comm, error) {
	d := &s.dev
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.comm == nil && d.err == nil {
		d.comm, d.err = s.startNCCL()
	}
	return d.comm, d.err
}

// startNCCL makes the communicator (see AllReduceSumDevice).
func (s *MultiWorkerStrategy) startNCCL() (*nccl.Comm, error) {
	lib, loadErr := nccl.Load()
	failed, err := collective.RanksWhere(s.Size(), s.Rank(), loadErr != nil, s.AllReduceSum)
	if err != nil {
		return nil, err
	}
	if loadErr != nil {
		return nil, fmt.Errorf("distribute: all-reducing on the GPU: rank %d of %d: %w", s.Rank(), s.Size(), loadErr)
	}
	if len(failed) > 0 {
		return nil, fmt.Errorf("distribute: all-reducing on the GPU: rank(s) %v of %d could not load NCCL (their errors say why)", failed, s.Size())
	}
	// Rank 0's ID, after a byte that says whether it made one.
	msg := make([]byte, 1+nccl.UniqueIDBytes)
	var idErr error
	if s.Rank() == 0 {
		var id nccl.UniqueID
		if id, idErr = lib.NewUniqueID(); idErr == nil {
			msg[0] = 1
			copy(msg[1:], id[:])
		}
	}
	if err := s.BcastBytes(msg, 0); err != nil {
		return nil, err
	}
	if idErr != nil {
		return nil, fmt.Errorf("distribute: all-reducing on the GPU: rank 0: %w", idErr)
	}
	if msg[0] != 1 {
		return nil, fmt.Errorf("distribute: all-reducing on the GPU: rank 0 could not make the job's NCCL ID (ncclGetUniqueId; rank 0's error says why)")
	}
	var id nccl.UniqueID
	copy(id[:], msg[1:])
	var comm nccl.Comm
	err = s.watch("ncclCommInitRank", func() error {
		var err error
		comm, err = lib.InitRank(s.Size(), id, s.Rank())
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("distribute: all-reducing on the GPU: rank %d of %d: %w", s.Rank(), s.Size(), err)
	}
	return &comm, nil
}

// closeDevice destroys the communicator, if one was made.
func (s *MultiWorkerStrategy) closeDevice() error {
	d := &s.dev
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.comm == nil {
		return nil
	}
	err := d.comm.Destroy()
	d.comm, d.err = nil, fmt.Errorf("distribute: the strategy was closed")
	return err
}
