//go:build cudavm && cgo

package cuda

import (
	"context"
	"math"
	"os"
	"testing"

	"github.com/gokeras/gokeras/distribute/nccl"
	"github.com/gokeras/gokeras/internal/modeltest"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/metrics"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/optim"
)

// ncclWorldOfOne is a data-parallel strategy of one replica whose
// all-reduce in device memory is NCCL's, over a communicator of one rank:
// a job of one process on its GPU, without MPI. On the emulated GPU the
// machine calls its host AllReduceSum instead.
type ncclWorldOfOne struct {
	comm                   *nccl.Comm
	deviceCalls, hostCalls int
}

func (*ncclWorldOfOne) Rank() int                      { return 0 }
func (*ncclWorldOfOne) Size() int                      { return 1 }
func (w *ncclWorldOfOne) AllReduceSum([]float32) error { w.hostCalls++; return nil }
func (*ncclWorldOfOne) Bcast([]float32, int) error     { return nil }
func (*ncclWorldOfOne) BcastBytes([]byte, int) error   { return nil }

func (w *ncclWorldOfOne) AllReduceSumDevice(buf uintptr, n int, stream uintptr) error {
	w.deviceCalls++
	if w.comm == nil {
		lib, err := nccl.Load()
		if err != nil {
			return err
		}
		id, err := lib.NewUniqueID()
		if err != nil {
			return err
		}
		comm, err := lib.InitRank(1, id, 0)
		if err != nil {
			return err
		}
		w.comm = &comm
	}
	return w.comm.AllReduceSumFloat32(buf, buf, uintptr(n), stream)
}

// TestDataParallelWorldOfOneMatchesOneGPU trains on /GPU:0 under a
// strategy of one replica, its gradients all-reduced on the device's
// stream (NCCL on a GPU), and without: the same losses, 30 steps.
func TestDataParallelWorldOfOneMatchesOneGPU(t *testing.T) {
	needGPU(t)
	if !emulatedGPU {
		if _, err := nccl.Load(); err != nil {
			if os.Getenv("GOKERAS_REQUIRE_GPU") != "" {
				t.Fatal(err)
			}
			t.Skip(err)
		}
	}
	data := modeltest.Blobs(t, 512, []int{32, 32, 3}, 10)
	train := func(s nn.Strategy) []float64 {
		model := mlpModel(layers.Softmax)
		model.SetSeed(11)
		defer model.Close()
		opt, err := optim.NewSGD(optim.SGDConfig{LearningRate: 0.01, Momentum: 0.9})
		if err != nil {
			t.Fatal(err)
		}
		opts := []nn.CompileOption{nn.OnDevice("/GPU:0")}
		if s != nil {
			opts = append(opts, nn.WithStrategy(s))
		}
		if err := model.Compile(opt, losses.CategoricalCrossentropy{}, []metrics.Metric{metrics.NewAccuracy()}, opts...); err != nil {
			t.Fatal(err)
		}
		h, err := model.Fit(context.Background(), data, nn.Epochs(30), nn.StepsPerEpoch(1), nn.Seed(5), nn.Verbose(0))
		if err != nil {
			t.Fatal(err)
		}
		return h.Get("loss")
	}
	w := &ncclWorldOfOne{}
	alone, dp := train(nil), train(w)
	if w.comm != nil {
		defer w.comm.Destroy()
	}
	worst := 0.0
	for i := range alone {
		rel := math.Abs(dp[i]-alone[i]) / math.Max(math.Abs(alone[i]), 1e-6)
		worst = math.Max(worst, rel)
		if rel > 1e-6 {
			t.Fatalf("step %d: loss %.7f under the strategy, %.7f without", i+1, dp[i], alone[i])
		}
	}
	calls := w.deviceCalls
	if emulatedGPU {
		calls = w.hostCalls - 30 // Fit's own host all-reduces: one per step for the loss and metrics
	}
	t.Logf("30 steps: worst relative difference %.2g; %d all-reduces on the device (emulated: %t)", worst, calls, emulatedGPU)
	if calls < 30 {
		t.Errorf("%d all-reduces of gradients for 30 steps (device %d, host %d)", calls, w.deviceCalls, w.hostCalls)
	}
}
