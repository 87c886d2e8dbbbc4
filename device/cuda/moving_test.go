//go:build cudavm && cgo

package cuda

import (
	"context"
	"os"
	"slices"
	"testing"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/distribute/nccl"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/optim"
	"gorgonia.org/tensor"
)

// TestMovingStatisticsOnTheGPU trains BatchNormalization on /GPU:0, one
// step per epoch on the same 8 samples, alone and under a strategy of one
// replica (a Reduce of the batch statistics on the device before the
// update): the moving statistics stay on the device until read, and then
// hold the recurrence worked out here, bit for bit: gk_moving_average
// computes m·moving + (1-m)·stat in double and rounds it to float, as the
// CPU does (ops.MovingUpdate).
func TestMovingStatisticsOnTheGPU(t *testing.T) {
	needGPU(t)
	const n, steps = 8, 5
	m := 0.9 // a float64, so that 1-m is rounded as the kernels round it
	x, y := make([]float32, 2*n), make([]float32, 2*n)
	for i := range n {
		x[2*i], x[2*i+1] = float32(i), float32(3*(i%4))
	}
	// The batch's statistics, exact in float32: mean 3.5 and biased
	// variance 5.25, mean 4.5 and variance 11.25 (rank 2: no Bessel).
	mean, variance := [2]float64{3.5, 4.5}, [2]float64{5.25, 11.25}
	want := [2][]float32{{0, 0}, {1, 1}}
	for range steps {
		for c := range 2 {
			want[0][c] = float32(m*float64(want[0][c]) + (1-m)*mean[c])
			want[1][c] = float32(m*float64(want[1][c]) + (1-m)*variance[c])
		}
	}
	ds, err := data.TensorData(tensor.New(tensor.WithShape(n, 2), tensor.WithBacking(x)), tensor.New(tensor.WithShape(n, 2), tensor.WithBacking(y)))
	if err != nil {
		t.Fatal(err)
	}
	for _, strategy := range []bool{false, true} {
		bn := layers.BatchNormalization(layers.Momentum(m))
		model := nn.NewSequential(layers.Input(2), bn)
		opt, err := optim.NewSGD(optim.SGDConfig{LearningRate: 1e-3})
		if err != nil {
			t.Fatal(err)
		}
		opts := []nn.CompileOption{nn.OnDevice("/GPU:0")}
		w := &ncclWorldOfOne{}
		if strategy {
			if !emulatedGPU {
				if _, err := nccl.Load(); err != nil {
					if os.Getenv("GOKERAS_REQUIRE_GPU") != "" {
						t.Fatal(err)
					}
					t.Log(err)
					continue
				}
			}
			opts = append(opts, nn.WithStrategy(w))
		}
		if err := model.Compile(opt, losses.MeanSquaredError{}, nil, opts...); err != nil {
			t.Fatal(err)
		}
		if _, err := model.Fit(context.Background(), ds, nn.Epochs(steps), nn.BatchSize(n), nn.Shuffle(false), nn.Verbose(0)); err != nil {
			t.Fatal(err)
		}
		if host := bn.Params()[2].Value.Data().([]float32); !slices.Equal(host, []float32{0, 0}) {
			t.Errorf("strategy %t: the host's moving mean changed during Fit (%v): the statistics went to the host", strategy, host)
		}
		ws, err := model.GetWeights() // gamma, beta, moving_mean, moving_variance
		if err != nil {
			t.Fatal(err)
		}
		for i, name := range []string{"moving_mean", "moving_variance"} {
			if got := ws[2+i].Data().([]float32); !slices.Equal(got, want[i]) {
				t.Errorf("strategy %t: %s after %d steps %v, want %v", strategy, name, steps, got, want[i])
			}
		}
		if err := model.Close(); err != nil {
			t.Fatal(err)
		}
		if w.comm != nil {
			w.comm.Destroy()
		}
	}
}
