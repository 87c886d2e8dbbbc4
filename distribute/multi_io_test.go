package distribute_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/distribute"
	"github.com/gokeras/gokeras/internal/sys/mpitest"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/metrics"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/optim"
)

// A model of two inputs and two outputs trains on two replicas as in one
// process: every figure of its logs (the total loss, each output's loss
// and metric) at every epoch, and Evaluate's, with batches that split
// unevenly (33: shards of 16 and 17).
func TestMultiWorkerFitSeveralInputsAndOutputsMatchesOneProcess(t *testing.T) {
	mpirun := mpitest.Need(t)
	jobOK(t, mpirun, 2, "fitseveral")
}

func workerFitSeveral(t *testing.T, s *distribute.MultiWorkerStrategy) {
	const n = 330
	rng := rand.New(rand.NewPCG(3, 9))
	as, bs := make([][]float32, n), make([][]float32, n)
	classes, values := make([]int, n), make([]float32, n)
	for i := range n {
		as[i], bs[i] = make([]float32, 8), make([]float32, 5)
		for j := range as[i] {
			as[i][j] = float32(rng.NormFloat64())
		}
		for j := range bs[i] {
			bs[i][j] = float32(rng.NormFloat64())
			values[i] += bs[i][j]
		}
		classes[i] = rng.IntN(3)
		as[i][classes[i]] += 1.5
	}
	ds, err := data.SliceData(data.InputTuple(data.Rows(as), data.Rows(bs)), data.LabelTuple(data.Classes(classes, 3), data.Targets(values)))
	if err != nil {
		t.Fatal(err)
	}
	var hists [2]*nn.History
	var evals [2]map[string]float64
	for i, strategy := range []nn.Strategy{nil, s} {
		a, b := nn.Input(8), nn.Input(5)
		x := nn.Apply(layers.Concatenate(-1), nn.Apply(layers.Dense(16, layers.ReLU), a), nn.Apply(layers.Dense(16, layers.ReLU), b))
		m, err := nn.NewModel([]*nn.Tensor{a, b}, []*nn.Tensor{
			nn.Apply(layers.Dense(3, layers.Softmax, layers.Named("class")), x),
			nn.Apply(layers.Dense(1, layers.Named("value")), x)})
		if err != nil {
			t.Fatal(err)
		}
		m.SetSeed(4)
		opt, err := optim.NewAdam(optim.AdamConfig{LearningRate: 0.01})
		if err != nil {
			t.Fatal(err)
		}
		opts := []nn.CompileOption{nn.OnDevice("/CPU:0"), nn.OutputLosses(losses.SparseCategoricalCrossentropy{}, losses.MeanSquaredError{}), nn.LossWeights(1, 0.3),
			nn.MetricsFor("class", &metrics.SparseCategoricalAccuracy{}), nn.MetricsFor("value", &metrics.MeanAbsoluteError{})}
		if strategy != nil {
			opts = append(opts, nn.WithStrategy(strategy))
		}
		if err := m.Compile(opt, nil, nil, opts...); err != nil {
			t.Fatal(err)
		}
		if hists[i], err = m.Fit(context.Background(), ds, nn.BatchSize(33), nn.Epochs(4), nn.Seed(2), nn.Verbose(0)); err != nil {
			t.Fatal(err)
		}
		if evals[i], err = m.Evaluate(context.Background(), ds, nn.BatchSize(33), nn.Verbose(0)); err != nil {
			t.Fatal(err)
		}
	}
	one, dist := hists[0], hists[1]
	if len(one.Keys) != 5 {
		t.Errorf("logs %v, want loss, each output's loss and each output's metric", one.Keys)
	}
	for _, k := range one.Keys {
		for e := range one.Values[k] {
			if !close(one.Values[k][e], dist.Values[k][e], 1e-5) {
				t.Errorf("epoch %d: %s %v on 2 replicas, %v in one process", e+1, k, dist.Values[k][e], one.Values[k][e])
			}
		}
	}
	for k, v := range evals[0] {
		if !close(v, evals[1][k], 1e-5) {
			t.Errorf("evaluate: %s %v on 2 replicas, %v in one process", k, evals[1][k], v)
		}
	}
	if s.Rank() == 0 {
		fmt.Printf("several inputs and outputs: %v, last epoch %v\n", one.Keys, dist.Values["loss"][3])
	}
}
