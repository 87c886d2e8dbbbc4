package nn

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/optim"
	"github.com/gokeras/gokeras/safetensors"
	"gorgonia.org/tensor"
)

// fuzzModel is Input(3) → Dense(2) with Adam, the model of the checkpoint
// fuzzing seeds: dense/kernel (3, 2), dense/bias (2), and their m and v.
func fuzzModel(tb testing.TB) (*Sequential, *optim.Adam) {
	tb.Helper()
	adam, err := optim.NewAdam(optim.AdamConfig{LearningRate: 0.01})
	if err != nil {
		tb.Fatal(err)
	}
	m := NewSequential(layers.Input(3), layers.Dense(2))
	m.SetSeed(1)
	if err := m.Compile(adam, losses.MeanSquaredError{}, nil, OnDevice("/CPU:0")); err != nil {
		tb.Fatal(err)
	}
	if err := m.Build(3); err != nil {
		tb.Fatal(err)
	}
	return m, adam
}

// fuzzCheckpoint trains the fuzz model one step and returns its checkpoint.
func fuzzCheckpoint(tb testing.TB) []byte {
	tb.Helper()
	m, _ := fuzzModel(tb)
	x := tensor.New(tensor.WithShape(4, 3), tensor.WithBacking([]float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}))
	y := tensor.New(tensor.WithShape(4, 2), tensor.WithBacking([]float32{1, 0, 0, 1, 1, 0, 0, 1}))
	ds, err := data.TensorData(x, y)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := m.Fit(context.Background(), ds, Seed(1), Verbose(0)); err != nil {
		tb.Fatal(err)
	}
	path := filepath.Join(tb.TempDir(), "ck.safetensors")
	if err := m.SaveCheckpoint(path, Checkpoint{Epoch: 1, Metadata: map[string]string{"seed": "1"}}); err != nil {
		tb.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// FuzzCheckpoint feeds arbitrary files to what ReadCheckpoint and
// LoadCheckpoint do once the file is open: the metadata parser and the
// restore (in memory, so that it runs thousands of times a second; the
// safetensors package tests the opening and reading of files). Neither may
// panic; a load that fails changes nothing; a load that succeeds agrees
// with ReadCheckpoint and leaves only finite weights and optimizer slots.
//
// The seed corpus is in testdata/fuzz/FuzzCheckpoint; run longer with
//
//	go test -run XXX -fuzz FuzzCheckpoint -fuzztime 20s ./nn
func FuzzCheckpoint(f *testing.F) {
	f.Add(fuzzCheckpoint(f))
	m, adam := fuzzModel(f)
	const path = "fuzz.safetensors"
	f.Fuzz(func(t *testing.T, ds []byte) {
		// ReadCheckpoint: the header only.
		meta, readErr := safetensors.DecodeMetadata(ds)
		var ck Checkpoint
		if readErr == nil {
			ck, readErr = checkpointOf(meta, path)
		}
		if readErr == nil {
			if ck.Epoch < 0 || ck.Step < 0 {
				t.Fatalf("ReadCheckpoint gave a negative position: %+v", ck)
			}
			for k := range ck.Metadata {
				if strings.HasPrefix(k, metaPrefix) {
					t.Fatalf("ReadCheckpoint passed gokeras' own key %q on as user metadata", k)
				}
			}
		}
		// LoadCheckpoint: the whole file.
		weights, state := fuzzWeights(t, m), adam.State()
		file, err := safetensors.Decode(ds)
		var got Checkpoint
		if err == nil {
			got, err = m.restoreCheckpoint(adam, file, path)
		}
		if err != nil {
			if !slices.Equal(weights, fuzzWeights(t, m)) || !reflect.DeepEqual(state, adam.State()) {
				t.Fatalf("a refused checkpoint (%v) changed the model or its optimizer", err)
			}
			return
		}
		if readErr != nil {
			t.Fatalf("LoadCheckpoint accepted a file ReadCheckpoint refuses: %v", readErr)
		}
		if !reflect.DeepEqual(got, ck) {
			t.Fatalf("LoadCheckpoint says %+v, ReadCheckpoint %+v", got, ck)
		}
		if i := firstNonFinite(fuzzWeights(t, m)); i >= 0 {
			t.Fatalf("loaded weight value %d is not finite", i)
		}
		for slot, byName := range adam.State().Slots {
			for name, values := range byName {
				if i := firstNonFinite(values); i >= 0 {
					t.Fatalf("loaded optimizer slot %s of %s holds %v at %d", slot, name, values[i], i)
				}
			}
		}
		if lr := adam.LearningRate(); !(lr >= 0) || math.IsInf(lr, 0) {
			t.Fatalf("loaded learning rate %v", lr)
		}
	})
}

// fuzzWeights is a copy of the model's weights, end to end.
func fuzzWeights(t *testing.T, m *Sequential) []float32 {
	t.Helper()
	ws, err := m.GetWeights()
	if err != nil {
		t.Fatal(err)
	}
	var all []float32
	for _, w := range ws {
		all = append(all, w.Data().([]float32)...)
	}
	return all
}
