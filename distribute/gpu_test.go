//go:build cudavm && cgo && kernelemu

package distribute_test

import (
	"testing"

	// The emulated GPU (device/cuda built with kernelemu): the GPU path
	// of data-parallel training, all but NCCL itself, runs on the host.
	_ "github.com/gokeras/gokeras/device/cuda"
	"github.com/gokeras/gokeras/internal/sys/mpitest"
)

// Two processes, each training on its /GPU:0, train what one process
// trains there with the global batch: the gradients scaled by each
// replica's share and summed on the device's stream (here by the
// emulated GPU's host all-reduce, where a GPU calls NCCL), every step's
// loss within 1e-6, the replicas' weights bit-identical after every
// epoch.
func TestMultiWorkerFitOnGPUMatchesOneProcess(t *testing.T) {
	mpirun := mpitest.Need(t)
	jobOK(t, mpirun, 2, "fitgpu")
}

// The same, with the all-reduce after the backward pass instead of
// overlapped with it (nn.OverlapReduce(false)).
func TestMultiWorkerFitOnGPUReducedAfterBackwardMatchesOneProcess(t *testing.T) {
	mpirun := mpitest.Need(t)
	jobOK(t, mpirun, 2, "fitgpuserial")
}
